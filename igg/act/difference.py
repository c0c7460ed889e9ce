"""A typed bulk difference, validated and applied by the act step: how ``igg map-code --update`` changes a graph.

An update of a code map changes hundreds of elements at once (every node and edge a fresh map would make
differently). It does not go around the act step: it is planned as a ``Difference`` (nothing changed yet) and
``apply_difference`` checks every element of it against the session's schema and limits (node and edge types,
required attributes, declared property types, allowed edge patterns, ``max_nodes``/``max_edges``), then applies
it whole, or nothing when any element breaks a rule (each problem named). Its mutations go to the state's
journal like any action's, so undo, replay, diff and explain see the update as any other step.

Order of application (ids follow it, so an update gives the ids a fresh map gives): nodes removed, properties
set, nodes added, then the edges removed, the edges given other properties (as ``UPDATE_EDGE`` does: re-added
under their id, provenance stamped ``updated``), and the edges added in sorted order of their resolved ends.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from igg.act.context import CheckContext
from igg.act.typed import check_typed
from igg.act.updates import missing_required
from igg.errors import Problem

NodeRef = str | int
"""An existing node's id (``str``), or the index of a node in ``Difference.add_nodes`` (``int``)."""

COUNTS = ("nodes_added", "nodes_removed", "nodes_changed", "edges_added", "edges_removed", "edges_changed")
"""What a difference counts."""


@dataclass(kw_only=True)
class Difference:
    """Changes to a graph, planned against it and applied at once by ``apply_difference``."""

    remove_nodes: list[str] = field(default_factory=list)
    """Node ids to delete (their edges go with them)."""
    set_properties: list[tuple[str, dict[str, Any], list[str]]] = field(default_factory=list)
    """(node id, properties to set, property keys to remove)."""
    add_nodes: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    """(node type, properties), in the order their ids are given."""
    remove_edges: list[str] = field(default_factory=list)
    """Edge ids to delete (of nodes that stay)."""
    add_edges: list[tuple[NodeRef, str, NodeRef]] = field(default_factory=list)
    """(source, edge type, target); added in sorted order of their resolved (source id, type, target id)."""
    edge_properties: dict[tuple[NodeRef, str, NodeRef], dict[str, Any]] = field(default_factory=dict)
    """The properties of the added edges that have any, by their ``add_edges`` entry (a code map's edges carry
    their sites: ``igg.codemap.model.site_properties``)."""
    set_edge_properties: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    """(edge id, its properties whole) for edges that stay with other properties (a call moved to another
    line), applied as ``UPDATE_EDGE`` applies."""
    node_provenance: dict[NodeRef, dict[str, Any]] = field(default_factory=dict)
    """Provenance keys to record on a node (an added one by its index, or one given in ``set_properties``): a
    document update records the documents supporting each fact here (``igg.documents``)."""
    edge_provenance: dict[tuple[NodeRef, str, NodeRef] | str, dict[str, Any]] = field(default_factory=dict)
    """Provenance keys to record on an added edge (by its ``add_edges`` entry) or a changed one (by its id)."""
    sources: list[NodeRef] = field(default_factory=list)
    """Informational: the nodes whose outgoing edges the difference sets (not applied)."""

    def __bool__(self) -> bool:
        return bool(self.remove_nodes or self.set_properties or self.add_nodes or self.remove_edges
                    or self.add_edges or self.set_edge_properties)


def check_difference(ctx: CheckContext, diff: Difference) -> list[Problem]:
    """Every rule an element of ``diff`` breaks (empty: it may be applied)."""
    state, schema = ctx.state, ctx.schema
    problems: list[Problem] = []
    gone = set(diff.remove_nodes)
    for i, (label, props) in enumerate(diff.add_nodes):
        where = f"add_nodes[{i}]"
        if label not in schema.node_types:
            problems.append(Problem(where, f"node type {label!r} is not in the schema"))
            continue
        missing = missing_required(ctx, label, props)
        if missing:
            problems.append(Problem(where, f"{label} lacks its required attribute(s) {', '.join(missing)}"))
        if (typed := check_typed(ctx, label, props)) is not None:
            problems.append(Problem(where, typed[1]))
    for i, (node, changed, removed) in enumerate(diff.set_properties):
        where = f"set_properties[{i}]"
        if node not in state.graph or node in gone:
            problems.append(Problem(where, f"node {node!r} is not in the graph"))
            continue
        label = state.node_type(node)
        after = {**state.node_properties(node), **changed}
        for key in removed:
            after.pop(key, None)
        missing = missing_required(ctx, label, after)
        if missing:
            problems.append(Problem(where, f"{label} {node} would lack {', '.join(missing)}"))
        if (typed := check_typed(ctx, label, changed)) is not None:
            problems.append(Problem(where, typed[1]))
    for i, node in enumerate(diff.remove_nodes):
        if node not in state.graph:
            problems.append(Problem(f"remove_nodes[{i}]", f"node {node!r} is not in the graph"))
    for i, edge in enumerate(diff.remove_edges):
        if not state.has_edge(edge):
            problems.append(Problem(f"remove_edges[{i}]", f"edge {edge!r} is not in the graph"))
    for i, (source, label, target) in enumerate(diff.add_edges):
        problems.extend(_edge_problems(ctx, diff, f"add_edges[{i}]", source, label, target))
        if (typed := check_typed(ctx, label, diff.edge_properties.get((source, label, target), {}))) is not None:
            problems.append(Problem(f"add_edges[{i}]", typed[1]))
    removed_edges = set(diff.remove_edges)
    for i, (edge, props) in enumerate(diff.set_edge_properties):
        where = f"set_edge_properties[{i}]"
        if not state.has_edge(edge) or edge in removed_edges or any(end in gone for end in state.edge_ends(edge)[:2]):
            problems.append(Problem(where, f"edge {edge!r} is not in the graph"))
        elif (typed := check_typed(ctx, state.edge_ends(edge)[2]["type"], props)) is not None:
            problems.append(Problem(where, typed[1]))
    nodes = state.node_count - len(gone) + len(diff.add_nodes)
    limits = ctx.limits
    if nodes > limits.max_nodes:
        problems.append(Problem("add_nodes", f"the graph would hold {nodes} nodes; max_nodes is {limits.max_nodes}"))
    return problems


