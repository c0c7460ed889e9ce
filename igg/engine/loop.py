"""The engine: observe -> reason -> act -> record -> check stop, until the run has exactly one stop reason.

``Loop`` drives one run over an ``igg.session.Session``, which owns the graph, the actor, the records, the
iteration, the stop reason, the review plan and the recorders, and alone changes them. The loop keeps only
what drives the next turn (the chunk walk, the stuck streak, the last verdicts and notes) and hands each
agent turn to ``Session.step`` (or keeps it as the plan under review, ``igg.engine.turns`` reads it). The
drivers below call the agent between its steps, so the same engine serves every form:

* ``run(request, agent)`` / ``await arun(request, agent)``: to the end, returning a ``RunResult``;
* ``stream(...)`` / ``astream(...)``: iterate the ``Event``s as they happen, then read ``.result``.

The async forms accept sync and async agents (a sync agent runs inline: keep it quick or make it async), so
many sessions share one event loop without a thread each. A sync run of an async agent drives it on a
private event loop.

What an agent offers beyond being called is declared (``igg.agents.base.AgentCapabilities``): its own rules
run after the built-in rules of their action type; an agent that reads the graph itself is not sent the
markdown; ``aclose()`` is awaited at the end of a run that owns the agent.

With ``config.review`` a turn's actions are validated as if applied (a dry run), not applied, and the run
stops with ``awaiting_review``, the plan in ``RunResult.review`` (kept as a pending ``review`` step, which
``igg review`` decides; ``igg resume`` then continues, a rejection's note shown to the agent). A turn that
did not parse, or has no actions, needs no review and is recorded as usual.

A run continues a session (the store's resume) from its ``state`` and prior ``records``, or drives a
``session`` given whole; the next iteration, chunk position, stuck streak and last verdicts follow from them.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypedDict, Unpack, cast

from igg.act.apply import Actor
from igg.act.rules import Rule
from igg.act.step import iteration_events
from igg.agents.base import AgentTurn, AnyAgent, Observation, as_turn, capabilities
from igg.engine.turns import chunk_label, notes_after, notes_of, parse, raw_output
from igg.errors import AgentFailed, BudgetExhausted
from igg.graph.state import GraphState
from igg.models.actions import ParsedResponse
from igg.models.request import Request
from igg.observe import Chunk, ContextChunks, open_todos, render_observation, split_context
from igg.persistence import Recorder
from igg.record.records import Event, IterationRecord, RunResult, StopReason
from igg.session import Session

EventHandler = Callable[[Event], Any]
"""Receives every ``Event`` of a run (may be async in ``arun``)."""


class RunOptions(TypedDict, total=False):
    """What a run passes on to ``Loop`` besides its recorders (all optional); ``igg.service`` takes these."""

    session: Session
    """The session to drive (a workspace's, held by it too); default: a new one from the request."""
    plans: int
    """Review plans the session had before this run (the next is ``plans + 1``)."""
    state: GraphState
    """The graph to continue (default: built from the request's seed)."""
    records: Sequence[IterationRecord]
    """The iterations already committed (a resumed session)."""
    start_iteration: int
    chunk_cursor: int
    extra_rules: Mapping[type, Sequence[Rule[Any, Any]]]
    notes: Sequence[str]
    """Told to the agent in its first observation (e.g. a reviewer's rejection)."""
    clock: Callable[[], float]


class LoopOptions(RunOptions, total=False):
    """What ``run``, ``arun`` and ``stream`` pass on to ``Loop`` (all optional)."""

    recorder: Recorder | Sequence[Recorder]


class Loop:
    """One run of a request, step by step. The drivers below call the agent between ``observe`` and
    ``act``."""

    def __init__(
        self,
        request: Request,
        *,
        state: GraphState | None = None,
        records: Sequence[IterationRecord] = (),
        start_iteration: int | None = None,
        chunk_cursor: int | None = None,
        recorder: Recorder | Sequence[Recorder] | None = None,
        extra_rules: Mapping[type, Sequence[Rule[Any, Any]]] | None = None,
        notes: Sequence[str] = (),
        clock: Callable[[], float] = time.perf_counter,
        session: Session | None = None,
        plans: int = 0,
    ) -> None:
        self.request = request
        self.config = request.config
        recorders: list[Recorder] = (
            [] if recorder is None else list(recorder) if isinstance(recorder, Sequence) else [recorder]
        )
        if session is None:
            session = Session.open(
                request,
                state=state,
                recorders=recorders,
                records=records,
                start_iteration=start_iteration,
                extra_rules=extra_rules,
                plans=plans,
                status="running",
            )
        else:
            session.drive(recorders, extra_rules)
        last = session.last_record
        self.session = session
        """What the run changes, and where everything it did is kept: its graph, records, iteration, stop
        reason and plan. The loop itself keeps only what drives the next turn."""
        self.session_id = session.session_id
        self.state = session.state
        self.prior = len(self.records)
        grounder = session.actor.grounder
        self.chunks: ContextChunks = (
            grounder.chunks
            if grounder is not None and grounder.chunks is not None
            else split_context(request.context_data, self.config.context.chunk_tokens)
        )
        """Found as the walk reaches them: a huge context costs what the run shows of it
        (igg.observe.chunks)."""
        if chunk_cursor is None:
            chunk_cursor = (last.chunk_cursor + last.advances) if last else 0
        self.cursor = chunk_cursor
        self.stuck_streak = 0
        for r in reversed(self.records):
            if r.accepted:
                break
            self.stuck_streak += 1
        self.last_verdicts = list(last.verdicts) if last else []
        self.last_error = last.parse_error if last else None
        self.notes = [*notes_after(last), *notes]
        self.clock = clock
        self.todos = open_todos(self.state, self.config.schema_)
        self.error: str | None = None
        self.lost_usage: dict[str, Any] | None = None
        """What a failed agent turn's calls spent (``AgentFailed.usage``): the run's tokens count it."""
        self.result: RunResult | None = None
        self._started = clock()
        self._pending: tuple[Observation, Chunk | None, dict[str, float]] | None = None
        self.verdict_events = True
        """Whether ``act`` returns an ``action_verdict`` event per action (``run`` without ``on_event``:
        no)."""
        self.plain_responses = False
        """The agent declares ``plain_responses`` (the drivers set it): its response objects are written with
        orjson."""
        if last is not None:
            # A resumed run whose last committed turn already ended it (finished, stuck, limits_reached; a
            # kill between that commit and the end) goes straight to finalisation: the agent is not asked
            # again.
            self.stop_reason = self._stop_after(last)

    @property
    def records(self) -> list[IterationRecord]:
        """The session's committed iterations, those before the run included."""
        return self.session.records

    @property
    def iteration(self) -> int:
        """The iteration the next turn is (the one after the session's last)."""
        return self.session.last_iteration + 1

    @property
    def stop_reason(self) -> StopReason | None:
        """Why the run stops (None while it goes on): the session's, until it is finished."""
        return cast("StopReason | None", self.session.stop_reason)

    @stop_reason.setter
    def stop_reason(self, value: StopReason | None) -> None:
        self.session.stop(value)

    @property
    def review(self) -> dict[str, Any] | None:
        """The plan waiting for review once the run stopped with ``awaiting_review``."""
        pending = self.session.pending
        held = self.stop_reason == "awaiting_review" and pending is not None
        return pending.model_dump(mode="json") if held and pending is not None else None

    @property
    def actor(self) -> Actor:
        """The session's actor (its act step's rules)."""
        return self.session.actor

    @property
    def recorders(self) -> list[Recorder]:
        """The session's recorders."""
        return self.session.recorders

    @property
    def defer_persistence(self) -> bool:
        """When set (the async drivers), recorder calls wait in ``take_persistence()`` instead of running
        inside ``start``/``act``/``finish``, so a driver can run them off its event loop."""
        return self.session.defer

    @defer_persistence.setter
    def defer_persistence(self, value: bool) -> None:
        self.session.defer = value

    # ---- steps -----------------------------------------------------------------------------------------
    def start(self) -> Event:
        """Begin the run (recorders' ``begin``); returns the ``run_started`` event."""
        self.session.begin(list(self.records))
        return self._event(
            "run_started",
            goal=self.request.goal_prompt,
            start_iteration=self.iteration,
            max_iterations=self.config.max_iterations,
            chunks=self.chunks.total,
            nodes=self.state.node_count,
            edges=self.state.edge_count,
            resumed=bool(self.prior),
        )

    def observe(self, *, markdown: bool = True) -> tuple[Observation, Event] | None:
        """The next observation and its ``iteration_started`` event, or None when the run is over.

        ``markdown=False`` skips rendering (``Observation.markdown`` is empty) for an agent that reads the
        graph state itself and says so (``reads_markdown = False``, e.g. the code agent's static pass)."""
        if self.stop_reason is None and self.iteration > self.config.max_iterations:
            self.stop_reason = "max_iterations"
        if self.stop_reason is not None:
            return None
        t0 = self.clock()
        chunk = self.chunks.at(self.cursor)
        notes = list(self.notes)
        total = self.chunks.total
        if chunk is not None and total is not None and self.cursor >= total:
            notes.append(
                f"Every context chunk has been shown; this is pass {self.cursor // total + 1} "
                f'over them. Add what is still missing, or answer with "finished": true.'
            )
        text, tokens = (
            render_observation(
                request=self.request,
                state=self.state,
                iteration=self.iteration,
                last_verdicts=self.last_verdicts,
                last_error=self.last_error,
                chunk=chunk,
                todos=self.todos,
                notes=notes,
            )
            if markdown
            else ("", 0)
        )
        obs = Observation(
            session_id=self.session_id,
            iteration=self.iteration,
            markdown=text,
            tokens=tokens,
            context=chunk.text if chunk else "",
            chunk_index=chunk.index if chunk else None,
            chunk_count=total or 0,
            chunk_label=chunk_label(chunk),
            last_verdicts=list(self.last_verdicts),
            request=self.request,
            state=self.state,
        )
        timings = {"observe": (self.clock() - t0) * 1000}
        self._pending = (obs, chunk, timings)
        return obs, self._event(
            "iteration_started", chunk=obs.chunk_label, observation_chars=len(text), observation_tokens=tokens
        )

    def act(self, outcome: AgentTurn | BaseException, reason_ms: float) -> list[Event]:
        """Take the agent's turn (or the exception it raised): parse, apply, record, check stop conditions."""
        assert self._pending is not None, "act() follows observe()"
        obs, chunk, timings = self._pending
        self._pending = None
        timings["reason"] = reason_ms
        if isinstance(outcome, BaseException):
            self.stop_reason = "budget_exhausted" if isinstance(outcome, BudgetExhausted) else "agent_error"
            self.lost_usage = outcome.usage if isinstance(outcome, AgentFailed | BudgetExhausted) else None
            self.error = (
                str(outcome)
                if isinstance(outcome, AgentFailed | BudgetExhausted)
                else f"the agent raised {type(outcome).__name__}: {outcome}"
            )
            return []
        t0 = self.clock()
        turn = outcome
        raw, kind, escaped, plain = raw_output(turn, plain_json=self.plain_responses)
        # a response object whose JSON text holds no lone surrogate is encodable throughout: read it without
        # scanning each action again (one whose text does is read action by action, each refusal named)
        parsed, parse_error = parse(turn, encodable=kind == "object" and not escaped)
        # a plain, encodable response object's actions are kept as received, as they are (no dump of each
        # model)
        received = (
            list(turn.response.get("actions", []))
            if (parsed is not None and plain and not escaped and isinstance(turn.response, dict))
            else None
        )
        if self.config.review and parsed is not None and parsed.items:
            return self._hold(turn, parsed, raw, kind, obs, chunk)
        record = self.session.step(
            parsed,
            iteration=self.iteration,
            chunk=chunk_label(chunk),
            chunk_cursor=self.cursor,
            parse_error=parse_error,
            raw_output=raw,
            output_kind=kind,
            truncated=turn.truncated,
            observation_chars=len(obs.markdown),
            observation_tokens=obs.tokens,
            usage=turn.usage.to_dict() if turn.usage else None,
            exchange=turn.exchange,
            notes=notes_of(turn, parsed),
            actions=received,
            clock=self.clock,
            before_keep=lambda r: self._timed(r, timings, t0),
        )
        state = self.state
        verdicts = record.verdicts
        self.stuck_streak = 0 if record.accepted else self.stuck_streak + 1
        self.stop_reason = self._stop_after(record)
        events = iteration_events(
            self.session_id,
            record,
            nodes=state.node_count,
            edges=state.edge_count,
            stop_reason=self.stop_reason,
            verdicts=self.verdict_events,
        )
        self.last_verdicts, self.last_error, self.notes = verdicts, parse_error, notes_after(record)
        if self.stop_reason is None and self.stuck_streak:
            self.notes.append(
                f"Nothing was accepted in the last {self.stuck_streak} iteration(s); the run stops "
                f"as stuck after {self.config.stuck_after}. Fix the rejected actions or finish."
            )
        self.cursor += record.advances
        return events

    def _timed(self, record: IterationRecord, timings: dict[str, float], t0: float) -> None:
        """The turn's timings, set on its record before it is kept."""
        timings["act"] = (self.clock() - t0) * 1000
        self.todos = open_todos(self.state, self.config.schema_)
        timings["total"] = sum(timings.values())
        record.timings_ms = {k: round(v, 3) for k, v in timings.items()}

    def _hold(
        self,
        turn: AgentTurn,
        parsed: ParsedResponse,
        raw: str | None,
        kind: Any,
        obs: Observation,
        chunk: Chunk | None,
    ) -> list[Event]:
        """``config.review``: the session keeps the turn as the plan waiting for review (validated as if
        applied: nothing changes, no id is used up); the run stops with ``awaiting_review``."""
        record = self.session.dry_run(
            parsed,
            iteration=self.iteration,
            chunk=chunk_label(chunk),
            chunk_cursor=self.cursor,
            raw_output=raw,
            output_kind=kind,
            truncated=turn.truncated,
            observation_chars=len(obs.markdown),
            observation_tokens=obs.tokens,
            usage=turn.usage.to_dict() if turn.usage else None,
            notes=notes_of(turn, parsed),
            clock=self.clock,
        )
        self.session.keep_plan(record)
        self.stop_reason = "awaiting_review"
        return iteration_events(
            self.session_id,
            record,
            nodes=self.state.node_count,
            edges=self.state.edge_count,
            stop_reason=self.stop_reason,
        )

    def finish(self) -> Event:
        """Finalize (optional pruning), build the ``RunResult``, tell the recorders; the ``run_finished``
        event. A run waiting for review is not finalized (the session goes on after the decision)."""
        assert self.stop_reason is not None, "finish() follows the stop"
        self.result = self.session.finish(
            self.stop_reason,
            error=self.error,
            records=self.records,
            lost_usage=self.lost_usage,
            review=self.review,
            elapsed_ms=(self.clock() - self._started) * 1000,
        )
        self.todos = list(self.result.open_todos)
        return self._event("run_finished", **self.result.summary())

    def take_persistence(self) -> list[Callable[[], None]]:
        """The recorder calls deferred since the last take (``defer_persistence``), in order."""
        return self.session.take_persistence()

    # ---- helpers ---------------------------------------------------------------------------------------
    def _stop_after(self, record: IterationRecord) -> StopReason | None:
        config = self.config
        if record.finished:
            return "finished"
        if (
            config.stop_when_complete
            and config.schema_.completeness
            and not self.todos
            and self.state.node_count
        ):
            return "finished"
        limits = config.constraints
        if self.state.node_count >= limits.max_nodes and self.state.edge_count >= limits.max_edges:
            return "limits_reached"
        if self.stuck_streak >= config.stuck_after:
            return "stuck"
        if record.iteration >= config.max_iterations:
            return "max_iterations"
        return None

    def _event(self, kind: Any, **data: Any) -> Event:
        it = self.iteration if kind not in ("run_started", "run_finished") else 0
        return Event(kind=kind, session_id=self.session_id, iteration=it, data=data)


# ---- drivers -----------------------------------------------------------------------------------------
def _is_async(agent: object) -> bool:
    if inspect.iscoroutinefunction(agent):
        return True
    return callable(agent) and inspect.iscoroutinefunction(agent.__call__)


def _drive(loop: Loop, agent: AnyAgent) -> Iterator[Event]:
    private: asyncio.AbstractEventLoop | None = None
    loop.plain_responses = capabilities(agent).plain_responses
    try:
        yield loop.start()
        while (step := loop.observe(markdown=capabilities(agent).reads_markdown)) is not None:
            obs, started = step
            yield started
            t0 = loop.clock()
            try:
                value = agent(obs)
                if inspect.isawaitable(value):
                    private = private or asyncio.new_event_loop()
                    value = private.run_until_complete(value)
                outcome: Any = as_turn(value)
            except Exception as exc:
                outcome = exc
            yield from loop.act(outcome, (loop.clock() - t0) * 1000)
        yield loop.finish()
    finally:
        if private is not None:
            private.run_until_complete(_release(agent))
            private.close()


def _run_all(calls: list[Callable[[], None]]) -> None:
    for call in calls:
        call()


_writer: ThreadPoolExecutor | None = None
_writer_lock = threading.Lock()


def _persistence_thread() -> ThreadPoolExecutor:
    """The one thread async runs persist on (created on first use). One is enough: a store takes one writer at
    a time anyway, and a single thread keeps the event loop's thread from queuing for the GIL behind many."""
    global _writer
    with _writer_lock:
        if _writer is None:
            _writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="igg-persist")
        return _writer


