"""The act step: every error code, with the message an agent would get, and the accepted paths."""

from __future__ import annotations

import pytest

from igg.models.verdicts import ErrorCode as C
from tests.conftest import Workspace, edge, make_request, node

AUTH = {"name": "AuthService", "package": "com.app.auth"}
CTRL = {"name": "AuthController", "package": "com.app.web"}


def test_seed_response_applies_in_order_with_an_edge_to_a_node_added_in_the_same_response():
    ws = Workspace()
    v = ws.apply(
        node("Class", **CTRL),
        node("Class", **AUTH),
        edge("CALLS", {"name": "AuthController"}, {"name": "AuthService"}),
    )
    assert [x.accepted for x in v] == [True, True, True]
    assert v[0].message == 'added Class "AuthController" as n1'
    assert v[2].message == "added CALLS edge e1 (n1 -> n2)"
    assert ws.state.node_count == 2 and ws.state.edge_count == 1


def test_unknown_node_type_lists_the_allowed_types_and_a_close_match():
    v = Workspace().one(node("Klass", name="A", package="p"))
    assert v.code == C.UNKNOWN_NODE_TYPE
    assert v.message == (
        "node type 'Klass' is not in the schema; allowed node types: Class, Interface, Method, "
        "DatabaseTable. Did you mean 'Class'?"
    )


def test_unknown_edge_type():
    ws = Workspace()
    ws.apply(node("Class", **CTRL), node("Class", **AUTH))
    v = ws.one(edge("CALL", {"name": "AuthController"}, {"name": "AuthService"}))
    assert v.code == C.UNKNOWN_EDGE_TYPE
    assert "allowed edge types: CALLS, IMPLEMENTS, READS_FROM, WRITES_TO. Did you mean 'CALLS'?" in v.message


def test_missing_required_attribute_names_what_is_missing():
    v = Workspace().one(node("Class", name="AuthService"))
    assert v.code == C.MISSING_REQUIRED_ATTRIBUTE
    assert v.message == "Class requires name, package; missing or empty: package. Add it to 'properties'."
    v = Workspace().one(node("Interface", name=""))
    assert v.code == C.MISSING_REQUIRED_ATTRIBUTE and "missing or empty: name" in v.message


def test_invalid_property_key_value_and_length():
    ws = Workspace(constraints={"max_property_length": 10})
    v = ws.one(node("Interface", name="I", **{"bad key": 1}))
    assert v.code == C.INVALID_PROPERTY and "'bad key' is not a safe identifier" in v.message
    v = ws.one(node("Interface", name="I", doc="x" * 11))
    assert (
        v.code == C.INVALID_PROPERTY and v.message == "property 'doc' is 11 characters long; the limit is 10."
    )
    v = ws.one({"type": "ADD_NODE", "label": "Interface", "properties": {"name": "I", "label": "x"}})
    assert v.code == C.INVALID_PROPERTY and "reserved" in v.message
    v = ws.one(node("Interface", name="I", meta={"a": 1}))
    assert v.code == C.INVALID_PROPERTY and v.message.startswith("ADD_NODE: properties.meta")
    assert ws.state.node_count == 0


def test_any_unicode_and_control_characters_are_accepted_as_values():
    ws = Workspace()
    v = ws.one(node("Interface", name="x | y\n# heading\x00\x1b`", tags=["é", "🦀"], n=3, f=0.5, ok=True))
    assert v.accepted
    assert ws.state.node_properties("n1")["tags"] == ["é", "🦀"]


def test_node_not_found_lists_close_names():
    ws = Workspace()
    ws.apply(node("Class", **AUTH), node("Class", **CTRL))
    v = ws.one(edge("CALLS", {"name": "AuthControler"}, {"name": "AuthService"}))
    assert v.code == C.NODE_NOT_FOUND
    assert v.message == (
        "from: no node matches {'name': 'AuthControler'}. Close matches: Class \"AuthController\". "
        "Add the node first (an ADD_NODE earlier in the same response counts) or fix the reference."
    )


def test_ambiguous_reference_says_how_to_disambiguate():
    ws = Workspace()
    ws.apply(node("Class", name="Auth", package="a"), node("Interface", name="Auth"), node("Class", **CTRL))
    v = ws.one(edge("CALLS", {"name": "AuthController"}, {"name": "Auth"}))
    assert v.code == C.AMBIGUOUS_REFERENCE
    assert v.message == (
        "to: {'name': 'Auth'} matches 2 nodes: Class \"Auth\" (n1); Interface \"Auth\" (n2). "
        'To pick one, add "label" (one of Class, Interface) to the reference.'
    )
    v = ws.one(edge("CALLS", {"name": "AuthController"}, {"name": "Auth", "label": "Interface"}))
    assert v.accepted


