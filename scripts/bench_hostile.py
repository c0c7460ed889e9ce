"""Benchmark: what each attack class of issue 47 costs a live ``igg serve``, in CPU per 10 kB of body and
memory.

Each attack runs against a fresh server (default limits, an SQLite store in a temporary folder): the session
it needs is created first (not measured), then the attack's requests are sent and the server process's CPU
time (``/proc/PID/stat``: user + system) and its peak resident memory (``VmHWM``) are read before and after.
Printed per attack: the bytes of the requests sent, the CPU they cost (ms, and ms per 10 kB of body), and how
far the peak memory rose beyond what the server held once the session was there. Targets: at most 100 ms of
CPU per 10 kB of body and 256 MB of memory beyond the session's own graph. A session created with a big body
(the 1 MB line) counts that body and its creation too.

    python scripts/bench_hostile.py [--only NAME]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_ms(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / TICKS  # utime + stime


def peak_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    proc: subprocess.Popen[bytes]
    http: httpx.Client

    def post(self, path: str, body: Any, sent: list[int]) -> httpx.Response:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        sent.append(len(data))
        return self.http.post(path, content=data, headers={"content-type": "application/json"})


def serve(tmp: Path) -> Server:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "IGG_API_TOKEN"))}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "igg",
            "serve",
            "--port",
            str(port),
            "--store",
            str(tmp / "s.sqlite"),
            "--output-dir",
            str(tmp / "out"),
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    http = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=600)
    deadline = time.monotonic() + 90
    while True:
        try:
            if http.get("/healthz").status_code == 200:
                return Server(proc, http)
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline or proc.poll() is not None:
            raise SystemExit("igg serve did not start")
        time.sleep(0.1)


# ---- the attacks: (set up a session, send the attack) ------------------------------------------------------


def session(session_id: str, **extra: Any) -> dict[str, Any]:
    config = {
        "max_iterations": 1000,
        "constraints": {"max_nodes": 10_000, "max_edges": 20_000, "max_actions_per_response": 500},
        "schema": {"node_types": ["Module", "Class"], "edge_types": ["IMPORTS", "CALLS"]},
    }
    config.update(extra.pop("config", {}))
    return {"session_id": session_id, "goal_prompt": "attack", **extra, "config": config}


def ladder(ends: int = 60, middle: int = 200) -> dict[str, Any]:
    names = (
        [f"d.{i:03}" for i in range(ends)]
        + [f"m.{i:03}" for i in range(middle)]
        + [f"u.{i:03}" for i in range(ends)]
    )
    pairs = (
        [(f"d.{i:03}", "m.000") for i in range(ends)]
        + [(f"m.{i:03}", f"m.{i + 1:03}") for i in range(middle - 1)]
        + [(f"m.{middle - 1:03}", f"u.{i:03}") for i in range(ends)]
    )
    ids = {n: f"n{i}" for i, n in enumerate(names)}
    return {
        "nodes": [{"id": ids[n], "type": "Module", "properties": {"name": n}} for n in names],
        "edges": [
            {"id": f"e{k}", "type": "IMPORTS", "from": ids[a], "to": ids[b], "properties": {}}
            for k, (a, b) in enumerate(pairs)
        ],
    }


def grid(n: int = 2000) -> dict[str, Any]:
    """n modules x.i and y.i, each x importing ten y: wide list rules have many pairs to judge."""
    nodes = [{"id": f"x{i}", "type": "Module", "properties": {"name": f"x{i % 64}.m{i}"}} for i in range(n)]
    nodes += [{"id": f"y{i}", "type": "Module", "properties": {"name": f"y{i % 64}.m{i}"}} for i in range(n)]
    edges = [
        {"id": f"e{i}_{k}", "type": "IMPORTS", "from": f"x{i}", "to": f"y{(i * 7 + k) % n}", "properties": {}}
        for i in range(n)
        for k in range(5)
    ]
    return {"nodes": nodes, "edges": edges}


Attack = Callable[[Server, list[int]], str]
"""Sends the attack's requests (their sizes appended to the list); returns what the answer said, briefly."""


def check_chains(server: Server, sent: list[int]) -> str:
    rule = {"name": "d-not-u", "kind": "forbidden", "from": "d", "to": "u", "transitive": True}
    body = server.post("/sessions/s/check", {"rules": [rule]}, sent).json()
    return f"{len(body['violations'])} violations, truncated={body['truncated']}"


