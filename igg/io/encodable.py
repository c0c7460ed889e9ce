"""Text that cannot be encoded: lone surrogates (U+D800..U+DFFF) found, replaced or escaped.

A JSON escape such as ``"\\ud800"`` decodes to a Python string that UTF-8 cannot encode: storing it
(SQLite, JSON files, GraphML) raises ``UnicodeEncodeError``. Every boundary where outside text enters IGG
(a model's answer, an HTTP or MCP payload) checks it with these helpers: identity-bearing values are
rejected with the property and position named; free text is repaired and the repair counted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True, slots=True)
class Unencodable:
    """Where a value holds an unencodable character: a path like ``properties.name`` and the position."""

    path: str
    position: int
    """0-based index of the character in the string (in the key itself when ``in_key``)."""
    char: str
    in_key: bool = False

    def describe(self) -> str:
        """E.g. ``properties.name: lone surrogate \\ud800 at character 3 (text must be valid Unicode)``."""
        where = f"the key {self.path!r}" if self.in_key else (self.path or "(value)")
        return (
            f"{where}: lone surrogate \\u{ord(self.char):04x} at character {self.position} cannot be stored "
            "(text must be valid Unicode: send the character itself or drop it)"
        )


def first_unencodable(text: str) -> int | None:
    """The index of the first lone surrogate in ``text``, or None when UTF-8 can encode it."""
    if text.isascii():
        return None
    match = _SURROGATE.search(text)
    return match.start() if match else None


def find_unencodable(value: Any, path: str = "") -> Unencodable | None:
    """The first unencodable string (or key) in a decoded JSON value, depth first, or None."""
    if isinstance(value, str):
        at = first_unencodable(value)
        return None if at is None else Unencodable(path, at, value[at])
    if isinstance(value, dict):
        for key, item in value.items():
            sub = f"{path}.{key}" if path else str(key)
            if isinstance(key, str) and (at := first_unencodable(key)) is not None:
                return Unencodable(sub, at, key[at], in_key=True)
            found = find_unencodable(item, sub)
            if found is not None:
                return found
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found = find_unencodable(item, f"{path}[{i}]")
            if found is not None:
                return found
    return None


def replace_unencodable(text: str) -> tuple[str, int]:
    """``text`` with each lone surrogate replaced by U+FFFD, and how many were replaced."""
    if first_unencodable(text) is None:
        return text, 0
    return _SURROGATE.subn(REPLACEMENT, text)


def escape_unencodable(text: str) -> tuple[str, int]:
    """``text`` with each lone surrogate written as its JSON escape (``\\ud800``), and how many.

    For raw model output: the text becomes storable, and a JSON reader of it still sees the escape (and
    rejects or repairs it where it lands), so no meaning is silently changed.
    """
    if first_unencodable(text) is None:
        return text, 0
    return _SURROGATE.subn(lambda m: f"\\u{ord(m.group()):04x}", text)


def escape_value(value: Any) -> Any:
    """A copy of a JSON-like value whose strings and keys are storable: lone surrogates written as their
    JSON escapes (``\\ud800``)."""
    if isinstance(value, str):
        return escape_unencodable(value)[0]
    if isinstance(value, dict):
        return {escape_value(k): escape_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [escape_value(v) for v in value]
    return value