def test_reference_by_non_identity_property():
    ws = Workspace()
    ws.apply(node("Class", **AUTH), node("Class", **CTRL))
    v = ws.one(edge("CALLS", {"package": "com.app.web"}, {"name": "AuthService", "package": "com.app.auth"}))
    assert v.accepted, v.message


def test_duplicate_node_is_never_a_silent_overwrite():
    ws = Workspace()
    ws.apply(node("Class", **AUTH))
    v = ws.one(node("Class", **AUTH))
    assert v.code == C.DUPLICATE_NODE
    assert v.message == (
        'Class "AuthService" already exists (n1) with these properties; nothing to add. Refer to it '
        "in edges instead of adding it again."
    )
    v = ws.one(node("Class", name="AuthService", package="com.other"))
    assert v.code == C.DUPLICATE_NODE
    assert "differs in package: existing 'com.app.auth', proposed 'com.other'" in v.message
    assert "use UPDATE_NODE" in v.message
    assert ws.state.node_properties("n1")["package"] == "com.app.auth"


def test_composite_identity_keeps_overloads_apart():
    ws = Workspace(schema={"identity_keys": {"Method": ["name", "signature"]}})
    v = ws.apply(
        node("Method", name="login", signature="login(String)"),
        node("Method", name="login", signature="login(String,String)"),
        node("Method", name="login", signature="login(String)"),
    )
    assert [x.accepted for x in v] == [True, True, False]
    assert v[2].code == C.DUPLICATE_NODE
    v = ws.one({"type": "DELETE_NODE", "node": {"name": "login"}})
    assert v.code == C.AMBIGUOUS_REFERENCE
    assert "add more identifying properties (e.g. name, signature)" in v.message


def test_duplicate_edge():
    ws = Workspace()
    ws.apply(node("Class", **AUTH), node("Class", **CTRL))
    e = edge("CALLS", {"name": "AuthController"}, {"name": "AuthService"})
    assert ws.one(e).accepted
    v = ws.one(e)
    assert v.code == C.DUPLICATE_EDGE
    assert (
        v.message
        == 'Class "AuthController" -CALLS-> Class "AuthService" already exists (e1); nothing to add.'
    )


def test_self_loop_forbidden_unless_allowed():
    ws = Workspace()
    ws.apply(node("Class", **AUTH))
    v = ws.one(edge("CALLS", {"name": "AuthService"}, {"name": "AuthService"}))
    assert v.code == C.SELF_LOOP_FORBIDDEN
    assert "self-loops are not allowed for CALLS, see allow_self_loops" in v.message
    ws = Workspace(constraints={"allow_self_loops": True})
    ws.apply(node("Class", **AUTH))
    assert ws.one(edge("CALLS", {"name": "AuthService"}, {"name": "AuthService"})).accepted


def test_self_loops_allowed_per_edge_type():
    """``allow_self_loops: ["CALLS"]``: a recursive call is drawn, any other self-loop refused by name; the
    observation says which types may."""
    ws = Workspace(constraints={"allow_self_loops": ["CALLS"]})
    ws.apply(node("Class", **AUTH))
    assert ws.one(edge("CALLS", {"name": "AuthService"}, {"name": "AuthService"})).accepted
    v = ws.one(edge("WRITES_TO", {"name": "AuthService"}, {"name": "AuthService"}))
    assert v.code == C.SELF_LOOP_FORBIDDEN
    assert "not allowed for WRITES_TO (only CALLS may)" in v.message


def test_self_loops_of_an_edge_type_the_schema_lacks_are_refused_with_the_request():
    from igg.errors import RequestInvalid

    with pytest.raises(RequestInvalid) as refused:
        make_request(constraints={"allow_self_loops": ["CALLS", "CALL"]})
    assert [str(p) for p in refused.value.problems] == [
        "config.constraints.allow_self_loops[1]: 'CALL' is not an edge type of the schema (CALLS, IMPLEMENTS,"
        " READS_FROM, WRITES_TO)"
    ]


def test_max_nodes_and_max_edges():
    ws = Workspace(constraints={"max_nodes": 2, "max_edges": 1})
    v = ws.apply(
        node("Interface", name="A"),
        node("Interface", name="B"),
        node("Interface", name="C"),
        edge("CALLS", {"name": "A"}, {"name": "B"}),
        edge("CALLS", {"name": "B"}, {"name": "A"}),
    )
    assert [x.code for x in v] == [None, None, C.MAX_NODES_EXCEEDED, None, C.MAX_EDGES_EXCEEDED]
    assert v[2].message.startswith("the graph already holds max_nodes=2 nodes")
    assert v[4].message.startswith("the graph already holds max_edges=1 edges")


