"""Validation rules: one small function per check, each owning its error code.

Each action model class has its ``Checks`` (``RULES``), run in order, the first rejection winning:

1. ``before``: checks of the action alone, ``(ctx, action) -> Rejection | None``;
2. ``resolve``: what the action refers to, as a typed value, ``(ctx, action) -> R | Rejection`` (an edge's
   ``Ends``, an existing edge's ``EdgeAt``, a node id, the ``NewNode`` an ADD_NODE becomes, a query's
   ``Answer``);
3. ``after``: checks that need that value, ``(ctx, action, resolved) -> Rejection | None`` (extra rules,
   e.g. the code agents' grounding rule, run here after the built-in ones).

The resolved value is what the apply step (``igg.act.apply``) acts on. A rejection is ``(code, message)``;
messages name the offending value, the rule, and what would pass, so a model can correct itself.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from typing import Any, Generic, TypeAlias, TypeVar

from igg.act.context import Answer, CheckContext, EdgeAt, Ends, NewNode, Rejection
from igg.act.duplicates import near_duplicate, normalize_node_identity, normalize_update_identity
from igg.act.merge import merge_valid, query_answerable, update_edge_valid
from igg.act.typed import properties_typed, update_properties_typed
from igg.act.updates import choices, missing_required, update_problem
from igg.act.validtime import (
    edge_conflict,
    edge_time_valid,
    edge_update_time_valid,
    node_time_valid,
    node_update_conflict,
    node_update_time_valid,
)
from igg.graph.identity import normalize_reference
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
from igg.models.validtime import TIME_KEYS
from igg.models.verdicts import ErrorCode as C

A = TypeVar("A")
"""An action model class."""
R = TypeVar("R")
"""What an action resolves to."""


Check: TypeAlias = Callable[[CheckContext, A], "Rejection | None"]
"""A check of the action alone."""
Resolver: TypeAlias = Callable[[CheckContext, A], "R | Rejection"]
"""Finds what the action refers to (typed), or rejects it."""
Rule: TypeAlias = Callable[[CheckContext, A, R], "Rejection | None"]
"""A check of the action and what it resolved to (extra rules have this shape)."""


@dataclass(frozen=True, slots=True)
class Checks(Generic[A, R]):
    """The checks of one action class, in the order they run (see the module docstring)."""

    before: tuple[Check[A], ...]
    resolve: Resolver[A, R]
    after: tuple[Rule[A, R], ...] = ()

    def run(self, ctx: CheckContext, action: A) -> R | Rejection:
        """The resolved value when every check passes, else the first rejection (a tuple)."""
        for check in self.before:
            rejection = check(ctx, action)
            if rejection is not None:
                return rejection
        resolved = self.resolve(ctx, action)
        if isinstance(resolved, tuple):
            return resolved
        for rule in self.after:
            rejection = rule(ctx, action, resolved)
            if rejection is not None:
                return rejection
        return resolved

    def run_resolved(self, ctx: CheckContext, action: A, resolved: R | Rejection) -> R | Rejection:
        """The ``before`` and ``after`` checks around a value resolved some other way (a seed edge's ends, a
        planned difference's ids), or the ``before`` checks and then that resolution's own rejection."""
        for check in self.before:
            rejection = check(ctx, action)
            if rejection is not None:
                return rejection
        if isinstance(resolved, tuple):
            return resolved
        for rule in self.after:
            rejection = rule(ctx, action, resolved)
            if rejection is not None:
                return rejection
        return resolved

    def without(self, idle: Collection[object]) -> Checks[A, R]:
        """These checks less the ``idle`` ones (checks that cannot reject under a schema: ``idle_checks``)."""
        return Checks(
            tuple(c for c in self.before if c not in idle),
            self.resolve,
            tuple(r for r in self.after if r not in idle),
        )

    def with_rules(self, extra: Iterable[Rule[A, R]]) -> Checks[A, R]:
        """These checks with ``extra`` rules run after the built-in ones."""
        rules = tuple(extra)
        return Checks(self.before, self.resolve, (*self.after, *rules)) if rules else self


def rejected(value: object) -> bool:
    """Whether a ``Checks.run`` result is a rejection (a ``(code, message)`` tuple)."""
    return value.__class__ is tuple


def _did_you_mean(value: str, allowed: Any) -> str:
    close = difflib.get_close_matches(value, list(allowed), n=1, cutoff=0.6)
    if not close and isinstance(value, str):
        close = [a for a in allowed if a.lower() == value.lower()]
    return f" Did you mean {close[0]!r}?" if close else ""


# ---- types ------------------------------------------------------------------------------------------
def node_type_known(ctx: CheckContext, a: AddNode) -> Rejection | None:
    if a.label in ctx.schema.node_types:
        return None
    return (
        C.UNKNOWN_NODE_TYPE,
        f"node type {a.label!r} is not in the schema; allowed node types: "
        f"{choices(ctx.schema.node_type_list)}.{_did_you_mean(a.label, ctx.schema.node_type_list)}",
    )


def edge_type_known(ctx: CheckContext, a: AddEdge | DeleteEdge | UpdateEdge) -> Rejection | None:
    if a.label in ctx.schema.edge_types:
        return None
    return (
        C.UNKNOWN_EDGE_TYPE,
        f"edge type {a.label!r} is not in the schema; allowed edge types: "
        f"{choices(ctx.schema.edge_type_list)}.{_did_you_mean(a.label, ctx.schema.edge_type_list)}",
    )


# ---- properties -------------------------------------------------------------------------------------
def properties_valid(ctx: CheckContext, a: AddNode | AddEdge | UpdateNode | UpdateEdge) -> Rejection | None:
    props = a.properties
    if not props:
        return None
    limit = ctx.limits.max_property_length
    good = _GOOD_KEYS
    for key, value in props.items():
        if key in good and value.__class__ is str and len(value) <= limit:
            continue  # the common case, without the general checks
        if ctx.planned and key in TIME_KEYS:
            continue  # a planned difference's stored valid time (``CheckContext.planned``)
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


def node_required_present(ctx: CheckContext, a: AddNode) -> Rejection | None:
    if a.label not in ctx.schema.required:
        return None
    missing = missing_required(ctx, a.label, a.properties)
    if not missing:
        return None
    required = ctx.schema.required[a.label]
    return (
        C.MISSING_REQUIRED_ATTRIBUTE,
        f"{a.label} requires {choices(required)}; missing or empty: "
        f"{choices(missing)}. Add {'it' if len(missing) == 1 else 'them'} to 'properties'.",
    )


def edge_required_present(ctx: CheckContext, a: AddEdge) -> Rejection | None:
    if a.label not in ctx.schema.required:
        return None
    missing = missing_required(ctx, a.label, a.properties)
    if not missing:
        return None
    return (
        C.MISSING_REQUIRED_ATTRIBUTE,
        f"edge type {a.label} requires {choices(ctx.schema.required[a.label])}; "
        f"missing or empty: {choices(missing)}.",
    )


# ---- identity ---------------------------------------------------------------------------------------
def identity_unique(ctx: CheckContext, a: AddNode) -> Rejection | None:
    state = ctx.state
    existing = state.find_identity(a.label, state.identity(a.label, a.properties) or ())
    if existing is None:
        return None
    have = state.node_properties(existing)
    diff = [k for k, v in a.properties.items() if have.get(k) != v]
    name = state.describe(existing)
    if not diff:
        return (
            C.DUPLICATE_NODE,
            f"{name} already exists ({existing}) with these properties; nothing to add. "
            "Refer to it in edges instead of adding it again.",
        )
    shown = ", ".join(f"{k}: existing {have.get(k)!r}, proposed {a.properties[k]!r}" for k in diff[:5])
    return (
        C.DUPLICATE_NODE,
        f"{name} already exists ({existing}) and differs in {shown}. Re-adding never "
        "overwrites; use UPDATE_NODE to change its properties.",
    )


# ---- limits -----------------------------------------------------------------------------------------
def node_capacity(ctx: CheckContext, a: AddNode, new: NewNode) -> Rejection | None:
    if ctx.state.node_count < ctx.limits.max_nodes:
        return None
    return (
        C.MAX_NODES_EXCEEDED,
        f"the graph already holds max_nodes={ctx.limits.max_nodes} nodes; no node can "
        "be added. Add edges between existing nodes, or finish.",
    )


def edge_capacity(ctx: CheckContext, a: AddEdge, ends: Ends) -> Rejection | None:
    if ctx.state.edge_count < ctx.limits.max_edges:
        return None
    return (
        C.MAX_EDGES_EXCEEDED,
        f"the graph already holds max_edges={ctx.limits.max_edges} edges; no edge can "
        "be added. Finish, or delete a less important edge first.",
    )


# ---- references -------------------------------------------------------------------------------------
def resolve(ctx: CheckContext, ref: dict[str, Any], role: str) -> str | Rejection:
    """Resolve a node reference to one id, or explain why it cannot be."""
    if len(ref) == 1:  # {"name": "X"} with X already normal (see igg.graph.identity): the common case, direct
        for key, value in ref.items():
            if (
                key != "label"
                and value.__class__ is str
                and value
                and value.isascii()
                and not value[0].isspace()
                and not value[-1].isspace()
            ):
                found = ctx.state.find_nodes(ref)
                if len(found) == 1:
                    return found[0]
                return _unresolved(ctx, ref, role, found)
    label = ref.get("label")
    if label is not None and label not in ctx.schema.node_types:
        return (
            C.UNKNOWN_NODE_TYPE,
            f"{role}: reference names node type {label!r}, which is not in the "
            f"schema; allowed: {choices(ctx.schema.node_type_list)}.",
        )
    ref = normalize_reference(ref, ctx.schema.types_by_identity_key)
    found = ctx.state.find_nodes(ref)
    if len(found) == 1:
        return found[0]
    return _unresolved(ctx, ref, role, found)


def _unresolved(ctx: CheckContext, ref: dict[str, Any], role: str, found: list[str]) -> Rejection:
    """NODE_NOT_FOUND or AMBIGUOUS_REFERENCE for a reference that matched no node or several."""
    shown = _ref_text(ref)
    if not found:
        close = ctx.state.close_matches(ref)
        hint = f" Close matches: {'; '.join(close)}." if close else " No node has a similar name."
        return (
            C.NODE_NOT_FOUND,
            f"{role}: no node matches {shown}.{hint} Add the node first "
            "(an ADD_NODE earlier in the same response counts) or fix the reference.",
        )
    names = "; ".join(f"{ctx.state.describe(n)} ({n})" for n in found[:5])
    more = f" and {len(found) - 5} more" if len(found) > 5 else ""
    types = sorted({ctx.state.node_type(n) for n in found})
    how = (
        f'add "label" (one of {", ".join(types)})'
        if len(types) > 1
        else "add more identifying properties (e.g. " + ", ".join(ctx.schema.identity_keys[types[0]]) + ")"
    )
    return (
        C.AMBIGUOUS_REFERENCE,
        f"{role}: {shown} matches {len(found)} nodes: {names}{more}. To pick one, {how} to the reference.",
    )


def _ref_text(ref: dict[str, Any]) -> str:
    text = "{" + ", ".join(f"{k!r}: {v!r}" for k, v in ref.items()) + "}"
    return text if len(text) <= 200 else text[:197] + "..."


def _both(
    ctx: CheckContext, first: dict[str, Any], first_field: str, second: dict[str, Any], second_field: str
) -> Ends | Rejection:
    """Two references that must each resolve to one node (the first rejection wins)."""
    source = resolve(ctx, first, first_field)
    if isinstance(source, tuple):
        return source
    target = resolve(ctx, second, second_field)
    if isinstance(target, tuple):
        return target
    return Ends(source, target)


def ends_resolve(ctx: CheckContext, a: AddEdge | DeleteEdge | UpdateEdge) -> Ends | Rejection:
    """ADD_EDGE (and the others naming an edge by its ends): ``from`` and ``to`` each resolve to one node."""
    return _both(ctx, a.from_, "from", a.to, "to")


def node_resolves(ctx: CheckContext, a: UpdateNode | DeleteNode) -> str | Rejection:
    """UPDATE_NODE, DELETE_NODE: ``node`` resolves to one node."""
    return resolve(ctx, a.node, "node")


def merge_ends_resolve(ctx: CheckContext, a: MergeNodes) -> Ends | Rejection:
    """MERGE_NODES: ``node`` and ``into`` each resolve to one node."""
    return _both(ctx, a.node, "node", a.into, "into")


def edge_resolves(absent: str) -> Resolver[DeleteEdge | UpdateEdge, EdgeAt]:
    """DELETE_EDGE, UPDATE_EDGE: the ends resolve and the edge of that type between them exists (``absent``:
    what the EDGE_NOT_FOUND message says to do)."""

    def edge_at(ctx: CheckContext, a: DeleteEdge | UpdateEdge) -> EdgeAt | Rejection:
        ends = ends_resolve(ctx, a)
        if isinstance(ends, tuple):
            return ends
        edge = ctx.state.edge_between(ends.source, a.label, ends.target)
        if edge is not None:
            return EdgeAt(edge, ends.source, ends.target)
        return (
            C.EDGE_NOT_FOUND,
            f"there is no {a.label} edge from {ctx.state.describe(ends.source)} to "
            f"{ctx.state.describe(ends.target)}; {absent}",
        )

    return edge_at


# ---- edges ------------------------------------------------------------------------------------------
def self_loop_allowed(ctx: CheckContext, a: AddEdge, ends: Ends) -> Rejection | None:
    if ends.source != ends.target or ctx.limits.self_loop_allowed(a.label):
        return None
    allowed = ctx.limits.allow_self_loops
    which = f" (only {', '.join(allowed)} may)" if isinstance(allowed, list) and allowed else ""
    return (
        C.SELF_LOOP_FORBIDDEN,
        f"{a.label} from {ctx.state.describe(ends.source)} to itself: self-loops are "
        f"not allowed for {a.label}{which}, see allow_self_loops. Connect two different nodes.",
    )


def pattern_allowed(ctx: CheckContext, a: AddEdge, ends: Ends) -> Rejection | None:
    allowed = ctx.schema.patterns.get(a.label)
    if allowed is None:
        return None
    pair = (ctx.state.node_type(ends.source), ctx.state.node_type(ends.target))
    if pair in allowed:
        return None
    shown = ", ".join(f"{f}-{a.label}->{t}" for f, t in sorted(allowed))
    return (
        C.EDGE_PATTERN_FORBIDDEN,
        f"{pair[0]}-{a.label}->{pair[1]} is not an allowed pattern; {a.label} may only connect: {shown}.",
    )


def edge_unique(ctx: CheckContext, a: AddEdge, ends: Ends) -> Rejection | None:
    existing = ctx.state.edge_between(ends.source, a.label, ends.target)
    if existing is None:
        return None
    return (
        C.DUPLICATE_EDGE,
        f"{ctx.state.describe(ends.source)} -{a.label}-> "
        f"{ctx.state.describe(ends.target)} already exists ({existing}); nothing to add.",
    )


# ---- updates ----------------------------------------------------------------------------------------
def update_keeps_required(ctx: CheckContext, a: UpdateNode, node: str) -> Rejection | None:
    return update_problem(
        ctx, a, kind="node", element_type=ctx.state.node_type(node), before=ctx.state.node_properties(node)
    )


def update_keeps_identity_unique(ctx: CheckContext, a: UpdateNode, node: str) -> Rejection | None:
    t = ctx.state.node_type(node)
    keys = ctx.schema.identity_keys[t]
    if not any(k in a.properties for k in keys):
        return None
    after = {**ctx.state.node_properties(node), **a.properties}
    other = ctx.state.find_identity(t, ctx.state.identity(t, after) or ())
    if other is None or other == node:
        return None
    return (
        C.DUPLICATE_NODE,
        f"renaming {ctx.state.describe(node)} would collide with "
        f"{ctx.state.describe(other)} ({other}); identities ({', '.join(keys)}) must stay unique.",
    )


def update_properties_valid(ctx: CheckContext, a: UpdateNode, node: str) -> Rejection | None:
    """``properties_valid``, in UPDATE_NODE's order (after the node resolved and its identity normalised)."""
    return properties_valid(ctx, a)


# ---- deletions --------------------------------------------------------------------------------------
def deletion_allowed(ctx: CheckContext, a: DeleteNode | DeleteEdge | MergeNodes) -> Rejection | None:
    if not ctx.limits.allow_deletions:
        return C.DELETION_FORBIDDEN, "deletions are not allowed in this session (allow_deletions is false)."
    if ctx.deletions >= ctx.limits.max_deletions_per_iteration and not ctx.planned:
        return (
            C.DELETION_LIMIT_EXCEEDED,
            f"at most {ctx.limits.max_deletions_per_iteration} deletions are "
            "accepted per response; this one was not applied. Send it again next turn if it is needed.",
        )
    return None


def node_not_protected(ctx: CheckContext, a: DeleteNode, node: str) -> Rejection | None:
    if node not in ctx.state.protected or not ctx.limits.protect_seed_nodes:
        return None
    return (
        C.PROTECTED_NODE,
        f"{ctx.state.describe(node)} comes from the seed graph and is protected "
        "(protect_seed_nodes is true); it cannot be deleted.",
    )


_ADD_NODE: Checks[AddNode, NewNode] = Checks(
    (
        node_type_known,
        node_time_valid,
        normalize_node_identity,
        properties_valid,
        properties_typed,
        node_required_present,
        identity_unique,
    ),
    near_duplicate,
    (node_capacity,),
)
_ADD_EDGE: Checks[AddEdge, Ends] = Checks(
    (edge_type_known, edge_time_valid, properties_valid, properties_typed, edge_required_present),
    ends_resolve,
    (self_loop_allowed, pattern_allowed, edge_unique, edge_conflict, edge_capacity),
)
_UPDATE_NODE: Checks[UpdateNode, str] = Checks(
    (),
    node_resolves,
    (
        normalize_update_identity,
        node_update_time_valid,
        update_properties_valid,
        update_properties_typed,
        update_keeps_required,
        update_keeps_identity_unique,
        node_update_conflict,
    ),
)
_DELETE_NODE: Checks[DeleteNode, str] = Checks((deletion_allowed,), node_resolves, (node_not_protected,))
_DELETE_EDGE: Checks[DeleteEdge, EdgeAt] = Checks(
    (deletion_allowed, edge_type_known), edge_resolves("nothing to delete.")
)
_UPDATE_EDGE: Checks[UpdateEdge, EdgeAt] = Checks(
    (edge_type_known, properties_valid, properties_typed),
    edge_resolves("add it with ADD_EDGE."),
    (edge_update_time_valid, update_edge_valid),
)
_MERGE_NODES: Checks[MergeNodes, Ends] = Checks((deletion_allowed,), merge_ends_resolve, (merge_valid,))
_QUERY: Checks[QueryAction, Answer] = Checks((), query_answerable)

RULES: dict[type, Checks[Any, Any]] = {
    AddNode: _ADD_NODE,
    AddEdge: _ADD_EDGE,
    UpdateNode: _UPDATE_NODE,
    DeleteNode: _DELETE_NODE,
    DeleteEdge: _DELETE_EDGE,
    UpdateEdge: _UPDATE_EDGE,
    MergeNodes: _MERGE_NODES,
    QueryAction: _QUERY,
}
"""The checks of each action model class, in the order they run."""


def idle_checks(schema: CompiledSchema, limits: Constraints) -> set[object]:
    """The built-in checks that cannot reject anything under this schema and these limits, which an ``Actor``
    leaves out (each costs a call per action): property types, patterns and required attributes the schema
    does not declare, and the self-loop check when self-loops are allowed."""
    idle: set[object] = set()
    if not schema.property_types:
        idle.update((properties_typed, update_properties_typed))
    if not schema.patterns:
        idle.add(pattern_allowed)
    if not any(schema.required.get(t) for t in schema.edge_type_list):
        idle.add(edge_required_present)
    if limits.allow_self_loops is True:
        idle.add(self_loop_allowed)
    if not schema.one_at_a_time:
        idle.add(edge_conflict)
    if not schema.timed_properties:
        idle.add(node_update_conflict)
    return idle


__all__ = [
    "RULES",
    "Check",
    "CheckContext",
    "Checks",
    "Rejection",
    "Resolver",
    "Rule",
    "idle_checks",
    "rejected",
    "resolve",
]
