"""``igg replay SESSION [--store PATH] [--output GRAPH.json]``: rebuild a session's graph from its stored
mutations alone and check it against the stored graph (every snapshot, every step's counts). Exit 0 when
they are equal, 1 when they differ (the differences are printed)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from igg.interfaces.cli.storecli import add_store_option, open_store
from igg.io.files import write_file


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "replay", help="rebuild a session from its mutations and check it", description=__doc__
    )
    p.add_argument("session", help="the session id")
    p.add_argument(
        "--output", type=Path, metavar="PATH", help="also write the rebuilt graph (IGG JSON document)"
    )
    add_store_option(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from igg.store import replay

    store = open_store(args)
    report = replay(store, args.session)
    state = report.state
    print(
        f"session {args.session}: replayed {report.steps} steps, {report.mutations} mutations -> "
        f"{state.node_count} nodes, {state.edge_count} edges"
    )
    if args.output:
        request = store.request(args.session)
        document = state.to_document(request.config.schema_, {"session_id": args.session}, provenance=True)
        write_file(
            args.output,
            (document.model_dump_json(by_alias=True, exclude_none=True, indent=2) + "\n").encode("utf-8"),
        )
        print(f"wrote {args.output}")
    if report.ok:
        print(
            "equal to the stored graph (checked: " + "; ".join(report.checked or ["nothing stored yet"]) + ")"
        )
        return 0
    print("DIFFERENT from the stored graph:", file=sys.stderr)
    for p in report.problems:
        print(f"  {p}", file=sys.stderr)
    return 1
