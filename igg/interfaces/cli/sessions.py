"""``igg sessions [--store PATH] [--json]``: every session in the store, with its status and stop reason."""

from __future__ import annotations

import argparse

from igg.interfaces.cli.storecli import add_json_option, add_store_option, open_store, print_json, table, when


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("sessions", help="list the sessions in a store", description=__doc__)
    add_store_option(p)
    add_json_option(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    store = open_store(args)
    sessions = store.sessions()
    if args.json:
        print_json([{"session_id": s.session_id, "status": s.status, "stop_reason": s.stop_reason,
                     "iterations": s.last_iteration, "steps": s.last_step, "nodes": s.nodes, "edges": s.edges,
                     "agent": s.agent, "created_at": when(s.created_at), "updated_at": when(s.updated_at),
                     "goal": s.goal} for s in sessions])
        return 0
    if not sessions:
        print(f"no sessions in {store.path}")
        return 0
    rows = [(s.session_id, s.status, s.stop_reason or "-", s.last_iteration, s.nodes, s.edges, when(s.updated_at),
             _short(s.goal)) for s in sessions]
    print(table(("SESSION", "STATUS", "STOP", "ITER", "NODES", "EDGES", "UPDATED (UTC)", "GOAL"), rows))
    return 0


def _short(text: str, width: int = 48) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"
