"""Benchmark ``igg check --since HEAD~1``: a 1,000-file tree in a git repository whose last commit changed one
file, against a fresh ``igg map-code`` of the same tree, in the same process (target: < 25% of the fresh map).

The fresh map is ``igg map-code TREE --store STORE`` (``igg.service.map_code`` with the facts cache beside the
store, as the command line runs it): walk, parse on all CPUs, link, and the loop that builds the stored
session. The check then judges a few rules on the work tree and on HEAD~1 (ratchet mode) with that store's
facts cache, as CI would with a cached store: only the changed file's two versions are parsed. A second check
with no cache at all (in memory: each unchanged file parsed once, for whichever state asks first) is timed
too, for the worst case. Usage: ``python scripts/bench_check.py [--files N] [--repeat N]``.

``--package DIR`` (a Python package's folder, e.g. Django's ``django``) benchmarks the imports-only mode of
issue 49 instead: the CPU (this process and the processes it waited for) of ``igg check DIR`` with rules that
read only imports (``igg.rules.reads``), against grimp's ``build_graph`` of the same package, in the same
process, as a ratio (target: at most 2x); and of the same check through the full map (``reads="all"``).
Neither uses a cache. ``python scripts/bench_check.py --package /tmp/django/django [--repeat N]``.
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
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
from igg.mapping.checking import run_check  # noqa: E402
from igg.models.rules import RULE_ADAPTER  # noqa: E402
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


def cpu() -> float:
    """CPU seconds of this process and of the child processes it has waited for (a parse pool's)."""
    mine, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return mine.ru_utime + mine.ru_stime + children.ru_utime + children.ru_stime


def cpu_of(work: Callable[[], object], walls: list[float] | None = None) -> float:
    """CPU seconds ``work`` took (its wall-clock seconds appended to ``walls``)."""
    gc.collect()
    started, wall = cpu(), time.perf_counter()
    work()
    if walls is not None:
        walls.append(time.perf_counter() - wall)
    return cpu() - started


def package_rules(name: str) -> list:
    """Rules that read imports alone: no cycle between the package's modules or packages, and its own modules
    kept apart from what it imports from outside (each a violation, the heaviest kind of answer)."""
    raw = [
        {"name": "modules", "kind": "acyclic", "level": "module"},
        {"name": "packages", "kind": "acyclic", "level": "package"},
        {"name": "outside", "kind": "forbidden", "from": name, "to": {"external": True}},
    ]
    return [RULE_ADAPTER.validate_python(r) for r in raw]


def median_of(work: Callable[[], object], repeat: int) -> tuple[float, float]:
    """(CPU, wall) seconds of ``work``, the medians of ``repeat`` runs."""
    walls: list[float] = []
    cpus = [cpu_of(work, walls) for _ in range(repeat)]
    return statistics.median(cpus), statistics.median(walls)


def bench_package(folder: Path, repeat: int) -> int:
    """igg check imports-only and through the full map, each against grimp's build_graph, without caches and
    then with each one's cache warm (see the module doc)."""
    import grimp  # the import-rule oracle of the tests; imported before any timing

    folder = folder.resolve()
    sys.path.insert(0, str(folder.parent))
    rules = package_rules(folder.name)
    report = run_check(rules, paths=[folder])  # warm: IGG's own modules and the parsers imported once
    full_report = run_check(rules, paths=[folder], reads="all")
    graph = grimp.build_graph(folder.name, cache_dir=None)
    g, wg = median_of(lambda: grimp.build_graph(folder.name, cache_dir=None), repeat)
    i, wi = median_of(lambda: run_check(rules, paths=[folder]), repeat)
    f, wf = median_of(lambda: run_check(rules, paths=[folder], reads="all"), repeat)
    same = [v.model_dump() for v in report.violations] == [v.model_dump() for v in full_report.violations]
    print(
        f"{folder.name}: {len(graph.modules)} modules (grimp); igg check: {report.nodes} nodes, "
        f"{report.edges} edges imports-only, {full_report.nodes} nodes, {full_report.edges} edges in full; "
        f"{len(report.violations)} violations, {'the same' if same else 'NOT the same'} both ways; "
        f"{os.cpu_count()} CPUs"
    )
    print(f"grimp.build_graph:          {g:.3f} s CPU, {wg:.3f} s wall (medians of {repeat}; no cache)")
    print(f"igg check, imports only:    {i:.3f} s CPU = {i / g:.1f}x grimp (target <= 2x), {wi:.3f} s wall")
    print(f"igg check, full map:        {f:.3f} s CPU = {f / g:.1f}x grimp, {wf:.3f} s wall")
    with tempfile.TemporaryDirectory(prefix="igg-bench-package-") as tmp:
        cache = FactsCache(Path(tmp) / "facts.sqlite")
        grimp.build_graph(folder.name, cache_dir=str(Path(tmp) / "grimp"))
        run_check(rules, paths=[folder], cache=cache)
        g, wg = median_of(lambda: grimp.build_graph(folder.name, cache_dir=str(Path(tmp) / "grimp")), repeat)
        i, wi = median_of(lambda: run_check(rules, paths=[folder], cache=cache), repeat)
        cache.close()
    print(f"grimp.build_graph, cached:  {g:.3f} s CPU, {wg:.3f} s wall (its cache warm)")
    print(
        f"igg check, imports, cached: {i:.3f} s CPU = {i / g:.1f}x grimp, {wi:.3f} s wall (facts cache warm)"
    )
    return 0 if same else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--package", type=Path, help="a Python package's folder: imports-only vs grimp")
    args = parser.parse_args()
    if args.package is not None:
        return bench_package(args.package, args.repeat)
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
