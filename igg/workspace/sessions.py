"""Where workspace sessions live between calls: a small interface and an in-memory implementation.

A session is persisted as its request plus, per step, the graph mutations it applied (see
``igg.graph.state``) and the verdicts it got; loading rebuilds the graph by replaying the mutations, so a
session survives a server restart whenever the repository is durable (``igg.workspace.store_repo``).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from igg.compile import build_state
from igg.errors import WorkspaceError
from igg.graph.state import GraphState
from igg.models.request import Request

SessionStatus = Literal["open", "running", "finished"]
"""``open``: accepting actions; ``running``: an autonomous run owns it; ``finished``: read-only."""


@dataclass(kw_only=True)
class Step:
    """One persisted step of a session: an apply (an iteration) or the finalization."""

    iteration: int
    """1-based iteration number; finalization reuses the last iteration's number."""
    kind: Literal["apply", "finalize"] = "apply"
    reasoning: str = ""
    actions: list[Any] = field(default_factory=list)
    verdicts: list[dict[str, Any]] = field(default_factory=list)
    mutations: list[dict[str, Any]] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    """How long the step took (``act``, ``total``), as iteration records keep it."""
    record: dict[str, Any] | None = None
    """The whole iteration record (observation size, raw output, usage, timings) when a run produced it."""
    summary: dict[str, Any] | None = None
    """For ``finalize``: the run's result summary (stop reason, counts)."""


@dataclass(kw_only=True)
class SessionInfo:
    """What a listing shows about a session."""

    session_id: str
    goal: str
    status: SessionStatus
    iteration: int
    nodes: int
    edges: int
    stop_reason: str | None
    created: float
    updated: float

    def to_dict(self) -> dict[str, Any]:
        return {"session_id": self.session_id, "goal": self.goal, "status": self.status,
                "iteration": self.iteration, "nodes": self.nodes, "edges": self.edges,
                "stop_reason": self.stop_reason, "created": self.created, "updated": self.updated}


@dataclass(kw_only=True)
class LoadedSession:
    """A session read back from a repository: its graph rebuilt, its last verdicts."""

    request: Request
    info: SessionInfo
    state: GraphState
    last_verdicts: list[dict[str, Any]] = field(default_factory=list)


class SessionRepo(Protocol):
    """Persistence of workspace sessions. Implementations must be safe to call from several threads."""

    def create(self, request: Request, info: SessionInfo, state: GraphState, *, agent: str = "tool") -> None:
        """Record a new session (``state`` holds its seed graph) driven by ``agent`` (``tool``: an outside
        agent through the workspace; ``llm``, ``code``: an autonomous run); ``SESSION_EXISTS`` when taken."""

    def append(self, step: Step, info: SessionInfo, state: GraphState) -> None:
        """Record one step (its mutations already applied to ``state``) and the session's new summary."""

    def update(self, info: SessionInfo) -> None:
        """Record a new summary (status, stop reason) without a step."""

    def load(self, session_id: str) -> LoadedSession:
        """The whole session; ``WorkspaceError(SESSION_NOT_FOUND)`` when there is none."""

    def list(self, status: SessionStatus | None = None, limit: int = 100) -> list[SessionInfo]:
        """Sessions, most recently updated first."""


def not_found(session_id: str) -> WorkspaceError:
    """The error for an unknown session id."""
    return WorkspaceError("SESSION_NOT_FOUND", f"no session {session_id!r}; list_sessions shows the sessions "
                          f"there are, start_session opens a new one", status=404)


def exists(session_id: str) -> WorkspaceError:
    """The error for a session id that is already taken."""
    return WorkspaceError("SESSION_EXISTS", f"a session {session_id!r} already exists; omit session_id to get a "
                          f"fresh one, or continue that session", status=409)


@dataclass(kw_only=True)
class _Stored:
    request: Request
    info: SessionInfo
    steps: list[Step] = field(default_factory=list)


class MemorySessions:
    """Sessions held in this process only (lost on restart): for tests and throwaway servers.

    It keeps the request and the steps, and ``load`` replays them, exactly as a durable store does.
    """

    def __init__(self) -> None:
        self._sessions: dict[str, _Stored] = {}
        self._lock = threading.Lock()

    def create(self, request: Request, info: SessionInfo, state: GraphState, *, agent: str = "tool") -> None:
        with self._lock:
            if info.session_id in self._sessions:
                raise exists(info.session_id)
            self._sessions[info.session_id] = _Stored(request=request, info=info)

    def append(self, step: Step, info: SessionInfo, state: GraphState) -> None:
        with self._lock:
            stored = self._get(info.session_id)
            stored.steps.append(step)
            stored.info = info

    def update(self, info: SessionInfo) -> None:
        with self._lock:
            self._get(info.session_id).info = info

    def load(self, session_id: str) -> LoadedSession:
        with self._lock:
            stored = self._get(session_id)
            steps = list(stored.steps)
        state, _ = build_state(stored.request)
        last: list[dict[str, Any]] = []
        for step in steps:
            for mutation in step.mutations:
                state.apply_mutation(mutation)
            if step.kind != "finalize":
                last = step.verdicts
        state.take_journal()
        return LoadedSession(request=stored.request, info=stored.info, state=state, last_verdicts=last)

    def list(self, status: SessionStatus | None = None, limit: int = 100) -> list[SessionInfo]:
        with self._lock:
            infos = [s.info for s in self._sessions.values() if status is None or s.info.status == status]
        return sorted(infos, key=lambda i: i.updated, reverse=True)[:limit]

    def _get(self, session_id: str) -> _Stored:
        try:
            return self._sessions[session_id]
        except KeyError:
            raise not_found(session_id) from None
