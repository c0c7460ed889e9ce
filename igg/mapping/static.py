"""The static pass of a fresh ``igg map-code`` (the code agent): the graph the linked model makes, planned as
ONE ``Difference`` from the empty graph (``igg.mapping.difference.plan_difference``, the plan ``--update``
makes against a stored graph) and applied by the act step with every rule as one step
(``Session.apply_update``), then the session finished.

No context is chunked, no observation is built, no response is read and no iteration runs: those exist for
agents that read text. The graph, its limits (``igg.mapping.limits``: a graph over them is refused before any
session is stored), the stored session and the run's summary are what the loop gave (one step, its changes
counted as the actions accepted). An element the session's schema refuses (a copied schema that types a
property otherwise than a code map gives it) is left out with its reason, with the edges it would have ended,
and the rest is applied: one refused element never fails the map. The LLM and hybrid agents keep the loop,
and so does ``--resume`` of a session the loop began.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from igg.act.difference import Difference
from igg.agents.code.mapping import SchemaFit
from igg.codemap.link import Relation
from igg.mapping.difference import plan_difference
from igg.mapping.prepare import CodeMap
from igg.models.verdicts import ErrorCode, Verdict
from igg.persistence import Recorder
from igg.record.logs import get_logger
from igg.record.records import Event, RunResult
from igg.record.steps import UpdateStep

if TYPE_CHECKING:
    from igg.session import Session

log = get_logger("igg.code")

EventHandler = Callable[[Event], object]


def static_map(
    codemap: CodeMap,
    fit: SchemaFit,
    *,
    recorders: Sequence[Recorder] = (),
    on_event: EventHandler | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[RunResult, dict[str, Any]]:
    """The fresh static map of ``codemap`` (``fit``: its model placed in the request's schema), kept by
    ``recorders``; the run's result and the static analysis' summary (files, symbols, relations, what was
    left out and why). ``on_event`` sees ``run_started`` and ``run_finished``."""
    from igg.session import Session

    started = clock()
    session = Session.open(codemap.request, recorders=recorders, status="running")
    state = session.state
    session.begin()
    _emit(
        on_event,
        Event(
            kind="run_started",
            session_id=session.session_id,
            data={
                "goal": codemap.request.goal_prompt,
                "start_iteration": 1,
                "max_iterations": session.config.max_iterations,
                "chunks": 0,
                "nodes": state.node_count,
                "edges": state.edge_count,
                "resumed": False,
            },
        ),
    )
    skipped = Counter(f"left out: {why}" for why in fit.left_out.values()) + _unplaced(fit)
    analysis = {
        "files": len(fit.model.files),
        "symbols": len(fit.model.symbols),
        "relations": fit.model.relation_count(),
    }
    step = _apply(session, codemap, fit, skipped)
    result = session.finish("finished", steps=[step], elapsed_ms=(clock() - started) * 1000)
    _emit(on_event, Event(kind="run_finished", session_id=session.session_id, data=result.summary()))
    log.info("code_map_applied", session_id=session.session_id, **step.changes)
    return result, {**analysis, "skipped": {why: n for why, n in skipped.items() if n}}


def _apply(session: Session, codemap: CodeMap, fit: SchemaFit, skipped: Counter[str]) -> UpdateStep:
    """The planned graph applied as the session's one step. The facts, the linked model and the fit are let
    go of once the difference is planned, and the difference on return, before the finalize step snapshots
    the graph: the graph reuses their memory."""
    # the limit check planned the graph from the empty one (``CodeMap.plan``): a session that starts empty
    # takes that plan as it is, any other (seeded) plans its own
    diff = codemap.plan if codemap.plan is not None and not session.state.node_count else None
    codemap.plan = None
    if diff is None:
        diff = plan_difference(session.state, fit)
    files = {
        "read": len(codemap.walk.files),
        "partial": len(codemap.partial_files()),
        "skipped": len(codemap.walk.skipped),
    }
    fit.let_go()
    codemap.let_go()
    reasoning = _reasoning(codemap, diff)
    # an element the schema refuses is left out with its reason (and the edges it would end), the rest applied
    # in the same pass, which takes the difference apart as it goes; no snapshot with the step: the finalize
    # step right after it keeps one (of the graph pruned)
    refused: list[tuple[str, Verdict]] = []
    step = session.apply_update(
        diff, files=files, git_commit=codemap.git_commit, reasoning=reasoning, snapshot=False, refused=refused
    )
    _count_refused(refused, skipped)
    return step


def _unplaced(fit: SchemaFit) -> Counter[str]:
    """The relations that make no edge in the session's schema, by why (as the loop's code agent counts
    them): an end it has no node type for, or no edge type or pattern for the two ends."""
    out: Counter[str] = Counter()
    lifted: set[Relation] = set()
    for plan in fit.model.files:
        for r in plan.relations:
            up = fit.lifted(r)
            fresh = up is not None and up not in lifted
            if up is not None:
                lifted.add(up)
            for rel in (r, up) if fresh else (r,):
                assert rel is not None
                if fit.edge_label(rel) is not None:
                    continue
                if rel.source in fit.placed and rel.target in fit.placed:
                    out[f"no edge type or pattern for {rel.label}"] += 1
                else:
                    out["edge endpoint not in the schema"] += 1
    return out


def _reasoning(codemap: CodeMap, diff: Difference) -> str:
    """What the step says it did."""
    commit = f" (git {codemap.git_commit})" if codemap.git_commit else ""
    return (
        f"Mapped {len(codemap.walk.files)} files{commit}: {len(diff.add_nodes)} nodes and "
        f"{len(diff.add_edges)} edges, planned from the static analysis and applied as one step."
    )


def _count_refused(refused: list[tuple[str, Verdict]], skipped: Counter[str]) -> None:
    """Count the elements the act step refused in ``skipped`` as the loop's code agent counts them: by code,
    and an edge with a refused end (the graph was empty: an added edge ends only at added nodes) as such."""
    nodes = edges = 0
    for where, verdict in refused:
        if where.startswith("add_nodes["):
            nodes += 1
        else:
            edges += 1
        if where.startswith("add_edges[") and verdict.code == ErrorCode.NODE_NOT_FOUND:
            skipped["edge endpoint refused or over the limit"] += 1
        else:
            skipped[f"rejected {verdict.code!s}"] += 1
    if refused:
        log.info("code_map_elements_refused", nodes=nodes, edges=edges)


def _emit(on_event: EventHandler | None, event: Event) -> None:
    if on_event is not None:
        on_event(event)


__all__ = ["static_map"]
