"""IGG's Python module-to-module IMPORTS against grimp's, on installed packages (the README's figures).

    python scripts/oracle_imports.py [PACKAGE ...]     (default: 38 packages of this virtualenv)

Each package is mapped from its own folder (as ``igg map-code`` would) and compared with the import graph
grimp builds for it (``tests/integration/test_code_imports.py``'s ``agreement``: precision, recall and F1 over
the modules both know, and module recall). Prints one line per package, and what differs where F1 < 1.
"""

from __future__ import annotations

import importlib
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from test_code_imports import agreement, grimp_imports, model_of  # noqa: E402

PACKAGES = (
    "pydantic rich networkx structlog mcp starlette anyio httpcore click jinja2 pygments openai neo4j dask "
    "distributed setuptools _pytest hypothesis jsonschema referencing attr attrs markdown_it uvicorn fsspec "
    "toolz tornado urllib3 requests werkzeug fastapi sqlglot schemathesis playwright cryptography yaml "
    "packaging httpx"
).split()


def main(names: list[str]) -> int:
    perfect = 0
    for name in names:
        folder = Path(importlib.import_module(name).__file__ or "").parent
        started = time.perf_counter()
        score = agreement(model_of(folder), grimp_imports([name]))
        perfect += score["f1"] == 1.0
        print(
            f"{name:14} F1 {score['f1']:.3f}  precision {score['precision']:.3f}  recall"
            f" {score['recall']:.3f}  module recall {score['module_recall']:.3f}  edges {score['edges']:5} "
            f" ({time.perf_counter() - started:.1f} s)"
        )
        if score["f1"] < 1.0:
            print(f"    missing {score['missing']}\n    extra   {score['extra']}")
    print(f"{perfect} of {len(names)} packages at F1 1.0")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or list(PACKAGES)))
