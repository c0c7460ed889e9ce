"""The difference a re-map applies: what turns the stored graph into the graph a fresh map builds, for the
whole graph (``plan_difference``) or for the files linked again alone (``plan_file_difference``). Nothing is
changed here: the act step applies the difference (``Session.apply_update``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from igg.act.difference import Difference, NodeRef
from igg.agents.code.mapping import SchemaFit
from igg.graph.state import GraphState

NodeKey = tuple[str, tuple[Any, ...]]
"""A node by (type, identity)."""
_NONE: dict[str, Any] = {}
"""The properties of an edge without sites (CONTAINS): never mutated."""
_SHARED = ("package:", "table:", "route:")
"""The prefixes of symbol keys several files share (their set is as every file says)."""


def desired_graph(
    fit: SchemaFit,
) -> tuple[dict[NodeKey, dict[str, Any]], dict[tuple[str, NodeKey, NodeKey], dict[str, Any]]]:
    """The nodes (by type and identity, with their properties) and edges (with theirs: their sites) the code
    agent proposes for ``fit``'s model on a fresh map."""
    nodes = {(p.label, p.identity): p.properties for p in fit.placed.values()}
    props = fit.edge_properties()
    edges = {}
    for plan in fit.model.files:
        for r in plan.relations:
            for rel in (r, fit.lifted(r)):
                if rel is None:
                    continue
                label = fit.edge_label(rel)
                if label is None or fit.loops_back(rel):
                    continue
                a, b = fit.placed[rel.source], fit.placed[rel.target]
                edges[(label, (a.label, a.identity), (b.label, b.identity))] = props.get(
                    (label, rel.source, rel.target), _NONE
                )
    return nodes, edges


def plan_difference(state: GraphState, fit: SchemaFit) -> Difference:
    """What turns ``state`` into the graph a fresh map builds for ``fit`` (nothing changed yet: the act step
    applies it, ``Session.apply_update``)."""
    nodes, edges = desired_graph(fit)
    diff = Difference()
    current: dict[tuple[str, tuple[Any, ...]], NodeRef] = {}
    for node_id in list(state.graph.nodes):
        label = state.node_type(node_id)
        identity = state.identity(label, state.node_properties(node_id))
        want = nodes.get((label, identity)) if identity is not None else None
        if want is None or identity is None:
            diff.remove_nodes.append(node_id)
            continue
        current[(label, identity)] = node_id
        _plan_properties(state, node_id, want, diff)
    for key, props in nodes.items():
        if key not in current:
            current[key] = len(diff.add_nodes)
            diff.add_nodes.append((key[0], dict(props)))
    gone = set(diff.remove_nodes)
    _plan_edges(
        state,
        [n for n in state.graph.nodes if n not in gone],
        gone,
        {(current[a], label, current[b]): props for (label, a, b), props in edges.items()},
        diff,
    )
    return diff


def _plan_properties(state: GraphState, node_id: str, want: dict[str, Any], diff: Difference) -> None:
    """Give a node exactly the properties ``want`` (a change only when they differ)."""
    props = state.node_properties(node_id)
    if props != want:  # most nodes are as they were: one dict comparison
        changed = {k: v for k, v in want.items() if props.get(k) != v}
        gone = [k for k in props if k not in want]
        if changed or gone:
            diff.set_properties.append((node_id, changed, gone))


def _plan_edges(
    state: GraphState,
    sources: Iterable[str],
    removed: set[str],
    wanted: dict[tuple[NodeRef, str, NodeRef], dict[str, Any]],
    diff: Difference,
) -> None:
    """Make the edges going out of the existing nodes ``sources`` (and the new ones) exactly ``wanted`` (with
    their properties): the others removed (edges to ``removed`` nodes go with them), the missing ones added,
    those whose properties differ (a site moved) given the wanted ones."""
    succ = state.succ  # the adjacency itself (u -> v -> edge id -> data), not a networkx edge view
    have = {
        (source, data["type"], target): (edge_id, data["properties"])
        for source in sources
        for target, keyed in succ[source].items()
        if target not in removed
        for edge_id, data in keyed.items()
    }
    for key, (edge_id, props) in have.items():
        want = wanted.get(key)
        if want is None:
            diff.remove_edges.append(edge_id)
        elif want != props:
            diff.set_edge_properties.append((edge_id, want))
    for edge, want in wanted.items():
        if edge not in have:
            diff.add_edges.append(edge)
            if want:
                diff.edge_properties[edge] = want


