"""Write what is generated from the code: ``schemas/*.schema.json`` from the models, and the reference pages
of the docs site (``docs/models.md`` from those schemas, ``docs/cli.md`` from the command line's own help).
``--check``: fail when a file has drifted (``scripts/test`` runs it)."""

from __future__ import annotations

import io
import json
import os
import sys
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

from igg.models.jsonschema import SCHEMA_MODELS, json_schema_text

ROOT = Path(__file__).resolve().parent.parent
HELP_COLUMNS = "100"
"""The width argparse formats the help at (its default follows the terminal: pinned, the page is stable)."""


def _type(spec: dict[str, Any]) -> str:
    """A property's type as a reader wants it: ``string``, ``integer | null``, ``list of Action``, ``"a" |
    "b"``."""
    if "$ref" in spec:
        name = spec["$ref"].rpartition("/")[2]
        return f"[{name}](#{name.lower()})"
    if "const" in spec:
        return json.dumps(spec["const"])
    if "enum" in spec:
        return " \\| ".join(json.dumps(v) for v in spec["enum"])
    for key in ("anyOf", "oneOf", "allOf"):
        if key in spec:
            return " \\| ".join(_type(s) for s in spec[key])
    kind = spec.get("type", "any")
    if kind == "array":
        return f"list of {_type(spec.get('items', {}))}"
    if kind == "object" and isinstance(spec.get("additionalProperties"), dict):
        return f"map of {_type(spec['additionalProperties'])}"
    return " \\| ".join(kind) if isinstance(kind, list) else str(kind)


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _model_table(name: str, spec: dict[str, Any]) -> list[str]:
    lines = [f"### {name}", ""]
    if spec.get("description"):
        lines += [" ".join(spec["description"].split()), ""]
    properties = spec.get("properties", {})
    if not properties:
        return [*lines, f"Type: {_type(spec)}.", ""]
    required = set(spec.get("required", ()))
    lines += ["| field | type | required | description |", "|---|---|---|---|"]
    for field, sub in properties.items():
        lines.append(
            f"| `{field}` | {_type(sub)} | {'yes' if field in required else ''} | "
            f"{_cell(sub.get('description', ''))} |"
        )
    return [*lines, ""]


def models_page() -> str:
    """docs/models.md: every schema's root and definitions, field by field."""
    lines = [
        "# Models",
        "",
        (
            "Generated from IGG's pydantic models by `python scripts/gen_schemas.py` (the JSON Schemas"
            " themselves are"
        ),
        "in `schemas/`; `igg schema request|response` prints them). Do not edit by hand.",
        "",
    ]
    for name in SCHEMA_MODELS:
        schema = json.loads(json_schema_text(name))
        lines += [f"## {name}", ""]
        lines += _model_table(schema.get("title", name), schema)
        for def_name, spec in schema.get("$defs", {}).items():
            lines += _model_table(def_name, spec)
    return "\n".join(lines).rstrip("\n") + "\n"


def cli_page() -> str:
    """docs/cli.md: ``igg --help`` and every command's ``--help``, as the command line prints them."""
    os.environ["COLUMNS"] = HELP_COLUMNS
    from igg.interfaces.cli import COMMANDS, build_parser

    parser = build_parser()
    lines = [
        "# Command line",
        "",
        "Generated from the command line's own help by `python scripts/gen_schemas.py`. Do not edit by hand.",
        "",
        "## igg",
        "",
        "```text",
        parser.format_help().rstrip(),
        "```",
        "",
    ]
    sub = next(a for a in parser._actions if a.dest == "command")
    for name in COMMANDS:
        text = sub.choices[name].format_help().rstrip()  # type: ignore[union-attr]
        lines += [f"## igg {name}", "", "```text", text, "```", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


def main() -> int:
    check = "--check" in sys.argv[1:]
    stale = []
    outputs = {
        ROOT / "schemas" / f"{name}.schema.json": lambda n=name: json_schema_text(n) for name in SCHEMA_MODELS
    }
    outputs[ROOT / "docs" / "models.md"] = models_page
    outputs[ROOT / "docs" / "cli.md"] = cli_page
    for path, make in outputs.items():
        with redirect_stdout(io.StringIO()):
            text = make()
        if path.exists() and path.read_text(encoding="utf-8") == text:
            continue
        if check:
            stale.append(str(path.relative_to(ROOT)))
        else:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(ROOT)}")
    if stale:
        print(f"out of date: {', '.join(stale)}; run: python scripts/gen_schemas.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
