"""Code-map edges carry their sites (``file``, ``line``, ``column``, ``sites``, ``site_count``), checked
against independent oracles: Python's own parser (``ast``) for the Python trees, the Java files' text and
javac's bytecode line tables (``javap -c -l``) for the Java trees (``tests/sitesoracle.py``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from igg.agents.code import CodeAgent
from igg.codemap.cache import FactsCache
from igg.codemap.columns import Columns
from igg.codemap.model import SITE_CAP, site_properties
from igg.codemap.walk import walk
from igg.mapping.update import update_map
from igg.service import map_code
from igg.store import SessionStore
from igg.store.location import sidecar_path
from tests.codegraph import CODE_FIXTURES, code_request, drive
from tests.javaoracle import javac_missing
from tests.sitesoracle import SitedEdge, java_mismatches, javap_call_lines, python_mismatches, sited_edges

PYTHON_TREES = ["python", "polyglot"]
JAVA_TREES = ["java", "java_calls", "java_calls2", "java_calls3", "java_calls4"]
SITED = {
    "IMPORTS",
    "IMPORTS_SYMBOL",
    "CALLS",
    "INSTANTIATES",
    "EXTENDS",
    "IMPLEMENTS",
    "READS_FROM",
    "WRITES_TO",
}


def mapped(root: Path) -> Any:
    """The graph the code agent builds of ``root`` through the real act step."""
    state, _, _ = drive(CodeAgent(sources=walk([root]).files), code_request())
    return state


@pytest.fixture(scope="module")
def graphs() -> dict[str, Any]:
    return {name: mapped(CODE_FIXTURES / name) for name in PYTHON_TREES + JAVA_TREES}


def _edges(state: Any, types: set[str] | None = None) -> list[SitedEdge]:
    return [e for e in sited_edges(state) if types is None or e.type in types]


@pytest.mark.parametrize("tree", PYTHON_TREES + JAVA_TREES)
def test_every_edge_but_contains_carries_its_sites_in_source_order_up_to_the_cap(
    graphs: dict[str, Any], tree: str
) -> None:
    state = graphs[tree]
    kinds = set()
    for _, _, _, d in state.edges():
        props = d["properties"]
        if d["type"] == "CONTAINS":
            assert props == {}
            continue
        assert d["type"] in SITED
        kinds.add(d["type"])
        sites = [s.rsplit(":", 2) for s in props["sites"]]
        assert 1 <= len(sites) <= SITE_CAP and props["site_count"] >= len(sites)
        assert len(sites) == min(props["site_count"], SITE_CAP)
        assert [props["file"], str(props["line"]), str(props["column"])] == sites[0]
        keys = [(p, int(n), int(c)) for p, n, c in sites]
        assert keys == sorted(set(keys))
        assert all(n >= 1 and c >= 1 for _, n, c in keys)
        assert all((CODE_FIXTURES / tree / p).is_file() for p, _, _ in keys)
    assert {"CALLS", "IMPORTS"} <= kinds


@pytest.mark.parametrize("tree", PYTHON_TREES)
def test_every_python_site_starts_the_call_import_class_or_string_the_compilers_parser_finds_there(
    graphs: dict[str, Any], tree: str
) -> None:
    edges = _edges(graphs[tree])
    checked = sum(len(e.sites) for e in edges if any(p.endswith(".py") for p, _, _ in e.sites))
    assert checked > (20 if tree == "python" else 0)
    assert python_mismatches(CODE_FIXTURES / tree, edges) == []


@pytest.mark.parametrize("tree", JAVA_TREES)
def test_every_java_import_and_call_site_holds_the_import_or_the_called_name(
    graphs: dict[str, Any], tree: str
) -> None:
    bad, checked = [], 0
    for e in _edges(graphs[tree], {"CALLS", "IMPORTS", "IMPORTS_SYMBOL"}):
        for path, line, column in e.sites:
            text = (CODE_FIXTURES / tree / path).read_text(encoding="utf-8").split("\n")[line - 1]
            at = text[column - 1 :]
            checked += 1
            if e.type != "CALLS":
                ok = at.startswith("import ")
            elif (
                e.target_type != "Method"
            ):  # a call known to reach a type, or the default constructor's super()
                ok = "(" in text or e.source_type != "Method" or at.startswith(("switch", "super", "this"))
            elif e.target.get(
                "constructor"
            ):  # this(...)/super(...), or the implicit super() of a constructor
                ok = (
                    at.startswith(("super", "this"))
                    or e.source.get("constructor") is True
                    and e.target["name"] in text
                )
            else:  # the called method's name
                ok = at.startswith(e.target["name"]) or e.target["name"] == "close" and "try" in text
            if not ok:
                bad.append(f"{e.type} -> {e.target.get('name')} at {path}:{line}:{column}: {text.strip()!r}")
    assert checked > 10
    assert bad == []


@pytest.mark.skipif(
    javac_missing(), reason="javac is missing (scripts/test installs a JDK with apt-get when it can)"
)
@pytest.mark.parametrize("tree", JAVA_TREES)
def test_every_java_call_site_is_a_call_line_of_its_method_in_the_bytecode(
    graphs: dict[str, Any], tree: str, tmp_path: Path
) -> None:
    state = graphs[tree]
    types = {
        state.node_properties(n)["qualified_name"]: state.node_properties(n)
        for n in state.graph.nodes
        if state.node_type(n) in ("Class", "Interface", "Enum")
    }
    lines = javap_call_lines(CODE_FIXTURES / tree, tmp_path)
    checked, bad = java_mismatches(_edges(state, {"CALLS"}), types, lines)
    assert checked > 5
    assert bad == []


def test_site_properties_keep_the_first_sites_in_source_order_and_count_them_all() -> None:
    sites = {("b.py", 3, 1), *(("a.py", n, 5) for n in range(20, 0, -1))}
    props = site_properties(sites)
    assert (props["file"], props["line"], props["column"], props["site_count"]) == ("a.py", 1, 5, 21)
    assert props["sites"] == [f"a.py:{n}:5" for n in range(1, SITE_CAP + 1)]


def test_several_statements_of_one_dependency_are_one_edge_with_every_site(tmp_path: Path) -> None:
    root = tmp_path / "t"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "util.py").write_text("def helper():\n    return 1\n")
    calls = "".join(f"    x = helper() + {i}\n" for i in range(SITE_CAP + 2))
    (root / "pkg" / "main.py").write_text(
        "from pkg.util import helper\nimport pkg.util\n\n\ndef run():\n"
        + calls
        + "    return pkg.util.helper()\n"
    )
    state = mapped(root)
    (edge,) = [e for e in sited_edges(state) if e.type == "CALLS"]
    assert edge.properties["site_count"] == SITE_CAP + 3
    assert edge.properties["sites"][:2] == ["pkg/main.py:6:9", "pkg/main.py:7:9"]
    assert len(edge.properties["sites"]) == SITE_CAP
    (imports,) = [
        e for e in sited_edges(state) if e.type == "IMPORTS" and e.target.get("path") == "pkg/util.py"
    ]
    assert imports.properties["sites"] == ["pkg/main.py:1:1", "pkg/main.py:2:1"]


def test_columns_count_characters_not_bytes(tmp_path: Path) -> None:
    root = tmp_path / "t"
    root.mkdir()
    (root / "a.py").write_text("def f():\n    return 1\n")
    (root / "b.py").write_text("from a import f\n\n\ndef g():\n    s = 'é€'; return f()\n", encoding="utf-8")
    (edge,) = [e for e in sited_edges(mapped(root)) if e.type == "CALLS"]
    assert edge.properties["sites"] == ["b.py:5:22"]  # byte offset 24: é and € take 2 and 3 bytes
    assert "    s = 'é€'; return f()"[21:].startswith("f()")


def _graph(store: Path, session: str) -> tuple[dict[Any, Any], set[Any]]:
    _, state, _ = SessionStore(store).load_state(session)
    key = {
        n: (state.node_type(n), state.identity(state.node_type(n), state.node_properties(n)))
        for n in state.graph.nodes
    }
    return (
        {key[n]: state.node_properties(n) for n in state.graph.nodes},
        {
            (d["type"], key[u], key[v], json.dumps(d["properties"], sort_keys=True))
            for _, u, v, d in state.edges()
        },
    )


def _edge(store: Path, session: str, edge_type: str, source_path: str, target: str) -> dict[str, Any]:
    _, state, _ = SessionStore(store).load_state(session)
    for _, u, v, d in state.edges():
        if (
            d["type"] == edge_type
            and state.node_properties(u).get("file", state.node_properties(u).get("path")) == source_path
            and target in (state.node_properties(v).get("name"), state.node_properties(v).get("path"))
        ):
            return dict(d["properties"])
    raise AssertionError(f"no {edge_type} from {source_path} to {target}")


UPDATES = [
    ("python", "shop/service.py", "# two lines\n# above everything\n", "logging"),
    (
        "java",
        "src/main/java/com/acme/service/AuthService.java",
        "// two lines\n// above everything\n",
        "src/main/java/com/acme/model/User.java",
    ),
]


@pytest.mark.parametrize("whole", [False, True], ids=["changed-files-linked", "whole-graph-diffed"])
@pytest.mark.parametrize(("tree", "path", "header", "imported"), UPDATES, ids=["python", "java"])
def test_an_update_after_lines_inserted_above_an_import_and_a_call_moves_their_sites_as_a_fresh_map(
    tmp_path: Path, tree: str, path: str, header: str, imported: str, whole: bool
) -> None:
    """Both ways an update plans (only the changed file linked again; every file, when a file was added
    too in a folder of its own)."""
    root = tmp_path / "tree"
    shutil.copytree(CODE_FIXTURES / tree, root)
    store = tmp_path / "s.db"
    cache = FactsCache(
        sidecar_path(store, ".codefacts")
    )  # the facts an update reads of the files it does not parse again
    try:
        map_code([root], agent="code", jobs=1, store=store, session_id="m", cache=cache)
    finally:
        cache.close()
    before_import = _edge(store, "m", "IMPORTS", path, imported)
    calls = _call_sites(store, "m", path)
    assert calls
    (root / path).write_text(header + (root / path).read_text())
    if whole:  # a file added in a folder of its own: every file is linked again and the whole graph compared
        added = (root / path).parent / "extra" / ("added.py" if tree == "python" else "Added.java")
        added.parent.mkdir()
        added.write_text(
            "X = 1\n" if tree == "python" else "package com.acme.service.extra;\n\nclass Added {}\n"
        )
    result = update_map([root], store, session_id="m", jobs=1)
    assert result.files["relinked"] == (result.files["read"] if whole else 1)
    assert result.graph["edges_changed"] > 0
    assert result.graph["edges_removed"] == 0
    fresh = tmp_path / "fresh.db"
    map_code([root], agent="code", jobs=1, store=fresh, session_id="f")
    assert _graph(store, "m") == _graph(fresh, "f")
    assert _edge(store, "m", "IMPORTS", path, imported)["line"] == before_import["line"] + 2
    assert _call_sites(store, "m", path) == {(line + 2, column) for line, column in calls}


def _call_sites(store: Path, session: str, path: str) -> set[tuple[int, int]]:
    """(line, column) of every site of the CALLS edges stated in ``path``."""
    _, state, _ = SessionStore(store).load_state(session)
    out = set()
    for _, _, _, d in state.edges():
        if d["type"] == "CALLS":
            for site in d["properties"]["sites"]:
                where, line, column = site.rsplit(":", 2)
                if where == path:
                    out.add((int(line), int(column)))
    return out


JAVA_SHAPES = {
    "a/Base.java": """package a;

