"""`igg mcp` over stdio, driven by the official MCP SDK's own client: a whole session, tool by tool."""

from __future__ import annotations

import asyncio
import io
import json
import sys
from pathlib import Path
from typing import Any

import jsonschema
import networkx as nx
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.conftest import ROOT, edge, node
from tests.unit.test_workspace import request_dict


def server(tmp_path: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "igg",
            "mcp",
            "--store",
            str(tmp_path / "sessions.sqlite"),
            "--output-dir",
            str(tmp_path / "out"),
        ],
        cwd=str(ROOT),
    )


async def call(client: Client, name: str, **arguments: Any) -> Any:
    result = await client.call_tool(name, arguments)
    return result


HINT_DEFAULTS = {
    "read_only_hint": False,
    "destructive_hint": True,
    "idempotent_hint": False,
    "open_world_hint": True,
}


def test_tools_are_listed_with_model_schemas_and_annotations(tmp_path):
    async def scenario() -> None:
        async with Client(server(tmp_path)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert set(tools) == {
                "start_session",
                "observe",
                "apply_actions",
                "finish_session",
                "export_graph",
                "list_sessions",
                "run_session",
                "query_graph",
                "explain",
                "diff",
                "undo",
                "review",
                "check",
                "add_documents",
                "retract_document",
            }

            # a hint left out means the MCP specification's default (read-only false, destructive true,
            # idempotent false, open-world true; destructive and idempotent say nothing of a read-only tool)
            def hint(tool: str, name: str) -> bool:
                given = getattr(tools[tool].annotations, name)
                return HINT_DEFAULTS[name] if given is None else given

            assert hint("observe", "read_only_hint") is True
            assert hint("list_sessions", "read_only_hint") is True
            assert hint("apply_actions", "destructive_hint") is True
            assert hint("finish_session", "destructive_hint") is True
            assert hint("start_session", "read_only_hint") is False
            assert hint("start_session", "destructive_hint") is False
            assert hint("run_session", "open_world_hint") is True
            assert hint("apply_actions", "open_world_hint") is False
            start = tools["start_session"].input_schema
            assert set(start["required"]) == {"goal_prompt", "config"}
            actions = tools["apply_actions"].input_schema["properties"]["actions"]
            assert {a["properties"]["type"]["const"] for a in actions["items"]["oneOf"]} == {
                "ADD_NODE",
                "ADD_EDGE",
                "UPDATE_NODE",
                "DELETE_NODE",
                "DELETE_EDGE",
                "UPDATE_EDGE",
                "MERGE_NODES",
                "QUERY",
            }
            # every tool publishes its output schema (igg.workspace.outputs); answers meet it (checked here
            # with jsonschema, independently of the SDK client, which checks them too)
            assert all(t.output_schema and t.output_schema.get("type") == "object" for t in tools.values())
            started = await call(client, "start_session", **request_dict())
            sid = started.structured_content["session_id"]
            applied = await call(
                client,
                "apply_actions",
                session_id=sid,
                reasoning="one",
                actions=[
                    {"type": "ADD_NODE", "label": "Class", "properties": {"name": "A", "package": "p"}},
                    {"type": "ADD_NODE", "label": "Nope", "properties": {"name": "B"}},
                ],
            )
            for name, answer in (("start_session", started), ("apply_actions", applied)):
                jsonschema.validate(answer.structured_content, tools[name].output_schema)
            with pytest.raises(
                jsonschema.ValidationError
            ):  # the schema says something: a wrong answer fails it
                jsonschema.validate(
                    {**applied.structured_content, "accepted": "two"}, tools["apply_actions"].output_schema
                )

    asyncio.run(scenario())


def test_a_whole_session_over_stdio(tmp_path):
    """start, observe, apply with rejections, apply the fixes, finish, export: verdicts and the final
    graph."""

    async def scenario() -> None:
        async with Client(server(tmp_path)) as client:
            started = await call(client, "start_session", **request_dict(session_id="mcp-1"))
            assert not started.is_error, started.content
            assert started.structured_content["session_id"] == "mcp-1"
            assert started.structured_content["max_nodes"] == 50

            observed = await call(client, "observe", session_id="mcp-1")
            assert not observed.is_error and "Class" in observed.content[0].text

            first = await call(
                client,
                "apply_actions",
                session_id="mcp-1",
                reasoning="first pass",
                actions=[
                    node("Class", name="AuthController", package="com.app.web"),
                    node("Class", name="AuthService"),  # package is required
                    edge(
                        "CALLS", {"name": "AuthController"}, {"name": "AuthService"}
                    ),  # AuthService was rejected
                    node("Interface", name="UserRepository"),
                    edge("CALLS", {"name": "AuthController"}, {"name": "AuthController"}),  # self-loop
                    {"type": "ADD_NODE"},
                ],
            )
            verdicts = first.structured_content["verdicts"]
            assert [(v["accepted"], v.get("code")) for v in verdicts] == [
                (True, None),
                (False, "MISSING_REQUIRED_ATTRIBUTE"),
                (False, "NODE_NOT_FOUND"),
                (True, None),
                (False, "SELF_LOOP_FORBIDDEN"),
                (False, "INVALID_ACTION"),
            ]
            assert "package" in verdicts[1]["message"]

            dry = await call(
                client,
                "apply_actions",
                session_id="mcp-1",
                dry_run=True,
                actions=[node("Class", name="AuthService", package="com.app.auth")],
            )
            assert dry.structured_content["verdicts"][0]["accepted"] and dry.structured_content["nodes"] == 2

            fixed = await call(
                client,
                "apply_actions",
                session_id="mcp-1",
                reasoning="fixes",
                actions=[
                    node("Class", name="AuthService", package="com.app.auth"),
                    edge("CALLS", {"name": "AuthController"}, {"name": "AuthService"}),
                    edge("IMPLEMENTS", {"name": "AuthService"}, {"name": "UserRepository"}),
                ],
            )
            assert [v["accepted"] for v in fixed.structured_content["verdicts"]] == [True, True, True]
            assert fixed.structured_content["iteration"] == 2

            focused = await call(client, "observe", session_id="mcp-1", focus=["AuthService"])
            assert "AuthService" in focused.content[0].text

            done = await call(client, "finish_session", session_id="mcp-1")
            assert done.structured_content["stop_reason"] == "finished"
            late = await call(
                client, "apply_actions", session_id="mcp-1", actions=[node("Class", name="X", package="p")]
            )
            assert late.is_error and late.content[0].text.startswith("SESSION_FINISHED:")

            exported = await call(client, "export_graph", session_id="mcp-1", format="json")
            doc = json.loads(exported.structured_content["content"])
            assert sorted((n["type"], n["properties"]["name"]) for n in doc["nodes"]) == [
                ("Class", "AuthController"),
                ("Class", "AuthService"),
                ("Interface", "UserRepository"),
            ]
            names = {n["id"]: n["properties"]["name"] for n in doc["nodes"]}
            assert sorted((names[e["from"]], e["type"], names[e["to"]]) for e in doc["edges"]) == [
                ("AuthController", "CALLS", "AuthService"),
                ("AuthService", "IMPLEMENTS", "UserRepository"),
            ]

            graphml = await call(client, "export_graph", session_id="mcp-1", format="graphml")
            read = nx.read_graphml(io.BytesIO(graphml.structured_content["content"].encode()))
            assert sorted(d["name"] for _, d in read.nodes(data=True)) == [
                "AuthController",
                "AuthService",
                "UserRepository",
            ]
            assert read.number_of_edges() == 2

            written = await call(
                client, "export_graph", session_id="mcp-1", format="json", path="auth/graph.json"
            )
            assert not written.is_error, written.content
            assert json.loads((tmp_path / "out" / "auth" / "graph.json").read_text())["nodes"] == doc["nodes"]
            escape = await call(client, "export_graph", session_id="mcp-1", path="../escape.json")
            assert escape.is_error and escape.content[0].text.startswith("PATH_FORBIDDEN:")
            assert not (tmp_path / "escape.json").exists()

            listed = await call(client, "list_sessions")
            assert [
                (s["session_id"], s["status"], s["iteration"]) for s in listed.structured_content["sessions"]
            ] == [("mcp-1", "finished", 2)]

            unknown = await call(client, "observe", session_id="nope")
            assert unknown.is_error and unknown.content[0].text.startswith("SESSION_NOT_FOUND:")

    asyncio.run(scenario())


def test_streamable_http_transport_with_a_bearer_token(tmp_path):
    """`igg mcp --transport http`: the SDK's client over streamable HTTP, the token guarding /mcp."""
    import os
    import subprocess
    import time

    import httpx
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    from tests.support.server import free_port

    port, token = free_port(), "mcp-token-1"
    env = {**os.environ, "IGG_API_TOKEN": token}
    proc = subprocess.Popen(
        [sys.executable, "-m", "igg", "mcp", "--transport", "http", "--port", str(port), "--memory"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 90  # a loaded machine starts Python slowly
        while True:
            try:
                refused = httpx.post(url, json={}, timeout=2)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline and proc.poll() is None, (
                    "igg mcp --transport http did not start"
                )
                time.sleep(0.1)
        assert refused.status_code == 401 and refused.json()["error"]["code"] == "UNAUTHORIZED"

        async def scenario() -> None:
            headers = {"Authorization": f"Bearer {token}"}
            async with (
                httpx2.AsyncClient(headers=headers, timeout=30) as http,
                Client(streamable_http_client(url, http_client=http)) as client,
            ):
                started = await call(client, "start_session", **request_dict(session_id="h-1"))
                assert started.structured_content["session_id"] == "h-1"
                applied = await call(
                    client,
                    "apply_actions",
                    session_id="h-1",
                    actions=[node("Class", name="A", package="p"), node("Class", name="A", package="p")],
                )
                assert [v.get("code") for v in applied.structured_content["verdicts"]] == [
                    None,
                    "DUPLICATE_NODE",
                ]

        asyncio.run(scenario())
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_run_session_lets_the_servers_own_llm_build_the_graph(tmp_path):
    from tests.integration.test_http import run_script
    from tests.support.fake_openai import FakeOpenAI

    with FakeOpenAI(run_script()) as llm:
        params = server(tmp_path)
        params.env = {"OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": "sk-test-key-not-logged"}

        async def scenario() -> None:
            async with Client(params) as client:
                progress: list[tuple[float, float | None, str | None]] = []

                async def on_progress(value: float, total: float | None, message: str | None) -> None:
                    progress.append((value, total, message))

                ran = await client.call_tool(
                    "run_session",
                    {**request_dict(session_id="auto-1"), "agent": "llm"},
                    progress_callback=on_progress,
                )
                assert not ran.is_error, ran.content
                summary = ran.structured_content
                assert summary["stop_reason"] == "finished" and summary["iterations"] == 2
                assert (summary["nodes"], summary["edges"]) == (3, 2)
                assert summary["actions"]["rejected_by_code"] == {"UNKNOWN_NODE_TYPE": 1}
                assert [(v, total) for v, total, _ in progress] == [(1, 20), (2, 20)]
                assert progress[0][2] == "iteration 1: 3 accepted, 1 rejected; 2 nodes, 1 edges"
                exported = await call(client, "export_graph", session_id="auto-1")
                assert len(json.loads(exported.structured_content["content"])["nodes"]) == 3

        asyncio.run(scenario())