def check_wide_lists(server: Server, sent: list[int]) -> str:
    globs_x, globs_y = [f"x{i}.*" for i in range(64)], [f"y{i}.*" for i in range(64)]
    answers = []
    for transitive in (False, True):
        rule = {"name": "wide", "kind": "forbidden", "from": globs_x, "to": globs_y, "transitive": transitive}
        body = server.post("/sessions/s/check", {"rules": [rule]}, sent).json()
        answers.append(f"{len(body['violations'])} violations, truncated={body['truncated']}")
    refused = server.post(
        "/sessions/s/check",
        {"rules": [{"name": "w", "kind": "forbidden", "to": "y", "from": [f"x{i}*" for i in range(3000)]}]},
        sent,
    )
    return "; ".join(answers) + f"; 3,000 globs: {refused.status_code}"


def check_wide_layers(server: Server, sent: list[int]) -> str:
    # each sibling picks a node (one picking none is refused before any pair is made): all but the first of a
    # layer end up empty, and every pair of parts still counts
    layers = [
        {"siblings": [f"d.{i % 60:03}" + "*" * (j + 64 * (i // 60)) for j in range(64)]} for i in range(64)
    ]
    body = server.post(
        "/sessions/s/check",
        {"rules": [{"name": "wide", "kind": "layers", "layers": layers, "transitive": True}]},
        sent,
    ).json()
    return f"{len(body['violations'])} violations, truncated={body['truncated']}"


def check_code_context(server: Server, sent: list[int]) -> str:
    files = [
        (
            f"mod{i}.py",
            "".join(f"import mod{(i + k) % 400}\n" for k in range(5))
            + "".join(f"def f{j}(x):\n    return x + {j}\n" for j in range(150)),
        )
        for i in range(400)
    ]
    nodes = [
        {"id": f"n{i}", "type": "Module", "properties": {"name": f"mod{i}", "path": p}}
        for i, (p, _) in enumerate(files)
    ]
    edges = [
        {"id": f"e{i}", "type": "IMPORTS", "from": f"n{i}", "to": f"n{(i + 1) % 400}", "properties": {}}
        for i in range(400)
    ]
    context = "".join(f"# File: {p}\n{t}" for p, t in files)
    server.post(
        "/sessions", session("code", context_data=context, seed_data={"nodes": nodes, "edges": edges}), sent
    )
    rule = {"rules": [{"name": "no-cycles", "kind": "acyclic"}]}
    answers = [server.post("/sessions/code/check", rule, sent).json() for _ in range(10)]
    return f"10 checks, {len(answers[-1]['violations'])} violation(s) each"


def check_deep_rule(server: Server, sent: list[int]) -> str:
    body = (
        '{"rules": [{"name": "deep", "kind": "forbidden", "to": "u", "from": '
        + "[" * 50_000
        + '"d"'
        + "]" * 50_000
        + "}]}"
    ).encode()
    return str(server.post("/sessions/s/check", body, sent).status_code)


def long_line(server: Server, sent: list[int]) -> str:
    line = "let a=1;" * 250_000  # 2 MB, one line
    server.post("/sessions", session("line", context_data=line, config={"grounding": "warn"}), sent)
    action = {
        "type": "ADD_NODE",
        "label": "Class",
        "properties": {"name": "A"},
        "evidence": ["let a=1;let b=2;let a=1;"],
    }
    body = server.post("/sessions/line/actions", {"reasoning": "", "actions": [action]}, sent).json()
    return str(body["verdicts"][0].get("warning") or "accepted")


def near_misses(server: Server, sent: list[int]) -> str:
    near = "the quick brown cow jumps over a lazy pig. " * 11
    actions = [
        {
            "type": "ADD_NODE",
            "label": "Class",
            "properties": {"name": f"C{i}"},
            "evidence": [f"{near}{i}.{k}" for k in range(4)],
        }
        for i in range(500)
    ]
    body = server.post("/sessions/s/actions", {"reasoning": "", "actions": actions}, sent).json()
    spent = sum("budget for approximate matching is spent" in v.get("message", "") for v in body["verdicts"])
    return f"{spent} of {len(body['verdicts'])} quotes past the fuzzy budget"


def absent_quotes(server: Server, sent: list[int]) -> str:
    import random
    import string

    rng = random.Random(1)
    words = ["".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 9))) for _ in range(5000)]
    context = " ".join(rng.choice(words) for _ in range(1_200_000))[:7_000_000]
    server.post("/sessions", session("big", context_data=context, config={"grounding": "warn"}), sent)
    actions = [
        {
            "type": "ADD_NODE",
            "label": "Class",
            "properties": {"name": f"C{i}"},
            "evidence": [f"zq{4 * i + k} xw{4 * i + k}" for k in range(4)],
        }
        for i in range(500)
    ]
    body = server.post("/sessions/big/actions", {"reasoning": "", "actions": actions}, sent).json()
    cut = sum("search budget" in v.get("message", "") for v in body["verdicts"])
    return f"{cut} of {len(body['verdicts'])} quotes past the search budget"


def loose_spans(server: Server, sent: list[int]) -> str:
    actions = [
        {
            "type": "ADD_NODE",
            "label": "Class",
            "properties": {"name": f"C{i}"},
            "evidence": [{"chunk": True, "start": False, "end": "3"}],
        }
        for i in range(500)
    ]
    body = server.post("/sessions/s/actions", {"reasoning": "", "actions": actions}, sent).json()
    return f"{sum(v.get('code') == 'INVALID_PROPERTY' for v in body['verdicts'])} refused"


def module_without_path(server: Server, sent: list[int]) -> str:
    rule = {"name": "r", "kind": "forbidden", "from": "d", "to": "m"}
    return str(server.post("/sessions/s/check", {"rules": [rule]}, sent).status_code)


NEAR_CONTEXT = "the quick brown fox jumps over the lazy dog. " * 4400  # one 200,000-character chunk
ATTACKS: dict[str, tuple[dict[str, Any] | None, Attack]] = {
    "check: transitive chains (60 x 60 pairs, 201 hops)": (session("s", seed_data=ladder()), check_chains),
    "check: 64 x 64 globs, direct and transitive, 4,000 modules": (
        session("s", seed_data=grid()),
        check_wide_lists,
    ),
    "check: 64 layers of 64 siblings (8 million pairs)": (
        session("s", seed_data=ladder()),
        check_wide_layers,
    ),
    "check: 10 checks of a session with 1.9 MB of code (with it)": (None, check_code_context),
    "check: a rule nested 50,000 deep": (session("s", seed_data=ladder(2, 2)), check_deep_rule),
    "check: Module without path": (session("s", seed_data=ladder(2, 2)), module_without_path),
    "evidence: a 2 MB one-line context": (None, long_line),
    "evidence: 2,000 near-miss quotes, 200k-char chunk": (
        session(
            "s",
            context_data=NEAR_CONTEXT,
            config={"grounding": "required", "context": {"chunk_tokens": 60_000}},
        ),
        near_misses,
    ),
    "evidence: 2,000 absent quotes, a 7 MB context (with it)": (None, absent_quotes),
    "evidence: 500 spans of booleans and strings": (session("s", context_data=NEAR_CONTEXT), loose_spans),
}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", help="run the attacks whose name holds this text")
    args = parser.parse_args()
    print(f"{'attack':58} {'body kB':>9} {'CPU ms':>9} {'ms/10kB':>8} {'peak +MB':>9}  answer")
    for name, (setup, attack) in ATTACKS.items():
        if args.only and args.only not in name:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            server = serve(Path(tmp))
            try:
                if setup is not None:
                    created = server.post("/sessions", setup, [])
                    assert created.status_code == 201, created.text
                time.sleep(0.2)
                pid = server.proc.pid
                cpu0, peak0 = cpu_ms(pid), peak_mb(pid)
                sent: list[int] = []
                answer = attack(server, sent)
                cpu, peak = cpu_ms(pid) - cpu0, peak_mb(pid) - peak0
                assert server.http.get("/healthz").status_code == 200
            finally:
                server.http.close()
                server.proc.terminate()
                server.proc.wait(10)
        body = sum(sent) / 1000
        print(f"{name:58} {body:9.1f} {cpu:9.0f} {cpu / max(body / 10, 1):8.1f} {peak:9.1f}  {answer}")


if __name__ == "__main__":
    main()
