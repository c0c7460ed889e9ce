"""Budgeted queries: neighbours, path and find answer within their token budget and say what they left out."""

from __future__ import annotations

import pytest

from igg.observe.query import QueryError, run_query
from igg.observe.tokens import estimate_tokens
from tests.conftest import Workspace, edge, node


def cls(name: str, **extra: object) -> dict:
    return node("Class", name=name, package="p", **extra)


@pytest.fixture
def ws() -> Workspace:
    w = Workspace(constraints={"duplicates": {"policy": "off"}})
    verdicts = w.apply(
        cls("AuthController", lines=10),
        cls("AuthService", lines=50),
        cls("UserRepo"),
        node("DatabaseTable", name="users"),
        cls("Mailer"),
        edge("CALLS", {"name": "AuthController"}, {"name": "AuthService"}),
        edge("CALLS", {"name": "AuthService"}, {"name": "UserRepo"}),
        edge("READS_FROM", {"name": "UserRepo"}, {"name": "users"}),
        edge("CALLS", {"name": "Mailer"}, {"name": "AuthService"}),
    )
    assert all(v.accepted for v in verdicts)
    return w


def test_neighbours_walks_depth_direction_and_edge_types_nearest_first(ws):
    answer = run_query(ws.state, {"query": "neighbours", "node": {"name": "AuthService"}, "depth": 2})
    assert answer.text == "\n".join(
        [
            'neighbours of Class "AuthService" package="p" lines=50 (depth 2, both, edge types all):',
            "depth 1:",
            '"AuthService" -CALLS-> "UserRepo"',
            '  Class "UserRepo" package="p"',
            '"AuthService" <-CALLS- "AuthController"',
            '  Class "AuthController" package="p" lines=10',
            '"AuthService" <-CALLS- "Mailer"',
            '  Class "Mailer" package="p"',
            "depth 2:",
            '"UserRepo" -READS_FROM-> "users"',
            '  DatabaseTable "users"',
        ]
    )
    assert answer.complete and answer.matched_nodes == 4 and len(answer.edges) == 4
    assert {"id": "e3", "type": "READS_FROM", "from": "n3", "to": "n4"} in answer.edges
    out = run_query(
        ws.state, {"query": "neighbours", "node": {"name": "AuthService"}, "depth": 3, "direction": "in"}
    )
    assert [n["properties"]["name"] for n in out.nodes] == ["AuthController", "Mailer"]
    typed = run_query(
        ws.state, {"query": "neighbours", "node": {"name": "UserRepo"}, "edge_types": ["READS_FROM"]}
    )
    assert [n["properties"]["name"] for n in typed.nodes] == ["users"]


def test_path_is_shortest_forwards_or_either_way_and_says_when_there_is_none(ws):
    answer = run_query(
        ws.state, {"query": "path", "from": {"name": "AuthController"}, "to": {"name": "users"}}
    )
    assert answer.lines[0] == 'shortest path from "AuthController" to "users": 3 edges'
    assert [e["id"] for e in answer.edges] == ["e1", "e2", "e3"]
    none = run_query(ws.state, {"query": "path", "from": {"name": "users"}, "to": {"name": "Mailer"}})
    assert none.text == 'no path from "users" to "Mailer" (direction out, edge types all).' and not none.edges
    both = run_query(
        ws.state, {"query": "path", "from": {"name": "users"}, "to": {"name": "Mailer"}, "direction": "both"}
    )
    assert [e["id"] for e in both.edges] == ["e3", "e2", "e4"]
    assert '"users" <-READS_FROM- "UserRepo"' in both.lines


def test_find_filters_by_type_value_and_operators(ws):
    def names(where, label="Class"):
        return [
            n["properties"]["name"]
            for n in run_query(ws.state, {"query": "find", "label": label, "where": where}).nodes
        ]

    assert names({"lines": {"gt": 20}}) == ["AuthService"]
    assert names({"name": {"contains": "AUTH"}}, None) == ["AuthController", "AuthService"]
    assert names({"name": "Mailer"}) == ["Mailer"]
    assert names({"lines": {"exists": False}}) == ["UserRepo", "Mailer"]
    assert names({"name": {"in": ["users", "Mailer"]}}, None) == ["users", "Mailer"]
    assert run_query(ws.state, {"query": "find", "label": "Interface"}).text.endswith("(no matching node)")


def test_unanswerable_questions_get_a_code_and_a_message_naming_the_fix(ws):
    with pytest.raises(QueryError) as exc:
        run_query(ws.state, {"query": "neighbours", "node": {"name": "AuthServce"}})
    assert exc.value.code == "NODE_NOT_FOUND" and 'Close matches: Class "AuthService"' in exc.value.message
    with pytest.raises(QueryError) as exc:
        run_query(ws.state, {"query": "neighbours", "node": {"name": "AuthService"}, "edge_types": ["CALL"]})
    assert exc.value.code == "UNKNOWN_EDGE_TYPE"
    with pytest.raises(QueryError) as exc:
        run_query(ws.state, {"query": "find", "where": {"lines": {"between": [1, 2]}}})
    assert exc.value.code == "INVALID_QUERY" and "contains, in, gt" in exc.value.message


def test_answers_stay_within_the_budget_at_any_size_and_count_what_they_left_out():
    ws = Workspace(
        constraints={
            "max_nodes": 3000,
            "max_edges": 3000,
            "max_actions_per_response": 10_000,
            "duplicates": {"policy": "off"},
        }
    )
    hub = [cls("Hub")] + [cls(f"Leaf{i}", doc="x" * 40) for i in range(2000)]
    edges = [edge("CALLS", {"name": "Hub"}, {"name": f"Leaf{i}"}) for i in range(2000)]
    assert all(v.accepted for v in ws.apply(*hub, *edges))
    for query in (
        {"query": "neighbours", "node": {"name": "Hub"}, "token_budget": 300},
        {"query": "find", "label": "Class", "token_budget": 300, "limit": 10_000},
    ):
        answer = run_query(ws.state, query)
        assert answer.tokens <= 300 and estimate_tokens(answer.text) == answer.tokens
        assert not answer.complete and answer.lines[-1].startswith("left out: ")
        assert answer.omitted_nodes == answer.matched_nodes - len(answer.nodes) > 1900
    answer = run_query(
        ws.state, {"query": "find", "label": "Class", "where": {"name": {"contains": "leaf1"}}, "limit": 5}
    )
    assert (
        len(answer.nodes) == 5 and answer.matched_nodes == 1111
    )  # Leaf1, Leaf10-19, ...100-199, ...1000-1999
    assert answer.lines[-1] == (
        "left out: 1106 matching nodes (limit 5, token budget 1000); add filters or raise limit/token_budget."
    )
