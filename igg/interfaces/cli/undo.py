"""``igg undo SESSION --to N [--store PATH]``: roll a session's graph back to how it was after iteration N
(0: the start). The undo is committed as a step of its own (the inverse mutations), so the history stays
whole: ``igg show`` lists it, ``igg replay`` replays it, and a later undo can bring the undone work back."""

from __future__ import annotations

import argparse

from igg.interfaces.cli.storecli import add_store_option, open_store


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("undo", help="roll a session back to after an iteration", description=__doc__)
    p.add_argument("session", help="the session id")
    p.add_argument(
        "--to", type=int, required=True, metavar="N", help="the iteration to return to (0: the start)"
    )
    add_store_option(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import shlex
    import sys

    from igg.interfaces.codes import EXIT_INVALID
    from igg.store.sessions import StoreSessions

    store = open_store(args)
    waiting, _ = store.review_state(args.session)
    if waiting is not None and waiting.get("state") == "pending":
        review = shlex.join(["igg", "review", args.session, "--store", str(store.path)])
        print(
            f"igg: session {args.session!r} has plan {waiting['plan']['plan_id']} waiting for review; decide"
            f" it first (`{review} --approve` or `{review} --reject NOTE`), then undo",
            file=sys.stderr,
        )
        return EXIT_INVALID
    undone = StoreSessions(store).undo(args.session, args.to)
    info = store.session(args.session)
    print(
        f"session {args.session}: rolled back to after iteration {args.to} as step {undone.step} "
        f"({undone.mutations} mutations); the graph has {info.nodes} nodes and {info.edges} edges"
    )
    return 0
