"""The Neo4j export plan over MCP (the SDK's client on stdio) and HTTP, against the suite's Bolt server."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.conftest import ROOT, edge, node
from tests.integration.test_http import serve
from tests.support.bolt import BoltServer
from tests.unit.test_workspace import request_dict


def neo4j_env(server: BoltServer) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "OPENAI_", "IGG_"))}
    return {**base, "NEO4J_URI": server.uri, **server.env}


def test_the_plan_over_mcp_and_http_writes_nothing_and_follows_the_export(bolt_server, tmp_path):
    sid = f"plan-{uuid.uuid4().hex[:8]}"
    env = neo4j_env(bolt_server)
    params = StdioServerParameters(
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
        env=env,
    )

    async def over_mcp() -> dict:
        async with Client(params) as client:
            started = await client.call_tool("start_session", request_dict(session_id=sid))
            assert not started.is_error, started.content
            applied = await client.call_tool(
                "apply_actions",
                {
                    "session_id": sid,
                    "actions": [
                        node("Class", name="AuthService", package="a"),
                        node("Class", name="AuthController", package="a"),
                        edge("CALLS", {"name": "AuthController"}, {"name": "AuthService"}),
                    ],
                },
            )
            assert not applied.is_error, applied.content
            planned = await client.call_tool("export_graph", {"session_id": sid, "format": "neo4j_plan"})
            assert not planned.is_error, planned.content
            refused = await client.call_tool(
                "export_graph", {"session_id": sid, "format": "neo4j_plan", "path": "plan.json"}
            )
            assert refused.is_error and "omit path" in refused.content[0].text
            return planned.structured_content

    planned = asyncio.run(over_mcp())
    assert planned["plan"]["scope"] == sid and planned["plan"]["server"] in ("arcadedb", "neo4j")
    assert (
        planned["plan"]["counts"]["nodes"]["create"] == 2
        and planned["plan"]["counts"]["edges"]["create"] == 1
    )
    assert {
        "action": "create",
        "element": "edge",
        "what": 'Class {name: "AuthController"} -[CALLS]-> Class {name: "AuthService"}',
    } in planned["plan"]["changes"]
    exported = subprocess.run(
        [
            sys.executable,
            "-m",
            "igg",
            "export",
            sid,
            "--store",
            str(tmp_path / "sessions.sqlite"),
            "--format",
            "neo4j",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert exported.returncode == 0, exported.stderr
    with serve(tmp_path, env=env) as http:
        response = http.post(f"/sessions/{sid}/export", json={"format": "neo4j_plan"})
        assert response.status_code == 200, response.text
        counts = response.json()["plan"]["counts"]
        assert counts["nodes"] == {"create": 0, "update": 0, "delete": 0, "unchanged": 2}
        assert counts["edges"] == {"create": 0, "update": 0, "delete": 0, "unchanged": 1}
    if bolt_server.external:
        from igg.export.neo4j.bolt import BoltSession

        with BoltSession(bolt_server.settings()) as session:
            session.run("MATCH (n) WHERE n.igg_scope = $s DETACH DELETE n", s=sid)


def test_an_unreachable_neo4j_is_a_clear_error_over_http(tmp_path):
    from tests.support.bolt import free_port

    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("NEO4J_")},
        "NEO4J_URI": f"bolt://127.0.0.1:{free_port(set())}",
        "NEO4J_PASSWORD": "s3cret-pw",
    }
    with serve(tmp_path, env=env) as http:
        sid = http.post("/sessions", json=request_dict()).json()["session_id"]
        response = http.post(f"/sessions/{sid}/export", json={"format": "neo4j_plan"})
        assert response.status_code == 502 and response.json()["error"]["code"] == "EXPORT_FAILED"
        assert "cannot reach a Bolt server" in response.text and "s3cret" not in response.text
