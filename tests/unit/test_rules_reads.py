"""``igg check PATH`` and ``igg cycles PATH`` map a tree only as far as their rules read (issue 49,
``igg.rules.reads``): the imports alone, or the imports and the tables. On the generated four-language
tree, every tree of ``fixtures/code`` and a real project (starlette, installed with IGG's MCP SDK), the
lighter graph holds exactly the import edges of a stored ``igg map-code`` session (same ends, statement,
type-only flag), and the check's violations (with ``--since``: known and new) and the cycles are those of
the full map."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from igg.codemap.cache import FactsCache
from igg.codemap.language import SourceFile
from igg.codemap.link import link
from igg.codemap.schema import load_code_schema
from igg.mapping.checking import graph_of, run_check, tree_graph
from igg.mapping.depgraph import model_graph, session_depgraph
from igg.mapping.prepare import parse_all
from igg.models.rules import RULE_ADAPTER, Rule
from igg.rules.depgraph import DepGraph
from igg.rules.reads import needed_reads, rule_reads
from igg.rules.report import Violation
from igg.service import check, cycles, map_code
from igg.store.location import sidecar_path
from tests.support.scripts import script

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures" / "code"


TREES = [*(f"fixtures/{p.name}" for p in sorted(FIXTURES.iterdir()) if p.is_dir()), "generated", "starlette"]


def make_tree(name: str, where: Path) -> Path:
    """A copy of the tree ``name`` under ``where``."""
    root = where / name.replace("/", "-")
    if name == "generated":
        script("gen_code_tree").generate(root, files=160, languages=("java", "python", "typescript", "go"))
    elif name == "starlette":
        import starlette  # a dependency of the MCP SDK IGG serves through: a real project at hand

        source = Path(starlette.__file__).parent
        shutil.copytree(source, root / "starlette", ignore=shutil.ignore_patterns("__pycache__"))
    else:
        shutil.copytree(FIXTURES / name.partition("/")[2], root)
    return root


def imports_of(graph: DepGraph) -> list[tuple[str, str, str, str | None, int | None, bool]]:
    """Every IMPORTS edge of ``graph`` by its ends' types and names, with its statement and type-only flag."""
    out = []
    for e in graph.of_types(["IMPORTS"]):
        a, b = graph.nodes[e.source], graph.nodes[e.target]
        out.append((f"{a.type} {a.name}", b.type, b.name, e.file, e.line, e.type_checking))
    return sorted(out)


def rules_for(graph: DepGraph, tables: bool) -> list[Rule]:
    """Rules over the imports of ``graph`` (and, with ``tables``, every table access): a forbidden rule that
    every import of an outside package breaks, layers and independence over up to five packages of the tree
    (those holding the most modules), cycles at both levels."""
    held: dict[str, int] = {}
    for child, parent in graph.container.items():
        if graph.nodes[child].type == "Module" and graph.nodes[parent].type == "Package":
            held[graph.nodes[parent].name] = held.get(graph.nodes[parent].name, 0) + 1
    some = sorted(sorted(held, key=lambda name: (-held[name], name))[:5])
    raw: list[dict[str, object]] = [
        {"name": "modules", "kind": "acyclic", "level": "module"},
        {"name": "packages", "kind": "acyclic", "level": "package", "external": True},
    ]
    if any(n.external for n in graph.nodes.values()):
        outside = {"kind": "forbidden", "from": {"external": False}, "to": {"external": True}}
        raw.append({"name": "outside", **outside})
        raw.append({"name": "outside-at-run-time", **outside, "exclude_type_checking_imports": True})
    if len(some) >= 2:
        raw.append({"name": "layers", "kind": "layers", "layers": some})
        raw.append({"name": "layers-far", "kind": "layers", "layers": some, "transitive": True})
        raw.append({"name": "apart", "kind": "independence", "modules": some, "transitive": True})
    if tables:
        raw.append(
            {
                "name": "no-tables",
                "kind": "forbidden",
                "from": "*",
                "to": {"type": "DatabaseTable"},
                "edges": ["READS_FROM", "WRITES_TO"],
            }
        )
    return [RULE_ADAPTER.validate_python(r) for r in raw]


def stored_map(tree: Path, store: Path) -> tuple[str, DepGraph]:
    """A stored ``igg map-code`` session of ``tree`` and the rules' graph of it."""
    result, _ = map_code([tree], store=store)
    return result.session_id, session_depgraph(store, result.session_id)[0]


def shown(violations: list[Violation]) -> list[dict[str, object]]:
    return [v.model_dump() for v in violations]


