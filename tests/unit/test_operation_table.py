"""One operation table (``igg.workspace.ops.OPERATIONS``) drives the MCP server, the HTTP API and the
workspace's dispatch: an operation declared once (input, output, handler, routes) is served by both servers,
and the OpenAPI document shows every route's request and response models."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from mcp import Client

from igg.interfaces.http.app import build_app
from igg.interfaces.mcp.server import build_server
from igg.workspace import Workspace
from igg.workspace.inputs import OperationInput, SessionId
from igg.workspace.ops import OPERATIONS, Operation, Route
from igg.workspace.outputs import Output, SessionSummary
from igg.workspace.service import summary

ROOT = Path(__file__).resolve().parents[2]


class EchoInput(OperationInput):
    """Text to echo, in one session."""

    session_id: SessionId
    text: str
    times: int = 1


class EchoOutput(SessionSummary):
    echoed: str


def _echo(workspace: Any, inp: EchoInput) -> Output:
    live = workspace.get(inp.session_id)
    return EchoOutput.model_validate({**summary(live), "echoed": inp.text * inp.times})


ECHO = Operation(
    name="echo",
    input=EchoInput,
    output=EchoOutput,
    handler=_echo,
    read_only=True,
    routes=(Route("POST", "/sessions/{session_id}/echo", summary="Echo"),),
    description="Echo text.",
)
"""A new operation: this declaration is all it takes."""


def _workspace() -> tuple[Workspace, str]:
    workspace = Workspace(operations=(*OPERATIONS, ECHO))
    sid = workspace.start(
        {"goal_prompt": "echo", "config": {"schema": {"node_types": ["Class"], "edge_types": ["CALLS"]}}}
    )["session_id"]
    return workspace, sid


def test_an_operation_declared_once_is_served_over_http_and_mcp() -> None:
    workspace, sid = _workspace()
    http = TestClient(build_app(workspace))
    answer = http.post(f"/sessions/{sid}/echo", json={"text": "ab", "times": 2})
    assert answer.status_code == 200 and answer.json()["echoed"] == "abab" and answer.json()["nodes"] == 0
    refused = http.post(f"/sessions/{sid}/echo", json={"text": "ab", "louder": True})
    assert refused.status_code == 422 and refused.json()["error"]["code"] == "INVALID_ARGUMENTS"
    assert "louder" in refused.json()["error"]["message"]
    missing = http.post("/sessions/nobody/echo", json={"text": "ab"})
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "SESSION_NOT_FOUND"
    spec = http.get("/openapi.json").json()["paths"]["/sessions/{session_id}/echo"]["post"]
    assert spec["operationId"] == "echo"
    assert spec["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/EchoOutput"
    }
    assert set(spec["requestBody"]["content"]["application/json"]["schema"]["properties"]) == {
        "text",
        "times",
    }

    async def over_mcp() -> None:
        async with Client(build_server(workspace)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert tools["echo"].annotations is not None and tools["echo"].annotations.read_only_hint
            assert set(tools["echo"].input_schema["properties"]) == {"session_id", "text", "times"}
            assert "echoed" in (tools["echo"].output_schema or {})["properties"]
            result = await client.call_tool("echo", {"session_id": sid, "text": "x", "times": 3})
            assert not result.is_error and result.structured_content["echoed"] == "xxx"
            bad = await client.call_tool("echo", {"session_id": sid})
            assert bad.is_error and bad.content[0].text.startswith("INVALID_ARGUMENTS: text")

    asyncio.run(over_mcp())
    assert asyncio.run(workspace.execute(EchoInput(session_id=sid, text="py")))["echoed"] == "py"


def test_every_http_route_shows_its_request_and_response_models() -> None:
    workspace, _ = _workspace()
    spec = TestClient(build_app(workspace)).get("/openapi.json").json()
    routes = 0
    for path, methods in spec["paths"].items():
        for method, operation in methods.items():
            routes += 1
            if path.endswith("/events"):  # server-sent events: a stream, not one JSON answer
                assert "text/event-stream" in str(operation["responses"])
                continue
            ok = next(v for k, v in operation["responses"].items() if k.startswith("2"))
            assert re.fullmatch(
                r"#/components/schemas/(\w+Output|SessionSummary)",
                ok["content"]["application/json"]["schema"]["$ref"],
            ), (path, method)
            wanted = set(re.findall(r"\{(\w+)\}", path))
            assert {p["name"] for p in operation.get("parameters", []) if p["in"] == "path"} == wanted, path
            if method in ("post",) and path not in ("/healthz",):
                assert "requestBody" in operation or operation["operationId"] == "review", (path, method)
    assert routes >= sum(len(op.routes) for op in OPERATIONS) + 3


def test_nothing_branches_on_an_operations_name() -> None:
    """Adding an operation touches one place: no adapter or service tests a tool's name."""
    names = "|".join(op.name for op in OPERATIONS)
    pattern = re.compile(rf"""(name|tool)\w*["')\]]*\s*(==|!=|\bin)\s*\(?["']({names})["']""")
    found = [
        f"{path.relative_to(ROOT)}:{i}"
        for folder in ("igg/workspace", "igg/interfaces")
        for path in (ROOT / folder).rglob("*.py")
        for i, line in enumerate(path.read_text().splitlines(), 1)
        if pattern.search(line)
    ]
    assert not found


def test_a_session_is_assembled_only_by_open_or_load() -> None:
    """``Session.open`` (a new one) and ``Session.load`` (a stored one) are the only ways to have a
    ``Session``; nothing outside it constructs one or replaces its act step."""
    import ast

    found = []
    for path in (ROOT / "igg").rglob("*.py"):
        if path.parent.name == "session":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Session":
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Attribute)
                and t.attr == "actor"
                and not (isinstance(t.value, ast.Name) and t.value.id == "self")
                for t in node.targets
            ):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} replaces a session's actor")
    assert found == []
