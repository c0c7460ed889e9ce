"""``igg run REQUEST.json``: build a graph with an agent, from the request to a stop reason.

REQUEST.json may be ``-`` to read the request from standard input. Without --out, --store or --export
the run is kept in the default store (one line on standard error says where; --no-store keeps nothing).

Exit codes: 0 the run reached a graceful stop (finished, max_iterations, limits_reached, stuck,
budget_exhausted); 1 it stopped with agent_error, or an export failed; 2 invalid input found before any
work (request, transcript, options, export targets, an agent without its endpoint); 130 interrupted
(Ctrl-C): what the run had is kept, and one line says how to resume it.

--documents PATH... builds the graph from documents (each fact records the documents supporting it);
--update --session ID brings a session so built in step with the documents as they are now.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from igg.interfaces.cli.common import add_run_options, execute, export_specs, setup_logging
from igg.interfaces.cli.documents import add_documents_options, run_documents
from igg.interfaces.cli.keep import add_keep_option


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "run",
        help="run a request with an agent",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("request", type=Path, help="the request JSON file ('-' reads it from standard input)")
    add_run_options(p)
    add_keep_option(p)
    add_documents_options(p)
    p.set_defaults(handler=run_command)


def run_command(args: argparse.Namespace) -> int:
    from igg.agents.registry import make_agent
    from igg.request.load import load_request

    setup_logging(args)
    request = load_request(args.request, documents=bool(getattr(args, "documents", None)))
    specs = export_specs(args)
    agent = make_agent(args.agent, request)
    if args.documents:
        return run_documents(args, request, agent)
    return execute(args, request, agent, specs=specs)
