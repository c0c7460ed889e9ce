"""``igg schema request|response|document|rules``: print a JSON Schema (the same text as ``schemas/``).
``igg schema import ONTOLOGY``: print the IGG schema (``config.schema``) of an ontology (Text2KGBench JSON,
OWL/RDFS or SHACL in Turtle, RDF/XML or JSON-LD), its warnings on standard error.
``igg schema shacl ONTOLOGY``: print the SHACL shapes (Turtle) an RDF export under that schema satisfies."""

from __future__ import annotations

import argparse
import json
import sys

SCHEMA_NAMES = ("document", "request", "response", "rules")
"""The names of ``igg.models.jsonschema.SCHEMA_MODELS`` (a test pins them), spelled here so that registering
the command does not load the models."""
ONTOLOGY_COMMANDS = ("import", "shacl")
"""What the command does with an ontology file."""


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "schema",
        help="print a JSON Schema, or the schema or SHACL shapes of an ontology",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "name", choices=SCHEMA_NAMES + ONTOLOGY_COMMANDS, help="which schema, or what to do with FILE"
    )
    p.add_argument("file", nargs="?", metavar="FILE", help="the ontology file (import, shacl)")
    p.add_argument(
        "--base-iri", default="urn:igg:", help="base of the IRIs of names without an ontology IRI (shacl)"
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.name in ONTOLOGY_COMMANDS:
        return _ontology(args)
    if args.file is not None:
        print(f"igg schema {args.name}: takes no FILE (only import and shacl do)", file=sys.stderr)
        return 2
    from igg.models.jsonschema import json_schema_text

    sys.stdout.write(json_schema_text(args.name))
    return 0


def _ontology(args: argparse.Namespace) -> int:
    from igg.ontology import OntologyError, load_ontology
    from igg.ontology.shapes import shapes_turtle

    if not args.file:
        print(f"igg schema {args.name}: give the ontology FILE", file=sys.stderr)
        return 2
    try:
        onto = load_ontology(args.file)
        schema = onto.schema()
        for warning in onto.warnings:
            print(f"warning: {warning}", file=sys.stderr)
        if args.name == "import":
            print(
                json.dumps(
                    schema.model_dump(by_alias=True, exclude_defaults=True), indent=2, ensure_ascii=False
                )
            )
        else:
            sys.stdout.write(shapes_turtle(schema, args.base_iri))
    except OntologyError as exc:
        print(f"igg schema {args.name}: {exc}", file=sys.stderr)
        return 2
    return 0
