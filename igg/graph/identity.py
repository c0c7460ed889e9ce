"""Identity hygiene: how identity values are normalised before they are compared or stored.

**The rule** (``normalize_identity_value``): a string identity value is put in Unicode normalization form NFC
and stripped of surrounding whitespace (``str.strip``: spaces, tabs, newlines, and Unicode spaces such as
U+00A0 and U+3000). Nothing else changes: case, inner spaces and separators are kept, because ``AuthService``
and ``authService`` are different *values* (the near-duplicate guard, ``igg.graph.duplicates``, is what flags
them as probably the same *thing*). Non-string values (numbers, booleans, lists) are kept as they are.

Where it applies: the properties of ``ADD_NODE`` and ``UPDATE_NODE`` under their type's identity keys (the
node is stored with the normalised value) and the values of node references under identity keys (so
``{"name": "AuthService "}`` finds ``AuthService``). ``"AuthService "`` (a trailing space) and
``"Cafe\\u0301"`` (decomposed) therefore meet ``DUPLICATE_NODE`` against ``AuthService`` and ``Café``.

``fold`` and ``tokens`` give the *folded* form the near-duplicate guard compares: compatibility-normalised
(NFKC), case-folded, split into words at separators (anything not a letter or digit) and at camelCase
boundaries, then joined: ``AuthService``, ``auth_service``, ``auth-service``, ``AUTH SERVICE`` and
``authservice`` all fold to ``authservice``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Iterable
from typing import Any

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
"""camelCase boundaries: ``authService`` -> auth|Service, ``HTTPServer`` -> HTTP|Server."""
_SEPARATORS = re.compile(r"[\W_]+")
_LETTERS_DIGITS = re.compile(r"\d+|[^\W\d_]+")
ASCII_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
"""ASCII fast path of the same split: ``HTTPServer2`` -> HTTP, Server, 2."""
ASCII_SEPARATORS = re.compile(r"[^A-Za-z0-9]+")


def normalize_identity_value(value: Any) -> Any:
    """The identity value IGG stores and compares: NFC and surrounding whitespace stripped (strings only)."""
    if value.__class__ is not str:
        return value
    if value and (value[0].isspace() or value[-1].isspace()):
        value = value.strip()
    if not value.isascii() and not unicodedata.is_normalized("NFC", value):
        value = unicodedata.normalize("NFC", value)
    return value


def normalize_properties(properties: dict[str, Any], keys: Iterable[str]) -> dict[str, Any]:
    """Normalise the values under ``keys`` in place (the action's own dict); returns the same dict."""
    for key in keys:
        value = properties.get(key)
        if value.__class__ is str:
            if value and value.isascii() and not value[0].isspace() and not value[-1].isspace():
                continue  # already normal: the common case, without the call
            fixed = normalize_identity_value(value)
            if fixed is not value:
                properties[key] = fixed
    return properties


def normalize_reference(ref: dict[str, Any], identity_keys: Collection[str]) -> dict[str, Any]:
    """A node reference with its identity values normalised (a new dict only when something changed)."""
    changed: dict[str, Any] | None = None
    for key, value in ref.items():  # a reference has fewer keys than a schema has identity keys
        if value.__class__ is str and key in identity_keys:
            if value and value.isascii() and not value[0].isspace() and not value[-1].isspace():
                continue  # already normal: the common case, without the call
            fixed = normalize_identity_value(value)
            if fixed is not value:
                if changed is None:
                    changed = dict(ref)
                changed[key] = fixed
    return ref if changed is None else changed


def tokens(value: str) -> list[str]:
    """The words of an identity value, case-folded: ``getHTTPResponse_code2`` -> get, http, response, code, 2.

    Words break at separators (anything but a letter or digit), at camelCase boundaries and between letters
    and digits. Joined, they are the folded form.
    """
    if value.isascii():
        return [w.lower() for w in ASCII_WORDS.findall(value)]
    text = unicodedata.normalize("NFKC", value)
    words = []
    for part in _SEPARATORS.split(_CAMEL.sub(" ", text)):
        words += [w.casefold() for w in _LETTERS_DIGITS.findall(part)]
    return words


def fold(value: str) -> str:
    """The folded form: words joined (``Auth_Service`` -> ``authservice``); see the module docstring."""
    if value.isascii():
        return ASCII_SEPARATORS.sub("", value).lower()
    return "".join(tokens(value))