def _edge_problems(ctx: CheckContext, diff: Difference, where: str, source: NodeRef, label: str,
                   target: NodeRef) -> list[Problem]:
    schema = ctx.schema
    if label not in schema.edge_types:
        return [Problem(where, f"edge type {label!r} is not in the schema")]
    types = []
    for end in (source, target):
        if isinstance(end, int):
            if not 0 <= end < len(diff.add_nodes):
                return [Problem(where, f"new node {end} is not in add_nodes")]
            types.append(diff.add_nodes[end][0])
        elif end not in ctx.state.graph or end in diff.remove_nodes:
            return [Problem(where, f"node {end!r} is not in the graph")]
        else:
            types.append(ctx.state.node_type(end))
    allowed = schema.patterns.get(label)
    if allowed is not None and (types[0], types[1]) not in allowed:
        return [Problem(where, f"{label} from {types[0]} to {types[1]} is not an allowed edge pattern")]
    if source == target and not ctx.limits.allow_self_loops:
        return [Problem(where, f"a {label} self-loop on {source!r} (allow_self_loops is off)")]
    return []


def apply_difference(ctx: CheckContext, diff: Difference) -> tuple[dict[str, int], list[Problem]]:
    """Check ``diff`` and apply it whole (counts of what changed), or change nothing and return its problems."""
    problems = check_difference(ctx, diff)
    if problems:
        return dict.fromkeys(COUNTS, 0), problems
    state = ctx.state
    counts = dict.fromkeys(COUNTS, 0)
    for node in diff.remove_nodes:
        state.delete_node(node)
    counts["nodes_removed"] = len(diff.remove_nodes)
    node_prov = diff.node_provenance
    for node, changed, removed in diff.set_properties:
        state.update_node(node, changed, remove=removed, provenance=node_prov.get(node))
    counts["nodes_changed"] = len(diff.set_properties)
    new_ids = [state.add_node(label, dict(props), provenance=_stamped(state, node_prov.get(i)))
               for i, (label, props) in enumerate(diff.add_nodes)]
    counts["nodes_added"] = len(new_ids)
    for edge in diff.remove_edges:
        state.delete_edge(edge)
    counts["edges_removed"] = len(diff.remove_edges)
    for edge, props in diff.set_edge_properties:
        source, target, data = state.edge_ends(edge)
        state.delete_edge(edge)
        state.add_edge(source, data["type"], target, dict(props), edge,
                       {**data["provenance"], "updated": state.iteration, **diff.edge_provenance.get(edge, {})})
    counts["edges_changed"] = len(diff.set_edge_properties)
    props_of, prov_of = diff.edge_properties, diff.edge_provenance
    resolved = sorted(((_id(s, new_ids), label, _id(t, new_ids), props_of.get((s, label, t), {}),
                        prov_of.get((s, label, t))) for s, label, t in diff.add_edges), key=lambda e: e[:3])
    for source, label, target, props, prov in resolved:
        state.add_edge(source, label, target, dict(props), provenance=_stamped(state, prov))
    counts["edges_added"] = len(resolved)
    ctx.deletions += len(diff.remove_nodes) + len(diff.remove_edges)
    return counts, []


def _stamped(state: Any, extra: dict[str, Any] | None) -> dict[str, Any] | None:
    """The provenance of an element created now with ``extra`` recorded (None: the plain stamp)."""
    return {**state.stamp(), **extra} if extra else None


def _id(ref: NodeRef, new_ids: list[str]) -> str:
    return new_ids[ref] if isinstance(ref, int) else ref


__all__ = ["COUNTS", "Difference", "NodeRef", "apply_difference", "check_difference"]
