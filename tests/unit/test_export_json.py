"""JSON exports: IGG's document round-trips through seed_data, node-link round-trips through networkx."""

from __future__ import annotations

import io
import json
import tempfile
from pathlib import Path
from typing import Any

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from igg.errors import RequestInvalid
from igg.export import document_to_state, load_document, write_json, write_node_link
from igg.models.document import GraphDocument
from igg.request.load import build_state, load_request
from tests.conftest import FIXTURES, Workspace, edge, node


def tricky_workspace() -> Workspace:
    w = Workspace()
    verdicts = w.apply(
        node(
            "Class",
            name="AuthService",
            package="com.app.auth",
            id="not-the-node-id",
            n=1,
            f=2.5,
            ok=False,
            tags=["a", "b"],
        ),
        node("Class", name="ctl \x00\x01\x1f 😀", package="z" * 10_000),
        node("Method", name="login", signature="(String) -> bool"),
        edge("CALLS", {"name": "AuthService"}, {"name": "ctl \x00\x01\x1f 😀"}, source="x", key=1),
        edge("CALLS", {"name": "login"}, {"name": "AuthService"}),
    )
    assert all(v.accepted for v in verdicts), [v.message for v in verdicts if not v.accepted]
    return w


def graph_of(state) -> tuple[dict, dict]:
    nodes = {n: (d["type"], d["properties"]) for n, d in state.graph.nodes(data=True)}
    edges = {k: (u, v, d["type"], d["properties"]) for k, u, v, d in state.edges()}
    return nodes, edges


def test_igg_json_round_trips_through_load_document(tmp_path):
    w = tricky_workspace()
    path = tmp_path / "g.json"
    summary = write_json(w.state, path, schema=w.request.config.schema_, metadata={"session_id": "s"})
    assert summary["nodes"] == 3 and summary["edges"] == 2 and summary["bytes"] == path.stat().st_size
    doc = load_document(path)
    assert doc.schema_ == w.request.config.schema_ and doc.metadata == {"session_id": "s"}
    assert graph_of(document_to_state(doc)) == graph_of(w.state)


def test_igg_json_is_accepted_as_seed_data_and_gives_the_same_graph(tmp_path):
    w = tricky_workspace()
    buffer = io.StringIO()
    write_json(w.state, buffer)
    payload = json.loads((FIXTURES / "seed_request.json").read_text())
    payload["seed_data"] = json.loads(buffer.getvalue())
    payload["config"]["constraints"]["max_property_length"] = 20_000
    state, problems = build_state(load_request(payload))
    assert problems == []
    assert graph_of(state) == graph_of(w.state)


def test_igg_json_matches_the_pydantic_document_model():
    w = tricky_workspace()
    buffer = io.BytesIO()
    write_json(w.state, buffer, schema=w.request.config.schema_, provenance=True)
    fast = json.loads(buffer.getvalue())
    slow = w.state.to_document(schema=w.request.config.schema_, provenance=True)
    assert GraphDocument.model_validate(fast) == slow


def test_node_link_round_trips_through_networkx_and_back(tmp_path):
    w = tricky_workspace()
    path = tmp_path / "g.nodelink.json"
    write_node_link(w.state, path, schema=w.request.config.schema_, metadata={"session_id": "s"})
    data = json.loads(path.read_text())
    g = nx.node_link_graph(data, edges="edges")
    assert isinstance(g, nx.MultiDiGraph) and g.number_of_nodes() == 3 and g.number_of_edges() == 2
    assert g.nodes["n1"]["igg_type"] == "Class" and g.nodes["n1"]["tags"] == ["a", "b"]
    # a property named like a node-link field is kept apart from the field
    assert g.nodes["n1"]["igg_prop_id"] == "not-the-node-id"
    assert g.edges["n1", "n2", "e1"]["igg_prop_source"] == "x"
    again = document_to_state(load_document(path))
    assert graph_of(again) == graph_of(w.state)


