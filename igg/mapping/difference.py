"""The difference a re-map applies: what turns the stored graph into the graph a fresh map builds, for the
whole graph (``plan_difference``) or for the files linked again alone (``plan_file_difference``). Nothing is
changed here: the act step applies the difference (``Session.apply_update``)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence
from typing import Any

from igg.act.difference import Difference, NodeRef
from igg.agents.code.mapping import SchemaFit
from igg.graph.state import GraphState

NodeKey = tuple[str, tuple[Any, ...]]
"""A node by (type, identity)."""
_NONE: dict[str, Any] = {}
"""The properties of an edge without sites (CONTAINS): never mutated."""
SHARED = ("package:", "table:", "route:")
"""The prefixes of symbol keys several files share (their set is as every file says)."""


def desired_graph(
    fit: SchemaFit,
) -> tuple[dict[NodeKey, dict[str, Any]], dict[tuple[str, NodeKey, NodeKey], dict[str, Any]]]:
    """The nodes (by type and identity, with their properties) and edges (with theirs: their sites) the code
    agent proposes for ``fit``'s model on a fresh map."""
    nodes = {(p.label, p.identity): p.properties for p in fit.placed.values()}
    placed = fit.placed
    edges = {}
    for label, source, target, props in _desired_edges(fit):
        a, b = placed[source], placed[target]
        edges[(label, (a.label, a.identity), (b.label, b.identity))] = props
    return nodes, edges


def _desired_edges(fit: SchemaFit) -> Iterator[tuple[str, str, str, dict[str, Any]]]:
    """Each edge the code agent proposes for ``fit``'s model on a fresh map, as (label, source symbol key,
    target symbol key, properties), in the order it proposes them (one stated twice comes twice)."""
    props = fit.edge_properties()
    for plan in fit.model.files:
        for r in plan.relations:
            for rel in (r, fit.lifted(r)):
                if rel is None:
                    continue
                label = fit.edge_label(rel)
                if label is None or fit.loops_back(rel):
                    continue
                yield label, rel.source, rel.target, props.get((label, rel.source, rel.target), _NONE)


