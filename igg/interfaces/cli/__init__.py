"""The ``igg`` command line: one module per command, each a thin adapter over the Python API.

Each command module exposes ``register(subparsers)``, which adds its parser and sets ``handler``: a
function ``(args) -> int`` returning the exit code. Exit codes: 0 done (whatever a run's stop reason),
2 invalid input, 1 failure. Errors of the user's making print one clear message, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from igg.errors import IGGError, RequestInvalid

COMMANDS = ("validate", "schema", "run", "resume", "map-code", "sessions", "show", "explain", "diff", "undo",
            "replay", "mcp", "serve",
            "tools", "export")
"""Command modules under ``igg.interfaces.cli``, in help order."""

EXIT_OK, EXIT_FAILURE, EXIT_INVALID = 0, 1, 2


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every command registered."""
    parser = argparse.ArgumentParser(prog="igg", description="IGG, the Iterative Graph Generator.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS:
        importlib.import_module(f"igg.interfaces.cli.{name.replace('-', '_')}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``igg`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args))
    except RequestInvalid as exc:
        print(f"igg: {exc}", file=sys.stderr)
        return EXIT_INVALID
    except IGGError as exc:
        print(f"igg: {exc}", file=sys.stderr)
        return int(getattr(exc, "exit_code", EXIT_FAILURE))
    except KeyboardInterrupt:
        print("igg: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
