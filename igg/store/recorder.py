"""The loop's recorder backed by the store, and the resume point of an interrupted session.

``SessionRecorder`` is what the loop calls: ``begin(request, state)`` registers the session (or takes over an
interrupted one when resuming), ``record(record)`` commits one iteration (its record and mutations) in one
transaction, ``finish(result)`` commits what the end of the run changed, a snapshot of the final graph and
the stop reason. ``resume_point`` rebuilds everything a resumed loop needs from the store.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from igg.errors import SessionError, SessionRefused
from igg.graph.journal import Mutation
from igg.graph.partial import PartialState
from igg.graph.state import GraphState
from igg.models.request import Request
from igg.record.records import IterationRecord, RunResult, Usage
from igg.record.steps import IterationStep, PlanPending, PlanRejected, StepRecord, read_step, step_data
from igg.request.load import build_state
from igg.store import codec
from igg.store.commit import owner_token
from igg.store.store import SessionStore

SNAPSHOT_MIN_MUTATIONS = 20_000
"""A periodic snapshot is taken once this many mutations, and at least as many as the graph has elements,
have been committed since the last: its cost stays bounded per mutation, whatever the graph's size."""


class SessionRecorder:
    """Persists a session into a ``SessionStore``: one durable transaction per iteration (a ``Recorder``)."""

    def __init__(
        self,
        store: SessionStore,
        *,
        agent: str | None = None,
        options: Mapping[str, Any] | None = None,
        force: bool = False,
        resume: bool = False,
        owner: str | None = None,
        shared: bool = False,
        last_step: int = 0,
    ) -> None:
        self.store = store
        if agent and agent.startswith("script:") and len(agent) > len("script:"):
            # a resume may run from another directory: keep the transcript's absolute path
            agent = "script:" + str(Path(agent[len("script:") :]).resolve())
        self.agent = agent
        self.options = dict(options or {})
        self.force = force
        self.resume = resume
        self.owner = owner or owner_token()
        """This writer's token in the store (``host:pid:nonce``)."""
        self.shared = shared
        """A shared writer (a server among several on one store): it never claims the session; each commit
        checks that the session is still at ``last_step`` (``SessionConflict`` otherwise) and not being run
        elsewhere."""
        self.last_step = last_step
        """The session's last step as this writer knows it (shared writers)."""
        self.session_id: str | None = None
        self.state: GraphState | None = None
        self._since_snapshot = 0
        self._pending_sid = ""
        """The session a recorder that has not begun keeps steps of (``for_session``)."""

    def for_session(self, session_id: str) -> SessionRecorder:
        """This recorder, keeping steps of ``session_id`` without claiming it (an update of a finished
        map)."""
        self._pending_sid = session_id
        return self

    def begin(
        self, request: Request, state: GraphState, records: list[IterationRecord] | None = None
    ) -> None:
        """Register the session, or claim the existing one when resuming (``records``: the iterations already
        stored, which are not written again). A second call for the same session does nothing."""
        if self.session_id is not None and self.session_id == request.session_id:
            self.state = state
            return
        if self.shared and self.resume:
            pass  # nothing to claim: every commit checks the session's step instead
        elif self.resume:
            self.store.claim(request.session_id or "", self.owner, force=self.force)
        else:
            self.store.create_session(
                request,
                agent=self.agent,
                options=self.options,
                owner=None if self.shared else self.owner,
                force=self.force,
            )
        self.session_id = request.session_id
        self.state = state

    def record(self, record: IterationRecord) -> None:
        """Commit one finished iteration: its record, its mutations and the session's counters."""
        state = self._state()
        mutations = list(record.mutations)
        self._since_snapshot += len(mutations)
        snapshot = self._since_snapshot >= max(SNAPSHOT_MIN_MUTATIONS, state.node_count + state.edge_count)
        data = codec.record_data(record)  # encoded once, here: the record's dict gives the step's counters
        self.last_step = self.store.commit_step(
            self._sid(),
            kind="iteration",
            record=data,
            record_json=codec.dumps(data),
            mutations=mutations,
            state=state,
            owner=self.owner,
            chunk_cursor=record.chunk_cursor,
            snapshot=snapshot,
            after=self._after(),
        )
        if snapshot:
            self._since_snapshot = 0

    def keep(
        self, step: StepRecord, mutations: Sequence[Mutation], state: GraphState, *, snapshot: bool = False
    ) -> None:
        """Commit a step other than an iteration (a review plan or decision, a code map's update) with its
        mutations. A recorder that has not begun (an update of a finished map) writes without claiming. A
        part of the graph (``PartialState``) is never kept as a snapshot: it would stand for the whole."""
        if snapshot and isinstance(state, PartialState):
            raise SessionError("a part of the graph cannot be kept as a snapshot of it")
        data = step_data(step)
        owner = self.owner if self.session_id is not None or self.shared else None
        self.last_step = self.store.commit_step(
            self.session_id or self._pending_sid,
            kind=data["kind"],
            record=data,
            mutations=mutations,
            state=state,
            owner=owner,
            snapshot=snapshot,
            after=self._after(),
        )

    def finish(self, result: RunResult) -> None:
        """Commit the end of the run: mutations made after the last iteration, a final snapshot, the stop
        reason and the result summary. A run waiting for review (``result.review``: its plan is already kept
        as a ``review`` step) only lets the session go, so the reviewer or a resume may claim it at once."""
        if result.review is not None:
            sid = self._sid()
            if not self.shared:
                self.store.release(sid, self.owner)
            self.session_id, self.resume = None, True  # the next begin claims the session again
            self._pending_sid = sid
            return
        summary = codec.record_to_dict(result.summary())
        self.last_step = self.store.commit_step(
            self._sid(),
            kind="finalize",
            record={"kind": "finalize", **summary},
            mutations=list(result.final_mutations),
            state=result.state,
            owner=self.owner,
            snapshot=True,
            finish=summary,
            after=self._after(),
        )

    def _after(self) -> int | None:
        return self.last_step if self.shared else None

    def _state(self) -> GraphState:
        if self.state is None:
            raise RuntimeError("SessionRecorder.begin was not called")
        return self.state

    def _sid(self) -> str:
        return self.session_id or ""


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
    """Where the walk over the context chunks continues: the chunk after the last committed iteration's (the
    same one again when that turn did not advance, see ``IterationRecord.advances``); 0 before the first."""
    agent: str | None = None
    """The agent spec the session was started with."""
    options: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    """What the agent is told first (a reviewer's rejection of its last plan)."""
    plans: int = 0
    """Review plans proposed so far (the next is numbered ``plans + 1``)."""
    spent: Usage = field(default_factory=Usage)
    """What the session's agent calls spent so far (its iterations and its turns held for review), which a
    budgeted agent counts against its budget when it continues the session."""


