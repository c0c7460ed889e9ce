"""Namespace packages named the same from any folder a user points at, judged by grimp.

A PEP 420 namespace distribution copied out of ``site-packages`` (so that nothing on disk says where the
import root is) is mapped from the namespace portion, from the namespace folder and from the folder above it:
module names and module-to-module imports agree with grimp's from all three. The tree's own absolute imports
say what the prefix is; ``--package-prefix`` says it where nothing in the tree does.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from igg.codemap.python.modules import imported_modules
from igg.codemap.walk import walk
from tests.integration.test_code_imports import agreement, grimp_imports, model_of, module_names


def _within(
    oracle: tuple[set[tuple[str, str]], set[str]], package: str
) -> tuple[set[tuple[str, str]], set[str]]:
    """The oracle's modules narrowed to ``package`` (the folder pointed at holds only those)."""
    edges, internal = oracle
    return edges, {m for m in internal if m == package or m.startswith(package + ".")}


@pytest.fixture(scope="module")
def opentelemetry(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The installed ``opentelemetry`` namespace (opentelemetry-api, a dependency of the MCP SDK) in a plain
    folder: neither ``site-packages`` nor a project."""
    spec = importlib.util.find_spec("opentelemetry")
    assert spec is not None and spec.submodule_search_locations
    source = Path(next(iter(spec.submodule_search_locations)))
    assert not (source / "__init__.py").exists()
    dist = tmp_path_factory.mktemp("plain") / "dist"
    shutil.copytree(source, dist / "opentelemetry", ignore=shutil.ignore_patterns("__pycache__"))
    return dist


@pytest.mark.parametrize("pointed", ["opentelemetry/trace", "opentelemetry", "."])
def test_a_real_namespace_distribution_agrees_with_grimp_from_every_folder(
    opentelemetry: Path, pointed: str
) -> None:
    oracle = grimp_imports(["opentelemetry"], opentelemetry)
    if pointed == "opentelemetry/trace":
        oracle = _within(oracle, "opentelemetry.trace")
    score = agreement(model_of(opentelemetry / pointed), oracle)
    assert score["module_recall"] >= 0.99, score
    assert score["f1"] >= 0.98, score
    assert score["edges"] >= 5


def _namespace_tree(root: Path) -> Path:
    """``acme`` (no ``__init__.py``) holding a regular package, a namespace portion of loose modules that
    import each other, and one that nothing imports."""
    files = {
        "acme/billing/__init__.py": "from acme.billing import invoices\n",
        "acme/billing/invoices.py": "from acme.billing.tax import rate\nfrom acme.proto import money_pb2\n",
        "acme/billing/tax.py": "import os\n\n\ndef rate() -> float:\n    return 0.2\n",
        "acme/proto/money_pb2.py": "from acme.proto import common_pb2\n",
        "acme/proto/common_pb2.py": "X = 1\n",
        "acme/extra/lonely.py": "Y = 2\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


@pytest.mark.parametrize("pointed", ["acme/billing", "acme", "."])
def test_modules_are_named_the_same_from_every_folder(tmp_path: Path, pointed: str) -> None:
    root = _namespace_tree(tmp_path / "checkout")
    names = {f.path.split("/")[-1]: f.module for f in walk([root / pointed]).files}
    expected = {
        "__init__.py": "acme.billing",
        "invoices.py": "acme.billing.invoices",
        "tax.py": "acme.billing.tax",
        "money_pb2.py": "acme.proto.money_pb2",
        "common_pb2.py": "acme.proto.common_pb2",
        "lonely.py": "acme.extra.lonely",
    }
    assert names == {k: v for k, v in expected.items() if k in names}
    assert len(names) == (3 if pointed == "acme/billing" else 6)


def test_the_namespace_tree_agrees_with_grimp(tmp_path: Path) -> None:
    root = _namespace_tree(tmp_path / "checkout")
    oracle = grimp_imports(["acme"], root)
    for pointed in ("acme", "."):
        score = agreement(model_of(root / pointed), oracle)
        assert score["f1"] == 1.0 and score["module_recall"] == 1.0, (pointed, score)
    assert ("acme.billing.invoices", "acme.proto.money_pb2") in oracle[0]


def test_imports_of_the_bare_name_keep_it_top_level(tmp_path: Path) -> None:
    """A package the tree imports by its own name is not renamed for an odd import under another name."""
    (tmp_path / "app").mkdir()
    (tmp_path / "app/__init__.py").write_text("")
    (tmp_path / "app/a.py").write_text("from app import b\nimport app.b\n")
    (tmp_path / "app/b.py").write_text("from vendor.app import b\n")
    assert {f.module for f in walk([tmp_path]).files} == {"app", "app.a", "app.b"}


def test_package_prefix_names_what_nothing_in_the_tree_says(tmp_path: Path) -> None:
    (tmp_path / "api_core").mkdir()
    (tmp_path / "api_core/__init__.py").write_text("")
    (tmp_path / "api_core/retry.py").write_text("import time\n")
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "igg",
            "map-code",
            "api_core",
            "--no-store",
            "--quiet",
            "--export",
            "json:g.json",
            "--package-prefix",
            "google",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    model = model_of(tmp_path / "api_core")
    assert {n for k, n in module_names(model).items() if k.startswith("module:")} == {
        "api_core",
        "api_core.retry",
    }
    nodes = json.loads((tmp_path / "g.json").read_text())["nodes"]
    assert {n["properties"]["name"] for n in nodes if n["type"] == "Module"} == {
        "google.api_core",
        "google.api_core.retry",
    }
    bad = subprocess.run(
        [sys.executable, "-m", "igg", "map-code", "api_core", "--no-store", "--package-prefix", "../x"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode == 2
    assert "'../x' is not a dotted Python name" in bad.stderr and "Traceback" not in bad.stderr


def test_imported_modules_reads_every_import_form() -> None:
    text = (
        "import a.b, c as d\nfrom x.y import (p, q as r,\n    s)\nfrom . import z\n"
        "  from google.api import http_pb2 as google_dot_api_dot_http__pb2\n"
    )
    assert imported_modules(text) == [
        "a.b",
        "c",
        "x.y",
        "x.y.p",
        "x.y.q",
        "google.api",
        "google.api.http_pb2",
    ]
