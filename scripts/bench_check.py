"""Benchmark ``igg check --since HEAD~1``: a 1,000-file tree in a git repository whose last commit changed one
file, against a fresh ``igg map-code`` of the same tree, in the same process (target: < 25% of the fresh map).

The fresh map is ``igg map-code TREE --store STORE`` (``igg.service.map_code`` with the facts cache beside the
store, as the command line runs it): walk, parse on all CPUs, link, and the loop that builds the stored
session. The check then judges a few rules on the work tree and on HEAD~1 (ratchet mode) with that store's
facts cache, as CI would with a cached store: only the changed file's two versions are parsed. A second check
with no cache at all (in memory: each unchanged file parsed once, for whichever state asks first) is timed
too, for the worst case. Usage: ``python scripts/bench_check.py [--files N] [--repeat N]``.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gen_code_tree import generate  # noqa: E402

from igg.codemap.cache import FactsCache  # noqa: E402
from igg.service import check, map_code  # noqa: E402
from igg.store.location import sidecar_path  # noqa: E402

RULES = """
[[rules]]
name = "java-layers"
kind = "layers"
layers = ["com.bench.p0", "com.bench.p1", "com.bench.p2"]
[[rules]]
name = "py-independent"
kind = "independence"
modules = ["benchpy.p3", "benchpy.p4"]
[[rules]]
name = "no-payments-from-p5"
kind = "forbidden"
from = "benchpy.p5"
to = {type = "DatabaseTable", name = "payments"}
edges = ["READS_FROM", "WRITES_TO"]
[[rules]]
name = "acyclic-packages"
kind = "acyclic"
level = "package"
"""


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=bench", "-c", "user.email=bench@example.com", *args],
        check=True,
        capture_output=True,
    )


def timed(work: Callable[[], object]) -> float:
    gc.collect()
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="igg-bench-check-") as tmp:
        repo = Path(tmp) / "repo"
        tree = repo / "tree"
        written = generate(tree, files=args.files)
        (repo / "igg.toml").write_text(RULES, encoding="utf-8")
        git(repo, "init", "-q", "-b", "main")
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "tree")
        changed = next(p for p in written if p.suffix == ".py")
        changed.write_text(changed.read_text(encoding="utf-8") + "\nimport benchpy.p4.m4\n", encoding="utf-8")
        git(repo, "commit", "-q", "-am", "one file changed")
        rules = repo / "igg.toml"
        fresh, warm, cold = [], [], []
        for i in range(args.repeat):
            store = Path(tmp) / f"store-{i}.sqlite"
            cache = FactsCache(sidecar_path(Path(store), ".codefacts"))
            fresh.append(timed(lambda: map_code([tree], store=store, cache=cache)))  # noqa: B023
            cache.close()
            warm.append(
                timed(
                    lambda: check(
                        [tree],
                        rules=rules,
                        store=store,  # noqa: B023
                        since="HEAD~1",
                        new_only=True,
                    )
                )
            )
            cold.append(timed(lambda: check([tree], rules=rules, since="HEAD~1", new_only=True)))
        report = check([tree], rules=rules, store=store, since="HEAD~1", new_only=True)
    m, w, c = statistics.median(fresh), statistics.median(warm), statistics.median(cold)
    print(
        f"tree: {len(written)} source files, one changed in HEAD; {report.nodes} nodes, {report.edges} edges;"
        f" {len(report.violations)} violations ({sum(v.status == 'new' for v in report.violations)} new),"
        f" {len(report.added)} dependencies added, {len(report.removed)} removed"
    )
    print(f"fresh igg map-code --store:          {m:.3f} s (median of {args.repeat})")
    print(f"igg check --since HEAD~1 --new-only: {w:.3f} s = {w / m:.1%} of the fresh map (target < 25%)")
    print(f"  with no facts cache (worst case):  {c:.3f} s = {c / m:.1%} of the fresh map")
    return 0 if w / m < 0.25 else 1


if __name__ == "__main__":
    sys.exit(main())
