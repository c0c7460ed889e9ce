"""The MCP server and the OpenAI tool list as an agent framework meets them: messages that name tools (not
HTTP routes), the package version, one log format on stderr, and a compact tool list with ``"strict": true``
where OpenAI's structured outputs can take the schema."""

from __future__ import annotations

import asyncio
import copy
import json
import sys
from importlib.metadata import version
from pathlib import Path

import jsonschema
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from openai.lib._pydantic import _ensure_strict_json_schema

from igg.workspace.ops import OPERATIONS_BY_NAME, input_schema, openai_tools
from tests.conftest import ROOT
from tests.test_workspace import request_dict


def test_mcp_names_tools_reports_its_version_and_logs_in_one_format(tmp_path: Path) -> None:
    """Over stdio with the SDK's own client: an unknown session's refusal names tools; stderr holds only
    IGG's console log lines (no second format from the SDK's rich handler)."""
    stderr = tmp_path / "stderr.txt"
    params = StdioServerParameters(command="bash", cwd=str(ROOT), args=[
        "-c", f'exec "{sys.executable}" -m igg mcp --memory 2>"{stderr}"'])

    async def scenario() -> None:
        async with Client(params) as client:
            assert client.server_info is not None and client.server_info.version == version("igg")
            missing = await client.call_tool("observe", {"session_id": "ghost"})
            assert missing.is_error
            assert missing.content[0].text == ("SESSION_NOT_FOUND: no session 'ghost'; list_sessions shows the "
                                               "sessions there are, start_session opens a new one")
            started = await client.call_tool("start_session", request_dict(session_id="mcp-log"))
            assert not started.is_error, started.content
            listed = await client.call_tool("list_sessions", {})
            (session,) = listed.structured_content["sessions"]
            assert session["created"].endswith("Z") and "T" in session["created"]
            bad = await client.call_tool("diff", {"session_id": "mcp-log", "a": 0, "b": 1})  # memory: no history
            assert bad.is_error

    asyncio.run(scenario())
    lines = [line for line in stderr.read_text().splitlines() if line.strip()]
    assert lines, "the server logged nothing (session_started expected)"
    for line in lines:  # "2026-11-23T18:15:37.062524Z [info     ] session_started  nodes=0 ..."
        assert line[:4].isdigit() and line[10] == "T" and " [" in line, line
    assert any("session_started" in line for line in lines)


def test_openai_tools_are_compact_and_strict_where_the_schema_allows() -> None:
    tools = {t["function"]["name"]: t["function"] for t in openai_tools()}
    size = len(json.dumps(list(tools.values())))
    before = sum(len(json.dumps({"name": n, "description": op.description, "parameters": input_schema(op)}))
                 for n, op in OPERATIONS_BY_NAME.items())
    assert size < 0.65 * before, (size, before)  # measured: 67.2 KB -> 39.3 KB
    assert '"title"' not in json.dumps(tools) and '"default": null' not in json.dumps(tools)
    assert len(json.dumps(tools["start_session"])) < 0.8 * len(json.dumps(input_schema(OPERATIONS_BY_NAME["start_session"])))
    strict = {name for name, f in tools.items() if f.get("strict")}
    assert strict == {"finish_session", "export_graph", "list_sessions", "explain", "diff", "undo", "review"}
    for name in strict:
        params = tools[name]["parameters"]
        # the openai SDK's own strict-schema pass finds nothing left to change
        assert _ensure_strict_json_schema(copy.deepcopy(params), path=(), root=params) == params, name
        _check_strict(params, name)
        jsonschema.Draft202012Validator.check_schema(params)


def _check_strict(node: object, where: str) -> None:
    """OpenAI's rules for strict schemas: closed objects, every property required, known keywords only."""
    allowed = {"type", "properties", "required", "additionalProperties", "items", "anyOf", "enum", "const",
               "description", "pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
               "multipleOf", "minItems", "maxItems"}
    if isinstance(node, list):
        for item in node:
            _check_strict(item, where)
        return
    if not isinstance(node, dict):
        return
    assert set(node) <= allowed, (where, set(node) - allowed)
    if "properties" in node:
        assert node["additionalProperties"] is False and node["required"] == list(node["properties"]), where
        for name, sub in node["properties"].items():
            _check_strict(sub, f"{where}.{name}")
    for key in ("items", "anyOf"):
        if key in node:
            _check_strict(node[key], f"{where}.{key}")


def test_a_strict_call_with_every_optional_argument_null_means_the_defaults() -> None:
    """What a strict tool call sends (all keys, optional ones null) validates and takes the defaults."""
    tools = {t["function"]["name"]: t["function"] for t in openai_tools()}
    calls = {
        "export_graph": {"session_id": "s1", "format": None, "path": None},
        "list_sessions": {"status": None, "limit": None},
        "explain": {"session_id": "s1", "ref": "AuthService", "edges": None},
        "finish_session": {"session_id": "s1", "prune_isolated": None},
        "review": {"session_id": "s1", "decision": None, "plan_id": None, "actions": None, "note": None},
    }
    for name, arguments in calls.items():
        jsonschema.validate(arguments, tools[name]["parameters"])
        model = OPERATIONS_BY_NAME[name].input.model_validate(arguments)
        defaults = OPERATIONS_BY_NAME[name].input.model_validate(
            {k: v for k, v in arguments.items() if v is not None})
        assert model == defaults, name
    export = OPERATIONS_BY_NAME["export_graph"].input.model_validate(calls["export_graph"])
    assert export.format == "json"
