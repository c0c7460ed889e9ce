"""The contracts: the seed payload and response validate verbatim; unknown keys and bad values are named."""

from __future__ import annotations

import json

import pytest

from igg.errors import RequestInvalid, ResponseInvalid
from igg.models.actions import AddEdge, AddNode, AgentResponse, UnreadableAction, read_response
from igg.models.jsonschema import SCHEMA_MODELS, json_schema_text
from igg.models.verdicts import ErrorCode
from igg.request.load import load_request
from tests.conftest import ROOT


def test_seed_payload_validates_verbatim(seed_request_dict):
    request = load_request(seed_request_dict)
    assert request.session_id == "uuid-1234"
    assert request.config.constraints.max_nodes == 50
    assert request.config.schema_.required_attributes["Method"] == ["name", "signature"]
    assert request.model_dump(by_alias=True, exclude_unset=True) == seed_request_dict


def test_seed_response_parses_verbatim(seed_response_dict):
    response = AgentResponse.model_validate(seed_response_dict)
    assert isinstance(response.actions[0], AddNode)
    assert isinstance(response.actions[1], AddEdge)
    assert response.actions[1].from_ == {"name": "AuthController"}
    assert response.finished is False
    parsed = read_response(seed_response_dict)
    assert [type(a) for a in parsed.items] == [AddNode, AddEdge]


def test_defaults_are_documented_and_sensible(seed_request_dict):
    config = load_request(seed_request_dict).config
    assert config.stuck_after == 3
    assert config.apply_mode == "per_action"
    assert config.constraints.max_actions_per_response == 50
    assert config.schema_.compile().identity_keys["Class"] == ("name",)


def test_unknown_key_is_named_with_its_path_and_the_allowed_keys(seed_request_dict):
    seed_request_dict["config"]["constraints"]["max_nodez"] = 5
    with pytest.raises(RequestInvalid) as info:
        load_request(seed_request_dict)
    (problem,) = info.value.problems
    assert problem.path == "config.constraints.max_nodez"
    assert "unknown key 'max_nodez'" in problem.message
    assert "max_nodes" in problem.message and "allow_self_loops" in problem.message


def test_every_problem_is_reported_at_once(seed_request_dict):
    schema = seed_request_dict["config"]["schema"]
    schema["node_types"].append("Bad Label")
    schema["edge_types"].append("CALLS`) DETACH DELETE n //")
    schema["required_attributes"]["Klass"] = ["name"]
    schema["identity_keys"] = {"Method": ["name", "signature"], "Ghost": ["id"]}
    schema["edge_patterns"] = [{"from": "Class", "type": "CALLZ", "to": "Method"}]
    seed_request_dict["config"]["max_iterations"] = 0
    with pytest.raises(RequestInvalid) as info:
        load_request(seed_request_dict)
    paths = {p.path for p in info.value.problems}
    assert paths == {"config.max_iterations"}  # pydantic stops before cross-field checks
    seed_request_dict["config"]["max_iterations"] = 5
    with pytest.raises(RequestInvalid) as info:
        load_request(seed_request_dict)
    paths = {p.path for p in info.value.problems}
    assert paths == {
        "config.schema.node_types[4]",
        "config.schema.edge_types[4]",
        "config.schema.required_attributes.Klass",
        "config.schema.identity_keys.Ghost",
        "config.schema.edge_patterns[0].type",
    }
    text = str(info.value)
    assert "'Bad Label' is not a safe identifier" in text
    assert "'Klass' is not a node or edge type" in text


@pytest.mark.parametrize(
    ("mutate", "path", "fragment"),
    [
        (
            lambda r: r["config"]["constraints"].update(max_nodes=-1),
            "config.constraints.max_nodes",
            "greater than",
        ),
        (lambda r: r["config"].update(max_iterations="many"), "config.max_iterations", "valid integer"),
        (lambda r: r.pop("goal_prompt"), "goal_prompt", "required"),
        (lambda r: r["config"]["schema"].update(node_types=[]), "config.schema.node_types", "at least 1"),
        (lambda r: r.update(session_id="../../etc"), "session_id", "pattern"),
    ],
)
def test_nonsense_limits_and_fields_are_rejected(seed_request_dict, mutate, path, fragment):
    mutate(seed_request_dict)
    with pytest.raises(RequestInvalid) as info:
        load_request(seed_request_dict)
    assert any(p.path == path and fragment in p.message for p in info.value.problems), info.value.problems


