"""Neo4j export against a real Bolt server: ArcadeDB started by the suite, or the Neo4j at NEO4J_URI."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import threading
import uuid

import pytest
from structlog.testing import capture_logs

from igg.errors import ExportError
from igg.export import export_neo4j, write_cypher
from igg.export.cypher_script import script_statements
from igg.export.neo4j.bolt import BoltSession, Neo4jSettings, plan_neo4j
from igg.graph.state import GraphState
from igg.models.schema import Schema
from tests.conftest import ROOT, Workspace, edge, node
from tests.support.bolt import BoltServer, free_port


class Bolt:
    """Export, plan and query helpers for the session's Bolt server."""

    def __init__(self, server: BoltServer) -> None:
        self.server = server

    def export(self, state: GraphState, **kwargs):
        return export_neo4j(state, settings=self.server.settings(), **kwargs)

    def plan(self, state: GraphState, **kwargs):
        return plan_neo4j(state, settings=self.server.settings(), **kwargs)

    def query(self, text: str, **params):
        with BoltSession(self.server.settings()) as session:
            return session.run(text, **params)

    def contents(self, scope: str) -> tuple[dict, set]:
        """{(label, name): properties} and {(from name, type, to name, properties)} of one scope."""
        nodes = {}
        for r in self.query(
            "MATCH (n) WHERE n.igg_scope = $s RETURN labels(n) AS l, properties(n) AS p", s=scope
        ):
            props = dict(r["p"])
            assert props.pop("igg_scope") == scope
            assert (r["l"][0], props.get("name")) not in nodes, f"duplicate node {props}"
            nodes[(r["l"][0], props.get("name"))] = props
        edges = set()
        for r in self.query(
            "MATCH (a)-[e]->(b) WHERE e.igg_scope = $s RETURN a.name AS a, type(e) AS t, "
            "b.name AS b, properties(e) AS p",
            s=scope,
        ):
            props = {k: v for k, v in r["p"].items() if k != "igg_scope"}
            key = (r["a"], r["t"], r["b"], tuple(sorted((k, str(v)) for k, v in props.items())))
            assert key not in edges, f"duplicate edge {key}"
            edges.add(key)
        return nodes, edges

    def count(self, scope: str) -> int:
        return self.query("MATCH (n) WHERE n.igg_scope = $s RETURN count(n) AS c", s=scope)[0]["c"]


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
        node(
            "Class",
            name="AuthService",
            package="com.app.auth",
            lines=120,
            ratio=0.5,
            public=True,
            tags=["a", "b"],
        ),
        node("Class", name='it\'s \\n "quoted" `tick` })', package="ctl \x02\x1f\x7f end"),
        node("Class", name="emoji 😀 🚀 é", package="x'\\" * 3400),
        node("Method", name="login", signature="(String) -> bool"),
        edge("CALLS", {"name": "AuthService"}, {"name": "login"}, weight=2, note="it's"),
        edge("CALLS", {"name": "emoji 😀 🚀 é"}, {"name": "AuthService"}),
        edge(
            "WRITES_TO", {"name": 'it\'s \\n "quoted" `tick` })'}, {"name": "AuthService"}, doc="y" * 10_000
        ),
    )
    assert all(v.accepted for v in verdicts), [v.message for v in verdicts if not v.accepted]
    return w


def expected(w: Workspace) -> tuple[dict, set]:
    s = w.state
    nodes = {(s.node_type(n), s.node_properties(n)["name"]): dict(s.node_properties(n)) for n in s.graph}
    edges = {
        (
            s.node_properties(u)["name"],
            d["type"],
            s.node_properties(v)["name"],
            tuple(sorted((k, str(x)) for k, x in d["properties"].items())),
        )
        for _, u, v, d in s.edges()
    }
    return nodes, edges