async def _persist(loop: Loop) -> None:
    """Run the recorder calls of the last step on the persistence thread: a store's fsync'd commit (and its
    retries while the file is busy) never blocks the event loop; the run waits for them before it goes on."""
    calls = loop.take_persistence()
    if calls:
        await asyncio.get_running_loop().run_in_executor(_persistence_thread(), _run_all, calls)


async def _adrive(loop: Loop, agent: AnyAgent) -> AsyncIterator[Event]:
    loop.defer_persistence = bool(loop.recorders)
    loop.plain_responses = capabilities(agent).plain_responses
    begun = loop.start()
    await _persist(loop)
    yield begun
    while (step := loop.observe(markdown=capabilities(agent).reads_markdown)) is not None:
        obs, started = step
        yield started
        t0 = loop.clock()
        try:
            value = agent(obs)
            if inspect.isawaitable(value):
                value = await value
            outcome: Any = as_turn(value)
        except Exception as exc:
            outcome = exc
        events = loop.act(outcome, (loop.clock() - t0) * 1000)
        await _persist(loop)
        for event in events:
            yield event
    finished = loop.finish()
    await _persist(loop)
    yield finished


class RunStream:
    """The events of a run as they happen (``for event in stream``); ``result`` once it is over."""

    def __init__(self, loop: Loop, agent: AnyAgent) -> None:
        self.loop, self.agent = loop, agent

    def __iter__(self) -> Iterator[Event]:
        return _drive(self.loop, self.agent)

    def __aiter__(self) -> AsyncIterator[Event]:
        return _adrive(self.loop, self.agent)

    @property
    def result(self) -> RunResult:
        """The run's result; available after the last event (``run_finished``)."""
        if self.loop.result is None:
            raise RuntimeError("the run has not finished yet: iterate its events to the end first")
        return self.loop.result


