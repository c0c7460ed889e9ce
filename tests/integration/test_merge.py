"""MERGE_NODES, UPDATE_EDGE and QUERY: rules, effects, undo/replay/diff/explain, and the agent's next
observation."""

from __future__ import annotations

import json
import subprocess
import sys

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from igg.graph.invariants import invariant_violations
from igg.graph.journal import NodesMerged, read_mutation
from igg.models.verdicts import ErrorCode as C
from igg.store import codec
from tests.conftest import FIXTURES, Workspace, edge, node

OFF = {"duplicates": {"policy": "off"}}


def cls(name: str, **extra: object) -> dict:
    return node("Class", name=name, package="p", **extra)


def merge(a: str, b: str, **extra: object) -> dict:
    return {"type": "MERGE_NODES", "node": {"name": a}, "into": {"name": b}, **extra}


def graph_with_a_duplicate() -> Workspace:
    ws = Workspace(constraints=OFF)
    verdicts = ws.apply(
        cls("AuthService", doc="kept"),
        cls("auth_service", doc="lost", lines=3),
        cls("Ctrl"),
        cls("Repo"),
        edge("CALLS", {"name": "Ctrl"}, {"name": "AuthService"}),
        edge("CALLS", {"name": "Ctrl"}, {"name": "auth_service"}, weight=2),
        edge("CALLS", {"name": "auth_service"}, {"name": "Repo"}),
        edge("CALLS", {"name": "auth_service"}, {"name": "AuthService"}),
    )
    assert all(v.accepted for v in verdicts)
    ws.state.take_journal()
    return ws


def test_merge_moves_edges_collapses_repeats_and_self_loops_and_merges_properties_by_the_rule():
    ws = graph_with_a_duplicate()
    v = ws.one(merge("auth_service", "AuthService"))
    assert v.accepted and v.element == "n1"
    assert v.message == (
        'merged Class "auth_service" (n2) into Class "AuthService" (n1): 1 edge moved, 2 collapsed; '
        "properties added: lines"
    )
    props = ws.state.node_properties("n1")
    assert props == {"name": "AuthService", "package": "p", "doc": "kept", "lines": 3}
    assert ws.state.graph.nodes["n1"]["provenance"]["merged"] == ["n2"]
    assert "n2" not in ws.state.graph
    assert sorted((u, d["type"], w) for _, u, w, d in ws.state.edges()) == [
        ("n1", "CALLS", "n4"),
        ("n3", "CALLS", "n1"),
    ]
    assert ws.state.edge_between("n1", "CALLS", "n4") == "e3"  # a moved edge keeps its id
    assert invariant_violations(ws.state, ws.request.config.constraints) == []
    ws = graph_with_a_duplicate()
    assert ws.one(merge("auth_service", "AuthService", prefer="node")).accepted
    assert (
        ws.state.node_properties("n1")["doc"] == "lost"
        and ws.state.node_properties("n1")["name"] == "AuthService"
    )


def test_merge_refusals_name_the_fix():
    ws = graph_with_a_duplicate()
    ws.one(node("Interface", name="IAuth"))
    v = ws.one(merge("Ctrl", "Ctrl"))
    assert v.code == C.INVALID_MERGE and "the same node" in v.message
    v = ws.one(merge("IAuth", "AuthService"))
    assert v.code == C.INVALID_MERGE and "only nodes of the same type merge" in v.message
    assert ws.one(merge("nope", "AuthService")).code == C.NODE_NOT_FOUND
    no_delete = Workspace(constraints={**OFF, "allow_deletions": False})
    assert no_delete.one(merge("a", "b")).code == C.DELETION_FORBIDDEN
    seeded = Workspace(
        constraints=OFF,
        seed_data={
            "nodes": [{"id": "s1", "type": "Class", "properties": {"name": "Seed", "package": "p"}}],
            "edges": [],
        },
    )
    seeded.one(cls("Seed2"))
    v = seeded.one(merge("Seed", "Seed2"))
    assert v.code == C.PROTECTED_NODE and "merge the other way round" in v.message
    assert seeded.one(merge("Seed2", "Seed")).accepted


