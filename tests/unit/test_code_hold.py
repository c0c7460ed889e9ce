"""Code maps that hold on every real tree: one bad file never fails a map, and no package is silently lost.

Each stage that reads one file (reading and decoding, parsing, fact extraction, SQL detection, the names kept
for ``--update``, a parse process) gets a fault injected for one file of a tree: the map still exits with a
graph, the file is ``partial`` or ``skipped`` with a reason, and the other files' graph is what it is without
the fault. Deep expressions, SQL strings that break the SQL parser and Java package folders with build-like
names map as they should.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from igg.codemap import guard, sql, walk
from igg.codemap.python import analyze as python
from igg.codemap.sql import tables_in
from igg.service import map_code
from tests.codegraph import CODE_FIXTURES
from tests.javaoracle import javac_missing

VICTIM = "shop/victim.py"
VICTIM_TEXT = '''"""A module the faults are injected into."""

from shop.models import Order


def ship(order: Order) -> None:
    order.pay()


def audit() -> str:
    return ship.__name__
'''


def _igg(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "igg", *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    shutil.copytree(CODE_FIXTURES / "python", root)
    (root / VICTIM).write_text(VICTIM_TEXT)
    return root


def _graph(state: Any, left_out: str) -> tuple[set[Any], set[Any]]:
    """The nodes and edges that belong to files other than ``left_out`` (content hashes and line counts
    aside), by their types and properties."""

    def key(n: str) -> Any:
        props = {k: v for k, v in state.node_properties(n).items() if k not in ("sha", "lines")}
        return state.node_type(n), tuple(sorted((k, json.dumps(v)) for k, v in props.items()))

    def theirs(n: str) -> bool:
        props = state.node_properties(n)
        return left_out in (props.get("path"), props.get("file"))

    nodes = {key(n) for n in state.nodes if not theirs(n)}
    edges = {
        (key(a), data["type"], key(b)) for _, a, b, data in state.edges() if not theirs(a) and not theirs(b)
    }
    return nodes, edges


def _map(root: Path) -> tuple[Any, dict[str, Any]]:
    result, summary = map_code([root], jobs=1)
    return result, summary


def _partial(summary: dict[str, Any]) -> dict[str, str]:
    return {p["path"]: p["error"] for p in summary["files"]["partial"]}


def test_the_cli_maps_a_tree_whose_sql_string_breaks_the_sql_parser(tmp_path: Path) -> None:
    """The issue's minimal case: sqlglot raised a TypeError on ``... WHERE b %s``; the map failed with exit
    1."""
    (tmp_path / "t" / "app").mkdir(parents=True)
    (tmp_path / "t" / "app" / "db.py").write_text('def q():\n    return "SELECT a FROM t WHERE b %s"\n')
    run = _igg("map-code", "t", "--no-store", "--quiet", "--json", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr
    out = json.loads(run.stdout)
    assert out["map_code"]["graph"]["nodes_by_type"] == {"Module": 1, "Function": 1}


@pytest.mark.parametrize(
    "query",
    [
        "SELECT a FROM orders WHERE b = %s",
        "SELECT a FROM orders WHERE b = %(name)s",
        "SELECT a FROM orders WHERE b = ?",
        "SELECT a FROM orders WHERE b = :name",
        "SELECT a FROM orders WHERE b = $1",
        "SELECT a FROM orders WHERE %s",  # %s standing for a piece of SQL ("... WHERE %s" % clause)
    ],
)
def test_every_drivers_placeholder_form_is_understood(query: str) -> None:
    assert [(r.table, r.op) for r in tables_in(query)] == [("orders", "read")]


@pytest.mark.parametrize(
    "query",
    [
        "SELECT a FROM %s",
        "SELECT a FROM ?",
        "SELECT a FROM :t",
        "SELECT a FROM $1",
        "INSERT INTO %(table)s (a) VALUES (%s)",
    ],
)
def test_a_placeholder_where_the_table_goes_names_no_table(query: str) -> None:
    assert tables_in(query) == []


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(
        ["SELECT ", "select * from t where ", "INSERT INTO t ", "UPDATE ", "WITH x AS ", "DELETE "]
    ),
    st.text(alphabet=st.sampled_from(list("abt ()=,.;?:$%s'\"`[]@><*-+{}\n0123456789")), max_size=60),
)
def test_sql_detection_never_raises(start: str, rest: str) -> None:
    """Whatever a candidate string holds, the answer is tables or none, never an exception."""
    found = tables_in(start + rest)
    assert all(r.table and r.op in ("read", "write") for r in found)


DEEP_PY = {
    "sum": "x = " + "+".join(["1"] * 3000) + "\n",
    "attributes": "import os\ny = os" + ".path" * 3000 + "\n",
    "concatenated SQL": 'def q():\n    return "SELECT id FROM t WHERE a = " + '
    + " + ".join(['"1"'] * 3000)
    + "\n",
}


@pytest.mark.parametrize("case", sorted(DEEP_PY))
def test_a_deep_python_expression_maps_whole(tmp_path: Path, case: str) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "deep.py").write_text(DEEP_PY[case] + "\n\ndef kept():\n    return 1\n")
    result, summary = _map(tmp_path)
    assert summary["files"]["partial"] == []
    functions = {result.state.node_properties(n)["name"] for n in result.state.nodes_of_type("Function")}
    assert "kept" in functions


def test_a_deep_java_expression_maps_whole(tmp_path: Path) -> None:
    src = tmp_path / "p"
    src.mkdir()
    (src / "A.java").write_text(
        "package p;\nclass A {\n  int x = " + " + ".join(["1"] * 3000) + ";\n"
        '  String s = "a"' + ' + "b"' * 3000 + ";\n"
        "  StringBuilder b = new StringBuilder()" + ".append(1)" * 3000 + ";\n"
        "  void f() { g(); }\n  void g() {}\n}\n"
    )
    result, summary = _map(tmp_path)
    assert summary["files"]["partial"] == []
    methods = {result.state.node_properties(n)["signature"] for n in result.state.nodes_of_type("Method")}
    assert {"f()", "g()"} <= methods
    assert summary["graph"]["edges_by_type"].get("CALLS") == 1


def test_a_file_deeper_than_the_second_attempt_is_partial_with_its_other_definitions_kept(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        guard, "DEEP_LIMIT", 1000
    )  # so that the 3,000-term sum fails on the second attempt too
    (tree / VICTIM).write_text(VICTIM_TEXT + "\nTOTAL = " + "+".join(["1"] * 3000) + "\n")
    before = _graph(_map(tree)[0].state, VICTIM)
    result, summary = _map(tree)
    error = _partial(summary)[VICTIM]
    assert error == "partial: nested too deeply to analyse whole; the top-level statement at line 13 left out"
    assert _graph(result.state, VICTIM) == before
    functions = {result.state.node_properties(n)["name"] for n in result.state.nodes_of_type("Function")}
    assert {"ship", "audit"} <= functions


def _fail_for_victim(function: Any) -> Any:
    def failing(path: str, *args: Any, **kwargs: Any) -> Any:
        if path == VICTIM:
            raise TypeError("injected fault")
        return function(path, *args, **kwargs)

    return failing


def test_a_fault_in_reading_one_file_skips_that_file_alone(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _graph(_map(tree)[0].state, VICTIM)
    decoded = walk._decoded
    monkeypatch.setattr(
        walk,
        "_decoded",
        lambda result, rel, data, language: (
            _fail_for_victim(lambda *a: None)(rel) if rel == VICTIM else decoded(result, rel, data, language)
        ),
    )
    result, summary = _map(tree)
    skipped = {s["path"]: s["reason"] for s in summary["files"]["skipped_paths"]}
    assert skipped[VICTIM] == "unreadable (TypeError: injected fault)"
    assert _graph(result.state, VICTIM) == before


def test_a_fault_in_parsing_one_file_makes_it_partial_and_keeps_its_imports(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _graph(_map(tree)[0].state, VICTIM)
    monkeypatch.setattr(python, "analyze_python", _fail_for_victim(python.analyze_python))
    result, summary = _map(tree)
    assert _partial(summary)[VICTIM] == (
        "partial: the analyzer failed (TypeError: injected fault); only its module and imports were read"
    )
    assert _graph(result.state, VICTIM) == before
    victim = next(
        n for n in result.state.nodes_of_type("Module") if result.state.node_properties(n)["path"] == VICTIM
    )
    imported = {
        result.state.node_properties(b).get("name")
        for _, a, b, d in result.state.edges()
        if a == victim and d["type"] == "IMPORTS"
    }
    assert imported == {"shop.models"}


def test_a_fault_in_one_statements_facts_leaves_that_statement_out(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _graph(_map(tree)[0].state, VICTIM)
    callable_ = python._Analyzer._callable

    def failing(self: Any, group: Any, *args: Any, **kwargs: Any) -> Any:
        if self.facts.path == VICTIM and group[0].name == "audit":
            raise KeyError("injected fault")
        return callable_(self, group, *args, **kwargs)

    monkeypatch.setattr(python._Analyzer, "_callable", failing)
    result, summary = _map(tree)
    assert _partial(summary)[VICTIM] == (
        "partial: the analyzer failed (KeyError: 'injected fault'); the top-level "
        "statement at line 10 left out"
    )
    assert _partial(summary)[VICTIM].endswith("line 10 left out")
    assert _graph(result.state, VICTIM) == before
    functions = {result.state.node_properties(n)["name"] for n in result.state.nodes_of_type("Function")}
    assert "ship" in functions and "audit" not in functions


def test_a_fault_in_hashing_one_file_keeps_its_facts(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from igg.codemap import cache

    before = _graph(_map(tree)[0].state, VICTIM)
    hashed = cache.content_hash
    monkeypatch.setattr(
        cache,
        "content_hash",
        lambda text: (_ for _ in ()).throw(ValueError("injected")) if "def ship" in text else hashed(text),
    )
    result, summary = _map(tree)
    assert _partial(summary)[VICTIM].startswith("partial: its content hash failed (ValueError)")
    assert _graph(result.state, VICTIM) == before
    functions = {result.state.node_properties(n)["name"] for n in result.state.nodes_of_type("Function")}
    assert {"ship", "audit"} <= functions


def test_a_fault_in_sql_detection_is_not_sql(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tree / VICTIM).write_text(
        VICTIM_TEXT + '\n\ndef log():\n    return "SELECT id FROM audit_log WHERE id = %s"\n'
    )
    nodes, edges = _graph(_map(tree)[0].state, VICTIM)
    parse = sql._parse

    def failing(text: str) -> Any:
        if "audit_log" in text:
            raise TypeError("injected fault")
        return parse(text)

    monkeypatch.setattr(sql, "_parse", failing)
    sql._tables.cache_clear()
    try:
        result, summary = _map(tree)
    finally:
        sql._tables.cache_clear()
    assert summary["files"]["partial"] == []
    audit_log = next(n for n in nodes if n[0] == "DatabaseTable" and ("name", '"audit_log"') in n[1])
    assert _graph(result.state, VICTIM) == (nodes - {audit_log}, edges)


def test_a_file_that_takes_too_long_is_partial(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = _graph(_map(tree)[0].state, VICTIM)
    analyze = python.analyze_python

    def slow(path: str, *args: Any) -> Any:
        if path == VICTIM:
            time.sleep(10)
        return analyze(path, *args)

    monkeypatch.setattr(python, "analyze_python", slow)
    monkeypatch.setattr(guard, "FILE_SECONDS", 0.5)
    started = time.perf_counter()
    result, summary = _map(tree)
    assert time.perf_counter() - started < 8
    assert (
        _partial(summary)[VICTIM]
        == "partial: took longer than 0.5 s to analyse; only its module and imports were read"
    )
    assert _graph(result.state, VICTIM) == before


def test_the_parse_processes_survive_a_file_that_kills_its_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """A parse process that dies (here: the analyzer exits on one file, as a crash in a parser's native code
    would end it) costs that file alone; the pool's processes are forked, so they see the injected fault."""
    import os

    from igg.codemap.sources import SourceFile
    from igg.mapping import prepare

    analyze = python.analyze_python

    def dying(path: str, text: str, module: str | None = None) -> Any:
        if "IGG_TEST_EXIT" in text:
            os._exit(3)
        return analyze(path, text, module)

    monkeypatch.setattr(python, "analyze_python", dying)
    files = [SourceFile(f"m{i}.py", f"def f{i}():\n    return {i}\n", f"m{i}") for i in range(80)]
    files[33] = SourceFile("m33.py", "import os\nX = 1  # IGG_TEST_EXIT\n", "m33")
    facts, used = prepare.parse_all(files, jobs=2)
    assert used == 2
    assert [f.path for f in facts] == [f.path for f in files]
    assert all(not f.error for i, f in enumerate(facts) if i != 33)
    assert facts[33].error is not None and facts[33].error.startswith("partial: its parse process failed")
    assert [i.target for i in facts[33].imports] == ["os"]