def stream(request: Request, agent: AnyAgent, **options: Unpack[LoopOptions]) -> RunStream:
    """A run whose events you iterate (sync ``for`` or ``async for``); options as for ``Loop``.

    An agent with a ``validation_rules()`` method (e.g. the code agents' grounding rule) gets those rules
    added to the act step unless ``extra_rules`` is given.
    """
    if "extra_rules" not in options:
        rules = capabilities(agent).validation_rules()
        if rules:
            options["extra_rules"] = rules
    return RunStream(Loop(request, **options), agent)


astream = stream
"""``async for event in astream(request, agent)``: the same object, iterated asynchronously."""


def run(
    request: Request, agent: AnyAgent, *, on_event: EventHandler | None = None, **options: Unpack[LoopOptions]
) -> RunResult:
    """Run a request with an agent to its stop; ``on_event`` receives every ``Event`` as it happens.

    ``options``: ``state``, ``records``, ``start_iteration``, ``chunk_cursor`` (to continue a session),
    ``recorder`` (one or several ``Recorder``s), ``clock``. An async agent is driven on a private event loop
    (inside a running event loop use ``arun``); the agent's ``aclose()``, if it has one, is awaited before
    that event loop ends.
    """
    if _is_async(agent):
        return asyncio.run(_arun_owned(request, agent, on_event=on_event, **options))
    runner = stream(request, agent, **options)
    runner.loop.verdict_events = on_event is not None  # nobody reads them: one Event per action not built
    for event in runner:
        if on_event is not None:
            on_event(event)
    return runner.result


async def _release(agent: AnyAgent) -> None:
    """Close what an async agent holds on an event loop that is about to end (e.g. an HTTP client)."""
    await capabilities(agent).aclose()


async def _arun_owned(
    request: Request, agent: AnyAgent, *, on_event: EventHandler | None = None, **options: Unpack[LoopOptions]
) -> RunResult:
    try:
        return await arun(request, agent, **options)
    finally:
        await _release(agent)


async def arun(
    request: Request, agent: AnyAgent, *, on_event: EventHandler | None = None, **options: Unpack[LoopOptions]
) -> RunResult:
    """``run`` for event loops: awaits async agents (sync ones run inline); ``on_event`` may be async too."""
    runner = stream(request, agent, **options)
    runner.loop.verdict_events = on_event is not None
    async for event in runner:
        if on_event is not None:
            handled = on_event(event)
            if inspect.isawaitable(handled):
                await handled
    return runner.result
