"""Size limits of the source (house style: one responsibility per module, long functions split the way
networkx splits its GraphML writer): no module in ``igg/`` over 600 lines, no function (or method) over 80
lines, except what ``ALLOWED`` names while it is being split."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "igg"
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 80

ALLOWED: dict[str, str] = {}
"""Modules (``path``) and functions (``path:name``) over the limits for now, each with the reason. An entry
that is within the limits again fails the test: take it off the list."""


def oversized(package: Path = PACKAGE) -> dict[str, int]:
    """``path`` -> lines of each module over the limit, ``path:name`` -> lines of each function over it (paths
    from the package's parent)."""
    found: dict[str, int] = {}
    for path in sorted(package.rglob("*.py")):
        name = path.relative_to(package.parent).as_posix()
        text = path.read_text(encoding="utf-8")
        lines = len(text.splitlines())
        if lines > MAX_MODULE_LINES:
            found[name] = lines
        for node in ast.walk(ast.parse(text, filename=name)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    found[f"{name}:{node.name}"] = max(length, found.get(f"{name}:{node.name}", 0))
    return found


def test_no_module_or_function_is_over_the_limits() -> None:
    over = {k: n for k, n in oversized().items() if k not in ALLOWED}
    assert over == {}, (
        f"over {MAX_MODULE_LINES} lines per module / {MAX_FUNCTION_LINES} per function: "
        + ", ".join(f"{k} ({n} lines)" for k, n in over.items())
        + "; split them"
    )


def test_the_allow_list_only_names_what_is_still_over() -> None:
    stale = sorted(set(ALLOWED) - set(oversized()))
    assert stale == [], f"within the limits now, take them off ALLOWED: {', '.join(stale)}"


def test_the_measure_counts_lines_from_def_to_the_end_and_whole_modules(tmp_path: Path) -> None:
    """A function is measured from its ``def`` to its last line (methods and nested functions too), a module
    by its lines."""
    package = tmp_path / "pkg"
    package.mkdir()

    def function(name: str, lines: int, indent: str = "") -> str:
        return f"{indent}def {name}():\n" + "".join(f"{indent}    x{i} = {i}\n" for i in range(lines - 1))

    (package / "ok.py").write_text(function("fits", MAX_FUNCTION_LINES))
    (package / "long.py").write_text(
        "class C:\n"
        + function("method", MAX_FUNCTION_LINES + 1, "    ")
        + "\n" * (MAX_MODULE_LINES - MAX_FUNCTION_LINES)
    )
    assert oversized(package) == {
        "pkg/long.py": MAX_MODULE_LINES + 2,
        "pkg/long.py:method": MAX_FUNCTION_LINES + 1,
    }
