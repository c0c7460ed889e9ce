"""``igg schema request|response|document``: print a JSON Schema (the same text as ``schemas/``)."""

from __future__ import annotations

import argparse
import sys

SCHEMA_NAMES = ("document", "request", "response", "rules")
"""The names of ``igg.models.jsonschema.SCHEMA_MODELS`` (a test pins them), spelled here so that registering
the command does not load the models."""


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("schema", help="print a JSON Schema", description=__doc__)
    p.add_argument("name", choices=SCHEMA_NAMES, help="which schema")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from igg.models.jsonschema import json_schema_text

    sys.stdout.write(json_schema_text(args.name))
    return 0
