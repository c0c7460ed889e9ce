"""Cycles at a level: strongly connected components, and for each a few edges whose removal breaks it.

``level_graph`` lifts every edge of the chosen types to the level asked: ``module`` (a type's or member's
edge counts for its module), ``package`` (a module's package: the package that CONTAINS it, or the module
itself for a top-level module) or ``type`` (a method's edge counts for its class, interface or enum). Each
lifted edge keeps the edges behind it, so a cycle shows the statements that make it.

The edges that break a cycle are a feedback arc set found by the heuristic of Eades, Lin and Smyth ("A fast
and effective heuristic for the feedback arc set problem", 1993): order the component's nodes by repeatedly
taking sinks to the back, sources to the front, and otherwise the node with the most outgoing minus incoming
edges to the front; the edges that point backwards in that order are the set. Removing them leaves no cycle
(the order is then topological); the set is small, not always minimal (the exact problem is NP-hard). Ties go
to the name that sorts first, so the answer is stable.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

import networkx as nx

from igg.codemap.routes import service_of
from igg.rules.depgraph import TYPE_NODES, DepGraph, Edge

Level = Literal["module", "package", "type", "service"]
"""What a cycle is made of."""

LEVEL_TYPES: dict[str, tuple[str, ...]] = {
    "module": ("Module",),
    "package": ("Package", "Module"),
    "type": tuple(sorted(TYPE_NODES)),
    "service": ("Route",),
}
DEFAULT_EDGES: dict[str, tuple[str, ...]] = {
    "module": ("IMPORTS",),
    "package": ("IMPORTS",),
    "type": ("EXTENDS", "IMPLEMENTS", "CALLS", "INSTANTIATES"),
    "service": ("REQUESTS",),
}
"""The edges a cycle is made of when none are named."""


@dataclass(kw_only=True)
class LevelGraph:
    """Nodes of one level (id -> name) and their edges, each with the graph edges behind it."""

    names: dict[str, str] = field(default_factory=dict)
    edges: dict[tuple[str, str], list[Edge]] = field(default_factory=dict)

    def digraph(self, among: set[str] | None = None) -> nx.DiGraph[str]:
        """The level as a networkx graph (restricted to ``among``)."""
        g: nx.DiGraph[str] = nx.DiGraph()
        g.add_nodes_from(n for n in self.names if among is None or n in among)
        g.add_edges_from((a, b) for a, b in self.edges if among is None or (a in among and b in among))
        return g


def lift(graph: DepGraph, node_id: str, level: Level) -> str | None:
    """The node of ``level`` that ``node_id`` counts for (None: it has none, e.g. a table)."""
    if level == "type":
        return graph.enclosing(node_id, TYPE_NODES)
    module = graph.enclosing(node_id, ("Module", "Package"))
    if module is None or level == "module" or graph.nodes[module].type == "Package":
        return module
    return graph.container.get(module, module)


def service_graph(graph: DepGraph) -> LevelGraph:
    """Services (``service:NAME``, named NAME) and their requests of each other: a REQUESTS edge from a caller
    of one service to a route that a handler of another HANDLES (a service is the folder ``routes.service_of``
    says)."""
    out = LevelGraph()
    serves: dict[str, set[str]] = {}
    for e in graph.of_types(("HANDLES",)):
        if e.file:
            serves.setdefault(e.target, set()).add(service_of(e.file))
    for e in graph.of_types(("REQUESTS",)):
        if not e.file:
            continue
        a = service_of(e.file)
        for b in sorted(serves.get(e.target, ())):
            if a != b:
                out.names.setdefault(f"service:{a}", a)
                out.names.setdefault(f"service:{b}", b)
                out.edges.setdefault((f"service:{a}", f"service:{b}"), []).append(e)
    return out


def level_graph(
    graph: DepGraph, level: Level, types: Iterable[str] | None = None, external: bool = False
) -> LevelGraph:
    """``graph`` lifted to ``level`` over the edges of ``types`` (default ``DEFAULT_EDGES``); packages
    outside the tree only with ``external``; ``service``: ``service_graph``."""
    if level == "service":
        return service_graph(graph)
    out = LevelGraph()
    lifted: dict[str, str | None] = {}
    for e in graph.of_types(types or DEFAULT_EDGES[level]):
        ends = []
        for end in (e.source, e.target):
            if end not in lifted:
                up = lift(graph, end, level)
                lifted[end] = None if up is None or (graph.nodes[up].external and not external) else up
            ends.append(lifted[end])
        a, b = ends
        if a is None or b is None or a == b:
            continue
        out.names.setdefault(a, graph.name(a))
        out.names.setdefault(b, graph.name(b))
        out.edges.setdefault((a, b), []).append(e)
    return out


@dataclass(kw_only=True)
class Cycle:
    """One strongly connected component of more than one node."""

    members: list[str]
    """Node ids, in name order."""
    breaking: list[tuple[str, str]]
    """Lifted edges whose removal leaves the component without a cycle."""
    path: list[str]
    """One cycle through the first breaking edge: node ids, the first repeated at the end."""


def find_cycles(level: LevelGraph, among: set[str] | None = None) -> list[Cycle]:
    """The cycles of ``level`` (restricted to ``among``), largest first, then by name."""
    g = level.digraph(among)
    name = level.names.__getitem__
    out = []
    for component in nx.strongly_connected_components(g):
        if len(component) < 2:
            continue
        sub = g.subgraph(component)
        breaking = feedback_arcs(sub, name)
        a, b = breaking[0]
        back = nx.shortest_path(sub, b, a)
        out.append(Cycle(members=sorted(component, key=name), breaking=breaking, path=[a, *back]))
    out.sort(key=lambda c: (-len(c.members), [name(m) for m in c.members]))
    return out


def feedback_arcs(g: nx.DiGraph[str], name: object) -> list[tuple[str, str]]:
    """A feedback arc set of ``g`` by the Eades-Lin-Smyth ordering (see the module doc), in order."""
    key = name if callable(name) else str
    succ = {n: set(g.successors(n)) for n in g}
    pred = {n: set(g.predecessors(n)) for n in g}
    left, right = [], []
    remaining = set(g)

    def drop(n: str) -> None:
        remaining.discard(n)
        for m in succ.pop(n):
            pred[m].discard(n)
        for m in pred.pop(n):
            succ[m].discard(n)

    while remaining:
        changed = True
        while changed:
            changed = False
            for n in sorted((n for n in remaining if not succ[n]), key=key):
                right.append(n)
                drop(n)
                changed = True
            for n in sorted((n for n in remaining if not pred[n]), key=key):
                left.append(n)
                drop(n)
                changed = True
        if remaining:
            n = min(remaining, key=lambda n: (len(pred[n]) - len(succ[n]), key(n)))
            left.append(n)
            drop(n)
    order = {n: i for i, n in enumerate(left + list(reversed(right)))}
    return sorted(((a, b) for a, b in g.edges if order[a] > order[b]), key=lambda e: (key(e[0]), key(e[1])))