def test_edge_pattern_forbidden_names_the_allowed_patterns():
    ws = Workspace(schema={"edge_patterns": [{"from": "Class", "type": "IMPLEMENTS", "to": "Interface"}]})
    ws.apply(node("Class", **AUTH), node("Interface", name="IAuth"), node("Class", **CTRL))
    v = ws.one(edge("IMPLEMENTS", {"name": "AuthService"}, {"name": "AuthController"}))
    assert v.code == C.EDGE_PATTERN_FORBIDDEN
    assert v.message == (
        "Class-IMPLEMENTS->Class is not an allowed pattern; IMPLEMENTS may only connect: "
        "Class-IMPLEMENTS->Interface."
    )
    assert ws.one(edge("IMPLEMENTS", {"name": "AuthService"}, {"name": "IAuth"})).accepted
    assert ws.one(
        edge("CALLS", {"name": "AuthService"}, {"name": "AuthController"})
    ).accepted  # unconstrained type


def test_too_many_actions_rejects_the_excess_with_a_verdict_each():
    ws = Workspace(constraints={"max_actions_per_response": 2})
    v = ws.apply(*(node("Interface", name=f"I{i}") for i in range(4)))
    assert [x.code for x in v] == [None, None, C.TOO_MANY_ACTIONS, C.TOO_MANY_ACTIONS]
    assert "max_actions_per_response=2" in v[2].message
    assert ws.state.node_count == 2


def test_unknown_action_and_invalid_action():
    ws = Workspace()
    v = ws.apply({"type": "MERGE_NODE", "label": "Class"}, {"type": "ADD_EDGE", "label": "CALLS"})
    assert v[0].code == C.UNKNOWN_ACTION
    assert v[0].message == (
        "unknown action type 'MERGE_NODE'; allowed: ADD_NODE, ADD_EDGE, UPDATE_NODE, "
        "DELETE_NODE, DELETE_EDGE, UPDATE_EDGE, MERGE_NODES, QUERY"
    )
    assert v[1].code == C.INVALID_ACTION and v[1].message == "ADD_EDGE: missing 'from'; missing 'to'"


def test_update_node_sets_removes_and_keeps_required_and_identity():
    ws = Workspace()
    ws.apply(node("Class", **AUTH), node("Class", **CTRL))
    v = ws.one({"type": "UPDATE_NODE", "node": {"name": "AuthService"}, "properties": {"doc": "x"}})
    assert v.accepted and ws.state.node_properties("n1")["doc"] == "x"
    v = ws.one({"type": "UPDATE_NODE", "node": {"name": "AuthService"}, "remove": ["package"]})
    assert v.code == C.MISSING_REQUIRED_ATTRIBUTE
    assert v.message == ("Class requires name, package; this update would leave package missing or empty.")
    v = ws.one(
        {"type": "UPDATE_NODE", "node": {"name": "AuthService"}, "properties": {"name": "AuthController"}}
    )
    assert v.code == C.DUPLICATE_NODE and 'would collide with Class "AuthController" (n2)' in v.message
    v = ws.one(
        {"type": "UPDATE_NODE", "node": {"name": "AuthService"}, "properties": {"name": "LoginService"}}
    )
    assert v.accepted
    assert ws.state.find_nodes({"name": "LoginService"}) == ["n1"]
    assert ws.state.find_nodes({"name": "AuthService"}) == []


def test_delete_node_deletes_its_edges():
    ws = Workspace()
    ws.apply(
        node("Class", **AUTH),
        node("Class", **CTRL),
        node("DatabaseTable", name="users"),
        edge("CALLS", {"name": "AuthController"}, {"name": "AuthService"}),
        edge("READS_FROM", {"name": "AuthService"}, {"name": "users"}),
    )
    v = ws.one({"type": "DELETE_NODE", "node": {"name": "AuthService"}})
    assert v.accepted and v.message == 'deleted Class "AuthService" (n1) and its 2 edges'
    assert ws.state.edge_count == 0 and ws.state.node_count == 2


def test_delete_edge_and_edge_not_found():
    ws = Workspace()
    ws.apply(
        node("Class", **AUTH),
        node("Class", **CTRL),
        edge("CALLS", {"name": "AuthController"}, {"name": "AuthService"}),
    )
    d = {
        "type": "DELETE_EDGE",
        "label": "CALLS",
        "from": {"name": "AuthController"},
        "to": {"name": "AuthService"},
    }
    assert ws.one(d).accepted
    v = ws.one(d)
    assert v.code == C.EDGE_NOT_FOUND
    assert v.message == (
        'there is no CALLS edge from Class "AuthController" to Class "AuthService"; nothing to delete.'
    )


