"""Workers that commit their own sessions: with a PostgreSQL store, there is no single writer.

An SQLite file takes one writer at a time and must sit on the client's disk, so there the client commits every
session (``igg.batch.persist``). A PostgreSQL database takes many writers from anywhere: the task
``commit_session`` runs the session on the worker as ``run_session``/``map_tree`` do, then commits it to the
store from the worker, with the same ``SessionWriter`` (one transaction per iteration, then the finalize
step), and sends back the outcome marked ``committed``; the client then only writes ``--out`` and the exports
from what the store holds (``SessionWriter.files``). Each worker process keeps one store (one connection pool)
per URL for its life. The worker commits a session in ONE transaction, so a worker killed at any moment leaves
nothing of the session it ran, and Dask runs it again elsewhere. A worker killed after a commit, before the
client had the task's answer, leaves the whole session: Dask runs that task again too, and the run finds the
session finished in the store (the client plans no session that was finished when the batch began), so it
reports it committed instead of committing it a second time (which the store would refuse).
"""

from __future__ import annotations

from igg.batch.persist import SessionWriter
from igg.batch.tasks import (
    ResumeFrom,
    SessionFailed,
    SessionJob,
    SessionOutcome,
    TreeJob,
    map_tree,
    run_session,
)
from igg.errors import IGGError, SessionNotFound
from igg.store import SessionStore, resume_point

_STORES: dict[str, SessionStore] = {}
"""This worker process's stores, by URL: opened once, so every session it runs shares one pool."""


def worker_store(url: str) -> SessionStore:
    """The store at ``url`` in this process (opened on first use, kept open)."""
    store = _STORES.get(url)
    if store is None:
        store = _STORES[url] = SessionStore(url)
    return store


def commit_session(job: SessionJob | TreeJob, store_url: str, force: bool) -> SessionOutcome:
    """Run ``job`` on this worker, then commit it to the store at ``store_url`` (``force``: replace a stored
    session of the same id); raises ``SessionFailed`` when it cannot run or be committed."""
    outcome = map_tree(job) if isinstance(job, TreeJob) else run_session(job)
    try:
        store = worker_store(store_url)
        if not force and _finished(store, job.session_id):  # this task's run before, whose worker died
            outcome.committed = True
            return outcome
        resume = None
        if (
            isinstance(job, SessionJob) and job.resume is not None
        ):  # its committed part, as the store holds it
            point = resume_point(store, job.session_id)
            resume = ResumeFrom(state=point.state, records=point.records)
        with (
            store.db.atomic()
        ):  # the whole session or nothing: a worker killed while committing leaves no part
            SessionWriter(store=store, force=force).commit(outcome, agent=job.agent, resume=resume)
    except IGGError as exc:
        raise SessionFailed(str(exc)) from None
    outcome.committed = True
    return outcome


def _finished(store: SessionStore, session_id: str) -> bool:
    """Whether the store holds session ``session_id`` finished."""
    try:
        return store.session(session_id).status == "finished"
    except SessionNotFound:
        return False
