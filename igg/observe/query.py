"""Budgeted read-only queries over the graph: ``neighbours``, ``path`` and ``find``.

An agent that cannot see the whole graph (the observation shows what fits its budget) asks these instead.
Every answer is compact text in the observation's own notation (node lines ``"AuthService" package=...``,
edge lines ``"A" -CALLS-> "B"``, values escaped the same way) plus the same data as JSON, and **never exceeds
its token budget**: what did not fit is counted and named in a last ``left out:`` line with the way to
narrow the question. Nothing here changes the graph.

- ``neighbours``: the nodes within ``depth`` hops (1-5) of one node, following ``edge_types`` (default all)
  in ``direction`` (``out``, ``in`` or ``both``), nearest first, each with the edge that reached it.
- ``path``: a shortest path (fewest edges) between two nodes, following edges forwards (``direction: out``)
  or either way (``both``); breadth-first from both ends, so its cost follows the path's neighbourhood, not
  the graph.
- ``find``: nodes of a type (or any type) whose properties match every filter: a plain value is equality,
  ``{"contains": "auth"}`` a case-insensitive substring, ``{"in": [...]}`` one of several values,
  ``{"gt"|"ge"|"lt"|"le": 5}`` a comparison, ``{"exists": true}`` presence. A filter on an identity key
  with a plain value is answered from the identity index; another filter (equality, ``in``, a comparison,
  ``contains``) from a property index built on first use and kept up to date (``igg.graph.properties``);
  only ``exists`` alone scans the node table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from igg.graph.grounding import Grounding, grounding_of
from igg.graph.identity import normalize_reference
from igg.graph.properties import property_index
from igg.graph.state import GraphState
from igg.models.common import PropertyValue
from igg.models.validtime import HISTORY, TimeError, holds, parse_time, properties_at
from igg.observe.escape import quote
from igg.observe.graphview import GraphView
from igg.observe.tokens import estimate_tokens, line_cost

DEFAULT_BUDGET = 1000

MAX_VISITS = 20_000
"""Most edges (``neighbours``) or nodes (``path``) one query visits. A walk stops once its answer is written
and this many are visited, or as soon as the cap is reached: its answer then says ``truncated`` and the
``left out`` counts are lower bounds. The work of a query is proportional to its answer, bounded by this."""

RESPONSE_VISITS = 200_000
"""Most visits all the QUERY actions of one response may make together (``QUERY_BUDGET_EXHAUSTED`` after)."""

Direction = Literal["out", "in", "both"]

_NodeRef = Annotated[
    dict[str, PropertyValue],
    Field(
        min_length=1,
        description='Properties matching exactly one node, e.g. {"name": "AuthService"}; add "label" '
        "(the node type) to disambiguate.",
    ),
]
_Budget = Annotated[
    int,
    Field(
        default=DEFAULT_BUDGET,
        ge=100,
        le=50_000,
        description="Estimated tokens the answer may use (100-50000).",
    ),
]
_AsOf = Annotated[
    str | None, Field(default=None, description="Only the facts valid at this time (ISO 8601).")
]


class _Query(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class NeighboursQuery(_Query):
    """The nodes within ``depth`` hops of one node, with the edges that reach them."""

    query: Literal["neighbours"] = "neighbours"
    node: _NodeRef
    depth: int = Field(default=1, ge=1, le=5, description="Hops to follow (1-5).")
    edge_types: list[str] | None = Field(
        default=None, description="Follow only these edge types (default all)."
    )
    direction: Direction = Field(default="both", description="out: edges from the node; in: into it; both.")
    token_budget: _Budget = DEFAULT_BUDGET
    as_of: _AsOf = None


class PathQuery(_Query):
    """A shortest path (fewest edges) from one node to another."""

    query: Literal["path"] = "path"
    from_: _NodeRef = Field(alias="from")
    to: _NodeRef
    edge_types: list[str] | None = Field(
        default=None, description="Follow only these edge types (default all)."
    )
    direction: Literal["out", "both"] = Field(
        default="out", description="out: follow edges forwards only; both: either way."
    )
    token_budget: _Budget = DEFAULT_BUDGET
    as_of: _AsOf = None


class FindQuery(_Query):
    """Nodes of a type whose properties match every filter."""

    query: Literal["find"] = "find"
    label: str | None = Field(default=None, description="The node type (default any).")
    where: dict[str, PropertyValue | dict[str, Any]] = Field(
        default_factory=dict,
        description='Property filters: a value (equality) or one operator: {"contains": "x"}, {"in": [..]}, '
        '{"gt"|"ge"|"lt"|"le": n}, {"exists": true}.',
    )
    grounded: Grounding | None = Field(
        default=None, description="Only nodes with evidence found, not found, or none."
    )
    limit: int = Field(default=100, ge=1, le=10_000, description="Most nodes to list (budget permitting).")
    token_budget: _Budget = DEFAULT_BUDGET
    as_of: _AsOf = None


Query = Annotated[NeighboursQuery | PathQuery | FindQuery, Field(discriminator="query")]
QUERY_ADAPTER: TypeAdapter[NeighboursQuery | PathQuery | FindQuery] = TypeAdapter(Query)
_OPERATORS = ("contains", "in", "gt", "ge", "lt", "le", "exists")


class QueryError(ValueError):
    """A query that cannot be answered (unknown node or type, bad filter); ``code`` is a verdict code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(kw_only=True)
