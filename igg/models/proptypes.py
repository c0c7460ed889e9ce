"""Property types a schema may declare (optional): what each property of a node or edge type holds.

``config.schema.property_types`` maps a node or edge type to its typed properties; each is one of
``"string"``, ``"integer"``, ``"float"`` (an integer is accepted too), ``"boolean"``, ``"list"`` (of
scalars), or ``{"enum": [allowed values]}``. Properties not declared stay free (any valid property value).

```json
"property_types": {"Class": {"visibility": {"enum": ["public", "package", "private"]}, "lines": "integer",
                             "abstract": "boolean", "tags": "list"}}
```

A list of values of the declared type is accepted too: a multi-valued property, as an ontology's datatype
relation may be (two alternative names, two birth dates). A value of the wrong type is rejected with
``WRONG_PROPERTY_TYPE``, a value outside an enum with
``VALUE_NOT_IN_ENUM``; both messages name the property, the value and what would pass. The types are shown
in the observation's schema section and narrow the LLM agent's response schema.
"""

from __future__ import annotations

from typing import Any, Literal, TypeAlias

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr

PropertyKind = Literal["string", "integer", "float", "boolean", "list"]


class EnumType(BaseModel):
    """A property that holds one of the listed values."""

    model_config = ConfigDict(extra="forbid")

    enum: list[StrictStr | StrictBool | StrictInt | StrictFloat] = Field(
        min_length=1, description="The allowed values."
    )


PropertyType: TypeAlias = PropertyKind | EnumType

_JSON = {
    "string": {"type": "string"},
    "integer": {"type": "integer"},
    "float": {"type": "number"},
    "boolean": {"type": "boolean"},
}
_SCALAR_SCHEMA = [{"type": "string"}, {"type": "number"}, {"type": "boolean"}]


def value_problem(key: str, value: Any, spec: PropertyType) -> tuple[str, str] | None:
    """``(code, message)`` when ``value`` does not fit the declared type, else None."""
    if isinstance(spec, EnumType):
        if any(value == v and type(value) is type(v) for v in spec.enum):
            return None
        allowed = ", ".join(_show(v) for v in spec.enum)
        return ("VALUE_NOT_IN_ENUM", f"property {key!r} is {_show(value)}; allowed values: {allowed}.")
    if _fits(value, spec) or (
        spec != "list" and isinstance(value, list) and value and all(_fits(v, spec) for v in value)
    ):
        return None  # a list of values of the type: a multi-valued property (an ontology's datatype relation)
    return (
        "WRONG_PROPERTY_TYPE",
        f"property {key!r} must be {_article(spec)} (schema property_types); got "
        f"{_kind_of(value)} {_show(value)}.",
    )


def _fits(value: Any, kind: str) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "float":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    return isinstance(value, list)


def describe(spec: PropertyType) -> str:
    """Short text for the observation: ``integer``, ``one of "public"|"private"``."""
    if isinstance(spec, EnumType):
        return "one of " + "|".join(_show(v) for v in spec.enum)
    return spec


def json_schema(spec: PropertyType) -> dict[str, Any]:
    """The JSON Schema of a value of this type (for the LLM's response schema)."""
    if isinstance(spec, EnumType):
        return {"enum": list(spec.enum)}
    if spec == "list":
        return {"type": "array", "items": {"anyOf": _SCALAR_SCHEMA}}
    return dict(_JSON[spec])


def _article(kind: str) -> str:
    return {
        "integer": "an integer",
        "float": "a number",
        "boolean": "a boolean (true/false)",
        "string": "a string",
        "list": "a list",
    }[kind]


def _kind_of(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, list):
        return "list"
    return "string" if isinstance(value, str) else type(value).__name__


def _show(value: Any) -> str:
    import json

    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "..."
