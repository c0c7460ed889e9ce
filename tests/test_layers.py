"""The tree tells the truth: imports go one way, down the layers drawn in the README's Development section.

The import graph of ``igg`` is built by grimp from the source (every import counts: module level, inside
functions, and under ``TYPE_CHECKING``, so a hidden cycle is a cycle too). Each module belongs to a unit (a
top-level package or module of ``igg``) and each unit to a layer; an import may stay within its layer or go
down, never up, and the units import each other without cycles.
"""

from __future__ import annotations

import grimp
import networkx as nx
import pytest

CODEMAP_JOBS = ("igg.codemap.prepare", "igg.codemap.update", "igg.codemap.since", "igg.codemap.checking",
                "igg.codemap.depgraph")
"""The modules of ``igg/codemap/`` that drive a code map (walk -> parse -> link -> the loop; ``--update`` into a
store; ``--since`` and ``igg check``): they sit with the engine. The rest of ``igg/codemap/`` is the analysers
(the language seam, one module per language, walk, link, cache), a step below: the code agents import them."""

LAYERS: list[tuple[str, set[str]]] = [
    ("interfaces", {"igg.__main__", "igg.interfaces"}),
    ("jobs", {"igg.workspace", "igg.batch", "igg.evaluate"}),
    ("service", {"igg.service"}),
    ("engine and its seams", {"igg.engine", "igg.session", *CODEMAP_JOBS, "igg.persistence", "igg.store",
                              "igg.export", "igg.documents"}),
    ("steps", {"igg.act", "igg.observe", "igg.agents", "igg.codemap", "igg.request", "igg.record", "igg.view",
               "igg.rules", "igg.ontology"}),
    ("graph and contracts", {"igg.graph", "igg.models"}),
    ("foundations", {"igg.errors", "igg.io"}),
]
"""Top to bottom. The ``/ui`` page's HTTP adapters live with the other HTTP routes (``igg/interfaces/http/ui.py``,
``ui_auth.py``); ``igg/view/`` only renders the page (``data``, ``aggregate``, ``page``), below ``export``. The
code-map drivers (``CODEMAP_JOBS``) sit with the engine, above the analysers of ``igg/codemap/``."""

SPLIT = CODEMAP_JOBS

ALLOWED_UPWARD: dict[tuple[str, str], str] = {}
"""Upward imports kept on purpose, each with its reason (the test fails when one disappears, so the list
cannot rot). None today."""


def unit(module: str) -> str:
    for split in SPLIT:
        if module == split or module.startswith(split + "."):
            return split
    return ".".join(module.split(".")[:2])


@pytest.fixture(scope="module")
def imports() -> dict[tuple[str, str], list[str]]:
    """(importing unit, imported unit) -> 'module -> module' examples, for every import between units."""
    graph = grimp.build_graph("igg", include_external_packages=False)
    found: dict[tuple[str, str], list[str]] = {}
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            a, b = unit(module), unit(imported)
            if a != b and "igg" not in (a, b):  # igg/__init__.py only re-exports the public API
                found.setdefault((a, b), []).append(f"{module} -> {imported}")
    return found


def layer_of(u: str) -> int:
    for index, (_, units) in enumerate(LAYERS):
        if u in units:
            return index
    raise AssertionError(f"{u} is in no layer of tests/test_layers.py (and the README's picture): place it")


def test_every_import_goes_down_or_stays_in_its_layer(imports):
    upward = sorted((a, b) for a, b in imports if layer_of(b) < layer_of(a))
    unexpected = [f"{LAYERS[layer_of(a)][0]} {a} imports {LAYERS[layer_of(b)][0]} {b}: {imports[(a, b)][0]}"
                  for a, b in upward if (a, b) not in ALLOWED_UPWARD]
    assert unexpected == []
    assert sorted(ALLOWED_UPWARD) == [pair for pair in upward if pair in ALLOWED_UPWARD]


def test_the_units_import_each_other_without_cycles(imports):
    graph = nx.DiGraph(pair for pair in imports if pair not in ALLOWED_UPWARD)
    cycles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    assert cycles == []


def test_graph_and_models_import_nothing_above_them(imports):
    """The contracts stand alone: graph/ may import models/ and the foundations, models/ only the foundations."""
    assert sorted(b for a, b in imports if a == "igg.graph") == ["igg.models"]
    assert {b for a, b in imports if a == "igg.models"} <= {"igg.errors", "igg.io"}


def test_no_loose_modules_at_the_top_of_the_package():
    """Every module of ``igg`` lives in the package of its layer; at the top stay only the package's face
    (``__init__``, ``__main__``), the exception tree (``errors``) and the service layer (``service``)."""
    from pathlib import Path

    import igg

    top = sorted(p.stem for p in Path(igg.__file__).parent.glob("*.py"))
    assert top == ["__init__", "__main__", "errors", "service"]


def test_no_two_files_of_the_code_map_import_each_other():
    """The analysers (``igg/codemap/``) and the code agents (``igg/agents/code/``) have no file-level import
    cycle, however long (a cycle hidden behind ``TYPE_CHECKING`` or a lazy import counts too)."""
    graph = grimp.build_graph("igg", include_external_packages=False)
    scope = ("igg.codemap", "igg.agents.code")
    files = nx.DiGraph((m, i) for m in graph.modules if m.startswith(scope)
                       for i in graph.find_modules_directly_imported_by(m) if i.startswith(scope))
    assert [sorted(c) for c in nx.strongly_connected_components(files) if len(c) > 1] == []


def test_no_two_files_import_each_other():
    """Zero file-level cycles: no module of ``igg`` reaches itself through the modules it imports (grimp's graph,
    imports inside functions and under ``TYPE_CHECKING`` included)."""
    graph = grimp.build_graph("igg", include_external_packages=False)
    files = nx.DiGraph((m, i) for m in graph.modules for i in graph.find_modules_directly_imported_by(m)
                       if m != "igg" and i != "igg")  # igg/__init__.py only re-exports the public API
    cycles = [sorted(c) for c in nx.strongly_connected_components(files) if len(c) > 1]
    assert cycles == []


def test_no_module_imports_a_private_name_of_another():
    """``from igg.x import _name`` reaches into another module's internals: what two modules share is public."""
    import ast
    from pathlib import Path

    import igg

    found = []
    for path in Path(igg.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("igg"):
                found += [f"{path.name}: {node.module}.{a.name}" for a in node.names
                          if a.name.startswith("_") and not a.name.startswith("__")]
    assert found == []
