"""Running a batch: plan each session against the store, submit them to the cluster, commit each as it ends.

``run_batch(jobs, client=..., writer=...)`` is the whole job:

1. **plan**: a session already finished in the store is skipped (``--force`` runs it again and replaces
   it); one that was interrupted is continued from its last committed iteration; the rest start fresh;
2. **submit** one Dask task per session (``igg.batch.tasks``); workers run sessions in memory;
3. **commit** each outcome as it arrives, on the client (``igg.batch.persist``): an SQLite store has one
   writer. With a PostgreSQL store each worker commits its own session (``igg.batch.remote``) and the client
   writes only ``--out`` and the exports.

A worker that dies takes its running sessions' work with it but nothing else: none of it reached the store
(with PostgreSQL, a session the worker committed before it died is whole, and its run again reports it
committed: ``igg.batch.remote``), and the scheduler runs those sessions again on the workers that remain
(up to Dask's ``distributed.scheduler.allowed-failures``, 3 by default, after which the session is reported
failed and the next run of the batch tries it again). The client commits a session once: the store refuses
a second session of the same id.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from igg.batch.cluster import ClusterInfo, describe, require_distributed
from igg.batch.persist import SessionWriter
from igg.batch.remote import commit_session
from igg.batch.tasks import (
    ResumeFrom,
    SessionFailed,
    SessionJob,
    SessionOutcome,
    TreeJob,
    map_tree,
    run_session,
)
from igg.errors import IGGError
from igg.record.logs import get_logger
from igg.store import SessionInfo, SessionStore, resume_point
from igg.store.location import store_text

JobOutcome = Literal["done", "failed", "skipped"]
"""``done``: run and committed; ``failed``: could not run or be committed (see ``error``); ``skipped``:
already finished in the store."""

log = get_logger("igg.batch")


@dataclass(kw_only=True)
class SessionReport:
    """One session of a batch, as it ended."""

    session_id: str
    source: str
    """The request file (``FILE`` or ``FILE:LINE``) or source tree."""
    status: JobOutcome
    summary: dict[str, Any] | None = None
    """The session's ``igg run --json`` summary (plus ``map_code`` for trees); a skipped session's stored
    one."""
    error: str | None = None
    """Why it failed, or why its exports failed (the session itself is then stored)."""
    worker: str | None = None
    """``host:pid`` of the worker process that ran it."""
    continued_after: int | None = None
    """For an interrupted session continued by this batch: the last iteration the store already held."""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"session_id": self.session_id, "source": self.source, "status": self.status}
        for key in ("error", "worker", "continued_after"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.summary is not None:
            out["summary"] = self.summary
        return out


@dataclass(kw_only=True)
class BatchReport:
    """What a batch did: one report per session, in the order the jobs were given."""

    cluster: ClusterInfo
    store: str
    sessions: list[SessionReport] = field(default_factory=list)
    elapsed_ms: float = 0.0

    def count(self, status: JobOutcome) -> int:
        return sum(1 for s in self.sessions if s.status == status)

    @property
    def ok(self) -> bool:
        """No session failed and no export failed."""
        return all(s.status != "failed" and s.error is None for s in self.sessions)

    def to_dict(self) -> dict[str, Any]:
        """The ``igg batch --json`` object."""
        done = self.count("done")
        seconds = self.elapsed_ms / 1000
        return {
            "sessions": len(self.sessions),
            "done": done,
            "failed": self.count("failed"),
            "skipped": self.count("skipped"),
            "export_failures": sum(1 for s in self.sessions if s.status == "done" and s.error),
            "elapsed_ms": round(self.elapsed_ms, 1),
            "sessions_per_second": round(done / seconds, 2) if seconds > 0 else None,
            "cluster": self.cluster.to_dict(),
            "store": self.store,
            "results": [s.to_dict() for s in self.sessions],
        }


Job = SessionJob | TreeJob
SessionHandler = Callable[[SessionReport, int, int], Any]
"""``on_session(report, finished, total)``: called as each session ends (done, failed or skipped)."""


def run_batch(
    jobs: Sequence[Job],
    *,
    client: Any,
    writer: SessionWriter,
    cluster: ClusterInfo | None = None,
    on_session: SessionHandler | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> BatchReport:
    """Run every job as an independent session on ``client``'s cluster and commit it with ``writer``."""
    distributed = require_distributed()
    started = clock()
    store = writer.store
    report = BatchReport(cluster=cluster or describe(client), store=str(store.path))
    slots: dict[str, SessionReport] = {}
    stored = {} if writer.force else {s.session_id: s for s in store.sessions()}
    total = len(jobs)
    finished = 0

    def settle(item: SessionReport) -> None:
        nonlocal finished
        finished += 1
        log.info(
            "batch_session",
            session_id=item.session_id,
            status=item.status,
            error=item.error,
            worker=item.worker,
            finished=finished,
            total=total,
        )
        if on_session is not None:
            on_session(item, finished, total)

    futures: dict[Any, tuple[Job, bool]] = {}
    batch = uuid.uuid4().hex[:8]
    shared = store_text(store.location) if store.db.dialect == "postgresql" else None
    for job in jobs:
        item = SessionReport(session_id=job.session_id, source=job.source, status="done")
        slots[job.session_id] = item
        report.sessions.append(item)
        info = stored.get(job.session_id)
        resumed = False
        if info is not None:
            verdict = _plan(job, info, store)
            if isinstance(verdict, SessionReport):
                item.status, item.summary, item.error = verdict.status, verdict.summary, verdict.error
                settle(item)
                continue
            job, resumed = verdict, True
            item.continued_after = info.last_iteration
        future = _submit(client, job, f"igg-session-{job.session_id}-{batch}", shared, writer.force)
        futures[future] = (job, resumed)
    log.info(
        "batch_submitted", sessions=len(futures), skipped=total - len(futures), **report.cluster.to_dict()
    )
    for future in distributed.as_completed(list(futures)):
        job, resumed = futures.pop(future)
        item = slots[job.session_id]
        try:
            outcome: SessionOutcome = future.result()
        except Exception as exc:  # a task error or a session whose workers kept dying
            item.status, item.error = "failed", _describe(exc)
        else:
            _commit(item, outcome, job, resumed, writer)
        future.release()
        settle(item)
    report.elapsed_ms = (clock() - started) * 1000
    log.info(
        "batch_finished",
        done=report.count("done"),
        failed=report.count("failed"),
        skipped=report.count("skipped"),
        ms=round(report.elapsed_ms, 1),
    )
    return report


