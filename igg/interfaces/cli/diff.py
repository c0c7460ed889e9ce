"""``igg diff SESSION A B [--store PATH] [--json]``: what changed between the graph after iteration A and
after iteration B (0 is the start). ``+`` added, ``-`` deleted, ``~`` changed (with the properties)."""

from __future__ import annotations

import argparse
from typing import Any

from igg.interfaces.cli.storecli import add_json_option, add_store_option, open_store, print_json


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("diff", help="what changed between two iterations", description=__doc__)
    p.add_argument("session", help="the session id")
    p.add_argument("a", type=int, help="the first iteration (0: the start)")
    p.add_argument("b", type=int, help="the second iteration")
    add_store_option(p)
    add_json_option(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from igg.store import diff
    from igg.store.history import node_names

    store = open_store(args)
    changes = diff(store, args.session, args.a, args.b)
    if args.json:
        print_json([c.to_dict() for c in changes])
        return 0
    counts = {k: sum(1 for c in changes if c.change == k) for k in ("added", "deleted", "changed")}
    print(
        f"session {args.session}, iteration {args.a} -> {args.b}: "
        + ", ".join(f"{n} {k}" for k, n in counts.items())
    )
    names = node_names(store, args.session, {n for c in changes if c.ends for n in c.ends})
    for c in changes:
        mark = {"added": "+", "deleted": "-", "changed": "~"}[c.change]
        head = f"{mark} {c.kind} {c.element} {c.type}"
        if c.ends:
            head += f" {names.get(c.ends[0], c.ends[0])} -> {names.get(c.ends[1], c.ends[1])}"
        if c.change == "changed":
            print(f"{head}: {_changes(c.before or {}, c.after or {})}")
        else:
            props = c.after if c.change == "added" else c.before
            print(f"{head} {_props(props)}" if props or c.kind == "node" else head)
    return 0


def _props(props: dict[str, Any] | None) -> str:
    return "{" + ", ".join(f"{k}={v!r}" for k, v in (props or {}).items()) + "}"


def _changes(before: dict[str, Any], after: dict[str, Any]) -> str:
    parts = []
    for k in list(before) + [k for k in after if k not in before]:
        if k not in after:
            parts.append(f"{k}: {before[k]!r} -> (removed)")
        elif k not in before:
            parts.append(f"{k}: (absent) -> {after[k]!r}")
        elif before[k] != after[k]:
            parts.append(f"{k}: {before[k]!r} -> {after[k]!r}")
    return "; ".join(parts)
