"""Derived indexes kept by GraphState's watchers: the to-do index (``open_todos``) and the property indexes
(``find`` filters) answer exactly what a full scan answers, after any mix of mutations and undos."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from igg.graph.properties import property_index
from igg.observe.query import run_query
from igg.observe.todos import open_todos, scan_todos
from igg.request.load import build_state
from tests.conftest import make_request

_RULES = [
    {"rule": "has_attribute", "node_type": "Class", "attribute": "doc"},
    {"rule": "no_isolated_nodes"},
    {"rule": "no_isolated_nodes", "node_type": "Method"},
    {"rule": "min_edges", "node_type": "Class", "edge_type": "CALLS", "direction": "out", "min": 1},
    {"rule": "min_edges", "node_type": "Class", "edge_type": "CALLS", "direction": "any", "min": 2},
    {"rule": "min_edges", "node_type": "Method", "edge_type": "READS_FROM", "direction": "in", "min": 1},
]

_VALUES = st.one_of(
    st.integers(-3, 3),
    st.sampled_from([0.5, 1.0, 2.5, float("inf")]),
    st.booleans(),
    st.sampled_from(["auth", "Auth", "AUTHZ", "log", ""]),
    st.lists(st.sampled_from(["auth", 1, "x"]), max_size=2),
)

_OPS = st.lists(
    st.tuples(
        st.sampled_from(
            [
                "class",
                "method",
                "edge",
                "edge",
                "loop",
                "del_edge",
                "del_node",
                "update",
                "unset",
                "undo",
                "undo",
            ]
        ),
        st.integers(0, 40),
        st.integers(0, 40),
        _VALUES,
    ),
    max_size=120,
)


def _state(**extra: Any) -> Any:
    schema = {
        "node_types": ["Class", "Method"],
        "edge_types": ["CALLS", "READS_FROM"],
        "required_attributes": {"Class": ["name"]},
        "completeness": _RULES,
        **extra,
    }
    request = make_request(
        schema=schema, constraints={"max_nodes": 1000, "max_edges": 5000, "allow_self_loops": True}
    )
    state, problems = build_state(request)
    assert not problems
    return state, request.config.schema_


def _mutate(state: Any, ops: list[tuple[str, int, int, Any]], check: Any) -> None:
    ids: list[str] = []
    history: list[list[Any]] = []
    for op, a, b, value in ops:
        state.take_journal()
        if op in ("class", "method"):
            ids.append(_add_node(state, op, len(ids), a, value))
        elif not ids:
            continue
        elif op == "undo" and history:
            for m in reversed(history.pop()):
                state.revert_mutation(m)
            state.take_journal()
            check()
            continue
        else:
            _change(state, ids, op, a, b, value)
        history.append(state.take_journal())
        check()


def _add_node(state: Any, op: str, count: int, a: int, value: Any) -> str:
    """Add the ``count``-th node, a Class or a Method (``op``), with ``value`` as its score (and doc)."""
    props = {"name": f"N{count}", "score": value}
    if op == "method":
        props["signature"] = "()"
    if a % 3 == 0:
        props["doc"] = value
    return str(state.add_node("Class" if op == "class" else "Method", props))


def _change(state: Any, ids: list[str], op: str, a: int, b: int, value: Any) -> None:
    """Apply a mutation other than adding a node to the nodes ``ids`` added (those alive) and their edges."""
    alive = [n for n in ids if n in state.nodes]
    if op in ("edge", "loop"):
        src = ids[a % len(ids)]
        dst = src if op == "loop" else ids[b % len(ids)]
        t = ("CALLS", "READS_FROM")[b % 2]
        if src in state.nodes and dst in state.nodes and state.edge_between(src, t, dst) is None:
            state.add_edge(src, t, dst, {})
    elif op == "del_edge":
        edges = list(state._edge_ends)
        if edges:
            state.delete_edge(edges[a % len(edges)])
    elif op == "del_node" and alive:
        state.delete_node(alive[a % len(alive)])
    elif op in ("update", "unset") and alive:
        key = ("score", "doc")[b % 2]
        if op == "update":
            state.update_node(alive[a % len(alive)], {key: value})
        else:
            state.update_node(alive[a % len(alive)], {}, remove=[key])


@settings(max_examples=120, deadline=None)
@given(_OPS)
def test_open_todos_from_the_index_equal_a_full_scan_after_any_mutations_and_undos(ops):
    state, schema = _state()
    assert open_todos(state, schema) == scan_todos(state, schema)  # builds the index on the empty graph
    assert state.indexes["todos"] in state.watchers

    def check() -> None:
        assert open_todos(state, schema) == scan_todos(state, schema)

    _mutate(state, ops, check)
    # an index built late, on the graph as it ends up, agrees too
    state.unwatch(state.indexes.pop("todos"))
    check()


_FILTERS = st.one_of(
    _VALUES,
    st.builds(lambda v: {"in": v}, st.lists(_VALUES, max_size=3)),
    st.builds(
        lambda op, v: {op: v},
        st.sampled_from(["gt", "ge", "lt", "le"]),
        st.sampled_from([-1, 0, 0.5, 1, 2.5, 3]),
    ),
    st.builds(lambda v: {"contains": v}, st.sampled_from(["auth", "AUTH", "z", "1", "x"])),
)


def _scan(state: Any, label: str | None, key: str, spec: Any) -> list[str]:
    """The nodes matching ``{key: spec}`` by the filter's own definition, in graph order."""
    missing = object()

    def ok(props: dict[str, Any]) -> bool:
        v = props.get(key, missing)
        if not isinstance(spec, dict):
            return v == spec and v.__class__ is spec.__class__
        op, arg = next(iter(spec.items()))
        if op == "in":
            return v in arg
        if op == "contains":
            needle = str(arg).casefold()
            if isinstance(v, str):
                return needle in v.casefold()
            return isinstance(v, list) and any(needle in str(x).casefold() for x in v)
        if v.__class__ not in (int, float):
            return False
        return {"gt": v > arg, "ge": v >= arg, "lt": v < arg, "le": v <= arg}[op]

    return [
        n for n, d in state.nodes.items() if (label is None or d["type"] == label) and ok(d["properties"])
    ]