class QueryAnswer:
    """A budgeted answer: text lines, the shown nodes and edges as data, and what was left out."""

    query: str
    lines: list[str]
    nodes: list[dict[str, Any]] = field(default_factory=list)
    edges: list[dict[str, Any]] = field(default_factory=list)
    matched_nodes: int = 0
    """Nodes the question matched (for ``find`` and ``neighbours``), shown or not."""
    omitted_nodes: int = 0
    omitted_edges: int = 0
    complete: bool = True
    """False when something was left out (the ``left out`` line says what and how to narrow)."""
    token_budget: int = DEFAULT_BUDGET
    truncated: bool = False
    """The walk stopped at its visit cap (``MAX_VISITS``): the counts of what was left out are lower
    bounds."""
    visited: int = 0
    """Edges or nodes the answer cost to find (counted against a response's ``RESPONSE_VISITS``)."""

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text)

    def to_dict(self) -> dict[str, Any]:
        """JSON form (tool answers)."""
        return {
            "query": self.query,
            "text": self.text,
            "tokens": self.tokens,
            "token_budget": self.token_budget,
            "complete": self.complete,
            "matched_nodes": self.matched_nodes,
            "omitted_nodes": self.omitted_nodes,
            "omitted_edges": self.omitted_edges,
            "nodes": self.nodes,
            "edges": self.edges,
            "truncated": self.truncated,
        }


def run_query(
    state: GraphState,
    query: NeighboursQuery | PathQuery | FindQuery | dict[str, Any],
    *,
    visits: int = MAX_VISITS,
) -> QueryAnswer:
    """Answer one query (a model, or its JSON form) visiting at most ``visits`` edges or nodes (capped at
    ``MAX_VISITS``). Raises ``QueryError`` for unanswerable questions."""
    if isinstance(query, dict):
        query = QUERY_ADAPTER.validate_python(query)
    cap = max(1, min(visits, MAX_VISITS))
    if query.as_of is not None:
        try:
            parse_time(query.as_of)
        except TimeError as exc:
            raise QueryError("INVALID_QUERY", f"as_of: {exc}.") from None
    if isinstance(query, NeighboursQuery):
        return neighbours(state, query, cap=cap)
    if isinstance(query, PathQuery):
        return path(state, query, cap=cap)
    return find(state, query)


