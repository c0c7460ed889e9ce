"""Python imports as a dependency map needs them, checked exactly and against an independent oracle.

The tree below has every import form (absolute, relative, ``from x import CONSTANT``/TypeVar/alias,
``import a.b.c``, star imports, imports in functions and under ``TYPE_CHECKING``, a name bound twice in a
``try``/``except ImportError``), a ``.pyi`` stub beside its module and a stub-only module, ``@overload``
stubs, a module named like the standard library (``types``), a real package named ``build``, a PEP 420
namespace package and a loose script. Module names must be what Python imports, whichever folder is mapped.

The oracle is ``grimp`` (an import-graph library that reads the same files its own way): module-to-module
IMPORTS must agree with it on this tree from every folder a user may point at, and on real packages from
the virtualenv (``httpx``; ``opentelemetry``, a namespace package), from the package folder and from a
``src/`` layout copy.
"""

from __future__ import annotations

import importlib
import shutil
import sys
import textwrap
from pathlib import Path
from typing import Any

import grimp
import pytest

from igg.codemap.link import CodeModel, link
from igg.codemap.walk import walk
from igg.mapping.prepare import parse_all

TREE: dict[str, str] = {
    "pyproject.toml": "[project]\nname = 'kiosk'\n",
    "README.md": "# kiosk\n",
    "src/kiosk/__init__.py": """
        from ._config import DEFAULT_TIMEOUT
        from .core import Engine
        from . import util
        __all__ = ["DEFAULT_TIMEOUT", "Engine", "util"]
    """,
    "src/kiosk/_config.py": """
        from typing import TypeVar
        DEFAULT_TIMEOUT = 5.0
        T = TypeVar("T")
        Alias = dict[str, int]
    """,
    "src/kiosk/core/__init__.py": """
        from .engine import Engine, run_all
    """,
    "src/kiosk/core/engine.py": """
        from __future__ import annotations
        import os.path
        from typing import TYPE_CHECKING, overload
        from kiosk._config import T, Alias
        if TYPE_CHECKING:
            from kiosk.models import User

        class Engine:
            def start(self, user: User) -> None:
                from kiosk import util
                util.helper()

            @overload
            def get(self, key: int) -> int: ...
            @overload
            def get(self, key: str) -> str: ...
            def get(self, key):
                return key

            def twice(self) -> None:
                self.get(1)

        def run_all() -> None:
            Engine().start(None)
    """,
    "src/kiosk/core/engine.pyi": """
        class Engine:
            def start(self, user: object) -> None: ...
            def get(self, key: int) -> int: ...
        def run_all() -> None: ...
        def stub_only() -> int: ...
    """,
    "src/kiosk/models.py": """
        from ._config import DEFAULT_TIMEOUT as TIMEOUT
        from . import types
        try:
            import ujson as json
        except ImportError:
            import json
        from .util import dumps
        from .util import dumps

        class User:
            timeout = TIMEOUT
    """,
    "src/kiosk/util.py": """
        import json
        from .types import *

        def helper() -> str:
            return json.dumps({})

        def dumps(x: object) -> str:
            return str(x)
    """,
    "src/kiosk/types.py": """
        import types
        Number = int
        ModuleType = types.ModuleType
    """,
    "src/kiosk/_speedups.pyi": """
        def fast(x: int) -> int: ...
    """,
    "src/kiosk/build/__init__.py": "",
    "src/kiosk/build/steps.py": """
        import kiosk.core.engine
        import kiosk.core.engine as eng
        from ..core import engine
        from .. import _speedups

        def step() -> None:
            eng.run_all()
            kiosk.core.engine.run_all()
    """,
    "src/kioskns/plugins/__init__.py": "",
    "src/kioskns/plugins/cli.py": """
        from kioskns.plugins import helpers
        from kiosk.core.engine import Engine
        from kiosk import DEFAULT_TIMEOUT
    """,
    "src/kioskns/plugins/helpers.py": """
        import kiosk
    """,
    "scripts/run.py": """
        import kiosk
        import localhelp
        localhelp.go()
    """,
    "scripts/localhelp.py": """
        def go() -> None: ...
    """,
}


def build(root: Path, files: dict[str, str] = TREE) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


def model_of(root: Path) -> CodeModel:
    facts, _ = parse_all(walk([root]).files, jobs=1)
    return link(facts)


def module_names(model: CodeModel) -> dict[str, str]:
    return {k: s.properties["name"] for k, s in model.symbols.items() if s.label in ("Module", "Package")}


