"""``igg cycles [PATH... | SESSION]``: the dependency cycles of a tree or a stored map, and how to break them.

Lists each strongly connected component at ``--level`` (module, the default; package; type; service: services
requesting each other's HTTP routes) over ``--edges`` (default IMPORTS, for type EXTENDS/IMPLEMENTS/CALLS/
INSTANTIATES, for service REQUESTS), largest first, with one cycle through it and
a small set of edges whose removal breaks it (the Eades-Lin-Smyth feedback-arc heuristic), each with the
statements behind it. The ``acyclic`` rule of ``igg check`` fails a build on them; this command only lists.
"""

from __future__ import annotations

import argparse

from igg.interfaces.cli.check import add_target_options, targets
from igg.interfaces.cli.storecli import print_json


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "cycles",
        help="dependency cycles and the edges that break them",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "targets",
        nargs="*",
        metavar="PATH|SESSION",
        help="source trees (default: the working directory) or one stored session id",
    )
    add_target_options(p)
    p.add_argument(
        "--level",
        choices=("module", "package", "type", "service"),
        default="module",
        help="what a cycle is made of (default module; service: HTTP requests between services)",
    )
    p.add_argument(
        "--edges",
        metavar="TYPES",
        help="comma-separated edge types (default: IMPORTS; for --level type: "
        "EXTENDS,IMPLEMENTS,CALLS,INSTANTIATES)",
    )
    p.add_argument(
        "--select", metavar="PATTERN", help="only nodes of this name pattern (shop.service or shop.*)"
    )
    p.add_argument(
        "--exclude-type-checking",
        action="store_true",
        help="leave out type-only imports (under if "
        "TYPE_CHECKING:, TypeScript import type): they are no dependency when the code runs",
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from igg.mapping.rule_jobs import cycles

    paths, session, store = targets(args)
    edges = [e.strip() for e in args.edges.split(",") if e.strip()] if args.edges else None
    found = cycles(
        paths,
        session=session,
        store=store,
        level=args.level,
        edges=edges,
        select=args.select,
        exclude_type_checking=args.exclude_type_checking,
    )
    if args.json:
        print_json([c.model_dump() for c in found])
        return 0
    from igg.interfaces.cli.check import hop_text
    from igg.rules.github import plain

    for i, c in enumerate(found, 1):
        print(f"cycle {i}: {plain(c.message)}")
        if args.level == "service":  # each hop is one request from a service to a route of the next
            print("  one request per step:")
            for h in c.path:
                print(f"    {hop_text(h)}")
        else:
            print("  " + " -> ".join(plain(n) for n in [c.path[0].source, *(h.target for h in c.path)]))
        print("  to break it, remove:")
        for h in c.breaking_edges:
            print(f"    {hop_text(h)}")
    print(f"{len(found)} cycle{'s' * (len(found) != 1)} at {args.level} level")
    return 0