public class Base implements AutoCloseable {
    public Base() {
    }

    public Base self() {
        return this;
    }

    public void close() {
    }
}
""",
    "a/Kind.java": "package a;\n\npublic enum Kind { ONE, TWO }\n",
    "a/Child.java": """package a;

import java.util.List;

public class Child extends Base {
    private final Runnable task = () -> helper();

    public Child(int a,
                 int b)
    {
        helper();
    }

    static int helper() {
        return 1;
    }

    int shapes(List<Base> all, Kind kind) {
        Runnable r = new Runnable() {
            public void run() {
                helper();
            }
        };
        all.forEach(b -> b
            .self()
            .self());
        try (Base resource = new Base()) {
            resource.self();
        }
        switch (kind) {
            case ONE:
                return helper();
            default:
                return 0;
        }
    }
}
""",
}


@pytest.mark.skipif(
    javac_missing(), reason="javac is missing (scripts/test installs a JDK with apt-get when it can)"
)
def test_java_sites_of_implicit_super_lambdas_anonymous_classes_chains_and_resources_are_javacs_lines(
    tmp_path: Path,
) -> None:
    """An implicit ``super()`` is at the constructor body's ``{`` (javac's line, not the declaration's); a
    chain's calls each at their own name's line; calls in lambdas, field initialisers and anonymous classes
    count as the enclosing method's, at their own lines."""
    root = tmp_path / "src"
    for path, text in JAVA_SHAPES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    state = mapped(root)
    types = {
        state.node_properties(n)["qualified_name"]: state.node_properties(n)
        for n in state.graph.nodes
        if state.node_type(n) in ("Class", "Interface", "Enum")
    }
    calls = _edges(state, {"CALLS"})
    checked, bad = java_mismatches(calls, types, javap_call_lines(root, tmp_path / "classes"))
    assert bad == []
    sites = {(e.source.get("name"), e.target.get("name")): e.properties["sites"] for e in calls}
    assert sites[("Child", "Base")] == ["a/Child.java:10:5"]
    assert sites[("shapes", "self")] == ["a/Child.java:25:14", "a/Child.java:26:14", "a/Child.java:28:22"]
    assert sites[("shapes", "helper")] == ["a/Child.java:21:17", "a/Child.java:32:24"]
    assert checked == sum(len(s) for s in sites.values())


