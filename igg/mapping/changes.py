"""What a commit range did to the dependencies (``igg check --since REF``, ``igg map-code PATH --since REF``):
both states' graphs (``igg.mapping.since``) lifted to modules and packages and compared by name: what the
change added, with the statements behind each in the work tree, and what it removed, with their statements
in ``REF``."""

from __future__ import annotations

from collections.abc import Container

from igg.rules.check import hop
from igg.rules.cycles import lift
from igg.rules.depgraph import DepGraph, Edge
from igg.rules.report import DependencyChange

LEVELS = ("module", "package")

_End = tuple[str, str] | None
"""A lifted node's id and name (None: the dependency counts at no node of the level)."""
_Pair = tuple[str, str]
_Lifted = dict[str, tuple[_End, _End]]
"""Each node -> the node its dependencies count for at the module and at the package level."""
_Behind = dict[_Pair, list[Edge]]


def dependencies(
    graph: DepGraph, sources: Container[str] | None = None
) -> tuple[_Lifted, tuple[set[_Pair], set[_Pair]]]:
    """Every dependency lifted to the module level, then to the package level, as (source name, target name)
    (a table is its own node, an external package too), in one pass over the edges, each node lifted and named
    once; and the lift of each node (``behind`` reads the edges behind a dependency with it). Containment is
    no dependency. ``sources``: only the edges out of these nodes."""
    lifted: _Lifted = {}
    modules: set[_Pair] = set()
    packages: set[_Pair] = set()
    find, module, package = lifted.get, modules.add, packages.add
    for source_id, kind, target_id in graph.edges:
        if kind == "CONTAINS" or sources is not None and source_id not in sources:
            continue
        source = find(source_id)
        if source is None:
            source = lifted[source_id] = _lifted(graph, source_id)
        target = find(target_id)
        if target is None:
            target = lifted[target_id] = _lifted(graph, target_id)
        (a, p), (b, q) = source, target
        if a is not None and b is not None and a[0] != b[0]:
            module((a[1], b[1]))
        if p is not None and q is not None and p[0] != q[0]:
            package((p[1], q[1]))
    return lifted, (modules, packages)


def behind(graph: DepGraph, lifted: _Lifted, wanted: tuple[set[_Pair], set[_Pair]]) -> list[_Behind]:
    """The edges behind each dependency of ``wanted`` (at the module level, then at the package level), in
    the graph's order (``lifted``: ``dependencies``'s lift of each node)."""
    out: list[_Behind] = [{}, {}]
    sources = [{a for a, _ in pairs} for pairs in wanted]
    if not any(sources):
        return out
    for edge in graph.edges.values():
        if edge.type == "CONTAINS":
            continue
        source, target = lifted.get(edge.source), lifted.get(edge.target)
        if source is None or target is None:
            continue  # an edge ``dependencies`` left out
        for level in (0, 1):
            a, b = source[level], target[level]
            if a is not None and b is not None and a[1] in sources[level] and (a[1], b[1]) in wanted[level]:
                if a[0] != b[0]:
                    out[level].setdefault((a[1], b[1]), []).append(edge)
    return out


def _counting_for(graph: DepGraph, within: set[str]) -> set[str] | None:
    """The nodes whose dependencies count, at the module or the package level, for a node of ``within`` or
    for the package it counts for: those nodes themselves and what they hold, down to the next package. None
    when a node left out has the name of one of them (dependencies are compared by name)."""
    tops = {
        up for n in within for level in ("module", "package") if (up := lift(graph, n, level)) is not None
    }
    held: dict[str, list[str]] = {}
    for child, parent in graph.container.items():
        held.setdefault(parent, []).append(child)
    out, todo = set(tops), list(tops)
    while todo:
        for child in held.get(todo.pop(), ()):
            node = graph.nodes.get(child)
            if child not in out and (node is None or node.type != "Package"):
                out.add(child)
                todo.append(child)
    names = {graph.name(t) for t in tops}  # a Python package and its __init__ module share one: both here
    if any(node.name in names and key not in out for key, node in graph.nodes.items()):
        return None
    return out


def _lifted(graph: DepGraph, node_id: str) -> tuple[_End, _End]:
    """The node a dependency of ``node_id`` counts for at the module and the package level, with its name
    (``lift``'s; a table is its own node)."""
    module = lift(graph, node_id, "module")
    if module is None:
        node = graph.nodes.get(node_id)
        if node is None or node.type != "DatabaseTable":
            return None, None
        return (node_id, node.name), (node_id, node.name)
    package = module if graph.nodes[module].type == "Package" else graph.container.get(module, module)
    return (module, graph.name(module)), (package, graph.name(package))


def changes(
    base: DepGraph, head: DepGraph, within: set[str] | None = None
) -> tuple[list[DependencyChange], list[DependencyChange]]:
    """(added, removed) dependencies from ``base`` to ``head``, module level then package level, by name:
    both graphs' dependencies compared as sets, the edges behind them read for those that differ alone.

    ``within``: the modules whose edges out alone may differ between the graphs (every other edge is in both,
    its ends lifted and named alike: a kept graph and the changed files' imports spliced into it,
    ``igg.mapping.spliced``); only the dependencies that count for them or their packages are compared,
    unless a name of those is another node's too."""
    sources = None
    if within is not None:
        sources = _counting_for(base, within)
        also = _counting_for(head, within) if sources is not None else None
        sources = sources | also if sources is not None and also is not None else None
    (lifted_base, before), (lifted_head, after) = dependencies(base, sources), dependencies(head, sources)
    added: list[DependencyChange] = []
    removed: list[DependencyChange] = []
    new = behind(head, lifted_head, (after[0] - before[0], after[1] - before[1]))
    gone = behind(base, lifted_base, (before[0] - after[0], before[1] - after[1]))
    for i, level in enumerate(LEVELS):
        added += _listed(new[i], head, level)
        removed += _listed(gone[i], base, level)
    return added, removed


def _listed(pairs: dict[_Pair, list[Edge]], graph: DepGraph, level: str) -> list[DependencyChange]:
    """The dependencies ``pairs`` (of ``graph``, at ``level``), by name, with the statements behind each."""
    return [
        DependencyChange(
            level=level,  # type: ignore[arg-type]
            source=a,
            target=b,
            edges=[hop(graph, e) for e in edges],
        )
        for (a, b), edges in sorted(pairs.items())
    ]
