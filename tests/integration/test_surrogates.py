"""Text that UTF-8 cannot encode (a lone surrogate such as the JSON escape ``"\\ud800"``) never reaches a
writer: it is refused with a verdict where agent or client input enters, so runs, stores and servers go on.

The reproductions of issue 15 item 2: ``igg run --store`` with a scripted transcript (raw text and response
objects), and ``igg mcp`` over stdio spoken to line by line (the SDK's client cannot send such text).
The HTTP API's cases are in ``tests/integration/test_hostile.py`` (against its fuzzed, store-backed server).
"""

from __future__ import annotations

import json
import os
import select
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.conftest import FIXTURES, ROOT

RAW_TURN = (
    r'{"raw":'
    r' "{\"actions\":[{\"type\":\"ADD_NODE\",\"label\":\"Class\",\"properties\":{\"name\":\"B\\ud800\"}}]}"}'
)
"""The issue's transcript line, byte for byte: raw model text whose JSON escape decodes to a lone
surrogate."""

OBJECT_TURNS = [
    (
        r'{"reasoning": "fine", "actions": [{"type": "ADD_NODE", "label": "Class", "properties": {"name":'
        r' "A", "package": "p"}}]}'
    ),
    (
        r'{"reasoning": "odd \udfff text", "actions": [{"type": "ADD_NODE", "label": "Class\ud800",'
        r' "properties": {"name": "C", "package": "p"}}, {"type": "ADD_NODE", "label": "Class", "properties":'
        r' {"name": "D\ud83d", "package": "p"}}, {"type": "ADD_NODE", "label": "Class", "properties":'
        r' {"name": "E", "package": "p"}}], "finished": true}'
    ),
]


def igg(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "IGG_")) or k == "IGG_HOME"}
    return subprocess.run(
        [sys.executable, "-m", "igg", *args], cwd=ROOT, capture_output=True, text=True, timeout=120, env=env
    )


def integrity(store: Path) -> list[tuple[str]]:
    with sqlite3.connect(store) as conn:
        return conn.execute("PRAGMA integrity_check").fetchall()


def test_igg_run_with_a_surrogate_in_raw_model_text_stores_a_verdict(tmp_path):
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(RAW_TURN + "\n")
    store = tmp_path / "s.sqlite"
    run = igg(
        "run",
        str(FIXTURES / "seed_request.json"),
        "--agent",
        f"script:{transcript}",
        "--store",
        str(store),
        "--json",
    )
    assert run.returncode in (0, 1), run.stderr  # the transcript ends after one turn: agent_error is fine
    assert "Traceback" not in run.stderr and "UnicodeEncodeError" not in run.stderr
    summary = json.loads(run.stdout)
    assert summary["actions"]["rejected_by_code"] == {"INVALID_PROPERTY": 1} and summary["nodes"] == 0
    assert integrity(store) == [("ok",)]
    shown = igg("show", "uuid-1234", "--store", str(store))
    assert shown.returncode == 0 and "Traceback" not in shown.stderr


def test_igg_run_with_surrogates_in_a_response_object_keeps_the_rest(tmp_path):
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("\n".join(OBJECT_TURNS) + "\n")
    store = tmp_path / "s.sqlite"
    out = tmp_path / "run"
    run = igg(
        "run",
        str(FIXTURES / "seed_request.json"),
        "--agent",
        f"script:{transcript}",
        "--store",
        str(store),
        "--out",
        str(out),
        "--json",
        "--export",
        f"graphml:{tmp_path / 'g.graphml'}",
    )
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout)
    assert summary["stop_reason"] == "finished" and summary["nodes"] == 2  # A and E
    assert sum(summary["actions"]["rejected_by_code"].values()) == 2
    assert integrity(store) == [("ok",)]
    records = [json.loads(line) for line in (out / "records.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(records) == 2 and records[1]["reasoning"].startswith("odd ")  # stored, not dropped
    replayed = igg("replay", "uuid-1234", "--store", str(store))
    assert replayed.returncode == 0, replayed.stderr


class RawMcp:
    """``igg mcp`` over stdio, spoken to in JSON-RPC lines."""

    def __init__(self, *args: str) -> None:
        env = {
            k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "IGG_")) or k == "IGG_HOME"
        }
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "igg", "mcp", *args],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.next_id = 0

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def request(
        self, method: str, params: dict[str, Any], *, raw_params: str | None = None
    ) -> dict[str, Any]:
        self.next_id += 1
        body = raw_params if raw_params is not None else json.dumps(params)
        self.send(f'{{"jsonrpc": "2.0", "id": {self.next_id}, "method": "{method}", "params": {body}}}')
        return self.reply(self.next_id)

    def reply(self, wanted: int, timeout: float = 90.0) -> dict[str, Any]:
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                break
            line = self.proc.stdout.readline()
            if not line:
                break
            message = json.loads(line)
            if message.get("id") == wanted:
                return message
        raise AssertionError(f"igg mcp did not answer request {wanted} (exit code {self.proc.poll()})")

    def close(self) -> str:
        assert self.proc.stdin is not None and self.proc.stderr is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        return self.proc.stderr.read().decode()


