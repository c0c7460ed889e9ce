"""Options shared by the commands that serve the workspace (``igg mcp``, ``igg serve``), and their setup."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import structlog

from igg.workspace import MemorySessions, Workspace


def add_options(p: argparse.ArgumentParser) -> None:
    """``--store`` and ``--output-dir``."""
    p.add_argument("--store", type=Path, default=None,
                   help="session store file (default $IGG_STORE, else .igg/sessions.sqlite)")
    p.add_argument("--memory", action="store_true",
                   help="keep sessions in memory only (lost when the server stops)")
    p.add_argument("--output-dir", type=Path, default=os.environ.get("IGG_OUTPUT_DIR"),
                   help="directory export_graph may write files under (default $IGG_OUTPUT_DIR; none: "
                        "exports are returned inline only)")


def configure_logging() -> None:
    """structlog to stderr: stdout may be a protocol stream (MCP over stdio)."""
    structlog.configure(logger_factory=structlog.PrintLoggerFactory(file=sys.stderr))


def build_workspace(args: argparse.Namespace) -> Workspace:
    """The workspace the options describe."""
    output = args.output_dir
    if output is not None:
        output = Path(output)
        output.mkdir(parents=True, exist_ok=True)
    if args.memory:
        return Workspace(MemorySessions(), output_dir=output)
    from igg.store import SessionStore, resolve_store_path
    from igg.workspace.store_repo import StoreSessions

    return Workspace(StoreSessions(SessionStore(resolve_store_path(args.store))), output_dir=output)
