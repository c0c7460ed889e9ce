"""The payload in columns as the exported page embeds it (igg/view/columns.py): the same payload back."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from igg.view.columns import columns, expand_ids, id_runs, rows
from igg.view.data import graph_payload
from tests.support.bigcode import code_map

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=6))
VALUES = st.one_of(SCALARS, st.lists(SCALARS, max_size=3))
PROPERTIES = st.dictionaries(st.sampled_from(["name", "file", "line", "__proto__", "x"]), VALUES, max_size=4)
PROVENANCE = st.one_of(
    st.just({}),
    st.just({"created": 0}),
    st.fixed_dictionaries({"created": st.integers(0, 3)}, optional={"chunk": st.integers(1, 3)}),
    st.fixed_dictionaries(
        {"created": st.integers(0, 3), "evidence": st.lists(st.fixed_dictionaries({"quote": st.text()}))}
    ),
)


IDENTITY = {"A": ["name"], "B": ["file", "name"], "C": ["x", "__proto__"]}
"""The identity keys of the generated payloads' node types."""


@st.composite
def payloads(draw: st.DrawFn) -> dict[str, Any]:
    """Well-formed payloads: node types and edge types from the lists, parents that are nodes or synthetic
    groups, edges whose ends may be nodes or not (a payload may name a node it does not hold)."""
    n = draw(st.integers(0, 12))
    ids = [f"n{i}" for i in range(n)]
    node_types, edge_types = ["A", "B", "C"], ["R", "S"]
    nodes = []
    for node_id in ids:
        node: dict[str, Any] = {
            "id": node_id,
            "type": draw(st.sampled_from(node_types)),
            "properties": draw(PROPERTIES),
            "provenance": draw(PROVENANCE),
        }
        # node_label's way (identity values present joined by spaces) or any other text
        present = [node["properties"].get(k) for k in IDENTITY[node["type"]]]
        joined = " ".join(str(v) for v in present if v is not None)
        node["label"] = draw(st.sampled_from([joined, draw(st.text(max_size=5))]))
        if draw(st.booleans()):
            node["parent"] = draw(st.sampled_from([*ids, "group:1", "elsewhere"]))
        nodes.append(node)
    ends = st.sampled_from([*ids, "ghost"])
    edges = [
        {
            "id": f"e{k}",
            "type": draw(st.sampled_from(edge_types)),
            "source": draw(ends),
            "target": draw(ends),
            "properties": draw(PROPERTIES),
            "provenance": draw(PROVENANCE),
        }
        for k in range(draw(st.integers(0, 15)))
    ]
    return {
        "version": 2,
        "meta": {"nodes": n, "edges": len(edges)},
        "node_types": node_types,
        "edge_types": edge_types,
        "identity_keys": IDENTITY,
        "nodes": nodes,
        "edges": edges,
        "grouping": {"kind": "community", "aggregate": False, "groups": []},
        "iterations": [],
    }


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(payloads())
def test_any_well_formed_payload_comes_back_from_its_columns(payload):
    embedded = columns(payload)
    assert "nodes" not in embedded and "edges" not in embedded and "columns" in embedded
    assert rows(json.loads(json.dumps(embedded))) == payload


def test_a_code_map_comes_back_from_columns_less_than_half_the_size():
    payload = graph_payload(code_map(3_000))
    embedded = columns(payload)
    assert rows(embedded) == payload
    size = len(json.dumps(embedded, separators=(",", ":")))
    assert size < 0.5 * len(json.dumps(payload, separators=(",", ":")))
    cols = embedded["columns"]
    assert cols["provenance"] == [{"created": 0}]  # every row points at the one provenance
    assert {tuple(keys) for keys in cols["shapes"]} >= {("name",), ("name", "package", "qualified_name")}
    method = next(i for i, n in enumerate(payload["nodes"]) if n["type"] == "Method")
    parent = cols["nodes"]["parent"][method]
    assert isinstance(parent, int) and payload["nodes"][parent]["id"] == payload["nodes"][method]["parent"]


def test_a_payload_with_bad_entries_is_embedded_as_it_is():
    """The page passes over bad entries itself; columns would have to drop or reshape them, so they stay."""
    good = graph_payload(code_map(50))
    bad_node = {**good, "nodes": [*good["nodes"], None]}
    duplicate = {**good, "nodes": [*good["nodes"], dict(good["nodes"][0])]}
    unknown_type = {**good, "edges": [{**good["edges"][0], "type": "NOT_LISTED"}]}
    odd_parent = {**good, "nodes": [{**good["nodes"][0], "parent": None}]}
    extra_key = {**good, "edges": [{**good["edges"][0], "weight": 2}]}
    for payload in (bad_node, duplicate, unknown_type, odd_parent, extra_key):
        assert columns(payload) is payload
        assert rows(payload) is payload


ID_PARTS = st.tuples(st.sampled_from(["n", "e", "x-", "", "a1b"]), st.integers(0, 40), st.booleans())


@given(st.lists(ID_PARTS, max_size=30))
def test_id_runs_give_back_every_id_in_order(parts):
    """Runs of ids that go up by one become [prefix, first, count]; leading zeros, a bare number or the same
    id twice still come back exactly."""
    ids = [f"{prefix}{'0' if zero else ''}{n}" for prefix, n, zero in parts]
    runs = id_runs(ids)
    assert expand_ids(runs) == ids
    assert id_runs([f"n{k}" for k in range(1, 1001)]) == [["n", 1, 1000]]
