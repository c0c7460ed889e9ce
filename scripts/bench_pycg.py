"""Python CALLS judged by PyCG's micro-benchmark: IGG's precision and recall per category, and pycg's beside
it.

The benchmark (``../shared/data/pycg-micro``, or ``--bench``) holds small programs in category folders, each
with ``main.py`` (its entry point) and the call graph its authors wrote by hand (``callgraph.json``: caller ->
callees, named ``module.function``, ``module.Class.method``, ``module.outer.inner``, ``module.<lambda1>``;
module-level code is the caller named by the module). Each program is mapped by ``igg map-code``'s own
pipeline (``igg.service.map_code``), and its CALLS edges are named that way: a Module by its module name, a
Function by ``package.name``, a Method by ``owner.name``. Edges to or from builtins (``<builtin>.len``) and to
the methods of literals (``<**PyStr**>.join``) are left out of both sides: IGG maps the tree, not Python's
runtime.

Precision is the share of drawn edges the benchmark lists; recall the share of listed edges drawn. pycg (PyPI,
``pip install pycg`` into a virtualenv of its own: it pins old dependencies) is run on the same programs when
``--pycg`` names that virtualenv's Python (default ``/tmp/pycgvenv/bin/python``) and it imports ``PyCG``; its
column is left out, saying so, when not.

Usage: ``python scripts/bench_pycg.py [--bench DIR] [--pycg PYTHON] [--category NAME] [--misses]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT.parent / "shared" / "data" / "pycg-micro"
PYCG = Path("/tmp/pycgvenv/bin/python")
RUN_PYCG = (
    "import runpy, sys, PyCG; sys.modules['pycg'] = PyCG; sys.argv[0] = 'pycg'; "
    "runpy.run_module('PyCG', run_name='__main__')"
)
"""pycg 0.0.8 as PyPI ships it: its package is ``PyCG`` but it imports itself as ``pycg`` (which a
case-sensitive file system does not find), so it runs under that alias."""

Edge = tuple[str, str]


@dataclass
class Score:
    """Edges drawn and listed, summed over programs."""

    hits: int = 0
    drawn: int = 0
    listed: int = 0
    wrong: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)

    def add(self, program: str, found: set[Edge], expected: set[Edge]) -> None:
        self.hits += len(found & expected)
        self.drawn += len(found)
        self.listed += len(expected)
        self.wrong += [f"{program}: {a} -> {b}" for a, b in sorted(found - expected)]
        self.missed += [f"{program}: {a} -> {b}" for a, b in sorted(expected - found)]

    def merge(self, other: Score) -> None:
        self.hits += other.hits
        self.drawn += other.drawn
        self.listed += other.listed
        self.wrong += other.wrong
        self.missed += other.missed

    @property
    def precision(self) -> float:
        return self.hits / self.drawn if self.drawn else 1.0

    @property
    def recall(self) -> float:
        return self.hits / self.listed if self.listed else 1.0


def programs(bench: Path) -> list[Path]:
    """Every program folder of the benchmark (one with a ``callgraph.json``), sorted."""
    return sorted(p.parent for p in bench.glob("*/*/callgraph.json"))


def _ours(name: str) -> bool:
    return not name.startswith("<")


def edges_of(graph: dict[str, list[str]]) -> set[Edge]:
    """The edges of a PyCG-format call graph, without builtins and literals' methods."""
    return {(a, b) for a, callees in graph.items() for b in callees if _ours(a) and _ours(b)}


