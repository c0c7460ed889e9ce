"""Benchmark ``igg map-code``: files/s and nodes+edges/s on a generated tree of >= 1,000 source files.

Baseline, measured in the same process on the same files: the bare parse of every file (``ast.parse`` for
Python, tree-sitter for Java). Then each stage of mapping: walk, analysis (parse + facts) in-process and on
a process pool, cross-file linking, and the run (the code agent through the real loop: observation,
validation, apply, one file per iteration), and the whole pipeline end to end.

Usage: ``python scripts/bench_map_code.py [--files 1200] [--jobs N] [--tree DIR]``.
"""

from __future__ import annotations

import argparse
import ast
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gen_code_tree import generate  # noqa: E402

from igg.agents.code.java import parser  # noqa: E402
from igg.agents.code.walk import walk  # noqa: E402
from igg.mapcode import map_code, parse_all  # noqa: E402


def _baseline(files) -> float:
    java = parser()
    started = time.perf_counter()
    for f in files:
        if f.path.endswith(".java"):
            java.parse(f.text.encode("utf-8"))
        else:
            ast.parse(f.text)
    return time.perf_counter() - started


def main() -> int:
    cli = argparse.ArgumentParser(description=__doc__)
    cli.add_argument("--files", type=int, default=1200, help="source files to generate (default 1200)")
    cli.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parse processes for the pool run")
    cli.add_argument("--tree", type=Path, help="map this tree instead of a generated one")
    args = cli.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.tree or Path(tmp) / "tree"
        if args.tree is None:
            generate(root, args.files)
        files = walk([root]).files
        n = len(files)
        if n < 1000:
            print(f"note: {n} files (< 1,000)", file=sys.stderr)
        _baseline(files[:50])  # warm up the parser and the imports
        base = _baseline(files)
        started = time.perf_counter()
        parse_all(files, jobs=1)
        serial = time.perf_counter() - started
        started = time.perf_counter()
        _, used = parse_all(files, jobs=args.jobs)
        pooled = time.perf_counter() - started
        started = time.perf_counter()
        result, summary = map_code([root], agent="code", jobs=1)
        total = time.perf_counter() - started
        elements = result.state.node_count + result.state.edge_count
    secs = summary["seconds"]
    print(f"tree: {n} files ({summary['files']['lines']:,} lines), {result.state.node_count:,} nodes + "
          f"{result.state.edge_count:,} edges; stop: {result.stop_reason} after {result.iterations} iterations; "
          f"{os.cpu_count()} CPUs")
    print(f"baseline  bare parse (ast / tree-sitter)  {n / base:9.0f} files/s   ({base:.2f} s)")
    print(f"analysis  in-process                      {n / serial:9.0f} files/s   ({serial:.2f} s)  "
          f"x{serial / base:.2f} of baseline")
    print(f"analysis  {used} processes                     {n / pooled:9.0f} files/s   ({pooled:.2f} s)  "
          f"x{pooled / base:.2f} of baseline")
    print(f"link      cross-file resolution           {n / secs['link']:9.0f} files/s   ({secs['link']:.2f} s)")
    print(f"run       loop: observe, validate, apply  {n / secs['run']:9.0f} files/s   ({secs['run']:.2f} s)  "
          f"{elements / secs['run']:,.0f} nodes+edges/s")
    print(f"map-code  end to end (walk..run)          {n / total:9.0f} files/s   ({total:.2f} s)  "
          f"{elements / total:,.0f} nodes+edges/s  x{total / base:.1f} of baseline")
    return 0


if __name__ == "__main__":
    sys.exit(main())
