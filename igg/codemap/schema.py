"""The built-in code schema, ``schemas/code-graph.json``: a file users can copy, edit and pass back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from igg.errors import Problem, RequestInvalid
from igg.models.schema import Schema
from igg.request.load import check_schema, pydantic_problems


def _built_in_schema_path() -> Path:
    """``igg/_schemas/code-graph.json`` in an installed IGG (the build copies it there), else the
    checkout's."""
    packaged = Path(__file__).resolve().parents[1] / "_schemas" / "code-graph.json"
    if packaged.is_file():
        return packaged
    return Path(__file__).resolve().parents[2] / "schemas" / "code-graph.json"


CODE_SCHEMA_PATH = _built_in_schema_path()
"""Where the built-in code schema lives: the repository's ``schemas/``, shipped as ``igg/_schemas``."""


def load_code_schema(path: str | Path | None = None) -> Schema:
    """The code schema from ``path`` (default: the built-in one). Keys starting with ``$`` are comments.

    Raises ``RequestInvalid`` naming every problem, like a request's schema.
    """
    source = Path(path) if path is not None else CODE_SCHEMA_PATH
    name = str(source)
    try:
        data: Any = json.loads(source.read_text(encoding="utf-8"))
    except OSError as exc:
        raise RequestInvalid(
            [Problem("", f"cannot read {source}: {exc.strerror or exc}")], source=name
        ) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise RequestInvalid([Problem("", f"not valid JSON: {exc}")], source=name) from None
    if isinstance(data, dict) and isinstance(data.get("schema"), dict):
        data = data["schema"]  # a request's config.schema copied whole is fine too
    if not isinstance(data, dict):
        raise RequestInvalid(
            [Problem("", "a schema must be a JSON object with node_types, edge_types, ...")], source=name
        )
    data = {k: v for k, v in data.items() if not k.startswith("$")}
    try:
        schema = Schema.model_validate(data)
    except ValidationError as exc:
        raise RequestInvalid(pydantic_problems(exc, Schema), source=name) from None
    problems = check_schema(schema, "schema")
    if problems:
        raise RequestInvalid(problems, source=name)
    return schema
