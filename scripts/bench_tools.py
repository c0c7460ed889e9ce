"""What calling IGG as a tool costs per call: apply_actions in process, through the session store, over HTTP
(``igg serve``) and over MCP stdio (``igg mcp``), as ratios against the in-process call measured here.

The store commits every step durably (one ``fdatasync`` of its write-ahead log per step), so no store call can
cost less than one sync of the disk: the last row measures that floor on the same file system.
Target (issue 11): the SQLite store row within 5x the in-memory baseline, durability unchanged. Library log
lines go to standard error (warnings only); the servers' own output is discarded.

    python scripts/bench_tools.py [--calls 300]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from igg.record.logs import configure_logging
from igg.store import SessionStore, StoreSessions
from igg.workspace import MemorySessions, Workspace
from igg.workspace.ops import ApplyInput

ROOT = Path(__file__).resolve().parent.parent
REQUEST = json.loads((ROOT / "fixtures" / "seed_request.json").read_text())
REQUEST["config"]["constraints"] = {"max_nodes": 100_000, "max_edges": 100_000}
REQUEST["config"]["max_iterations"] = 100_000


def actions(i: int) -> list[dict[str, Any]]:
    return [{"type": "ADD_NODE", "label": "Class", "properties": {"name": f"C{i}", "package": "p"}},
            {"type": "ADD_EDGE", "label": "CALLS", "from": {"name": f"C{i}"}, "to": {"name": "C0"}}]


def in_process(calls: int, repo: Any) -> float:
    ws = Workspace(repo)
    sid = ws.start({**REQUEST, "session_id": "bench"})["session_id"]
    ws.apply(ApplyInput(session_id=sid, actions=actions(0)[:1]))
    t0 = time.perf_counter()
    for i in range(1, calls + 1):
        ws.apply(ApplyInput(session_id=sid, actions=actions(i)))
    return (time.perf_counter() - t0) / calls


def over_http(calls: int, store: Path) -> float:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "igg", "serve", "--port", str(port), "--store", str(store)],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
            for _ in range(300):
                try:
                    http.get("/healthz")
                    break
                except httpx.TransportError:
                    time.sleep(0.1)
            http.post("/sessions", json={**REQUEST, "session_id": "bench"}).raise_for_status()
            http.post("/sessions/bench/actions", json={"actions": actions(0)[:1]}).raise_for_status()
            t0 = time.perf_counter()
            for i in range(1, calls + 1):
                http.post("/sessions/bench/actions", json={"actions": actions(i)}).raise_for_status()
            return (time.perf_counter() - t0) / calls
    finally:
        proc.terminate()
        proc.wait()


def over_mcp(calls: int, store: Path) -> float:
    params = StdioServerParameters(command=sys.executable, args=["-m", "igg", "mcp", "--store", str(store)],
                                   cwd=str(ROOT))

    async def scenario() -> float:
        async with Client(params) as client:
            await client.call_tool("start_session", {**REQUEST, "session_id": "bench"})
            await client.call_tool("apply_actions", {"session_id": "bench", "actions": actions(0)[:1]})
            t0 = time.perf_counter()
            for i in range(1, calls + 1):
                result = await client.call_tool("apply_actions", {"session_id": "bench", "actions": actions(i)})
                assert not result.is_error
            return (time.perf_counter() - t0) / calls

    return asyncio.run(scenario())


def fsync_floor(directory: Path, calls: int) -> float:
    """One 4 KiB append and ``fdatasync`` in ``directory``: what a durable commit costs at least on this disk
    (SQLite in WAL mode with ``synchronous=FULL`` syncs the log once per committed step)."""
    path = directory / "fsync-probe"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        t0 = time.perf_counter()
        for _ in range(calls):
            os.write(fd, b"\0" * 4096)
            os.fdatasync(fd)
        return (time.perf_counter() - t0) / calls
    finally:
        os.close(fd)
        path.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=300)
    calls = parser.parse_args().calls
    configure_logging(level="warning")  # library log lines on standard error, never among the figures
    with tempfile.TemporaryDirectory() as tmp:
        base = in_process(calls, MemorySessions())
        rows = [("in process, memory repository (baseline)", base),
                ("in process, SQLite session store", in_process(calls, StoreSessions(SessionStore(Path(tmp) / "a.sqlite")))),
                ("HTTP (igg serve, httpx, store)", over_http(calls, Path(tmp) / "b.sqlite")),
                ("MCP stdio (igg mcp, SDK client, store)", over_mcp(calls, Path(tmp) / "c.sqlite")),
                ("floor: one fdatasync of 4 KiB, same disk", fsync_floor(Path(tmp), calls))]
    print(f"apply_actions with 2 actions, {calls} calls each; per call:")
    for name, seconds in rows:
        print(f"  {name:42s} {seconds * 1000:8.3f} ms  x{seconds / base:7.1f}")
    store = rows[1][1] / base
    print(f"target: SQLite store within 5x in-memory (issue 11): x{store:.1f} {'met' if store <= 5 else 'MISSED'}")


if __name__ == "__main__":
    main()
