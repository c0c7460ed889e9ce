"""What calling IGG as a tool costs per call: apply_actions in process, through the session store, over HTTP
(``igg serve``) and over MCP stdio (``igg mcp``), as ratios against the in-process call measured here.

The store commits every step durably (one ``fdatasync`` of its write-ahead log per step), so no store call can
cost less than one sync of the disk: the last row measures that floor on the same file system. Target (issue
11): the SQLite store row within 5x the in-memory baseline, durability unchanged. Issue 35: the PostgreSQL
store (a server of its own started here with PostgreSQL's durable defaults, or ``--postgres URL``) within 10x;
and under load, 20 clients (a session each) over 3 ``igg serve`` replicas on PostgreSQL, throughput and p99
latency beside one replica on SQLite, in the same run. Library log lines go to standard error (warnings only);
the servers' own output is discarded.

    python scripts/bench_tools.py [--calls 300] [--postgres URL] [--load-applies 50]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
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
    return [
        {"type": "ADD_NODE", "label": "Class", "properties": {"name": f"C{i}", "package": "p"}},
        {"type": "ADD_EDGE", "label": "CALLS", "from": {"name": f"C{i}"}, "to": {"name": "C0"}},
    ]


def in_process(calls: int, repo: Any) -> float:
    ws = Workspace(repo)
    sid = ws.start({**REQUEST, "session_id": "bench"})["session_id"]
    ws.apply(ApplyInput(session_id=sid, actions=actions(0)[:1]))
    t0 = time.perf_counter()
    for i in range(1, calls + 1):
        ws.apply(ApplyInput(session_id=sid, actions=actions(i)))
    return (time.perf_counter() - t0) / calls


def serve(store: Path | str) -> tuple[subprocess.Popen[bytes], str]:
    """An ``igg serve`` on ``store`` answering ``/healthz``: the process and its base URL."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [sys.executable, "-m", "igg", "serve", "--port", str(port), "--store", str(store)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            httpx.get(f"{base}/healthz", timeout=1)
            break
        except httpx.TransportError:
            time.sleep(0.1)
    return proc, base


def under_load(stores: list[Path | str], clients: int, applies: int) -> tuple[float, float]:
    """``clients`` threads, a session each, spread over one ``igg serve`` per store location: applies per
    second and the p99 latency of one apply (seconds)."""
    servers = [serve(store) for store in stores]
    latencies: list[float] = []
    lock = threading.Lock()

    def client(k: int) -> None:
        base = servers[k % len(servers)][1]
        with httpx.Client(base_url=base, timeout=60) as http:
            http.post("/sessions", json={**REQUEST, "session_id": f"load-{k}"}).raise_for_status()
            http.post(f"/sessions/load-{k}/actions", json={"actions": actions(0)[:1]}).raise_for_status()
            mine = []
            for i in range(1, applies + 1):
                t = time.perf_counter()
                http.post(f"/sessions/load-{k}/actions", json={"actions": actions(i)}).raise_for_status()
                mine.append(time.perf_counter() - t)
            with lock:
                latencies.extend(mine)

    try:
        threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.perf_counter() - t0
    finally:
        for proc, _ in servers:
            proc.terminate()
            proc.wait()
    latencies.sort()
    return len(latencies) / elapsed, latencies[int(len(latencies) * 0.99) - 1]


def over_http(calls: int, store: Path) -> float:
    proc, base = serve(store)
    try:
        with httpx.Client(base_url=base, timeout=30) as http:
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
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "igg", "mcp", "--store", str(store)], cwd=str(ROOT)
    )

    async def scenario() -> float:
        async with Client(params) as client:
            await client.call_tool("start_session", {**REQUEST, "session_id": "bench"})
            await client.call_tool("apply_actions", {"session_id": "bench", "actions": actions(0)[:1]})
            t0 = time.perf_counter()
            for i in range(1, calls + 1):
                result = await client.call_tool(
                    "apply_actions", {"session_id": "bench", "actions": actions(i)}
                )
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
    parser.add_argument("--postgres", help="a PostgreSQL URL to use (default: start a durable server here)")
    parser.add_argument(
        "--load-applies", type=int, default=50, help="applies per client under load (0 skips it)"
    )
    args = parser.parse_args()
    calls = args.calls
    configure_logging(level="warning")  # library log lines on standard error, never among the figures
    with tempfile.TemporaryDirectory() as tmp, postgres(args.postgres) as pg:
        base = in_process(calls, MemorySessions())
        rows = [
            ("in process, memory repository (baseline)", base),
            (
                "in process, SQLite session store",
                in_process(calls, StoreSessions(SessionStore(Path(tmp) / "a.sqlite"))),
            ),
            ("HTTP (igg serve, httpx, store)", over_http(calls, Path(tmp) / "b.sqlite")),
            ("MCP stdio (igg mcp, SDK client, store)", over_mcp(calls, Path(tmp) / "c.sqlite")),
            ("floor: one fdatasync of 4 KiB, same disk", fsync_floor(Path(tmp), calls)),
        ]
        if pg is not None:
            rows.insert(
                2,
                ("in process, PostgreSQL session store", in_process(calls, StoreSessions(SessionStore(pg)))),
            )
        print(f"apply_actions with 2 actions, {calls} calls each; per call:")
        for name, seconds in rows:
            print(f"  {name:42s} {seconds * 1000:8.3f} ms  x{seconds / base:7.1f}")
        store = rows[1][1] / base
        print(
            f"target: SQLite store within 5x in-memory (issue 11): x{store:.1f}"
            f" {'met' if store <= 5 else 'MISSED'}"
        )
        if pg is not None:
            ratio = rows[2][1] / base
            print(
                f"target: PostgreSQL store within 10x in-memory (issue 35): x{ratio:.1f} "
                f"{'met' if ratio <= 10 else 'MISSED'}"
            )
        if args.load_applies and pg is not None:
            print(f"under load: 20 clients (a session each), {args.load_applies} applies each:")
            for name, stores in (
                ("1 replica, SQLite", [Path(tmp) / "load.sqlite"]),
                ("3 replicas, PostgreSQL", [pg] * 3),
            ):
                rate, p99 = under_load(stores, 20, args.load_applies)
                print(f"  {name:24s} {rate:8.1f} applies/s  p99 {p99 * 1000:8.1f} ms")


@contextlib.contextmanager
def postgres(url: str | None) -> Iterator[str | None]:
    """The PostgreSQL store to measure: ``url``, or a durable server started for the run (None when it cannot
    start here: those rows are left out, saying why)."""
    if url is not None:
        yield url
        return
    sys.path.insert(0, str(ROOT))
    from tests.support.postgres import start_postgres, stop_postgres

    try:
        server = start_postgres(durable=True)
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
        print(f"(no PostgreSQL rows: {exc})", file=sys.stderr)
        yield None
        return
    try:
        yield server.url()
    finally:
        stop_postgres(server)


if __name__ == "__main__":
    main()