def edges(model: CodeModel, label: str = "IMPORTS") -> set[tuple[str, str]]:
    """Edges of one type as (source name, target name); symbols by their qualified name."""
    names = module_names(model)
    for k, s in model.symbols.items():
        if s.label in ("Class", "Interface", "Enum"):
            names[k] = s.properties["qualified_name"]
        elif s.label == "Function":
            names[k] = f"{s.properties['package']}.{s.properties['name']}"
    return {(names[r.source], names[r.target]) for f in model.files for r in f.relations if r.label == label}


EXPECTED_IMPORTS = {
    ("kiosk", "kiosk._config"),
    ("kiosk", "kiosk.core"),
    ("kiosk", "kiosk.util"),
    ("kiosk._config", "typing"),
    ("kiosk.core", "kiosk.core.engine"),
    ("kiosk.core.engine", "__future__"),
    ("kiosk.core.engine", "os"),
    ("kiosk.core.engine", "typing"),
    ("kiosk.core.engine", "kiosk._config"),
    ("kiosk.core.engine", "kiosk.models"),
    ("kiosk.core.engine", "kiosk.util"),
    ("kiosk.models", "kiosk._config"),
    ("kiosk.models", "kiosk.types"),
    ("kiosk.models", "ujson"),
    ("kiosk.models", "json"),
    ("kiosk.models", "kiosk.util"),
    ("kiosk.util", "json"),
    ("kiosk.util", "kiosk.types"),
    ("kiosk.types", "types"),
    ("kiosk.build.steps", "kiosk.core.engine"),
    ("kiosk.build.steps", "kiosk._speedups"),
    ("kioskns.plugins.cli", "kioskns.plugins.helpers"),
    ("kioskns.plugins.cli", "kiosk.core.engine"),
    ("kioskns.plugins.cli", "kiosk"),
    ("kioskns.plugins.helpers", "kiosk"),
    ("run", "kiosk"),
    ("run", "localhelp"),
}
EXPECTED_SYMBOLS = {
    ("kiosk", "kiosk.core.engine.Engine"),  # re-exported by kiosk.core: the definition
    ("kiosk.core", "kiosk.core.engine.Engine"),
    ("kiosk.core", "kiosk.core.engine.run_all"),
    ("kiosk.core.engine", "kiosk.models.User"),
    ("kiosk.models", "kiosk.util.dumps"),
    ("kioskns.plugins.cli", "kiosk.core.engine.Engine"),
}


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("imports") / "kiosk-project")


def test_every_import_form_is_one_module_to_module_edge_and_symbols_have_their_own(tree: Path) -> None:
    model = model_of(tree)
    assert edges(model) == EXPECTED_IMPORTS
    assert edges(model, "IMPORTS_SYMBOL") == EXPECTED_SYMBOLS


def test_module_names_are_what_python_imports_whichever_folder_is_mapped(tree: Path) -> None:
    everything = sorted(n for k, n in module_names(model_of(tree)).items() if k.startswith("module:"))
    assert everything == [
        "kiosk",
        "kiosk._config",
        "kiosk._speedups",
        "kiosk.build",
        "kiosk.build.steps",
        "kiosk.core",
        "kiosk.core.engine",
        "kiosk.models",
        "kiosk.types",
        "kiosk.util",
        "kioskns.plugins",
        "kioskns.plugins.cli",
        "kioskns.plugins.helpers",
        "localhelp",
        "run",
    ]
    for folder, expected in [
        ("src", everything[:13]),
        ("src/kiosk", everything[:10]),
        ("src/kiosk/core", ["kiosk.core", "kiosk.core.engine"]),
        ("src/kioskns", everything[10:13]),
        ("src/kioskns/plugins", everything[10:13]),
        ("src/kiosk/core/engine.py", ["kiosk.core.engine"]),
    ]:
        model = model_of(tree / folder)
        assert sorted(n for k, n in module_names(model).items() if k.startswith("module:")) == expected, (
            folder
        )
        # the same edges as the whole tree's, restricted to the mapped modules' own imports
        mine = set(expected)
        assert {e for e in edges(model) if e[1] in mine} == {
            e for e in EXPECTED_IMPORTS if e[0] in mine and e[1] in mine
        }, folder


