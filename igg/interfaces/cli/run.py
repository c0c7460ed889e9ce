"""``igg run REQUEST.json``: build a graph with an agent, from the request to a stop reason.

Exit 0 when the run completed (whatever its stop reason), 2 for invalid input (request, transcript,
options), 1 for a failure (e.g. an agent that is not available).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from igg.agents.registry import make_agent
from igg.compile import load_request
from igg.interfaces.cli.common import add_run_options, execute, export_specs, setup_logging


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("run", help="run a request with an agent", description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("request", type=Path, help="the request JSON file")
    add_run_options(p)
    p.set_defaults(handler=run_command)


def run_command(args: argparse.Namespace) -> int:
    setup_logging(args)
    request = load_request(args.request)
    specs = export_specs(args)
    agent = make_agent(args.agent, request)
    return execute(args, request, agent, specs=specs)
