"""GraphML export: valid against the GraphML XSD, typed keys, any Unicode, networkx reads the same graph."""

from __future__ import annotations

import io
import json
from pathlib import Path

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from igg.export import write_graphml
from igg.export.graphml import xml_safe
from tests.conftest import Workspace, edge, node

XSD = Path(__file__).resolve().parents[3] / "shared" / "graphml" / "graphml.xsd"
"""The GraphML XSD the exporter is validated against: ``../shared/graphml`` beside the checkout
(DESIGN.md)."""


@pytest.fixture(scope="module")
def schema() -> etree.XMLSchema:
    return etree.XMLSchema(etree.parse(str(XSD)))


def rich_workspace() -> Workspace:
    w = Workspace(constraints={"allow_self_loops": True})
    verdicts = w.apply(
        node(
            "Class",
            name="AuthService",
            package="com.app.auth",
            lines=120,
            ratio=0.25,
            public=True,
            tags=["svc", "auth"],
        ),
        node("Class", name="Ctl\x00\x01\x0b\x1f\ufffe\uffff end", package="p\r\n\t", lines="many"),
        node("Class", name="emoji 😀🚀 <&>\"'", package="x" * 10_000),
        node("Interface", name="Repo", mixed=[1, "a", True, 2.5]),
        edge("CALLS", {"name": "AuthService"}, {"name": "Repo"}, weight=3, note="a -> b"),
        edge("CALLS", {"name": "emoji 😀🚀 <&>\"'"}, {"name": "AuthService"}, weight=1.5),
        edge("IMPLEMENTS", {"name": "AuthService"}, {"name": "AuthService"}),
    )
    assert all(v.accepted for v in verdicts), [v.message for v in verdicts if not v.accepted]
    return w


def test_graphml_validates_against_the_xsd_and_networkx_reads_typed_values(tmp_path, schema):
    w = rich_workspace()
    path = tmp_path / "g.graphml"
    summary = write_graphml(w.state, path, metadata={"session_id": "s1"}, schema=w.request.config.schema_)
    doc = etree.parse(str(path))
    assert schema.validate(doc), schema.error_log
    assert summary == {"nodes": 4, "edges": 3, "replaced_values": 1}

    g = nx.read_graphml(path, force_multigraph=True)
    assert g.is_directed() and g.number_of_nodes() == 4 and g.number_of_edges() == 3
    a = g.nodes["n1"]
    assert a == {
        "igg_type": "Class",
        "name": "AuthService",
        "package": "com.app.auth",
        "lines": 120,
        "ratio": 0.25,
        "public": True,
        "tags": '["svc", "auth"]',
    }
    assert type(a["lines"]) is int and type(a["ratio"]) is float and type(a["public"]) is bool
    # the same key with an int on one node and a string on another keeps both types
    assert g.nodes["n2"]["lines"] == "many"
    assert json.loads(g.nodes["n4"]["mixed"]) == [1, "a", True, 2.5]
    assert g.nodes["n3"]["name"] == "emoji 😀🚀 <&>\"'" and len(g.nodes["n3"]["package"]) == 10_000
    assert g.nodes["n2"]["package"] == "p\r\n\t"  # legal control characters survive, \r included
    edges = {k: (u, v, d) for u, v, k, d in g.edges(keys=True, data=True)}
    assert edges["e1"][:2] == ("n1", "n4") and edges["e1"][2]["igg_type"] == "CALLS"
    assert edges["e1"][2]["weight"] == 3 and edges["e2"][2]["weight"] == 1.5
    assert edges["e3"][:2] == ("n1", "n1")
    assert json.loads(g.graph["igg_metadata"]) == {"session_id": "s1"}
    assert json.loads(g.graph["igg_schema"])["node_types"][0] == "Class"


def test_xml_illegal_characters_become_replacement_characters_deterministically(tmp_path):
    w = rich_workspace()
    g = nx.read_graphml(_write(w, tmp_path))
    assert g.nodes["n2"]["name"] == "Ctl\ufffd\ufffd\ufffd\ufffd\ufffd\ufffd end"
    assert xml_safe("a\x00b\ud800c\x7f") == "a\ufffdb\ufffdc\x7f"
    assert _write(w, tmp_path, "again.graphml").read_bytes() == _write(w, tmp_path).read_bytes()


