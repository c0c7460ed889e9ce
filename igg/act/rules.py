"""Validation rules: one small function per check, each owning its error code.

A rule takes the check context, the action and the ``Plan`` being built (resolved node ids), and returns
``None`` when the action passes or a ``(code, message)`` rejection. Rules run in the order of their
action's tuple in ``RULES``; the first rejection wins. Messages name the offending value, the rule, and
what would pass, so a model can correct itself.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from igg.act.duplicates import near_duplicate, normalize_node_identity, normalize_update_identity
from igg.act.merge import edge_to_update, merge_valid, query_answerable, update_edge_valid
from igg.act.typed import properties_typed, update_properties_typed
from igg.graph.identity import normalize_reference
from igg.graph.state import GraphState
from igg.models.actions import (
    AddEdge,
    AddNode,
    DeleteEdge,
    DeleteNode,
    MergeNodes,
    QueryAction,
    UpdateEdge,
    UpdateNode,
)
from igg.models.common import property_key_problem, property_value_problem
from igg.models.request import Constraints
from igg.models.schema import CompiledSchema
from igg.models.verdicts import ErrorCode as C

Rejection = tuple[C, str]


@dataclass(slots=True)
class Plan:
    """What the rules resolved for one action: the nodes and edge it touches."""

    node: str | None = None
    source: str | None = None
    target: str | None = None
    edge: str | None = None
    note: str | None = None
    """Said after the accepted verdict's message (e.g. a POSSIBLE_DUPLICATE warning)."""
    warning: C | None = None
    """The accepted verdict's warning code."""
    distinct_from: list[str] | None = None
    """Ids of the near-duplicates a ``"distinct": true`` ADD_NODE was accepted past (kept in provenance)."""


@dataclass(kw_only=True)
class CheckContext:
    """What rules read: the state, the compiled schema, the limits, and per-response counters."""

    state: GraphState
    schema: CompiledSchema
    limits: Constraints
    deletions: int = 0
    """Delete actions accepted so far in this response."""
    extra: dict[str, Any] = field(default_factory=dict)


Rule = Callable[[CheckContext, Any, Plan], Rejection | None]


def _choices(values: Any) -> str:
    return ", ".join(values) if values else "(none)"


def _did_you_mean(value: str, allowed: Any) -> str:
    close = difflib.get_close_matches(value, list(allowed), n=1, cutoff=0.6)
    if not close and isinstance(value, str):
        close = [a for a in allowed if a.lower() == value.lower()]
    return f" Did you mean {close[0]!r}?" if close else ""


# ---- types ------------------------------------------------------------------------------------------
def node_type_known(ctx: CheckContext, a: AddNode, plan: Plan) -> Rejection | None:
    if a.label in ctx.schema.node_types:
        return None
    return (C.UNKNOWN_NODE_TYPE, f"node type {a.label!r} is not in the schema; allowed node types: "
            f"{_choices(ctx.schema.node_type_list)}.{_did_you_mean(a.label, ctx.schema.node_type_list)}")


def edge_type_known(ctx: CheckContext, a: AddEdge | DeleteEdge, plan: Plan) -> Rejection | None:
    if a.label in ctx.schema.edge_types:
        return None
    return (C.UNKNOWN_EDGE_TYPE, f"edge type {a.label!r} is not in the schema; allowed edge types: "
            f"{_choices(ctx.schema.edge_type_list)}.{_did_you_mean(a.label, ctx.schema.edge_type_list)}")


# ---- properties -------------------------------------------------------------------------------------
def properties_valid(ctx: CheckContext, a: Any, plan: Plan) -> Rejection | None:
    props = a.properties
    if not props:
        return None
    limit = ctx.limits.max_property_length
    good = _GOOD_KEYS
    for key, value in props.items():
        if key in good and value.__class__ is str and len(value) <= limit:
            continue  # the common case, without the general checks
        problem = property_key_problem(key) or property_value_problem(key, value, limit)
        if problem:
            return C.INVALID_PROPERTY, problem + "."
        if len(good) < 10_000:
            good.add(key)
    if len(props) > ctx.limits.max_properties:
        return C.INVALID_PROPERTY, f"{len(props)} properties given; the limit is {ctx.limits.max_properties}."
    return None


