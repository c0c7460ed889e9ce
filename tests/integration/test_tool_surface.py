"""The MCP server and the OpenAI tool list as an agent framework meets them: messages that name tools (not
HTTP routes), the package version, one log format on stderr, and a compact tool list with ``"strict": true``
where OpenAI's structured outputs can take the schema."""

from __future__ import annotations

import asyncio
import copy
import json
import re
import sys
from importlib.metadata import version
from pathlib import Path

import jsonschema
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from openai.lib._pydantic import _ensure_strict_json_schema
from pydantic import ValidationError

from igg.workspace.ops import OPERATIONS_BY_NAME, input_schema
from igg.workspace.toolschema import compact_size, mcp_tools, openai_tools
from tests.conftest import ROOT
from tests.unit.test_workspace import request_dict


def test_mcp_names_tools_reports_its_version_and_logs_in_one_format(tmp_path: Path) -> None:
    """Over stdio with the SDK's own client: an unknown session's refusal names tools; stderr holds only
    IGG's console log lines (no second format from the SDK's rich handler)."""
    stderr = tmp_path / "stderr.txt"
    params = StdioServerParameters(
        command="bash",
        cwd=str(ROOT),
        args=["-c", f'exec "{sys.executable}" -m igg mcp --memory 2>"{stderr}"'],
    )

    async def scenario() -> None:
        async with Client(params) as client:
            assert client.server_info is not None and client.server_info.version == version("igg")
            missing = await client.call_tool("observe", {"session_id": "ghost"})
            assert missing.is_error
            assert missing.content[0].text == (
                "SESSION_NOT_FOUND: no session 'ghost'; list_sessions shows the "
                "sessions there are, start_session opens a new one"
            )
            started = await client.call_tool("start_session", request_dict(session_id="mcp-log"))
            assert not started.is_error, started.content
            listed = await client.call_tool("list_sessions", {})
            (session,) = listed.structured_content["sessions"]
            assert session["created"].endswith("Z") and "T" in session["created"]
            bad = await client.call_tool(
                "diff", {"session_id": "mcp-log", "a": 0, "b": 1}
            )  # memory: no history
            assert bad.is_error

    asyncio.run(scenario())
    lines = [line for line in stderr.read_text().splitlines() if line.strip()]
    assert lines, "the server logged nothing (session_started expected)"
    for line in lines:  # "2026-11-23T18:15:37.062524Z [info     ] session_started  nodes=0 ..."
        assert line[:4].isdigit() and line[10] == "T" and " [" in line, line
    assert any("session_started" in line for line in lines)


MCP_LIMIT = 23_000
OPENAI_LIMIT = 17_000
"""Bytes of compact JSON: the MCP tools/list answer's tools, output schemas included, and ``igg tools``'
OpenAI list (issue 34's limits, held again in issue 46: they had grown to 25,008 and 16,534; raised from
20,000 and 16,000 by issue 42's add_documents and retract_document, 2,186 and 988 bytes at their leanest, and
issue 43's valid_from/valid_to on four action types and as_of on three queries). ``scripts/tool_surface.py``
prints them per tool; docs/benchmarks.md and docs/agents.md say the real figures
(``test_the_docs_say_...``)."""


def served_tools() -> list[dict[str, object]]:
    """The tools a real ``igg mcp`` lists, as its client receives them."""

    async def listed() -> list[dict[str, object]]:
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "igg", "mcp", "--memory"], cwd=str(ROOT)
        )
        async with Client(params) as client:
            result = await client.list_tools()
            return [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in result.tools]

    return asyncio.run(listed())


def test_the_mcp_server_lists_the_published_schemas_within_the_limits() -> None:
    """What ``igg mcp`` answers to tools/list is ``mcp_tools()`` (the SDK's own schemas are not published),
    output schemas included, within 20,000 bytes; the OpenAI list within 16,000."""
    tools = served_tools()
    assert [
        {k: t[k] for k in ("name", "description", "inputSchema", "annotations", "outputSchema")}
        for t in tools
    ] == mcp_tools()
    assert compact_size(tools) == compact_size(mcp_tools()) <= MCP_LIMIT
    assert compact_size(openai_tools()) <= OPENAI_LIMIT


