"""``igg sessions [--store LOCATION] [--json]``: every session in the store, with its status and stop reason.

``igg sessions [SESSION ...] --copy-to LOCATION``: copy the sessions named (default: all) with everything
stored for them into another store (an SQLite file or a ``postgresql://`` database, made when missing), one
transaction per session; a session id the other store already holds is refused on a line of its own and the
rest go on.
"""

from __future__ import annotations

import argparse
import sys

from igg.interfaces.cli.storecli import add_json_option, add_store_option, open_store, print_json, table, when
from igg.interfaces.codes import EXIT_FAILURE, EXIT_INVALID, EXIT_OK


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "sessions",
        help="list the sessions in a store, or copy them to another store",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "session", nargs="*", metavar="SESSION", help="with --copy-to: the sessions to copy (default: all)"
    )
    p.add_argument(
        "--copy-to",
        metavar="LOCATION",
        default=None,
        help="copy the sessions into this store (an SQLite file or postgresql://USER@HOST/DATABASE)",
    )
    add_store_option(p)
    add_json_option(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.copy_to is not None:
        return copy(args)
    if args.session:
        print(
            "igg: naming sessions goes with --copy-to LOCATION (igg sessions lists every session)",
            file=sys.stderr,
        )
        return EXIT_INVALID
    store = open_store(args)
    sessions = store.sessions()
    if args.json:
        print_json(
            [
                {
                    "session_id": s.session_id,
                    "status": s.status,
                    "stop_reason": s.stop_reason,
                    "iterations": s.last_iteration,
                    "steps": s.last_step,
                    "nodes": s.nodes,
                    "edges": s.edges,
                    "agent": s.agent,
                    "created_at": when(s.created_at),
                    "updated_at": when(s.updated_at),
                    "goal": s.goal,
                }
                for s in sessions
            ]
        )
        return 0
    if not sessions:
        print(f"no sessions in {store.path}")
        return 0
    rows = [
        (
            s.session_id,
            s.status,
            s.stop_reason or "-",
            s.last_iteration,
            s.nodes,
            s.edges,
            when(s.updated_at),
            _short(s.goal),
        )
        for s in sessions
    ]
    print(table(("SESSION", "STATUS", "STOP", "ITER", "NODES", "EDGES", "UPDATED (UTC)", "GOAL"), rows))
    return 0


def copy(args: argparse.Namespace) -> int:
    """``--copy-to``: one line per session (copied, or why not), then the count; exit 1 when any was not."""
    from igg.store import SessionStore
    from igg.store.copy import copy_sessions

    source = open_store(args)
    target = SessionStore(args.copy_to)
    try:
        if target.location == source.location:
            print(f"igg: --copy-to names the store the sessions are in ({source.location})", file=sys.stderr)
            return EXIT_INVALID
        results = copy_sessions(source, target, args.session)
    finally:
        target.close()
        source.close()
    for r in results:
        if r.outcome == "copied" and not args.json:
            print(
                f"copied {r.session_id}: {r.rows['steps']} steps, {r.rows['mutations']} mutations, "
                f"{r.rows['snapshots']} snapshots, {r.rows['export_targets']} export records"
            )
        else:
            print(f"igg: {r.message}", file=sys.stderr)
    done = sum(r.outcome == "copied" for r in results)
    if args.json:
        print_json(
            [
                {"session_id": r.session_id, "outcome": r.outcome, "rows": r.rows, "message": r.message}
                for r in results
            ]
        )
    else:
        print(f"copied {done} of {len(results)} sessions from {source.location} to {target.location}")
    return EXIT_OK if done == len(results) else EXIT_FAILURE


def _short(text: str, width: int = 48) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"
