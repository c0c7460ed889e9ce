"""Resolving node references through the indexes (``GraphState.find_nodes``) gives exactly what a scan of
every node gives: for exact identity references (one lookup, what the code agent sends: a method by owner and
signature never walks every method of the owner) and for partial ones (the smallest index bucket)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from igg.graph.state import GraphState
from igg.models.schema import Schema

SCHEMA = Schema(
    node_types=["Class", "Method", "Table"],
    edge_types=["CALLS"],
    identity_keys={"Class": ["package", "name"], "Method": ["owner", "signature"], "Table": ["name"]},
)
VALUES = st.sampled_from(["a", "b", "run()", "x.Y", 1, True, 1.0, 0])
TYPES = st.sampled_from(["Class", "Method", "Table"])
KEYS = ("name", "package", "owner", "signature", "kind")


def _scan(state: GraphState, ref: dict[str, Any]) -> list[str]:
    label = ref.get("label")
    props = {k: v for k, v in ref.items() if k != "label"}
    found = []
    for n, data in state.nodes.items():
        have = data["properties"]
        if label is not None and data["type"] != label:
            continue
        if all(k in have and have[k] == v and type(have[k]) is type(v) for k, v in props.items()):
            found.append(n)
    return found


@st.composite
def graphs(draw: st.DrawFn) -> tuple[GraphState, list[dict[str, Any]]]:
    state = GraphState(SCHEMA.compile())
    for _ in range(draw(st.integers(0, 25))):
        node_type = draw(TYPES)
        props = {k: draw(VALUES) for k in KEYS if draw(st.booleans())}
        for k in state.schema.identity_keys[node_type]:
            props[k] = draw(VALUES)
        if state.find_identity(node_type, state.identity(node_type, props) or ()) is None:
            state.add_node(node_type, props)
    refs = []
    for _ in range(draw(st.integers(1, 15))):
        ref = {k: draw(VALUES) for k in KEYS if draw(st.booleans())}
        if draw(st.booleans()):
            ref["label"] = draw(st.sampled_from(["Class", "Method", "Table", "Nope"]))
        refs.append(ref)
    # exact identity references of existing nodes, and of near misses (same values, other types: 1 vs True)
    for data in list(state.nodes.values())[:5]:
        keys = state.schema.identity_keys[data["type"]]
        exact = {"label": data["type"], **{k: data["properties"][k] for k in keys}}
        refs.append(exact)
        refs.append({**exact, keys[0]: True if exact[keys[0]] == 1 else 1})
    return state, refs


@settings(max_examples=150, deadline=None)
@given(graphs())
def test_find_nodes_equals_a_scan(case: tuple[GraphState, list[dict[str, Any]]]) -> None:
    state, refs = case
    for ref in refs:
        assert sorted(state.find_nodes(ref)) == sorted(_scan(state, ref)), ref


def test_a_method_reference_is_one_identity_lookup_not_a_walk_over_the_owners_methods() -> None:
    state = GraphState(SCHEMA.compile())
    for i in range(2000):
        state.add_node("Method", {"owner": "Big", "signature": f"m{i}()", "name": f"m{i}"})
    compared = 0
    original = state.lookup._matches

    def counting(node_id: str, props: dict[str, Any]) -> bool:
        nonlocal compared
        compared += 1
        return original(node_id, props)

    state.lookup._matches = counting  # type: ignore[method-assign]
    assert state.find_nodes({"label": "Method", "owner": "Big", "signature": "m1500()"}) == ["n1501"]
    assert state.find_nodes({"label": "Method", "owner": "Big", "signature": "nope()"}) == []
    # a partial reference filters the smallest bucket: the one signature, not the owner's 2,000 methods
    assert state.find_nodes({"owner": "Big", "signature": "m7()"}) == ["n8"]
    assert compared <= 1
