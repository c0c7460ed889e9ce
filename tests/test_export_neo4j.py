"""Neo4j export against a real Bolt server (FalkorDB started by the suite, or the Neo4j at NEO4J_URI)."""

from __future__ import annotations

import subprocess
import sys
import uuid

import pytest

from igg.errors import ExportError
from igg.export import export_neo4j, write_cypher
from igg.export.cypher_script import script_statements
from igg.export.neo4j import BoltSession, Neo4jSettings
from igg.graph.state import GraphState
from igg.models.schema import Schema
from tests.conftest import ROOT, Workspace, edge, node
from tests.support.falkordb import BoltServer, free_port


class Bolt:
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
        """{(label, name): properties} and {(from name, type, to name)} of one scope."""
        nodes = {}
        for r in self.query("MATCH (n) WHERE n.igg_scope = $s RETURN labels(n) AS l, properties(n) AS p", s=scope):
            props = dict(r["p"])
            assert props.pop("igg_scope") == scope
            nodes[(r["l"][0], props.get("name"))] = props
        edges = set()
        for r in self.query("MATCH (a)-[e]->(b) WHERE e.igg_scope = $s RETURN a.name AS a, type(e) AS t, "
                            "b.name AS b, properties(e) AS p", s=scope):
            props = {k: v for k, v in r["p"].items() if k != "igg_scope"}
            edges.add((r["a"], r["t"], r["b"], tuple(sorted((k, str(v)) for k, v in props.items()))))
        return nodes, edges


USED_SCOPES: list[str] = []


@pytest.fixture
def bolt(bolt_server: BoltServer):
    assert bolt_server.alive(), "the Bolt server died"
    helper = Bolt(bolt_server)
    yield helper
    if bolt_server.external:  # a real Neo4j outlives the tests: remove what they wrote
        for sc in USED_SCOPES:
            helper.query("MATCH (n) WHERE n.igg_scope = $s DETACH DELETE n", s=sc)
    USED_SCOPES.clear()


def scope() -> str:
    name = f"test-{uuid.uuid4().hex[:10]}"
    USED_SCOPES.append(name)
    return name


def sample() -> Workspace:
    w = Workspace(constraints={"max_property_length": 20_000})
    verdicts = w.apply(
        node("Class", name="AuthService", package="com.app.auth", lines=120, ratio=0.5, public=True, tags=["a", "b"]),
        node("Class", name="it's \\n \"quoted\" `tick` })", package="ctl \x02\x1f\x7f end"),
        node("Class", name="emoji 😀 🚀 é", package="x'\\" * 3400),
        node("Method", name="login", signature="(String) -> bool"),
        edge("CALLS", {"name": "AuthService"}, {"name": "login"}, weight=2, note="it's"),
        edge("CALLS", {"name": "emoji 😀 🚀 é"}, {"name": "AuthService"}),
        edge("WRITES_TO", {"name": "it's \\n \"quoted\" `tick` })"}, {"name": "AuthService"}, doc="y" * 10_000),
    )
    assert all(v.accepted for v in verdicts), [v.message for v in verdicts if not v.accepted]
    return w


def expected(w: Workspace) -> tuple[dict, set]:
    s = w.state
    nodes = {(s.node_type(n), s.node_properties(n)["name"]): dict(s.node_properties(n)) for n in s.graph}
    edges = {(s.node_properties(u)["name"], d["type"], s.node_properties(v)["name"],
              tuple(sorted((k, str(x)) for k, x in d["properties"].items()))) for _, u, v, d in s.edges()}
    return nodes, edges


def test_export_writes_labels_types_and_values_exactly(bolt):
    w, sc = sample(), scope()
    summary = bolt.export(w.state, scope=sc, batch_size=2)
    assert summary["nodes"] == 4 and summary["edges"] == 3 and summary["scope"] == sc
    assert summary["server"] in ("neo4j", "falkordb") and summary["batches"] >= 4
    assert bolt.contents(sc) == expected(w)


def test_exporting_twice_changes_nothing(bolt):
    w, sc = sample(), scope()
    bolt.export(w.state, scope=sc)
    first = bolt.contents(sc)
    bolt.export(w.state, scope=sc, batch_size=1)
    assert bolt.contents(sc) == first == expected(w)
    counts = bolt.query("MATCH (n) WHERE n.igg_scope = $s RETURN count(n) AS c", s=sc)
    assert counts[0]["c"] == 4