def igg_edges(program: Path) -> set[Edge]:
    """The CALLS edges IGG maps for ``program``, named as PyCG names them (the prefix the folders above give
    ``main.py``'s module, when the program's folder is itself a package, taken off)."""
    from igg.service import map_code

    result, _ = map_code([program], jobs=1)
    state = result.state
    names: dict[str, str] = {}
    for n in state.graph.nodes:
        kind, p = state.node_type(n), state.node_properties(n)
        if kind == "Module":
            names[n] = p["name"]
        elif kind == "Function":
            names[n] = f"{p['package']}.{p['name']}"
        elif kind == "Method":
            names[n] = f"{p['owner']}.{p['name']}"
    main = next(
        (
            names[n]
            for n in state.graph.nodes
            if state.node_type(n) == "Module" and state.node_properties(n)["path"] == "main.py"
        ),
        "main",
    )
    prefix = main[: -len("main")] if main.endswith("main") else ""

    def pycg_name(node: str) -> str:
        name = names[node]
        return name[len(prefix) :] if prefix and name.startswith(prefix) else name

    return {
        (pycg_name(u), pycg_name(v))
        for _, u, v, d in state.edges()
        if d["type"] == "CALLS" and u in names and v in names
    }


def has_pycg(python: Path) -> bool:
    """Whether ``python`` exists and imports pycg."""
    return (
        python.exists()
        and subprocess.run([str(python), "-c", "import PyCG"], capture_output=True, check=False).returncode
        == 0
    )


def pycg_edges(pycg: Path, program: Path) -> set[Edge] | None:
    """pycg's edges for ``program`` (None: it failed on it)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cg.json"
        done = subprocess.run(
            [str(pycg), "-c", RUN_PYCG, "--package", str(program), str(program / "main.py"), "-o", str(out)],
            capture_output=True,
            text=True,
            cwd=program,
            timeout=120,
            check=False,
        )
        if done.returncode != 0 or not out.exists():
            return None
        return edges_of(json.loads(out.read_text()))


def score(bench: Path, category: str | None = None, pycg: Path | None = None) -> dict[str, Any]:
    """Per category: IGG's score, and pycg's (when ``pycg`` is given) on the same programs."""
    ours: dict[str, Score] = {}
    theirs: dict[str, Score] = {}
    for program in programs(bench):
        cat = program.parent.name
        if category and cat != category:
            continue
        name = f"{cat}/{program.name}"
        expected = edges_of(json.loads((program / "callgraph.json").read_text()))
        ours.setdefault(cat, Score()).add(name, igg_edges(program), expected)
        if pycg is not None:
            found = pycg_edges(pycg, program)
            theirs.setdefault(cat, Score()).add(name, found if found is not None else set(), expected)
    return {"igg": ours, "pycg": theirs}


def total(scores: dict[str, Score]) -> Score:
    out = Score()
    for s in scores.values():
        out.merge(s)
    return out


def _cell(s: Score | None) -> str:
    if s is None:
        return f"{'':>22}"
    return f"{s.precision:6.2f} {s.recall:6.2f} {s.hits:3}/{s.listed:<3}"


def main(argv: list[str] | None = None) -> int:
    cli = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    cli.add_argument("--bench", type=Path, default=BENCH, help="the micro-benchmark's folder")
    cli.add_argument(
        "--pycg",
        type=Path,
        default=PYCG,
        help="the Python of pycg's virtualenv (default /tmp/pycgvenv/bin/python)",
    )
    cli.add_argument("--category", help="only this category")
    cli.add_argument("--misses", action="store_true", help="list IGG's wrong and missed edges")
    args = cli.parse_args(argv)
    pycg: Path | None = args.pycg if has_pycg(args.pycg) else None
    if pycg is None:
        print(
            f"pycg: {args.pycg} does not import it (python3 -m venv /tmp/pycgvenv && /tmp/pycgvenv/bin/pip"
            " install pycg); its column is left out"
        )
    result = score(args.bench, args.category, pycg)
    ours, theirs = result["igg"], result["pycg"]
    print(
        f"{'category':<14} {'IGG  precision recall hits':<28} {'pycg precision recall hits' if pycg else ''}"
    )
    for cat in sorted(ours):
        print(f"{cat:<14} {_cell(ours[cat]):<28} {_cell(theirs.get(cat)) if pycg else ''}")
    print(f"{'total':<14} {_cell(total(ours)):<28} {_cell(total(theirs)) if pycg else ''}")
    if args.misses:
        every = total(ours)
        for line in every.wrong:
            print("wrong ", line)
        for line in every.missed:
            print("missed", line)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
