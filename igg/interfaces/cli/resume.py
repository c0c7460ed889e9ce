"""``igg resume SESSION [--store PATH] [--agent AGENT] [--out DIR] [--export FORMAT[:TARGET]]... [--json]``:
continue an interrupted session where its last committed iteration left off (``igg.service.continue_session``,
the same call as the HTTP API's and the MCP server's).

The process may have died at any moment (even ``kill -9`` in the middle of an iteration): the store holds
whole iterations only, so the resumed run rebuilds the graph from them and runs the first iteration that
was not committed; none is applied twice or lost. The agent is the one the session was started with
(``--agent`` overrides it). A finished session, or one whose process is still running, is refused (exit 2;
``--force`` takes over a session whose process looks alive). The store is ``--store``, else ``$IGG_STORE``,
else ``./.igg/sessions.sqlite`` if it exists, else the default store (``igg.store.resolve_store_path``).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING

from igg.interfaces.cli.common import add_run_options, export_specs, present, setup_logging
from igg.interfaces.cli.storecli import STORE_HELP, open_store
from igg.store import resolve_store_path
from igg.store.location import store_text

if TYPE_CHECKING:
    from igg.persistence import Recorder
    from igg.record.records import Event, RunResult

SESSION_AGENT = "session"
"""``--agent session`` (the default): the agent the session was started with."""


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "resume",
        help="continue an interrupted session",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("session", help="the session id (see `igg sessions`)")
    add_run_options(p, default_agent=SESSION_AGENT)
    for action in p._actions:  # the shared options, worded for resume
        if "--store" in action.option_strings:
            action.help = STORE_HELP
        elif "--force" in action.option_strings:
            action.help = "take the session over even though the process that ran it looks alive"
        elif "--agent" in action.option_strings:
            action.help = (
                "session (default: the agent the session was started with), auto, llm, code, hybrid "
                "or script:PATH"
            )
    p.set_defaults(handler=run_command)


def run_command(args: argparse.Namespace) -> int:
    from igg.agents.registry import make_agent
    from igg.interfaces.cli.keep import Keeping
    from igg.interfaces.cli.targets import check_export_targets
    from igg.service import continue_session

    setup_logging(args)
    args.store = resolve_store_path(args.store)
    store = open_store(args)
    agent = None if args.agent == SESSION_AGENT else args.agent
    specs = export_specs(args)
    check_export_targets(specs, args.out)
    recorders: list[Recorder] = []
    if args.sync_each_iteration:
        from igg.interfaces.cli.export_sync import sync_each_iteration

        syncer, specs = sync_each_iteration(specs, store)
        recorders.append(syncer)

    def job(on_event: Callable[[Event], None], witness: Recorder) -> RunResult:
        return continue_session(
            store,
            args.session,
            agent=agent,
            force=args.force,
            out=args.out,
            exports=specs,
            provenance=args.provenance,
            on_event=on_event,
            recorders=[*recorders, witness],
            make_agent=make_agent,
        )

    return present(
        args, job, keep=Keeping(store=store_text(args.store), force=args.force), session_id=args.session
    )
