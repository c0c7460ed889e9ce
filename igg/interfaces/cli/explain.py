"""``igg explain SESSION REF [--store PATH] [--no-edges] [--json]``: the provenance of a node or edge.

REF is a node id (``n3``), an edge id (``e5``) or a node's identity value (e.g. its name). Prints every
iteration that created, changed or deleted it (and, for a node, its edges), with the agent's reasoning, the
action's verdict and the context chunk (file) the iteration looked at.
"""

from __future__ import annotations

import argparse

from igg.interfaces.cli.storecli import add_json_option, add_store_option, open_store, print_json


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("explain", help="which iterations created and changed a node or edge, and why",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("session", help="the session id")
    p.add_argument("ref", help="a node id (n3), an edge id (e5) or a node's identity value (its name)")
    p.add_argument("--no-edges", action="store_true", help="leave out the edges of a node")
    add_store_option(p)
    add_json_option(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from igg.record.history import describe_evidence
    from igg.store import explain

    store = open_store(args)
    events = explain(store, args.session, args.ref, edges=not args.no_edges)
    if args.json:
        print_json([e.to_dict() for e in events])
        return 0
    print(f"{args.ref} in session {args.session}: {len(events)} change{'s' * (len(events) != 1)}")
    for e in events:
        when = f"iteration {e.iteration}" if e.iteration is not None else f"step {e.step} ({e.kind})"
        print(f"\n{when}: {e.op} {e.element}: {e.detail}")
        if e.chunk:
            print(f"  chunk: {e.chunk}")
        if e.verdict:
            print(f"  verdict: {e.verdict}")
        for item in e.evidence or ():
            print(f"  evidence: {describe_evidence(item)}")
        if e.reasoning:
            print(f"  reasoning: {' '.join(e.reasoning.split())}")
    return 0
