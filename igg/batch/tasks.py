"""What runs on a worker: one whole session, from its job to its outcome. Nothing here writes to a store.

A ``SessionJob`` carries everything a session needs (the request, the agent spec, a scripted agent's turns,
and the committed steps of a session to continue), so a worker needs no file of the client's. A ``TreeJob``
names source trees to map; the worker reads them (they must be at the same path on every worker: a shared
or identical checkout). Either way the worker runs the loop in memory and returns a ``SessionOutcome``: the
new iteration records with their mutations and the id counters after each, and how the run ended. The
client replays that into an SQLite store (``igg.batch.persist``), so the file has one writer; with a
PostgreSQL store the worker commits it there itself (``igg.batch.remote``). Either way a session a dead worker
was running leaves nothing behind: Dask runs it again elsewhere.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from igg.errors import IGGError
from igg.graph.journal import Mutation
from igg.graph.state import GraphState
from igg.models.request import Request
from igg.record.records import IterationRecord, RunResult
from igg.record.steps import StepRecord, UpdateStep


@dataclass(kw_only=True)
class ResumeFrom:
    """The committed part of a session to continue (from ``igg.store.resume_point``)."""

    state: GraphState
    records: list[IterationRecord]
    """The committed iterations: the loop continues after the last (its number, its place in the context)."""


@dataclass(kw_only=True)
class SessionJob:
    """One request to run as a session on a worker."""

    session_id: str
    request: Request
    agent: str
    """The agent spec (``auto``, ``llm``, ``code``, ``hybrid``, ``script:PATH``); LLM settings and keys come
    from the worker's environment, never over the wire."""
    turns: list[dict[str, Any]] | None = None
    """A scripted agent's turns, read by the client (``agent`` then only labels the session)."""
    resume: ResumeFrom | None = None
    source: str = ""
    """Where the request came from (a file, ``FILE:LINE``), for messages."""


@dataclass(kw_only=True)
class TreeJob:
    """Source trees to map as one session on a worker (``igg batch map-code``)."""

    session_id: str
    paths: list[str]
    agent: str = "code"
    options: dict[str, Any] = field(default_factory=dict)
    """``igg.mapping.prepare.prepare`` options (schema, max_nodes, max_edges, max_bytes, ...)."""
    source: str = ""


@dataclass(kw_only=True)
class SessionOutcome:
    """What a worker sends back: enough for the client to commit the session exactly as a local run would."""

    session_id: str
    request: Request
    records: list[IterationRecord]
    """The iterations this run added (a continued session's earlier ones are not sent back)."""
    counters: list[tuple[int, int]]
    """The graph's id counters after each of ``records`` (replaying mutations does not advance them)."""
    steps: list[KeptStep] = field(default_factory=list)
    """The planned steps this run applied after its iterations (a fresh static code map is one), in
    order."""
    final_mutations: list[Mutation]
    final_counters: tuple[int, int]
    stop_reason: str
    error: str | None
    open_todos: list[str]
    pruned: list[dict[str, Any]]
    max_nodes: int
    max_edges: int
    elapsed_ms: float
    nodes: int
    edges: int
    """The final graph's size on the worker (the client checks its replay against it)."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Keys the job adds to the session's summary (``map_code`` for trees)."""
    worker: str = ""
    """``host:pid`` of the worker process that ran it."""
    committed: bool = False
    """The worker committed the session to the store itself (a PostgreSQL store: ``igg.batch.remote``); the
    client only writes ``--out`` and the exports."""


class SessionFailed(IGGError):
    """A session could not run on its worker (its request, agent or trees are unusable there); the message
    is the original error's. (IGG's own errors do not all survive pickling; this one-string error does.)"""


@dataclass(kw_only=True)
class KeptStep:
    """A planned step (``UpdateStep``) a worker's run applied: what the client replays and keeps as the
    worker's session kept it."""

    step: UpdateStep
    mutations: list[Mutation]
    counters: tuple[int, int]
    """The graph's id counters after it."""
    snapshot: bool


