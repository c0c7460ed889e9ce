"""``igg check``: every rule kind on the typed graph (Python and Java, modules and tables), the violations'
paths with their files and lines, the exit codes (0 clean, 1 violations, 2 a bad rules file that names the
rule and field), SARIF 2.1.0 valid against the official schema, GitHub annotations, and a stored session
judged like its tree."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import jsonschema
import pytest

from igg.codemap.cache import FactsCache
from igg.codemap.schema import load_code_schema
from igg.interfaces.cli import main
from igg.mapping.depgraph import state_lines
from igg.mapping.since import tree_state
from igg.rules.check import check
from igg.rules.depgraph import from_state
from igg.rules.load import parse_rules
from igg.service import map_code

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "code"
SARIF_SCHEMA = Path(__file__).resolve().parents[1] / "sarif" / "sarif-schema-2.1.0.json"

TREE = {
    "shop/__init__.py": "",
    "shop/api/__init__.py": "",
    "shop/api/views.py": "from shop.service import orders\n",
    "shop/service/__init__.py": "",
    "shop/service/orders.py": "import json\n\nfrom shop.db import models\nimport shop.api.views\n",
    "shop/db/__init__.py": "",
    "shop/db/models.py": "import sqlite3\n",
    "shop/util.py": "\n\nfrom shop.db.models import x\n",
}

RULES = """
[[rules]]
name = "layered"
kind = "layers"
layers = ["shop.api", "shop.service", "shop.db"]

[[rules]]
name = "util-not-db"
kind = "forbidden"
from = "shop.util*"
to = "shop.db*"
edges = ["IMPORTS"]

[[rules]]
name = "service-acyclic"
kind = "acyclic"
select = "shop*"
level = "module"

