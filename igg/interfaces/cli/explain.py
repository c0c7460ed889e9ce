"""``igg explain SESSION REF [--store PATH] [--no-edges] [--json]``: the provenance of a node or edge.

REF is a node id (``n3``), an edge id (``e5``) or a node's identity value (e.g. its name). Prints every
iteration that created, changed or deleted it (and, for a node, its edges), with the agent's reasoning, the
action's verdict and the context chunk (file) the iteration looked at.
"""

from __future__ import annotations

import argparse
from typing import Any

from igg.interfaces.cli.common import add_time_options
from igg.interfaces.cli.storecli import add_json_option, add_store_option, open_store, print_json


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "explain",
        help="which iterations created and changed a node or edge, and why",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("session", help="the session id")
    p.add_argument("ref", help="a node id (n3), an edge id (e5) or a node's identity value (its name)")
    p.add_argument("--no-edges", action="store_true", help="leave out the edges of a node")
    add_time_options(p)
    add_store_option(p)
    add_json_option(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from igg.record.history import describe_evidence
    from igg.store import explain
    from igg.store.session_graph import time_arg

    store = open_store(args)
    told = time_arg("--known-at", args.known_at)
    events = explain(
        store,
        args.session,
        args.ref,
        edges=not args.no_edges,
        known_at=told.timestamp() if told is not None else None,
    )
    held = _held(store, args) if args.as_of is not None else None
    if args.json:
        print_json(
            [e.to_dict() for e in events]
            if held is None
            else {"as_of": held, "changes": [e.to_dict() for e in events]}
        )
        return 0

    print(
        f"{args.ref} in session {args.session}: {len(events)} change{'s' * (len(events) != 1)}"
        + (f" known by {args.known_at}" if told is not None else "")
    )
    if held is not None:
        for element, facts in held.items():
            print(
                f"as of {args.as_of}: {element} "
                + (f"held: {facts}" if facts is not None else "did not hold")
            )
    for e in events:
        when = f"iteration {e.iteration}" if e.iteration is not None else f"step {e.step} ({e.kind})"
        print(f"\n{when}: {e.op} {e.element}: {e.detail}")
        print(
            f"  told: {e.known_at}"
            + (f"; valid: {e.valid['from'] or '-'} .. {e.valid['to'] or '-'}" if e.valid else "")
        )
        if e.chunk:
            print(f"  chunk: {e.chunk}")
        if e.verdict:
            print(f"  verdict: {e.verdict}")
        for item in e.evidence or ():
            print(f"  evidence: {describe_evidence(item)}")
        if e.reasoning:
            print(f"  reasoning: {' '.join(e.reasoning.split())}")
    return 0


def _held(store: Any, args: argparse.Namespace) -> dict[str, Any]:
    """``--as-of``: each element REF names and its properties valid then (None: it did not hold)."""
    from igg.graph.asof import as_of
    from igg.store.history import resolve
    from igg.store.session_graph import time_arg

    at = time_arg("--as-of", args.as_of)
    assert at is not None
    told = time_arg("--known-at", args.known_at)
    step = store.step_known_at(args.session, told.timestamp()) if told is not None else None
    _, state, _ = store.load_state(args.session, upto_step=step)
    sliced = as_of(state, at)
    out: dict[str, Any] = {}
    for element in resolve(store, args.session, args.ref):
        if element in sliced.nodes:
            out[element] = sliced.node_properties(element)
        elif sliced.has_edge(element):
            source, target, data = sliced.edge_ends(element)
            out[element] = {"from": source, "type": data["type"], "to": target, **data["properties"]}
        else:
            out[element] = None
    return out
