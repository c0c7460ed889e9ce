"""``igg schema request|response|document``: print a JSON Schema (the same text as ``schemas/``)."""

from __future__ import annotations

import argparse
import sys

from igg.models.jsonschema import SCHEMA_MODELS, json_schema_text


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("schema", help="print a JSON Schema", description=__doc__)
    p.add_argument("name", choices=sorted(SCHEMA_MODELS), help="which schema")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    sys.stdout.write(json_schema_text(args.name))
    return 0