def plan_file_difference(state: GraphState, fit: SchemaFit, paths: set[str]) -> Difference | None:
    """What changes ``state`` as a fresh map would when only the files ``paths`` can relate differently
    (``fit`` links those files alone, ``link(..., only=paths)``; see ``update._reach``): their own nodes
    (added, removed, properties changed) and every edge going out of them. Every other element is one a fresh
    map makes the same. None when the state is not what the last map left (a node of another file missing or
    different, an edge's endpoint missing) or a declaration of theirs is shared with another file: the caller
    then diffs the whole graph."""
    placed, nodes = fit.placed, state.nodes
    plans = [plan for plan in fit.model.files if plan.path in paths]
    own = _own_nodes(state, fit, plans)
    if own is None or not _others_as_they_were(state, fit, own):
        return None
    # the nodes the files declared at the last map: the ones that name them as their file (or path)
    kept = {n for n in own.values() if n is not None}
    stale = [
        n
        for n, d in nodes.items()
        if n not in kept
        and (
            d["properties"].get("file") in paths
            or (d["type"] == "Module" and d["properties"].get("path") in paths)
        )
    ]
    found = _wanted_edges(state, fit, plans, own)
    if found is None:
        return None
    wanted, targets = found
    diff = Difference(remove_nodes=stale)
    for key, existing in own.items():
        if isinstance(existing, str):
            _plan_properties(state, existing, placed[key].properties, diff)
    for key in placed:  # new declarations, in the order a fresh map's symbols come
        if key in own and own[key] is None:
            own[key] = len(diff.add_nodes)
            diff.add_nodes.append((placed[key].label, dict(placed[key].properties)))
    ids: dict[str, NodeRef] = {**targets, **{k: v for k, v in own.items() if v is not None}}
    _plan_edges(
        state,
        [v for v in own.values() if isinstance(v, str)],
        set(stale),
        {(ids[a], label, ids[b]): want for (a, label, b), want in wanted.items()},
        diff,
    )
    return diff


def _own_nodes(state: GraphState, fit: SchemaFit, plans: list[Any]) -> dict[str, NodeRef | None] | None:
    """Symbol key of the files ``plans`` -> its node (None: to add), for the symbols the files alone declare
    and the schema places; None when one is shared with another file."""
    placed = fit.placed
    own: dict[str, NodeRef | None] = {}
    for plan in plans:
        for key in plan.symbols:
            if key.startswith(_SHARED) or key not in placed:
                continue  # shared with other files (their set is as it was), or no place in the schema
            if key in fit.model.shared:
                return None
            p = placed[key]
            own[key] = state.find_identity(p.label, p.identity)
    return own


def _others_as_they_were(state: GraphState, fit: SchemaFit, own: dict[str, NodeRef | None]) -> bool:
    """Whether every other file's symbols have their node, with the properties a fresh map gives (a schema
    that qualifies colliding names could rename them)."""
    nodes = state.nodes
    for key, p in fit.placed.items():
        if key in own or key.startswith(_SHARED):
            continue
        found = state.find_identity(p.label, p.identity)
        if found is None or nodes[found]["properties"] != p.properties:
            return False
    return True


def _wanted_edges(
    state: GraphState, fit: SchemaFit, plans: list[Any], own: dict[str, NodeRef | None]
) -> tuple[dict[tuple[str, str, str], dict[str, Any]], dict[str, str]] | None:
    """The edges going out of the files ``plans`` a fresh map makes, by (source key, label, target key),
    with their properties, and the node of each target the files do not declare; None when a source is not
    the files' own or a target has no node."""
    wanted: dict[tuple[str, str, str], dict[str, Any]] = {}
    targets: dict[str, str] = {}
    props = fit.edge_properties()
    for plan in plans:
        for r in plan.relations:
            for rel in (r, fit.lifted(r)):
                if rel is None or fit.loops_back(rel):
                    continue
                if rel.source not in own:
                    if rel.source.startswith("package:"):
                        continue  # a package CONTAINS the module: declared, as it was
                    return None
                label = fit.edge_label(rel)
                if label is None:
                    continue
                if rel.target not in own and rel.target not in targets:
                    t = fit.placed[rel.target]
                    target = state.find_identity(t.label, t.identity)
                    if target is None:
                        return None
                    targets[rel.target] = target
                wanted[(rel.source, label, rel.target)] = props.get((label, rel.source, rel.target), _NONE)
    return wanted, targets
