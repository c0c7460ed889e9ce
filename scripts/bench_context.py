"""Big inputs: time, peak memory and time to first output of ``igg run`` on a huge request, against ``igg
validate`` of the same file (the baseline: reading and checking the JSON is the least any command does).

Generates (in a temporary directory) a request whose ``context_data`` holds ``--files`` file sections (the
issue's case: 172 MB, 4 million file markers), then runs, each as its own process:

* ``igg validate REQUEST``                       — the baseline
* ``igg run REQUEST --agent script:T --no-store`` — a scripted agent walking the first five chunks
* ``igg run REQUEST --agent auto --no-store``     — the code agent (the markers name .java files): it must
  read and parse every file, so its time is the static analysis of 4 million files (``--no-auto`` skips it)

and prints wall time, peak RSS (the process's own, from wait4) and when the first line reached stderr, each
with its ratio to the baseline.

    python scripts/bench_context.py                 # 4,000,000 files (~170 MB); several minutes
    python scripts/bench_context.py --files 200000  # a quick look
"""

from __future__ import annotations

import argparse
import json
import os
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def write_request(path: Path, files: int) -> int:
    """A request over the specification's schema whose context is ``files`` small file sections."""
    head = {
        "session_id": "big", "goal_prompt": "Map the classes of these files.",
        "config": {"max_iterations": 5, "constraints": {"max_nodes": 50, "max_edges": 100},
                   "schema": {"node_types": ["Class", "Interface", "Method", "DatabaseTable"],
                              "edge_types": ["CALLS", "IMPLEMENTS", "READS_FROM", "WRITES_TO"]}},
    }
    body = "".join(f"// File: src/p{i % 997}/F{i}.java\n// note {i}\n" for i in range(files))
    payload = json.dumps({**head, "context_data": body})
    path.write_text(payload, encoding="utf-8")
    return len(payload.encode("utf-8"))


def measure(argv: list[str], cwd: Path) -> dict[str, float | int]:
    """Run ``igg ARGV``; its exit code, wall seconds, peak RSS (MB) and seconds to its first stderr line."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "IGG_"))}
    env["IGG_HOME"] = str(cwd / "home")
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "igg", *argv], cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    assert proc.stderr is not None
    first = None
    while True:
        ready, _, _ = select.select([proc.stderr], [], [], 0.5)
        if ready:
            line = proc.stderr.readline()
            if not line:
                break
            if first is None:
                first = time.perf_counter() - started
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - started
    return {"exit": proc.returncode, "seconds": round(wall, 2), "rss_mb": round(usage.ru_maxrss / 1024, 1),
            "first_output_s": round(first if first is not None else wall, 2)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=4_000_000, help="file markers in the context")
    parser.add_argument("--no-auto", action="store_true", help="skip the --agent auto run")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="igg-bench-context-") as tmp:
        root = Path(tmp)
        request = root / "big.json"
        size = write_request(request, options.files)
        transcript = root / "t.jsonl"
        transcript.write_text("\n".join(json.dumps({"reasoning": "r", "actions": [
            {"type": "ADD_NODE", "label": "Class", "properties": {"name": f"C{i}"}}]}) for i in range(5)) + "\n")
        print(f"request: {size / 1e6:.1f} MB, {options.files:,} file markers")
        base = measure(["validate", str(request)], root)
        runs = {
            "validate (baseline)": base,
            "run --agent script": measure(["run", str(request), "--agent", f"script:{transcript}", "--no-store",
                                           "-v"], root),
        }
        if not options.no_auto:
            runs["run --agent auto"] = measure(["run", str(request), "--agent", "auto", "--no-store", "-v"], root)
        print(f"{'command':<22} {'exit':>4} {'seconds':>9} {'x base':>7} {'peak RSS MB':>12} {'x base':>7} "
              f"{'first output s':>15}")
        for name, r in runs.items():
            print(f"{name:<22} {r['exit']:>4} {r['seconds']:>9.2f} {r['seconds'] / base['seconds']:>7.2f} "
                  f"{r['rss_mb']:>12.1f} {r['rss_mb'] / base['rss_mb']:>7.2f} {r['first_output_s']:>15.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
