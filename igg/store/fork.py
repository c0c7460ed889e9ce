"""Forks: a new session that starts from another session's graph after iteration N, with its lineage.

``fork(store, session_id, at, new_id)`` copies the original's steps up to iteration ``at`` (records and
mutations, undo steps included) into a new session of the same request under ``new_id``, so the fork's
history up to there is the original's: ``igg explain``, ``igg diff``, ``igg replay`` and ``igg undo`` work
across the fork point, node and edge ids stay the same, and only the original's seed nodes are protected.
The original is not touched. The new session is left *interrupted* at iteration ``at``: ``igg resume NEW``
continues it at iteration ``at + 1`` with any agent (a finished session, or one undone after it finished,
continues this way). The lineage (``forked_from``, ``forked_at``) is kept in the session's options, shown
by ``igg show`` and carried into the metadata of its exports.
"""

from __future__ import annotations

from typing import Any

from igg.errors import RequestInvalid, SessionRefused
from igg.models.request import Request
from igg.store.sql import Connection
from igg.store.store import SessionStore

LINEAGE_KEYS = ("forked_from", "forked_at")


def fork(store: SessionStore, session_id: str, at: int, new_id: str | None = None) -> tuple[str, int]:
    """Fork ``session_id`` after iteration ``at`` (0: the start) as ``new_id`` (default ``SESSION-fork-AT``);
    returns (the new id, the number of steps copied). Refuses an ``at`` beyond the session's iterations, and a
    ``new_id`` that breaks the session-id rule of a request.

    The new session, its steps, their mutations, the snapshot and the lineage are written in ONE transaction:
    an interruption at any point leaves no fork or a whole one."""
    info = store.session(session_id)
    if at > info.last_iteration:
        raise SessionRefused(
            f"session {session_id!r} has {info.last_iteration} iterations; fork it at 0.."
            f"{info.last_iteration}",
            session_id=session_id,
        )
    target = store.step_of_iteration(session_id, at)
    new_id = new_id or f"{session_id}-fork-{at}"
    request = _with_id(store.request(session_id), new_id)
    _, state, _ = store.load_state(session_id, upto_step=0, use_snapshot=False)
    state.take_journal()
    parents = [*(info.options or {}).get("lineage", []), {"session_id": session_id, "at_iteration": at}]
    options: dict[str, Any] = {"forked_from": session_id, "forked_at": at, "lineage": parents}
    by_step: dict[int, list[Any]] = {}
    for step, m in store.mutations(session_id, upto_step=target):
        by_step.setdefault(step, []).append(m)
    copies = [s for s in store.steps(session_id) if s.step <= target and s.kind in ("iteration", "undo")]
    # a finalize step (pruning at the end of a run) belongs to the original's ending; review steps to its
    # review

    def work(conn: Connection) -> int:
        store.insert_session(conn, request, agent=info.agent, options=options)
        for s in copies:
            mutations = by_step.get(s.step, [])
            for m in mutations:
                state.apply_mutation(m)
            state.take_journal()
            state.restore_id_counters(s.next_node, s.next_edge)
            store.commit_step(
                new_id,
                kind=s.kind,
                record=s.record,
                mutations=mutations,
                state=state,
                chunk_cursor=s.chunk_cursor,
                snapshot=s is copies[-1],
                conn=conn,
            )
        return len(copies)

    return new_id, store.db.write(work)


def _with_id(request: Request, new_id: str) -> Request:
    """The request under another session id, checked by the session-id rule of every request."""
    from igg.request.load import load_request

    data = request.model_dump(mode="json", by_alias=True, exclude_none=True)
    try:
        return load_request({**data, "session_id": new_id}, documents=True)  # checked when it began
    except RequestInvalid as exc:
        problems = [p for p in exc.problems if p.path == "session_id"] or exc.problems
        raise SessionRefused(f"--as {new_id!r}: {problems[0].message}") from None


def lineage_of(options: dict[str, Any] | None) -> dict[str, Any]:
    """The lineage part of a session's options (empty for a session that is no fork)."""
    options = options or {}
    return {k: options[k] for k in (*LINEAGE_KEYS, "lineage") if k in options}
