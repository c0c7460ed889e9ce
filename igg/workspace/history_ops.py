"""The workspace's read-only questions and history tools: ``query_graph``, ``explain``, ``diff``, ``undo`` (and
``check``, from ``igg.workspace.rules_ops``).

``query_graph`` answers from the live graph (``igg.observe.query``). ``explain``, ``diff`` and ``undo`` answer
from the session store's history (``igg.store.history``), so they need a workspace over a store (``igg mcp``
and ``igg serve`` without ``--memory``); over memory they refuse with ``HISTORY_UNAVAILABLE``. ``undo``
refuses a session an autonomous run is building (``SESSION_BUSY``), then reloads the session from the store.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from igg.errors import SessionBusy, SessionError, WorkspaceError
from igg.observe.query import QueryError, run_query
from igg.store import history
from igg.store.sessions import StoreSessions
from igg.store.store import SessionStore
from igg.workspace.ops import DiffInput, ExplainInput, QueryInput, UndoInput
from igg.workspace.rules_ops import check

if TYPE_CHECKING:
    from igg.workspace.service import Workspace


def query_graph(workspace: Workspace, inp: QueryInput) -> dict[str, Any]:
    """One budgeted query over the session's current graph."""
    session = workspace.get(inp.session_id)
    with session.lock:
        try:
            answer = run_query(session.state, inp.query)
        except QueryError as exc:
            raise WorkspaceError(exc.code, exc.message, status=422) from None
    return {"session_id": inp.session_id, **answer.to_dict()}


def _store(workspace: Workspace) -> SessionStore:
    repo = workspace.repo
    if not isinstance(repo, StoreSessions):
        raise WorkspaceError("HISTORY_UNAVAILABLE", "this server keeps sessions in memory only (--memory); explain, "
                             "diff and undo read the session store: start it with --store PATH", status=409)
    return repo.store


def explain(workspace: Workspace, inp: ExplainInput) -> dict[str, Any]:
    """Every step that touched the element, with reasoning, verdict and chunk."""
    store = _store(workspace)
    workspace.get(inp.session_id)  # SESSION_NOT_FOUND first
    try:
        events = history.explain(store, inp.session_id, inp.ref, edges=inp.edges)
    except SessionError as exc:
        raise WorkspaceError("NOT_FOUND", str(exc), status=404) from None
    return {"session_id": inp.session_id, "ref": inp.ref, "events": [e.to_dict() for e in events]}


def diff(workspace: Workspace, inp: DiffInput) -> dict[str, Any]:
    """The net changes between two iterations."""
    store = _store(workspace)
    session = workspace.get(inp.session_id)
    last = session.info.iteration
    for name, value in (("a", inp.a), ("b", inp.b)):
        if value > last:
            raise WorkspaceError("INVALID_ARGUMENTS", f"{name}={value}: session {inp.session_id!r} has iterations "
                                 f"0..{last}", status=422)
    try:
        changes = history.diff(store, inp.session_id, inp.a, inp.b)
    except SessionError as exc:
        raise WorkspaceError("INVALID_ARGUMENTS", str(exc), status=422) from None
    return {"session_id": inp.session_id, "a": inp.a, "b": inp.b, "changes": [c.to_dict() for c in changes]}


def undo(workspace: Workspace, inp: UndoInput) -> dict[str, Any]:
    """Roll back to after ``to_iteration`` as a step of its own; the live session is reloaded from the store."""
    store = _store(workspace)
    session = workspace.get(inp.session_id)
    with session.lock:
        if session.info.status == "running":
            raise WorkspaceError("SESSION_BUSY", f"session {inp.session_id!r} is being built by an autonomous run; "
                                 "undo it after the run ends", status=409)
        repo = workspace.repo
        assert isinstance(repo, StoreSessions)
        try:
            step, count = history.undo(store, inp.session_id, inp.to_iteration, owner=repo.owner)
        except SessionBusy as exc:
            raise WorkspaceError("SESSION_BUSY", str(exc), status=409) from None
        except SessionError as exc:
            raise WorkspaceError("INVALID_ARGUMENTS", str(exc), status=422) from None
        workspace.forget(inp.session_id)
    reloaded = workspace.get(inp.session_id)
    with reloaded.lock:
        return {**workspace.summary(reloaded), "undone_to": inp.to_iteration, "step": step, "mutations": count}


def review(workspace: Workspace, inp: Any) -> dict[str, Any]:
    """See ``igg.workspace.review``."""
    from igg.workspace.review import decide

    return decide(workspace, inp)


OPERATIONS: dict[str, Callable[[Workspace, Any], dict[str, Any]]] = {
    "query_graph": query_graph, "explain": explain, "diff": diff, "undo": undo, "review": review, "check": check}
"""Workspace operations implemented here, by name (``Workspace.execute`` dispatches to them)."""