def same(mine: list[Violation], stored: list[Violation]) -> bool:
    """The same violations, in the same order, each with the same path; the edges that break a cycle may be
    listed in another order (a stored session keeps its edges in the order the loop added them, which a
    check of a session has always listed them in)."""

    def canonical(v: Violation) -> dict[str, object]:
        return {**v.model_dump(), "breaking_edges": sorted(h.model_dump_json() for h in v.breaking_edges)}

    return [canonical(v) for v in mine] == [canonical(v) for v in stored]


@pytest.mark.parametrize("name", TREES)
def test_imports_only_checks_and_cycles_are_the_full_maps(tmp_path: Path, name: str) -> None:
    tree = make_tree(name, tmp_path)
    store = tmp_path / "store.sqlite"
    session, full = stored_map(tree, store)
    lighter = graph_of(paths=[tree], reads="imports")
    assert imports_of(lighter) == imports_of(full)
    assert {n.type for n in lighter.nodes.values()} <= {"Module", "Package"}
    has_tables = any(n.type == "DatabaseTable" for n in full.nodes.values())
    for tables in sorted({False, has_tables}):
        rules = rules_for(full, tables)
        reads = "tables" if tables else "imports"
        assert needed_reads(rules) == reads
        assert tree_graph([tree], FactsCache(None), rules)[1] == reads  # no fallback to the full map
        mine = check([tree], rules=rules)
        theirs = check([], rules=rules, session=session, store=store)
        assert mine.violations or name == "fixtures/java", "an empty answer would prove nothing"
        assert (mine.reads, theirs.reads) == (reads, None)
        assert shown(mine.violations) == shown(run_check(rules, paths=[tree], reads="all").violations)
        assert same(mine.violations, theirs.violations)
        assert not mine.truncated and not theirs.truncated
    for level in ("module", "package"):
        assert same(
            cycles([tree], level=level, external=True),
            cycles(session=session, store=store, level=level, external=True),
        )


def test_the_comparison_sees_one_import_dropped_or_added(tmp_path: Path) -> None:
    """The edge comparison above fails when the lighter graph lacks an import or has one too many."""
    tree = make_tree("fixtures/python", tmp_path)
    _, full = stored_map(tree, tmp_path / "store.sqlite")
    lighter = graph_of(paths=[tree], reads="imports")
    key = next(k for k, e in lighter.edges.items() if e.type == "IMPORTS")
    dropped = DepGraph(nodes=lighter.nodes, edges={k: e for k, e in lighter.edges.items() if k != key})
    assert imports_of(dropped) != imports_of(full)
    extra = lighter.edges[key]
    added = DepGraph(nodes=lighter.nodes, edges=dict(lighter.edges))
    reverse = (extra.target, "IMPORTS", extra.source)
    added.add_edge(type(extra)(extra.target, "IMPORTS", extra.source, file=extra.file, line=extra.line))
    assert reverse in added.edges and imports_of(added) != imports_of(full)


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        check=True,
        capture_output=True,
    )


def test_since_marks_the_same_violations_known_and_new_as_the_full_map(tmp_path: Path) -> None:
    """A change to starlette adds two modules importing each other (a new cycle) and an import of an outside
    package, and drops an import: the imports-only check of the work tree against HEAD finds the violations,
    and which are new, as the full map does."""
    tree = make_tree("starlette", tmp_path)
    git(tree, "init", "-q", "-b", "main")
    git(tree, "add", "-A")
    git(tree, "commit", "-q", "-m", "starlette")
    code = tree / "starlette"
    (code / "loop_a.py").write_text("import json\n\nfrom starlette import loop_b\n", encoding="utf-8")
    (code / "loop_b.py").write_text("from starlette.loop_a import x\n", encoding="utf-8")
    status = code / "status.py"
    status.write_text(status.read_text(encoding="utf-8") + "\nimport starlette.requests\n", encoding="utf-8")
    rules = rules_for(graph_of(paths=[code], reads="all"), tables=False)
    mine = run_check(rules, paths=[code], since="HEAD")
    theirs = run_check(rules, paths=[code], since="HEAD", reads="all")
    assert (mine.reads, theirs.reads) == ("imports", "all")
    assert {v.status for v in mine.violations} == {"known", "new"}
    assert shown(mine.violations) == shown(theirs.violations)
    new = {v.key for v in mine.violations if v.status == "new"}
    assert "modules|cycle|starlette.loop_a,starlette.loop_b" in new
    for ours, full in ((mine.added, theirs.added), (mine.removed, theirs.removed)):
        # the dependencies the change made or unmade are those of its imports, with their import statements
        imported = [c.model_copy(update={"edges": [h for h in c.edges if h.edge == "IMPORTS"]}) for c in full]
        assert [c.model_dump() for c in ours] == [c.model_dump() for c in imported if c.edges]
    assert {(c.source, c.target) for c in mine.added if c.level == "module"} >= {
        ("starlette.loop_a", "json"),
        ("starlette.loop_a", "starlette.loop_b"),
        ("starlette.status", "starlette.requests"),
    }