def test_update_edge_sets_and_removes_properties_and_keeps_the_edge_id():
    ws = graph_with_a_duplicate()
    v = ws.one(
        {
            "type": "UPDATE_EDGE",
            "label": "CALLS",
            "from": {"name": "Ctrl"},
            "to": {"name": "auth_service"},
            "properties": {"count": 3},
            "remove": ["weight"],
        }
    )
    assert v.accepted and v.message == "updated CALLS edge e2 (n3 -> n2)"
    assert ws.state.graph["n3"]["n2"]["e2"]["properties"] == {"count": 3}
    assert ws.state.graph["n3"]["n2"]["e2"]["provenance"]["updated"] == 0
    v = ws.one({"type": "UPDATE_EDGE", "label": "CALLS", "from": {"name": "Repo"}, "to": {"name": "Ctrl"}})
    assert v.code == C.EDGE_NOT_FOUND and "add it with ADD_EDGE" in v.message
    typed = Workspace(
        constraints=OFF,
        schema={
            "node_types": ["Class"],
            "edge_types": ["CALLS"],
            "required_attributes": {},
            "property_types": {"CALLS": {"n": "integer"}},
        },
    )
    typed.apply(node("Class", name="A"), node("Class", name="B"), edge("CALLS", {"name": "A"}, {"name": "B"}))
    v = typed.one(
        {
            "type": "UPDATE_EDGE",
            "label": "CALLS",
            "from": {"name": "A"},
            "to": {"name": "B"},
            "properties": {"n": "x"},
        }
    )
    assert v.code == C.WRONG_PROPERTY_TYPE


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "igg", *args], capture_output=True, text=True, timeout=120)


