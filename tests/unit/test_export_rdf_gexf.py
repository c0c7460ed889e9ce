"""RDF (N-Triples, Turtle, JSON-LD) and GEXF exports, judged by rdflib and networkx."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from urllib.parse import quote

import networkx as nx
import pytest
import rdflib
from hypothesis import given, settings
from hypothesis import strategies as st
from rdflib import RDF, RDFS, XSD, Literal, URIRef
from rdflib.compare import isomorphic

from igg.errors import ExportError
from igg.export import write_json
from igg.export.gexf import write_gexf
from igg.export.rdf import triples, write_ntriples, write_rdflib
from igg.graph.state import GraphState
from igg.models.schema import Schema
from tests.conftest import ROOT, Workspace

BASE = "https://example.com/kg/"
PARSERS = {"ttl": "turtle", "jsonld": "json-ld"}


def typed_graph() -> GraphState:
    schema = Schema(
        node_types=["Class", "Method"],
        edge_types=["CALLS", "DECLARES"],
        identity_keys={"Method": ["name", "signature"]},
        property_types={"Class": {"lines": "integer"}},
    )
    state = GraphState(schema.compile())
    a = state.add_node(
        "Class",
        {
            "name": 'A <&> "x"\n\t\\ é/b ü',
            "package": "p",
            "lines": 3,
            "ratio": 1.5,
            "public": True,
            "tags": ["svc", 1, 2.5],
            "tiny": 1e-7,
            "neg": -0.0,
        },
    )
    b = state.add_node("Class", {"name": "B", "package": 7, "lines": -(2**62)})
    m = state.add_node("Method", {"name": "run", "signature": "(String) -> int", "doc": "line1\r\nline2"})
    n7 = state.add_node("Class", {"name": 7, "package": "digits"})
    state.add_edge(b, "CALLS", a, {"weight": 2, "hot": False})
    state.add_edge(a, "CALLS", b, {})
    state.add_edge(a, "DECLARES", m, {"since": "1.0"})
    state.add_edge(n7, "CALLS", m, {})
    return state


def oracle(state: GraphState, base: str) -> rdflib.Graph:
    """The documented mapping, built independently with rdflib terms."""
    g = rdflib.Graph()
    v = rdflib.Namespace(base + "vocab/")
    owl = rdflib.Namespace("http://www.w3.org/2002/07/owl#")

    def iri(n: str) -> URIRef:
        d = state.nodes[n]
        parts = [
            quote(x, safe="") if isinstance(x, str) else "$" + quote(json.dumps(x), safe="")
            for x in (d["properties"][k] for k in state.schema.identity_keys[d["type"]])
        ]
        return URIRef(f"{base}node/{d['type']}/" + "/".join(parts))

    def lit(x):
        if isinstance(x, list):
            return Literal(json.dumps(x, ensure_ascii=False), datatype=RDF.JSON)
        return Literal(x)

    for t in state.schema.node_type_list:
        g.add((v[t], RDF.type, RDFS.Class))
    for t in state.schema.edge_type_list:
        g.add((v[t], RDF.type, owl.ObjectProperty))
    g.add((v.lines, RDFS.range, XSD.integer))
    for n, d in state.nodes.items():
        g.add((iri(n), RDF.type, v[d["type"]]))
        for k, x in d["properties"].items():
            g.add((v[k], RDF.type, owl.DatatypeProperty))
            g.add((iri(n), v[k], lit(x)))
    for eid, a, b, d in state.edges():
        g.add((iri(a), v[d["type"]], iri(b)))
        if d["properties"]:
            s = URIRef(f"{base}edge/{eid}")
            g.add((s, RDF.type, RDF.Statement))
            g.add((s, RDF.subject, iri(a)))
            g.add((s, RDF.predicate, v[d["type"]]))
            g.add((s, RDF.object, iri(b)))
            for k, x in d["properties"].items():
                g.add((v[k], RDF.type, owl.DatatypeProperty))
                g.add((s, v[k], lit(x)))
    return g


def nt_graph(state: GraphState, base: str = BASE) -> tuple[rdflib.Graph, dict]:
    out = io.BytesIO()
    summary = write_ntriples(state, out, base=base)
    return rdflib.Graph().parse(data=out.getvalue(), format="nt"), summary


def test_ntriples_follow_the_documented_mapping():
    state = typed_graph()
    parsed, summary = nt_graph(state)
    expected = oracle(state, BASE)
    assert isomorphic(parsed, expected), sorted(set(parsed) ^ set(expected))
    assert summary["triples"] == len(parsed) and summary["nodes"] == 4 and summary["edges"] == 4


@pytest.mark.parametrize("fmt", ["ttl", "jsonld"])
def test_turtle_and_json_ld_parse_to_the_same_graph_as_the_ntriples(fmt):
    state = typed_graph()
    out = io.BytesIO()
    write_rdflib(state, out, fmt, base=BASE)
    parsed = rdflib.Graph().parse(data=out.getvalue(), format=PARSERS[fmt])
    assert isomorphic(parsed, nt_graph(state)[0])
    assert isomorphic(parsed, oracle(state, BASE))


def test_json_ld_refuses_an_infinity_rdflib_would_write_as_null():
    state = typed_graph()
    state.add_node("Class", {"name": "Inf", "package": "p", "size": float("inf")})
    with pytest.raises(ExportError, match="JSON-LD cannot carry node .*'size' = inf.*nt or ttl"):
        write_rdflib(state, io.BytesIO(), "jsonld")
    parsed, _ = nt_graph(state)  # N-Triples carries it
    assert (None, None, Literal("INF", datatype=XSD.double)) in parsed


def test_code_points_utf8_cannot_carry_are_replaced_and_counted():
    state = typed_graph()
    state.add_node("Class", {"name": "bad\ud800", "package": "\x00\x1f"})
    parsed, summary = nt_graph(state)
    assert summary["replaced_values"] == 1
    assert (None, None, Literal("bad\ufffd")) in parsed and (None, None, Literal("\x00\x1f")) in parsed


scalars = st.one_of(
    st.text(max_size=12),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.booleans(),
    st.floats(allow_nan=False, allow_infinity=False),
)
props = st.dictionaries(
    st.sampled_from(["a", "b", "size", "tags"]), st.one_of(scalars, st.lists(scalars, max_size=3)), max_size=4
)


@settings(max_examples=60, deadline=None)
@given(
    names=st.lists(st.text(min_size=1, max_size=10), min_size=1, max_size=6, unique=True),
    extra=st.lists(props, min_size=6, max_size=6),
    edges=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5), props), max_size=8),
)
def test_the_hand_written_ntriples_equal_the_rdflib_terms(names, extra, edges):
    """The fast path (text) is pinned to the general path (rdflib terms) it shortcuts."""
    state = GraphState(Schema(node_types=["T"], edge_types=["R", "S"]).compile())
    ids = [state.add_node("T", {**extra[i], "name": name}) for i, name in enumerate(names)]
    for i, (a, b, p) in enumerate(edges):
        u, v = ids[a % len(ids)], ids[b % len(ids)]
        t = "R" if i % 2 else "S"
        if not state.edge_between(u, t, v):
            state.add_edge(u, t, v, p)
    parsed, summary = nt_graph(state, "urn:igg:")
    assert isomorphic(parsed, triples(state, base="urn:igg:"))
    assert summary["triples"] == len(parsed)


def test_networkx_reads_the_gexf_with_equal_counts_and_typed_attributes():
    state = typed_graph()
    out = io.BytesIO()
    summary = write_gexf(state, out)
    out.seek(0)
    g = nx.read_gexf(out)
    assert (g.number_of_nodes(), g.number_of_edges()) == (4, 4) == (summary["nodes"], summary["edges"])
    for n, d in state.nodes.items():
        got = dict(g.nodes[n])
        got.pop("label")
        assert got.pop("igg_type") == d["type"]
        want = {
            k: json.dumps(x, ensure_ascii=False) if isinstance(x, list) else x
            for k, x in d["properties"].items()
        }
        assert got == want and all(type(got[k]) is type(want[k]) for k in want)
    for eid, a, b, d in state.edges():
        got = (
            dict(g.edges[a, b])
            if not g.is_multigraph()
            else next(x for x in g.get_edge_data(a, b).values() if x["id"] == eid)
        )
        assert (got.pop("igg_type"), got.pop("label"), got.pop("id")) == (d["type"], d["type"], eid)
        assert got == d["properties"] and all(type(got[k]) is type(d["properties"][k]) for k in got)


def test_cli_writes_every_new_format_and_refuses_to_read_them_back(tmp_path):
    w = Workspace()
    w.state.add_node("Class", {"name": "A", "package": "p"})
    doc = tmp_path / "g.json"
    write_json(w.state, doc, schema=w.request.config.schema_, metadata={"session_id": "s1"})

    def igg(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "igg", "export", *args],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=60,
        )

    for fmt in ("gexf", "nt", "ttl", "jsonld"):
        done = igg(str(doc), "--format", fmt)
        assert done.returncode == 0, done.stderr
        assert (tmp_path / f"g.{fmt}").stat().st_size > 0
    done = igg(str(tmp_path / "g.nt"), "--format", "json")
    assert done.returncode == 2
    assert "looks like N-Triples, which IGG writes but does not read back" in done.stderr
    done = igg(str(doc), "--format", "nt", "--output", "-", "--base-iri", "https://example.com/kg/")
    assert done.returncode == 0 and "<https://example.com/kg/node/Class/A>" in done.stdout
    done = igg(str(doc), "--format", "nt", "--base-iri", "not an iri")
    assert done.returncode == 2 and "bad base IRI 'not an iri'" in done.stderr
    done = igg(str(doc), "--format", "gexf", "--base-iri", "urn:x:")
    assert done.returncode == 2 and "--base-iri applies to --format nt, ttl and jsonld only" in done.stderr
