"""The batch's one writer: the client commits each session a worker finished, as a local run would have.

``SessionWriter.commit(outcome)`` rebuilds the graph step by step from the outcome's mutations (with the id
counters the worker had), and feeds the same recorders a local ``igg run`` uses: the session store
(``SessionRecorder``: one transaction per iteration, then the finalize step) and, with ``--out DIR``, the
run directory ``DIR/<session_id>/``. Then it performs the exports (``igg.service.export_result``, as
``igg run`` does). With an SQLite store only the client writes it, so SQLite sees one writer however many
workers there are; with a PostgreSQL store each worker commits its own sessions with ``commit`` and the client
writes the files with ``files`` (``igg.batch.remote``). A session is written once: the store refuses a
second session of the same id (``SessionRefused``) unless the batch was told to replace it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from igg.batch.tasks import ResumeFrom, SessionOutcome
from igg.errors import ExportError, RequestInvalid, SessionError
from igg.export import ExportSpec
from igg.export.spec import DEFAULT_FILES
from igg.graph.journal import Mutation
from igg.graph.state import GraphState
from igg.persistence import Recorder
from igg.persistence.rundir import RunDirectory
from igg.record.records import IterationRecord, RunResult
from igg.request.load import build_state
from igg.service import export_result
from igg.store import SessionRecorder, SessionStore, codec

SESSION_PLACEHOLDER = "{session_id}"
"""Put this in an ``--export`` target to give each session its own file."""


@dataclass(kw_only=True)
class SessionWriter:
    """Commits finished sessions to the store, the run directories and the exports (client side)."""

    store: SessionStore
    out_dir: Path | None = None
    """``--out DIR``: each session's files go to ``DIR/<session_id>/``."""
    specs: list[ExportSpec] = field(default_factory=list)
    provenance: bool = False
    force: bool = False
    """Replace stored sessions of the same id (``--force``)."""

    def commit(
        self, outcome: SessionOutcome, *, agent: str, resume: ResumeFrom | None = None
    ) -> tuple[RunResult, ExportError | None]:
        """Write one session; returns its result (the graph rebuilt from the mutations) and an export
        failure, if any (the session is stored either way)."""
        request = outcome.request
        if resume is not None:
            state, prior = resume.state, list(resume.records)
        else:
            state, problems = build_state(request)
            if problems:
                raise RequestInvalid(problems, source=f"request of session {outcome.session_id!r}")
            prior = []
        state.take_journal()
        recorders: list[Recorder] = [
            SessionRecorder(self.store, agent=agent, force=self.force, resume=resume is not None)
        ]
        run_dir = RunDirectory(self.out_dir / outcome.session_id) if self.out_dir is not None else None
        if run_dir is not None:
            recorders.append(run_dir)
        for r in recorders:
            r.begin(request, state, prior)
        for record, counters in zip(outcome.records, outcome.counters, strict=True):
            _replay(state, record.mutations)
            state.restore_id_counters(*counters)
            for r in recorders:
                r.record(record)
        for kept in outcome.steps:  # a fresh static code map's one step (igg.mapping.static)
            _replay(state, kept.mutations)
            state.restore_id_counters(*kept.counters)
            for r in recorders:
                r.keep(kept.step, kept.mutations, state, snapshot=kept.snapshot)
        _replay(state, outcome.final_mutations)
        state.restore_id_counters(*outcome.final_counters)
        if (state.node_count, state.edge_count) != (outcome.nodes, outcome.edges):
            raise SessionError(
                f"session {outcome.session_id!r}: the replayed graph has {state.node_count} nodes and "
                f"{state.edge_count} edges, the worker's had {outcome.nodes} and {outcome.edges}; "
                "are the client and the workers running the same IGG version?"
            )
        result = _result(outcome, state, prior)
        for r in recorders:
            r.finish(result)
        export_result(
            result,
            request,
            session_specs(self.specs, outcome.session_id),
            out_dir=self._session_dir(outcome.session_id),
            provenance=self.provenance,
            directory=run_dir,
        )
        return result, result.export_error

    def files(
        self, outcome: SessionOutcome, *, continued_after: int | None = None
    ) -> tuple[RunResult, ExportError | None]:
        """A session its worker committed itself (``igg.batch.remote``): its graph and earlier records read
        back from the store (checked against the worker's counts), then ``--out`` and the exports, as
        ``commit`` writes them; ``continued_after``: the last iteration the store held before this run."""
        sid = outcome.session_id
        request, state, _ = self.store.load_state(sid)
        if (state.node_count, state.edge_count) != (outcome.nodes, outcome.edges):
            raise SessionError(
                f"session {sid!r}: the store holds {state.node_count} nodes and {state.edge_count} "
                f"edges, the worker's graph had {outcome.nodes} and {outcome.edges}"
            )
        prior = []
        if continued_after:
            by_step: dict[int, list[Mutation]] = {}
            for step, m in self.store.mutations(sid):
                by_step.setdefault(step, []).append(m)
            prior = [
                codec.record_from_dict(s.record, by_step.get(s.step))
                for s in self.store.steps(sid)
                if s.kind == "iteration" and (s.iteration or 0) <= continued_after
            ]
        result = _result(outcome, state, prior)
        run_dir = RunDirectory(self.out_dir / sid) if self.out_dir is not None else None
        if run_dir is not None:
            run_dir.begin(request, state, prior)
            for record in outcome.records:
                run_dir.record(record)
            run_dir.finish(result)
        export_result(
            result,
            request,
            session_specs(self.specs, sid),
            out_dir=self._session_dir(sid),
            provenance=self.provenance,
            directory=run_dir,
        )
        return result, result.export_error

    def _session_dir(self, session_id: str) -> Path | None:
        return self.out_dir / session_id if self.out_dir is not None else None


