"""Workspace sessions in IGG's SQLite session store (``igg.store``), so they survive a server restart.

A workspace session is a store session with agent ``tool``: each apply commits one ``iteration`` step (its
actions, verdicts and mutations), finishing commits the ``finalize`` step with the stop reason. ``igg
sessions``, ``igg show``, ``replay`` and ``undo`` therefore work on tool sessions too. The server claims a
session (as the store's owner) before its first write, so two live processes never write one session.
"""

from __future__ import annotations

from typing import Any

from igg.errors import SessionError, WorkspaceError
from igg.graph.state import GraphState
from igg.models.request import Request
from igg.store import SessionInfo as StoreInfo
from igg.store import SessionStore
from igg.store.store import owner_token
from igg.workspace.sessions import LoadedSession, SessionInfo, SessionStatus, Step, exists, not_found

TOOL_AGENT = "tool"
"""The agent name the store records for sessions an outside agent drives through the workspace."""


class StoreSessions:
    """A ``SessionRepo`` over a ``SessionStore``."""

    def __init__(self, store: SessionStore, *, owner: str | None = None) -> None:
        self.store = store
        self.owner = owner or owner_token()
        """This server's writer token in the store (``host:pid:nonce``)."""
        self._claimed: set[str] = set()

    def create(self, request: Request, info: SessionInfo, state: GraphState, *, agent: str = TOOL_AGENT) -> None:
        try:
            self.store.create_session(request, agent=agent, options={"workspace": True}, owner=self.owner)
        except SessionError as exc:
            if "already exists" in str(exc):
                raise exists(info.session_id) from None
            raise _store_error(exc) from None
        self._claimed.add(info.session_id)

    def append(self, step: Step, info: SessionInfo, state: GraphState) -> None:
        sid = info.session_id
        self._claim(sid)
        try:
            if step.kind == "finalize":
                summary = step.summary or {"stop_reason": info.stop_reason, "iterations": info.iteration,
                                           "nodes": info.nodes, "edges": info.edges}
                self.store.commit_step(sid, kind="finalize", record={"kind": "finalize", **summary},
                                       mutations=step.mutations, state=state, owner=self.owner, snapshot=True,
                                       finish=summary)
            else:
                record = step.record or {"iteration": step.iteration, "observation_chars": 0,
                                         "observation_tokens": 0, "reasoning": step.reasoning,
                                         "actions": step.actions, "verdicts": step.verdicts,
                                         "timings_ms": step.timings_ms}
                self.store.commit_step(sid, kind="iteration", record=record, mutations=step.mutations,
                                       state=state, owner=self.owner, chunk_cursor=record.get("chunk_cursor"))
        except SessionError as exc:
            raise _store_error(exc) from None

    def update(self, info: SessionInfo) -> None:
        """Summaries live in the store's own rows (kept by ``commit_step``): nothing else to write."""

    def load(self, session_id: str) -> LoadedSession:
        try:
            stored = self.store.session(session_id)
            request, state, _ = self.store.load_state(session_id)
            steps = self.store.steps(session_id)
        except SessionError as exc:
            if "no session" in str(exc):
                raise not_found(session_id) from None
            raise _store_error(exc) from None
        last: list[dict[str, Any]] = next((s.record.get("verdicts") or [] for s in reversed(steps)
                                           if s.kind == "iteration"), [])
        return LoadedSession(request=request, info=self._info(stored), state=state, last_verdicts=last)

    def list(self, status: SessionStatus | None = None, limit: int = 100) -> list[SessionInfo]:
        infos = [self._info(s) for s in self.store.sessions()]
        return [i for i in infos if status is None or i.status == status][:limit]

    def _claim(self, session_id: str) -> None:
        if session_id in self._claimed:
            return
        try:
            self.store.claim(session_id, self.owner)
        except SessionError as exc:
            raise WorkspaceError("SESSION_BUSY", f"session {session_id!r} cannot be changed here: {exc}",
                                 status=409) from None
        self._claimed.add(session_id)

    def _info(self, s: StoreInfo) -> SessionInfo:
        status: SessionStatus
        if s.status == "finished":
            status = "finished"
        elif s.status == "running" and s.owner != self.owner and s.agent != TOOL_AGENT:
            status = "running"  # another process's autonomous run is writing it
        else:
            status = "open"
        return SessionInfo(session_id=s.session_id, goal=s.goal, status=status, iteration=s.last_iteration,
                           nodes=s.nodes, edges=s.edges, stop_reason=s.stop_reason, created=s.created_at,
                           updated=s.updated_at)


def _store_error(exc: SessionError) -> WorkspaceError:
    return WorkspaceError("STORE_ERROR", str(exc), status=409)