@pytest.fixture
def java_build_tree(tmp_path: Path) -> Path:
    root = tmp_path / "j"
    (root / "com/acme/build").mkdir(parents=True)
    (root / "com/acme/build/Step.java").write_text("package com.acme.build;\npublic class Step {}\n")
    (root / "com/acme/app").mkdir(parents=True)
    (root / "com/acme/app/App.java").write_text(
        "package com.acme.app;\nimport com.acme.build.Step;\npublic class App extends Step {}\n"
    )
    (root / "build/generated/com/acme").mkdir(parents=True)  # build output: generated sources, class files
    (root / "build/generated/com/acme/Gen.java").write_text("package com.acme;\npublic class Gen {}\n")
    (root / "target/classes/com/acme").mkdir(parents=True)
    (root / "target/classes/com/acme/App.class").write_bytes(b"\xca\xfe\xba\xbe")
    return root


def test_a_java_package_folder_named_build_is_read_and_build_output_is_not(java_build_tree: Path) -> None:
    result, summary = _map(java_build_tree)
    classes = {result.state.node_properties(n)["qualified_name"] for n in result.state.nodes_of_type("Class")}
    assert classes == {"com.acme.build.Step", "com.acme.app.App"}
    assert summary["graph"]["edges_by_type"]["EXTENDS"] == 1
    skipped = {s["path"]: s["reason"] for s in summary["files"]["skipped_paths"]}
    assert skipped == {
        "build/": "vendored or build directory (build)",
        "target/": "vendored or build directory (target)",
    }


