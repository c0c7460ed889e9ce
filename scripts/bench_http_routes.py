"""What reading HTTP routes and requests adds to map-code's CPU, measured in the same run.

Each tree is read (walk, parse and facts, link) four times in one process, the collector paused as map-code
pauses it; the CPU spent in the HTTP reading (each language's hint test and ``http_facts``, and the join of
``igg.codemap.routes``) is timed inside that run and printed as a share of the rest. Trees: a generated one
(``--files``, default 1,000 Java and Python files, no route), ``--ts-copies`` copies of the TypeScript
fixtures (ky and superstruct: no route, ky calls ``fetch``), ``--go-copies`` copies of the Go fixtures (chi
and uuid: chi's own routes), or the trees given.

Usage: ``python scripts/bench_http_routes.py [--files 1000] [--ts-copies 8] [--go-copies 4] [TREE...]``.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gen_code_tree import generate  # noqa: E402

import igg.codemap.go.analyze as go_analyze  # noqa: E402
import igg.codemap.java.analyze as java_analyze  # noqa: E402
import igg.codemap.link as link_module  # noqa: E402
import igg.codemap.python.analyze as python_analyze  # noqa: E402
import igg.codemap.typescript.analyze as ts_analyze  # noqa: E402
from igg.act.apply import collector_paused  # noqa: E402
from igg.codemap.walk import walk  # noqa: E402
from igg.mapping.prepare import parse_all  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
spent = [0.0]


def timed(fn: Callable[..., Any]) -> Callable[..., Any]:
    def run(*args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            spent[0] += time.process_time() - start

    return run


def instrument() -> None:
    for module in (python_analyze, ts_analyze, go_analyze, java_analyze):
        module.http_facts = timed(module.http_facts)  # type: ignore[attr-defined]
        module.hinted = timed(module.hinted)  # type: ignore[attr-defined]
    link_module.routes.join = timed(link_module.routes.join)  # type: ignore[method-assign]


def once(root: Path) -> tuple[float, float, int]:
    files = walk([root]).files
    spent[0] = 0.0
    start = time.process_time()
    with collector_paused():
        facts = parse_all(files, jobs=1)[0]
        link_module.link(facts)
    return time.process_time() - start, spent[0], sum(1 for f in facts if f.http)


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    cli.add_argument("trees", nargs="*", type=Path)
    cli.add_argument("--files", type=int, default=1000)
    cli.add_argument("--ts-copies", type=int, default=8)
    cli.add_argument("--go-copies", type=int, default=4)
    args = cli.parse_args()
    instrument()
    tmp = Path(tempfile.mkdtemp())
    try:
        trees = [(str(t), t) for t in args.trees]
        if not trees:
            generate(tmp / "gen", files=args.files)
            for i in range(args.ts_copies):
                shutil.copytree(ROOT / "fixtures/code/typescript", tmp / "ts" / f"c{i}")
            for i in range(args.go_copies):
                shutil.copytree(ROOT / "fixtures/code/go", tmp / "go" / f"c{i}")
            trees = [
                (f"generated Java and Python, {args.files} files", tmp / "gen"),
                (f"TypeScript fixtures x{args.ts_copies}", tmp / "ts"),
                (f"Go fixtures x{args.go_copies}", tmp / "go"),
            ]
        for label, root in trees:
            once(root)  # warm: imports, grammars, queries
            total, http, files = min((once(root) for _ in range(3)), key=lambda r: r[0])
            print(
                f"{label}: {files} files with HTTP facts; CPU {total:.2f}s, of which HTTP {http:.3f}s: "
                f"+{http / (total - http):.1%}"
            )
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
