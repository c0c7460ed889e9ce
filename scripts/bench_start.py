"""How fast IGG starts: ``import igg``, ``igg --version`` and the MCP server's answer to ``initialize``, each
against a bare ``python -c pass`` measured in the same process (the interpreter's own start-up).

Every figure is the median wall time of ``--runs`` fresh processes (the first run of each is a warm-up and is
not counted). The processes may write their bytecode caches (``PYTHONDONTWRITEBYTECODE`` is dropped for them),
as an installed package has them: compiling IGG and its dependencies from source costs about a second. ``MCP
initialize`` is the time from launching ``igg mcp --memory`` to reading its answer to an ``initialize``
request on standard output (MCP's stdio transport: one JSON-RPC message a line); ``tools/list`` is the time to
the answer of the ``tools/list`` sent right after it. Targets (issue 34): ``import igg`` and ``igg --version``
under 0.3 s, ``initialize`` answered within 1 s; issue 46: within 1 s on a loaded machine too. ``--load N``
keeps N busy processes spinning while it measures (a machine at load N; the figures are then printed beside
those at rest, measured first).

    python scripts/bench_start.py [--runs 7] [--load 4]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench_start", "version": "0"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


def wall(argv: list[str]) -> float:
    """Seconds from launching ``argv`` to its exit."""
    started = time.perf_counter()
    subprocess.run(argv, cwd=ROOT, env=ENV, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def mcp_answers() -> tuple[float, float]:
    """Seconds from launching ``igg mcp --memory`` to its answers to ``initialize`` and to ``tools/list``."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "igg", "mcp", "--memory"],
        cwd=ROOT,
        env=ENV,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(json.dumps(INITIALIZE) + "\n")
        proc.stdin.flush()
        answer = json.loads(proc.stdout.readline())
        initialized = time.perf_counter() - started
        assert answer.get("id") == 1 and "result" in answer, answer
        proc.stdin.write(json.dumps(INITIALIZED) + "\n" + json.dumps(TOOLS_LIST) + "\n")
        proc.stdin.flush()
        answer = json.loads(proc.stdout.readline())
        listed = time.perf_counter() - started
        assert answer.get("id") == 2 and answer["result"]["tools"], answer
        return initialized, listed
    finally:
        proc.stdin.close()
        proc.terminate()
        proc.wait(timeout=10)


def median(measure: Callable[[], float], runs: int) -> float:
    measure()  # warm-up: the file system cache, the bytecode
    return statistics.median(measure() for _ in range(runs))


BUSY = "import time\nend = time.monotonic() + 600\nwhile time.monotonic() < end:\n    pass\n"
"""A process that keeps one core busy (for at most 10 minutes, should the script be killed)."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7, help="processes per figure (median; default 7)")
    parser.add_argument("--load", type=int, default=0, help="also measure with N busy processes running")
    args = parser.parse_args()
    print("at rest:")
    table(args.runs)
    if args.load:
        busy = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(args.load)]
        try:
            time.sleep(1)
            print(f"\nwith {args.load} busy processes (load {args.load} beside the measured one):")
            table(args.runs)
        finally:
            for proc in busy:
                proc.kill()
                proc.wait()


def table(runs: int) -> None:
    """The figures, each the median of ``runs`` fresh processes."""
    python = sys.executable
    bare = median(lambda: wall([python, "-c", "pass"]), runs)
    mcp_runs = [mcp_answers() for _ in range(runs + 1)][1:]
    rows = [
        ("python -c pass (baseline)", bare),
        ("import igg", median(lambda: wall([python, "-c", "import igg"]), runs)),
        ("igg --version", median(lambda: wall([python, "-m", "igg", "--version"]), runs)),
        ("MCP initialize answered", statistics.median(r[0] for r in mcp_runs)),
        ("MCP tools/list answered", statistics.median(r[1] for r in mcp_runs)),
    ]
    print(f"{'':28} {'seconds':>8} {'over baseline':>14}   (median of {runs} runs)")
    for name, seconds in rows:
        print(f"{name:28} {seconds:8.3f} {seconds - bare:14.3f}")


if __name__ == "__main__":
    main()
