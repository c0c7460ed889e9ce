"""The ``igg`` command line: one module per command, each a thin adapter over the Python API.

Each command module exposes ``register(subparsers)``, which adds its parser and sets ``handler``: a
function ``(args) -> int`` returning the exit code. Exit codes: 0 done (whatever a run's stop reason),
2 invalid input, 1 failure. Errors of the user's making print one clear message, never a traceback.
A reader that stops early (``igg show ... | head``) ends the command quietly with 141, as a pipe does.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import os
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import NoReturn

from igg.errors import IGGError, RequestInvalid
from igg.interfaces.codes import EXIT_BROKEN_PIPE, EXIT_INTERRUPTED, exit_code
from igg.interfaces.codes import EXIT_FAILURE as EXIT_FAILURE  # the commands import these from here
from igg.interfaces.codes import EXIT_INVALID as EXIT_INVALID
from igg.interfaces.codes import EXIT_OK as EXIT_OK

COMMANDS = ("validate", "schema", "run", "resume", "map-code", "sessions", "show", "explain", "diff", "undo", "fork", "review",
            "replay", "batch", "mcp", "serve", "view",
            "tools", "export", "completion")
"""Command modules under ``igg.interfaces.cli``, in help order."""

"""128 + SIGPIPE: what a shell reports for a command whose reader went away."""


def igg_version() -> str:
    """The installed package's version (``0+unknown`` when run from a tree that was never installed)."""
    try:
        return version("igg")
    except PackageNotFoundError:
        return "0+unknown"


class Parser(argparse.ArgumentParser):
    """argparse as the ecosystem expects it: no option prefixes (``--js`` is not ``--json``), and a
    suggestion when a command or an option is mistyped. Subcommand parsers are of this class too."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    def format_help(self) -> str:
        """The help text; the commands' descriptions are their module docstrings, whose reST literals
        (````igg run````) read as Markdown's (```igg run```) on a terminal."""
        return super().format_help().replace("``", "`")

    def error(self, message: str) -> NoReturn:
        hint = self._suggestion(message)
        super().error(f"{message}{hint}")

    def _suggestion(self, message: str) -> str:
        """``; did you mean '--json'?`` for the closest known command or option, if one is close."""
        if "invalid choice: " in message:
            wrong = message.split("invalid choice: ", 1)[1].split("'")[1] if "'" in message else ""
            known = [c for a in self._actions for c in (a.choices or ()) if isinstance(c, str)]
        elif message.startswith("unrecognized arguments: "):
            wrong = message.split(": ", 1)[1].split()[0]
            known = [o for a in self._actions for o in a.option_strings]
        else:
            return ""
        close = difflib.get_close_matches(wrong.split("=", 1)[0], known, n=1, cutoff=0.6)
        return f"; did you mean '{close[0]}'?" if close else ""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every command registered."""
    parser = Parser(prog="igg", description="IGG, the Iterative Graph Generator.")
    parser.add_argument("--version", action="version", version=f"igg {igg_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS:
        importlib.import_module(f"igg.interfaces.cli.{name.replace('-', '_')}").register(sub)
    return parser


def _parse(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """Parse, reporting an unknown option with the usage of the command it was given to."""
    args, extra = parser.parse_known_args(argv)
    if extra:
        subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        command_parser = subparsers.choices.get(args.command, parser)
        command_parser.error(f"unrecognized arguments: {' '.join(extra)}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``igg`` console script."""
    parser = build_parser()
    if argv is None:
        from igg.interfaces.cli.completion import complete

        complete(parser)  # a shell asking for completions (TAB) is answered here, and the process ends
    args = _parse(parser, argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # for hints that repeat the command exactly
    try:
        code = int(args.handler(args))
        if not sys.stdout.closed:
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
        return exit_code(exc)
    except KeyboardInterrupt:
        print("igg: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def _detach_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush has nowhere to fail (Python's advice)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