def test_a_changed_property_is_updated_and_a_removed_one_dropped(bolt):
    w, sc = sample(), scope()
    bolt.export(w.state, scope=sc)
    w.apply({"type": "UPDATE_NODE", "node": {"name": "AuthService"}, "properties": {"lines": 7}, "remove": ["tags"]})
    bolt.export(w.state, scope=sc)
    nodes, _ = bolt.contents(sc)
    assert nodes[("Class", "AuthService")]["lines"] == 7 and "tags" not in nodes[("Class", "AuthService")]


def test_scopes_keep_graphs_from_different_runs_apart(bolt):
    a, b = Workspace(), Workspace()
    a.apply(node("Class", name="Shared", package="from-a"))
    b.apply(node("Class", name="Shared", package="from-b"), node("Class", name="OnlyB", package="b"),
            edge("CALLS", {"name": "OnlyB"}, {"name": "Shared"}))
    sa, sb = scope(), scope()
    bolt.export(a.state, scope=sa)
    bolt.export(b.state, scope=sb)
    assert bolt.contents(sa) == expected(a)
    assert bolt.contents(sb) == expected(b)


BAD_NAMES = ["Bad`) DETACH DELETE n //", "Quote'Label", "New\nLine", "x})-[:R]->(y", "has space", ""]


def unsafe_state(bad: str, where: str) -> GraphState:
    schema = Schema(node_types=[bad if where == "node_type" else "Good"],
                    edge_types=[bad if where == "edge_type" else "REL"],
                    identity_keys={bad if where == "node_type" else "Good": [bad if where == "identity_key" else "name"]})
    state = GraphState(schema.compile())  # built by hand: compile() does not check names, the exporter must
    t = schema.node_types[0]
    key = schema.identity_keys[t][0]
    a = state.add_node(t, {key: "a", **({bad: 1} if where == "property_key" else {})})
    b = state.add_node(t, {key: "b"})
    state.add_edge(a, schema.edge_types[0], b, {})
    return state


@pytest.mark.parametrize("where", ["node_type", "edge_type", "identity_key", "property_key"])
def test_unsafe_names_are_rejected_before_anything_reaches_the_database(bolt, where):
    sc = scope()
    # an unreachable server: the name is refused before any connection is tried
    dead = Neo4jSettings(uri=f"bolt://127.0.0.1:{free_port(set())}", connect_attempts=1, connection_timeout=1)
    for bad in BAD_NAMES:
        state = unsafe_state(bad, where)
        with pytest.raises(ExportError, match="not a safe identifier"):
            export_neo4j(state, settings=dead, scope=sc)
        with pytest.raises(ExportError, match="not a safe identifier"):
            export_neo4j(state, settings=bolt.server.settings(), scope=sc)
        with pytest.raises(ExportError, match="not a safe identifier"):
            write_cypher(state, "/dev/null")
    state = unsafe_state("igg_scope", "property_key")
    with pytest.raises(ExportError, match="reserved for the export scope"):
        export_neo4j(state, settings=dead, scope=sc)
    assert bolt.query("MATCH (n) WHERE n.igg_scope = $s RETURN count(n) AS c", s=sc)[0]["c"] == 0


def test_the_cypher_script_loads_the_same_graph_twice(bolt, tmp_path):
    w = Workspace()
    w.apply(node("Class", name="it's \\n \"quoted\" `tick` })", package="é 😀", n=3, f=0.5, ok=True, tags=["a", "b'"]),
            node("Method", name="login", signature="(String) -> bool"),
            edge("CALLS", {"name": "login"}, {"name": "it's \\n \"quoted\" `tick` })"}, weight=2),
            *[node("Class", name=f"c{i}", package="p" * 40) for i in range(120)])
    sc = scope()
    path = tmp_path / "g.cypher"
    summary = write_cypher(w.state, path, scope=sc)
    text = path.read_text(encoding="utf-8")
    assert summary["statements"] == text.count(";\n") >= 4 and text.startswith("// IGG graph export")
    # FalkorDB has no CREATE CONSTRAINT: the data statements are the same either way
    statements = script_statements(w.state, scope=sc, constraints=bolt.server.external)
    assert all(s in text for s in statements)
    for _ in range(2):
        for statement in statements:
            bolt.query(statement)
    assert bolt.contents(sc) == expected(w)