@settings(max_examples=120, deadline=None)
@given(
    _OPS,
    st.lists(
        st.tuples(st.sampled_from([None, "Class", "Method"]), st.sampled_from(["score", "doc"]), _FILTERS),
        min_size=1,
        max_size=4,
    ),
)
def test_find_from_a_property_index_equals_a_scan_after_any_mutations_and_undos(ops, filters):
    state, _ = _state()
    for key in ("score", "doc"):
        property_index(state, key)  # built on the empty graph, then kept up to date

    def check() -> None:
        for label, key, spec in filters:
            query = {"query": "find", "where": {key: spec}, "limit": 10_000, "token_budget": 50_000}
            if label:
                query["label"] = label
            answer = run_query(state, query)
            expected = _scan(state, label, key, spec)
            assert answer.matched_nodes == len(expected)
            assert [n["id"] for n in answer.nodes] == expected[: len(answer.nodes)]

    _mutate(state, ops, check)


def test_a_find_on_a_non_identity_property_uses_its_index_and_follows_updates_and_undo():
    state, _ = _state()
    ids = [state.add_node("Class", {"name": f"C{i}", "lines": i % 50}) for i in range(500)]
    state.take_journal()
    answer = run_query(state, {"query": "find", "label": "Class", "where": {"lines": {"gt": 47}}})
    assert answer.matched_nodes == 20
    assert "lines" in state.indexes["properties"]
    state.update_node(ids[0], {"lines": 99})
    journal = state.take_journal()
    assert run_query(state, {"query": "find", "where": {"lines": {"gt": 47}}}).matched_nodes == 21
    assert run_query(state, {"query": "find", "where": {"lines": 99}}).nodes[0]["id"] == ids[0]
    for m in reversed(journal):
        state.revert_mutation(m)
    assert run_query(state, {"query": "find", "where": {"lines": {"gt": 47}}}).matched_nodes == 20
    assert run_query(state, {"query": "find", "where": {"lines": 99}}).matched_nodes == 0


@settings(max_examples=100, deadline=None)
@given(_OPS, st.integers(60, 400))
def test_rendered_pieces_kept_between_observations_render_exactly_what_a_fresh_view_renders(ops, allowance):
    """Node lines and references are kept from one render to the next and dropped when their node changes:
    after any mutations and undos the graph section equals one rendered from nothing."""
    from igg.observe.graphview import GraphView, _Pieces

    state, _ = _state()
    GraphView(state)  # the kept pieces exist (and watch) from the empty graph on

    def render() -> tuple[list[str], list[str]]:
        view = GraphView(state)
        candidates = [*state.recently_touched(20), *state.most_connected(20)]
        return view.render_relevant(allowance, candidates), view.render_all(10_000) or []

    def check() -> None:
        kept = render()
        state.indexes["rendered"], persistent = _Pieces(), state.indexes["rendered"]
        try:
            assert kept == render()
        finally:
            state.indexes["rendered"] = persistent

    _mutate(state, ops, check)
