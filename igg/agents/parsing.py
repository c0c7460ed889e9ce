"""The shared response parser: an agent's raw text -> a ``ParsedResponse`` (or ``ResponseInvalid``).

Every agent that produces text (the LLM agent, ``{"raw": ...}`` transcript turns) goes through
``parse_turn``. It accepts:

* plain JSON;
* JSON inside a markdown fence (```` ```json ... ``` ````) or after some prose;
* trivial damage, repaired: trailing commas, single-quoted strings, Python's ``True``/``False``/``None``,
  raw newlines inside strings.

Text that cannot be stored (a lone surrogate such as the JSON escape ``\ud800``) is handled here, at the
boundary where a model's answer becomes values: an action holding one anywhere is rejected with
``INVALID_PROPERTY`` naming the property and the position; in ``reasoning`` (free text) each one is
replaced with U+FFFD and counted (``ParsedResponse.repaired``). ``read_value`` applies the same to an
already-decoded response object (a transcript line, a Python agent's dict).

A response that is cut off (the text ends inside the JSON, or the caller says ``truncated=True``) keeps
only the actions that were received whole; the action being written when the text stopped is dropped,
never completed by guesswork (``"name": "par`` does not become ``"par"``). Anything else raises
``ResponseInvalid`` with ``INVALID_JSON`` (no readable JSON) or ``INVALID_RESPONSE`` (JSON, but not a
response object), with a message that says where and what, for the agent to fix on its next turn.

The lenient reader is a small hand-written scanner (no json-repair): it knows exactly which containers were
closed when the text ended.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

from igg.act.apply import bulk
from igg.errors import ResponseInvalid
from igg.io.encodable import escape_value as _escaped
from igg.io.encodable import find_unencodable, replace_unencodable
from igg.models.actions import ParsedResponse, UnreadableAction, read_response
from igg.models.verdicts import ErrorCode

MAX_DEPTH = 64
"""Deeper nesting than this is rejected (a response needs about five levels)."""

FORMAT_HINT = 'reply with one JSON object: {"reasoning": "...", "actions": [...], "finished": false}'

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[^\n]*\n(.*?)(?:```|\Z)", re.S)
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_STRING_RUN = {'"': re.compile(r'[^"\\]+'), "'": re.compile(r"[^'\\]+")}
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "'": "'"}
_LITERALS = {"true": True, "false": False, "null": None, "True": True, "False": False, "None": None}
_MAX_CANDIDATES = 8
_RESPONSE_START = re.compile(r"""\{\s*["']?(?:reasoning|actions|finished)\b""")


def parse_turn(text: str, *, truncated: bool = False) -> ParsedResponse:
    """Parse an agent's raw output into a response, action by action.

    ``truncated`` says the producer knows the output was cut off (e.g. an LLM's ``finish_reason: length``);
    a cut is also detected when the text ends inside the JSON. The result's ``truncated`` is then true and
    only whole actions are kept. Raises ``ResponseInvalid`` (INVALID_JSON / INVALID_RESPONSE).
    """
    if not isinstance(text, str):
        raise ResponseInvalid(ErrorCode.INVALID_JSON, f"the output must be text; got {type(text).__name__}")
    stripped = text.strip()
    if not stripped:
        raise ResponseInvalid(ErrorCode.INVALID_JSON, f"the output was empty; {FORMAT_HINT}")
    value = _strict(stripped)
    if value is not _NOTHING:
        return _finish(value, cut=False, truncated=truncated)
    best: _Bad | None = None
    for start, end, at_text_end in _candidates(text):
        looks = _RESPONSE_START.match(text, start) is not None
        try:
            value, cut = _Scanner(text, start, end).read_top()
        except _Bad as unreadable:
            unreadable.rank = (2 if looks else 0, unreadable.pos)
            best = unreadable if best is None or unreadable.rank > best.rank else best
            continue
        looks = looks or _looks_like_response(value)
        if cut and not (looks and (at_text_end or truncated)):
            cut_off = _Bad("the JSON ends before its closing brackets", end, text)
            cut_off.rank = (2 if looks else 0, end)
            best = cut_off if best is None or cut_off.rank > best.rank else best
            continue
        if not looks:
            other: _Bad = _NotResponse(value)
            other.rank = (1, start)
            best = other if best is None or other.rank > best.rank else best
            continue
        return _finish(value, cut=cut, truncated=truncated)
    if isinstance(best, _NotResponse):
        return _finish(best.value, cut=False, truncated=truncated)  # raises INVALID_RESPONSE
    if best is not None:
        raise ResponseInvalid(ErrorCode.INVALID_JSON, f"{best.describe()}; {FORMAT_HINT}")
    preview = _preview(stripped)
    raise ResponseInvalid(
        ErrorCode.INVALID_JSON,
        f"no JSON object found in the output ({len(text)} characters, starting {preview}); {FORMAT_HINT}",
    )


_NOTHING = object()


def _strict(text: str) -> Any:
    """The value of ``text`` when it is exactly one standard JSON document (NaN/Infinity refused)."""
    if text[0] not in "{[":
        return _NOTHING
    try:
        return json.loads(text, parse_constant=_refuse_constant)
    except (ValueError, RecursionError):
        return _NOTHING


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def read_value(value: Any, *, truncated: bool = False, encodable: bool = False) -> ParsedResponse:
    """Read an already-decoded response object like parsed text (unencodable text rejected or repaired).

    ``encodable``: the caller found no lone surrogate anywhere in the value (e.g. in its JSON text), so the
    per-action scan is not repeated; every other check is the same."""
    return _finish(value, cut=False, truncated=truncated, encodable=encodable)


def _finish(value: Any, *, cut: bool, truncated: bool, encodable: bool = False) -> ParsedResponse:
    rejected: dict[int, UnreadableAction] = {}
    repaired = 0
    actions = value.get("actions") if isinstance(value, dict) else None
    with bulk(len(actions) if isinstance(actions, list) else 0):  # thousands of action models: pause the gc
        if not encodable:
            value, rejected, repaired = _encodable(value)
        parsed = read_response(value, encodable=True)  # _encodable has replaced every action holding one
    if rejected:
        items = list(parsed.items)
        for index, error in rejected.items():
            items[index] = error
        parsed = replace(parsed, items=items)
    if repaired:
        parsed = replace(parsed, repaired=repaired)
    if cut or truncated:
        parsed = replace(parsed, truncated=True)
    return parsed


def _encodable(value: Any) -> tuple[Any, dict[int, UnreadableAction], int]:
    """(value with storable text, the actions rejected by index, characters replaced in ``reasoning``)."""
    if not isinstance(value, dict):
        return value, {}, 0
    repaired = 0
    reasoning = value.get("reasoning")
    if isinstance(reasoning, str):
        fixed, repaired = replace_unencodable(reasoning)
        if repaired:
            value = {**value, "reasoning": fixed}
    rejected: dict[int, UnreadableAction] = {}
    actions = value.get("actions")
    if isinstance(actions, list):
        kept = list(actions)
        for i, action in enumerate(actions):
            found = find_unencodable(action)
            if found is None:
                continue
            kind = action.get("type") if isinstance(action, dict) else None
            kind = kind if isinstance(kind, str) and find_unencodable(kind) is None else "?"
            rejected[i] = UnreadableAction(
                ErrorCode.INVALID_PROPERTY, f"{kind}: {found.describe()}", _escaped(action), kind
            )
            kept[i] = {}
        if rejected:
            value = {**value, "actions": kept}
    return value, rejected, repaired


def _looks_like_response(value: dict[str, Any]) -> bool:
    return any(k in value for k in ("actions", "reasoning", "finished"))


def _candidates(text: str) -> list[tuple[int, int, bool]]:
    """Where a response may start: inside markdown fences first, then at each top-level '{' of the text.

    Each candidate is (start, end, reaches the end of the text).
    """
    found: list[tuple[int, int, bool]] = []
    for m in _FENCE.finditer(text):
        body_start, body_end = m.start(2), m.end(2)
        brace = text.find("{", body_start, body_end)
        if brace >= 0:
            closed = m.group(0).endswith("```") and m.end() > body_end
            found.append((brace, body_end, not closed))
        if len(found) >= _MAX_CANDIDATES:
            return found
    pos = text.find("{")
    seen = {start for start, _, _ in found}
    while pos >= 0 and len(found) < _MAX_CANDIDATES * 2:
        if pos not in seen:
            found.append((pos, len(text), True))
        # the next candidate starts after this object's matching brace (or the next line if unreadable)
        nxt = _skip_object(text, pos)
        pos = text.find("{", nxt)
    return found


def _skip_object(text: str, pos: int) -> int:
    try:
        _, end = _Scanner(text, pos, len(text)).read_span()
        return end
    except _Bad:
        return pos + 1


def _preview(text: str, limit: int = 40) -> str:
    return json.dumps(text[:limit] + ("..." if len(text) > limit else ""), ensure_ascii=False)


class _Bad(Exception):
    """Unreadable JSON at a position."""

    def __init__(self, what: str, pos: int, text: str) -> None:
        super().__init__(what)
        self.what, self.pos, self.text = what, pos, text
        self.rank: tuple[int, int] = (0, pos)
        """How much this candidate looked like the response (its error is the one reported)."""

    def describe(self) -> str:
        line = self.text.count("\n", 0, self.pos) + 1
        col = self.pos - (self.text.rfind("\n", 0, self.pos) + 1) + 1
        near = self.text[self.pos : self.pos + 20]
        shown = f" near {json.dumps(near, ensure_ascii=False)}" if near else ""
        return f"invalid JSON at line {line} column {col}: {self.what}{shown}"


class _NotResponse(_Bad):
    def __init__(self, value: Any) -> None:
        super().__init__("not a response object", 0, "")
        self.value = value


class _Cut(Exception):
    """The text ended inside a value."""


class _Scanner:
    """A lenient JSON reader over ``text[pos:end]`` that reports whether the text was cut off.

    Containers are filled only with members and elements that were read whole. When the text ends inside
    the top-level object, ``read_top`` keeps that object's whole members and, for a cut ``actions`` list,
    its whole elements.
    """

    def __init__(self, text: str, pos: int, end: int) -> None:
        self.text, self.pos, self.end = text, pos, end
        self.stack: list[list[Any]] = []
        """Open containers, outermost first: [container, key of the member being read (objects)]."""

    def read_top(self) -> tuple[Any, bool]:
        """(value, cut): the top-level value, and whether the text ended inside it."""
        try:
            return self.value(), False
        except _Cut:
            pass
        if not self.stack or not isinstance(self.stack[0][0], dict):
            raise _Bad("the output ends before the JSON object is complete", self.end, self.text)
        top, key = self.stack[0]
        if key == "actions" and len(self.stack) > 1 and isinstance(self.stack[1][0], list):
            top["actions"] = self.stack[1][0]
        return top, True

    def read_span(self) -> tuple[Any, int]:
        try:
            value = self.value()
        except _Cut:
            raise _Bad("cut off", self.end, self.text) from None
        return value, self.pos

    # ---- values ----------------------------------------------------------------------------------------
    def value(self) -> Any:
        c = self.peek()
        if c == "{":
            return self.obj()
        if c == "[":
            return self.arr()
        if c in "\"'":
            return self.string()
        if c == "-" or c.isdigit():
            return self.number()
        return self.literal()

    def obj(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        frame: list[Any] = [out, None]
        self.open(frame)
        self.pos += 1
        while True:
            c = self.peek()
            if c == "}":
                self.pos += 1
                break
            if c not in "\"'":
                raise self.bad("expected a quoted key or '}'")
            key = self.string()
            if self.peek() != ":":
                raise self.bad(f"expected ':' after the key {json.dumps(key)}")
            self.pos += 1
            frame[1] = key
            out[key] = self.value()
            frame[1] = None
            c = self.peek()
            if c == ",":
                self.pos += 1
            elif c != "}":
                raise self.bad(f"expected ',' or '}}' after the value of {json.dumps(key)}")
        self.stack.pop()
        return out

    def arr(self) -> list[Any]:
        out: list[Any] = []
        self.open([out, None])
        self.pos += 1
        while True:
            if self.peek() == "]":
                self.pos += 1
                break
            out.append(self.value())
            c = self.peek()
            if c == ",":
                self.pos += 1
            elif c != "]":
                raise self.bad("expected ',' or ']' after a list element")
        self.stack.pop()
        return out

    def string(self) -> str:
        quote = self.text[self.pos]
        run = _STRING_RUN[quote]
        text, end = self.text, self.end
        self.pos += 1
        parts: list[str] = []
        while True:
            m = run.match(text, self.pos, end)
            if m:
                parts.append(m.group())
                self.pos = m.end()
            if self.pos >= end:
                raise _Cut
            c = text[self.pos]
            if c == quote:
                self.pos += 1
                return "".join(parts)
            # a backslash escape
            if self.pos + 1 >= end:
                raise _Cut
            e = text[self.pos + 1]
            if e == "u":
                parts.append(self.unicode_escape())
                continue
            if e not in _ESCAPES:
                raise self.bad(f"unknown escape '\\{e}' in a string")
            parts.append(_ESCAPES[e])
            self.pos += 2

    def unicode_escape(self) -> str:
        code = self.hex4(self.pos + 2)
        self.pos += 6
        if 0xD800 <= code < 0xDC00 and self.text.startswith("\\u", self.pos):
            low = self.hex4(self.pos + 2)
            if 0xDC00 <= low < 0xE000:
                self.pos += 6
                return chr(0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00))
        return chr(code)

    def hex4(self, at: int) -> int:
        digits = self.text[at : min(at + 4, self.end)]
        if len(digits) < 4 and at + len(digits) >= self.end:
            raise _Cut
        try:
            return int(digits, 16)
        except ValueError:
            raise self.bad("a \\u escape needs four hex digits") from None

    def number(self) -> int | float:
        m = _NUMBER.match(self.text, self.pos, self.end)
        if not m or m.end() == self.pos:
            if self.pos + 1 >= self.end:
                raise _Cut
            raise self.bad("expected a number")
        if not self.text[m.end() : self.end].strip("0123456789.eE+-"):
            raise _Cut  # the number may continue beyond the cut
        token = m.group()
        self.pos = m.end()
        if any(ch in token for ch in ".eE"):
            return float(token)
        return int(token)

    def literal(self) -> Any:
        for word, value in _LITERALS.items():
            if self.text.startswith(word, self.pos) and self.pos + len(word) <= self.end:
                after = self.pos + len(word)
                if after >= self.end:
                    raise _Cut  # 'true' might be the start of something longer; the value is not closed
                if not (self.text[after].isalnum() or self.text[after] == "_"):
                    self.pos = after
                    return value
            rest = self.text[self.pos : self.end]
            if rest and word.startswith(rest):
                raise _Cut
        raise self.bad("expected a value (a string, number, object, list, true, false or null)")

    # ---- helpers ---------------------------------------------------------------------------------------
    def open(self, frame: list[Any]) -> None:
        if len(self.stack) >= MAX_DEPTH:
            raise self.bad(f"nesting deeper than {MAX_DEPTH} levels")
        self.stack.append(frame)

    def peek(self) -> str:
        """The next significant character (whitespace and trailing commas skipped); _Cut at the end."""
        text, end = self.text, self.end
        while True:
            while self.pos < end and text[self.pos] in " \t\r\n":
                self.pos += 1
            if self.pos >= end:
                raise _Cut
            c = text[self.pos]
            if c == "," and self._trailing_comma():
                self.pos += 1
                continue
            return c

    def _trailing_comma(self) -> bool:
        # a comma directly followed (after whitespace) by a closing bracket is trivial damage: skip it,
        # but only where a value or member was just read (not "[,]")
        j = self.pos + 1
        while j < self.end and self.text[j] in " \t\r\n":
            j += 1
        return j < self.end and self.text[j] in "]}" and self._after_value()

    def _after_value(self) -> bool:
        j = self.pos - 1
        while j >= 0 and self.text[j] in " \t\r\n":
            j -= 1
        return j >= 0 and self.text[j] not in "[{,:"

    def bad(self, what: str) -> _Bad:
        return _Bad(what, self.pos, self.text)
