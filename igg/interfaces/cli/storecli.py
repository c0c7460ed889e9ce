"""What the session commands share: the ``--store PATH`` option, opening the store, plain text tables.

Not a command itself (it is not in ``COMMANDS``).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from igg.store import HOME_ENV, PROJECT_STORE, STORE_ENV, resolve_store_path
from igg.store.location import StoreLocation, store_exists

if TYPE_CHECKING:
    from igg.store import SessionStore

STORE_HELP = (
    "the session store: an SQLite file, or a PostgreSQL database as postgresql://USER@HOST/DATABASE"
    f" (default: ${STORE_ENV}, else {PROJECT_STORE} if it exists, else the default store"
    f" ${HOME_ENV}/sessions.sqlite or ~/.local/share/igg/sessions.sqlite, where runs given no --out, --store"
    " or --export are kept)"
)


def add_store_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--store PATH`` (see ``STORE_HELP``)."""
    parser.add_argument("--store", metavar="LOCATION", default=None, help=STORE_HELP)


def add_json_option(parser: argparse.ArgumentParser) -> None:
    """Add ``--json``: print one JSON document instead of text."""
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")


def open_store(args: argparse.Namespace, *, must_exist: bool = True) -> SessionStore:
    """The store named by ``--store`` / ``$IGG_STORE`` / the default (``resolve_store_path``); a clear error,
    with the exact command to use instead, when it does not exist."""
    named = getattr(args, "store", None)
    path = resolve_store_path(named)
    if must_exist and not store_exists(path):
        raise missing_store(args, path, named=bool(named or os.environ.get(STORE_ENV)))
    from igg.store import SessionStore  # the store's models load when a command opens it, not at start-up

    return SessionStore(path)


def missing_store(args: argparse.Namespace, path: StoreLocation, *, named: bool) -> Exception:
    """The refusal of a session command whose store does not exist, naming what would work."""
    from igg.interfaces.cli.keep import command_line
    from igg.store import SessionRefused

    if not named:
        return SessionRefused(
            f"no session store at {path} yet: it is the default store, where runs given no --out, "
            "--store or --export keep their sessions (`igg run REQUEST.json`); name another store "
            f"with --store PATH (or ${STORE_ENV})"
        )
    default = resolve_store_path(None) if not os.environ.get(STORE_ENV) else None
    hint = ""
    if default is not None and store_exists(default):
        again = ["igg", *without_store(command_line(args))]
        hint = f"; the default store {default} exists: `{shlex.join(again)}`"
    return SessionRefused(
        f"no session store at {path}; keep sessions there with `igg run REQUEST.json --store "
        f"{shlex.quote(str(path))}`, or point --store (or ${STORE_ENV}) at an existing store{hint}"
    )


def without_store(argv: Sequence[str]) -> list[str]:
    """``argv`` without its ``--store PATH`` / ``--store=PATH``."""
    out: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--store":
            skip = True
        elif not arg.startswith("--store="):
            out.append(arg)
    return out


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