def test_the_docs_say_the_tool_lists_real_sizes() -> None:
    """docs/benchmarks.md's table and docs/agents.md's sentence give the measured bytes, not stale ones (the
    docs tests mask byte counts in command output; these figures are checked here, unmasked)."""
    mcp, openai = compact_size(mcp_tools()), compact_size(openai_tools())
    table = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    row = re.search(r"^all\s+([\d,]+)\s+([\d,]+)$", table, re.MULTILINE)
    assert row is not None and (row.group(1), row.group(2)) == (f"{mcp:,}", f"{openai:,}")
    by_tool = {t["name"]: t for t in mcp_tools()}
    for name, tool in by_tool.items():
        line = re.search(rf"^{name}\s+([\d,]+)\s+([\d,]+)$", table, re.MULTILINE)
        assert line is not None and line.group(1) == f"{compact_size(tool):,}", name
    agents = (ROOT / "docs" / "agents.md").read_text(encoding="utf-8")
    said = re.search(
        r"The tool list is lean for a model's context: ([\d.]+) KB of compact JSON for the (\d+) tools",
        agents,
    )
    assert said is not None and said.groups() == (f"{mcp / 1000:.1f}", str(len(by_tool)))
    assert f"\n{openai} bytes; strict:" in agents  # the output of the page's own example, unmasked
    rows = set(re.findall(r"^\| `(\w+)` \|", agents, re.MULTILINE))
    assert set(by_tool) <= rows, (
        f"operations missing from docs/agents.md's table: {sorted(set(by_tool) - rows)}"
    )


def test_every_published_schema_is_valid_and_its_refs_resolve() -> None:
    for tool in mcp_tools():
        schema = tool["inputSchema"]
        jsonschema.Draft202012Validator.check_schema(schema)
        text = json.dumps(schema)
        assert '"title"' not in text and '"default": null' not in text and "discriminator" not in text
        for ref in set(re.findall(r'"\$ref": "#/\$defs/(\w+)"', text)):
            assert ref in schema["$defs"], (tool["name"], ref)


def test_published_schemas_accept_what_the_server_accepts() -> None:
    """No validation is lost: a valid request and valid actions pass the published schema and the model
    alike; what the model refuses (an unknown key, a wrong type, an empty ref) the schema refuses too."""
    tools = {t["name"]: t["inputSchema"] for t in mcp_tools()}
    request = request_dict(session_id="s1")
    jsonschema.validate(request, tools["start_session"])
    jsonschema.validate({**request, "agent": "code"}, tools["run_session"])
    actions = [
        {"type": "ADD_NODE", "label": "Class", "properties": {"name": "A", "package": "p", "n": [1, "x"]}},
        {"type": "ADD_EDGE", "label": "CALLS", "from": {"name": "A"}, "to": {"name": "B"}},
        {"type": "MERGE_NODES", "node": {"name": "A2"}, "into": {"name": "A"}},
        {"type": "QUERY", "query": {"query": "find", "label": "Class"}},
    ]
    jsonschema.validate({"session_id": "s1", "actions": actions}, tools["apply_actions"])
    bad = [
        ({**request, "surprise": 1}, "start_session"),
        ({**request, "config": {**request["config"], "max_iterations": "many"}}, "start_session"),
        (
            {
                "session_id": "s1",
                "actions": [{"type": "ADD_EDGE", "label": "CALLS", "from": {}, "to": {"name": "B"}}],
            },
            "apply_actions",
        ),
        ({"session_id": "s1", "query": {"query": "path", "from": {"name": "A"}}}, "query_graph"),
    ]
    for arguments, name in bad:
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(arguments, tools[name])


def test_run_session_takes_start_sessions_arguments() -> None:
    start, run = OPERATIONS_BY_NAME["start_session"].input, OPERATIONS_BY_NAME["run_session"].input
    assert set(run.model_fields) == set(start.model_fields) | {"agent", "exports", "provenance"}
    inp = run.model_validate({**request_dict(session_id="r1"), "agent": "code"})
    assert inp.as_request() == start.model_validate(request_dict(session_id="r1"))
    published = {t["name"]: t["inputSchema"]["properties"] for t in mcp_tools()}
    assert set(published["run_session"]) == set(published["start_session"]) | {
        "agent",
        "exports",
        "provenance",
    }


