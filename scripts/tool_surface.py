"""What IGG's tool surface costs a model's context: the MCP ``tools/list`` answer of a real ``igg mcp`` server
and the OpenAI function definitions (``igg tools``), in bytes of compact JSON (``json.dumps(...,
separators=(",", ":"))``, UTF-8), per tool and in all. Bytes stand in for tokens (about 4 bytes a token for
this JSON; tokenizer files cannot be downloaded here). Targets (issue 34): MCP <= 20,000 bytes, OpenAI <=
16,000 (``tests/integration/test_tool_surface.py`` pins them).

    python scripts/tool_surface.py
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from igg.workspace.toolschema import compact_size, openai_tools

ROOT = Path(__file__).resolve().parent.parent
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "tool_surface", "version": "0"},
    },
}


def mcp_tool_list() -> list[dict[str, Any]]:
    """The ``tools`` of ``igg mcp --memory``'s answer to ``tools/list`` (over stdio, as a client sees it)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "igg", "mcp", "--memory"],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(json.dumps(INITIALIZE) + "\n")
        proc.stdin.flush()
        proc.stdout.readline()
        proc.stdin.write(
            json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"})
            + "\n"
            + json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
            + "\n"
        )
        proc.stdin.flush()
        tools: list[dict[str, Any]] = json.loads(proc.stdout.readline())["result"]["tools"]
        return tools
    finally:
        proc.stdin.close()
        proc.terminate()
        proc.wait(timeout=10)


def main() -> None:
    mcp = {t["name"]: t for t in mcp_tool_list()}
    openai = {t["function"]["name"]: t for t in openai_tools()}
    print(f"{'tool':16} {'MCP bytes':>10} {'OpenAI bytes':>13}")
    for name in mcp:
        print(f"{name:16} {compact_size(mcp[name]):10,} {compact_size(openai[name]):13,}")
    print(f"{'all':16} {compact_size(list(mcp.values())):10,} {compact_size(list(openai.values())):13,}")


if __name__ == "__main__":
    main()
