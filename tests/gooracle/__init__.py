"""The Go toolchain as the oracle of IGG's Go maps.

``go_list(root)`` runs ``go list -e -json ./...`` in every module of a tree (offline: ``GOPROXY=off``,
``-mod=mod`` with ``-modfile`` a stub ``go.mod`` of the module's path alone, so outside modules need no
download; ``GOWORK=off``: each module on its own), and gives each package's ``Imports``, ``TestImports`` and
``XTestImports``: ``package_imports`` makes them the package-to-package edges IGG's ``IMPORTS`` are compared
with. ``program(root, packages)`` runs ``oracle.go`` (go/ast and go/types of the standard library, built once
into ``.cache/go-oracle``) on the listed packages: declared types, functions and methods, and the calls the
type checker resolves into the tree. Debian's ``golang`` (1.19) is enough; ``scripts/test`` installs it as
root. Without ``go`` the tests skip naming what is missing, unless ``IGG_REQUIRE_COMPONENTS`` asks for every
component: then they fail.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache" / "go-oracle"
SOURCE = Path(__file__).with_name("oracle.go")


def go() -> str | None:
    return shutil.which("go")


def missing() -> str | None:
    """Why the oracle cannot run here (None: it can); always None when every component is required."""
    if os.environ.get("IGG_REQUIRE_COMPONENTS") or go() is not None:
        return None
    return "go is missing (Debian: apt-get install golang; scripts/test installs it as root)"


def _env(cache: Path) -> dict[str, str]:
    return {
        **os.environ,
        "GOPROXY": "off",
        "GOFLAGS": "-mod=mod",
        "GOWORK": "off",
        "GO111MODULE": "on",
        "GOTOOLCHAIN": "local",
        "GOCACHE": str(cache / "build"),
        "GOPATH": str(cache / "path"),
        "GOSUMDB": "off",
    }


def _modules(root: Path) -> list[Path]:
    """The folders holding a ``go.mod`` that ``./...`` of an outer module would not reach (all of them)."""
    found = []
    for here, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith((".", "_")) and d not in ("testdata", "vendor")]
        if "go.mod" in files:
            found.append(Path(here))
    return sorted(found)


def go_list(root: Path) -> list[dict[str, Any]]:
    """Every package of every module under ``root`` as ``go list -e -json`` reports it (``Dir`` absolute)."""
    assert go() is not None, "go is not installed (apt-get install golang)"
    CACHE.mkdir(parents=True, exist_ok=True)
    out: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, module in enumerate(_modules(root)):
            text = (module / "go.mod").read_text()
            path = next(
                (line.split()[1].strip('"') for line in text.splitlines() if line.startswith("module ")), None
            )
            assert path, f"{module}/go.mod names no module"
            stub = Path(tmp) / f"stub{i}.mod"
            stub.write_text(f"module {path}\n\ngo 1.19\n")
            done = subprocess.run(
                ["go", "list", "-e", "-json", f"-modfile={stub}", "./..."],
                cwd=module,
                capture_output=True,
                text=True,
                env=_env(CACHE),
                timeout=600,
            )
            assert done.stdout.strip().startswith("{"), f"go list in {module}: {done.stderr[-2000:]}"
            decoder, at, text = json.JSONDecoder(), 0, done.stdout
            while at < len(text):
                while at < len(text) and text[at].isspace():
                    at += 1
                if at >= len(text):
                    break
                obj, at = decoder.raw_decode(text, at)
                out.append(obj)
    return out


def package_imports(packages: list[dict[str, Any]]) -> set[tuple[str, str]]:
    """(package, imported import path) for each package's imports, its in-package tests' (``TestImports``)
    included; an external test package (``path_test``) with its ``XTestImports``."""
    edges = set()
    for p in packages:
        path = p["ImportPath"]
        if p.get("GoFiles") or p.get("CgoFiles") or p.get("TestGoFiles"):
            edges.update((path, i) for i in [*p.get("Imports", []), *p.get("TestImports", [])])
        edges.update((f"{path}_test", i) for i in p.get("XTestImports", []))
    return {(a, b) for a, b in edges if b != "C"}


def program(root: Path, packages: list[dict[str, Any]]) -> dict[str, list[list[str]]]:
    """What go/ast and go/types say of the packages (see ``oracle.go``)."""
    binary = CACHE / "gooracle"
    if not binary.exists() or binary.stat().st_mtime < SOURCE.stat().st_mtime:
        CACHE.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory() as tmp:
            shutil.copy(SOURCE, Path(tmp) / "main.go")
            (Path(tmp) / "go.mod").write_text("module gooracle\n\ngo 1.19\n")
            built = subprocess.run(
                ["go", "build", "-o", str(binary), "."],
                cwd=tmp,
                capture_output=True,
                text=True,
                env=_env(CACHE),
                timeout=600,
            )
            assert built.returncode == 0, built.stderr
    listed = [
        {k: p.get(k) or [] for k in ("GoFiles", "CgoFiles", "TestGoFiles", "XTestGoFiles")}
        | {"ImportPath": p["ImportPath"], "Dir": p["Dir"]}
        for p in packages
    ]
    done = subprocess.run(
        [str(binary), str(root)],
        input=json.dumps(listed),
        capture_output=True,
        text=True,
        env=_env(CACHE),
        timeout=600,
    )
    assert done.returncode == 0 and done.stdout.startswith("{"), done.stderr[-2000:]
    result: dict[str, list[list[str]]] = json.loads(done.stdout)
    return result


def f1(ours: set[Any], truth: set[Any]) -> tuple[float, float, float]:
    """(precision, recall, F1) of ``ours`` against ``truth`` (1.0 for two empty sets)."""
    hit = len(ours & truth)
    precision = hit / len(ours) if ours else 1.0
    recall = hit / len(truth) if truth else 1.0
    return precision, recall, (2 * precision * recall / (precision + recall) if precision + recall else 0.0)
