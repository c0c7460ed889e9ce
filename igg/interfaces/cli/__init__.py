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
from typing import Any, NoReturn

from igg.errors import IGGError, RequestInvalid
from igg.interfaces.codes import EXIT_BROKEN_PIPE, EXIT_INTERRUPTED, exit_code
from igg.interfaces.codes import EXIT_FAILURE as EXIT_FAILURE  # the commands import these from here
from igg.interfaces.codes import EXIT_INVALID as EXIT_INVALID
from igg.interfaces.codes import EXIT_OK as EXIT_OK

COMMANDS = (
    "validate",
    "schema",
    "run",
    "resume",
    "map-code",
    "check",
    "cycles",
    "sessions",
    "show",
    "explain",
    "diff",
    "undo",
    "fork",
    "review",
    "replay",
    "batch",
    "mcp",
    "serve",
    "view",
    "tools",
    "export",
    "eval",
    "completion",
)
"""Command modules under ``igg.interfaces.cli``, in help order."""

"""128 + SIGPIPE: what a shell reports for a command whose reader went away."""


def igg_version() -> str:
    """The installed package's version (``0+unknown`` when run from a tree that was never installed)."""
    from importlib.metadata import PackageNotFoundError, version  # 20 ms: only for --version and reports

    try:
        return version("igg")
    except PackageNotFoundError:
        return "0+unknown"


class _Version(argparse.Action):
    """``--version``: argparse's version action, reading the package metadata only when it is asked for."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        kwargs.setdefault("help", "show the version and exit")
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        print(f"igg {igg_version()}")
        parser.exit()


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

    _refused: tuple[str, list[str]] | None = None
    """(the value typed, the choices known) when argparse is about to refuse a value outside the choices."""

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        # argparse is about to refuse a value outside the choices: keep what was typed and what is known, so
        # ``error`` can suggest from them (argparse hands ``error`` only its message text)
        if action.choices is not None and value not in action.choices and isinstance(value, str):
            self._refused = (value, [c for c in action.choices if isinstance(c, str)])
        super()._check_value(action, value)

    def error(self, message: str) -> NoReturn:
        refused, self._refused = self._refused, None
        super().error(message + (_closest(*refused) if refused else ""))

    def refuse_unknown(self, extra: Sequence[str]) -> NoReturn:
        """Refuse options this command does not know, suggesting the closest one it does."""
        known = [o for a in self._actions for o in a.option_strings]
        self.error(f"unrecognized arguments: {' '.join(extra)}{_closest(extra[0], known)}")


def _closest(wrong: str, known: Sequence[str]) -> str:
    """``; did you mean '--json'?`` for the known command or option closest to ``wrong``, if one is close."""
    close = difflib.get_close_matches(wrong.split("=", 1)[0], known, n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every command registered."""
    parser = Parser(prog="igg", description="IGG, the Iterative Graph Generator.")
    parser.add_argument("--version", action=_Version)
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
        if isinstance(command_parser, Parser):
            command_parser.refuse_unknown(extra)
        command_parser.error(f"unrecognized arguments: {' '.join(extra)}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``igg`` console script."""
    if argv is None:
        _fewer_collections()
    parser = build_parser()
    if argv is None:
        from igg.interfaces.cli.completion import complete

        complete(parser)  # a shell asking for completions (TAB) is answered here, and the process ends
    if not (
        sys.argv[1:] if argv is None else argv
    ):  # bare `igg`: what it can do, not just "COMMAND required"
        parser.print_help(sys.stderr)
        return EXIT_INVALID
    args = _parse(parser, argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # for hints that repeat the command exactly
    try:
        code = int(args.handler(args))
        if not sys.stdout.closed:
            sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
        if argv is None and _leaves_at_once(args):
            _leave(code)
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


COLLECTOR_THRESHOLDS = (200_000, 30, 30)
"""The cyclic collector's thresholds in an ``igg`` process (mypy's): a young pass per 200,000 allocations, not
700. Loading the modules a command needs allocates about 150,000 objects that live as long as the process, and
the default thresholds walk them in 165 passes: 46-52 ms of an ``igg run`` or a small ``igg map-code`` (about
0.5 s of CPU each), none of it freeing anything. Blocks that build a graph pause the collector anyway
(``igg.graph.collector``)."""


def _fewer_collections() -> None:
    """The console script's collector thresholds (``COLLECTOR_THRESHOLDS``); a program calling ``main(argv)``
    keeps its own."""
    import gc

    gc.set_threshold(*COLLECTOR_THRESHOLDS)


def _leaves_at_once(args: argparse.Namespace) -> bool:
    """Whether the console script ends without freeing what the command built (``_leave``): a static
    ``map-code`` (its update too), ``check`` and ``cycles``, which hold nothing open when they return (their
    stores, caches, parse processes and temporary folders are closed in ``with`` blocks). Not an LLM map,
    whose local model server and client close when they are freed; nor under a tracer or a profiler
    (coverage, cProfile), which write what they found as Python ends."""
    if sys.gettrace() is not None or sys.getprofile() is not None:
        return False
    command = getattr(args, "command", None)
    return command in ("check", "cycles") or (
        command == "map-code" and getattr(args, "agent", "code") == "code"
    )


def _leave(code: int) -> None:
    """End the process at once with ``code``, its output flushed, as mypy does: the interpreter's exit frees
    every object one by one, 8.6 s of a 57 s ``map-code --update`` whose graph held 2.5 million edges at
    50,000 files, and none of it is needed."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if not stream.closed:
                stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def _detach_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush has nowhere to fail (Python's advice)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