def test_stubs_merge_into_their_module_and_overloads_collapse(tree: Path) -> None:
    model = model_of(tree)
    modules = [s.properties for s in model.symbols.values() if s.label == "Module"]
    assert [m["path"] for m in modules if m["name"] == "kiosk.core.engine"] == ["src/kiosk/core/engine.py"]
    methods = sorted(
        s.properties["signature"]
        for s in model.symbols.values()
        if s.label == "Method" and s.properties["owner"] == "kiosk.core.engine.Engine"
    )
    assert methods == ["get(self, key)", "start(self, user: User)", "twice(self)"]  # the .py's, one get
    functions = sorted(
        s.properties["name"]
        for s in model.symbols.values()
        if s.label == "Function" and s.properties["package"] == "kiosk.core.engine"
    )
    assert functions == ["run_all", "stub_only"]  # the stub adds only what the .py lacks
    # a call to an overloaded method reaches its one implementation (no ambiguity left to drop)
    assert (
        "kiosk.core.engine.Engine#twice(self)",
        "kiosk.core.engine.Engine#get(self, key)",
    ) in _member_calls(model)


def _member_calls(model: CodeModel) -> set[tuple[str, str]]:
    def name(key: str) -> str:
        p = model.symbols[key].properties
        if "path" in p:  # a module: its top-level code calls too
            return str(p["name"])
        return f"{p['owner']}#{p['signature']}" if "owner" in p else f"{p['package']}.{p['name']}"

    return {(name(r.source), name(r.target)) for f in model.files for r in f.relations if r.label == "CALLS"}


def test_calls_through_every_binding_of_an_import(tree: Path) -> None:
    calls = _member_calls(model_of(tree))
    assert ("kiosk.build.steps.step", "kiosk.core.engine.run_all") in calls
    assert ("kiosk.core.engine.Engine#start(self, user: User)", "kiosk.util.helper") in calls
    assert ("run", "localhelp.go") in calls  # a module-level call: the module is its caller


def test_real_packages_named_build_or_dist_are_read_and_real_build_folders_are_not(tmp_path: Path) -> None:
    root = build(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/dist/__init__.py": "",
            "pkg/dist/wheel.py": "x = 1\n",
            "build/lib/pkg/__init__.py": "",
            "out/gen.py": "y = 2\n",
        },
    )
    walked = walk([root])
    assert sorted(f.path for f in walked.files) == [
        "pkg/__init__.py",
        "pkg/dist/__init__.py",
        "pkg/dist/wheel.py",
    ]
    assert sorted(s.path for s in walked.skipped) == ["build/", "out/"]
    assert [f.module for f in walked.files] == ["pkg", "pkg.dist", "pkg.dist.wheel"]


# ---- the oracle ---------------------------------------------------------------------------------------
def grimp_imports(packages: list[str], path: Path | None = None) -> tuple[set[tuple[str, str]], set[str]]:
    """grimp's module-to-module imports of ``packages`` (found on ``path`` or the installed ones) and its
    module names."""
    if path is not None:
        sys.path.insert(0, str(path))
        importlib.invalidate_caches()
    try:
        graph = grimp.build_graph(*packages, include_external_packages=True, cache_dir=None)
    finally:
        if path is not None:
            sys.path.remove(str(path))
            for name in [m for m in sys.modules if m.split(".")[0] in packages]:
                del sys.modules[name]
    found = {(m, t) for m in graph.modules for t in graph.find_modules_directly_imported_by(m)}
    internal = {m for m in graph.modules if m.split(".")[0] in packages}
    return found, internal


def agreement(model: CodeModel, oracle: tuple[set[tuple[str, str]], set[str]]) -> dict[str, Any]:
    """Precision, recall and F1 of IGG's module-to-module IMPORTS between the in-tree modules that both
    IGG and the oracle know (the mapped folder may be part of the oracle's package)."""
    ours = edges(model)
    mine = {n for k, n in module_names(model).items() if k.startswith("module:")}
    theirs, internal = oracle
    known = mine & internal
    truth = {e for e in theirs if e[0] in known and e[1] in known and e[0] != e[1]}  # no self-loops in IGG
    found = {e for e in ours if e[0] in known and e[1] in known}
    hit = len(truth & found)
    precision = hit / len(found) if found else 1.0
    recall = hit / len(truth) if truth else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    namespaces = {n for k, n in module_names(model).items() if k.startswith("package:")} - mine  # no file
    module_recall = len(known) / max(1, len(internal - namespaces))
    return {
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "module_recall": module_recall,
        "missing": sorted(truth - found)[:5],
        "extra": sorted(found - truth)[:5],
        "edges": len(truth),
    }