def test_a_document_without_schema_gets_one_inferred(tmp_path):
    path = tmp_path / "hand.json"
    path.write_text(
        json.dumps(
            {
                "nodes": [
                    {"id": "a", "type": "Service", "properties": {"name": "auth"}},
                    {"id": "b", "type": "Table", "properties": {"table": "users"}},
                ],
                "edges": [{"id": "e", "type": "READS", "from": "a", "to": "b"}],
            }
        )
    )
    state = document_to_state(load_document(path))
    assert state.schema.identity_keys == {"Service": ("name",), "Table": ("table",)}
    assert state.edge_count == 1


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON"),
        ('{"nodes": [{"id": "a", "type": "X", "properties": {"name": null}}]}', "nodes[0].properties.name"),
        (
            (
                '{"nodes": [{"id": "a", "type": "X", "properties": {"name": "x"}}], '
                '"edges": [{"id": "e", "type": "R", "from": "a", "to": "zz"}]}'
            ),
            "no node with id to 'zz'",
        ),
        (
            (
                '{"schema": {"node_types": ["X"]}, "nodes": [{"id": "a", "type": "Y", "properties": {"name":'
                ' "x"}}]}'
            ),
            "UNKNOWN_NODE_TYPE",
        ),
    ],
)
def test_a_broken_document_is_rejected_naming_the_problem(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(RequestInvalid) as info:
        document_to_state(load_document(path))
    assert message in str(info.value)


_SCALAR = st.one_of(
    st.text(alphabet=st.sampled_from(list('aZ null,[:"\\\x00\x1f\x7f\u2028é😀\ud800')), max_size=8),
    st.integers(-(2**70), 2**70),
    st.floats(),
    st.booleans(),
)
_PROPS = st.dictionaries(
    st.sampled_from(["name", "null", "x"]), st.one_of(_SCALAR, st.lists(_SCALAR, max_size=3)), max_size=3
)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(_PROPS, max_size=5),
    st.lists(_PROPS, max_size=5),
    st.dictionaries(
        st.sampled_from(["run", "parent"]), st.one_of(st.none(), st.text(max_size=4)), max_size=2
    ),
)
def test_the_fast_encoder_writes_exactly_what_to_json_writes(node_props, edge_props, metadata):
    """orjson encodes the element lists; whatever it cannot write the same (non-finite floats, huge integers,
    lone surrogates) falls back, so the bytes never change."""
    from pydantic_core import PydanticSerializationError, to_json

    from igg.export.document import encode_json

    doc = {
        "format": "igg-graph",
        "version": 1,
        "schema": {"node_types": ["Class"]},
        "nodes": [{"id": f"n{i}", "type": "Class", "properties": p} for i, p in enumerate(node_props)],
        "edges": [
            {"id": f"e{i}", "type": "CALLS", "from": "n1", "to": "n2", "properties": p}
            for i, p in enumerate(edge_props)
        ],
        "metadata": metadata,
    }
    try:
        expected = to_json(doc)
    except PydanticSerializationError:
        expected = json.dumps(doc, ensure_ascii=True, separators=(",", ":")).encode()
    assert encode_json(doc) == expected