def test_the_rules_graph_of_a_stored_map_reads_the_edges_sites_without_parsing_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import igg.mapping.depgraph as depgraph

    store = tmp_path / "s.db"
    map_code([CODE_FIXTURES / "python"], agent="code", jobs=1, store=store, session_id="m")
    monkeypatch.setattr(depgraph, "parse_all", lambda *a, **k: pytest.fail("parsed again"))
    graph, state = depgraph.session_depgraph(store, "m")
    sited = {k: d["properties"] for k, _, _, d in state.edges() if d["type"] != "CONTAINS"}
    assert sited
    located = [e for e in graph.edges.values() if e.type != "CONTAINS"]
    assert len(located) == len(sited)
    assert {(e.file, e.line) for e in located} == {(p["file"], p["line"]) for p in sited.values()}


@pytest.mark.parametrize("tree", ["typescript", "go"])
def test_every_typescript_and_go_call_site_is_the_called_name_and_every_import_site_its_statement(
    tree: str,
) -> None:
    """TypeScript, JavaScript and Go give a call's site at the called name (as Java), an import's at its
    statement (Go: its import spec; ``require()``/``import()``: the module string)."""
    root = CODE_FIXTURES / tree
    state, _, _ = drive(
        CodeAgent(sources=walk([root]).files), code_request(max_nodes=10**6, max_edges=10**6), max_turns=10**4
    )
    bad, checked = [], 0
    for e in sited_edges(state):
        for path, line, column in e.sites:
            text = (root / path).read_text(encoding="utf-8").split("\n")[line - 1]
            at = text[column - 1 :]
            name = str(e.target.get("name", "")).rpartition(".")[2]
            if e.type == "CALLS" and e.target_type in ("Method", "Function") and name != "constructor":
                checked += 1
                ok = at.startswith(name)
            elif e.type == "IMPORTS":
                checked += 1
                ok = (
                    at.startswith(("import", "export", "'", '"', "`"))
                    if tree == "typescript"
                    else (at[:1] == '"' or at[:1].isidentifier() or at[:1] == ".")
                )
            else:
                continue
            if not ok:
                bad.append(f"{e.type} -> {name} at {path}:{line}:{column}: {text.strip()!r}")
    assert checked > 100
    assert bad == []


