"""The MCP handshake answered before the heavy imports: ``igg mcp`` over stdio replies to ``initialize`` at
once.

A client launching ``igg mcp`` sends ``initialize`` and waits for its answer; loading the MCP SDK, pydantic's
models and the workspace takes most of a second, several on a busy machine, and clients time the handshake
out. So the stdio server reads the first line itself (byte by byte, leaving the rest of the stream to the
SDK), and when it is ``initialize`` it answers straight away with what the SDK answers: the negotiated
protocol version (the client's when the SDK speaks it, else the newest handshake version), the server's
capabilities and instructions. The line is then handed to the SDK like any other, so its session is
initialized as usual, and the SDK's own answer to it is dropped (``EarlyAnswer.drop``); were it ever to differ
from the early one, a warning says so (``mcp_handshake_mismatch``) and a test pins that it does not.

This module imports only the standard library: it runs before anything else is loaded.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""The protocol versions the MCP SDK negotiates through ``initialize`` (``mcp_types.version``'s
``HANDSHAKE_PROTOCOL_VERSIONS``; a test keeps the two equal), oldest first."""

CAPABILITIES: dict[str, Any] = {
    "prompts": {"listChanged": False},
    "resources": {"listChanged": False, "subscribe": False},
    "tools": {"listChanged": False},
}
"""What the SDK's server declares for IGG's tools-only server."""

INSTRUCTIONS = (
    "IGG is a validated, bounded graph workspace. start_session with a goal and a schema, observe the graph "
    "(compact markdown within a token budget), apply_actions (each action gets a verdict; rejected ones say "
    "what would pass, so fix and resend them), finish_session, then export_graph."
)
"""The server's instructions to a client's model (MCP ``initialize``)."""

MAX_LINE = 1 << 20
"""The longest first line read here (an ``initialize`` request is a few hundred bytes); past it the line goes
to the SDK unanswered."""


@dataclass(kw_only=True)
class EarlyAnswer:
    """The first line read from stdin, and the answer already written to it (None: the line was no
    ``initialize``, or there was no line)."""

    line: str
    answered: dict[str, Any] | None = None

    def drop(self, text: str) -> bool:
        """Whether ``text`` (a line the SDK writes) is its answer to the request answered early: then it is
        not written a second time."""
        if self.answered is None or f'"id":{json.dumps(self.answered["id"])}' not in text.replace(" ", ""):
            return False
        try:
            message = json.loads(text)
        except ValueError:
            return False
        if (
            not isinstance(message, dict)
            or message.get("id") != self.answered["id"]
            or "result" not in message
        ):
            return False
        if message != self.answered:
            from igg.record.logs import configured_structlog

            configured_structlog().get_logger("igg.mcp").warning(
                "mcp_handshake_mismatch", early=self.answered, sdk=message
            )
        self.answered = None
        return True


def read_first_line(fd: int) -> str:
    """The first line of ``fd`` (without reading past its newline; ``""`` at end of input)."""
    data = bytearray()
    while len(data) < MAX_LINE:
        byte = os.read(fd, 1)
        if not byte:
            break
        data += byte
        if byte == b"\n":
            break
    return data.decode("utf-8", errors="replace")


def initialize_answer(line: str, *, name: str, version: str) -> dict[str, Any] | None:
    """The SDK's answer to ``line`` when it is an ``initialize`` request (None otherwise)."""
    try:
        message = json.loads(line)
    except ValueError:
        return None
    if (
        not isinstance(message, dict)
        or message.get("method") != "initialize"
        or message.get("jsonrpc") != "2.0"
    ):
        return None
    request_id, params = message.get("id"), message.get("params")
    if not isinstance(request_id, int | str) or isinstance(request_id, bool) or not isinstance(params, dict):
        return None
    asked = params.get("protocolVersion")
    if not isinstance(asked, str) or not isinstance(params.get("clientInfo"), dict):
        return None  # malformed: the SDK says what is wrong
    agreed = asked if asked in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1]
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "result": {
            "capabilities": CAPABILITIES,
            "instructions": INSTRUCTIONS,
            "protocolVersion": agreed,
            "serverInfo": {"name": name, "version": version},
        },
    }


def answer_early(*, name: str, version: str, stdin: int = 0, stdout: int = 1) -> EarlyAnswer:
    """Read the first line of ``stdin`` and, when it is ``initialize``, write the answer to ``stdout`` now."""
    line = read_first_line(stdin)
    answer = initialize_answer(line, name=name, version=version)
    if answer is not None:
        os.write(stdout, (json.dumps(answer, separators=(",", ":")) + "\n").encode("utf-8"))
    return EarlyAnswer(line=line, answered=answer)


__all__ = [
    "CAPABILITIES",
    "HANDSHAKE_VERSIONS",
    "INSTRUCTIONS",
    "EarlyAnswer",
    "answer_early",
    "initialize_answer",
]
