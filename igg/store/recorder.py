"""The loop's recorder backed by the store, and the resume point of an interrupted session.

``SessionRecorder`` is what the loop calls: ``begin(request, state)`` registers the session (or takes over an
interrupted one when resuming), ``record(record)`` commits one iteration (its record and mutations) in one
transaction, ``finish(result)`` commits what the end of the run changed, a snapshot of the final graph and
the stop reason. ``resume_point`` rebuilds everything a resumed loop needs from the store.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from igg.graph.state import GraphState, Mutation
from igg.models.request import Request
from igg.records import IterationRecord
from igg.store import codec
from igg.store.store import SessionRefused, SessionStore, owner_token

SNAPSHOT_MIN_MUTATIONS = 20_000
"""A periodic snapshot is taken once this many mutations, and at least as many as the graph has elements,
have been committed since the last: its cost stays bounded per mutation, whatever the graph's size."""


class SessionRecorder:
    """Persists a run into a ``SessionStore``: one durable transaction per iteration."""

    def __init__(self, store: SessionStore, *, agent: str | None = None, options: dict[str, Any] | None = None,
                 force: bool = False, resume: bool = False) -> None:
        self.store = store
        if agent and agent.startswith("script:") and len(agent) > len("script:"):
            # a resume may run from another directory: keep the transcript's absolute path
            agent = "script:" + str(Path(agent[len("script:"):]).resolve())
        self.agent = agent
        self.options = options or {}
        self.force = force
        self.resume = resume
        self.owner = owner_token()
        self.session_id: str | None = None
        self.state: GraphState | None = None
        self._since_snapshot = 0

    def begin(self, request: Request, state: GraphState, records: list[IterationRecord] | None = None) -> None:
        """Register the session, or claim the interrupted one when resuming (``records``: the iterations
        already stored, which are not written again)."""
        self.session_id = request.session_id
        self.state = state
        if self.resume:
            self.store.claim(request.session_id or "", self.owner, force=self.force)
        else:
            self.store.create_session(request, agent=self.agent, options=self.options, owner=self.owner,
                                      force=self.force)

    def record(self, record: IterationRecord) -> None:
        """Commit one finished iteration: its record, its mutations and the session's counters."""
        state = self._state()
        mutations = list(record.mutations)
        self._since_snapshot += len(mutations)
        snapshot = self._since_snapshot >= max(SNAPSHOT_MIN_MUTATIONS, state.node_count + state.edge_count)
        self.store.commit_step(self._sid(), kind="iteration", record=codec.record_to_dict(record),
                               mutations=mutations, state=state, owner=self.owner,
                               chunk_cursor=getattr(record, "chunk_cursor", None), snapshot=snapshot)
        if snapshot:
            self._since_snapshot = 0

    def finish(self, result: Any) -> None:
        """Commit the end of the run: mutations made after the last iteration, a final snapshot, the stop
        reason and the result summary."""
        state = getattr(result, "state", None) or self._state()
        if hasattr(result, "final_mutations"):
            leftover: list[Mutation] = list(result.final_mutations)
        else:
            leftover = list(state.journal)
        summary = _summary(result)
        self.store.commit_step(self._sid(), kind="finalize", record={"kind": "finalize", **summary},
                               mutations=leftover, state=state, owner=self.owner, snapshot=True, finish=summary)

    def _state(self) -> GraphState:
        if self.state is None:
            raise RuntimeError("SessionRecorder.begin was not called")
        return self.state

    def _sid(self) -> str:
        return self.session_id or ""


def _summary(result: Any) -> dict[str, Any]:
    if isinstance(result, dict):
        data = dict(result)
    elif hasattr(result, "summary"):
        data = result.summary()
    elif hasattr(result, "to_dict"):
        data = result.to_dict()
    elif dataclasses.is_dataclass(result) and not isinstance(result, type):
        data = {f.name: getattr(result, f.name) for f in dataclasses.fields(result)
                if f.name not in ("state", "records", "events")}
    else:
        data = {"stop_reason": getattr(result, "stop_reason", None)}
    data.pop("state", None)
    data.pop("records", None)
    return codec.record_to_dict(data) if data else {}


@dataclass(kw_only=True)
class ResumePoint:
    """Where an interrupted session stands: enough to continue it exactly."""

    request: Request
    state: GraphState
    """The graph after the last committed step, id counters included."""
    next_iteration: int
    """The first iteration that was not committed."""
    records: list[IterationRecord] = field(default_factory=list)
    """The committed iterations' records, in order (with their mutations)."""
    chunk_cursor: int = 0
    """Position in the walk over the context chunks after the last committed iteration (see
    ``IterationRecord.chunk_cursor``); 0 before the first."""
    agent: str | None = None
    """The agent spec the session was started with."""
    options: dict[str, Any] = field(default_factory=dict)


def resume_point(store: SessionStore, session_id: str) -> ResumePoint:
    """Rebuild an interrupted session from the store (``SessionError`` when it is unknown or finished)."""
    info = store.session(session_id)
    if info.status == "finished":
        raise SessionRefused(f"session {session_id!r} already finished ({info.stop_reason}); nothing to resume")
    # every mutation replayed from the start, not from a snapshot: that rebuilds the state exactly as the run
    # left it, down to what a snapshot does not keep (the order of recent touches the observation shows)
    request, state, _ = store.load_state(session_id, use_snapshot=False)
    by_step: dict[int, list[Mutation]] = {}
    for step, m in store.mutations(session_id):
        by_step.setdefault(step, []).append(m)
    records: list[IterationRecord] = []
    for s in store.steps(session_id):
        if s.kind == "iteration":
            records.append(codec.record_from_dict(s.record, by_step.get(s.step)))
    next_iteration = max((r.iteration for r in records), default=0) + 1
    return ResumePoint(request=request, state=state, next_iteration=next_iteration, records=records,
                       chunk_cursor=records[-1].chunk_cursor if records else 0, agent=info.agent,
                       options=info.options)
