"""``igg fork SESSION --at N [--as NEW] [--store PATH]``: start a new session from a session's graph after
iteration N (0: the start). The fork keeps the original's history up to N (same node and edge ids) and its
lineage (shown by ``igg show``, kept in the metadata of its exports); the original is untouched. Continue the
fork with ``igg resume NEW --store PATH`` (``--agent`` to change the agent): it runs from iteration N+1. A
finished session, or one undone after it finished, is continued this way."""

from __future__ import annotations

import argparse
import shlex

from igg.interfaces.cli.storecli import add_store_option, open_store


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "fork", help="a new session from a session's graph after iteration N", description=__doc__
    )
    p.add_argument("session", help="the session id to fork")
    p.add_argument(
        "--at", type=int, required=True, metavar="N", help="the iteration to fork after (0: the start)"
    )
    p.add_argument("--as", dest="new_id", metavar="NEW", help="the new session's id (default SESSION-fork-N)")
    add_store_option(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from igg.store.sessions import StoreSessions

    store = open_store(args)
    new_id, copied = StoreSessions(store).fork(args.session, args.at, args.new_id)
    info = store.session(new_id)
    print(
        f"session {new_id}: forked from {args.session} after iteration {args.at} ({copied} steps copied;"
        f" {info.nodes} nodes, {info.edges} edges); continue it with"
        f" `{shlex.join(['igg', 'resume', new_id, '--store', str(store.path)])}` (add --agent AGENT for"
        " another agent)"
    )
    return 0