def test_control_characters_nul_and_u0001_survive_or_are_reported(bolt):
    w = Workspace()
    w.apply(node("Class", name="soh \x01 id", package="nul \x00 here"), node("Class", name="B", package="p"),
            edge("CALLS", {"name": "soh \x01 id"}, {"name": "B"}))
    sc = scope()
    summary = bolt.export(w.state, scope=sc)
    nodes, edges = bolt.contents(sc)
    assert ("Class", "soh \x01 id") in nodes and len(edges) == 1
    if summary["server"] == "falkordb":
        assert any("U+0000" in x for x in summary["warnings"]) and any("U+0001" in x for x in summary["warnings"])
        assert nodes[("Class", "soh \x01 id")]["package"] == "nul "
    else:
        assert nodes[("Class", "soh \x01 id")]["package"] == "nul \x00 here"
    bolt.export(w.state, scope=sc)
    assert bolt.contents(sc) == (nodes, edges)


def test_the_server_is_detected_and_identity_indexes_exist(bolt):
    w, sc = sample(), scope()
    summary = bolt.export(w.state, scope=sc)
    if summary["server"] == "neo4j":
        names = {r["name"] for r in bolt.query("SHOW CONSTRAINTS YIELD name RETURN name")}
        names |= {r["name"] for r in bolt.query("SHOW INDEXES YIELD name RETURN name")}
        assert "igg_Class_unique" in names or "igg_Class_identity" in names
    else:
        assert summary["agent"].startswith("Neo4j/")
        indexed = {(r["label"], p) for r in bolt.query("CALL db.indexes() YIELD label, properties "
                                                        "RETURN label, properties") for p in r["properties"]}
        assert {("Class", "name"), ("Method", "name")} <= indexed


def test_a_bad_uri_and_a_down_server_give_one_line_errors():
    w = sample()
    with pytest.raises(ExportError, match="bad Neo4j URI 'http://localhost:7687': unknown scheme 'http'"):
        export_neo4j(w.state, uri="http://localhost:7687", env={})
    with pytest.raises(ExportError, match="bad Neo4j URI .*port"):
        export_neo4j(w.state, uri="bolt://localhost:notaport", env={})
    port = free_port(set())
    with pytest.raises(ExportError, match=f"cannot reach a Bolt server at bolt://127.0.0.1:{port}.*refused"):
        export_neo4j(w.state, settings=Neo4jSettings(uri=f"bolt://127.0.0.1:{port}", connection_timeout=1))


def test_settings_come_from_the_environment_and_the_password_is_never_shown():
    s = Neo4jSettings.from_env({"NEO4J_URI": "neo4j://db:7687", "NEO4J_USERNAME": "u", "NEO4J_PASSWORD": "hunter2",
                                "NEO4J_DATABASE": "graphs"}, database="other")
    assert (s.uri, s.username, s.password, s.database) == ("neo4j://db:7687", "u", "hunter2", "other")
    assert "hunter2" not in repr(s)
    assert Neo4jSettings(uri="bolt://u:pw@host:7687").display_uri() == "bolt://host:7687"


def test_cli_exports_to_the_bolt_server_and_reports_failures_in_one_line(bolt, tmp_path):
    from igg.export import write_json

    w, sc = sample(), scope()
    doc = tmp_path / "g.json"
    write_json(w.state, doc, schema=w.request.config.schema_, metadata={"session_id": sc})
    env = {"PATH": "/usr/bin:/bin", "NEO4J_URI": bolt.server.uri, **bolt.server.env}
    run = subprocess.run([sys.executable, "-m", "igg", "export", str(doc), "--format", "neo4j", "--timeout", "3",
                          "--json"], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120)
    bolt.server.after_close()
    assert run.returncode == 0, run.stderr
    assert f'"scope": "{sc}"' in run.stdout
    assert bolt.contents(sc) == expected(w)
    env["NEO4J_PASSWORD"] = "s3cret-value"
    down = subprocess.run([sys.executable, "-m", "igg", "export", str(doc), "-f", "neo4j", "--timeout", "1",
                           "--uri", f"bolt://127.0.0.1:{free_port(set())}"],
                          capture_output=True, text=True, env=env, cwd=ROOT, timeout=60)
    assert down.returncode == 1 and "Traceback" not in down.stderr and "s3cret" not in down.stderr
    assert "igg: cannot reach a Bolt server" in down.stderr
    bad = subprocess.run([sys.executable, "-m", "igg", "export", str(doc), "-f", "neo4j", "--uri", "localhost"],
                         capture_output=True, text=True, env=env, cwd=ROOT, timeout=60)
    assert bad.returncode == 2 and bad.stderr.startswith("igg: bad Neo4j URI 'localhost'")
