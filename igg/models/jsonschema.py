"""JSON Schemas generated from the models; ``schemas/*.schema.json`` are these, written by
``scripts/gen_schemas``."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from igg.models.actions import AgentResponse
from igg.models.document import GraphDocument
from igg.models.request import Request
from igg.models.rules import RulesFile

SCHEMA_MODELS: dict[str, type[BaseModel]] = {
    "request": Request,
    "response": AgentResponse,
    "document": GraphDocument,
    "rules": RulesFile,
}
"""Schema name -> model; the file is ``schemas/<name>.schema.json``."""


def json_schema(name: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``request``, ``response``, ``document`` or ``rules`` (the rules
    file)."""
    model = SCHEMA_MODELS[name]
    schema = model.model_json_schema(by_alias=True, mode="validation")
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}


def json_schema_text(name: str) -> str:
    """The schema as the exact text stored in ``schemas/``."""
    return json.dumps(json_schema(name), indent=2, ensure_ascii=False) + "\n"