def test_what_a_rule_reads() -> None:
    """A rule over imports at the module or package level reads imports; table access adds the tables; calls,
    imported symbols, the type level, routes and a selector naming a class need the full map."""
    rule = RULE_ADAPTER.validate_python
    assert rule_reads(rule({"name": "a", "kind": "acyclic", "level": "package"})) == "imports"
    assert rule_reads(rule({"name": "a", "kind": "layers", "layers": ["x", "y"]})) == "imports"
    tables = {"name": "t", "kind": "forbidden", "from": "x", "to": {"type": "DatabaseTable"}}
    assert rule_reads(rule({**tables, "edges": ["READS_FROM"]})) == "tables"
    assert rule_reads(rule({**tables, "edges": ["CALLS"]})) == "all"
    assert rule_reads(rule({"name": "a", "kind": "acyclic", "level": "type"})) == "all"
    assert (
        rule_reads(
            rule({"name": "s", "kind": "forbidden", "from": "x", "to": "y", "edges": ["IMPORTS_SYMBOL"]})
        )
        == "all"
    )
    to_class = {"name": "c", "kind": "forbidden", "from": "x", "to": {"type": "Class"}}
    assert rule_reads(rule(to_class)) == "tables"  # the tables' graph has the declarations
    assert rule_reads(rule({**to_class, "to": {"type": "Route"}})) == "all"
    assert rule_reads(rule({"name": "r", "kind": "unused_route"})) == "all"
    assert needed_reads([]) == "imports"


def test_a_selector_only_the_full_map_can_pick_takes_the_full_map(tmp_path: Path) -> None:
    """A name pattern that picks only a class is no mistake: the check maps the tree in full and judges it
    there, rather than refusing a selector the lighter graph cannot see."""
    tree = make_tree("fixtures/python", tmp_path)
    full = graph_of(paths=[tree], reads="all")
    cls = next(n.name for n in full.nodes.values() if n.type == "Class")
    rules = [RULE_ADAPTER.validate_python({"name": "c", "kind": "forbidden", "from": cls, "to": "*"})]
    assert needed_reads(rules) == "imports"
    assert tree_graph([tree], FactsCache(None), rules)[1] == "all"
    report = check([tree], rules=rules)
    assert report.reads == "all" and report.violations == []


def everything(graph: DepGraph) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    """Every node and edge of ``graph`` by names, with where it stands."""
    nodes = sorted((n.type, n.name, n.file or "", n.line or 0) for n in graph.nodes.values())
    edges = sorted(
        (graph.name(e.source), e.type, graph.name(e.target), e.file or "", e.line or 0, e.type_checking)
        for e in graph.edges.values()
    )
    return nodes, edges


def test_a_map_after_an_imports_only_check_from_the_same_cache_is_whole(tmp_path: Path) -> None:
    """The facts an imports-only check leaves in the cache beside a store are keyed apart where they are
    lighter (Python, Go) and shared where they are the full analysis (Java, TypeScript): a map from that cache
    afterwards is the map made without it."""
    tree = make_tree("fixtures/polyglot", tmp_path)
    store = tmp_path / "store.sqlite"
    rules = [RULE_ADAPTER.validate_python({"name": "m", "kind": "acyclic", "level": "module"})]
    assert needed_reads(rules) == "imports"
    check([tree], rules=rules, store=store)
    with sqlite3.connect(sidecar_path(store, ".codefacts")) as db:
        keys = [k for (k,) in db.execute("SELECT key FROM facts")]
    apart = {k.split("\x00")[1].rpartition(".")[2] for k in keys if ".imports\x00" in k}
    shared = {k.split("\x00")[1].rpartition(".")[2] for k in keys if ".imports\x00" not in k}
    assert {"py", "go"} <= apart <= {"py", "go", "mod", "work"}  # go.mod and go.work: Go's files too
    assert {"java", "ts"} <= shared and not shared & apart
    cache = FactsCache(sidecar_path(store, ".codefacts"))
    try:
        result, _ = map_code([tree], store=store, cache=cache)
    finally:
        cache.close()
    fresh, _ = map_code([tree], store=tmp_path / "fresh.sqlite")
    mapped = session_depgraph(store, result.session_id)[0]
    assert everything(mapped) == everything(session_depgraph(tmp_path / "fresh.sqlite", fresh.session_id)[0])
    assert {n.type for n in mapped.nodes.values()} >= {"Class", "Method", "Function", "DatabaseTable"}
    assert "CALLS" in {e.type for e in mapped.edges.values()}


