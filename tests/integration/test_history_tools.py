"""query_graph, explain, diff and undo for tool-calling agents: over MCP (the SDK's own client) and HTTP."""

from __future__ import annotations

import asyncio
from typing import Any

from mcp import Client

from tests.conftest import edge, node
from tests.integration.test_http import error_of, serve
from tests.integration.test_mcp import call, server
from tests.unit.test_workspace import request_dict


def cls(name: str, **extra: Any) -> dict[str, Any]:
    return node("Class", name=name, package="p", **extra)


FIRST = [
    cls("AuthService"),
    cls("Ctrl"),
    cls("Repo"),
    edge("CALLS", {"name": "Ctrl"}, {"name": "AuthService"}),
]
SECOND = [
    cls("auth_service"),
    {**cls("auth_service", lines=3), "distinct": True},
    edge("CALLS", {"name": "auth_service"}, {"name": "Repo"}),
]
THIRD = [{"type": "MERGE_NODES", "node": {"name": "auth_service"}, "into": {"name": "AuthService"}}]


def test_query_explain_diff_and_undo_of_a_merge_over_mcp(tmp_path):
    async def scenario() -> None:
        async with Client(server(tmp_path)) as client:
            await call(client, "start_session", **request_dict(session_id="h-1"))
            for actions in (FIRST, SECOND, THIRD):
                await call(client, "apply_actions", session_id="h-1", reasoning="step", actions=actions)
            found = await call(
                client,
                "query_graph",
                session_id="h-1",
                query={"query": "path", "from": {"name": "Ctrl"}, "to": {"name": "Repo"}},
            )
            assert not found.is_error, found.content
            assert found.structured_content["text"].startswith('shortest path from "Ctrl" to "Repo": 2 edges')
            bad = await call(
                client,
                "query_graph",
                session_id="h-1",
                query={"query": "neighbours", "node": {"name": "Nope"}},
            )
            assert bad.is_error and bad.content[0].text.startswith("NODE_NOT_FOUND:")
            changed = await call(client, "diff", session_id="h-1", a=2, b=3)
            changes = {(c["element"], c["change"]) for c in changed.structured_content["changes"]}
            assert {("n1", "changed"), ("n4", "deleted"), ("e2", "changed")} <= changes
            told = await call(client, "explain", session_id="h-1", ref="auth_service")
            ops = [e["op"] for e in told.structured_content["events"]]
            assert ops[0] == "add_node" and ops[-1] == "merge_nodes"  # the merge is one event, not its parts
            assert told.structured_content["events"][-1]["detail"].startswith(
                'merged n4 "auth_service" into n1 "AuthService": 1 edge moved'
            )
            undone = await call(client, "undo", session_id="h-1", to_iteration=2)
            assert not undone.is_error, undone.content
            assert undone.structured_content["nodes"] == 4 and undone.structured_content["undone_to"] == 2
            observed = await call(client, "observe", session_id="h-1")
            assert '"auth_service"' in observed.content[0].text
            again = await call(client, "apply_actions", session_id="h-1", actions=THIRD)
            assert again.structured_content["verdicts"][0]["accepted"]

    asyncio.run(scenario())


def test_query_explain_diff_and_undo_over_http_and_across_a_restart(tmp_path, store_location):
    with serve(tmp_path, "--store", store_location) as http:
        assert http.post("/sessions", json=request_dict(session_id="h-2")).status_code == 201
        for actions in (FIRST, SECOND, THIRD):
            assert http.post("/sessions/h-2/actions", json={"actions": actions}).status_code == 200
        answer = http.post(
            "/sessions/h-2/query",
            json={"query": {"query": "find", "label": "Class", "where": {"lines": {"exists": True}}}},
        ).json()
        assert [n["properties"]["name"] for n in answer["nodes"]] == ["AuthService"]
        assert error_of(
            http.post("/sessions/h-2/query", json={"query": {"query": "find", "label": "Klass"}})
        ) == (422, "UNKNOWN_NODE_TYPE")
        assert (
            http.get("/sessions/h-2/diff", params={"a": 0, "b": 1}).json()["changes"][0]["change"] == "added"
        )
        assert error_of(http.get("/sessions/h-2/diff", params={"a": 0, "b": 9})) == (422, "INVALID_ARGUMENTS")
        events = http.get("/sessions/h-2/explain", params={"ref": "n4"}).json()["events"]
        assert events[-1]["op"] == "merge_nodes" and events[-1]["iteration"] == 3
    with serve(
        tmp_path, "--store", store_location
    ) as http:  # a new server process: the history is the store's
        undone = http.post("/sessions/h-2/undo", json={"to_iteration": 1})
        assert undone.status_code == 200, undone.text
        assert undone.json()["nodes"] == 3
        names = [
            n["properties"]["name"]
            for n in http.post("/sessions/h-2/query", json={"query": {"query": "find"}}).json()["nodes"]
        ]
        assert names == ["AuthService", "Ctrl", "Repo"]
    with serve(tmp_path, "--memory") as http:
        http.post("/sessions", json=request_dict(session_id="m-1"))
        assert error_of(http.get("/sessions/m-1/diff", params={"a": 0, "b": 0})) == (
            409,
            "HISTORY_UNAVAILABLE",
        )