[[rules]]
name = "db-stdlib-only"
kind = "allowed_only"
from = "shop.db"
to = [{external = true, name = "os"}]
"""


def write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    write(tmp_path, TREE)
    (tmp_path / "igg.toml").write_text(RULES, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("IGG_STORE", str(tmp_path / "store.sqlite"))
    return tmp_path


def test_each_kind_reports_its_violations_with_the_path_and_each_edges_file_and_line(
    repo: Path, capsys
) -> None:
    assert main(["check", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    by_rule: dict[str, list[dict]] = {}
    for v in report["violations"]:
        by_rule.setdefault(v["rule"], []).append(v)
    (layered,) = by_rule["layered"]
    assert [(h["source"], h["target"], h["file"], h["line"]) for h in layered["path"]] == [
        ("shop.service.orders", "shop.api.views", "shop/service/orders.py", 4)
    ]
    assert "shop.service may not depend on shop.api, a higher layer" in layered["message"]
    (forbidden,) = by_rule["util-not-db"]
    assert forbidden["path"][0]["line"] == 3 and forbidden["path"][0]["file"] == "shop/util.py"
    (cycle,) = by_rule["service-acyclic"]
    assert {h["source"] for h in cycle["path"]} == {"shop.api.views", "shop.service.orders"}
    assert [(h["source"], h["line"]) for h in cycle["breaking_edges"]] in (
        [("shop.service.orders", 4)],
        [("shop.api.views", 1)],
    )
    (allowed,) = by_rule["db-stdlib-only"]
    assert allowed["path"][0]["target"] == "sqlite3" and allowed["path"][0]["line"] == 1
    assert report["failed"] is True
    assert [r["violations"] for r in report["rules"]] == [1, 1, 1, 1]


def test_a_clean_tree_exits_0_and_a_warning_does_not_fail(repo: Path, capsys) -> None:
    (repo / "igg.toml").write_text(
        textwrap.dedent("""
        [[rules]]
        name = "api-not-db"
        kind = "forbidden"
        from = "shop.api"
        to = "shop.db"
        [[rules]]
        name = "util-not-db"
        kind = "forbidden"
        from = "shop.util"
        to = "shop.db"
        severity = "warning"
    """),
        encoding="utf-8",
    )
    assert main(["check"]) == 0
    out = capsys.readouterr().out
    assert "warning: util-not-db (forbidden)" in out and "igg check passed: 1 violation" in out


def test_transitive_forbidden_finds_the_chain_and_through_allows_it(repo: Path) -> None:
    graph = tree_state([repo / "shop"], FactsCache(None)).graph
    rules = parse_rules(
        {
            "rules": [
                {"name": "t", "kind": "forbidden", "from": "shop.api", "to": "shop.db", "transitive": True},
                {
                    "name": "via",
                    "kind": "forbidden",
                    "from": "shop.api",
                    "to": "shop.db",
                    "transitive": True,
                    "through": "shop.service",
                },
                {"name": "direct", "kind": "forbidden", "from": "shop.api", "to": "shop.db"},
            ]
        }
    )
    found = check(graph, rules)
    assert [(v.rule, [h.target for h in v.path]) for v in found] == [
        ("t", ["shop.service.orders", "shop.db.models"])
    ]


def test_pyproject_tool_igg_holds_the_same_rules(repo: Path, capsys) -> None:
    (repo / "igg.toml").unlink()
    (repo / "pyproject.toml").write_text(
        "[project]\nname = 'shop'\n\n" + RULES.replace("[[rules]]", "[[tool.igg.rules]]"), encoding="utf-8"
    )
    assert main(["check", "--json"]) == 1
    assert len(json.loads(capsys.readouterr().out)["violations"]) == 4


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[[rules]]\nname = "x"\nkind = "forbidden"\nto = "a"\n', "rules[0] 'x': field 'from': required"),
        (
            '[[rules]]\nname = "x"\nkind = "layer"\nlayers = ["a", "b"]\n',
            "rules[0] 'x': field 'kind': 'layer' is not a kind; use one of forbidden, layers",
        ),
        (
            (
                '[[rules]]\nname = "ok"\nkind = "acyclic"\n[[rules]]\nname = "lvl"\nkind = "acyclic"\nlevel ='
                ' "file"\n'
            ),
            "rules[1] 'lvl': field 'level': Input should be 'module', 'package', 'type' or 'service'",
        ),
        (
            '[[rules]]\nname = "x"\nkind = "forbidden"\nfrom = "a"\nto = "b"\nedges = ["IMPORT"]\n',
            "rules[0] 'x': field 'edges': 'IMPORT' is no edge type of the graph's schema",
        ),
        (
            (
                '[[rules]]\nname = "x"\nkind = "forbidden"\nfrom = "a"\nto = {type = "DatabaseTable", nme ='
                ' "p"}\n'
            ),
            "rules[0] 'x': field 'to.nme': unknown field",
        ),
        (
            '[[rules]]\nname = "x"\nkind = "acyclic"\n[[rules]]\nname = "x"\nkind = "acyclic"\n',
            "rules[1] 'x'.name: the name is taken by rules[0]",
        ),
        ("[[rules]\nname = 1", "not valid TOML"),
        ("", "rules: no rules: add [[rules]] tables"),
    ],
)
def test_a_bad_rules_file_exits_2_naming_the_rule_and_field(
    repo: Path, capsys, text: str, expected: str
) -> None:
    (repo / "igg.toml").write_text(text, encoding="utf-8")
    assert main(["check"]) == 2
    err = capsys.readouterr().err
    assert expected in err and "Traceback" not in err


def test_no_rules_file_and_a_missing_path_exit_2(repo: Path, capsys) -> None:
    (repo / "igg.toml").unlink()
    assert main(["check"]) == 2
    assert "no rules file: write igg.toml" in capsys.readouterr().err
    assert main(["check", "--rules", "nowhere.toml"]) == 2
    assert "cannot read nowhere.toml" in capsys.readouterr().err
    assert main(["check", "shop", "missing"]) == 2
    assert "missing: no such file or folder" in capsys.readouterr().err
    assert main(["check", "--new-only"]) == 2
    assert "--new-only: needs --since REF" in capsys.readouterr().err


def test_sarif_is_valid_sarif_2_1_0_with_a_result_per_violation_at_its_file_and_line(
    repo: Path, capsys
) -> None:
    assert main(["check", "shop", "--sarif", "out.sarif", "--root", "."]) == 1
    log = json.loads((repo / "out.sarif").read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))).validate(log)
    run = log["runs"][0]
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == [
        "layered",
        "util-not-db",
        "service-acyclic",
        "db-stdlib-only",
    ]
    assert len(run["results"]) == 4
    first = run["results"][0]
    assert first["ruleId"] == "layered" and first["level"] == "error"
    location = first["locations"][0]["physicalLocation"]
    assert location == {
        "artifactLocation": {"uri": "shop/service/orders.py", "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 4},
    }


def test_github_format_writes_one_escaped_annotation_per_violation(repo: Path, capsys) -> None:
    assert main(["check", "--format", "github"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 4
    assert lines[0].startswith("::error file=shop/service/orders.py,line=4,title=igg layers rule layered::")
    assert all("\n" not in line for line in lines) and "%0A" in lines[0]


def test_table_access_is_a_forbidden_rule_over_reads_and_writes_in_java() -> None:
    graph = tree_state([FIXTURES / "java"], FactsCache(None)).graph
    rules = parse_rules(
        {
            "rules": [
                {
                    "name": "no-sessions",
                    "kind": "forbidden",
                    "from": "com.acme.repo",
                    "edges": ["WRITES_TO"],
                    "to": {"type": "DatabaseTable", "name": "sessions"},
                },
                {
                    "name": "no-users",
                    "kind": "forbidden",
                    "from": "com.acme.service",
                    "edges": ["READS_FROM", "WRITES_TO"],
                    "to": {"type": "DatabaseTable", "name": "users"},
                },
            ]
        },
        edge_types=load_code_schema(None).edge_types,
    )
    found = check(graph, rules)
    assert {v.rule for v in found} == {"no-sessions"}
    (v,) = found
    assert v.path[0].file == "src/main/java/com/acme/repo/JdbcUserRepository.java" and v.path[0].line == 36


@pytest.mark.parametrize("fixture", ["python", "java"])
def test_the_rules_graph_of_a_tree_is_the_graph_map_code_builds(fixture: str) -> None:
    """The fast path (no loop) places the same nodes and edges, at the same statements, as a fresh map."""
    facts = FactsCache(None)
    state = tree_state([FIXTURES / fixture], facts)
    result, _ = map_code([FIXTURES / fixture])
    mapped = from_state(result.state, state_lines(result.state, state.model))

    def named(g):
        return (
            {(n.type, n.name, n.file) for n in g.nodes.values()},
            {(g.name(e.source), e.type, g.name(e.target), e.file, e.line) for e in g.edges.values()},
        )

    assert named(state.graph) == named(mapped)
    assert all(e.line for e in mapped.edges.values() if e.type == "IMPORTS")


def test_a_stored_session_is_judged_like_its_tree_with_lines(repo: Path, capsys) -> None:
    store = repo / "store.sqlite"
    assert main(["map-code", "shop", "--store", str(store), "--session", "shop-map", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["check", "shop", "--json"]) == 1
    from_tree = json.loads(capsys.readouterr().out)["violations"]
    assert main(["check", "shop-map", "--store", str(store), "--json"]) == 1
    from_session = json.loads(capsys.readouterr().out)["violations"]
    assert [v["path"] for v in from_session] == [v["path"] for v in from_tree]
    shutil.rmtree(repo / "shop")  # the session keeps its files: the sources need not be there
    assert main(["check", "shop-map", "--store", str(store), "--json"]) == 1
    assert [v["path"] for v in json.loads(capsys.readouterr().out)["violations"]] == [
        v["path"] for v in from_tree
    ]


def test_a_big_cycles_message_names_a_few_of_its_cut_and_lists_all_of_it(tmp_path: Path) -> None:
    """Four modules importing each other: the cut has more dependencies than the one-line message names; the
    message says how many, and ``breaking_edges`` lists every one with its file and line."""
    names = ["a", "b", "c", "d"]
    files = {"ring/__init__.py": ""}
    for n in names:
        files[f"ring/{n}.py"] = "".join(f"import ring.{m}\n" for m in names if m != n)
    write(tmp_path, files)
    graph = tree_state([tmp_path / "ring"], FactsCache(None)).graph
    (found,) = check(graph, parse_rules({"rules": [{"name": "ring", "kind": "acyclic", "select": "ring"}]}))
    cut = len(found.breaking_edges)
    assert cut > 3
    assert (
        f"removing these {cut} dependencies (" in found.message
        and f"and {cut - 3} more) breaks it" in found.message
    )
    assert all(e.file and e.line for e in found.breaking_edges)


def test_violations_come_in_statement_order_whatever_order_the_graph_was_built_in() -> None:
    """A rule lists its violations by file and line (then by the names of their ends), never by the order the
    edges were added: the tree's map, a stored session (whose edges came in the order its step added them)
    and an updated one (whose new edges come last) list them alike."""
    from igg.rules.depgraph import DepGraph, Edge, make_node

    rules = parse_rules(
        {"rules": [{"name": "no-db", "kind": "forbidden", "from": "app*", "to": "db*", "edges": ["IMPORTS"]}]}
    )
    edges = [
        Edge("m:app.b", "IMPORTS", "m:db.y", file="app/b.py", line=2),
        Edge("m:app.a", "IMPORTS", "m:db.y", file="app/a.py", line=7),
        Edge("m:app.a", "IMPORTS", "m:db.x", file="app/a.py", line=7),
        Edge("m:app.a", "IMPORTS", "m:db.z", file="app/a.py", line=3),
    ]
    shown = []
    for order in (edges, edges[::-1], [edges[2], edges[0], edges[3], edges[1]]):
        graph = DepGraph()
        for name in ("app.a", "app.b", "db.x", "db.y", "db.z"):
            graph.add_node(make_node(f"m:{name}", "Module", {"name": name, "language": "python"}))
        for e in order:
            graph.add_edge(e)
        shown.append([(v.path[0].file, v.path[0].line, v.path[0].target) for v in check(graph, rules)])
    assert (
        shown[0]
        == shown[1]
        == shown[2]
        == [
            ("app/a.py", 3, "db.z"),
            ("app/a.py", 7, "db.x"),
            ("app/a.py", 7, "db.y"),
            ("app/b.py", 2, "db.y"),
        ]
    )