def test_the_rules_graph_of_a_tree_locates_each_edge_at_the_site_the_maps_edge_carries(
    tmp_path: Path,
) -> None:
    """``igg check PATH`` (the model's graph, no map) and ``igg check --session`` (the stored map) put every
    edge at the same file and line: its first site in source order."""
    from igg.agents.code import load_code_schema
    from igg.codemap.link import link
    from igg.mapping.depgraph import model_graph, session_depgraph
    from igg.mapping.prepare import parse_all

    nested = (
        tmp_path / "nested"
    )  # the analyser meets the call at line 8 first (breadth first); line 7 comes first
    nested.mkdir()
    (nested / "m.py").write_text("def f():\n    return 1\n\n\ndef g(x):\n    if x:\n        f()\n    f()\n")
    for root in (CODE_FIXTURES / "python", CODE_FIXTURES / "java", nested):
        store = tmp_path / f"{root.name}.db"
        map_code([root], agent="code", jobs=1, store=store, session_id="m")
        stored, _ = session_depgraph(store, "m")
        facts, _ = parse_all(walk([root]).files, jobs=1)
        fresh = model_graph(link(facts), load_code_schema().compile())
        names = {
            **{k: n.name for k, n in stored.nodes.items()},
            **{k: n.name for k, n in fresh.nodes.items()},
        }

        def located(graph: Any) -> set[tuple[Any, ...]]:
            return {
                (e.type, names[e.source], names[e.target], e.file, e.line)  # noqa: B023
                for e in graph.edges.values()
                if e.type != "CONTAINS"
            }

        assert located(stored) == located(fresh)
        assert len(located(fresh)) > (10 if root != nested else 0)
    assert ("CALLS", "m.g", "m.f", "m.py", 7) in located(fresh)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab \té€😀\n"), max_size=40))
def test_a_columns_byte_offset_is_the_character_column_on_every_line(text: str) -> None:
    """``Columns`` (the ASCII shortcut and the decoding path alike) turns each character's UTF-8 byte offset
    in its line into its 1-based character column."""
    columns = Columns(text)
    for number, line in enumerate(text.split("\n"), start=1):
        for i in range(len(line) + 1):
            assert columns(number, len(line[:i].encode("utf-8"))) == i + 1
