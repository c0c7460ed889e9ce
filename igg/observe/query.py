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

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from igg.graph.grounding import grounding_of
from igg.graph.identity import normalize_reference
from igg.graph.state import GraphState
from igg.models.validtime import HISTORY, TimeError, holds, parse_time, properties_at
from igg.observe.filters import find_candidates, property_filter, show_filter
from igg.observe.graphview import GraphView
from igg.observe.query_models import (
    DEFAULT_BUDGET,
    QUERY_ADAPTER,
    Direction,
    FindQuery,
    NeighboursQuery,
    PathQuery,
    Query,
    QueryAnswer,
    QueryError,
)
from igg.observe.tokens import line_cost

__all__ = [
    "DEFAULT_BUDGET",
    "MAX_VISITS",
    "QUERY_ADAPTER",
    "RESPONSE_VISITS",
    "Direction",
    "FindQuery",
    "NeighboursQuery",
    "PathQuery",
    "Query",
    "QueryAnswer",
    "QueryError",
    "find",
    "neighbours",
    "path",
    "run_query",
]

MAX_VISITS = 20_000
"""Most edges (``neighbours``) or nodes (``path``) one query visits. A walk stops once its answer is written
and this many are visited, or as soon as the cap is reached: its answer then says ``truncated`` and the
``left out`` counts are lower bounds. The work of a query is proportional to its answer, bounded by this."""

RESPONSE_VISITS = 200_000
"""Most visits all the QUERY actions of one response may make together (``QUERY_BUDGET_EXHAUSTED`` after)."""


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
    closing = _neighbours_closing(omitted_nodes, omitted_edges, matched, truncated, cap, q.token_budget)
    if closing:
        out.lines.append(closing)
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


def _neighbours_closing(
    omitted_nodes: int, omitted_edges: int, matched: int, truncated: bool, cap: int, budget: int
) -> str:
    """The last line of a ``neighbours`` answer: what was left out and how to narrow, or that there was
    nothing to show ('' when everything was shown)."""
    if truncated:
        return (
            f"left out: at least {omitted_nodes} nodes, {omitted_edges} edges (the walk stopped after "
            f"visiting {cap} edges); narrow with edge_types, direction or a smaller depth."
        )
    if omitted_nodes or omitted_edges:
        return (
            f"left out: {omitted_nodes} nodes, {omitted_edges} edges (token budget {budget}); "
            "narrow with edge_types, direction or a smaller depth, or raise token_budget."
        )
    return "(no neighbours)" if matched == 0 else ""


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
    tests = [property_filter(k, v) for k, v in q.where.items()]
    at = _at(q.as_of)
    # as of a time, values are those of then: the indexes (of today's values) cannot answer, a scan does
    candidates = find_candidates(state, q) if at is None else None
    view = GraphView(state)
    out = _Writer(q.token_budget, view, at)
    shown_where = (
        ", ".join(
            [
                *(f"{k} {show_filter(v)}" for k, v in q.where.items()),
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
