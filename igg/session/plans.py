"""Review plans (``config.review``): a dry run's record kept as the plan waiting for review, and the actions a
decision approves of it."""

from __future__ import annotations

import re
from typing import Any

from igg.act.difference import Applied, Difference, NodeRef, difference_from_json, difference_to_json
from igg.errors import WorkspaceCode, WorkspaceError
from igg.graph.state import GraphState
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


def update_plan(
    session: Any, diff: Difference, tried: Applied, *, reasoning: str, files: dict[str, Any], finish: bool
) -> ReviewPlan:
    """The next plan of ``session`` (a ``Session``) a planned difference stands for: each element shown as the
    action it stands for (nodes by id and identity) with its verdict as if applied (``tried``), the difference
    kept whole."""
    state: GraphState = session.state
    actions = [_shown(state, diff, where) for where, _ in tried.verdicts]
    verdicts = [v.to_dict() for _, v in tried.verdicts]
    accepted = sum(1 for _, v in tried.verdicts if v.accepted)
    return ReviewPlan(
        plan_id=session.plans + 1,
        iteration=session.last_iteration + 1,
        reasoning=reasoning,
        actions=actions,
        verdicts=verdicts,
        accepted=accepted,
        rejected=len(verdicts) - accepted,
        update={"difference": difference_to_json(diff), "files": files, "finish": finish},
    )


def approved_update(plan: ReviewPlan, actions: list[int] | None) -> tuple[Difference, dict[str, Any], bool]:
    """What approving the planned update ``plan`` applies: its difference, the files its step keeps, and
    whether it finishes the session; ``WorkspaceError`` (INVALID_ARGUMENTS) when only some actions are
    chosen."""
    if actions is not None and sorted(set(actions)) != list(range(len(plan.actions))):
        raise WorkspaceError(
            WorkspaceCode.INVALID_ARGUMENTS,
            f"plan {plan.plan_id} is a planned update: it applies whole or not at all (a part of it would "
            "leave facts without the sources the rest records); approve it without choosing actions, or "
            "reject it",
        )
    update = plan.update or {}
    return (
        difference_from_json(update.get("difference") or {}),
        dict(update.get("files") or {}),
        bool(update.get("finish")),
    )


_WHERE = re.compile(r"(\w+)\[(\d+)\]")


def _ref(state: GraphState, diff: Difference, ref: NodeRef) -> dict[str, Any]:
    """A node as a reference a person reads: an existing one by id and identity, a new one by identity."""
    if isinstance(ref, int):
        label, props = diff.add_nodes[ref]
        return dict(props) if state.identity(label, props) is None else _identity(state, label, props)
    data = state.nodes.get(ref)
    return {"id": ref, **(_identity(state, data["type"], data["properties"]) if data else {})}


def _identity(state: GraphState, label: str, props: dict[str, Any]) -> dict[str, Any]:
    keys = state.schema.identity_keys.get(label) or ()
    return {k: props[k] for k in keys if k in props} or dict(props)


def _edge(state: GraphState, edge: str) -> dict[str, Any]:
    if not state.has_edge(edge):
        return {"id": edge}
    source, target, data = state.edge_ends(edge)
    return {
        "label": data["type"],
        "from": _ref(state, Difference(), source),
        "to": _ref(state, Difference(), target),
    }


def _shown(state: GraphState, diff: Difference, where: str) -> dict[str, Any]:
    """The action the element ``where`` (``add_nodes[3]``...) of ``diff`` stands for, with the documents its
    fact will record as its sources when the difference records any."""
    found = _WHERE.fullmatch(where)
    kind, i = (found.group(1), int(found.group(2))) if found else ("", 0)
    shown = _action(state, diff, kind, i)
    key: Any = None
    if kind == "set_properties":
        key = diff.set_properties[i][0]
    elif kind == "add_nodes":
        key = i
    elif kind == "set_edge_properties":
        key = diff.set_edge_properties[i][0]
    elif kind == "add_edges":
        key = diff.add_edges[i]
    provenance = (diff.edge_provenance if "edge" in kind else diff.node_provenance).get(key) or {}
    return shown | ({"documents": provenance["documents"]} if "documents" in provenance else {})


def _action(state: GraphState, diff: Difference, kind: str, i: int) -> dict[str, Any]:
    if kind == "remove_nodes":
        return {"type": "DELETE_NODE", "node": _ref(state, diff, diff.remove_nodes[i])}
    if kind == "set_properties":
        node, props, gone = diff.set_properties[i]
        return {"type": "UPDATE_NODE", "node": _ref(state, diff, node), "properties": props, "remove": gone}
    if kind == "add_nodes":
        label, props = diff.add_nodes[i]
        return {"type": "ADD_NODE", "label": label, "properties": props}
    if kind == "remove_edges":
        return {"type": "DELETE_EDGE", **_edge(state, diff.remove_edges[i])}
    if kind == "set_edge_properties":
        edge, props = diff.set_edge_properties[i]
        return {"type": "UPDATE_EDGE", **_edge(state, edge), "properties": props}
    if kind == "add_edges":
        source, label, target = entry = diff.add_edges[i]
        shown: dict[str, Any] = {"type": "ADD_EDGE", "label": label}
        shown |= {"from": _ref(state, diff, source), "to": _ref(state, diff, target)}
        sites = diff.edge_properties.get(entry)
        return shown | ({"properties": sites} if sites else {})
    return {"type": "?", "element": f"{kind}[{i}]"}


__all__ = ["approved", "approved_update", "plan_of", "update_plan"]