def test_deletion_limits_bound_a_prompt_injection():
    ws = Workspace(constraints={"max_deletions_per_iteration": 1})
    ws.apply(*(node("Interface", name=f"I{i}") for i in range(3)))
    v = ws.apply(*({"type": "DELETE_NODE", "node": {"name": f"I{i}"}} for i in range(3)))
    assert [x.code for x in v] == [None, C.DELETION_LIMIT_EXCEEDED, C.DELETION_LIMIT_EXCEEDED]
    assert "at most 1 deletions are accepted per response" in v[1].message
    ws = Workspace(constraints={"allow_deletions": False})
    ws.apply(node("Interface", name="I"))
    v = ws.one({"type": "DELETE_NODE", "node": {"name": "I"}})
    assert v.code == C.DELETION_FORBIDDEN and "allow_deletions is false" in v.message


def test_seed_nodes_are_protected_from_deletion():
    seed = {"nodes": [{"id": "s1", "type": "Interface", "properties": {"name": "Seed"}}]}
    ws = Workspace(seed_data=seed)
    v = ws.one({"type": "DELETE_NODE", "node": {"name": "Seed"}})
    assert v.code == C.PROTECTED_NODE
    assert v.message == (
        'Interface "Seed" comes from the seed graph and is protected (protect_seed_nodes is true); '
        "it cannot be deleted."
    )
    ws = Workspace(seed_data=seed, constraints={"protect_seed_nodes": False})
    assert ws.one({"type": "DELETE_NODE", "node": {"name": "Seed"}}).accepted


def test_atomic_mode_applies_all_or_nothing():
    ws = Workspace(apply_mode="atomic")
    v = ws.apply(
        node("Class", **AUTH),
        node("Class", **CTRL),
        edge("CALLS", {"name": "AuthController"}, {"name": "Nope"}),
    )
    assert [x.code for x in v] == [C.ROLLED_BACK, C.ROLLED_BACK, C.NODE_NOT_FOUND]
    assert "action #2 (NODE_NOT_FOUND) was rejected" in v[0].message
    assert ws.state.node_count == 0 and ws.state.journal == []
    v = ws.apply(
        node("Class", **AUTH),
        node("Class", **CTRL),
        edge("CALLS", {"name": "AuthController"}, {"name": "AuthService"}),
    )
    assert all(x.accepted for x in v) and ws.state.edge_count == 1


def test_journal_replays_and_reverts_exactly():
    from igg.graph.state import GraphState

    ws = Workspace()
    ws.apply(
        node("Class", **AUTH),
        node("Class", **CTRL),
        node("DatabaseTable", name="users"),
        edge("CALLS", {"name": "AuthController"}, {"name": "AuthService"}),
        {"type": "UPDATE_NODE", "node": {"name": "users"}, "properties": {"name": "accounts"}},
        edge("READS_FROM", {"name": "AuthService"}, {"name": "accounts"}),
        {"type": "DELETE_NODE", "node": {"name": "AuthController"}},
    )
    journal = ws.state.take_journal()
    replayed = GraphState(ws.state.schema)
    for m in journal:
        replayed.apply_mutation(m)
    assert replayed.to_document(provenance=True) == ws.state.to_document(provenance=True)
    for m in reversed(journal):
        replayed.revert_mutation(m)
    assert replayed.node_count == 0 and replayed.edge_count == 0
    assert replayed.find_nodes({"name": "users"}) == []


def test_constructed_actions_equal_pydantics_own_construct_with_every_default() -> None:
    """``igg.models.actions.constructed`` (how seeds become actions, without pydantic's per-call signature
    inspection of default factories) gives the same model as ``model_construct``, defaults included, never
    shared."""
    from igg.models.actions import AddEdge, AddNode, constructed

    for model, given in (
        (AddNode, {"type": "ADD_NODE", "label": "Class", "properties": {"name": "A"}}),
        (
            AddEdge,
            {
                "type": "ADD_EDGE",
                "label": "CALLS",
                "from_": {},
                "to": {},
                "properties": {},
                "valid_from": "2020",
            },
        ),
    ):
        ours, theirs = constructed(model, **given), model.model_construct(**given)
        assert ours == theirs and ours.model_dump() == theirs.model_dump()
        assert constructed(model, **given).evidence is not ours.evidence
