"""Review plans (``config.review``): a dry run's record kept as the plan waiting for review, and the actions a
decision approves of it."""

from __future__ import annotations

from typing import Any

from igg.errors import WorkspaceCode, WorkspaceError
from igg.models.actions import ParsedResponse, read_response
from igg.record.records import IterationRecord
from igg.record.steps import ReviewPlan


def plan_of(record: IterationRecord, plan_id: int) -> ReviewPlan:
    """The plan ``plan_id`` a dry run's ``record`` stands for: its actions, their verdicts as if applied,
    and where in the run it was proposed."""
    return ReviewPlan(
        plan_id=plan_id,
        iteration=record.iteration,
        reasoning=record.reasoning,
        actions=list(record.actions),
        verdicts=[v.to_dict() for v in record.verdicts],
        accepted=record.accepted,
        rejected=record.rejected,
        finished=record.finished,
        usage=record.usage,
        chunk=record.chunk,
        chunk_cursor=record.chunk_cursor,
    )


def approved(plan: ReviewPlan, actions: list[int] | None, note: str) -> tuple[list[Any], ParsedResponse]:
    """The actions an approval applies (all of the plan's, or the chosen indices, distinct and in the plan's
    order: the verdicts shown hold for that order) and the response they make; ``WorkspaceError``
    (INVALID_ARGUMENTS) for indices that are not the plan's or not in its order."""
    chosen = list(range(len(plan.actions))) if actions is None else list(actions)
    bad = [i for i in chosen if not 0 <= i < len(plan.actions)]
    if bad:
        raise WorkspaceError(
            WorkspaceCode.INVALID_ARGUMENTS,
            f"actions {bad} are not in plan {plan.plan_id} (it "
            f"has {len(plan.actions)} actions, 0..{len(plan.actions) - 1})",
        )
    if chosen != sorted(set(chosen)):
        raise WorkspaceError(
            WorkspaceCode.INVALID_ARGUMENTS,
            f"actions {chosen}: approve distinct indices in "
            f"the plan's order (e.g. {sorted(set(chosen))}); the verdicts shown are for that order",
        )
    kept = [plan.actions[i] for i in chosen]
    reasoning = plan.reasoning + (
        f" [approved {len(kept)} of {len(plan.actions)}" + (f": {note}]" if note else "]")
    )
    return kept, read_response({"reasoning": reasoning, "actions": kept, "finished": plan.finished})


__all__ = ["approved", "plan_of"]
