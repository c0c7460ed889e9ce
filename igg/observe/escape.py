"""Escaping values for the observation, so that graph data can never forge its structure.

Every value taken from the graph (names, property values) is rendered as a JSON string literal: it starts
and ends with ``"``, and quotes, backslashes, newlines and every other line-breaking or invisible control
character inside it are escaped, as are backticks (so a value cannot open or close a code fence). A line
of the graph listing therefore always starts with IGG's own text, and a value can never begin a heading,
a table row, a list item, an edge (``-CALLS->`` inside quotes is just text) or an instruction line.
Free text that IGG did not write itself but shows on one line (verdict messages that quote an agent's
values, notes) goes through ``one_line``: line breaks become visible ``\\n``.
"""

from __future__ import annotations

import json
import re
from typing import Any

_UNSAFE_CHARS = "`\u007f-\u009f\u00ad\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb\ud800-\udfff"
"""Characters JSON leaves alone that could still break a line, hide text, open a markdown code span, or (lone
surrogates, which JSON input can carry) make the text impossible to encode as UTF-8."""
_UNSAFE = re.compile(f"[{_UNSAFE_CHARS}]")
_NEEDS_ESCAPE = re.compile(f'["\\\\\x00-\x1f{_UNSAFE_CHARS}]')
"""Any character ``quote`` would change: the fast path skips json.dumps when there is none."""
_LINE_BREAKS = re.compile("\r\n|[\n\r\u000b\u000c\u001c-\u001e\u0085\u2028\u2029]")


def _escape_char(m: re.Match[str]) -> str:
    return f"\\u{ord(m.group()):04x}"


def quote(value: Any, limit: int | None = None) -> str:
    """A value as a JSON literal with unsafe characters escaped; strings longer than ``limit`` are cut.

    A cut string shows as ``"the start…"+1234`` (the number of characters left out), outside the quotes.
    """
    if isinstance(value, str):
        if (limit is None or len(value) <= limit) and not _NEEDS_ESCAPE.search(value):
            return f'"{value}"'  # the common case, without json.dumps
        cut = 0
        if limit is not None and len(value) > limit:
            cut = len(value) - limit
            value = value[:limit]
        text = json.dumps(value, ensure_ascii=False)
        text = _UNSAFE.sub(_escape_char, text)
        return f'{text[:-1]}…"+{cut}' if cut else text
    if isinstance(value, list):
        return "[" + ", ".join(quote(v, limit) for v in value[:20]) + (", …]" if len(value) > 20 else "]")
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int | float):
        return json.dumps(value)
    return quote(str(value), limit)


def one_line(text: str, limit: int = 400) -> str:
    """Free text on one line: line breaks shown as ``\\n``, invisible characters escaped, cut at ``limit``."""
    text = _LINE_BREAKS.sub("\\\\n", text)
    text = _UNSAFE.sub(lambda m: "'" if m.group() == "`" else _escape_char(m), text)
    text = (
        "".join(c if c >= " " or c == "\t" else f"\\u{ord(c):04x}" for c in text)
        if not text.isprintable()
        else text
    )
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text
