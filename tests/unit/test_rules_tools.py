"""The ``check`` operation over MCP (the official SDK's client, stdio) and HTTP (a live ``igg serve``): an
agent asks whether a stored map breaks rules and gets the violations with files and lines, or INVALID_RULES
naming the rule and field."""

from __future__ import annotations

import asyncio
from pathlib import Path

from mcp import Client

from igg.interfaces.cli import main
from tests.integration.test_http import error_of, serve
from tests.integration.test_mcp import server

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "code" / "python"
RULES = [
    {"name": "models-on-top", "kind": "layers", "layers": ["shop.models", "shop.service"]},
    {"name": "no-cycles", "kind": "acyclic"},
]
EXPECTED = [
    {
        "source": "shop.service",
        "target": "shop.models",
        "edge": "IMPORTS",
        "file": "shop/service.py",
        "line": 3,
        "type_checking": False,
    }
]


def mapped(tmp_path: Path) -> None:
    assert (
        main(
            [
                "map-code",
                str(FIXTURE),
                "--store",
                str(tmp_path / "sessions.sqlite"),
                "--session",
                "shop-map",
                "--quiet",
            ]
        )
        == 0
    )


def test_check_over_mcp(tmp_path: Path) -> None:
    mapped(tmp_path)

    async def scenario() -> None:
        async with Client(server(tmp_path)) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert tools["check"].annotations.read_only_hint is True
            result = await client.call_tool("check", {"session_id": "shop-map", "rules": RULES})
            assert not result.is_error, result.content
            report = result.structured_content
            assert report["failed"] is True
            assert [(v["rule"], v["path"]) for v in report["violations"]] == [("models-on-top", EXPECTED)]
            assert [r["violations"] for r in report["rules"]] == [1, 0]
            bad = await client.call_tool(
                "check", {"session_id": "shop-map", "rules": [{"name": "x", "kind": "forbidden", "to": "a"}]}
            )
            assert bad.is_error and bad.content[0].text.startswith("INVALID_RULES")
            assert "rules[0] 'x': field 'from': required" in bad.content[0].text

    asyncio.run(scenario())


def test_check_over_http(tmp_path: Path) -> None:
    mapped(tmp_path)
    with serve(tmp_path) as http:
        answer = http.post("/sessions/shop-map/check", json={"rules": RULES})
        assert answer.status_code == 200, answer.text
        assert [v["path"] for v in answer.json()["violations"]] == [EXPECTED]
        refused = http.post(
            "/sessions/shop-map/check", json={"rules": [{"name": "x", "kind": "acyclic", "level": "file"}]}
        )
        status, code = error_of(refused)
        assert (status, code) == (422, "INVALID_RULES")
        assert "rules[0] 'x': field 'level'" in refused.text
        missing = http.post("/sessions/nope/check", json={"rules": RULES})
        assert missing.status_code == 404
