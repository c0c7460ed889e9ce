"""Sessions held in this process only (lost on restart): for tests and throwaway servers.

``MemorySessions`` keeps each session's request and records; ``load`` replays their mutations onto the seed
graph, exactly as a durable store does.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from igg.errors import HistoryUnavailable, SessionExists, SessionNotFound
from igg.graph.journal import Mutation
from igg.graph.state import GraphState
from igg.models.request import Request
from igg.persistence import TOOL_AGENT, LoadedSession, SessionInfo, SessionStatus
from igg.record.history import Change, Touch
from igg.record.records import Event, IterationRecord, RunResult
from igg.record.steps import PlanPending, PlanRejected, ReviewPlan, StepRecord, UndoStep
from igg.request.load import build_state

_NO_HISTORY = (
    "sessions here are kept in memory only, without their history: {what} needs a session store "
    "(a server started without --memory)"
)


@dataclass(kw_only=True)
class _Stored:
    request: Request
    info: SessionInfo
    records: list[IterationRecord] = field(default_factory=list)
    log: list[Mutation] = field(default_factory=list)
    """Every mutation committed, in order (iterations, other steps, the finalization)."""
    pending: ReviewPlan | None = None
    review_note: str | None = None
    plans: int = 0


class MemorySessions:
    """A ``SessionRepo`` in memory (thread-safe)."""

    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        self._sessions: dict[str, _Stored] = {}
        self._lock = threading.Lock()
        self.clock = clock

    def recorder(
        self,
        *,
        agent: str | None = None,
        options: Mapping[str, Any] | None = None,
        force: bool = False,
        resume: bool = False,
        shared: bool = False,
        last_step: int = 0,
    ) -> MemoryRecorder:
        """A recorder writing one session here (one process: ``shared`` and ``last_step`` change nothing)."""
        return MemoryRecorder(self, agent=agent, options=options, force=force, resume=resume)

    def events_since(self, session_id: str, step: int) -> list[tuple[int, list[Event]]]:
        """One process: its own events are all there are."""
        return []

    def claim(self, session_id: str) -> None:
        """One process: nothing to mark."""

    def release(self, session_id: str) -> None:
        """One process: nothing to mark."""

    def load(
        self, session_id: str, *, elements: Collection[str] | None = None, request: Request | None = None
    ) -> LoadedSession:
        """The session, its graph whole (``elements`` and ``request`` are hints a memory repository need not
        take)."""
        with self._lock:
            stored = self._get(session_id)
            records, log = list(stored.records), list(stored.log)
            info = replace(stored.info)
        state, _ = build_state(stored.request)
        for mutation in log:
            state.apply_mutation(mutation)
        state.take_journal()
        return LoadedSession(
            request=stored.request,
            info=info,
            state=state,
            last_record=records[-1] if records else None,
            read_records=lambda: list(records),
            pending=stored.pending,
            review_note=stored.review_note,
            plans=stored.plans,
        )

    def sessions(self, status: SessionStatus | None = None, limit: int = 100) -> list[SessionInfo]:
        with self._lock:
            infos = [
                replace(s.info) for s in self._sessions.values() if status is None or s.info.status == status
            ]
        return sorted(infos, key=lambda i: i.updated_at, reverse=True)[:limit]

    def version(self, session_id: str) -> int | None:
        """None: only this process changes sessions held in its memory."""
        return None

    def undo(self, session_id: str, to_iteration: int) -> UndoStep:
        raise HistoryUnavailable(_NO_HISTORY.format(what="undo"), session_id=session_id)

    def fork(self, session_id: str, at: int, new_id: str | None = None) -> tuple[str, int]:
        raise HistoryUnavailable(_NO_HISTORY.format(what="fork"), session_id=session_id)

    def explain(self, session_id: str, ref: str, *, edges: bool = True) -> list[Touch]:
        raise HistoryUnavailable(_NO_HISTORY.format(what="explain"), session_id=session_id)

    def diff(self, session_id: str, a: int, b: int) -> list[Change]:
        raise HistoryUnavailable(_NO_HISTORY.format(what="diff"), session_id=session_id)

    # ---- used by MemoryRecorder ------------------------------------------------------------------------
    def _create(
        self, request: Request, state: GraphState, agent: str | None, options: dict[str, Any], force: bool
    ) -> None:
        sid = request.session_id or ""
        now = self.clock()
        with self._lock:
            if sid in self._sessions and not force:
                raise SessionExists(
                    f"a session {sid!r} already exists; omit session_id to get a fresh one, or "
                    "continue that session",
                    session_id=sid,
                )
            self._sessions[sid] = _Stored(
                request=request,
                info=SessionInfo(
                    session_id=sid,
                    goal=request.goal_prompt,
                    status="open" if agent == TOOL_AGENT else "running",
                    agent=agent,
                    options=options,
                    created_at=now,
                    updated_at=now,
                    nodes=state.node_count,
                    edges=state.edge_count,
                ),
            )

    def _append(self, sid: str, record: IterationRecord, state: GraphState) -> None:
        with self._lock:
            stored = self._get(sid)
            stored.records.append(record)
            stored.log.extend(record.mutations)
            stored.info = replace(
                stored.info,
                last_step=stored.info.last_step + 1,
                last_iteration=max(stored.info.last_iteration, record.iteration),
                nodes=state.node_count,
                edges=state.edge_count,
                updated_at=self.clock(),
            )

    def _finish(self, sid: str, result: RunResult) -> None:
        with self._lock:
            stored = self._get(sid)
            if result.review is not None:  # waiting for review: not finished (the plan is kept already)
                return
            stored.log.extend(result.final_mutations)
            stored.info = replace(
                stored.info,
                status="finished",
                stop_reason=result.stop_reason,
                last_step=stored.info.last_step + 1,
                nodes=result.state.node_count,
                edges=result.state.edge_count,
                updated_at=self.clock(),
                result=result.summary(),
            )

    def _keep(self, sid: str, step: StepRecord, mutations: Sequence[Mutation], state: GraphState) -> None:
        with self._lock:
            stored = self._get(sid)
            stored.log.extend(mutations)
            if isinstance(step, PlanPending):
                stored.pending, stored.review_note, stored.plans = step.plan, None, step.plan.plan_id
            elif isinstance(step, PlanRejected):
                stored.pending, stored.review_note = None, step.note or "(no note)"
            stored.info = replace(
                stored.info,
                last_step=stored.info.last_step + 1,
                nodes=state.node_count,
                edges=state.edge_count,
                updated_at=self.clock(),
            )

    def _get(self, session_id: str) -> _Stored:
        try:
            return self._sessions[session_id]
        except KeyError:
            raise SessionNotFound(
                f"no session {session_id!r}; list_sessions shows the sessions there are, "
                "start_session opens a new one",
                session_id=session_id,
            ) from None


class MemoryRecorder:
    """The ``Recorder`` of one session kept in a ``MemorySessions``."""

    def __init__(
        self,
        repo: MemorySessions,
        *,
        agent: str | None,
        options: Mapping[str, Any] | None,
        force: bool,
        resume: bool,
    ) -> None:
        self.repo = repo
        self.agent, self.options, self.force, self.resume = agent, dict(options or {}), force, resume
        self.session_id: str | None = None
        self.state: GraphState | None = None

    def begin(self, request: Request, state: GraphState, records: list[IterationRecord]) -> None:
        if self.session_id is None:
            if self.resume:
                self.repo._get(request.session_id or "")  # raises when unknown
            else:
                self.repo._create(request, state, self.agent, self.options, self.force)
        self.session_id, self.state = request.session_id, state

    def record(self, record: IterationRecord) -> None:
        assert self.session_id is not None and self.state is not None, "begin() comes first"
        self.repo._append(self.session_id, record, self.state)

    def keep(
        self, step: StepRecord, mutations: Sequence[Mutation], state: GraphState, *, snapshot: bool = False
    ) -> None:
        assert self.session_id is not None, "begin() comes first"
        self.repo._keep(self.session_id, step, mutations, state)

    def finish(self, result: RunResult) -> None:
        assert self.session_id is not None, "begin() comes first"
        self.repo._finish(self.session_id, result)


__all__ = ["MemoryRecorder", "MemorySessions"]
