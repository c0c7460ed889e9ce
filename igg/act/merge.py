"""MERGE_NODES, UPDATE_EDGE and QUERY: their rules and how they apply.

- ``MERGE_NODES`` (``node`` into ``into``) is ONE journaled mutation, ``NodesMerged`` (see
  ``igg.graph.node_merge.merge_nodes``): each edge of ``node`` moves onto ``into`` under its own id and
  provenance, or is collapsed (deleted) when it would repeat an edge ``into`` already has or become a
  forbidden self-loop; ``into`` gets the merged properties (provenance ``merged`` lists the merged ids)
  and ``node`` is deleted. Undo, replay, diff and explain read that one mutation ("merged X into Y").
- ``UPDATE_EDGE``: the edge is deleted and re-added under the same id with the new properties and its
  provenance stamped ``updated`` (``delete_edge`` + ``add_edge``); ``diff`` shows it as changed.
- ``QUERY`` changes nothing: the answer (``igg.observe.query``) becomes the verdict's message and is shown
  in the next observation under "Query answers".
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from igg.act.context import Answer, CheckContext, EdgeAt, Ends, Rejection
from igg.act.updates import update_problem, updated_properties
from igg.act.validtime import edge_properties, timed
from igg.graph.grounding import kept_evidence
from igg.graph.node_merge import merge_nodes
from igg.graph.state import GraphState
from igg.models.actions import MergeNodes, QueryAction, UpdateEdge, describe_errors
from igg.models.verdicts import ErrorCode as C
from igg.models.verdicts import Verdict
from igg.observe.query import QUERY_ADAPTER, RESPONSE_VISITS, QueryError, run_query


# ---- MERGE_NODES ----------------------------------------------------------------------------------------
def merged_properties(state: GraphState, source: str, target: str, prefer: str) -> dict[str, Any]:
    """``target``'s properties after merging ``source`` into it by the ``prefer`` rule."""
    keep, other = state.node_properties(target), state.node_properties(source)
    if prefer == "into":
        return {**other, **keep}
    identity = state.schema.identity_keys[state.node_type(target)]
    return {**keep, **{k: v for k, v in other.items() if k not in identity}}


def merge_valid(ctx: CheckContext, a: MergeNodes, ends: Ends) -> Rejection | None:
    """Two different nodes of one type; the one merged away is not a protected seed node."""
    state, source, target = ctx.state, ends.source, ends.target
    if source == target:
        return (
            C.INVALID_MERGE,
            f"node and into are the same node, {state.describe(source)} ({source}); nothing to merge.",
        )
    t_source, t_target = state.node_type(source), state.node_type(target)
    if t_source != t_target:
        return (
            C.INVALID_MERGE,
            f"{state.describe(source)} is a {t_source} and {state.describe(target)} a {t_target}; "
            "only nodes of the same type merge. Move its edges with ADD_EDGE/DELETE_EDGE instead.",
        )
    if source in state.protected and ctx.limits.protect_seed_nodes:
        return (
            C.PROTECTED_NODE,
            f"{state.describe(source)} comes from the seed graph and is protected "
            "(protect_seed_nodes is true); merge the other way round (into it).",
        )
    after = merged_properties(state, source, target, a.prefer)
    if len(after) > ctx.limits.max_properties:
        return (
            C.INVALID_PROPERTY,
            f"the merged node would carry {len(after)} properties; the limit is {ctx.limits.max_properties}.",
        )
    return None


def apply_merge(ctx: CheckContext, a: MergeNodes, ends: Ends, index: int) -> Verdict:
    """Merge (``igg.graph.node_merge.merge_nodes``: one ``NodesMerged`` in the journal) and say what
    moved."""
    state, source, target = ctx.state, ends.source, ends.target
    name, into = state.describe(source), state.describe(target)
    merge = merge_nodes(
        state,
        source,
        target,
        merged_properties(state, source, target, a.prefer),
        allow_self_loops=ctx.limits.self_loop_allowed,
    )
    ctx.deletions += 1
    before, after = merge.before, merge.after
    moved, collapsed = merge.moved, len(merge.edges) - merge.moved
    gained = sorted(k for k in after if k not in before)
    changed = sorted(k for k in before if after.get(k) != before[k])
    props = (f"; properties added: {', '.join(gained)}" if gained else "") + (
        f"; properties taken from the merged node: {', '.join(changed)}" if changed else ""
    )
    return Verdict(
        index,
        "MERGE_NODES",
        True,
        None,
        f"merged {name} ({source}) into {into} ({target}): "
        f"{moved} edge{'s' * (moved != 1)} moved, {collapsed} collapsed{props}",
        target,
    )


# ---- UPDATE_EDGE ----------------------------------------------------------------------------------------
def update_edge_valid(ctx: CheckContext, a: UpdateEdge, at: EdgeAt) -> Rejection | None:
    """Removed keys are valid; required attributes stay; the property count stays within the limit (the same
    check as UPDATE_NODE's, ``update_problem``)."""
    before = ctx.state.succ[at.source][at.target][at.edge]["properties"]
    return update_problem(ctx, a, kind="edge", element_type=a.label, before=before)


def apply_update_edge(ctx: CheckContext, a: UpdateEdge, at: EdgeAt, index: int) -> Verdict:
    """Re-add the edge under its id with the new properties (see the module docstring)."""
    state = ctx.state
    data = state.succ[at.source][at.target][at.edge]
    after, prov = updated_properties(data["properties"], a), data["provenance"]
    if timed(a):
        after.update(edge_properties(a))
    extra = ctx.provenance or {}
    if after == data["properties"] and all(prov.get(k) == v for k, v in extra.items()):
        return Verdict(
            index,
            "UPDATE_EDGE",
            True,
            None,
            f"{a.label} edge {at.edge} already has these properties; nothing changed",
            at.edge,
        )
    prov = {**prov, "updated": state.iteration, **extra}
    if ctx.evidence is not None:
        prov["evidence"] = kept_evidence(prov.get("evidence"), ctx.evidence)
    state.delete_edge(at.edge)
    state.add_edge(at.source, a.label, at.target, after, at.edge, prov)
    return Verdict(
        index,
        "UPDATE_EDGE",
        True,
        None,
        f"updated {a.label} edge {at.edge} ({at.source} -> {at.target})",
        at.edge,
    )


# ---- QUERY ----------------------------------------------------------------------------------------------
def query_answerable(ctx: CheckContext, a: QueryAction) -> Answer | Rejection:
    """The query reads as one of neighbours/path/find and can be answered: its ``Answer``."""
    try:
        query = QUERY_ADAPTER.validate_python(a.query)
    except ValidationError as exc:
        return C.INVALID_QUERY, f"query: {describe_errors(exc.errors(include_url=False))}."
    used = int(ctx.extra.get("query_visits", 0))
    budget = int(ctx.extra.get("query_budget", RESPONSE_VISITS))
    if used >= budget:
        return C.QUERY_BUDGET_EXHAUSTED, (
            f"the queries of this response have used their work ({budget} visits); "
            "ask again in your next response, or narrow the earlier queries"
        )
    try:
        answer = run_query(ctx.state, query, visits=budget - used)
        ctx.extra["query_visits"] = used + max(1, answer.visited)
        return Answer(answer.text)
    except QueryError as exc:
        code = C(exc.code) if exc.code in C.__members__ else C.INVALID_QUERY
        return code, f"query: {exc.message}"


def apply_query(ctx: CheckContext, a: QueryAction, answer: Answer, index: int) -> Verdict:
    """A read-only verdict whose message is the answer (shown in the next observation)."""
    return Verdict(index, "QUERY", True, None, answer.text, None)
