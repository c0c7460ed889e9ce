"""``igg resume SESSION [--store PATH] [--agent AGENT] [--out DIR] [--export FORMAT[:TARGET]]... [--json]``:
continue an interrupted session where its last committed iteration left off.

The process may have died at any moment (even ``kill -9`` in the middle of an iteration): the store holds
whole iterations only, so the resumed run rebuilds the graph from them and runs the first iteration that
was not committed; none is applied twice or lost. The agent is the one the session was started with
(``--agent`` overrides it). A finished session, or one whose process is still running, is refused (exit 2;
``--force`` takes over a session whose process looks alive). The store is ``--store``, else ``$IGG_STORE``,
else ``.igg/sessions.sqlite``.
"""

from __future__ import annotations

import argparse

from igg.agents.registry import make_agent
from igg.interfaces.cli.common import add_run_options, execute, export_specs, setup_logging
from igg.interfaces.cli.storecli import STORE_HELP, open_store
from igg.store import SessionRefused, resolve_store_path, resume_point

SESSION_AGENT = "session"
"""``--agent session`` (the default): the agent the session was started with."""


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("resume", help="continue an interrupted session", description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("session", help="the session id (see `igg sessions`)")
    add_run_options(p, default_agent=SESSION_AGENT)
    for action in p._actions:  # the shared options, worded for resume
        if "--store" in action.option_strings:
            action.help = STORE_HELP
        elif "--force" in action.option_strings:
            action.help = "take the session over even though the process that ran it looks alive"
        elif "--agent" in action.option_strings:
            action.help = "session (default: the agent the session was started with), auto, llm, code, hybrid " \
                          "or script:PATH"
    p.set_defaults(handler=run_command)


def run_command(args: argparse.Namespace) -> int:
    setup_logging(args)
    args.store = resolve_store_path(args.store)
    store = open_store(args)
    point = resume_point(store, args.session)
    if args.agent == SESSION_AGENT:
        if not point.agent:
            raise SessionRefused(f"session {args.session!r} does not name its agent; pass --agent")
        args.agent = point.agent
    specs = export_specs(args)
    agent = make_agent(args.agent, point.request)
    return execute(args, point.request, agent, specs=specs, resume=True, state=point.state, records=point.records)
