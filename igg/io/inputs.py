"""Reading what a person hands IGG (request files, transcripts, graph documents) with one kind of error.

The path ``-`` means standard input, as for most command-line tools (``cat request.json | igg run -``).
Each failure is a ``RequestInvalid`` whose single problem says what went wrong in words a person can act on:
an unreadable file, text that is not UTF-8, JSON that does not parse (with line and column).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from igg.errors import Problem, RequestInvalid

STDIN = "-"
"""The path that names standard input."""


def read_text(path: str | Path, *, source: str) -> str:
    """The UTF-8 text of a file (``-``: standard input), or ``RequestInvalid`` naming why it cannot be
    read."""
    if str(path) == STDIN:
        try:
            return sys.stdin.buffer.read().decode("utf-8")
        except UnicodeDecodeError:
            raise RequestInvalid([Problem("", "standard input is not UTF-8 text")], source=source) from None
    path = Path(path)
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise RequestInvalid(
            [Problem("", f"cannot read {path}: {exc.strerror or exc}")], source=source
        ) from None
    except UnicodeDecodeError:
        raise RequestInvalid([Problem("", f"{path} is not UTF-8 text")], source=source) from None


def parse_json(text: str, *, source: str) -> Any:
    """Decoded JSON, or ``RequestInvalid`` with the parser's message, line and column."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise RequestInvalid(
            [Problem("", f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}")], source=source
        ) from None