@settings(max_examples=100, deadline=None)
@given(
    st.lists(_PROPS, max_size=7),
    st.lists(_PROPS, max_size=7),
    st.booleans(),
    st.booleans(),
    st.one_of(st.none(), st.dictionaries(st.sampled_from(["run"]), st.text(max_size=3), max_size=1)),
)
def test_the_document_written_a_chunk_at_a_time_is_the_whole_documents_json(
    node_props, edge_props, provenance, with_schema, metadata
):
    """``document_json`` builds and encodes the elements three at a time here: the same bytes as encoding the
    whole ``document_dict`` (orjson where it writes the same, the fallbacks where not), with or without
    provenance, schema and metadata. ``write_json`` to a path writes them as it encodes them; a lone surrogate
    met on the way (``_PROPS`` makes them) leaves no partial file, and the escaped bytes are written."""
    import igg.graph.document as document
    from igg.graph.document import document_dict, document_json, encode_json
    from igg.graph.state import GraphState
    from igg.models.schema import Schema

    schema = Schema(node_types=["Class"], edge_types=["CALLS"])
    state = GraphState(schema.compile())
    nodes = [
        {"id": f"n{i}", "type": "Class", "properties": {**p, "name": f"c{i}"}, "provenance": {"created": i}}
        for i, p in enumerate(node_props)
    ]
    edges = (
        [
            {"id": f"e{i}", "type": "CALLS", "from": "n0", "to": f"n{i % len(nodes)}", "properties": p}
            for i, p in enumerate(edge_props)
        ]
        if nodes
        else []
    )
    state.load(nodes, edges)
    kwargs: dict[str, Any] = {
        "schema": schema if with_schema else None,
        "metadata": metadata,
        "provenance": provenance,
    }
    chunk, document.CHUNK = document.CHUNK, 3
    try:
        streamed = document_json(state, **kwargs)
        with tempfile.TemporaryDirectory() as folder:  # a file by its path: written as it is encoded
            target = Path(folder) / "graph.json"
            written = write_json(state, target, **kwargs)
            in_file = target.read_bytes()
            assert sorted(p.name for p in Path(folder).iterdir()) == ["graph.json"]
    finally:
        document.CHUNK = chunk
    expected = encode_json(document_dict(state, **{**kwargs, "metadata": metadata or {}}))
    assert streamed == expected
    assert in_file == expected and written["bytes"] == len(expected)


@settings(max_examples=100, deadline=None)
@given(st.lists(_PROPS, max_size=7), st.lists(_PROPS, max_size=7), st.booleans())
def test_a_snapshot_written_a_chunk_at_a_time_is_the_text_of_the_whole_snapshot(
    node_props, edge_props, protect
):
    """The store keeps a snapshot's text encoded three elements at a time here (``codec.snapshot_json``): the
    same text as ``dumps`` of the whole snapshot dict, lone surrogates, huge integers and non-finite floats
    included, so a snapshot reads back as before."""
    import igg.graph.document as document
    from igg.graph.state import GraphState
    from igg.models.schema import Schema
    from igg.store import codec

    state = GraphState(Schema(node_types=["Class"], edge_types=["CALLS"]).compile())
    nodes = [
        {"id": f"n{i}", "type": "Class", "properties": {**p, "name": f"c{i}"}, "provenance": {"created": i}}
        for i, p in enumerate(node_props)
    ]
    edges = [
        {"id": f"e{i}", "type": "CALLS", "from": "n0", "to": f"n{i % len(nodes)}", "properties": p}
        for i, p in enumerate(edge_props)
        if nodes
    ]
    state.load(nodes, edges)
    if protect and nodes:
        state.protected = {"n0"}
    chunk, document.CHUNK = document.CHUNK, 3
    try:
        text, blob = codec.snapshot_json(state), codec.snapshot_blob(state)
    finally:
        document.CHUNK = chunk
    assert text == codec.dumps(codec.snapshot_of(state))
    # what an SQLite store keeps: the same text, compressed as it was encoded
    assert codec.snapshot_text(blob) == text and codec.snapshot_text(text) == text
    assert codec.read_snapshot(blob) == codec.read_snapshot(text) == codec.loads(text)


def test_a_document_with_a_lone_surrogate_is_written_escaped_and_whole(tmp_path):
    """The streamed write meets the surrogate after writing the head: the half-written file is dropped and the
    escaped document (what ``document_json`` gives) replaces the old file whole."""
    from igg.graph.document import document_json
    from igg.graph.state import GraphState
    from igg.models.schema import Schema

    schema = Schema(node_types=["Class"], edge_types=["CALLS"])
    state = GraphState(schema.compile())
    state.load(
        [
            {"id": "n0", "type": "Class", "properties": {"name": "fine"}},
            {"id": "n1", "type": "Class", "properties": {"name": "bad \ud800 name"}},
        ],
        [],
    )
    target = tmp_path / "graph.json"
    target.write_text("old")
    written = write_json(state, target)
    expected = document_json(state)
    assert b"\\ud800" in expected and target.read_bytes() == expected and written["bytes"] == len(expected)
    assert [p.name for p in tmp_path.iterdir()] == ["graph.json"]
    assert json.loads(expected)["nodes"][1]["properties"]["name"] == "bad \ud800 name"