def plan_difference(state: GraphState, fit: SchemaFit) -> Difference:
    """What turns ``state`` into the graph a fresh map builds for ``fit`` (nothing changed yet: the act step
    applies it, ``Session.apply_update``). The wanted edges are keyed by their ends' nodes at once, and the
    graph's edges compared as they are met: no table of either by identity (at 50,000 files, 2.5 million
    entries each)."""
    nodes = {(p.label, p.identity): p.properties for p in fit.placed.values()}
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
    del nodes
    ref = {key: current[(p.label, p.identity)] for key, p in fit.placed.items()}
    del current
    gone = set(diff.remove_nodes)
    _plan_edges(
        state,
        [n for n in state.graph.nodes if n not in gone],
        gone,
        {(ref[a], label, ref[b]): props for label, a, b, props in _desired_edges(fit)},
        diff,
    )
    return _in_id_order(diff)


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
    their properties; taken apart as it goes): the others removed (edges to ``removed`` nodes go with them),
    the missing ones added, those whose properties differ (a site moved) given the wanted ones. Each edge of
    the graph is compared as it is met (a second edge of the same ends and type, which the act step never
    makes, is removed)."""
    succ = state.succ  # the adjacency itself (u -> v -> edge id -> data), not a networkx edge view
    take = wanted.pop
    missing: dict[str, Any] = {}
    for source in sources:
        for target, keyed in succ[source].items():
            if target in removed:
                continue
            for edge_id, data in keyed.items():
                want = take((source, data["type"], target), missing)
                if want is missing:
                    diff.remove_edges.append(edge_id)
                elif want != data["properties"]:
                    diff.set_edge_properties.append((edge_id, want))
    for edge, want in wanted.items():  # what no edge of the graph took, in the order a fresh map proposes
        diff.add_edges.append(edge)
        if want:
            diff.edge_properties[edge] = want


def plan_file_difference(
    state: GraphState, fit: SchemaFit, paths: set[str], *, others: bool = True
) -> Difference | None:
    """What changes ``state`` as a fresh map would when only the files ``paths`` can relate differently
    (``fit`` links those files alone, ``link(..., only=paths)``; see ``update._reach``): their own nodes
    (added, removed, properties changed), every edge going out of them, and a package's CONTAINS of a module
    added. Every other element is one a fresh map makes the same. None when the state is not what the last
    map left (a node of another file missing or different, an edge's endpoint missing), a declaration of
    theirs is shared with another file, or a node of another file is one a fresh map no longer makes: the
    caller then diffs the whole graph. A node no file declares that only their removed declarations named (an
    outside package only a removed file imported) goes with them (``_left_behind``). ``others=False``: the
    other files' nodes are not compared with the state, which may hold only some of them (a ``PartialState``:
    the caller knows that no declaration changed, so none of them can: ``igg.mapping.bodies``)."""
    placed, nodes = fit.placed, state.nodes
    plans = [plan for plan in fit.model.files if plan.path in paths]
    own = _own_nodes(state, fit, plans)
    if own is None or (others and not _others_as_they_were(state, fit, own)):
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
    linked = None if others else paths
    left = _left_behind(state, fit, stale, linked=linked)
    if found is None or left is None:
        return None
    stale += left
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
    sources = [v for v in own.values() if isinstance(v, str)]
    planned = {(ids[a], label, ids[b]): want for (a, label, b), want in wanted.items()}
    _plan_edges(state, sources, set(stale), dict(planned), diff)
    dropped = _left_behind(state, fit, [], _outside_ends(state, diff.remove_edges, set(stale)), linked)
    if dropped is None:
        return None
    if dropped:  # an outside package whose last import went: it goes, and the edges are planned without it
        stale += dropped
        diff = Difference(remove_nodes=stale, add_nodes=diff.add_nodes, set_properties=diff.set_properties)
        _plan_edges(state, sources, set(stale), planned, diff)
    return _in_id_order(diff)


def node_file(state: GraphState, node: str) -> str | None:
    """The path of the file that declares ``node``: the ``file`` it names, or the ``path`` of a Module node;
    None for a node of no file (a package, an outside package, a table)."""
    props = state.node_properties(node)
    if "file" in props:
        return props["file"] if type(props["file"]) is str else None
    path = props.get("path") if state.node_type(node) == "Module" else None
    return path if type(path) is str else None


def _outside_ends(state: GraphState, edges: Iterable[str], gone: set[str]) -> list[str]:
    """The targets of the edges ``edges`` (to remove) that no file declares (an outside package or module, a
    table, a package), not ``gone`` already: a fresh map may no longer make them (``_left_behind``)."""
    ends = (state.edge_ends(e)[1] for e in edges)
    return [
        n
        for n in dict.fromkeys(ends)
        if n not in gone and not {"file", "path"} & state.node_properties(n).keys()
    ]


def by_id(element: str) -> tuple[int, str]:
    """The order of element ids (``n9`` before ``n10``) in which an update plans the changes of properties
    (``plan_difference``, ``plan_file_difference``, ``igg.mapping.relined``): each element changes once, so
    the order is the step's alone, the same whichever plans it."""
    return len(element), element


def _in_id_order(diff: Difference) -> Difference:
    """``diff`` with its changes of properties in the order of their elements' ids (``by_id``)."""
    diff.set_properties.sort(key=lambda change: by_id(change[0]))
    diff.set_edge_properties.sort(key=lambda change: by_id(change[0]))
    return diff