@pytest.fixture(scope="module")
def oracle_tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tree with its stub-only module as a ``.py`` (grimp reads no ``.pyi``)."""
    files = {("src/kiosk/_speedups.py" if k == "src/kiosk/_speedups.pyi" else k): v for k, v in TREE.items()}
    return build(tmp_path_factory.mktemp("oracle") / "kiosk-project", files)


@pytest.mark.parametrize("folder", [".", "src", "src/kiosk", "src/kioskns", "src/kiosk/core"])
def test_imports_agree_with_grimp_on_the_tree_from_every_folder(oracle_tree: Path, folder: str) -> None:
    score = agreement(
        model_of(oracle_tree / folder), grimp_imports(["kiosk", "kioskns"], oracle_tree / "src")
    )
    assert score["f1"] >= 0.98 and score["recall"] >= 0.99, score
    assert score["edges"] > 0


def _copy(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def test_imports_agree_with_grimp_on_real_packages(tmp_path: Path) -> None:
    import httpx
    import opentelemetry.trace

    httpx_dir = Path(httpx.__file__).parent
    otel_dir = Path(opentelemetry.trace.__file__).parent.parent  # a namespace package: no __init__.py
    assert not (otel_dir / "__init__.py").exists()
    httpx_oracle = grimp_imports(["httpx"])
    otel_oracle = grimp_imports(["opentelemetry"])
    project = tmp_path / "project"
    _copy(httpx_dir, project / "src" / "httpx")
    _copy(otel_dir, project / "src" / "opentelemetry")
    (project / "pyproject.toml").write_text("[project]\nname = 'copy'\n")
    cases = [
        (httpx_dir, httpx_oracle),
        (httpx_dir / "_transports", httpx_oracle),
        (project, httpx_oracle),
        (project / "src", httpx_oracle),
        (otel_dir, otel_oracle),
        (otel_dir / "trace", otel_oracle),
        (project, otel_oracle),
        (project / "src" / "opentelemetry", otel_oracle),
    ]
    for folder, oracle in cases:
        score = agreement(model_of(folder), oracle)
        assert score["f1"] >= 0.98 and score["recall"] >= 0.99, (folder, score)
        assert score["module_recall"] >= 0.99 or folder.name in ("_transports", "trace"), (folder, score)


GENERATED_AND_LIB = {
    "shop/__init__.py": "",
    "shop/base.py": "class Base:\n    pass\n",
    "shop/_tables.py": "# Code generated by tablegen. DO NOT EDIT.\nfrom . import base\n\n\n"
    "class Table(base.Base):\n    pass\n\n\nROWS = {}\n",
    "shop/orders_pb2.py": "from shop import _tables\n\n\nclass Order:\n    pass\n",
    "shop/cart.py": "from shop._tables import ROWS\nfrom .orders_pb2 import Order\nfrom .lib import money\n",
    "shop/lib/__init__.py": "from .money import Money\n",
    "shop/lib/money.py": "from shop.base import Base\n\n\nclass Money(Base):\n    pass\n",
    "shop/python/__init__.py": "",
    "shop/python/compat.py": "from ..lib.money import Money\n",
}


def test_generated_modules_and_packages_named_lib_or_python_are_modules_like_any_other(
    tmp_path: Path,
) -> None:
    """A generated module (by its header or its name) is a module others import: it keeps its Module and its
    imports, and only its definitions are left out; a folder named ``lib`` or ``python`` holding an
    ``__init__.py`` is a package. Both checked exactly and against grimp."""
    root = build(tmp_path / "project", GENERATED_AND_LIB)
    for folder in (root, root / "shop"):
        model = model_of(folder)
        names = set(module_names(model).values())
        assert {
            "shop._tables",
            "shop.orders_pb2",
            "shop.lib",
            "shop.lib.money",
            "shop.python.compat",
        } <= names
        found = edges(model)
        assert {
            ("shop._tables", "shop.base"),
            ("shop.orders_pb2", "shop._tables"),
            ("shop.cart", "shop._tables"),
            ("shop.cart", "shop.orders_pb2"),
            ("shop.cart", "shop.lib.money"),
            ("shop.lib", "shop.lib.money"),
            ("shop.python.compat", "shop.lib.money"),
        } <= found
        assert ("shop.cart", "shop") not in found  # never the parent package instead of the module
        classes = {s.properties["qualified_name"] for s in model.symbols.values() if s.label == "Class"}
        assert classes == {"shop.base.Base", "shop.lib.money.Money"}  # no Table, no Order: generated
        score = agreement(model, grimp_imports(["shop"], root))
        assert score["f1"] == 1.0 and score["module_recall"] == 1.0, score
