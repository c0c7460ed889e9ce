"""``Session``: one session in progress, and the only way it changes.

A session owns its request, schema, ``Actor``, graph state, id counters, pending review plan and the
``Recorder``s that keep it. ``Session.open`` (a new one) and ``Session.load`` (a stored one, from its
``SessionRepo``) are the ways to have one; ``drive`` is how a run takes it over. Its methods are the only ways
a session changes, each returning one typed step (``igg.record.steps``):

==============  ===================================================  =====================================
method          what it does                                         step it returns
==============  ===================================================  =====================================
``step``        one agent turn through the act step                  ``IterationRecord``
``apply``       a tool call's actions (a plan when review is on)     ``IterationRecord`` / ``PlanPending``
``propose``     a turn validated as if applied, kept for review      ``PlanPending``
``decide``      approve (all or chosen actions) or reject a plan     ``IterationRecord`` / ``PlanRejected``
``apply_update`` a code map's difference through the act step        ``UpdateStep``
``undo``        roll back to an earlier iteration (a stored one)     ``UndoStep``
``fork``        a new session from an earlier iteration              (the new id)
``finish``      finalize (optional pruning), the stop reason         ``RunResult``
==============  ===================================================  =====================================

The drivers are ``igg.engine.loop.Loop`` (runs: it observes, calls the agent, and hands each turn to
``step``), ``igg.workspace.Workspace`` (tool calls), ``igg.mapping.update`` (``--update``) and batch (through
the loop). Nothing else changes a live session's ``GraphState`` or writes its steps.

Transitions that make no sense are refused with a typed ``WorkspaceError`` whose message names the ways
forward and no server detail (it may reach a remote client): a finished session takes no change
(``SESSION_FINISHED``); while a plan waits, only ``decide`` is taken (``REVIEW_PENDING``).

When a recorder fails, the change is undone in memory (the graph, the counters, the plan) and the error goes
on: memory and store never disagree. With ``defer`` (async drivers) the recorder calls wait in
``take_persistence()`` so a driver can run them off its event loop.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from igg.act.apply import Actor
from igg.act.difference import Difference
from igg.act.evidence import Grounder
from igg.act.rules import Rule
from igg.act.step import act, prune_isolated
from igg.errors import RequestInvalid, WorkspaceCode, WorkspaceError
from igg.graph.journal import Mutation
from igg.graph.state import GraphState
from igg.io.encodable import replace_unencodable
from igg.models.actions import ParsedResponse, read_response
from igg.models.request import Request
from igg.models.verdicts import Verdict
from igg.observe import open_todos
from igg.persistence import Recorder, SessionInfo, SessionRepo, SessionStatus
from igg.record.records import IterationRecord, RunResult, StopReason
from igg.record.steps import PlanPending, PlanRejected, ReviewPlan, StepRecord, UndoStep, UpdateStep
from igg.request.load import build_state
from igg.session import updates
from igg.session.plans import approved, plan_of


class Session:
    """One session in progress (see the module docstring). Not thread-safe: its driver serialises calls."""

    def __init__(
        self,
        request: Request,
        *,
        state: GraphState | None = None,
        recorders: Sequence[Recorder] = (),
        repo: SessionRepo | None = None,
        last_record: IterationRecord | None = None,
        read_records: Callable[[], list[IterationRecord]] | None = None,
        pending: ReviewPlan | None = None,
        review_note: str | None = None,
        plans: int = 0,
        status: SessionStatus = "open",
        stop_reason: str | None = None,
        begun: bool = False,
        last_iteration: int | None = None,
        steps: int = 0,
        extra_rules: Mapping[type, Sequence[Rule[Any, Any]]] | None = None,
    ) -> None:
        if state is None:
            state, problems = build_state(request)
            if problems:
                raise RequestInvalid(problems)
        state.take_journal()  # what happened before belongs to whoever made it
        self.request = request
        self.config = request.config
        self.session_id: str = request.session_id or f"igg-{uuid.uuid4().hex[:12]}"
        self.state = state
        self.actor = Actor(
            state.schema,
            self.config.constraints,
            self.config.apply_mode,
            extra_rules=extra_rules,
            grounder=Grounder.for_request(request),
            entity_typing=self.config.entity_typing == "schema",
        )
        self.recorders: list[Recorder] = list(recorders)
        self.repo = repo
        """Where the session is kept, for what reads its history (undo, fork); None for a run without one."""
        self.last_record = last_record
        self.last_iteration = (
            last_iteration
            if last_iteration is not None
            else (last_record.iteration if last_record is not None else 0)
        )
        self._read_records = read_records
        self._records: list[IterationRecord] | None = (
            None if read_records is not None else ([last_record] if last_record is not None else [])
        )
        self.pending = pending
        """The plan waiting for review (``config.review``), if any."""
        self.review_note = review_note
        """The note of the last rejected plan, shown to the agent next."""
        self.plans = max(plans, pending.plan_id if pending is not None else 0)
        """Plans proposed so far: the next is ``plans + 1``."""
        self.status: SessionStatus = status
        self.stop_reason = stop_reason
        self.begun = begun
        self.steps = steps
        """The steps stored so far, as this object knows them (a repository's ``version`` that differs means
        another process changed the session: its driver loads it again)."""
        self.defer = False
        self._deferred: list[Callable[[], None]] = []
        self.loaded: SessionInfo | None = None
        """What its repository said of it when ``load`` read it (None: opened here)."""

    # ---- the two ways to have one --------------------------------------------------------------------------
    @classmethod
    def open(
        cls,
        request: Request,
        *,
        state: GraphState | None = None,
        recorders: Sequence[Recorder] = (),
        repo: SessionRepo | None = None,
        status: SessionStatus = "open",
        records: Sequence[IterationRecord] = (),
        start_iteration: int | None = None,
        plans: int = 0,
        extra_rules: Mapping[type, Sequence[Rule[Any, Any]]] | None = None,
    ) -> Session:
        """A new session for ``request``: its seed graph loaded (or ``state``, a graph built for it), kept by
        ``recorders``. ``records``, ``start_iteration``, ``plans``: where a run resumed from records of its
        own begins (its committed iterations; the next iteration, default: the one after the last
        record's)."""
        session = cls(
            request,
            state=state,
            recorders=recorders,
            repo=repo,
            status=status,
            last_record=records[-1] if records else None,
            last_iteration=start_iteration - 1 if start_iteration is not None else None,
            plans=plans,
            extra_rules=extra_rules,
        )
        session._records = list(records)
        return session

    @classmethod
    def load(
        cls,
        repo: SessionRepo,
        session_id: str,
        recorder: Callable[[SessionInfo], Recorder],
        *,
        status: Callable[[SessionInfo], SessionStatus] | None = None,
        begun: bool = False,
        elements: Collection[str] | None = None,
        request: Request | None = None,
    ) -> Session:
        """A stored session as its last step left it: its graph, its last record (all read on first use), the
        plan waiting for review (when the request still asks for it), the note of a rejected one, its version
        (``steps``). ``recorder``: keeps its next steps; ``status``: what it is driven with (default: the
        stored one); ``begun``: its recorder writes without claiming it (an update of a finished session);
        ``elements``, ``request``: hints for ``SessionRepo.load`` (the elements changed; its request read)."""
        loaded = repo.load(session_id, elements=elements, request=request)
        info = loaded.info
        session = cls(
            loaded.request,
            state=loaded.state,
            repo=repo,
            recorders=[recorder(info)],
            last_record=loaded.last_record,
            read_records=loaded.read_records,
            pending=(
                loaded.pending
                if loaded.request.config.review or (loaded.pending is not None and loaded.pending.update)
                else None
            ),
            review_note=loaded.review_note,
            plans=loaded.plans,
            status=status(info) if status is not None else info.status,
            stop_reason=info.stop_reason,
            begun=begun,
            last_iteration=info.last_iteration,
            steps=info.last_step,
        )
        session.loaded = info
        return session

    def drive(
        self,
        recorders: Sequence[Recorder] = (),
        extra_rules: Mapping[type, Sequence[Rule[Any, Any]]] | None = None,
    ) -> None:
        """A run takes the session over: its recorders join the session's, its extra rules (a code agent's
        grounding rule) join the session's act step, and the session is ``running``."""
        self.recorders = [*self.recorders, *(r for r in recorders if r not in self.recorders)]
        self.status, self.stop_reason = "running", None
        if extra_rules:
            self.actor = Actor(
                self.state.schema,
                self.config.constraints,
                self.config.apply_mode,
                extra_rules=extra_rules,
                grounder=self.actor.grounder,
                entity_typing=self.actor.entity_typing,
            )

    def stop(self, reason: str | None) -> None:
        """Say why the run driving the session stops (None: it goes on); ``finish`` then ends it."""
        self.stop_reason = reason

    def let_go(self) -> None:
        """A run that failed (its store, or a bug) lets the session go: open again, for the tool agent."""
        self.status, self.stop_reason = "open", None

    def take_review_note(self) -> str | None:
        """The note of the last rejected plan, once: what the agent is told when its run goes on."""
        note, self.review_note = self.review_note, None
        return note

    # ---- what it is --------------------------------------------------------------------------------------
    @property
    def records(self) -> list[IterationRecord]:
        """Every committed iteration (read from the repository on first use for a loaded session)."""
        if self._records is None:
            self._records = self._read_records() if self._read_records is not None else []
            self._read_records = None
        return self._records

    @property
    def shown_status(self) -> SessionStatus:
        """The status as a client sees it (``awaiting_review`` while a plan waits)."""
        return "awaiting_review" if self.pending is not None else self.status

    def begin(self, prior: Sequence[IterationRecord] = ()) -> None:
        """Register the session with its recorders (once; later calls do nothing)."""
        if self.begun:
            return
        for recorder in self.recorders:
            self._persist(functools.partial(recorder.begin, self.request, self.state, list(prior)))
        self.begun = True

    # ---- changes -------------------------------------------------------------------------------------------
    def step(
        self,
        parsed: ParsedResponse | None,
        *,
        iteration: int | None = None,
        before_keep: Callable[[IterationRecord], None] | None = None,
        **turn: Any,
    ) -> IterationRecord:
        """One turn (None: it did not parse; ``turn`` carries ``parse_error`` and the rest of ``act``'s
        keywords) through the act step, kept by the recorders (``before_keep`` may complete the record first,
        e.g. its timings)."""
        self._require_changeable()
        record = act(self.actor, self.state, parsed, iteration=iteration or self.last_iteration + 1, **turn)
        if before_keep is not None:
            before_keep(record)
        self._commit_iteration(record)
        return record

    def dry_run(
        self, parsed: ParsedResponse, *, iteration: int | None = None, **turn: Any
    ) -> IterationRecord:
        """The turn validated as if applied: nothing changes, no id is used up, nothing is kept."""
        counters = self.state.id_counters
        record = act(
            self.actor,
            self.state,
            parsed,
            iteration=iteration or self.last_iteration + 1,
            dry_run=True,
            **turn,
        )
        self.state.restore_id_counters(*counters)
        return record

    def apply(
        self,
        actions: list[Any],
        *,
        reasoning: str = "",
        dry_run: bool = False,
        observed: tuple[int, int] = (0, 0),
    ) -> IterationRecord | PlanPending:
        """A tool call's actions: applied as the next iteration, checked only (``dry_run``), or kept as a plan
        for review when ``config.review`` is on."""
        self._require_changeable()
        if not dry_run and self.last_iteration >= self.config.max_iterations:
            raise WorkspaceError(
                WorkspaceCode.MAX_ITERATIONS_REACHED,
                f"session {self.session_id!r} has used all "
                f"{self.config.max_iterations} iterations (config.max_iterations); finish it, "
                "or check actions with dry_run",
            )
        reasoning, repaired = replace_unencodable(reasoning)  # free text: repaired and counted
        parsed = read_response({"reasoning": reasoning, "actions": actions})
        if self.config.review and not dry_run:
            return self.propose(parsed, actions=list(actions))
        notes = (
            [
                f"{repaired} unencodable character(s) (lone surrogates) in the reasoning were replaced "
                "with U+FFFD"
            ]
            if repaired
            else None
        )
        turn: dict[str, Any] = {
            "actions": list(actions),
            "observation_chars": observed[0],
            "observation_tokens": observed[1],
            "notes": notes,
        }
        if not dry_run:
            return self.step(parsed, before_keep=_totalled, **turn)
        record = self.dry_run(parsed, **turn)
        _totalled(record)
        return record

    def propose(
        self,
        parsed: ParsedResponse,
        *,
        actions: list[Any] | None = None,
        iteration: int | None = None,
        usage: dict[str, Any] | None = None,
        chunk: str | None = None,
        chunk_cursor: int = 0,
        **turn: Any,
    ) -> PlanPending:
        """Validate the turn as if applied and keep it as the plan waiting for review."""
        self._require_changeable()
        record = self.dry_run(
            parsed,
            iteration=iteration,
            actions=actions,
            usage=usage,
            chunk=chunk,
            chunk_cursor=chunk_cursor,
            **turn,
        )
        return self.keep_plan(record)

    def keep_plan(self, record: IterationRecord) -> PlanPending:
        """Keep a dry run's record (``dry_run``) as the plan waiting for review."""
        self._require_changeable()
        plan = plan_of(record, self.plans + 1)
        step = PlanPending(plan=plan, usage=record.usage)
        self._keep(step)
        self.pending, self.review_note, self.plans = plan, None, plan.plan_id
        return step

    def decide(
        self, decision: str, plan_id: int | None, *, actions: list[int] | None = None, note: str = ""
    ) -> IterationRecord | PlanRejected | UpdateStep:
        """Approve the waiting plan (all its actions, or the chosen indices, applied in the plan's order as
        the plan's iteration) or reject it (``note`` goes to the agent)."""
        plan = self.pending
        sid = self.session_id
        if plan is None:
            raise WorkspaceError(
                WorkspaceCode.NO_PENDING_REVIEW, f"session {sid!r} has no plan waiting for review"
            )
        if plan_id != plan.plan_id:
            raise WorkspaceError(
                WorkspaceCode.REVIEW_STALE,
                f"plan {plan_id} is not the plan waiting in session "
                f"{sid!r} (plan {plan.plan_id}); show it again and decide on what you see",
            )
        if decision == "reject":
            rejected = PlanRejected(plan_id=plan.plan_id, note=note)
            self._keep(rejected)
            self.pending, self.review_note = None, note or "(no note)"
            return rejected
        if plan.update is not None:
            return updates.approve(self, plan, actions, note)
        kept, parsed = approved(plan, actions, note)
        self.pending = None
        try:
            record = self.step(
                parsed,
                iteration=plan.iteration,
                actions=kept,
                chunk=plan.chunk,
                chunk_cursor=plan.chunk_cursor,
                before_keep=_totalled,
            )
        except BaseException:
            self.pending = plan
            raise
        self.review_note = None
        return record

    def keep_update_plan(
        self, difference: Difference, *, files: dict[str, Any], reasoning: str, finish: bool
    ) -> PlanPending:
        """Check ``difference`` as ``apply_update`` would apply it and keep it whole as the plan waiting for
        review (``igg.session.updates``); ``finish``: approving it finishes the session."""
        self._require_changeable(finished_ok=True)
        pending = updates.keep_plan(self, difference, files=files, reasoning=reasoning, finish=finish)
        self._keep(pending)
        self.pending, self.review_note, self.plans = pending.plan, None, pending.plan.plan_id
        return pending

    def apply_update(
        self,
        difference: Difference,
        *,
        files: dict[str, Any],
        git_commit: str | None,
        reasoning: str,
        timings_ms: dict[str, float] | None = None,
        snapshot: bool | None = None,
        refused: list[tuple[str, Verdict]] | None = None,
    ) -> UpdateStep:
        """A planned difference (``igg.act.difference``: a code map's or documents' update) through the act
        step, as the next iteration; kept as an ``update`` step (refused whole, nothing changed, when it
        breaks a rule; with ``refused``, what breaks one is left out and its verdict appended there, and
        ``difference`` is taken apart as it is applied). ``snapshot``: whether the step keeps a snapshot of
        the graph (default: when it changed a fifth of it or more; a fresh static map's step keeps none, as
        the finalize step after it does)."""
        self._require_changeable(finished_ok=True)  # a plan waiting for review is decided first
        step, mutations, large = updates.apply(
            self,
            difference,
            files=files,
            git_commit=git_commit,
            reasoning=reasoning,
            timings_ms=timings_ms,
            refused=refused,
        )
        self._keep(step, mutations, snapshot=large if snapshot is None else snapshot)
        self.last_iteration = step.iteration
        return step

    def undo(self, to_iteration: int) -> UndoStep:
        """Roll the stored session back to after ``to_iteration``, as a step of its own. The graph in memory
        is then stale: the driver loads the session again."""
        self._require_changeable(finished_ok=True)
        repo = self._history("undo")
        return repo.undo(self.session_id, to_iteration)

    def fork(self, at: int, new_id: str | None = None) -> tuple[str, int]:
        """A new stored session that continues from after iteration ``at``; (its id, steps copied)."""
        return self._history("fork").fork(self.session_id, at, new_id)

    def finish(
        self,
        stop_reason: StopReason = "finished",
        *,
        prune: bool | None = None,
        error: str | None = None,
        records: Sequence[IterationRecord] | None = None,
        review: dict[str, Any] | None = None,
        elapsed_ms: float = 0.0,
        lost_usage: dict[str, Any] | None = None,
        steps: Sequence[UpdateStep] = (),
    ) -> RunResult:
        """End the session with ``stop_reason`` (pruning isolated nodes when ``prune``, default: the request's
        ``finalize.prune_isolated``). ``awaiting_review`` (a run whose turn waits as ``review``) only lets the
        session go: it is not finalized. ``steps``: the planned steps the run applied
        (``RunResult.steps``)."""
        held = stop_reason == "awaiting_review"
        if not held:
            self._require_changeable()
        config, state = self.config, self.state
        prune = config.finalize.prune_isolated if prune is None else prune
        state.take_journal()
        pruned = (
            prune_isolated(state, keep_protected=config.constraints.protect_seed_nodes)
            if prune and not held
            else []
        )
        limits = config.constraints
        result = RunResult(
            session_id=self.session_id,
            stop_reason=stop_reason,
            state=state,
            records=list(self.records if records is None else records),
            error=error,
            open_todos=list(open_todos(state, config.schema_)),
            pruned=pruned,
            final_mutations=state.take_journal(),
            review=review,
            max_nodes=limits.max_nodes,
            max_edges=limits.max_edges,
            elapsed_ms=elapsed_ms,
            lost_usage=lost_usage,
            steps=list(steps),
        )
        before = (self.status, self.stop_reason, self.begun)
        self.status, self.stop_reason = ("interrupted", None) if held else ("finished", stop_reason)
        if held:
            self.begun = False  # the recorders let the session go: the decision claims it again
        try:
            for recorder in self.recorders:
                self._persist(functools.partial(recorder.finish, result))
        except BaseException:
            self._revert(result.final_mutations)
            self.status, self.stop_reason, self.begun = before
            raise
        self.steps += 0 if held else 1
        return result

    # ---- persistence ---------------------------------------------------------------------------------------
    def take_persistence(self) -> list[Callable[[], None]]:
        """The recorder calls deferred since the last take (``defer``), in order."""
        calls, self._deferred = self._deferred, []
        return calls

    def _persist(self, call: Callable[[], None]) -> None:
        if self.defer:
            self._deferred.append(call)
        else:
            call()

    def _commit_iteration(self, record: IterationRecord) -> None:
        self.begin()
        previous = (self.last_record, self.last_iteration)
        self.last_record, self.last_iteration = record, max(self.last_iteration, record.iteration)
        if self._records is not None:
            self._records.append(record)
        try:
            for recorder in self.recorders:
                self._persist(functools.partial(recorder.record, record))
        except BaseException:
            self._revert(record.mutations)
            self.last_record, self.last_iteration = previous
            if self._records and self._records[-1] is record:
                self._records.pop()
            raise
        self.steps += 1

    def _keep(self, step: StepRecord, mutations: Sequence[Mutation] = (), *, snapshot: bool = False) -> None:
        """A step other than an iteration, kept by every recorder (reverted in memory when one fails)."""
        self.begin()
        try:
            for recorder in self.recorders:
                self._persist(
                    functools.partial(recorder.keep, step, mutations, self.state, snapshot=snapshot)
                )
        except BaseException:
            self._revert(mutations)
            raise
        self.steps += 1

    def _revert(self, mutations: Sequence[Mutation]) -> None:
        for mutation in reversed(mutations):
            self.state.revert_mutation(mutation)
        self.state.take_journal()

    # ---- transitions ---------------------------------------------------------------------------------------
    def _require_changeable(self, *, finished_ok: bool = False) -> None:
        sid = self.session_id
        if self.status == "finished" and not finished_ok:
            raise WorkspaceError(
                WorkspaceCode.SESSION_FINISHED,
                f"session {sid!r} is finished ({self.stop_reason}); observe or export it, or start a new one",
            )
        if self.pending is not None:
            raise WorkspaceError(
                WorkspaceCode.REVIEW_PENDING,
                f"session {sid!r} has plan {self.pending.plan_id} "
                "waiting for review; decide it first: approve it (all or some of its actions) or "
                "reject it with a note (the review operation), then go on",
            )

    def _history(self, what: str) -> SessionRepo:
        if self.repo is None:
            raise WorkspaceError(
                WorkspaceCode.HISTORY_UNAVAILABLE,
                f"session {self.session_id!r} is kept nowhere "
                f"that holds its history; {what} needs a session store",
            )
        return self.repo


def _totalled(record: IterationRecord) -> None:
    """A tool call's record given its total time (the act step is all of it), before it is kept."""
    record.timings_ms["total"] = record.timings_ms["act"]


__all__ = ["Session"]