# ---- pieces shared by the three ------------------------------------------------------------------------
class _Writer:
    """Lines within a budget; reserves room for the closing ``left out`` line."""

    RESERVE = 60

    def __init__(self, budget: int, view: GraphView, at: datetime | None = None) -> None:
        self.at = at
        self.left = budget - self.RESERVE
        self.lines: list[str] = []
        self.view = view
        self.nodes: list[dict[str, Any]] = []
        self.edges: list[dict[str, Any]] = []
        self.full = False

    def add(self, line: str) -> bool:
        cost = line_cost(line)
        if self.full or cost > self.left:
            self.full = True
            return False
        self.left -= cost
        self.lines.append(line)
        return True

    def node(self, node_id: str, prefix: str = "") -> bool:
        state = self.view.state
        t = state.node_type(node_id)
        props = state.node_properties(node_id)
        if self.at is not None and HISTORY in props:
            props = properties_at(props, self.at)
        if not self.add(f"{prefix}{t} {self.view.node_line(node_id, props)}"):
            return False
        self.nodes.append({"id": node_id, "type": t, "properties": props})
        return True

    def edge_data(self, edge_id: str, source: str, target: str, edge_type: str) -> None:
        self.edges.append({"id": edge_id, "type": edge_type, "from": source, "to": target})


def _resolve(state: GraphState, ref: dict[str, Any], role: str) -> str:
    """One node id for a reference, as the act step resolves them (identity values normalised first)."""
    label = ref.get("label")
    if label is not None and label not in state.schema.node_types:
        raise QueryError(
            "UNKNOWN_NODE_TYPE",
            f"{role}: node type {label!r} is not in the schema; allowed: "
            f"{', '.join(state.schema.node_type_list)}.",
        )
    ref = normalize_reference(ref, state.schema.types_by_identity_key)
    found = state.find_nodes(ref)
    if len(found) == 1:
        return found[0]
    if not found:
        close = state.close_matches(ref)
        hint = f" Close matches: {'; '.join(close)}." if close else ""
        raise QueryError("NODE_NOT_FOUND", f"{role}: no node matches {ref}.{hint}")
    names = "; ".join(f"{state.describe(n)} ({n})" for n in found[:5])
    raise QueryError(
        "AMBIGUOUS_REFERENCE",
        f'{role}: {ref} matches {len(found)} nodes: {names}. Add "label" or more identifying properties.',
    )


def _check_edge_types(state: GraphState, edge_types: Iterable[str] | None) -> frozenset[str] | None:
    if edge_types is None:
        return None
    unknown = [t for t in edge_types if t not in state.schema.edge_types]
    if unknown:
        raise QueryError(
            "UNKNOWN_EDGE_TYPE",
            f"edge type {unknown[0]!r} is not in the schema; allowed edge types: "
            f"{', '.join(state.schema.edge_type_list) or '(none)'}.",
        )
    return frozenset(edge_types)


def _steps(
    state: GraphState, node: str, types: frozenset[str] | None, direction: str, at: datetime | None = None
) -> Iterable[tuple[str, str, str, str, bool]]:
    """(neighbour, edge id, edge type, source, forward) for each edge of ``node`` that may be followed
    (``at``: valid then, to a node valid then)."""
    if direction in ("out", "both"):
        for other, keyed in state.succ[node].items():
            for eid, data in keyed.items():
                if (types is None or data["type"] in types) and (
                    at is None or _holds(state, data, other, at)
                ):
                    yield other, eid, data["type"], node, True
    if direction in ("in", "both"):
        for other, keyed in state.pred[node].items():
            for eid, data in keyed.items():
                if (types is None or data["type"] in types) and (
                    at is None or _holds(state, data, other, at)
                ):
                    yield other, eid, data["type"], other, False


def _holds(state: GraphState, data: dict[str, Any], other: str, at: datetime) -> bool:
    """An edge (its data) valid at ``at`` whose other end is valid then too."""
    return holds(data["properties"], at) and holds(state.nodes[other]["properties"], at)