def test_export_writes_labels_types_and_values_exactly(bolt):
    w, sc = sample(), scope()
    summary = bolt.export(w.state, scope=sc, batch_size=2)
    assert summary["nodes"] == 4 and summary["edges"] == 3 and summary["scope"] == sc
    assert summary["server"] in ("arcadedb", "neo4j") and summary["batches"] >= 4
    assert summary["changes"]["nodes"]["create"] == 4 and summary["changes"]["edges"]["create"] == 3
    assert bolt.contents(sc) == expected(w)


def test_exporting_twice_writes_nothing_the_second_time(bolt):
    w, sc = sample(), scope()
    bolt.export(w.state, scope=sc)
    first = bolt.contents(sc)
    again = bolt.export(w.state, scope=sc, batch_size=1)
    assert again["batches"] == 0
    assert again["changes"] == {
        "nodes": {"create": 0, "update": 0, "delete": 0, "unchanged": 4},
        "edges": {"create": 0, "update": 0, "delete": 0, "unchanged": 3},
    }
    assert bolt.contents(sc) == first == expected(w)


def test_the_scope_mirrors_the_graph_updates_and_deletions_included(bolt):
    w, sc = sample(), scope()
    bolt.export(w.state, scope=sc)
    w.apply(
        {
            "type": "UPDATE_NODE",
            "node": {"name": "AuthService"},
            "properties": {"lines": 7},
            "remove": ["tags"],
        },
        {
            "type": "DELETE_EDGE",
            "label": "CALLS",
            "from": {"name": "emoji 😀 🚀 é"},
            "to": {"name": "AuthService"},
        },
        {"type": "DELETE_NODE", "node": {"name": "login"}},
    )
    summary = bolt.export(w.state, scope=sc)
    assert summary["changes"]["nodes"] == {"create": 0, "update": 1, "delete": 1, "unchanged": 2}
    assert summary["changes"]["edges"] == {"create": 0, "update": 0, "delete": 2, "unchanged": 1}
    nodes, _ = bolt.contents(sc)
    assert nodes[("Class", "AuthService")]["lines"] == 7 and "tags" not in nodes[("Class", "AuthService")]
    assert bolt.contents(sc) == expected(w)


def test_scopes_keep_graphs_from_different_runs_apart(bolt):
    a, b = Workspace(), Workspace()
    a.apply(node("Class", name="Shared", package="from-a"))
    b.apply(
        node("Class", name="Shared", package="from-b"),
        node("Class", name="OnlyB", package="b"),
        edge("CALLS", {"name": "OnlyB"}, {"name": "Shared"}),
    )
    sa, sb = scope(), scope()
    bolt.export(a.state, scope=sa)
    bolt.export(b.state, scope=sb)
    bolt.export(a.state, scope=sa)  # a's mirror deletes nothing of b's
    assert bolt.contents(sa) == expected(a)
    assert bolt.contents(sb) == expected(b)


def typed_state(label: str, keys: list[str]) -> GraphState:
    schema = Schema(node_types=[label], edge_types=["REL"], identity_keys={label: keys})
    return GraphState(schema.compile())


def test_identity_constraints_are_created_once_composite_where_the_identity_is(bolt):
    label = f"T{uuid.uuid4().hex[:8]}"
    state = typed_state(label, ["name", "signature"])
    a = state.add_node(label, {"name": "f", "signature": "()"})
    b = state.add_node(label, {"name": "f", "signature": "(int)"})
    state.add_edge(a, "REL", b, {})
    sc = scope()
    first = bolt.export(state, scope=sc)
    text = f"constraint igg_{label}_unique ON :{label}(igg_scope, name, signature)"
    assert first["constraints"] == {"capability": "uniqueness constraints", "created": [text], "existing": []}
    second = bolt.export(state, scope=scope())
    assert second["constraints"] == {
        "capability": "uniqueness constraints",
        "created": [],
        "existing": [text],
    }
    shown = [
        r
        for r in bolt.query(
            "SHOW CONSTRAINTS YIELD name, labelsOrTypes, properties RETURN name, labelsOrTypes, properties"
        )
        if r["name"] == f"igg_{label}_unique"
    ]
    assert shown == [
        {
            "name": f"igg_{label}_unique",
            "labelsOrTypes": [label],
            "properties": ["igg_scope", "name", "signature"],
        }
    ]
    with pytest.raises(
        Exception, match="(?i)constraint|duplicate|already"
    ):  # the database now refuses a twin
        bolt.query(f"CREATE (n:`{label}` {{igg_scope: $s, name: 'f', signature: '()'}})", s=sc)
    if bolt.server.external:
        bolt.query(f"DROP CONSTRAINT igg_{label}_unique IF EXISTS")