def _left_behind(
    state: GraphState,
    fit: SchemaFit,
    stale: list[str],
    ends: Sequence[str] = (),
    linked: Collection[str] | None = None,
) -> list[str] | None:
    """The nodes no file declares (an outside package or module, a table, a package) that the nodes
    ``stale`` (to remove) or the edges to remove to ``ends`` (such nodes) leave behind and a fresh map no
    longer makes, to remove with them: ``ends`` and those reached from ``stale`` through nodes a fresh map no
    longer makes. None when one of those is a node of a file: only a diff of the whole graph can tell what
    changed. ``linked``: the files linked again, when a node of any other file is one a fresh map makes as
    it is (``plan_file_difference``'s ``others=False``; ``fit`` places only what those files reach)."""
    gone = set(stale)
    succ, pred = state.succ, state.pred
    todo = [m for n in stale for m in (*succ[n], *pred[n]) if m not in gone]
    todo.extend(ends)
    placed: set[NodeKey] | None = None
    kept: set[str] = set()
    left: list[str] = []
    while todo:
        m = todo.pop()
        if m in gone or m in kept:
            continue
        if placed is None:
            placed = {(p.label, p.identity) for p in fit.placed.values()}
        label, props = state.node_type(m), state.node_properties(m)
        if (label, state.identity(label, props)) in placed:
            kept.add(m)
            continue
        if "file" in props or "path" in props:
            owner = node_file(state, m)
            if linked is not None and owner is not None and owner not in linked:
                kept.add(m)
                continue
            return None
        gone.add(m)
        left.append(m)
        todo.extend(x for x in (*succ[m], *pred[m]) if x not in gone)
    return left


def _own_nodes(state: GraphState, fit: SchemaFit, plans: list[Any]) -> dict[str, NodeRef | None] | None:
    """Symbol key of the files ``plans`` -> its node (None: to add), for the symbols the files alone declare
    and the schema places; None when one is shared with another file."""
    placed = fit.placed
    own: dict[str, NodeRef | None] = {}
    for plan in plans:
        for key in plan.symbols:
            if key.startswith(SHARED) or key not in placed:
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
        if key in own or key.startswith(SHARED):
            continue
        found = state.find_identity(p.label, p.identity)
        if found is None or nodes[found]["properties"] != p.properties:
            return False
    return True


def _wanted_edges(
    state: GraphState, fit: SchemaFit, plans: list[Any], own: dict[str, NodeRef | None]
) -> tuple[dict[tuple[str, str, str], dict[str, Any]], dict[str, str]] | None:
    """The edges going out of the files ``plans`` a fresh map makes, by (source key, label, target key),
    with their properties, and the node of each end the files do not declare (a package that CONTAINS a
    module added to it); None when a source is not the files' own or an end has no node. A table or an
    outside package (no edge of its own) that has no node yet, as the files are the first to name it, joins
    ``own`` as a node to add."""
    wanted: dict[tuple[str, str, str], dict[str, Any]] = {}
    targets: dict[str, str] = {}
    props = fit.edge_properties()
    for plan in plans:
        for r in plan.relations:
            for rel in (r, fit.lifted(r)):
                if rel is None or fit.loops_back(rel):
                    continue
                if rel.source not in own:
                    if not rel.source.startswith("package:"):
                        return None
                    if own.get(rel.target, "") is not None:
                        continue  # a package CONTAINS the module: declared, as it was
                    if rel.source not in targets:  # a module added to a package: a new CONTAINS
                        if rel.source not in fit.placed:
                            return None
                        s = fit.placed[rel.source]
                        found = state.find_identity(s.label, s.identity)
                        if found is None:
                            return None
                        targets[rel.source] = found
                label = fit.edge_label(rel)
                if label is None:
                    continue
                if rel.target not in own and rel.target not in targets:
                    t = fit.placed[rel.target]
                    target = state.find_identity(t.label, t.identity)
                    if target is not None:
                        targets[rel.target] = target
                    elif rel.target.startswith("table:") or (
                        rel.target.startswith("package:") and t.properties.get("external")
                    ):
                        own[rel.target] = None  # a table or outside package the files first name: added
                    else:
                        return None
                wanted[(rel.source, label, rel.target)] = props.get((label, rel.source, rel.target), _NONE)
    return wanted, targets
