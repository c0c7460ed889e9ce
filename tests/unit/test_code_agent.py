"""The code agent obeys the request's schema, limits and verdicts, and resumes from the graph it finds."""

from __future__ import annotations

import json

from igg.act.context import CheckContext, NewNode
from igg.agents.code import CodeAgent, split_context
from igg.models.actions import AddNode
from igg.models.verdicts import ErrorCode
from tests.codegraph import CODE_FIXTURES, code_request, drive, graph_sets, sources
from tests.conftest import FIXTURES


def _agent(lang: str = "java") -> CodeAgent:
    return CodeAgent(sources=sources(CODE_FIXTURES / lang))


def test_never_proposes_past_max_nodes_and_says_what_it_left_out():
    agent = _agent()
    state, turns, verdicts = drive(agent, code_request(max_nodes=12))
    assert state.node_count == 12
    codes = {v.code for vs in verdicts for v in vs if not v.accepted}
    assert codes == set(), codes  # it checks the limit itself instead of collecting MAX_NODES_EXCEEDED
    assert agent.skipped["max_nodes reached"] == 60 - 12
    assert turns[-1]["finished"] and "max_nodes reached" in turns[-1]["reasoning"]


def test_never_proposes_past_max_edges():
    agent = _agent()
    state, _, verdicts = drive(agent, code_request(max_edges=20))
    assert state.edge_count == 20 and state.node_count == 60
    assert all(v.accepted for vs in verdicts for v in vs)


def test_respects_max_actions_per_response_and_still_maps_everything():
    full, _, _ = drive(_agent(), code_request())
    state, turns, verdicts = drive(_agent(), code_request(max_actions_per_response=7))
    assert max(len(t["actions"]) for t in turns) == 7
    assert all(v.accepted for vs in verdicts for v in vs)
    assert graph_sets(state) == graph_sets(full)


def test_edges_wait_for_their_targets_instead_of_failing():
    """AdminUser.java comes first, but User (its superclass) is declared in a later file."""
    state, turns, verdicts = drive(_agent(), code_request())
    first = turns[0]
    assert not any(a["type"] == "ADD_EDGE" and a["label"] == "EXTENDS" for a in first["actions"])
    assert "wait for nodes of later files" in first["reasoning"]
    assert not any(v.code == ErrorCode.NODE_NOT_FOUND for vs in verdicts for v in vs)
    extends = [
        a
        for t in turns
        for a in t["actions"]
        if a["type"] == "ADD_EDGE" and a["label"] == "EXTENDS" and a["from"].get("name") == "AdminUser"
    ]
    assert extends == [
        {
            "type": "ADD_EDGE",
            "label": "EXTENDS",
            "from": {"label": "Class", "package": "com.acme.model", "name": "AdminUser"},
            "to": {"label": "Class", "package": "com.acme.model", "name": "User"},
            "properties": {
                "file": "src/main/java/com/acme/model/AdminUser.java",
                "line": 3,
                "column": 1,
                "sites": ["src/main/java/com/acme/model/AdminUser.java:3:1"],
                "site_count": 1,
            },
        }
    ]


def _reject_methods_named(name: str, code: ErrorCode):
    def rule(ctx: CheckContext, a: AddNode, new: NewNode):
        if a.label == "Method" and a.properties.get("name") == name:
            return code, f"no {name} here"
        return None

    return rule


def _drive_with_rule(rule):
    from igg.act import Actor
    from igg.agents.base import Observation
    from igg.models.actions import read_response
    from igg.request.load import build_state

    request = code_request()
    state, _ = build_state(request)
    actor = Actor(
        state.schema, request.config.constraints, request.config.apply_mode, extra_rules={AddNode: (rule,)}
    )
    agent, verdicts, proposed = _agent(), [], []
    for i in range(1, 100):
        turn = agent(
            Observation(
                session_id="t",
                iteration=i,
                markdown="",
                tokens=0,
                last_verdicts=verdicts,
                request=request,
                state=state,
            )
        )
        proposed.append(turn)
        verdicts = actor.apply(state, read_response(turn).items)
        if turn.get("finished"):
            break
    return agent, state, proposed


def test_a_rejection_that_cannot_change_is_not_proposed_again_and_its_edges_are_dropped():
    agent, state, turns = _drive_with_rule(_reject_methods_named("getName", ErrorCode.UNGROUNDED_SYMBOL))
    adds = [
        a
        for t in turns
        for a in t["actions"]
        if a["type"] == "ADD_NODE" and a["properties"].get("name") == "getName"
    ]
    assert len(adds) == 2  # User#getName and AdminUser#getName, each proposed once
    edges_to = [
        a for t in turns for a in t["actions"] if a["type"] == "ADD_EDGE" and a["to"].get("name") == "getName"
    ]
    assert edges_to == []  # calls to a refused method are never proposed
    assert agent.skipped["rejected UNGROUNDED_SYMBOL"] == 2
    assert agent.skipped["edge endpoint refused or over the limit"] >= 4
    assert turns[-1]["finished"]


