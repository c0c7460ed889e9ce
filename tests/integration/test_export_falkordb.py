"""FalkorDB's Bolt listener as an optional export target (its own quirks: small messages, escaped strings)."""

from __future__ import annotations

import uuid

import pytest

from igg.export import export_neo4j
from igg.export.neo4j.bolt import BoltSession
from igg.graph.state import GraphState
from tests.conftest import Workspace, edge, node
from tests.integration.test_export_neo4j import expected, sample
from tests.support.bolt import BoltServer


class Falkor:
    """Export and query helpers that spend FalkorDB's hung handshake after every client closes."""

    def __init__(self, server: BoltServer) -> None:
        self.server = server

    def export(self, state: GraphState, **kwargs):
        try:
            return export_neo4j(state, settings=self.server.settings(), **kwargs)
        finally:
            self.server.after_close()

    def query(self, text: str, **params):
        try:
            with BoltSession(self.server.settings()) as session:
                return session.run(text, **params)
        finally:
            self.server.after_close()

    def contents(self, scope: str) -> tuple[dict, set]:
        nodes = {}
        for r in self.query(
            "MATCH (n) WHERE n.igg_scope = $s RETURN labels(n) AS l, properties(n) AS p", s=scope
        ):
            props = dict(r["p"])
            assert props.pop("igg_scope") == scope
            nodes[(r["l"][0], props.get("name"))] = props
        edges = set()
        for r in self.query(
            "MATCH (a)-[e]->(b) WHERE e.igg_scope = $s RETURN a.name AS a, type(e) AS t, "
            "b.name AS b, properties(e) AS p",
            s=scope,
        ):
            props = {k: v for k, v in r["p"].items() if k != "igg_scope"}
            edges.add((r["a"], r["t"], r["b"], tuple(sorted((k, str(v)) for k, v in props.items()))))
        return nodes, edges


@pytest.fixture
def falkor(falkordb_server: BoltServer):
    assert falkordb_server.alive(), "FalkorDB died"
    yield Falkor(falkordb_server)
    assert falkordb_server.alive(), "FalkorDB died during the test"


def test_falkordb_gets_the_graph_exactly_in_small_messages(falkor):
    w, sc = sample(), f"t-{uuid.uuid4().hex[:8]}"
    summary = falkor.export(w.state, scope=sc, batch_size=2)
    assert (
        summary["server"] == "falkordb" and summary["statements"] > summary["batches"]
    )  # long values in pieces
    assert falkor.contents(sc) == expected(w)
    falkor.export(w.state, scope=sc)
    assert falkor.contents(sc) == expected(w)
    indexed = {
        (r["label"], p)
        for r in falkor.query("CALL db.indexes() YIELD label, properties RETURN label, properties")
        for p in r["properties"]
    }
    assert {("Class", "name"), ("Method", "name")} <= indexed


def test_a_long_row_whose_identity_holds_u0001_does_not_crash_falkordb(falkor):
    w = Workspace(constraints={"max_property_length": 20_000})
    w.apply(
        node("Class", name="a\x01b", package="p", doc="d" * 4000),
        node("Class", name="B", package="p"),
        edge("CALLS", {"name": "a\x01b"}, {"name": "B"}, note="n" * 4000),
    )
    sc = f"t-{uuid.uuid4().hex[:8]}"
    summary = falkor.export(w.state, scope=sc)
    assert any("U+0001" in x for x in summary["warnings"])
    assert falkor.contents(sc) == expected(w)


def test_nul_is_reported_because_falkordb_cuts_strings_there(falkor):
    w = Workspace()
    w.apply(
        node("Class", name="soh \x01 id", package="nul \x00 here"),
        node("Class", name="B", package="p"),
        edge("CALLS", {"name": "soh \x01 id"}, {"name": "B"}),
    )
    sc = f"t-{uuid.uuid4().hex[:8]}"
    summary = falkor.export(w.state, scope=sc)
    assert any("U+0000" in x for x in summary["warnings"])
    nodes, edges = falkor.contents(sc)
    assert nodes[("Class", "soh \x01 id")]["package"] == "nul " and len(edges) == 1
