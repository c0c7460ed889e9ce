"""What a commit range did to the dependencies (``igg check --since REF``, ``igg map-code PATH --since REF``):
both states' graphs (``igg.mapping.since``) lifted to modules and packages and compared by name: what the
change added, with the statements behind each in the work tree, and what it removed, with their statements
in ``REF``."""

from __future__ import annotations

from igg.rules.check import hop
from igg.rules.cycles import lift
from igg.rules.depgraph import DepGraph, Edge
from igg.rules.report import DependencyChange

LEVELS = ("module", "package")


def dependencies(graph: DepGraph, level: str) -> dict[tuple[str, str], list[Edge]]:
    """(source name, target name) -> the edges behind it, for every dependency lifted to ``level`` (module or
    package; a table is its own node, an external package too). Containment is no dependency."""
    out: dict[tuple[str, str], list[Edge]] = {}
    lifted: dict[str, str | None] = {}
    for edge in graph.edges.values():
        if edge.type == "CONTAINS":
            continue
        ends = []
        for end in (edge.source, edge.target):
            if end not in lifted:
                up = lift(graph, end, level)  # type: ignore[arg-type]
                lifted[end] = (
                    up if up is not None else (end if graph.nodes[end].type == "DatabaseTable" else None)
                )
            ends.append(lifted[end])
        a, b = ends
        if a is None or b is None or a == b:
            continue
        out.setdefault((graph.name(a), graph.name(b)), []).append(edge)
    return out


def changes(base: DepGraph, head: DepGraph) -> tuple[list[DependencyChange], list[DependencyChange]]:
    """(added, removed) dependencies from ``base`` to ``head``, module level then package level, by name."""
    added: list[DependencyChange] = []
    removed: list[DependencyChange] = []
    for level in LEVELS:
        before, after = dependencies(base, level), dependencies(head, level)
        added += _only_in(after, before, head, level)
        removed += _only_in(before, after, base, level)
    return added, removed


def _only_in(
    these: dict[tuple[str, str], list[Edge]],
    others: dict[tuple[str, str], list[Edge]],
    graph: DepGraph,
    level: str,
) -> list[DependencyChange]:
    """The dependencies of ``these`` (of ``graph``, at ``level``) that ``others`` lacks, by name, with the
    statements behind each."""
    return [
        DependencyChange(
            level=level,  # type: ignore[arg-type]
            source=a,
            target=b,
            edges=[hop(graph, e) for e in edges],
        )
        for (a, b), edges in sorted(these.items())
        if (a, b) not in others
    ]
