"""Shared value types: safe identifiers and property values.

Type names become Neo4j labels and relationship types and property keys become GraphML keys and Cypher
property names, so all three must be *safe identifiers*: an ASCII letter or underscore, then letters,
digits or underscores, at most 64 characters. Property values are strings, integers, floats, booleans,
or lists of these; any Unicode text is accepted (control characters included: exporters cope).
"""

from __future__ import annotations

import math
import re
from typing import Annotated, Any, TypeAlias

from pydantic import Field, StrictBool, StrictFloat, StrictInt, StrictStr

IDENTIFIER_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
"""What a node type, edge type or property key must match (whole string)."""

IDENTIFIER_HINT = "an ASCII letter or '_' followed by letters, digits or '_', at most 64 characters"

RESERVED_PROPERTY_KEYS = frozenset({"label"})
"""Keys a property may not use: ``label`` names the node type inside a node reference."""

RESERVED_PROPERTY_PREFIX = "igg_"
"""Keys starting with this prefix are IGG's own (provenance, export metadata)."""

Identifier = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")]

Scalar: TypeAlias = StrictStr | StrictBool | StrictInt | StrictFloat
PropertyValue: TypeAlias = Scalar | list[Scalar]
Properties: TypeAlias = dict[str, PropertyValue]


def is_identifier(text: object) -> bool:
    """True when ``text`` is a safe identifier (see the module docstring)."""
    return isinstance(text, str) and IDENTIFIER_RE.fullmatch(text) is not None


def property_key_problem(key: object) -> str | None:
    """Why ``key`` cannot be a property key, or None when it can."""
    if not is_identifier(key):
        return f"property key {key!r} is not a safe identifier ({IDENTIFIER_HINT})"
    assert isinstance(key, str)
    if key in RESERVED_PROPERTY_KEYS:
        return f"property key {key!r} is reserved (in a node reference it names the node type)"
    if key.startswith(RESERVED_PROPERTY_PREFIX):
        return (
            f"property key {key!r} is reserved: keys starting with {RESERVED_PROPERTY_PREFIX!r} belong to IGG"
        )
    return None


_SCALARS = (str, bool, int, float)


def property_value_problem(key: str, value: Any, max_length: int) -> str | None:
    """Why ``value`` cannot be stored under ``key``, or None when it can.

    ``max_length`` bounds a string's characters and a list's items.
    """
    if isinstance(value, list):
        if len(value) > max_length:
            return f"property {key!r} is a list of {len(value)} items; the limit is {max_length}"
        for item in value:
            if not isinstance(item, _SCALARS):
                return (
                    f"property {key!r} holds a list item of type {type(item).__name__}; "
                    "list items must be strings, integers, floats or booleans"
                )
            problem = _scalar_problem(key, item, max_length)
            if problem:
                return problem
        return None
    if not isinstance(value, _SCALARS):
        return (
            f"property {key!r} has a value of type {type(value).__name__}; allowed: string, integer, float, "
            "boolean, or a list of these (no objects, no null)"
        )
    return _scalar_problem(key, value, max_length)


def _scalar_problem(key: str, value: Any, max_length: int) -> str | None:
    if isinstance(value, str):
        if len(value) > max_length:
            return f"property {key!r} is {len(value)} characters long; the limit is {max_length}"
    elif isinstance(value, float) and not math.isfinite(value):
        return f"property {key!r} is {value}; only finite numbers are allowed"
    return None


def freeze(value: Any) -> Any:
    """A hashable form of a property value (lists become tuples) for identity indexes."""
    return tuple(value) if isinstance(value, list) else value
