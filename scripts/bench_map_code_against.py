"""``igg map-code``'s CPU on the benchmark trees against another checkout's (an older commit), same trees.

The trees are ``bench_map_code.py``'s: the virtualenv's largest package (openai here), a generated tree of
1,000 files in four languages, 25 copies of the TypeScript fixtures and 10 of the Go ones (each copy its own
module). Each map runs in a process of its own, with ``PYTHONPATH`` set to the checkout whose code it measures
(this one, or ``--base``, e.g. a ``git worktree add --detach /tmp/base COMMIT``), the hash seed fixed, one
warm-up map first (imports, lazy tables), then ``--maps`` timed maps of ``igg.service.map_code`` with the
collector's garbage collected before each; the two checkouts alternate, ``--rounds`` times, so load drifts hit
both. It prints each map's CPU seconds (all processes), the phases map-code reports, the edges drawn, and per
tree the medians and the ratio new/base (the issue's line: within 1.15x).

``--store`` maps each tree into a new SQLite store with its facts cache beside it, as ``igg map-code --store``
does (the facts and the names they mention kept, the step's mutations and the finalize snapshot written).

Usage: ``python scripts/bench_map_code_against.py --base DIR [--rounds 3] [--maps 2] [--tree DIR ...]
[--store]``.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_map_code import go_tree, largest_package, typescript_tree  # noqa: E402
from gen_code_tree import generate  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
ONE = """
import gc, os, sys
from pathlib import Path
from igg.service import map_code

def cpu():
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system

tree, maps, stored = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "store"

def one(n):
    if not stored:
        return map_code([tree], agent="code", jobs=1)
    from igg.codemap.cache import FactsCache
    store = Path(sys.argv[4]) / f"map{n}.sqlite"
    cache = FactsCache(Path(f"{store}.codefacts"))
    try:
        return map_code([tree], agent="code", jobs=1, store=store, cache=cache)
    finally:
        cache.close()

one(0)
spent = []
for n in range(maps):
    gc.collect()
    started = cpu()
    result, summary = one(n + 1)
    spent.append(cpu() - started)
phases = " ".join(f"{k} {v:.2f}" for k, v in summary["seconds"].items())
print("CPU", " ".join(f"{s:.3f}" for s in spent), "|", result.state.edge_count, "edges |", phases)
"""


def measure(checkout: Path, tree: Path, maps: int, store: bool = False) -> tuple[list[float], str]:
    env = {**os.environ, "PYTHONPATH": str(checkout), "PYTHONHASHSEED": "0"}
    with tempfile.TemporaryDirectory(prefix="igg-bench-store-") as stores:
        done = subprocess.run(
            [sys.executable, "-c", ONE, str(tree), str(maps), "store" if store else "memory", stores],
            env=env,
            capture_output=True,
            text=True,
            cwd=tempfile.gettempdir(),
            check=False,
        )
    found = re.search(r"CPU ([\d. ]+)\|(.*)", done.stdout)
    if found is None:
        raise SystemExit(f"{checkout} on {tree}: {done.stderr[-2000:]}")
    return [float(x) for x in found.group(1).split()], found.group(2).strip()


def main() -> int:
    cli = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cli.add_argument("--base", type=Path, required=True, help="the other checkout (its igg/ is measured)")
    cli.add_argument("--rounds", type=int, default=3)
    cli.add_argument("--maps", type=int, default=2, help="timed maps per process (default 2)")
    cli.add_argument("--tree", type=Path, action="append", help="map these trees instead")
    cli.add_argument(
        "--store",
        action="store_true",
        help="map each tree into a new SQLite store with its facts cache, as `igg map-code --store` does",
    )
    args = cli.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        trees = args.tree
        if not trees:
            package = largest_package()
            generated = Path(tmp) / "generated"
            generate(generated, 1000, languages=("java", "python", "typescript", "go"))
            trees = [
                *([package] if package else []),
                generated,
                typescript_tree(Path(tmp) / "typescript", 25),
                go_tree(Path(tmp) / "go", 10),
            ]
        spent: dict[tuple[Path, str], list[float]] = {}
        for n in range(args.rounds):
            for tree in trees:
                for label, checkout in (("base", args.base), ("new", ROOT)):
                    times, rest = measure(checkout, tree, args.maps, args.store)
                    spent.setdefault((tree, label), []).extend(times)
                    print(f"round {n + 1} {label:4} {tree.name:10} CPU {times} | {rest}", flush=True)
        print(f"{'tree':12} {'base CPU':>9} {'new CPU':>9} {'new/base':>9}  (medians; target <= 1.15)")
        for tree in trees:
            base, new = statistics.median(spent[(tree, "base")]), statistics.median(spent[(tree, "new")])
            print(f"{tree.name:12} {base:9.2f} {new:9.2f} {new / base:9.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
