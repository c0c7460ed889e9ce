"""The ``igg`` command line: one module per command, each a thin adapter over the Python API.

Each command module exposes ``register(subparsers)``, which adds its parser and sets ``handler``: a
function ``(args) -> int`` returning the exit code. Exit codes: 0 done (whatever a run's stop reason),
2 invalid input, 1 failure. Errors of the user's making print one clear message, never a traceback.
A reader that stops early (``igg show ... | head``) ends the command quietly with 141, as a pipe does.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from igg.errors import IGGError, RequestInvalid

COMMANDS = ("validate", "schema", "run", "resume", "map-code", "sessions", "show", "explain", "diff", "undo", "fork", "review",
            "replay", "batch", "mcp", "serve", "view",
            "tools", "export")
"""Command modules under ``igg.interfaces.cli``, in help order."""

EXIT_OK, EXIT_FAILURE, EXIT_INVALID = 0, 1, 2
EXIT_BROKEN_PIPE = 141
"""128 + SIGPIPE: what a shell reports for a command whose reader went away."""


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
        code = int(args.handler(args))
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
        return code
    except BrokenPipeError:
        _detach_stdout()
        return EXIT_BROKEN_PIPE
    except RequestInvalid as exc:
        print(f"igg: {exc}", file=sys.stderr)
        return EXIT_INVALID
    except IGGError as exc:
        print(f"igg: {exc}", file=sys.stderr)
        return int(getattr(exc, "exit_code", EXIT_FAILURE))
    except KeyboardInterrupt:
        print("igg: interrupted", file=sys.stderr)
        return 130


def _detach_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush has nowhere to fail (Python's advice)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