_GOOD_KEYS: set[str] = set()
"""Property keys already found valid (bounded), so the key check runs once per distinct key."""


def _missing(ctx: CheckContext, element_type: str, props: dict[str, Any]) -> list[str]:
    missing: list[str] = []
    for k in ctx.schema.required.get(element_type, ()):
        v = props.get(k)
        if v is None or v == "":
            missing.append(k)
    return missing


def node_required_present(ctx: CheckContext, a: AddNode, plan: Plan) -> Rejection | None:
    missing = _missing(ctx, a.label, a.properties)
    if not missing:
        return None
    required = ctx.schema.required[a.label]
    return (C.MISSING_REQUIRED_ATTRIBUTE, f"{a.label} requires {_choices(required)}; missing or empty: "
            f"{_choices(missing)}. Add {'it' if len(missing) == 1 else 'them'} to 'properties'.")


def edge_required_present(ctx: CheckContext, a: AddEdge, plan: Plan) -> Rejection | None:
    missing = _missing(ctx, a.label, a.properties)
    if not missing:
        return None
    return (C.MISSING_REQUIRED_ATTRIBUTE, f"edge type {a.label} requires {_choices(ctx.schema.required[a.label])}; "
            f"missing or empty: {_choices(missing)}.")


# ---- identity ---------------------------------------------------------------------------------------
def identity_unique(ctx: CheckContext, a: AddNode, plan: Plan) -> Rejection | None:
    existing = ctx.state.find_identity(a.label, ctx.state.identity(a.label, a.properties) or ())
    if existing is None:
        return None
    have = ctx.state.node_properties(existing)
    diff = [k for k, v in a.properties.items() if have.get(k) != v]
    name = ctx.state.describe(existing)
    if not diff:
        return (C.DUPLICATE_NODE, f"{name} already exists ({existing}) with these properties; nothing to add. "
                "Refer to it in edges instead of adding it again.")
    shown = ", ".join(f"{k}: existing {have.get(k)!r}, proposed {a.properties[k]!r}" for k in diff[:5])
    return (C.DUPLICATE_NODE, f"{name} already exists ({existing}) and differs in {shown}. Re-adding never "
            "overwrites; use UPDATE_NODE to change its properties.")


# ---- limits -----------------------------------------------------------------------------------------
def node_capacity(ctx: CheckContext, a: AddNode, plan: Plan) -> Rejection | None:
    if ctx.state.node_count < ctx.limits.max_nodes:
        return None
    return (C.MAX_NODES_EXCEEDED, f"the graph already holds max_nodes={ctx.limits.max_nodes} nodes; no node can "
            "be added. Add edges between existing nodes, or finish.")


def edge_capacity(ctx: CheckContext, a: AddEdge, plan: Plan) -> Rejection | None:
    if ctx.state.edge_count < ctx.limits.max_edges:
        return None
    return (C.MAX_EDGES_EXCEEDED, f"the graph already holds max_edges={ctx.limits.max_edges} edges; no edge can "
            "be added. Finish, or delete a less important edge first.")


# ---- references -------------------------------------------------------------------------------------
def resolve(ctx: CheckContext, ref: dict[str, Any], role: str) -> tuple[str | None, Rejection | None]:
    """Resolve a node reference to one id, or explain why it cannot be."""
    label = ref.get("label")
    if label is not None and label not in ctx.schema.node_types:
        return None, (C.UNKNOWN_NODE_TYPE, f"{role}: reference names node type {label!r}, which is not in the "
                      f"schema; allowed: {_choices(ctx.schema.node_type_list)}.")
    ref = normalize_reference(ref, ctx.schema.types_by_identity_key)
    found = ctx.state.find_nodes(ref)
    if len(found) == 1:
        return found[0], None
    shown = _ref_text(ref)
    if not found:
        close = ctx.state.close_matches(ref)
        hint = f" Close matches: {'; '.join(close)}." if close else " No node has a similar name."
        return None, (C.NODE_NOT_FOUND, f"{role}: no node matches {shown}.{hint} Add the node first "
                      "(an ADD_NODE earlier in the same response counts) or fix the reference.")
    names = "; ".join(f"{ctx.state.describe(n)} ({n})" for n in found[:5])
    more = f" and {len(found) - 5} more" if len(found) > 5 else ""
    types = sorted({ctx.state.node_type(n) for n in found})
    how = (f"add \"label\" (one of {', '.join(types)})" if len(types) > 1
           else "add more identifying properties (e.g. " + ", ".join(ctx.schema.identity_keys[types[0]]) + ")")
    return None, (C.AMBIGUOUS_REFERENCE, f"{role}: {shown} matches {len(found)} nodes: {names}{more}. To pick one, "
                  f"{how} to the reference.")