def resume_point(store: SessionStore, session_id: str) -> ResumePoint:
    """Rebuild an interrupted session from the store (``SessionError`` when it is unknown or finished)."""
    info = store.session(session_id)
    if info.status == "finished":
        raise SessionRefused(
            f"session {session_id!r} already finished ({info.stop_reason}); nothing to resume",
            session_id=session_id,
        )
    # every mutation replayed from the start, not from a snapshot: that rebuilds the state exactly as the run
    # left it, down to what a snapshot does not keep (the order of recent touches the observation shows)
    # (one read of the request, of the mutations and of the steps)
    request = store.request(session_id)
    state, problems = build_state(request)
    if problems:
        raise SessionError(
            f"the stored request of session {session_id!r} no longer builds: {problems[0]}",
            session_id=session_id,
        )
    by_step: dict[int, list[Mutation]] = {}
    for step, m in store.mutations(session_id):
        by_step.setdefault(step, []).append(m)
        state.apply_mutation(m)
    state.take_journal()
    records: list[IterationRecord] = []
    steps = store.steps(session_id)
    if steps:
        state.restore_id_counters(steps[-1].next_node, steps[-1].next_edge)
    spent = Usage()
    typed = [read_step(s.kind, s.record) for s in steps]
    plans = sum(isinstance(t, PlanPending) for t in typed)
    for s, t in zip(steps, typed, strict=True):
        if isinstance(t, IterationStep):
            records.append(codec.record_from_dict(s.record, by_step.get(s.step)))
            _add_usage(spent, s.record.get("usage"))
        elif isinstance(t, PlanPending):
            _add_usage(spent, t.usage)
    notes = []
    last = typed[-1] if typed else None
    if isinstance(last, PlanPending):
        review = shlex.join(["igg", "review", session_id, "--store", str(store.path)])
        raise SessionRefused(
            f"session {session_id!r} has plan {last.plan.plan_id} (iteration "
            f"{last.plan.iteration}) waiting for review; decide it first: `{review} --approve` "
            f"or `{review} --reject NOTE`",
            session_id=session_id,
        )
    if isinstance(last, PlanRejected):
        notes.append(f"A reviewer rejected your last plan: {last.note or '(no note)'}")
    next_iteration = max((r.iteration for r in records), default=0) + 1
    return ResumePoint(
        request=request,
        state=state,
        next_iteration=next_iteration,
        records=records,
        chunk_cursor=records[-1].chunk_cursor + records[-1].advances if records else 0,
        agent=info.agent,
        options=info.options,
        notes=notes,
        spent=spent,
        plans=plans,
    )


def _add_usage(total: Usage, usage: Mapping[str, Any] | None) -> None:
    if not usage:
        return
    total.prompt_tokens += int(usage.get("prompt_tokens") or 0)
    total.completion_tokens += int(usage.get("completion_tokens") or 0)
    total.estimated = total.estimated or bool(usage.get("estimated"))
    if usage.get("cost") is not None:
        total.cost = (total.cost or 0.0) + float(usage["cost"])
