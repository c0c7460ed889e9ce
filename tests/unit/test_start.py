"""A fast start: ``import igg`` and ``igg --version`` import none of the heavy parts (the graph and its
models, pydantic, networkx, the drivers, the servers, the parsers); the public names still resolve on first
use.

Budgets are on what gets imported, not on wall time (these machines are noisy): ``scripts/bench_start.py``
prints the times.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

HEAVY = (
    "networkx",
    "pydantic",
    "pydantic_core",
    "neo4j",
    "openai",
    "mcp",
    "fastapi",
    "starlette",
    "uvicorn",
    "sqlglot",
    "tree_sitter",
    "structlog",
    "rich",
    "httpx",
    "anyio",
    "asyncio",
    "jsonschema",
)
"""Packages neither ``import igg`` nor ``igg --version`` may import."""

HEAVY_IGG = (
    "igg.graph",
    "igg.models",
    "igg.act",
    "igg.observe",
    "igg.engine",
    "igg.workspace",
    "igg.service",
    "igg.interfaces.mcp",
    "igg.interfaces.http.app",
    "igg.export.neo4j.bolt",
    "igg.agents.llm",
)
"""IGG's own packages that load those (or are large themselves)."""

REPORT = "import json, sys; print(json.dumps(sorted(sys.modules)))"


def imported_by(code: str) -> set[str]:
    """The modules loaded in a fresh interpreter after running ``code``."""
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\n{REPORT}"], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return set(json.loads(out.stdout.splitlines()[-1]))


def heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in (*HEAVY, *HEAVY_IGG)))


def test_import_igg_loads_nothing_heavy():
    assert heavy(imported_by("import igg")) == []


def test_the_version_loads_nothing_heavy():
    """``igg --version``, run as the console script runs it (``main``), in a fresh interpreter."""
    code = (
        "import sys\nfrom igg.interfaces.cli import main\nsys.argv = ['igg', '--version']\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    assert exc.code in (0, None), exc.code\n"
    )
    modules = imported_by(code)
    assert "igg.interfaces.cli" in modules
    assert heavy(modules) == []


def test_the_version_prints_as_before():
    out = subprocess.run([sys.executable, "-m", "igg", "--version"], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0
    assert out.stdout.startswith("igg ") and out.stdout.count("\n") == 1


def test_the_console_script_collects_less_often_and_a_caller_of_main_keeps_its_collector():
    """``igg`` sets the collector's thresholds before loading a command (``COLLECTOR_THRESHOLDS``: the modules
    it loads are walked 165 times otherwise: 5-9% of a short command's CPU); a program that calls
    ``main(argv)`` keeps its own."""
    from igg.interfaces.cli import COLLECTOR_THRESHOLDS

    code = (
        "import gc, json, sys\nfrom igg.interfaces.cli import main\nbefore = gc.get_threshold()\n"
        "main(['validate', 'fixtures/seed_request.json'])\ncalled = gc.get_threshold()\n"
        "sys.argv = ['igg', 'validate', 'fixtures/seed_request.json']\nmain()\n"
        "print(json.dumps([before, called, gc.get_threshold()]))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    before, called, console = json.loads(out.stdout.splitlines()[-1])
    assert called == before == [700, 10, 10]
    assert console == list(COLLECTOR_THRESHOLDS)


def test_registering_every_command_loads_nothing_heavy():
    """``igg --help`` (and any parse) builds the parser of every command: registration stays cheap, each
    command imports what it needs when it runs."""
    modules = imported_by("from igg.interfaces.cli import build_parser\nbuild_parser().format_help()")
    assert heavy(modules) == []


@pytest.mark.parametrize(
    "name", ["run", "Request", "GraphState", "SessionStore", "export_session", "IGGError"]
)
def test_a_public_name_loads_on_first_use(name):
    modules = imported_by(f"import igg\nassert igg.{name} is not None\nfrom igg import {name}")
    assert f"igg.{name}" not in modules  # a name, not a module
    assert "igg" in modules


def test_an_unknown_name_is_an_attribute_error():
    import igg

    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        igg.nope  # noqa: B018


def test_the_lazy_packages_resolve_every_name_they_list():
    """``igg.store``, ``igg.export`` and ``igg.agents.code`` import their heavy names on first use too."""
    import igg.agents.code
    import igg.export
    import igg.store

    for package in (igg.store, igg.export, igg.agents.code):
        for name in package.__all__:
            assert getattr(package, name) is not None, (package.__name__, name)


def test_link_names_the_function_after_its_module_is_imported():
    """``igg.codemap.link`` is a function and a module: the function wins, whatever is imported first."""
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import igg.codemap.link\nfrom igg.agents.code import link\n"
            "print(callable(link) and not hasattr(link, '__file__'))",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "True"


def test_the_schema_command_names_every_schema():
    from igg.interfaces.cli.schema import SCHEMA_NAMES
    from igg.models.jsonschema import SCHEMA_MODELS

    assert SCHEMA_NAMES == tuple(sorted(SCHEMA_MODELS))


def test_map_code_agents_are_the_ones_prepare_knows():
    from igg.codemap import AGENT_MODES
    from igg.mapping import prepare

    assert prepare.AGENT_MODES is AGENT_MODES


def test_an_update_of_a_tree_with_no_change_loads_nothing_heavy(tmp_path: Path) -> None:
    """``igg map-code TREE --store S --update --quiet`` on a tree no file of which changed answers from the
    session's row and the tree's index: no graph, act step, models, analyzer, parser or structlog is imported
    (the act package's own light module ``igg.act.counts`` names what an update counts; without ``--quiet``,
    with standard error not a terminal, its ``map_code_updated`` line loads structlog)."""
    import shutil

    from igg.service import map_code

    tree, store = tmp_path / "python", tmp_path / "map.sqlite"
    shutil.copytree(ROOT / "fixtures" / "code" / "python", tree)
    result, _ = map_code([tree], store=store, jobs=1)
    assert result.stop_reason == "finished"
    code = (
        "import sys\nfrom igg.interfaces.cli import main\n"
        f"sys.argv = ['igg', 'map-code', {str(tree)!r}, '--store', {str(store)!r}]\n"
        "sys.argv += ['--update', '--quiet', '--json']\n"
        # its arguments given: the console script would end the process at once (``cli._leave``)
        "try:\n    main(sys.argv[1:])\n"
        "except SystemExit as exc:\n    assert exc.code in (0, None), exc.code\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", f"{code}\n{REPORT}"], cwd=ROOT, capture_output=True, text=True, check=True
    )
    answer, modules = (json.loads(line) for line in out.stdout.splitlines())
    assert answer["files"]["read"] > 0 and answer["files"]["reparsed"] == 0
    assert answer["graph"]["nodes"] == result.state.node_count
    changes = ("nodes_added", "nodes_removed", "nodes_changed", "edges_added", "edges_removed")
    assert not any(answer["graph"][k] for k in changes)
    loaded = set(modules) - {"igg.act", "igg.act.counts"}
    assert heavy(loaded) == []
    # the languages' descriptions name their analyzers' versions (the index's key); no analyzer is loaded
    assert not loaded & {"igg.mapping.remap", "igg.mapping.prepare", "igg.codemap.link", "igg.store.store"}
    assert not loaded & {"igg.codemap.python.analyze", "igg.codemap.python.flow", "igg.codemap.java.analyze"}