def _ref_text(ref: dict[str, Any]) -> str:
    text = "{" + ", ".join(f"{k!r}: {v!r}" for k, v in ref.items()) + "}"
    return text if len(text) <= 200 else text[:197] + "..."


def source_resolves(ctx: CheckContext, a: AddEdge | DeleteEdge, plan: Plan) -> Rejection | None:
    plan.source, rejection = resolve(ctx, a.from_, "from")
    return rejection


def target_resolves(ctx: CheckContext, a: AddEdge | DeleteEdge, plan: Plan) -> Rejection | None:
    plan.target, rejection = resolve(ctx, a.to, "to")
    return rejection


def node_resolves(ctx: CheckContext, a: UpdateNode | DeleteNode, plan: Plan) -> Rejection | None:
    plan.node, rejection = resolve(ctx, a.node, "node")
    return rejection


def merge_source_resolves(ctx: CheckContext, a: MergeNodes, plan: Plan) -> Rejection | None:
    plan.source, rejection = resolve(ctx, a.node, "node")
    return rejection


def merge_target_resolves(ctx: CheckContext, a: MergeNodes, plan: Plan) -> Rejection | None:
    plan.target, rejection = resolve(ctx, a.into, "into")
    return rejection


# ---- edges ------------------------------------------------------------------------------------------
def self_loop_allowed(ctx: CheckContext, a: AddEdge, plan: Plan) -> Rejection | None:
    if plan.source != plan.target or ctx.limits.allow_self_loops:
        return None
    return (C.SELF_LOOP_FORBIDDEN, f"{a.label} from {ctx.state.describe(plan.source)} to itself: self-loops are "  # type: ignore[arg-type]
            "not allowed (allow_self_loops is false). Connect two different nodes.")


def pattern_allowed(ctx: CheckContext, a: AddEdge, plan: Plan) -> Rejection | None:
    allowed = ctx.schema.patterns.get(a.label)
    if allowed is None:
        return None
    pair = (ctx.state.node_type(plan.source), ctx.state.node_type(plan.target))  # type: ignore[arg-type]
    if pair in allowed:
        return None
    shown = ", ".join(f"{f}-{a.label}->{t}" for f, t in sorted(allowed))
    return (C.EDGE_PATTERN_FORBIDDEN, f"{pair[0]}-{a.label}->{pair[1]} is not an allowed pattern; {a.label} may "
            f"only connect: {shown}.")


def edge_unique(ctx: CheckContext, a: AddEdge, plan: Plan) -> Rejection | None:
    existing = ctx.state.edge_between(plan.source, a.label, plan.target)  # type: ignore[arg-type]
    if existing is None:
        return None
    return (C.DUPLICATE_EDGE, f"{ctx.state.describe(plan.source)} -{a.label}-> "  # type: ignore[arg-type]
            f"{ctx.state.describe(plan.target)} already exists ({existing}); nothing to add.")  # type: ignore[arg-type]


def edge_exists(ctx: CheckContext, a: DeleteEdge, plan: Plan) -> Rejection | None:
    plan.edge = ctx.state.edge_between(plan.source, a.label, plan.target)  # type: ignore[arg-type]
    if plan.edge is not None:
        return None
    return (C.EDGE_NOT_FOUND, f"there is no {a.label} edge from {ctx.state.describe(plan.source)} to "  # type: ignore[arg-type]
            f"{ctx.state.describe(plan.target)}; nothing to delete.")  # type: ignore[arg-type]