def test_a_merge_is_undone_replayed_diffed_and_explained_through_the_cli(tmp_path):
    request = json.loads((FIXTURES / "seed_request.json").read_text())
    request["session_id"] = "merge-1"
    request["config"]["constraints"]["duplicates"] = {"policy": "warn"}
    (tmp_path / "request.json").write_text(json.dumps(request))
    turns = [
        {
            "reasoning": "two spellings",
            "actions": [
                cls("AuthService"),
                cls("auth_service", lines=3),
                cls("Ctrl"),
                edge("CALLS", {"name": "Ctrl"}, {"name": "auth_service"}),
            ],
        },
        {
            "reasoning": "they are one class",
            "actions": [
                merge("auth_service", "AuthService"),
                {"type": "QUERY", "query": {"query": "neighbours", "node": {"name": "Ctrl"}}},
            ],
        },
        {"reasoning": "done", "actions": [], "finished": True},
    ]
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(t) + "\n" for t in turns))
    store = str(tmp_path / "s.sqlite")
    out = run_cli(
        "run",
        str(tmp_path / "request.json"),
        "--agent",
        f"script:{tmp_path / 't.jsonl'}",
        "--store",
        store,
        "--json",
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["nodes"] == 2
    diff = run_cli("diff", "merge-1", "1", "2", "--store", store, "--json")
    changes = {(c["element"], c["change"]) for c in json.loads(diff.stdout)}
    assert {("n1", "changed"), ("n2", "deleted")} <= changes and ("e1", "changed") in changes
    explain = run_cli("explain", "merge-1", "auth_service", "--store", store)
    assert "they are one class" in explain.stdout
    assert (
        'merge_nodes n2: merged n2 "auth_service" into n1 "AuthService": 1 edge moved, 0 collapsed'
        in explain.stdout
    )
    into = run_cli("explain", "merge-1", "AuthService", "--store", store)
    assert 'merged n2 "auth_service" into n1 "AuthService"' in into.stdout, into.stdout
    from igg.store import SessionStore

    merged = [m for _, m in SessionStore(store).mutations("merge-1") if m.op not in ("add_node", "add_edge")]
    assert len(merged) == 1 and isinstance(merged[0], NodesMerged)  # ONE journaled mutation
    assert (merged[0].id, merged[0].into, [e.id for e in merged[0].edges]) == ("n2", "n1", ["e1"])
    assert run_cli("replay", "merge-1", "--store", store).returncode == 0
    undo = run_cli("undo", "merge-1", "--to", "1", "--store", store)
    assert undo.returncode == 0, undo.stderr
    _, state, _ = SessionStore(store).load_state("merge-1")
    assert sorted(p["name"] for _, p in state.graph.nodes(data="properties")) == [
        "AuthService",
        "Ctrl",
        "auth_service",
    ]
    assert state.edge_between("n3", "CALLS", "n2") == "e1"
    assert run_cli("replay", "merge-1", "--store", store).returncode == 0


def test_a_query_is_answered_in_the_next_observation():
    import igg

    request = igg.load_request(str((FIXTURES / "seed_request.json").read_text()))
    seen: list[str] = []
    turns = iter(
        [
            {
                "reasoning": "",
                "actions": [
                    cls("AuthService"),
                    cls("Ctrl"),
                    edge("CALLS", {"name": "Ctrl"}, {"name": "AuthService"}),
                    {
                        "type": "QUERY",
                        "query": {"query": "path", "from": {"name": "Ctrl"}, "to": {"name": "AuthService"}},
                    },
                ],
            },
            {"reasoning": "", "actions": [], "finished": True},
        ]
    )

    def agent(observation):
        seen.append(observation.markdown)
        return next(turns)

    result = igg.run(request, agent)
    assert result.stop_reason == "finished"
    assert "## Query answers" not in seen[0]
    assert (
        '## Query answers\n### Query (action 3)\nshortest path from "Ctrl" to "AuthService": 1 edge\n'
        '  Class "Ctrl" package="p"\n"Ctrl" -CALLS-> "AuthService"'
    ) in seen[1]


ACTION = st.one_of(
    st.builds(lambda n: cls(n), st.sampled_from(["A", "a_x", "B", "Bee", "C"])),
    st.builds(
        lambda a, b: edge("CALLS", {"name": a}, {"name": b}),
        st.sampled_from(["A", "B", "C"]),
        st.sampled_from(["a_x", "Bee", "C"]),
    ),
    st.builds(
        lambda a, b, p: merge(a, b, prefer=p),
        st.sampled_from(["A", "a_x", "B", "Bee", "C"]),
        st.sampled_from(["A", "a_x", "B", "Bee", "C"]),
        st.sampled_from(["into", "node"]),
    ),
    st.builds(
        lambda a, b: {
            "type": "UPDATE_EDGE",
            "label": "CALLS",
            "from": {"name": a},
            "to": {"name": b},
            "properties": {"w": 1},
        },
        st.sampled_from(["A", "B"]),
        st.sampled_from(["a_x", "C"]),
    ),
    st.builds(lambda n: {"type": "DELETE_NODE", "node": {"name": n}}, st.sampled_from(["A", "B", "C"])),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(turns=st.lists(st.lists(ACTION, max_size=6), min_size=1, max_size=5), undo_to=st.integers(0, 5))
def test_random_merges_and_undos_keep_the_invariants_and_replay_equal(turns, undo_to):
    """After every response the invariants hold; undoing to any point and replaying the journal agree."""
    ws = Workspace(constraints={**OFF, "allow_self_loops": False})
    limits = ws.request.config.constraints
    journals = []
    for actions in turns:
        verdicts = ws.apply(*actions)
        assert invariant_violations(ws.state, limits) == []
        journal = ws.state.take_journal()
        merges = sum(1 for v in verdicts if v.accepted and v.action == "MERGE_NODES")
        assert sum(1 for m in journal if isinstance(m, NodesMerged)) == merges  # one mutation per merge
        journals.append(journal)
    # replay: a fresh state fed every mutation, read back from its stored JSON form, equals the live one
    fresh = Workspace(constraints=OFF)
    for journal in journals:
        for m in journal:
            stored = read_mutation(json.dumps(m.to_dict()))
            assert stored == m
            fresh.state.apply_mutation(stored)
    assert codec.differences(fresh.state, ws.state) == []
    # undo to a point equals replaying up to that point
    target = min(undo_to, len(journals))
    for journal in reversed(journals[target:]):
        for m in reversed(journal):
            ws.state.revert_mutation(m)
    partial = Workspace(constraints=OFF)
    for journal in journals[:target]:
        for m in journal:
            partial.state.apply_mutation(m)
    assert codec.differences(ws.state, partial.state) == []
    assert invariant_violations(ws.state, limits) == []
