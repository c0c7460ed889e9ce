"""The workspace's questions about a session and its history: ``query_graph``, ``explain``, ``diff``,
``undo``.

``query_graph`` answers from the live graph (``igg.observe.query``). ``explain``, ``diff`` and ``undo`` answer
from the session's history through the repository (``igg.persistence.SessionRepo``); a repository that keeps
none (memory) refuses with ``HISTORY_UNAVAILABLE``.
"""

from __future__ import annotations

from typing import Any

from igg.errors import HistoryUnavailable, SessionBusy, SessionError, WorkspaceCode, WorkspaceError
from igg.observe.query import QueryError, run_query
from igg.persistence import SessionRepo
from igg.record.steps import UndoStep
from igg.workspace.inputs import DiffInput, ExplainInput, QueryInput, UndoInput
from igg.workspace.live import LiveSession, workspace_error


def query_graph(live: LiveSession, inp: QueryInput) -> dict[str, Any]:
    """One budgeted query over the session's current graph."""
    with live.lock:
        try:
            answer = run_query(live.state, inp.query)
        except QueryError as exc:
            raise WorkspaceError(exc.code, exc.message) from None
    return {"session_id": inp.session_id, **answer.to_dict()}


def explain(live: LiveSession, repo: SessionRepo, inp: ExplainInput) -> dict[str, Any]:
    """Every step that touched the element, with reasoning, verdict and chunk."""
    try:
        events = repo.explain(inp.session_id, inp.ref, edges=inp.edges)
    except HistoryUnavailable as exc:
        raise workspace_error(exc) from None
    except SessionError as exc:
        raise WorkspaceError(WorkspaceCode.NOT_FOUND, str(exc)) from None
    return {"session_id": inp.session_id, "ref": inp.ref, "events": [e.to_dict() for e in events]}


def diff(live: LiveSession, repo: SessionRepo, inp: DiffInput) -> dict[str, Any]:
    """The net changes between two iterations."""
    last = live.session.last_iteration
    for name, value in (("a", inp.a), ("b", inp.b)):
        if value > last:
            raise WorkspaceError(
                WorkspaceCode.INVALID_ARGUMENTS,
                f"{name}={value}: session {inp.session_id!r} has iterations 0..{last}",
            )
    try:
        changes = repo.diff(inp.session_id, inp.a, inp.b)
    except HistoryUnavailable as exc:
        raise workspace_error(exc) from None
    except SessionError as exc:
        raise WorkspaceError(WorkspaceCode.INVALID_ARGUMENTS, str(exc)) from None
    return {"session_id": inp.session_id, "a": inp.a, "b": inp.b, "changes": [c.to_dict() for c in changes]}


def undo(live: LiveSession, inp: UndoInput) -> UndoStep:
    """Roll back to after ``to_iteration`` (``Session.undo``); the caller holds the lock and reloads."""
    try:
        return live.session.undo(inp.to_iteration)
    except (HistoryUnavailable, SessionBusy) as exc:
        raise workspace_error(exc) from None
    except SessionError as exc:
        raise WorkspaceError(WorkspaceCode.INVALID_ARGUMENTS, str(exc)) from None


__all__ = ["diff", "explain", "query_graph", "undo"]
