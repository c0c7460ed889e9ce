"""Benchmark ``igg map-code``: files/s and the ratio to a bare parse of the same files, in the same process.

Four trees: a generated one (``--files``, default 1,000 Java and Python files), the largest package in this
virtualenv (by Python files), and a TypeScript tree (``--ts-copies`` copies, default 25, of the two real
projects in ``fixtures/code/typescript``: about 1,000 files) and a Go tree (``--go-copies`` copies, default
10, of the two real projects in ``fixtures/code/go``: about 1,100 files). For each: the bare parse
(``ast.parse`` / tree-sitter: the baseline), the analysis (parse + facts), linking, the run (the static pass:
the graph planned as one difference and applied by the act step with every rule, then kept), and map-code end
to end (walk .. run) with its ratio to the baseline. Then ``--update``: the generated tree mapped into a
store, then one file changed twice, each update timed against the fresh map: a call removed from a body (only
that file is linked again) and a function added (a declaration: all are). Wall time and CPU time (of all
processes, parse workers included) are both printed: on a shared machine the CPU ratios are the steadier ones.

``--profile`` adds, per tree, the functions that cost most in each phase (cProfile, in-process, with the
collector paused as map-code pauses it): the fact extraction, the linking, and the run (the static pass:
plan, validation and apply).

For an installed package (the virtualenv's largest, or ``--tree`` pointing at one in site-packages), grimp's
``build_graph`` of the same package is timed too, and map-code's CPU printed as a ratio of it.

Usage: ``python scripts/bench_map_code.py [--files 1000] [--jobs 1] [--tree DIR] [--no-venv] [--profile]
[--update-only] [--venv-only] [--ts-only] [--ts-copies 25] [--go-only] [--go-copies 10]``.
"""

from __future__ import annotations

import argparse
import ast
import cProfile
import io
import os
import pstats
import re
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gen_code_tree import generate  # noqa: E402

from igg.act.apply import collector_paused  # noqa: E402
from igg.codemap.cache import FactsCache  # noqa: E402
from igg.codemap.go.analyze import parse as parse_go  # noqa: E402
from igg.codemap.java.analyze import parser  # noqa: E402
from igg.codemap.link import link  # noqa: E402
from igg.codemap.typescript.analyze import parse as parse_typescript  # noqa: E402
from igg.codemap.walk import walk  # noqa: E402
from igg.mapping.prepare import code_agent, parse_all, prepare  # noqa: E402
from igg.mapping.static import static_map  # noqa: E402
from igg.mapping.update import update_map  # noqa: E402
from igg.record.logs import configure_logging  # noqa: E402
from igg.service import map_code  # noqa: E402
from igg.store.location import sidecar_path  # noqa: E402


def cpu() -> float:
    """CPU seconds of this process and of its finished children (the parse processes): unlike wall time,
    hardly changed by other work on a shared machine."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _baseline(files: list[Any]) -> tuple[float, float]:
    """(wall, CPU) seconds of a bare parse of ``files`` (configuration files, such as ``tsconfig.json`` or
    ``go.mod``, are not parsed: map-code reads them as JSON or by their lines)."""
    java = parser()
    started, used = time.perf_counter(), cpu()
    for f in files:
        if f.path.endswith(".java"):
            java.parse(f.text.encode("utf-8"))
        elif f.language == "typescript":
            if not f.path.endswith(".json"):
                parse_typescript(f.path, f.text)
        elif f.language == "go":
            if f.path.endswith(".go"):
                parse_go(f.path, f.text)
        else:
            ast.parse(f.text)
    return time.perf_counter() - started, cpu() - used


def largest_package() -> Path | None:
    """The package folder of this virtualenv's site-packages with the most Python files."""
    site = Path(sysconfig.get_paths()["purelib"])
    best, count = None, 0
    for entry in site.iterdir():
        if entry.is_dir() and (entry / "__init__.py").exists():
            n = sum(1 for _ in entry.rglob("*.py"))
            if n > count:
                best, count = entry, n
    return best