def _next_nodes(
    state: GraphState, node: str, types: frozenset[str] | None, direction: str, at: datetime | None = None
) -> Iterable[str]:
    """Neighbours reachable over one followable edge (no edge data: the path search's hot loop)."""
    for adjacency in (
        (state.succ,)
        if direction == "out"
        else (state.pred,)
        if direction == "in"
        else (state.succ, state.pred)
    ):
        if at is not None:
            for other, keyed in adjacency[node].items():
                if any(
                    (types is None or d["type"] in types) and _holds(state, d, other, at)
                    for d in keyed.values()
                ):
                    yield other
        elif types is None:
            yield from adjacency[node]
        else:
            for other, keyed in adjacency[node].items():
                if any(d["type"] in types for d in keyed.values()):
                    yield other


def _edge_line(view: GraphView, a: str, edge_type: str, b: str, forward: bool) -> str:
    arrow = f" -{edge_type}-> " if forward else f" <-{edge_type}- "
    return view.ref(a)[0] + arrow + view.ref(b)[0]


def _at(as_of: str | None) -> datetime | None:
    return parse_time(as_of)[1] if as_of is not None else None


# ---- neighbours ----------------------------------------------------------------------------------------
def neighbours(state: GraphState, q: NeighboursQuery, *, cap: int = MAX_VISITS) -> QueryAnswer:
    """Nodes within ``q.depth`` hops of ``q.node``, nearest first, each with the edge that reached it."""
    start = _resolve(state, q.node, "node")
    types = _check_edge_types(state, q.edge_types)
    at = _at(q.as_of)
    view = GraphView(state)
    out = _Writer(q.token_budget, view, at)
    how = f"depth {q.depth}, {q.direction}, edge types {', '.join(sorted(types)) if types else 'all'}"
    how += f", as of {q.as_of}" if at is not None else ""
    shown_start = properties_at(state.nodes[start]["properties"], at) if at is not None else None
    out.add(f"neighbours of {state.node_type(start)} {view.node_line(start, shown_start)} ({how}):")
    if at is not None and not holds(state.nodes[start]["properties"], at):
        out.lines.append(f"(it did not hold at {q.as_of})")
        return QueryAnswer(query="neighbours", lines=out.lines, token_budget=q.token_budget)
    seen = {start: 0}
    edges_seen: set[str] = set()
    frontier = [start]
    shown_nodes = shown_edges = matched = edges_total = 0
    truncated = False
    # breadth-first; once the writer is full the walk only counts, and stops at the visit cap
    for depth in range(1, q.depth + 1):
        following: list[str] = []
        header = False
        for node in frontier:
            for other, eid, etype, source, forward in _steps(state, node, types, q.direction, at):
                if eid in edges_seen:
                    continue  # already listed from its other end
                if len(edges_seen) >= cap:
                    truncated = True
                    break
                edges_seen.add(eid)
                edges_total += 1
                new = other not in seen
                if new:
                    seen[other] = depth
                    following.append(other)
                    matched += 1
                if not out.full:
                    if not header:
                        header = out.add(f"depth {depth}:")
                    if out.add(_edge_line(view, node, etype, other, forward)):
                        shown_edges += 1
                        out.edge_data(eid, source, other if forward else node, etype)
                        if new and out.node(other, "  "):
                            shown_nodes += 1
            if truncated:
                break
        frontier = following
        if truncated:
            break
    omitted_nodes, omitted_edges = matched - shown_nodes, edges_total - shown_edges
    if truncated:
        out.lines.append(
            f"left out: at least {omitted_nodes} nodes, {omitted_edges} edges (the walk stopped after "
            f"visiting {cap} edges); narrow with edge_types, direction or a smaller depth."
        )
    elif omitted_nodes or omitted_edges:
        out.lines.append(
            f"left out: {omitted_nodes} nodes, {omitted_edges} edges (token budget {q.token_budget}); "
            "narrow with edge_types, direction or a smaller depth, or raise token_budget."
        )
    elif matched == 0:
        out.lines.append("(no neighbours)")
    return QueryAnswer(
        query="neighbours",
        lines=out.lines,
        nodes=out.nodes,
        edges=out.edges,
        matched_nodes=matched,
        omitted_nodes=omitted_nodes,
        omitted_edges=omitted_edges,
        complete=not (omitted_nodes or omitted_edges or truncated),
        token_budget=q.token_budget,
        truncated=truncated,
        visited=len(edges_seen),
    )