def overlapping(i: int) -> Workspace:
    """Exporter i's graph: classes c{2i}..c{2i+7} in a chain, overlapping its neighbours' graphs."""
    w = Workspace()
    names = [f"c{k}" for k in range(2 * i, 2 * i + 8)]
    w.apply(
        *[node("Class", name=n, package="p") for n in names],
        *[edge("CALLS", {"name": x}, {"name": y}) for x, y in zip(names, names[1:], strict=False)],
    )
    return w


def run_at_once(jobs) -> list[BaseException]:
    errors: list[BaseException] = []
    barrier = threading.Barrier(len(jobs))

    def go(job):
        barrier.wait()
        try:
            job()
        except BaseException as exc:  # noqa: BLE001 - the test reports every failure
            errors.append(exc)

    threads = [threading.Thread(target=go, args=(job,)) for job in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return errors


def test_four_concurrent_exporters_never_fail_or_duplicate(bolt):
    graphs = [overlapping(i) for i in range(4)]
    same = scope()
    # the same scope, the same graph four times at once: exactly that graph, once
    assert run_at_once([lambda: bolt.export(graphs[3].state, scope=same, batch_size=3)] * 4) == []
    assert bolt.contents(same) == expected(graphs[3])
    # the same scope, overlapping graphs: no failure, no duplicate (contents() asserts it), only known names
    shared = scope()
    assert run_at_once([lambda w=w: bolt.export(w.state, scope=shared, batch_size=3) for w in graphs]) == []
    nodes, edges = bolt.contents(shared)
    assert nodes and {name for _, name in nodes} <= {f"c{k}" for k in range(14)}
    # different scopes sharing every key: each scope holds exactly its own graph
    scopes = [scope() for _ in graphs]
    assert (
        run_at_once(
            [
                lambda w=w, s=s: bolt.export(w.state, scope=s, batch_size=3)
                for w, s in zip(graphs, scopes, strict=True)
            ]
        )
        == []
    )
    for w, s in zip(graphs, scopes, strict=True):
        assert bolt.contents(s) == expected(w)


def test_values_the_driver_cannot_carry_are_refused_before_writing(bolt):
    w = Workspace()
    w.apply(
        node("Class", name="Big", package="p", size=2**70),
        node("Class", name="Fine", package="p"),
        node("Class", name="Odd", package="p", ratios=[1.5, 2.5]),
    )
    n = next(n for n in w.state.graph if w.state.node_properties(n)["name"] == "Odd")
    w.state.graph.nodes[n]["properties"]["ratios"] = [1.5, math.nan]  # slipped past validation somehow
    sc = scope()
    with pytest.raises(ExportError) as info:
        bolt.export(w.state, scope=sc)
    message = str(info.value)
    assert "nothing was written" in message
    assert (
        "node Class {name: \"Big\"} property 'size' = 1180591620717411303424: an integer beyond 64 bits"
        in message
    )
    assert "node Class {name: \"Odd\"} property 'ratios' = [1.5, nan]: NaN" in message
    assert bolt.count(sc) == 0
    with pytest.raises(ExportError, match="beyond 64 bits"):
        bolt.plan(w.state, scope=sc)


def test_a_run_with_an_unexportable_value_still_writes_its_other_exports(bolt, tmp_path):
    request = json.loads((ROOT / "fixtures" / "seed_request.json").read_text())
    (tmp_path / "request.json").write_text(json.dumps(request))
    turn = {
        "reasoning": "",
        "finished": True,
        "actions": [
            {
                "type": "ADD_NODE",
                "label": "Class",
                "properties": {"name": "Big", "package": "p", "size": 2**70},
            }
        ],
    }
    (tmp_path / "t.jsonl").write_text(json.dumps(turn) + "\n")
    env = {"PATH": "/usr/bin:/bin", "NEO4J_URI": bolt.server.uri, **bolt.server.env}
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "igg",
            "run",
            str(tmp_path / "request.json"),
            "--agent",
            f"script:{tmp_path / 't.jsonl'}",
            "--export",
            "neo4j",
            "--export",
            f"json:{tmp_path / 'g.json'}",
            "--json",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    assert "property 'size' = 1180591620717411303424: an integer beyond 64 bits" in run.stderr
    exports = {e["format"]: e for e in json.loads(run.stdout)["exports"]}
    assert exports["neo4j"]["ok"] is False and exports["json"]["ok"] is True
    assert json.loads((tmp_path / "g.json").read_text())["nodes"][0]["properties"]["size"] == 2**70


def test_the_plan_lists_creates_updates_and_deletes_without_writing(bolt):
    w, sc = sample(), scope()
    first = bolt.plan(w.state, scope=sc)
    assert first["counts"]["nodes"]["create"] == 4 and first["counts"]["edges"]["create"] == 3
    assert {"action": "create", "element": "node", "what": 'Class {name: "AuthService"}'} in first["changes"]
    assert bolt.count(sc) == 0  # nothing written, no constraint needed
    bolt.export(w.state, scope=sc)
    assert bolt.plan(w.state, scope=sc)["changes"] == []
    w.apply(
        {"type": "UPDATE_NODE", "node": {"name": "AuthService"}, "properties": {"lines": 7}},
        {"type": "DELETE_NODE", "node": {"name": "login"}},
        node("Class", name="New", package="n"),
    )
    plan = bolt.plan(w.state, scope=sc)
    assert plan["counts"]["nodes"] == {"create": 1, "update": 1, "delete": 1, "unchanged": 2}
    assert plan["counts"]["edges"] == {"create": 0, "update": 0, "delete": 1, "unchanged": 2}
    assert {
        "action": "update",
        "element": "node",
        "what": 'Class {name: "AuthService"}',
        "properties": {"lines": [120, 7]},
    } in plan["changes"]
    assert {"action": "delete", "element": "node", "what": 'Method {name: "login"}'} in plan["changes"]
    assert {
        "action": "delete",
        "element": "edge",
        "what": 'Class {name: "AuthService"} -[CALLS]-> Method {name: "login"}',
    } in plan["changes"]
    assert bolt.count(sc) == 4 and bolt.contents(sc) != expected(w)
    bolt.export(w.state, scope=sc)
    assert bolt.contents(sc) == expected(w)


def test_provenance_lands_on_nodes_and_relationships(bolt):
    w = Workspace()
    w.state.iteration, w.state.chunk = 2, "chunk-3"
    w.apply(
        node("Class", name="A", package="p"),
        node("Class", name="B", package="p"),
        edge("CALLS", {"name": "A"}, {"name": "B"}),
    )
    w.state.iteration, w.state.chunk = 5, None
    w.apply({"type": "UPDATE_NODE", "node": {"name": "A"}, "properties": {"lines": 3}})
    sc = scope()
    summary = bolt.export(w.state, scope=sc, provenance="session-42")
    assert summary["provenance"] is True
    nodes, edges = bolt.contents(sc)
    assert nodes[("Class", "A")] == {
        "name": "A",
        "package": "p",
        "lines": 3,
        "igg_session": "session-42",
        "igg_created": 2,
        "igg_updated": 5,
        "igg_chunk": "chunk-3",
    }
    assert nodes[("Class", "B")] == {
        "name": "B",
        "package": "p",
        "igg_session": "session-42",
        "igg_created": 2,
        "igg_chunk": "chunk-3",
    }
    assert edges == {
        ("A", "CALLS", "B", (("igg_chunk", "chunk-3"), ("igg_created", "2"), ("igg_session", "session-42")))
    }
    assert bolt.export(w.state, scope=sc, provenance="session-42")["batches"] == 0
    bolt.export(w.state, scope=sc)  # without provenance the properties go again
    assert bolt.contents(sc) == expected(w)
    n = next(iter(w.state.graph))
    w.state.graph.nodes[n]["properties"]["igg_created"] = (
        1  # IGG refuses igg_ keys; a hand-built graph may not
    )
    with pytest.raises(ExportError, match="'igg_created' of node type Class is reserved for provenance"):
        bolt.export(w.state, scope=sc, provenance="s")


def test_valid_time_lands_as_properties_and_as_of_is_a_where_clause(bolt):
    """Issue 43: the careers example's valid time reaches the database as properties, so the open facts and
    the facts of an instant are ordinary Cypher filters; a one-value property's history travels as a list."""
    from igg.agents.scripted import ScriptedAgent
    from igg.request.load import load_request
    from igg.service import run_request

    fixture = ROOT / "fixtures" / "time"
    result = run_request(
        load_request(fixture / "request.json"), ScriptedAgent.from_path(fixture / "transcript.jsonl")
    )
    sc = scope()
    bolt.export(result.state, scope=sc)
    open_jobs = bolt.query(
        "MATCH (p:Person)-[r:WORKS_AT]->(c:Company) WHERE r.igg_scope = $s AND "
        "r.igg_valid_to IS NULL RETURN p.name AS p, c.name AS c, r.igg_valid_from AS f",
        s=sc,
    )
    assert sorted((r["p"], r["c"], r["f"]) for r in open_jobs) == [
        ("Alice Chen", "Acme", "2024-01"),
        ("Bob Diaz", "Acme", "2021"),
        ("Carol Evans", "Umbrella", "2018"),
    ]
    alice = bolt.query(
        "MATCH (p:Person) WHERE p.igg_scope = $s AND p.name = 'Alice Chen' RETURN p.title AS t, "
        "p.igg_history AS h",
        s=sc,
    )[0]
    assert alice["t"] == "CTO" and len(alice["h"]) == 3 and '"value": "engineer"' in alice["h"][0]


def test_evidence_lands_as_properties_with_provenance(bolt):
    """Issue 30: an element's evidence goes to the database with --provenance: its quotes, where each was
    found, and whether any was."""
    from igg.models.actions import read_response
    from igg.session.session import Session
    from tests.conftest import make_request

    context = "// File: src/a.py\nclass A:\n    def run(self):\n        B().go()\n"
    session = Session.open(make_request(context_data=context, grounding="warn"))
    actions = [
        node("Class", name="A", package="p"),
        node("Class", name="B", package="p"),
        {**edge("CALLS", {"name": "A"}, {"name": "B"}), "evidence": ["B().go()", "A asks B politely"]},
    ]
    session.step(read_response({"reasoning": "", "actions": actions}))
    sc = scope()
    bolt.export(session.state, scope=sc, provenance="s-ev")
    nodes, edges = bolt.contents(sc)
    assert "igg_evidence" not in nodes[("Class", "A")]  # no evidence, no evidence keys
    ((_, _, _, props),) = edges
    props = dict(props)
    assert props["igg_evidence"] == str(["B().go()", "A asks B politely"])
    at = context.index("B().go()")
    assert props["igg_evidence_at"] == str([f"chunk 1 [{at}:{at + 8}] src/a.py:3:9", "not found"])
    assert props["igg_grounded"] == "True"


BAD_NAMES = ["Bad`) DETACH DELETE n //", "Quote'Label", "New\nLine", "x})-[:R]->(y", "has space", ""]


def unsafe_state(bad: str, where: str) -> GraphState:
    schema = Schema(
        node_types=[bad if where == "node_type" else "Good"],
        edge_types=[bad if where == "edge_type" else "REL"],
        identity_keys={bad if where == "node_type" else "Good": [bad if where == "identity_key" else "name"]},
    )
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
    assert bolt.count(sc) == 0


def test_the_cypher_script_loads_the_same_graph_twice(bolt, tmp_path):
    w = Workspace()
    w.apply(
        node(
            "Class",
            name='it\'s \\n "quoted" `tick` })',
            package="é 😀",
            n=3,
            f=0.5,
            ok=True,
            tags=["a", "b'"],
        ),
        node("Method", name="login", signature="(String) -> bool"),
        edge("CALLS", {"name": "login"}, {"name": 'it\'s \\n "quoted" `tick` })'}, weight=2),
        *[node("Class", name=f"c{i}", package="p" * 40) for i in range(120)],
    )
    sc = scope()
    path = tmp_path / "g.cypher"
    summary = write_cypher(w.state, path, scope=sc)
    text = path.read_text(encoding="utf-8")
    assert summary["statements"] == text.count(";\n") >= 4 and text.startswith("// IGG graph export")
    statements = script_statements(w.state, scope=sc)
    assert all(s in text for s in statements) and statements[0].startswith("CREATE CONSTRAINT")
    for _ in range(2):
        for statement in statements:
            bolt.query(statement)
    assert bolt.contents(sc) == expected(w)


def test_control_characters_nul_and_u0001_survive(bolt):
    w = Workspace()
    w.apply(
        node("Class", name="soh \x01 id", package="nul \x00 here"),
        node("Class", name="B", package="p"),
        edge("CALLS", {"name": "soh \x01 id"}, {"name": "B"}),
    )
    sc = scope()
    bolt.export(w.state, scope=sc)
    assert bolt.contents(sc) == expected(w)
    assert bolt.export(w.state, scope=sc)["batches"] == 0


def test_a_bad_uri_and_a_down_server_give_one_line_errors():
    w = sample()
    with pytest.raises(ExportError, match="bad Neo4j URI 'http://localhost:7687': unknown scheme 'http'"):
        export_neo4j(w.state, uri="http://localhost:7687", env={})
    with pytest.raises(ExportError, match="bad Neo4j URI .*port"):
        export_neo4j(w.state, uri="bolt://localhost:notaport", env={})
    port = free_port(set())
    with pytest.raises(ExportError, match=f"cannot reach a Bolt server at bolt://127.0.0.1:{port}.*refused"):
        export_neo4j(w.state, settings=Neo4jSettings(uri=f"bolt://127.0.0.1:{port}", connection_timeout=1))


def test_connect_retries_wait_with_exponential_backoff_and_log_at_debug():
    """An unreachable server is tried connect_attempts times, 0.2 s, 0.4 s, 0.8 s apart (the sleep injected);
    the retries log at debug level only, and the error names the attempts."""
    sleeps: list[float] = []
    port = free_port(set())
    settings = Neo4jSettings(uri=f"bolt://127.0.0.1:{port}", connect_attempts=4, connection_timeout=1)
    with capture_logs() as logs, pytest.raises(ExportError, match=f"127.0.0.1:{port} after 4 attempt"):
        with BoltSession(settings, sleep=sleeps.append):
            pass
    assert sleeps == [0.2, 0.4, 0.8]
    retries = [e for e in logs if e["event"] == "neo4j_connect_retry"]
    assert [(e["log_level"], e["attempt"], e["retry_in"]) for e in retries] == [
        ("debug", 1, 0.2),
        ("debug", 2, 0.4),
        ("debug", 3, 0.8),
    ]


def test_cli_export_to_an_unreachable_server_prints_one_line_and_exits_1(tmp_path):
    """`igg export --format neo4j --uri bolt://<closed port>`: exit 1 and exactly one stderr line (the retries
    and the export_failed event stay below the default log level)."""
    from igg.export import write_json

    w = sample()
    doc = tmp_path / "g.json"
    write_json(w.state, doc, schema=w.request.config.schema_, metadata={"session_id": scope()})
    port = free_port(set())
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEO4J_")}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "igg",
            "export",
            str(doc),
            "--format",
            "neo4j",
            "--uri",
            f"bolt://127.0.0.1:{port}",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 1 and done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"igg: cannot reach a Bolt server at bolt://127.0.0.1:{port} after 3 attempt(s): ")
    assert line.endswith("; is it running?")