def test_list_keys_are_declared_as_json_lists(tmp_path):
    root = etree.parse(str(_write(rich_workspace(), tmp_path))).getroot()
    ns = {"g": "http://graphml.graphdrawing.org/xmlns"}
    tags = root.find("g:key[@attr.name='tags']", ns)
    assert tags.get("attr.type") == "string" and tags.findtext("g:desc", namespaces=ns) == "igg:json-list"
    types = {
        (k.get("for"), k.get("attr.name")): k.get("attr.type")
        for k in root.findall("g:key", ns)
        if k.get("attr.name") in ("igg_type", "ratio", "public", "weight")
    }
    assert types[("node", "igg_type")] == "string" and types[("edge", "igg_type")] == "string"
    assert types[("node", "ratio")] == "double" and types[("node", "public")] == "boolean"


def test_graphml_streams_to_a_binary_file_and_leaves_the_graph_untouched():
    w = rich_workspace()
    before = json.dumps(sorted((n, repr(d)) for n, d in w.state.graph.nodes(data=True)))
    buffer = io.BytesIO()
    write_graphml(w.state, buffer, provenance=True)
    assert buffer.getvalue().startswith(b"<?xml")
    g = nx.read_graphml(io.BytesIO(buffer.getvalue()))
    assert json.loads(g.nodes["n1"]["igg_provenance"]) == {"created": 0}
    assert json.dumps(sorted((n, repr(d)) for n, d in w.state.graph.nodes(data=True))) == before


def test_an_empty_graph_is_valid_graphml(tmp_path, schema):
    w = Workspace()
    path = tmp_path / "empty.graphml"
    write_graphml(w.state, path)
    assert schema.validate(etree.parse(str(path))), schema.error_log
    assert nx.read_graphml(path).number_of_nodes() == 0


def _write(w: Workspace, tmp_path, name: str = "g.graphml"):
    path = tmp_path / name
    write_graphml(w.state, path)
    return path


_TEXT = st.text(
    alphabet=st.sampled_from(list("aZ9 _-.&<>\"'\t\n\r\x00\x0b\x1f]]>é😀\ufffe\uffff\u2028\x85")), max_size=12
)
_VALUE = st.one_of(
    _TEXT,
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=False),
    st.booleans(),
    st.lists(st.one_of(_TEXT, st.integers(), st.booleans()), max_size=3),
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.dictionaries(st.sampled_from(["name", "doc", "lines", "x_y"]), _VALUE), min_size=1, max_size=8
    ),
    st.lists(
        st.tuples(
            st.integers(0, 7), st.integers(0, 7), st.dictionaries(st.sampled_from(["w", "note"]), _VALUE)
        ),
        max_size=10,
    ),
    st.booleans(),
    st.dictionaries(st.sampled_from(["run", "note"]), _TEXT, max_size=2),
)
def test_the_text_writer_writes_exactly_the_bytes_lxml_serializes(
    node_props, edge_specs, provenance, metadata
):
    """write_graphml composes the XML itself; lxml's xmlfile, one element per node and edge, is the
    reference."""
    from igg.graph.state import GraphState
    from igg.models.schema import Schema
    from tests.support.graphml_lxml import write_graphml_lxml

    schema_model = Schema(
        node_types=["Class"], edge_types=["CALLS", "USES"], identity_keys={"Class": ["key"]}
    )
    state = GraphState(schema_model.compile())
    ids = [
        state.add_node("Class", {"key": i, **props}, node_id=f"n{i}" if i % 3 else f'n<{i}>&"\t')
        for i, props in enumerate(node_props)
    ]
    for a, b, props in edge_specs:
        u, v = ids[a % len(ids)], ids[b % len(ids)]
        for t in ("CALLS", "USES"):
            if state.edge_between(u, t, v) is None:
                state.add_edge(u, t, v, props)
                break
    ours, theirs = io.BytesIO(), io.BytesIO()
    kwargs = {"metadata": metadata or None, "schema": schema_model, "provenance": provenance}
    assert write_graphml(state, ours, **kwargs) == write_graphml_lxml(state, theirs, **kwargs)
    assert ours.getvalue() == theirs.getvalue()
