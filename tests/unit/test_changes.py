"""``igg.mapping.changes``: what a commit range did to the dependencies, computed in one pass per graph with
each node lifted once and the edges behind a dependency read for those that differ alone, pinned to the plain
definition (every edge lifted to each level and grouped by name, both graphs compared) on random graphs of
packages, modules, symbols, tables and outside packages, names shared between nodes included; and compared
for the modules whose edges out alone changed (a kept graph with a file's imports spliced into it), pinned to
the comparison of the whole graphs."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from igg.mapping.changes import LEVELS, changes
from igg.rules.check import hop
from igg.rules.cycles import lift
from igg.rules.depgraph import DepGraph, Edge, Node
from igg.rules.report import DependencyChange

NODES = [
    Node("package:a", "Package", "a"),
    Node("package:b", "Package", "b"),
    Node("package:x", "Package", "x", external=True),
    Node("package:c", "Package", "a"),  # a package's name another package has
    Node("module:c/k.py", "Module", "a.k", "c/k.py"),
    Node("module:a/m.py", "Module", "a.m", "a/m.py"),
    Node("module:a/n.py", "Module", "a.n", "a/n.py"),
    Node("module:b/m.py", "Module", "b.m", "b/m.py"),
    Node("module:b/dup.py", "Module", "a.m", "b/dup.py"),  # a name another node has
    Node("module:b/__init__.py", "Module", "b", "b/__init__.py"),  # its package's name, as in Python
    Node("module:top.py", "Module", "top", "top.py"),  # in no package
    Node("class:a.m.C", "Class", "a.m.C", "a/m.py"),
    Node("function:b.m.f", "Function", "b.m.f", "b/m.py"),
    Node("table:users", "DatabaseTable", "users"),
]
CONTAINS = [
    ("package:a", "module:a/m.py"),
    ("package:a", "module:a/n.py"),
    ("package:b", "module:b/m.py"),
    ("package:b", "module:b/dup.py"),
    ("package:b", "module:b/__init__.py"),
    ("package:c", "module:c/k.py"),
    ("module:a/m.py", "class:a.m.C"),
    ("module:b/m.py", "function:b.m.f"),
]
IDS = [n.id for n in NODES]
EDGES = st.lists(
    st.tuples(st.sampled_from(IDS), st.sampled_from(["IMPORTS", "CALLS", "READS"]), st.sampled_from(IDS)),
    max_size=14,
)


def graph(edges: list[tuple[str, str, str]], nested: bool) -> DepGraph:
    g = DepGraph()
    for node in NODES:
        g.add_node(node)
    for source, target in CONTAINS + ([("package:a", "package:b")] if nested else []):
        g.add_edge(Edge(source, "CONTAINS", target))
    for i, (source, kind, target) in enumerate(edges):
        g.add_edge(Edge(source, kind, target, g.nodes[source].file, i + 1))
    return g


def plainly(base: DepGraph, head: DepGraph) -> tuple[list[DependencyChange], list[DependencyChange]]:
    def dependencies(g: DepGraph, level: str) -> dict[tuple[str, str], list[Edge]]:
        out: dict[tuple[str, str], list[Edge]] = {}
        for e in g.edges.values():
            if e.type == "CONTAINS":
                continue
            ends = []
            for end in (e.source, e.target):
                up = lift(g, end, level)  # type: ignore[arg-type]
                ends.append(up if up is not None else (end if g.nodes[end].type == "DatabaseTable" else None))
            a, b = ends
            if a is not None and b is not None and a != b:
                out.setdefault((g.name(a), g.name(b)), []).append(e)
        return out

    def only_in(these, others, g, level) -> list[DependencyChange]:  # type: ignore[no-untyped-def]
        return [
            DependencyChange(level=level, source=a, target=b, edges=[hop(g, e) for e in edges])
            for (a, b), edges in sorted(these.items())
            if (a, b) not in others
        ]

    added: list[DependencyChange] = []
    removed: list[DependencyChange] = []
    for level in LEVELS:
        before, after = dependencies(base, level), dependencies(head, level)
        added += only_in(after, before, head, level)
        removed += only_in(before, after, base, level)
    return added, removed


@settings(max_examples=300)
@given(EDGES, EDGES, st.booleans(), st.booleans())
def test_changes_are_the_plain_definitions(
    then: list[tuple[str, str, str]], now: list[tuple[str, str, str]], nested_then: bool, nested_now: bool
) -> None:
    base, head = graph(then, nested_then), graph(then[: len(then) // 2] + now, nested_now)
    assert changes(base, head) == plainly(base, head)


MODULES = [n.id for n in NODES if n.type == "Module"]


@settings(max_examples=300)
@given(
    EDGES,
    st.sets(st.sampled_from(MODULES), min_size=1, max_size=2),
    st.lists(
        st.tuples(st.integers(0, 9), st.sampled_from(["IMPORTS", "CALLS"]), st.sampled_from(IDS)), max_size=6
    ),
    st.booleans(),
)
def test_changes_within_the_modules_changed_are_those_of_the_whole_graphs(
    then: list[tuple[str, str, str]], within: set[str], now: list[tuple[int, str, str]], nested: bool
) -> None:
    """``head`` is ``base`` with the edges out of the modules ``within`` (and out of what they hold) taken
    away and others put there, as a splice of their files' imports leaves a kept graph."""
    base = graph(then, nested)
    mine = sorted(n for n in IDS if n in within or base.enclosing(n, ("Module",)) in within)
    head = graph(
        [e for e in then if e[0] not in mine] + [(mine[i % len(mine)], k, t) for i, k, t in now], nested
    )
    assert changes(base, head, within) == changes(base, head) == plainly(base, head)