class _Counters:
    """A recorder that notes the id counters after every iteration, and the planned steps."""

    def __init__(self) -> None:
        self.state: GraphState | None = None
        self.after: list[tuple[int, int]] = []
        self.steps: list[KeptStep] = []

    def begin(self, request: Request, state: GraphState, records: list[IterationRecord]) -> None:
        self.state = state

    def record(self, record: IterationRecord) -> None:
        assert self.state is not None
        self.after.append(self.state.id_counters)

    def keep(
        self, step: StepRecord, mutations: Sequence[Mutation], state: GraphState, *, snapshot: bool = False
    ) -> None:
        """A planned step is noted with its mutations (other steps are not kept here)."""
        if isinstance(step, UpdateStep):
            self.steps.append(
                KeptStep(step=step, mutations=list(mutations), counters=state.id_counters, snapshot=snapshot)
            )

    def finish(self, result: RunResult) -> None:
        pass


def _worker_logging() -> None:
    """A worker process is an entry point of its own: IGG's log lines go to its standard error (structlog's
    default would print them on standard output, which a local cluster shares with ``igg batch --json``)."""
    import structlog

    if not structlog.is_configured():
        from igg.record.logs import configure_logging

        configure_logging("console", colors=False)


def run_session(job: SessionJob) -> SessionOutcome:
    """Run ``job`` to its stop reason in this process and return the outcome (runs on a worker); raises
    ``SessionFailed`` when it cannot run at all."""
    _worker_logging()
    try:
        return _run_session(job)
    except IGGError as exc:
        raise SessionFailed(str(exc)) from None


def map_tree(job: TreeJob) -> SessionOutcome:
    """Walk, parse, link and map ``job.paths`` as one session in this process (runs on a worker); raises
    ``SessionFailed`` when it cannot run at all (no such path there, no sources, an agent not available)."""
    _worker_logging()
    try:
        return _map_tree(job)
    except IGGError as exc:
        raise SessionFailed(str(exc)) from None


def _run_session(job: SessionJob) -> SessionOutcome:
    from igg.agents.registry import make_agent
    from igg.agents.scripted import ScriptedAgent

    agent = (
        ScriptedAgent(job.turns, source=f"transcript of {job.agent}")
        if job.turns is not None
        else make_agent(job.agent, job.request)
    )
    options: dict[str, Any] = {}
    prior = 0
    if job.resume is not None:
        options = {"state": job.resume.state, "records": job.resume.records}
        prior = len(job.resume.records)
    return _run(job.session_id, job.request, agent, options, prior)


def _map_tree(job: TreeJob) -> SessionOutcome:
    from igg.service import map_code

    counters = _Counters()
    prepared: list[Any] = []
    # jobs=1: a worker is one process per core already (and a daemonic worker may not start a process pool)
    result, summary = map_code(
        [Path(p) for p in job.paths],
        agent=job.agent,
        session_id=job.session_id,
        jobs=1,
        recorders=[counters],
        on_prepared=prepared.append,
        **job.options,
    )
    return _outcome(job.session_id, prepared[0].request, result, counters, 0, {"map_code": summary})


def _run(
    session_id: str, request: Request, agent: Any, options: dict[str, Any], prior: int
) -> SessionOutcome:
    from igg.service import run_request

    counters = _Counters()
    result = run_request(request, agent, recorders=[counters], **options)
    return _outcome(session_id, request, result, counters, prior, {})


def _outcome(
    session_id: str, request: Request, result: Any, counters: _Counters, prior: int, extra: dict[str, Any]
) -> SessionOutcome:
    """What a worker sends back of a finished session: its new records, mutations and counts."""
    new = result.records[prior:]
    return SessionOutcome(
        session_id=session_id,
        request=request,
        records=new,
        counters=counters.after,
        steps=counters.steps,
        final_mutations=list(result.final_mutations),
        final_counters=result.state.id_counters,
        stop_reason=result.stop_reason,
        error=result.error,
        open_todos=list(result.open_todos),
        pruned=list(result.pruned),
        max_nodes=result.max_nodes,
        max_edges=result.max_edges,
        elapsed_ms=result.elapsed_ms,
        nodes=result.state.node_count,
        edges=result.state.edge_count,
        extra=extra,
        worker=f"{socket.gethostname()}:{os.getpid()}",
    )
