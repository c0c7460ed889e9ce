"""Options shared by the commands that serve the workspace (``igg mcp``, ``igg serve``), and their setup."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

from igg.interfaces.cli.storecli import STORE_HELP
from igg.record import logs as igg_logging
from igg.record.logs import LOG_FORMATS

if TYPE_CHECKING:
    from igg.workspace import Workspace

DEFAULT_MAX_ACTIONS = 500
"""The server's ceiling on actions per request (``--max-actions``)."""


def add_options(p: argparse.ArgumentParser) -> None:
    """``--store``, ``--memory``, ``--output-dir`` and ``--log-format``."""
    p.add_argument("--store", metavar="LOCATION", default=None, help=STORE_HELP)  # text: a URL is no Path
    p.add_argument(
        "--memory", action="store_true", help="keep sessions in memory only (lost when the server stops)"
    )
    p.add_argument(
        "--output-dir",
        type=Path,
        default=os.environ.get("IGG_OUTPUT_DIR"),
        help="directory export_graph may write files under (default $IGG_OUTPUT_DIR; none: "
        "exports are returned inline only)",
    )
    p.add_argument(
        "--log-format",
        choices=LOG_FORMATS,
        default="console",
        help="log lines on standard error: console (default) or json",
    )
    p.add_argument(
        "--max-actions",
        type=int,
        default=DEFAULT_MAX_ACTIONS,
        metavar="N",
        help=f"most actions one apply_actions request may carry, whatever its request's "
        f"config says (default {DEFAULT_MAX_ACTIONS}); more are refused up front (TOO_MANY_ACTIONS)",
    )


def configure_logging(args: argparse.Namespace) -> None:
    """Logs to standard error (stdout may be a protocol stream: MCP over stdio), secrets redacted."""
    igg_logging.configure_logging(args.log_format)


def build_workspace(args: argparse.Namespace) -> Workspace:
    """The workspace the options describe."""
    output = args.output_dir
    if output is not None:
        output = Path(output)
        output.mkdir(parents=True, exist_ok=True)
    from igg.workspace import (  # the models load when a server starts, not at start-up
        MemorySessions,
        Workspace,
    )

    if args.memory:
        return Workspace(MemorySessions(), output_dir=output, max_actions=args.max_actions)
    from igg.store import SessionStore, StoreSessions, resolve_store_path

    return Workspace(
        StoreSessions(SessionStore(resolve_store_path(args.store))),
        output_dir=output,
        max_actions=args.max_actions,
    )