def test_rolled_back_actions_are_proposed_again():
    """Atomic mode: one rejection rolls back the whole response; the valid rest is re-proposed next turn."""
    request = code_request()
    payload = request.model_dump(by_alias=True, exclude_none=True)
    payload["config"]["apply_mode"] = "atomic"
    from igg.act import Actor
    from igg.agents.base import Observation
    from igg.models.actions import read_response
    from igg.request.load import build_state, load_request

    request = load_request(payload)
    state, _ = build_state(request)
    actor = Actor(
        state.schema,
        request.config.constraints,
        "atomic",
        extra_rules={AddNode: (_reject_methods_named("purge", ErrorCode.INVALID_PROPERTY),)},
    )
    agent, verdicts = _agent(), []
    rolled = 0
    for i in range(1, 100):
        turn = agent(
            Observation(
                session_id="t",
                iteration=i,
                markdown="",
                tokens=0,
                last_verdicts=verdicts,
                request=request,
                state=state,
            )
        )
        verdicts = actor.apply(state, read_response(turn).items)
        rolled += sum(v.code == ErrorCode.ROLLED_BACK for v in verdicts)
        if turn.get("finished"):
            break
    assert rolled > 0
    names = {state.node_properties(n).get("name") for n in state.graph.nodes}
    assert "JdbcUserRepository" in names and "find" in names and "purge" not in names


def test_a_fresh_agent_resumes_from_the_graph_without_duplicates():
    full, _, _ = drive(_agent(), code_request())
    request = code_request()
    state, turns, _ = drive(_agent(), request, max_turns=4)
    assert not turns[-1].get("finished")
    state, turns, verdicts = drive(_agent(), request, max_turns=95, state=state, first=5)
    assert turns[-1].get("finished")
    rejected = [v.message for vs in verdicts for v in vs if not v.accepted]
    assert rejected == []
    assert graph_sets(state) == graph_sets(full)


def test_fits_the_specifications_own_schema_without_a_single_rejection():
    """Seed schema: Class/Interface/Method/DatabaseTable, identity 'name': enums become classes, colliding
    method names are qualified so no edge lands on the wrong node, edge types the schema lacks are left
    out."""
    seed = json.loads((FIXTURES / "seed_request.json").read_text())
    state, turns, verdicts = drive(_agent(), code_request(schema=seed["config"]["schema"]))
    assert all(v.accepted for vs in verdicts for v in vs), [
        v.message for vs in verdicts for v in vs if not v.accepted
    ]
    nodes, edges = graph_sets(state)
    types = {n.split(" ")[0] for n in nodes}
    assert types == {"Class", "Interface", "Method", "DatabaseTable"}
    assert {e.split(" ")[0] for e in edges} == {"CALLS", "IMPLEMENTS", "READS_FROM", "WRITES_TO"}
    methods = {state.node_properties(n)["name"] for n in state.graph.nodes if state.node_type(n) == "Method"}
    assert {"AuthService.login", "User.getName", "AdminUser.getName"} <= methods  # Owner.name: no owner key
    assert "JdbcUserRepository.find(long)" in methods and "JdbcUserRepository.find(String)" in methods
    assert "Class com.acme.model.Role" in nodes  # the enum, as a Class
    assert "CALLS com.acme.service.AuthService#promote(long) -> com.acme.repo.Repository#find(long)" in edges
    # no CONTAINS to attach methods to types: their relations are lifted to the types, as in the spec's
    # example
    type_level = {e for e in edges if "#" not in e.split(" ")[1]}
    assert type_level == {
        "CALLS com.acme.model.AdminUser -> com.acme.model.User",
        "CALLS com.acme.model.User -> com.acme.model.BaseEntity",
        "CALLS com.acme.repo.JdbcUserRepository -> com.acme.model.User",
        "CALLS com.acme.service.AuthService -> com.acme.model.AdminUser",
        "CALLS com.acme.service.AuthService -> com.acme.model.User",
        "CALLS com.acme.service.AuthService -> com.acme.repo.Repository",
        "CALLS com.acme.service.AuthService -> com.acme.repo.UserRepository",
        "CALLS com.acme.service.AuthService -> com.acme.service.AuthService.Token",
        "CALLS com.acme.service.AuthService -> com.acme.service.PasswordHasher",
        "IMPLEMENTS com.acme.model.Role -> com.acme.model.Labeled",
        "IMPLEMENTS com.acme.repo.JdbcUserRepository -> com.acme.repo.UserRepository",
        "READS_FROM com.acme.repo.JdbcUserRepository -> user_roles",
        "READS_FROM com.acme.repo.JdbcUserRepository -> users",
        "WRITES_TO com.acme.repo.JdbcUserRepository -> audit_log",
        "WRITES_TO com.acme.repo.JdbcUserRepository -> sessions",
        "WRITES_TO com.acme.repo.JdbcUserRepository -> user_stats",
        "WRITES_TO com.acme.repo.JdbcUserRepository -> users",
    }


def test_reads_its_sources_from_the_context_when_given_none():
    text = "".join(f"// File: {s.path}\n{s.text}" for s in sources(CODE_FIXTURES / "java"))
    assert [s.path for s in split_context(text)] == [s.path for s in sources(CODE_FIXTURES / "java")]
    state, _, _ = drive(CodeAgent(), code_request(context=text))
    full, _, _ = drive(_agent(), code_request())
    assert graph_sets(state) == graph_sets(full)


def test_through_the_loop_the_static_agent_skips_the_markdown_it_does_not_read():
    from igg.engine.loop import run

    result = run(code_request(), _agent())
    assert result.stop_reason == "finished"
    assert all(r.observation_tokens == 0 for r in result.records)
    seen = []

    def reader(obs):
        seen.append(obs.markdown)
        return {"reasoning": "done", "actions": [], "finished": True}

    run(code_request(), reader)
    assert seen and seen[0].strip()
