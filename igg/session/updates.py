"""A planned difference through a session (``Session.apply_update``, ``Session.keep_update_plan``): applied
as the next iteration, or kept whole as the plan waiting for review and applied whole when approved.

The difference is the act step's (``igg.act.difference``): a code map's ``--update``, a document build or
update, ``add_documents``, ``retract_document``. It is applied by the session's ``Actor`` with every rule, all
of it or nothing. Kept for review, each element is shown as the action it stands for, with its verdict as if
applied (``igg.session.plans.update_plan``); nothing can change the graph while the plan waits, so approving
it applies exactly what was shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from igg.act.difference import Difference
from igg.errors import Problem, SessionRefused
from igg.graph.built import Unkept, built
from igg.graph.journal import Mutation
from igg.graph.state import GraphState
from igg.models.verdicts import Verdict
from igg.record.steps import PlanPending, ReviewPlan, UpdateStep
from igg.session.plans import approved_update, update_plan

Session = Any
"""A ``igg.session.session.Session`` (not imported: the session module imports this one)."""


def apply(
    session: Session,
    difference: Difference,
    *,
    files: dict[str, Any],
    git_commit: str | None,
    reasoning: str,
    timings_ms: dict[str, float] | None,
    refused: list[tuple[str, Verdict]] | None = None,
) -> tuple[UpdateStep, Sequence[Mutation], bool]:
    """``difference`` applied to the session's graph: its step, its mutations, and whether the step keeps a
    snapshot (only a large change does: a small update loads from the last snapshot plus its mutations).
    ``SessionRefused`` (nothing changed) when an element breaks a rule; with ``refused``, what breaks one is
    left out instead, its verdict appended there (``Actor.apply_passing``: ``difference`` is taken apart),
    and a graph built from nothing so has its mutations read from it (``igg.graph.built``), not journaled."""
    iteration = session.last_iteration + 1
    state = session.state
    state.take_journal()
    state.iteration, state.chunk = iteration, None
    problems: list[Problem] = []
    unkept = Unkept() if refused is not None and not state.node_count else None
    if refused is None:
        counts, problems = session.actor.apply_difference(state, difference)
    else:
        if unkept is not None:
            state.journal = unkept
        try:
            applied = session.actor.apply_passing(state, difference)
        finally:
            state.journal = []
        counts = applied.counts
        refused.extend(applied.verdicts)
    if problems:
        raise SessionRefused(
            f"the update of session {session.session_id!r} breaks the session's schema or limits "
            f"({len(problems)} problem(s)); nothing was changed: " + "; ".join(str(p) for p in problems[:5]),
            session_id=session.session_id,
        )
    mutations = state.take_journal() if unkept is None else built(state, unkept)
    step = UpdateStep(
        iteration=iteration,
        git_commit=git_commit,
        files=files,
        changes=counts,
        reasoning=reasoning,
        timings_ms=timings_ms or {},
    )
    return step, mutations, keeps_snapshot(len(mutations), state)


def keeps_snapshot(mutations: int, state: GraphState, removed: int = 0) -> bool:
    """Whether an update step of ``mutations`` mutations keeps a snapshot of ``state`` after it: when it
    changed a fifth of the graph or more. ``removed``: the elements the step will remove from ``state``, when
    it has not yet been applied (the graph it is judged by is the one after it)."""
    return mutations * 5 > state.node_count + state.edge_count - removed


def keep_plan(
    session: Session, difference: Difference, *, files: dict[str, Any], reasoning: str, finish: bool
) -> PlanPending:
    """The plan waiting for review that ``difference`` makes (checked, nothing changed)."""
    tried = session.actor.try_difference(session.state, difference)
    plan = update_plan(session, difference, tried, reasoning=reasoning, files=files, finish=finish)
    return PlanPending(plan=plan)


def approve(session: Session, plan: ReviewPlan, actions: list[int] | None, note: str) -> UpdateStep:
    """The planned update ``plan`` approved: applied whole, as ``apply_update`` applies it (the plan waits
    again when that fails); a build's plan finishes the session."""
    difference, files, finish = approved_update(plan, actions)
    session.pending = None
    try:
        step: UpdateStep = session.apply_update(
            difference,
            files=files,
            git_commit=None,
            reasoning=f"{plan.reasoning} [approved{': ' if note else ''}{note}]",
        )
    except BaseException:
        session.pending = plan
        raise
    if finish and session.status != "finished":
        session.finish("finished", prune=False)
    session.review_note = None
    return step


__all__ = ["apply", "approve", "keep_plan", "keeps_snapshot"]