def test_mcp_stdio_answers_a_call_holding_a_lone_surrogate(tmp_path):
    store = tmp_path / "s.sqlite"
    mcp = RawMcp("--store", str(store))
    try:
        mcp.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        )
        mcp.send('{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        request = json.loads((FIXTURES / "seed_request.json").read_text())
        request["session_id"] = "raw-1"
        started = mcp.request("tools/call", {"name": "start_session", "arguments": request})
        assert not started["result"].get("isError"), started
        applied = mcp.request(
            "tools/call",
            {},
            raw_params=(
                '{"name": "apply_actions", "arguments": {"session_id": "raw-1", "reasoning": "r\\udc00",'
                ' "actions": [{"type": "ADD_NODE", "label": "Class", "properties": {"name": "B\\ud800",'
                ' "package": "p"}}, {"type": "ADD_NODE", "label": "Class", "properties": {"name": "Fine",'
                ' "package": "p"}}]}}'
            ),
        )
        result = applied["result"]  # answered (the SDK's reader cannot take the line): refused with its code
        assert result["isError"] and result["content"][0]["text"].startswith("INVALID_ARGUMENTS: ")
        assert "params.arguments.reasoning" in result["content"][0]["text"]
        fine = mcp.request(
            "tools/call",
            {
                "name": "apply_actions",
                "arguments": {
                    "session_id": "raw-1",
                    "actions": [
                        {"type": "ADD_NODE", "label": "Class", "properties": {"name": "Fine", "package": "p"}}
                    ],
                },
            },
        )
        assert fine["result"]["structuredContent"]["verdicts"][0]["accepted"]
        refused = mcp.request(
            "tools/call",
            {},
            raw_params='{"name": "observe", "arguments": {"session_id": "raw-1", "focus": ["x\\ud800"]}}',
        )
        assert refused["result"]["isError"]
        assert refused["result"]["content"][0]["text"].startswith("INVALID_ARGUMENTS: ")
        goal = mcp.request(
            "tools/call",
            {},
            raw_params=(
                '{"name": "start_session", "arguments": {"goal_prompt": "g\\ud800", "config": {"schema": '
                '{"node_types": ["A"], "edge_types": ["R"]}}}}'
            ),
        )
        assert goal["result"]["content"][0]["text"].startswith("INVALID_REQUEST: ")
        listed = mcp.request("tools/call", {"name": "list_sessions", "arguments": {}})
        assert [s["session_id"] for s in listed["result"]["structuredContent"]["sessions"]] == ["raw-1"]
    finally:
        log = mcp.close()
    assert "Traceback" not in log, log[-3000:]
    assert integrity(store) == [("ok",)]


def test_nul_in_goal_prompt_is_refused_up_front_and_kept_out_of_chunk_labels():
    """Issue 47: NUL in goal_prompt reached a PostgreSQL store (which cannot hold it in text) and failed there
    as STORE_ERROR "session None"; it is INVALID_REQUEST before anything runs, on every store alike. A file
    marker holding NUL labels its chunk without it (labels are stored as text too)."""
    import pytest

    from igg.errors import RequestInvalid
    from igg.observe import split_context
    from igg.request.load import load_request

    with pytest.raises(RequestInvalid) as refused:
        load_request(
            {
                "goal_prompt": "find\x00classes",
                "config": {"schema": {"node_types": ["A"], "edge_types": ["B"]}},
            }
        )
    assert "goal_prompt" in str(refused.value) and "U+0000" in str(refused.value)
    (chunk,) = split_context("// File: a\x00b.py\nx = 1\n", 100)
    assert chunk.label == "a\ufffdb.py"


def test_mcp_stdio_answers_a_call_nested_too_deep_for_its_reader(tmp_path):
    """Issue 47, the nesting class over MCP stdio: a ``check`` whose rule nests 3,000 lists deep was dropped
    by the SDK's JSON reader without an answer (the client waited for ever); it is answered INVALID_ARGUMENTS,
    by its id, and the server goes on."""
    mcp = RawMcp("--store", str(tmp_path / "s.sqlite"))
    try:
        mcp.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        )
        mcp.send('{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        deep = "[" * 3000 + '"d"' + "]" * 3000
        refused = mcp.request(
            "tools/call",
            {},
            raw_params=(
                '{"name": "check", "arguments": {"session_id": "s", "rules": [{"name": "x", "kind":'
                f' "forbidden", "to": "u", "from": {deep}}}]}}}}'
            ),
        )
        result = refused["result"]
        assert result["isError"] and result["content"][0]["text"].startswith("INVALID_ARGUMENTS: ")
        assert "more than 200 levels deep" in result["content"][0]["text"]
        listed = mcp.request("tools/list", {})
        assert any(t["name"] == "check" for t in listed["result"]["tools"])
    finally:
        log = mcp.close()
    assert "Traceback" not in log
