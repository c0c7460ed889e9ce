"""A session as the workspace holds it: the ``Session`` that owns it, its listing, its lock, and the summary
every operation answers with."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from igg.errors import (
    HistoryUnavailable,
    SessionBusy,
    SessionError,
    SessionExists,
    SessionNotFound,
    WorkspaceCode,
    WorkspaceError,
)
from igg.graph.state import GraphState
from igg.models.request import Request
from igg.models.verdicts import Verdict
from igg.persistence import SessionInfo
from igg.session import Session

if TYPE_CHECKING:
    from igg.mapping.depgraph import SitesMemo  # the check's memo; the code map is not loaded for other calls


@dataclass(kw_only=True)
class LiveSession:
    """A session loaded in this process: the ``Session`` (the only thing that changes it), how it is listed,
    the lock its tool calls take, and the size of the last observation (kept with the next iteration)."""

    session: Session
    listed: SessionInfo
    """Its listing as loaded or opened (goal, agent, created); ``info`` is it as it stands now."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    observed: tuple[int, int] | None = None
    sites: SitesMemo | None = None
    """``check``'s memo of the edge sites of its context's code (linked once, not on every call)."""

    @property
    def request(self) -> Request:
        return self.session.request

    @property
    def state(self) -> GraphState:
        return self.session.state

    @property
    def last_verdicts(self) -> list[Verdict]:
        """The verdicts of the last iteration (without reading every record)."""
        last = self.session.last_record
        return list(last.verdicts) if last is not None else []

    @property
    def info(self) -> SessionInfo:
        """Its ``SessionInfo`` as it stands now (status, counts and iteration from the ``Session``)."""
        s = self.session
        return replace(
            self.listed,
            status=s.shown_status,
            stop_reason=s.stop_reason,
            last_iteration=s.last_iteration,
            nodes=s.state.node_count,
            edges=s.state.edge_count,
        )


def summary(live: LiveSession) -> dict[str, Any]:
    """The summary every operation answers with."""
    s = live.session
    limits = s.config.constraints
    return {
        "session_id": s.session_id,
        "status": s.shown_status,
        "iteration": s.last_iteration,
        "max_iterations": s.config.max_iterations,
        "nodes": s.state.node_count,
        "max_nodes": limits.max_nodes,
        "edges": s.state.edge_count,
        "max_edges": limits.max_edges,
        "stop_reason": s.stop_reason,
    }


def workspace_error(exc: SessionError) -> WorkspaceError:
    """The workspace's refusal for a session store error (one table: the error's type decides the code). The
    message is the store's, fit for a remote client (it names no server path or command)."""
    sid = exc.session_id
    if isinstance(exc, SessionNotFound):
        quoted = repr(sid).replace("{", "{{").replace("}", "}}")
        return WorkspaceError(
            WorkspaceCode.SESSION_NOT_FOUND,
            f"no session {quoted}; {{}} shows the sessions there are, {{}} opens a new one",
            tools=("list_sessions", "start_session"),
        )
    if isinstance(exc, SessionExists):
        return WorkspaceError(
            WorkspaceCode.SESSION_EXISTS,
            f"a session {sid!r} already exists; omit session_id to get a fresh one, or continue that session",
        )
    if isinstance(exc, SessionBusy):
        return WorkspaceError(
            WorkspaceCode.SESSION_BUSY,
            f"session {sid!r} cannot be changed here: another process is writing it",
        )
    if isinstance(exc, HistoryUnavailable):
        return WorkspaceError(WorkspaceCode.HISTORY_UNAVAILABLE, str(exc))
    return WorkspaceError(
        WorkspaceCode.STORE_ERROR,
        f"the session store refused the change to session {sid!r}; nothing was changed",
    )


__all__ = ["LiveSession", "summary", "workspace_error"]