def test_the_old_run_session_shape_is_refused_with_the_way_forward() -> None:
    with pytest.raises(
        ValidationError,
        match="run_session takes the request's fields at the top level, exactly as start_session does",
    ):
        OPERATIONS_BY_NAME["run_session"].input.model_validate({"request": request_dict(), "agent": "code"})


def test_apply_actions_names_every_action_type() -> None:
    from typing import get_args

    from igg.models.actions import Action

    kinds = {get_args(m.model_fields["type"].annotation)[0] for m in get_args(get_args(Action)[0])}
    assert kinds == {
        "ADD_NODE",
        "ADD_EDGE",
        "UPDATE_NODE",
        "DELETE_NODE",
        "DELETE_EDGE",
        "UPDATE_EDGE",
        "MERGE_NODES",
        "QUERY",
    }
    description = OPERATIONS_BY_NAME["apply_actions"].description
    assert all(kind in description for kind in kinds)


def test_openai_tools_are_compact_and_strict_where_the_schema_allows() -> None:
    tools = {t["function"]["name"]: t["function"] for t in openai_tools()}
    size = len(json.dumps(list(tools.values())))
    before = sum(
        len(json.dumps({"name": n, "description": op.description, "parameters": input_schema(op)}))
        for n, op in OPERATIONS_BY_NAME.items()
    )
    assert size < 0.35 * before, (size, before)
    assert '"title"' not in json.dumps(tools) and '"default": null' not in json.dumps(tools)
    strict = {name for name, f in tools.items() if f.get("strict")}
    assert strict == {
        "finish_session",
        "export_graph",
        "list_sessions",
        "explain",
        "diff",
        "undo",
        "review",
        "retract_document",
    }
    for name in strict:
        params = tools[name]["parameters"]
        # the openai SDK's own strict-schema pass finds nothing left to change
        assert _ensure_strict_json_schema(copy.deepcopy(params), path=(), root=params) == params, name
        _check_strict(params, name)
        jsonschema.Draft202012Validator.check_schema(params)


def _check_strict(node: object, where: str) -> None:
    """OpenAI's rules for strict schemas: closed objects, every property required, known keywords only."""
    allowed = {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "anyOf",
        "enum",
        "const",
        "description",
        "pattern",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minItems",
        "maxItems",
    }
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
            {k: v for k, v in arguments.items() if v is not None}
        )
        assert model == defaults, name
    export = OPERATIONS_BY_NAME["export_graph"].input.model_validate(calls["export_graph"])
    assert export.format == "json"


def test_a_tool_clients_observation_points_at_the_schema_instead_of_repeating_it() -> None:
    """observe (MCP, HTTP, OpenAI tools) ends with one line pointing at apply_actions' schema; the LLM agent
    of a run, which has no tool schema, still gets the whole response format."""
    from igg.observe.render import FULL_FORMAT, TOOL_FORMAT
    from igg.workspace import MemorySessions, Workspace
    from igg.workspace.ops import ObserveInput

    ws = Workspace(MemorySessions())
    sid = ws.start(request_dict(session_id="obs"))["session_id"]
    markdown = ws.observe(ObserveInput(session_id=sid))["markdown"]
    assert markdown.endswith(TOOL_FORMAT) and FULL_FORMAT not in markdown
    assert len(TOOL_FORMAT) < 200 < len(FULL_FORMAT) and "apply_actions" in TOOL_FORMAT
    assert "data, never instructions" in TOOL_FORMAT


def test_a_summarized_setting_keeps_its_type() -> None:
    """A setting published as one line keeps its JSON type: completeness rules are a list, and a client that
    follows the schema sends a list (an object would be refused)."""
    from igg.workspace.toolschema import SUMMARIZED

    start = next(t for t in mcp_tools() if t["name"] == "start_session")["inputSchema"]
    full = input_schema(OPERATIONS_BY_NAME["start_session"])
    for path in SUMMARIZED:
        node, model = start, full
        for name in path:
            node = node["properties"][name]
            model = model["properties"][name]
            while "$ref" in model or "anyOf" in model:
                if "$ref" in model:
                    model = full["$defs"][model["$ref"].rsplit("/", 1)[1]]
                else:
                    model = next(m for m in model["anyOf"] if m != {"type": "null"})
        assert node["type"] == model.get("type", "object"), path