@pytest.mark.skipif(
    javac_missing(), reason="javac is missing (scripts/test installs a JDK; or set JAVA_HOME)"
)
def test_a_java_build_package_agrees_with_javac(java_build_tree: Path, tmp_path: Path) -> None:
    from igg.codemap.link import link
    from igg.mapping.prepare import parse_all
    from tests.javaoracle import compile_and_read, f1, igg_truth

    shutil.rmtree(java_build_tree / "build")
    shutil.rmtree(java_build_tree / "target")
    truth = compile_and_read(java_build_tree, tmp_path / "classes")
    ours = igg_truth(link(parse_all(walk.walk([java_build_tree]).files, jobs=1)[0]))
    assert f1(set(truth.types), set(ours.types))["recall"] == 1.0
    assert f1(truth.supertypes, ours.supertypes)["f1"] == 1.0


def _sources_of_real_code() -> list[Path]:
    import email
    import json as json_package

    roots = [
        Path(python.__file__).parents[2],
        Path(email.__file__).parent,
        Path(json_package.__file__).parent,
    ]
    return sorted(p for root in roots for p in root.rglob("*.py"))


def test_top_level_statements_are_the_statements_python_parses() -> None:
    """The tokenizer-only splitter (the fallback for files the parser cannot take whole) agrees with ``ast``
    on real code: IGG's own package and two standard-library packages."""
    import ast

    checked = 0
    for path in _sources_of_real_code():
        text = path.read_text(encoding="utf-8")
        expected = [
            (min([n.lineno, *(d.lineno for d in getattr(n, "decorator_list", []))]), n.end_lineno)
            for n in ast.parse(text).body
        ]
        assert guard.top_level_statements(text) == expected, path
        checked += 1
    assert checked > 150


@pytest.mark.parametrize("shape", ["sum", "unary"])
def test_an_expression_deeper_than_any_attempt_is_partial_and_crashes_nothing(
    tmp_path: Path, shape: str
) -> None:
    """120,000 levels: more than the second attempt allows (a segmentation fault at a higher limit). The map
    runs in a process of its own, so a crash would show as a signal, not take the test runner down."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    expression = "+".join(["1"] * 120_000) if shape == "sum" else "-" * 120_000 + "1"
    (tmp_path / "pkg" / "deep.py").write_text(
        f"import os\n\n\ndef kept():\n    return os.sep\n\n\nX = {expression}\n"
    )
    run = _igg("map-code", "pkg", "--no-store", "--quiet", "--json", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    files = json.loads(run.stdout)["map_code"]["files"]
    assert [(p["path"], p["line"]) for p in files["partial"]] == [("deep.py", 8)]
    assert files["partial"][0]["error"].startswith("partial: ")
    assert json.loads(run.stdout)["map_code"]["graph"]["nodes_by_type"]["Function"] == 1