# ---- path ----------------------------------------------------------------------------------------------
def path(state: GraphState, q: PathQuery, *, cap: int = MAX_VISITS) -> QueryAnswer:
    """A shortest path from ``q.from_`` to ``q.to`` (bidirectional breadth-first search)."""
    source = _resolve(state, q.from_, "from")
    target = _resolve(state, q.to, "to")
    types = _check_edge_types(state, q.edge_types)
    at = _at(q.as_of)
    view = GraphView(state)
    out = _Writer(q.token_budget, view, at)
    steps, visited = _shortest(state, source, target, types, q.direction, cap, at)
    a, b = view.ref(source)[0], view.ref(target)[0]
    if steps is None:
        truncated = visited >= cap
        why = (
            f"within {cap} visited nodes (the search stopped there; narrow with edge_types)"
            if truncated
            else f"(direction {q.direction}, edge types {', '.join(sorted(types)) if types else 'all'})"
        )
        out.add(f"no path from {a} to {b} {why}.")
        return QueryAnswer(
            query="path",
            lines=out.lines,
            token_budget=q.token_budget,
            truncated=truncated,
            complete=not truncated,
            visited=visited,
        )
    out.add(f"shortest path from {a} to {b}: {len(steps)} edge{'s' * (len(steps) != 1)}")
    out.node(source, "  ")
    shown = 0
    for node, other, eid, etype, forward in steps:
        if not out.add(_edge_line(view, node, etype, other, forward)):
            break
        out.edge_data(eid, node if forward else other, other if forward else node, etype)
        out.node(other, "  ")
        shown += 1
    omitted = len(steps) - shown
    if omitted:
        out.lines.append(
            f"left out: the last {omitted} edges of the path (token budget {q.token_budget}); "
            "raise token_budget, or ask for a path from the last node shown."
        )
    return QueryAnswer(
        query="path",
        lines=out.lines,
        nodes=out.nodes,
        edges=out.edges,
        matched_nodes=len(steps) + 1,
        omitted_nodes=omitted,
        omitted_edges=omitted,
        complete=not omitted,
        token_budget=q.token_budget,
        visited=visited,
    )


_Step = tuple[str, str, str, str, bool]  # node, next node, edge id, edge type, forward


def _shortest(
    state: GraphState,
    source: str,
    target: str,
    types: frozenset[str] | None,
    direction: str,
    cap: int = MAX_VISITS,
    at: datetime | None = None,
) -> tuple[list[_Step] | None, int]:
    """The path's steps (None: none found), and the nodes visited (the search stops at ``cap``); ``at``: over
    the facts valid then."""
    if at is not None and not all(holds(state.nodes[n]["properties"], at) for n in (source, target)):
        return None, 0
    if source == target:
        return [], 0
    back = "in" if direction == "out" else "both"
    # parent maps: node -> the node it was reached from (searching from the source / from the target)
    from_source: dict[str, str | None] = {source: None}
    to_target: dict[str, str | None] = {target: None}
    front_s, front_t = [source], [target]
    meet = None
    while front_s and front_t and meet is None and len(from_source) + len(to_target) < cap:
        # expand the smaller side one whole level
        if len(front_s) <= len(front_t):
            front, seen, other_seen, way = front_s, from_source, to_target, direction
        else:
            front, seen, other_seen, way = front_t, to_target, from_source, back
        following: list[str] = []
        for node in front:
            for other in _next_nodes(state, node, types, way, at):
                if other in seen:
                    continue
                seen[other] = node
                if other in other_seen:
                    meet = other
                    break
                following.append(other)
            if meet is not None:
                break
        if front is front_s:
            front_s = following
        else:
            front_t = following
    visited = len(from_source) + len(to_target)
    if meet is None:
        return None, visited
    chain = [meet]
    while (prev := from_source[chain[0]]) is not None:
        chain.insert(0, prev)
    while (nxt := to_target[chain[-1]]) is not None:
        chain.append(nxt)
    return [_step(state, a, b, types, direction, at) for a, b in zip(chain, chain[1:], strict=False)], visited