# ---- updates ----------------------------------------------------------------------------------------
def update_keeps_required(ctx: CheckContext, a: UpdateNode, plan: Plan) -> Rejection | None:
    for key in a.remove:
        problem = property_key_problem(key)
        if problem:
            return C.INVALID_PROPERTY, f"remove: {problem}."
    t = ctx.state.node_type(plan.node)  # type: ignore[arg-type]
    after = {**ctx.state.node_properties(plan.node), **a.properties}  # type: ignore[arg-type]
    for key in a.remove:
        after.pop(key, None)
    missing = _missing(ctx, t, after)
    if missing:
        return (C.MISSING_REQUIRED_ATTRIBUTE, f"{t} requires {_choices(ctx.schema.required[t])}; this update would "
                f"leave {_choices(missing)} missing or empty.")
    if len(after) > ctx.limits.max_properties:
        return C.INVALID_PROPERTY, f"the node would carry {len(after)} properties; the limit is {ctx.limits.max_properties}."
    return None


def update_keeps_identity_unique(ctx: CheckContext, a: UpdateNode, plan: Plan) -> Rejection | None:
    t = ctx.state.node_type(plan.node)  # type: ignore[arg-type]
    keys = ctx.schema.identity_keys[t]
    if not any(k in a.properties for k in keys):
        return None
    after = {**ctx.state.node_properties(plan.node), **a.properties}  # type: ignore[arg-type]
    other = ctx.state.find_identity(t, ctx.state.identity(t, after) or ())
    if other is None or other == plan.node:
        return None
    return (C.DUPLICATE_NODE, f"renaming {ctx.state.describe(plan.node)} would collide with "  # type: ignore[arg-type]
            f"{ctx.state.describe(other)} ({other}); identities ({', '.join(keys)}) must stay unique.")


# ---- deletions --------------------------------------------------------------------------------------
def deletion_allowed(ctx: CheckContext, a: Any, plan: Plan) -> Rejection | None:
    if not ctx.limits.allow_deletions:
        return C.DELETION_FORBIDDEN, "deletions are not allowed in this session (allow_deletions is false)."
    if ctx.deletions >= ctx.limits.max_deletions_per_iteration:
        return (C.DELETION_LIMIT_EXCEEDED, f"at most {ctx.limits.max_deletions_per_iteration} deletions are "
                "accepted per response; this one was not applied. Send it again next turn if it is needed.")
    return None


def node_not_protected(ctx: CheckContext, a: DeleteNode, plan: Plan) -> Rejection | None:
    if plan.node not in ctx.state.protected or not ctx.limits.protect_seed_nodes:
        return None
    return (C.PROTECTED_NODE, f"{ctx.state.describe(plan.node)} comes from the seed graph and is protected "
            "(protect_seed_nodes is true); it cannot be deleted.")


RULES: dict[type, tuple[Rule, ...]] = {
    AddNode: (node_type_known, normalize_node_identity, properties_valid, properties_typed, node_required_present,
              identity_unique, near_duplicate, node_capacity),
    AddEdge: (edge_type_known, properties_valid, properties_typed, edge_required_present, source_resolves, target_resolves,
              self_loop_allowed, pattern_allowed, edge_unique, edge_capacity),
    UpdateNode: (node_resolves, normalize_update_identity, properties_valid, update_properties_typed,
                 update_keeps_required,
                 update_keeps_identity_unique),
    DeleteNode: (deletion_allowed, node_resolves, node_not_protected),
    DeleteEdge: (deletion_allowed, edge_type_known, source_resolves, target_resolves, edge_exists),
    UpdateEdge: (edge_type_known, properties_valid, properties_typed, source_resolves, target_resolves,
                 edge_to_update, update_edge_valid),
    MergeNodes: (deletion_allowed, merge_source_resolves, merge_target_resolves, merge_valid),
    QueryAction: (query_answerable,),
}
"""The checks of each action type, in the order they run."""
