"""``igg validate REQUEST.json``: exit 0 when the request is valid, else 2 and every problem with its path.

REQUEST.json may be ``-`` to read the request from standard input."""

from __future__ import annotations

import argparse
from pathlib import Path

from igg.io.inputs import STDIN


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("validate", help="check a request payload", description=__doc__)
    p.add_argument("request", type=Path, help="the request JSON file ('-' reads it from standard input)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from igg.request.load import load_request

    request = load_request(args.request)
    schema = request.config.schema_
    seed = request.seed_data
    name = "standard input" if str(args.request) == STDIN else args.request
    print(
        f"{name}: valid. session_id={request.session_id} node_types={len(schema.node_types)} "
        f"edge_types={len(schema.edge_types)} max_iterations={request.config.max_iterations}"
        + (f" seed={len(seed.nodes)} nodes/{len(seed.edges)} edges" if seed else "")
    )
    return 0