def test_wrong_credentials_are_named_without_the_password(bolt):
    if bolt.server.external:
        pytest.skip(
            "an external Neo4j (NEO4J_URI) is not sent wrong credentials: failed logins can lock its "
            "account; the ArcadeDB the tests start themselves is"
        )
    settings = bolt.server.settings(password="s3cret-wrong")
    with pytest.raises(ExportError) as info:
        export_neo4j(sample().state, settings=settings, scope=scope())
    assert "refused the credentials of user 'root'" in str(info.value) and "s3cret" not in str(info.value)


def test_settings_come_from_the_environment_and_the_password_is_never_shown():
    s = Neo4jSettings.from_env(
        {
            "NEO4J_URI": "neo4j://db:7687",
            "NEO4J_USERNAME": "u",
            "NEO4J_PASSWORD": "hunter2",
            "NEO4J_DATABASE": "graphs",
        },
        database="other",
    )
    assert (s.uri, s.username, s.password, s.database) == ("neo4j://db:7687", "u", "hunter2", "other")
    assert "hunter2" not in repr(s)
    assert Neo4jSettings(uri="bolt://u:pw@host:7687").display_uri() == "bolt://host:7687"


def test_cli_exports_plans_and_reports_failures_in_one_line(bolt, tmp_path):
    from igg.export import write_json

    w, sc = sample(), scope()
    doc = tmp_path / "g.json"
    write_json(w.state, doc, schema=w.request.config.schema_, metadata={"session_id": sc})
    env = {"PATH": "/usr/bin:/bin", "NEO4J_URI": bolt.server.uri, **bolt.server.env}

    def igg(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "igg", "export", str(doc), *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
            timeout=120,
        )

    plan = igg("--format", "neo4j", "--plan")
    assert plan.returncode == 0, plan.stderr
    assert (
        f"plan for scope '{sc}'" in plan.stdout
        and "nodes: 4 to create, 0 to update, 0 to delete" in plan.stdout
    )
    assert '  create node Class {name: "AuthService"}' in plan.stdout and bolt.count(sc) == 0
    run = igg("--format", "neo4j", "--timeout", "3", "--json")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["exports"][0]["scope"] == sc
    assert bolt.contents(sc) == expected(w)
    plan = igg("--format", "neo4j", "--plan", "--json")
    assert json.loads(plan.stdout)["counts"]["nodes"]["unchanged"] == 4
    env["NEO4J_PASSWORD"] = "s3cret-value"
    down = igg("-f", "neo4j", "--timeout", "1", "--uri", f"bolt://127.0.0.1:{free_port(set())}")
    assert down.returncode == 1 and "Traceback" not in down.stderr and "s3cret" not in down.stderr
    assert "igg: cannot reach a Bolt server" in down.stderr
    bad = igg("-f", "neo4j", "--uri", "localhost")
    assert bad.returncode == 2 and bad.stderr.startswith("igg: bad Neo4j URI 'localhost'")
    wrong = igg("-f", "graphml", "--plan")
    assert wrong.returncode == 2 and "--plan applies to --format neo4j" in wrong.stderr