def _result(outcome: SessionOutcome, state: GraphState, prior: list[IterationRecord]) -> RunResult:
    """The run's result: the worker's outcome over the rebuilt graph, after the ``prior`` records."""
    return RunResult(
        session_id=outcome.session_id,
        stop_reason=outcome.stop_reason,  # type: ignore[arg-type]
        state=state,
        records=prior + list(outcome.records),
        steps=[kept.step for kept in outcome.steps],
        error=outcome.error,
        open_todos=list(outcome.open_todos),
        pruned=list(outcome.pruned),
        final_mutations=list(outcome.final_mutations),
        max_nodes=outcome.max_nodes,
        max_edges=outcome.max_edges,
        elapsed_ms=outcome.elapsed_ms,
    )


def _replay(state: GraphState, mutations: list[Mutation]) -> None:
    for m in mutations:
        state.apply_mutation(m)
    state.take_journal()


def session_specs(specs: list[ExportSpec], session_id: str) -> list[ExportSpec]:
    """The export specs of one session: ``{session_id}`` in a target replaced by the session's id."""
    return [
        ExportSpec(s.format, s.target.replace(SESSION_PLACEHOLDER, session_id)) if s.target else s
        for s in specs
    ]


def check_export_targets(specs: list[ExportSpec], *, out_dir: Path | None, sessions: int) -> None:
    """Refuse file exports that every session of a batch would write to the same file."""
    if sessions <= 1:
        return
    from igg.errors import Problem

    problems = []
    for s in specs:
        if s.format == "neo4j":
            continue  # each session exports under its own scope
        if s.target is None and out_dir is None:
            problems.append(
                Problem(
                    "--export",
                    f"{s}: every session would write {DEFAULT_FILES[s.format]} here; "
                    f"give --out DIR (each session writes DIR/<session_id>/"
                    f"{DEFAULT_FILES[s.format]}) or a target with "
                    f"{SESSION_PLACEHOLDER}, e.g. {s.format}:out/{SESSION_PLACEHOLDER}"
                    f".{Path(DEFAULT_FILES[s.format]).suffix.lstrip('.')}",
                )
            )
        elif s.target is not None and SESSION_PLACEHOLDER not in s.target:
            problems.append(
                Problem(
                    "--export",
                    f"{s}: every session would write to {s.target}; put {SESSION_PLACEHOLDER} in the target",
                )
            )
    if problems:
        raise RequestInvalid(problems, source="the command line")
