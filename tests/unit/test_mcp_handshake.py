"""``igg mcp`` answers ``initialize`` before loading the SDK (``igg.interfaces.mcp.handshake``), with exactly
what the SDK would answer: the SDK's own answer, dropped, is compared with it (a difference is logged as
``mcp_handshake_mismatch``), and the session goes on as the SDK's (tools/list, a call)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading

import pytest
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from igg.interfaces.mcp.handshake import HANDSHAKE_VERSIONS, EarlyAnswer, initialize_answer
from igg.workspace.ops import OPERATIONS
from tests.conftest import ROOT


def initialize(version: str, request_id: int | str = 1) -> str:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "initialize",
            "params": {
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        }
    )


def converse(*lines: str, until: object) -> tuple[list[dict[str, object]], str]:
    """Send the lines to ``igg mcp`` and read its answers until the one with id ``until``; only then close its
    input (closing it at once races the server's last answer against its shutdown)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "igg", "mcp", "--memory"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        text=True,
    )
    timer = threading.Timer(120, proc.kill)
    timer.start()
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("\n".join(lines) + "\n")
        proc.stdin.flush()
        answers: list[dict[str, object]] = []
        while not any(a.get("id") == until for a in answers):
            line = proc.stdout.readline()
            if not line:
                break  # the server ended (or the timer killed it): the assertions say what is missing
            if line.strip():
                answers.append(json.loads(line))
        _, stderr = proc.communicate()
    finally:
        timer.cancel()
    return answers, stderr


def test_the_versions_are_the_sdks() -> None:
    assert HANDSHAKE_VERSIONS == tuple(HANDSHAKE_PROTOCOL_VERSIONS)


@pytest.mark.parametrize("version", ["2025-06-18", "2024-11-05", "1999-01-01"])
def test_the_early_answer_is_the_sdks_and_the_session_goes_on(version: str) -> None:
    answers, stderr = converse(
        initialize(version, "a-1"),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        until=2,
    )
    assert "mcp_handshake_mismatch" not in stderr, stderr
    assert [a["id"] for a in answers] == ["a-1", 2]  # one answer each: the SDK's own first one was dropped
    agreed = answers[0]["result"]["protocolVersion"]  # type: ignore[index]
    assert agreed == (version if version in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1])
    assert [t["name"] for t in answers[1]["result"]["tools"]] == [op.name for op in OPERATIONS]  # type: ignore[index]


def test_a_first_line_that_is_no_initialize_goes_to_the_sdk() -> None:
    answers, _ = converse(
        '{"jsonrpc": "2.0", "id": 7, "method": "tools/list"', initialize("2025-06-18"), until=1
    )
    assert answers and answers[-1]["id"] == 1 and "result" in answers[-1]
    assert initialize_answer("not json", name="igg", version="1") is None
    assert (
        initialize_answer(
            '{"jsonrpc": "2.0", "id": true, "method": "initialize", "params": {}}', name="igg", version="1"
        )
        is None
    )


def test_only_the_answer_to_the_early_request_is_dropped() -> None:
    answered = initialize_answer(initialize("2025-06-18", 5), name="igg", version="1")
    early = EarlyAnswer(line="", answered=answered)
    assert not early.drop('{"jsonrpc":"2.0","id":6,"result":{}}')
    assert not early.drop('{"jsonrpc":"2.0","method":"notifications/message","params":{"id":5}}')
    assert early.drop(json.dumps(answered))
    assert not early.drop(json.dumps(answered))  # once
