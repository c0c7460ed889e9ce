"""Bounded work per request: a query stops walking at its visit cap (its answer says ``truncated`` and its
counts are lower bounds), the QUERY actions of one response share a budget of visits (QUERY_BUDGET_EXHAUSTED
after), and a server refuses more actions per request than its ceiling whatever the request's config says."""

from __future__ import annotations

import pytest

from igg.errors import WorkspaceError
from igg.interfaces.codes import http_status
from igg.observe.query import MAX_VISITS, RESPONSE_VISITS, run_query
from igg.request.load import build_state, load_request
from igg.workspace import Workspace
from igg.workspace.ops import ApplyInput

NODES, PER_NODE = 5_000, 8  # 40,000 edges, every node within a few hops of every other


def payload(max_actions: int = 1000) -> dict:
    return {
        "session_id": "bounds",
        "goal_prompt": "a dense graph",
        "context_data": "",
        "config": {
            "max_iterations": 5,
            "constraints": {
                "max_nodes": NODES,
                "max_edges": NODES * PER_NODE,
                "max_actions_per_response": max_actions,
            },
            "schema": {"node_types": ["Module"], "edge_types": ["IMPORTS"]},
        },
    }


def dense_seed() -> dict:
    nodes = [{"id": f"m{i}", "type": "Module", "properties": {"name": f"m{i}"}} for i in range(NODES)]
    edges = [
        {
            "id": f"e{i * PER_NODE + k}",
            "type": "IMPORTS",
            "from": f"m{i}",
            "to": f"m{(i + 1 + (i * 7 + k * 131) % (NODES - 1)) % NODES}",
            "properties": {},
        }
        for i in range(NODES)
        for k in range(PER_NODE)
    ]
    return {"format": "igg-graph", "version": 1, "nodes": nodes, "edges": edges}


QUERY = {
    "type": "QUERY",
    "query": {"query": "neighbours", "node": {"name": "m0"}, "depth": 5, "token_budget": 100},
}


def test_a_query_stops_at_its_visit_cap_and_says_so():
    state, problems = build_state(load_request({**payload(), "seed_data": dense_seed()}))
    assert not problems
    answer = run_query(state, QUERY["query"])
    assert answer.truncated and not answer.complete and answer.visited == MAX_VISITS
    assert "at least" in answer.lines[-1] and f"after visiting {MAX_VISITS} edges" in answer.lines[-1]
    small = run_query(state, {**QUERY["query"], "depth": 1})
    assert not small.truncated and small.visited <= 2 * PER_NODE + 5


def test_a_thousand_queries_share_one_budget_of_work():
    ws = Workspace()
    sid = ws.start({**payload(), "seed_data": dense_seed()})["session_id"]
    out = ws.apply(ApplyInput(session_id=sid, reasoning="ask a lot", actions=[QUERY] * 1000))
    codes = [v.get("code") for v in out["verdicts"]]
    answered = codes.count(None)
    assert answered == RESPONSE_VISITS // MAX_VISITS  # each answer walked to the cap
    assert codes.count("QUERY_BUDGET_EXHAUSTED") == 1000 - answered
    assert all(len(v["message"]) < 2000 for v in out["verdicts"])  # a bounded record, not megabytes


def test_the_server_ceiling_refuses_more_actions_than_it_takes_whatever_the_config():
    ws = Workspace(max_actions=500)
    sid = ws.start(payload(max_actions=5000))["session_id"]
    with pytest.raises(WorkspaceError) as refused:
        ws.apply(ApplyInput(session_id=sid, reasoning="too many", actions=[QUERY] * 501))
    assert refused.value.code == "TOO_MANY_ACTIONS" and http_status(refused.value) == 413
    assert ws.get(sid).session.last_iteration == 0  # refused up front: nothing was applied or kept