def _submit(client: Any, job: Job, key: str, shared: str | None, force: bool) -> Any:
    """The future of ``job`` run on the cluster as task ``key``: committed by the worker itself when the
    store is shared (``shared``: a PostgreSQL store's location), else returned to be committed here."""
    if shared is not None:  # a PostgreSQL store: the worker commits the session itself
        return client.submit(commit_session, job, shared, force, key=key, pure=False)
    return client.submit(map_tree if isinstance(job, TreeJob) else run_session, job, key=key, pure=False)


def _plan(job: Job, info: SessionInfo, store: SessionStore) -> Job | SessionReport:
    """A stored session: skip it (finished), refuse it (a live process writes it) or continue it."""
    sid = job.session_id
    if info.status == "finished":
        return SessionReport(
            session_id=sid, source=job.source, status="skipped", summary=info.result, error=None
        )
    if info.status == "running":
        return SessionReport(
            session_id=sid,
            source=job.source,
            status="failed",
            error=f"session {sid!r} is being written by a live process ({info.owner}); "
            "run the batch again once it ends, or pass --force to replace it",
        )
    if info.status == "open":
        return SessionReport(
            session_id=sid,
            source=job.source,
            status="failed",
            error=f"session {sid!r} is an open tool session (MCP/HTTP); give the request another "
            "session_id, or pass --force to replace it",
        )
    point = resume_point(store, sid)
    turns = job.turns if isinstance(job, SessionJob) else None
    agent = job.agent if isinstance(job, SessionJob) else (point.agent or job.agent)
    return SessionJob(
        session_id=sid,
        request=point.request,
        agent=agent,
        turns=turns,
        source=job.source,
        resume=ResumeFrom(state=point.state, records=point.records),
    )


def _commit(
    item: SessionReport, outcome: SessionOutcome, job: Job, resumed: bool, writer: SessionWriter
) -> None:
    item.worker = outcome.worker
    try:
        if outcome.committed:  # in the store already: the files only
            result, failure = writer.files(outcome, continued_after=item.continued_after)
            item.summary = {**result.summary(), **outcome.extra}
            if failure is not None:
                item.error = f"export failed: {failure}"
            return
        resume = None
        if resumed:  # the committed part as the store holds it now (the job's copy went to the worker)
            point = resume_point(writer.store, job.session_id)
            resume = ResumeFrom(state=point.state, records=point.records)
        result, failure = writer.commit(outcome, agent=job.agent, resume=resume)
    except IGGError as exc:
        item.status, item.error = "failed", str(exc)
        return
    item.summary = {**result.summary(), **outcome.extra}
    if failure is not None:
        item.error = f"export failed: {failure}"


def _describe(exc: BaseException) -> str:
    if isinstance(exc, SessionFailed):
        return str(exc)
    if type(exc).__name__ == "KilledWorker":
        return (
            f"the workers running it died {getattr(exc, 'allowed_failures', 0) + 1} times "
            "(Dask's distributed.scheduler.allowed-failures); run the batch again to retry it"
        )
    return f"{type(exc).__name__}: {exc}"