def _step(
    state: GraphState,
    a: str,
    b: str,
    types: frozenset[str] | None,
    direction: str,
    at: datetime | None = None,
) -> _Step:
    """The edge that joins two consecutive path nodes (forwards first)."""
    for adjacency, forward in ((state.succ, True), (state.pred, False)):
        if not forward and direction == "out":
            break
        for eid, data in adjacency[a].get(b, {}).items():
            if (types is None or data["type"] in types) and (at is None or _holds(state, data, b, at)):
                return a, b, eid, data["type"], forward
    raise AssertionError(f"no edge between consecutive path nodes {a} and {b}")


# ---- find ----------------------------------------------------------------------------------------------
def find(state: GraphState, q: FindQuery) -> QueryAnswer:
    """Nodes of ``q.label`` (or any type) matching every filter in ``q.where``."""
    if q.label is not None and q.label not in state.schema.node_types:
        raise QueryError(
            "UNKNOWN_NODE_TYPE",
            f"node type {q.label!r} is not in the schema; allowed node types: "
            f"{', '.join(state.schema.node_type_list)}.",
        )
    tests = [_filter(k, v) for k, v in q.where.items()]
    at = _at(q.as_of)
    # as of a time, values are those of then: the indexes (of today's values) cannot answer, a scan does
    candidates = _find_candidates(state, q) if at is None else None
    view = GraphView(state)
    out = _Writer(q.token_budget, view, at)
    shown_where = (
        ", ".join(
            [
                *(f"{k} {_show_filter(v)}" for k, v in q.where.items()),
                *([f"{q.grounded}"] if q.grounded else []),
            ]
        )
        or "no filter"
    )
    out.add(f"find {q.label or 'any type'} where {shown_where}" + (f", as of {q.as_of}:" if at else ":"))
    nodes = state.nodes
    test = tests[0] if len(tests) == 1 else (lambda props: all(t(props) for t in tests))
    label = q.label
    if at is not None:
        hits = [
            n
            for n, d in nodes.items()
            if (label is None or d["type"] == label)
            and holds(d["properties"], at)
            and (not tests or test(properties_at(d["properties"], at)))
        ]
    elif candidates is None:  # a scan: one comprehension over the node table is the fastest Python has
        if label is None:
            hits = [n for n, d in nodes.items() if test(d["properties"])] if tests else list(nodes)
        else:
            hits = (
                [n for n, d in nodes.items() if d["type"] == label and test(d["properties"])]
                if tests
                else list(state.nodes_of_type(label))
            )
    else:
        hits = [n for n in candidates if not tests or test(nodes[n]["properties"])]
    if q.grounded is not None:
        hits = [n for n in hits if grounding_of(nodes[n]["provenance"], nodes[n]["properties"]) == q.grounded]
    matched, shown = len(hits), 0
    for n in hits:
        if shown >= q.limit or out.full or not out.node(n):
            break
        shown += 1
    omitted = matched - shown
    if omitted:
        out.lines.append(
            f"left out: {omitted} matching nodes (limit {q.limit}, token budget "
            f"{q.token_budget}); add filters or raise limit/token_budget."
        )
    elif matched == 0:
        out.lines.append("(no matching node)")
    return QueryAnswer(
        query="find",
        lines=out.lines,
        nodes=out.nodes,
        matched_nodes=matched,
        omitted_nodes=omitted,
        complete=not omitted,
        token_budget=q.token_budget,
    )