MODULES = ["app/__init__.py", "app/core.py", "app/db/__init__.py", "app/db/models.py", "app/web/views.py"]
"""The files of the generated Python trees (``app.web`` is a namespace portion: no ``__init__.py``)."""


def _statement(kind: int, target: int, nested: int) -> str:
    """One import (of a form ``kind`` picks) of module ``target``, at the top, in a function, under ``if
    TYPE_CHECKING:``, in ``try``/``except`` or in a class (``nested``)."""
    name = MODULES[target].removesuffix(".py").removesuffix("/__init__").replace("/", ".")
    parent, _, leaf = name.rpartition(".")
    forms = [
        f"import {name}",
        f"import {name} as alias",
        f"from {parent or name} import {leaf or '*'}",
        f"from {name} import *",
        f"from {name} import thing, other as o",
        "import os.path",
        "from collections import abc",
        f"from . import {leaf or 'x'}",
        f"from .{leaf} import thing" if leaf else "from . import y",
        "from .. import up",
    ]
    line = forms[kind % len(forms)]
    wrappers = [
        "{}\n",
        "def f():\n    {}\n    return 'SELECT * FROM orders'\n",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    {}\nelse:\n    import json\n",
        "try:\n    {}\nexcept ImportError:\n    {}\n",
        "class C:\n    def m(self):\n        {}\n        return f()\n",
    ]
    return wrappers[nested % len(wrappers)].replace("{}", line)


@settings(max_examples=120, deadline=None)
@given(
    st.lists(
        st.lists(st.tuples(st.integers(0, 9), st.integers(0, 4), st.integers(0, 4)), max_size=6),
        min_size=len(MODULES),
        max_size=len(MODULES),
    )
)
def test_the_imports_of_any_python_tree_are_the_full_maps(plan: list[list[tuple[int, int, int]]]) -> None:
    """Whatever the forms and places of a tree's imports, the imports-only link places the same IMPORTS edges
    (ends, statement, type-only flag, order), modules and packages as the full one."""
    schema = load_code_schema().compile()
    files = [
        SourceFile(path, "".join(_statement(*s) for s in statements))
        for path, statements in zip(MODULES, plan, strict=True)
    ]
    graphs = {}
    for reads in ("imports", "all"):
        facts, _ = parse_all(files, jobs=1, reads=reads)  # type: ignore[arg-type]
        graphs[reads] = model_graph(link(facts, reads=reads), schema)  # type: ignore[arg-type]
    light, full = graphs["imports"], graphs["all"]
    kept = {"Module", "Package"}
    assert list(light.nodes.values()) == [n for n in full.nodes.values() if n.type in kept]
    assert list(light.edges.values()) == [
        e
        for e in full.edges.values()
        if e.type == "IMPORTS" or e.type == "CONTAINS" and full.nodes[e.target].type in kept
    ]


@pytest.mark.parametrize("name", TREES)
def test_a_check_after_a_map_reads_the_maps_facts_and_parses_nothing(tmp_path: Path, name: str) -> None:
    """A map caches the full facts of every file; an imports-only check of the same tree finds its own facts
    missing for Python and Go (they read less for imports: keys of their own) and reads the map's instead,
    linked for their imports alone: the graph a check with an empty cache makes, nothing parsed. Each
    file's full facts and its imports alone compare alike for a graph of imports (``linked_alike``), so a
    kept graph built from either still answers for it."""
    from igg.codemap.walk import walk
    from igg.mapping.since import linked_alike, tree_state

    tree = make_tree(name, tmp_path)
    cache = FactsCache(tmp_path / "map.codefacts")
    full, _ = parse_all(walk([tree]).files, cache=cache, jobs=1, bodies=False)  # what a map caches
    state = tree_state([tree], cache, reads="imports")
    assert state.parsed == 0
    alone = tree_state([tree], FactsCache(None), reads="imports")
    assert state.graph == alone.graph and alone.parsed == len(alone.facts)
    for f in full:
        assert linked_alike(f, alone.facts[f.path], "imports"), f.path