def bench_tree(label: str, root: Path, jobs: int) -> float:
    files = walk([root]).files
    n = len(files)
    _baseline(files[:50])  # warm up the parser and the imports
    base, base_cpu = _baseline(files)
    with collector_paused():  # as map-code parses
        parse_all(files[:50], jobs=1)  # warm up the analyzers (their first use loads what they need)
    started, used = time.perf_counter(), cpu()
    with collector_paused():
        parse_all(files, jobs=1)
    serial, serial_cpu = time.perf_counter() - started, cpu() - used
    started, used = time.perf_counter(), cpu()
    result, summary = map_code([root], agent="code", jobs=jobs)
    total, total_cpu = time.perf_counter() - started, cpu() - used
    secs = summary["seconds"]
    elements = result.state.node_count + result.state.edge_count
    print(
        f"{label}: {n} files ({summary['files']['lines']:,} lines), {result.state.node_count:,} nodes + "
        f"{result.state.edge_count:,} edges; {result.stop_reason} after {result.iterations} "
        f"{'iteration' if result.iterations == 1 else 'iterations'}; "
        f"{os.cpu_count()} CPUs"
    )
    print(f"  baseline  bare parse (ast / tree-sitter)  {n / base:8.0f} files/s  ({base:.2f} s)")
    print(
        f"  analysis  parse + facts, in-process       {n / serial:8.0f} files/s  ({serial:.2f} s)  "
        f"x{serial / base:.2f} of baseline; CPU x{serial_cpu / max(base_cpu, 1e-9):.2f}"
    )
    print(
        f"  link      cross-file resolution           {n / max(secs['link'], 1e-9):8.0f} files/s  "
        f"({secs['link']:.2f} s)"
    )
    print(
        f"  run       one step: plan, check, apply    {n / max(secs['run'], 1e-9):8.0f} files/s  "
        f"({secs['run']:.2f} s)  {elements / max(secs['run'], 1e-9):,.0f} nodes+edges/s"
    )
    print(
        f"  map-code  end to end (walk..run), jobs={jobs}  {n / total:8.0f} files/s  ({total:.2f} s)  "
        f"x{total / base:.2f} of baseline"
    )
    print(
        f"  CPU time  bare parse {base_cpu:.2f} s, map-code {total_cpu:.2f} s (all processes) "
        f" x{total_cpu / max(base_cpu, 1e-9):.2f} of baseline (target <= 3x); load average"
        f" {os.getloadavg()[0]:.1f}"
    )
    grimp_cpu = _grimp_cpu(root)
    if grimp_cpu is not None:
        print(
            f"  grimp     build_graph of the same package {grimp_cpu:.2f} s CPU: map-code "
            f"x{total_cpu / max(grimp_cpu, 1e-9):.2f} of grimp (target <= 8x)"
        )
    return total


def _grimp_cpu(root: Path) -> float | None:
    """CPU seconds of grimp's ``build_graph`` (no cache) of the installed package at ``root``, else None."""
    import importlib.util

    if not (root / "__init__.py").exists():
        return None
    spec = importlib.util.find_spec(root.name)
    if spec is None or spec.origin is None or Path(spec.origin).parent.resolve() != root.resolve():
        return None
    import grimp

    grimp.build_graph(root.name, cache_dir=None)  # warm: its first call loads the extension
    used = cpu()
    grimp.build_graph(root.name, cache_dir=None)
    return cpu() - used


def profile_phases(root: Path, top: int = 12) -> None:
    """The ``top`` functions by own time in each phase of an in-process map of ``root``."""
    files = walk([root]).files
    codemap = prepare([root], agent="code", jobs=1)
    phases: list[tuple[str, Any]] = [
        ("facts (parse + extraction)", lambda: parse_all(files, jobs=1)),
        ("link", lambda: link(codemap.facts)),
        ("run (plan, validate + apply)", lambda: static_map(codemap, code_agent("code", codemap).fit)),
    ]
    for name, call in phases:
        profiler = cProfile.Profile()
        with collector_paused():
            profiler.runcall(call)
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(top)
        lines = [line for line in out.getvalue().splitlines() if line.strip()]
        print(f"  profile of {name}:")
        for line in lines[lines.index(next(x for x in lines if "ncalls" in x)) :]:
            print("    " + line.replace(str(Path.cwd()) + "/", ""))


def _edit_body(path: Path) -> None:
    """Remove the first call of a method of another class from a body (the declarations stay as they were)."""
    text = path.read_text()
    match = re.search(r"^        self\.k\d+\.run\d\(x\)\n", text, flags=re.MULTILINE)
    if match is None:
        raise SystemExit(f"bench_map_code: no call to remove in {path}")
    path.write_text(text[: match.start()] + text[match.end() :])


def _add_function(path: Path) -> None:
    """Add a top-level function (a new declaration: every file is linked again)."""
    path.write_text(path.read_text() + "\n\ndef bench_added() -> int:\n    return 1\n")


def typescript_tree(root: Path, copies: int) -> Path:
    """``copies`` copies of the real TypeScript projects of ``fixtures/code/typescript`` under ``root``."""
    import shutil

    source = Path(__file__).resolve().parent.parent / "fixtures" / "code" / "typescript"
    for i in range(copies):
        for project in ("ky", "superstruct"):
            shutil.copytree(source / project, root / f"c{i}" / project)
    return root