def _find_candidates(state: GraphState, q: FindQuery) -> list[str] | None:
    """Nodes that may match, in graph order, from an index: the identity index for an identity key with a
    plain value, else a property index (``igg.graph.properties``) for the first filter it can narrow; None
    when no filter can be answered from an index (the caller scans)."""
    keyed = state.schema.types_by_identity_key
    for k, v in q.where.items():
        if k in keyed and not isinstance(v, dict) and (q.label is None or q.label in keyed[k]):
            ids = state.nodes_with(k, v)
            return [n for n in ids if q.label is None or state.node_type(n) == q.label]
    op: str = ""
    arg: Any = None
    for k, v in q.where.items():
        if isinstance(v, dict):
            op, arg = next(iter(v.items())) if len(v) == 1 else ("", None)
            if (
                op not in _INDEXED_OPERATORS
                or (op == "in" and not isinstance(arg, list))
                or (op in _COMPARISONS and (not isinstance(arg, int | float) or isinstance(arg, bool)))
            ):
                continue  # exists, or a malformed filter: _filter has said what is wrong with it already
        index = property_index(state, k)
        if index is None:
            return None
        if not isinstance(v, dict):
            ids = index.equal(v)
        elif op == "in":
            ids = index.one_of(arg)
        elif op == "contains":
            ids = index.containing(str(arg).casefold())
        else:
            ids = index.compare(op, arg)
        if q.label is None:
            return ids
        nodes = state.nodes
        return [n for n in ids if nodes[n]["type"] == q.label]
    return None


_COMPARISONS = ("gt", "ge", "lt", "le")
_INDEXED_OPERATORS = ("contains", "in", *_COMPARISONS)


def _filter(key: str, spec: Any) -> Callable[[dict[str, Any]], bool]:
    if not isinstance(spec, dict):
        kind = spec.__class__
        return lambda props: (v := props.get(key, _MISSING)) == spec and v.__class__ is kind
    if len(spec) != 1 or next(iter(spec)) not in _OPERATORS:
        raise QueryError(
            "INVALID_QUERY",
            f"filter on {key!r} must be a value or one operator object "
            f"({', '.join(_OPERATORS)}); got {spec!r}.",
        )
    op, arg = next(iter(spec.items()))
    if op == "exists":
        wanted = bool(arg)
        return lambda props: (key in props) is wanted
    if op == "contains":
        needle = str(arg).casefold()

        def contains(props: dict[str, Any]) -> bool:
            v = props.get(key)
            if v.__class__ is str:
                return needle in v.casefold()
            return isinstance(v, list) and any(needle in str(x).casefold() for x in v)

        return contains
    if op == "in":
        if not isinstance(arg, list):
            raise QueryError("INVALID_QUERY", f"filter on {key!r}: 'in' takes a list of values; got {arg!r}.")
        return lambda props: props.get(key, _MISSING) in arg
    if not isinstance(arg, int | float) or isinstance(arg, bool):
        raise QueryError("INVALID_QUERY", f"filter on {key!r}: {op!r} takes a number; got {arg!r}.")
    numbers = (int, float)
    if op == "gt":
        return lambda props: (v := props.get(key)).__class__ in numbers and v > arg
    if op == "ge":
        return lambda props: (v := props.get(key)).__class__ in numbers and v >= arg
    if op == "lt":
        return lambda props: (v := props.get(key)).__class__ in numbers and v < arg
    return lambda props: (v := props.get(key)).__class__ in numbers and v <= arg


_MISSING = object()


def _show_filter(spec: Any) -> str:
    if isinstance(spec, dict):
        op, arg = next(iter(spec.items())) if spec else ("?", None)
        return f"{op} {quote(arg, 60)}"
    return f"= {quote(spec, 60)}"
