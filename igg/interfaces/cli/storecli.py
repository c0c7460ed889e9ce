"""What the session commands share: the ``--store PATH`` option, opening the store, plain text tables.

Not a command itself (it is not in ``COMMANDS``).
"""

from __future__ import annotations

import argparse
import json
import shlex
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from igg.store import STORE_ENV, SessionStore, resolve_store_path
from igg.store.db import DEFAULT_STORE

STORE_HELP = f"the session store file (default: ${STORE_ENV}, else {DEFAULT_STORE})"


def add_store_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--store PATH`` (see ``STORE_HELP``)."""
    parser.add_argument("--store", metavar="PATH", default=None, help=STORE_HELP)


def add_json_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--json``: print one JSON document instead of text."""
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")


def open_store(args: argparse.Namespace, *, must_exist: bool = True) -> SessionStore:
    """The store named by ``--store`` / ``$IGG_STORE`` / the default; a clear error when it does not exist."""
    path = resolve_store_path(getattr(args, "store", None))
    if must_exist and not path.exists():
        from igg.interfaces.cli.keep import command_line, default_store
        from igg.store import SessionRefused

        kept = default_store()
        again = ["igg", *command_line(args), "--store", str(kept)]
        hint = (f"; runs given no --out, --store or --export are kept in {kept}: `{shlex.join(again)}`"
                if kept.exists() else "")
        raise SessionRefused(f"no session store at {path}; keep sessions there with `igg run REQUEST.json --store "
                             f"{shlex.quote(str(path))}`, or point --store (or ${STORE_ENV}) at an existing store{hint}")
    return SessionStore(path)


def print_json(value: Any) -> None:
    """Print ``value`` as indented JSON."""
    print(json.dumps(value, indent=2, ensure_ascii=False, default=str))


def when(timestamp: float) -> str:
    """A Unix time as ``YYYY-MM-DD HH:MM:SS`` UTC."""
    return datetime.fromtimestamp(timestamp, UTC).strftime("%Y-%m-%d %H:%M:%S")


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain text table; numeric columns are right-aligned."""
    cells = [[str(h) for h in headers]] + [["" if c is None else str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    numeric = [all(_is_number(r[i]) for r in cells[1:]) and len(cells) > 1 for i in range(len(headers))]
    lines = []
    for row in cells:
        parts = [c.rjust(w) if num else c.ljust(w) for c, w, num in zip(row, widths, numeric, strict=True)]
        lines.append("  ".join(parts).rstrip())
    return "\n".join(lines)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return text == ""
    return True
