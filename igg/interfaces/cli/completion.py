"""``igg completion bash|zsh|fish``: print the shell code that completes ``igg``'s commands and options.

Add ``eval "$(igg completion bash)"`` to ~/.bashrc (``zsh``: to ~/.zshrc; ``fish``: ``igg completion fish |
source``). Completion is argcomplete's: the shell calls ``igg`` itself with the command line so far, so the
completions are always those of the installed version.
"""

from __future__ import annotations

import argparse
import os
import sys

SHELLS = ("bash", "zsh", "fish", "tcsh", "powershell")


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "completion",
        help="print shell code completing igg's commands and options",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("shell", choices=SHELLS, help="the shell to complete in")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from argcomplete.shell_integration import shellcode

    sys.stdout.write(shellcode(["igg"], shell=args.shell))
    return 0


def complete(parser: argparse.ArgumentParser) -> None:
    """Answer the shell's completion request and exit, when this run is one (argcomplete's ``_ARGCOMPLETE``
    protocol); otherwise return at once (argcomplete is not even imported)."""
    if "_ARGCOMPLETE" not in os.environ:
        return
    import argcomplete

    argcomplete.autocomplete(parser)