def test_seed_data_must_obey_the_requests_schema_and_limits(seed_request_dict):
    seed_request_dict["config"]["constraints"]["max_nodes"] = 2
    seed_request_dict["seed_data"] = {
        "nodes": [
            {"id": "a", "type": "Class", "properties": {"name": "A", "package": "p"}},
            {"id": "b", "type": "Klass", "properties": {"name": "B"}},
            {"id": "c", "type": "Class", "properties": {"name": "C"}},
            {"id": "d", "type": "Interface", "properties": {"name": "D"}},
            {"id": "e", "type": "Interface", "properties": {"name": "E"}},
        ],
        "edges": [
            {"id": "x", "type": "CALLS", "from": "a", "to": "a"},
            {"id": "y", "type": "CALLS", "from": "a", "to": "zzz"},
        ],
    }
    with pytest.raises(RequestInvalid) as info:
        load_request(seed_request_dict)
    by_path = {p.path: p.message for p in info.value.problems}
    assert by_path["seed_data.nodes[1]"].startswith("UNKNOWN_NODE_TYPE")
    assert by_path["seed_data.nodes[2]"].startswith("MISSING_REQUIRED_ATTRIBUTE")
    assert by_path["seed_data.nodes[4]"].startswith("MAX_NODES_EXCEEDED")
    assert by_path["seed_data.edges[0]"].startswith("SELF_LOOP_FORBIDDEN")
    assert "no node with id to 'zzz'" in by_path["seed_data.edges[1]"]


def test_malformed_json_request_is_a_clear_error():
    with pytest.raises(RequestInvalid) as info:
        load_request('{"goal_prompt": "x",')
    assert "not valid JSON" in str(info.value)


def test_response_top_level_problems_are_invalid_response():
    with pytest.raises(ResponseInvalid) as info:
        read_response({"reasoning": "x", "actions": [], "thoughts": "..."})
    assert info.value.code == "INVALID_RESPONSE"
    assert "'thoughts'" in info.value.message
    with pytest.raises(ResponseInvalid):
        read_response([{"type": "ADD_NODE"}])
    with pytest.raises(ResponseInvalid):
        read_response({"actions": {"type": "ADD_NODE"}})


def test_one_bad_action_does_not_sink_its_neighbours():
    parsed = read_response(
        {
            "actions": [
                {"type": "ADD_NODE", "label": "Class", "properties": {"name": "A", "package": "p"}},
                {"type": "ADD_NODES", "label": "Class"},
                {"type": "ADD_NODE", "label": "Class", "propertes": {"name": "B"}},
                {"type": "ADD_NODE", "label": "Class", "properties": {"name": {"nested": 1}}},
                "ADD_NODE Class C",
            ]
        }
    )
    kinds = [i.code if isinstance(i, UnreadableAction) else i.type for i in parsed.items]
    assert kinds == [
        "ADD_NODE",
        ErrorCode.UNKNOWN_ACTION,
        ErrorCode.INVALID_ACTION,
        ErrorCode.INVALID_PROPERTY,
        ErrorCode.INVALID_ACTION,
    ]
    assert "unknown key 'propertes'" in parsed.items[2].message
    assert "allowed: type, label, properties" in parsed.items[2].message


@pytest.mark.parametrize("name", sorted(SCHEMA_MODELS))
def test_schema_files_match_the_models(name):
    path = ROOT / "schemas" / f"{name}.schema.json"
    assert path.read_text(encoding="utf-8") == json_schema_text(name), "run: python scripts/gen_schemas.py"
    assert json.loads(path.read_text())["$schema"].endswith("2020-12/schema")


def test_action_error_is_the_deprecated_name_of_unreadable_action():
    from igg.models import ActionError, UnreadableAction
    from igg.models.actions import read_action

    assert ActionError is UnreadableAction
    assert isinstance(read_action({"type": "NOPE"}), UnreadableAction)


def test_a_request_file_name_given_as_a_string_is_read(tmp_path, monkeypatch, seed_request_dict):
    (tmp_path / "request.json").write_text(json.dumps(seed_request_dict))
    monkeypatch.chdir(tmp_path)
    assert load_request("request.json").session_id == "uuid-1234"
    assert load_request(str(tmp_path / "request.json")).session_id == "uuid-1234"
    assert load_request(json.dumps(seed_request_dict)).session_id == "uuid-1234"  # JSON text stays JSON text
    with pytest.raises(RequestInvalid) as caught:
        load_request("missing.json")
    assert "'missing.json' is neither a JSON object nor an existing file" in str(caught.value)
