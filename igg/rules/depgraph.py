"""The graph rules read: nodes by id with a dotted name, edges with the file and line of their statement.

Built from any ``GraphState`` (a stored session, a fresh map) with ``from_state``, or by ``igg.codemap``
straight from the linked code model. A node's *name* is what selectors match: a module's or package's dotted
name, a type's qualified name, ``Owner.method`` and ``module.function``, a table's name. A node's *container*
is the node that CONTAINS it (module of a type, type of a method), which is how ``levels`` lift a member's
edge to its module, package or type.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from igg.graph.state import GraphState

TYPE_NODES = frozenset({"Class", "Interface", "Enum"})
"""The node types of the ``type`` level."""


@dataclass(frozen=True, slots=True)
class Node:
    """A node as rules see it."""

    id: str
    type: str
    name: str
    file: str | None = None
    line: int | None = None
    external: bool = False


@dataclass(frozen=True, slots=True)
class Edge:
    """An edge as rules see it: where its statement stands (``line`` None when the graph does not say)."""

    source: str
    type: str
    target: str
    file: str | None = None
    line: int | None = None
    type_checking: bool = False
    """Only type checkers read it (``type_checking: true`` on the map's edge: an import under ``if
    TYPE_CHECKING:``, a TypeScript ``import type``)."""


@dataclass(kw_only=True)
class DepGraph:
    """Nodes by id and edges by (source, type, target); rules read the edges in statement order
    (``of_types``)."""

    nodes: dict[str, Node] = field(default_factory=dict)
    edges: dict[tuple[str, str, str], Edge] = field(default_factory=dict)
    container: dict[str, str] = field(default_factory=dict)
    """Node id -> the id of the node that CONTAINS it."""
    _ordered: dict[frozenset[str], tuple[int, list[Edge]]] = field(
        default_factory=dict, repr=False, compare=False
    )
    """Edges of a set of types in statement order (``of_types``), with the edge count they were sorted at."""

    def add_node(self, node: Node) -> None:
        """Add ``node`` (a second node of the same id is ignored)."""
        self.nodes.setdefault(node.id, node)

    def add_edge(self, edge: Edge) -> None:
        """Add ``edge``; CONTAINS also records the container. The first statement of a dependency stays."""
        key = (edge.source, edge.type, edge.target)
        if key in self.edges:
            return
        self.edges[key] = edge
        if edge.type == "CONTAINS":
            self.container.setdefault(edge.target, edge.source)

    def without_type_checking(self) -> DepGraph:
        """The same graph less its type-only edges (import-linter's ``exclude_type_checking_imports``)."""
        edges = {k: e for k, e in self.edges.items() if not e.type_checking}
        return DepGraph(nodes=self.nodes, edges=edges, container=self.container)

    def of_types(self, types: Iterable[str]) -> list[Edge]:
        """The edges of these types in the order of their statements: by file and line, then by the names of
        their ends and their type. It is the same whatever order the graph was built in (a tree's map, a
        stored session, an updated one), so a rule lists its violations in one order for all of them. Each
        set of types is sorted once (edges are only ever added)."""
        wanted = frozenset(types)
        cached = self._ordered.get(wanted)
        if cached is None or cached[0] != len(self.edges):
            name = self.name
            ordered = sorted(
                (e for e in self.edges.values() if e.type in wanted),
                key=lambda e: (e.file or "", e.line or 0, name(e.source), e.type, name(e.target)),
            )
            cached = self._ordered[wanted] = (len(self.edges), ordered)
        return list(cached[1])

    def name(self, node_id: str) -> str:
        """The node's dotted name (its id when it is not in the graph)."""
        node = self.nodes.get(node_id)
        return node.name if node is not None else node_id

    def enclosing(self, node_id: str, types: Iterable[str]) -> str | None:
        """The node itself or its nearest container whose type is one of ``types`` (None: none is)."""
        wanted = set(types)
        seen = 0
        current: str | None = node_id
        while current is not None and seen < 64:  # containment is a tree; the bound guards a damaged graph
            node = self.nodes.get(current)
            if node is not None and node.type in wanted:
                return current
            current = self.container.get(current)
            seen += 1
        return None


def node_name(node_type: str, props: dict[str, Any], fallback: str) -> str:
    """The dotted name selectors match for a node of ``node_type`` with ``props``."""
    if node_type in TYPE_NODES and props.get("qualified_name"):
        qualified = str(props["qualified_name"])
        package = props.get("package")
        return qualified if not package or qualified.startswith(f"{package}.") else f"{package}.{qualified}"
    if node_type == "Method" and props.get("owner"):
        return f"{props['owner']}.{props.get('name', fallback)}"
    if node_type == "Function" and props.get("package"):
        name = str(props.get("name", fallback))
        return name if name.startswith(f"{props['package']}.") else f"{props['package']}.{name}"
    return str(props.get("name", fallback))


def make_node(node_id: str, node_type: str, props: dict[str, Any]) -> Node:
    """A ``Node`` from a graph node's type and properties."""
    file = props.get("path") if node_type in ("Module", "Route") else props.get("file")
    line = props.get("line")
    return Node(
        id=node_id,
        type=node_type,
        name=node_name(node_type, props, node_id),
        file=str(file) if file else None,
        line=line if isinstance(line, int) else None,
        external=bool(props.get("external", False)),
    )


Lines = Callable[[str, str, str], tuple[str, int] | None]
"""(source id, edge type, target id) -> (file, line) of the statement behind the edge, or None when
unknown."""


def from_state(state: GraphState, lines: Lines | None = None) -> DepGraph:
    """The rules' view of ``state``; ``lines`` locates each edge's statement (else the edge's own ``file``
    and ``line`` properties, else its source node's file and no line)."""
    graph = DepGraph()
    for node_id, data in state.nodes.items():
        graph.add_node(make_node(node_id, data["type"], data["properties"]))
    for _, (source, target, data) in state.edge_rows():
        edge_type = data["type"]
        found = lines(source, edge_type, target) if lines is not None else None
        if found is None:
            props = data["properties"]
            line = props.get("line")
            graph.add_edge(
                Edge(
                    source,
                    edge_type,
                    target,
                    file=props.get("file") or graph.nodes[source].file,
                    line=line if isinstance(line, int) else None,
                    type_checking=props.get("type_checking") is True,
                )
            )
        else:
            graph.add_edge(
                Edge(
                    source,
                    edge_type,
                    target,
                    file=found[0],
                    line=found[1] or None,
                    type_checking=data["properties"].get("type_checking") is True,
                )
            )
    return graph
