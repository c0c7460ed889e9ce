"""Big inputs: time, peak memory and time to first output of ``igg run`` on a huge request, against ``igg
validate`` of the same file (the baseline: reading and checking the JSON is the least any command does).

Generates (in a temporary directory) a request whose ``context_data`` holds ``--files`` file sections (the
issue's case: 172 MB, 4 million file markers), then runs, each as its own process:

* ``igg validate REQUEST``                       — the baseline
* ``igg run REQUEST --agent script:T --no-store`` — a scripted agent walking the first five chunks
* ``igg run REQUEST --agent auto --no-store``     — the code agent (the markers name .java files), which reads
  the context as the run goes (``igg.agents.streaming``): with ``--classes`` every file declares a class, and
  the five iterations need the first batch of files only; without, the files hold no declaration, nothing
  can be proposed, and it reads every file (``--no-auto`` skips it)

and prints wall time, CPU time (user + system, from wait4: fairer than wall time on a shared machine), peak
RSS (the process's own) and when the first line reached stderr, each with its ratio to the baseline.

    python scripts/bench_context.py                 # 4,000,000 files (~170 MB); several minutes
    python scripts/bench_context.py --files 200000  # a quick look
    python scripts/bench_context.py --files 1000000 --classes
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


def write_request(path: Path, files: int, classes: bool = False) -> int:
    """A request over the specification's schema whose context is ``files`` small file sections (each
    declaring a class with ``classes``)."""
    head = {
        "session_id": "big",
        "goal_prompt": "Map the classes of these files.",
        "config": {
            "max_iterations": 5,
            "constraints": {"max_nodes": 50, "max_edges": 100},
            "schema": {
                "node_types": ["Class", "Interface", "Method", "DatabaseTable"],
                "edge_types": ["CALLS", "IMPLEMENTS", "READS_FROM", "WRITES_TO"],
            },
        },
    }
    if classes:
        body = "".join(
            f"// File: src/p{i % 997}/F{i}.java\npackage p{i % 997};\npublic class F{i} {{ }}\n"
            for i in range(files)
        )
    else:
        body = "".join(f"// File: src/p{i % 997}/F{i}.java\n// note {i}\n" for i in range(files))
    payload = json.dumps({**head, "context_data": body})
    path.write_text(payload, encoding="utf-8")
    return len(payload.encode("utf-8"))


def measure(argv: list[str], cwd: Path) -> dict[str, float | int]:
    """Run ``igg ARGV``; its exit code, wall seconds, peak RSS (MB) and seconds to its first stderr line."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "IGG_"))}
    env["IGG_HOME"] = str(cwd / "home")
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "igg", *argv],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
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
    return {
        "exit": proc.returncode,
        "seconds": round(wall, 2),
        "cpu": round(usage.ru_utime + usage.ru_stime, 2),
        "rss_mb": round(usage.ru_maxrss / 1024, 1),
        "first_output_s": round(first if first is not None else wall, 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--files", type=int, default=4_000_000, help="file markers in the context")
    parser.add_argument("--no-auto", action="store_true", help="skip the --agent auto run")
    parser.add_argument(
        "--classes", action="store_true", help="every file declares a class (else a comment only)"
    )
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="igg-bench-context-") as tmp:
        root = Path(tmp)
        request = root / "big.json"
        size = write_request(request, options.files, options.classes)
        transcript = root / "t.jsonl"
        transcript.write_text(
            "\n".join(
                json.dumps(
                    {
                        "reasoning": "r",
                        "actions": [{"type": "ADD_NODE", "label": "Class", "properties": {"name": f"C{i}"}}],
                    }
                )
                for i in range(5)
            )
            + "\n"
        )
        print(
            f"request: {size / 1e6:.1f} MB, {options.files:,} file markers"
            + (", each file a class" if options.classes else ", no declarations")
        )
        base = measure(["validate", str(request)], root)
        runs = {
            "validate (baseline)": base,
            "run --agent script": measure(
                ["run", str(request), "--agent", f"script:{transcript}", "--no-store", "-v"], root
            ),
        }
        if not options.no_auto:
            runs["run --agent auto"] = measure(
                ["run", str(request), "--agent", "auto", "--no-store", "-v"], root
            )
        print(
            f"{'command':<22} {'exit':>4} {'seconds':>9} {'x base':>7} {'CPU s':>8} {'x base':>7} "
            f"{'peak RSS MB':>12} {'x base':>7} {'first output s':>15}"
        )
        for name, r in runs.items():
            print(
                f"{name:<22} {r['exit']:>4} {r['seconds']:>9.2f} {r['seconds'] / base['seconds']:>7.2f} "
                f"{r['cpu']:>8.2f} {r['cpu'] / base['cpu']:>7.2f} "
                f"{r['rss_mb']:>12.1f} {r['rss_mb'] / base['rss_mb']:>7.2f} {r['first_output_s']:>15.2f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