def go_tree(root: Path, copies: int) -> Path:
    """``copies`` copies of the real Go projects of ``fixtures/code/go`` under ``root``, each copy its own
    module (its module path, and the imports of it, renamed: ``example.com/c3/chi/v5``), as distinct code
    would be."""
    import shutil

    source = Path(__file__).resolve().parent.parent / "fixtures" / "code" / "go"
    modules = {"chi": "github.com/go-chi/chi/v5", "uuid": "github.com/google/uuid"}
    for i in range(copies):
        for project, module in modules.items():
            target = root / f"c{i}" / project
            shutil.copytree(source / project, target)
            for path in [*target.rglob("*.go"), target / "go.mod"]:
                path.write_text(path.read_text().replace(module, f"example.com/c{i}/{project}"))
    return root


def bench_update(root: Path, jobs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "s.db"
        cache = FactsCache(sidecar_path(Path(store), ".codefacts"))
        started, used = time.perf_counter(), cpu()
        map_code([root], agent="code", jobs=jobs, store=store, session_id="bench", cache=cache)
        fresh, fresh_cpu = time.perf_counter() - started, cpu() - used
        cache.close()
        with (
            collector_paused()
        ):  # the analyzers' first use in this process loads what they need (as in bench_tree)
            parse_all(walk([root]).files[:50], jobs=1)
        print(
            f"update: after a fresh map with store of {fresh:.2f} s ({fresh_cpu:.2f} s CPU), one file of "
            f"{len(walk([root]).files)} changed:"
        )
        target = next(p for p in sorted(root.rglob("m*.py")) if "self.k" in p.read_text())
        for name, edit in (("a call removed from a body", _edit_body), ("a function added", _add_function)):
            edit(target)
            started, used = time.perf_counter(), cpu()
            result = update_map([root], store, session_id="bench", jobs=jobs)
            took, took_cpu = time.perf_counter() - started, cpu() - used
            files = result.files
            changes = sum(v for k, v in result.graph.items() if k not in ("nodes", "edges"))
            print(
                f"  {name}: {files['reparsed']} re-parsed, {files['relinked']} linked, {changes} graph"
                f" changes; {took:.2f} s = {100 * took / fresh:.1f}% of the fresh map (CPU"
                f" {100 * took_cpu / max(fresh_cpu, 1e-9):.1f}%)"
            )
            print("    phases: " + ", ".join(f"{k} {v:.2f} s" for k, v in result.seconds.items()))


def main() -> int:
    cli = argparse.ArgumentParser(description=__doc__)
    cli.add_argument("--files", type=int, default=1000, help="source files to generate (default 1000)")
    cli.add_argument(
        "--jobs", type=int, default=1, help="parse processes for the end-to-end runs (default 1)"
    )
    cli.add_argument("--tree", type=Path, help="map this tree instead of a generated one")
    cli.add_argument("--no-venv", action="store_true", help="skip the virtualenv's largest package")
    cli.add_argument("--profile", action="store_true", help="also print each phase's costliest functions")
    cli.add_argument("--update-only", action="store_true", help="only the --update figures (generated tree)")
    cli.add_argument("--venv-only", action="store_true", help="only the virtualenv's largest package")
    cli.add_argument("--ts-only", action="store_true", help="only the TypeScript tree")
    cli.add_argument(
        "--ts-copies", type=int, default=25, help="copies of the TypeScript fixtures (default 25)"
    )
    cli.add_argument("--go-only", action="store_true", help="only the Go tree")
    cli.add_argument("--go-copies", type=int, default=10, help="copies of the Go fixtures (default 10)")
    args = cli.parse_args()
    configure_logging(level="warning")  # library log lines on standard error, never among the figures
    with tempfile.TemporaryDirectory() as tmp:
        if args.go_only:
            bench_tree("Go tree", go_tree(Path(tmp) / "go", args.go_copies), args.jobs)
            if args.profile:
                profile_phases(Path(tmp) / "go")
            return 0
        if args.ts_only:
            bench_tree("TypeScript tree", typescript_tree(Path(tmp) / "ts", args.ts_copies), args.jobs)
            if args.profile:
                profile_phases(Path(tmp) / "ts")
            return 0
        root = args.tree or Path(tmp) / "tree"
        if args.tree is None:
            generate(root, args.files)
        if args.update_only:
            bench_update(root, args.jobs)
            return 0
        if args.venv_only:
            package = largest_package()
            if package is None:
                raise SystemExit("bench_map_code: no package in this virtualenv")
            bench_tree(f"venv package {package.name}", package, args.jobs)
            if args.profile:
                profile_phases(package)
            return 0
        bench_tree("generated tree" if args.tree is None else str(root), root, args.jobs)
        if args.profile:
            profile_phases(root)
        if not args.no_venv:
            package = largest_package()
            if package is not None:
                bench_tree(f"venv package {package.name}", package, args.jobs)
                if args.profile:
                    profile_phases(package)
        bench_tree("TypeScript tree", typescript_tree(Path(tmp) / "ts", args.ts_copies), args.jobs)
        bench_tree("Go tree", go_tree(Path(tmp) / "go", args.go_copies), args.jobs)
        if args.tree is None:
            bench_update(root, args.jobs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
