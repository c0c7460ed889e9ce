"""Whether a file's facts after an edit are its facts before it with lines moved, and how they moved.

Most edits add or remove lines: a statement, a comment, a blank line. Every fact after them keeps what it
says and moves down or up by as many lines. ``line_map`` tells such an edit from one that changed what the
file says: it takes every line the facts hold (a declaration's, an import's, a call's, a route's, a value
flow's call site, a handler's first and last line) out of both, compares what is left, and pairs the lines in
order. The edit only moved lines when what is left is the same and the pairs make a map that keeps their
order: a line goes to one line, two lines never meet, and a line after another stays after it. Order is all
a link reads of lines (which call a handler's lines hold, which site of an edge comes first), so the map of
such a tree is the map before it with that file's lines moved (``igg.mapping.samefacts``). Columns,
names, strings and counts must be equal: a change of any is no move.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from igg.codemap.facts import (
    CallableDecl,
    CallRef,
    FileFacts,
    HttpFacts,
    ImportRef,
    MountDecl,
    RequestDecl,
    RouteDecl,
    SqlRef,
    TypeDecl,
)
from igg.codemap.python.flow import Scope

_ATOMS = (str, int, bool, float, complex, bytes, type(None), type(...), set, frozenset)
"""Values compared whole (a scope's ``locals`` is a set of names)."""
_LEFT_OUT = frozenset({"sha", "lines", "names"})
"""``FileFacts`` fields an edit changes without moving anything: its content hash, line count and names."""
_LINE = -1
"""In ``_AT``: the field is a line itself."""
_AT: dict[tuple[type, str], tuple[int, ...]] = {
    **{(cls, "line"): (_LINE,) for cls in (ImportRef, CallRef, SqlRef, CallableDecl, TypeDecl)},
    **{(cls, "line"): (_LINE,) for cls in (RouteDecl, MountDecl, RequestDecl)},
    (FileFacts, "error_line"): (_LINE,),
    (CallableDecl, "body_site"): (0,),  # (line, column)
    (RouteDecl, "scope"): (1, 2),  # (name, first line, last line)
    (RequestDecl, "scope"): (1, 2),
}
"""The lines a field holds: ``_LINE`` (the field is one), or its positions in a tuple."""
_EACH_AT: dict[tuple[type, str], tuple[int, ...]] = {
    (CallableDecl, "instantiates"): (1,),  # [(type, line, column)]
}
"""The lines each tuple of a list field holds, by position."""
_CLASSES = frozenset(
    {ImportRef, CallRef, SqlRef, CallableDecl, TypeDecl, RouteDecl, MountDecl, RequestDecl, HttpFacts, Scope}
)


class _NotFacts(Exception):
    """A value of a kind facts do not hold: no map is told."""


def line_map(before: FileFacts, after: FileFacts) -> dict[int, int] | None:
    """How the lines of ``before`` moved to those of ``after`` (each line of ``before``'s facts -> its line in
    ``after``'s), when ``after`` is ``before`` with its lines moved in order (see the module doc); None when
    anything else differs, or the lines do not keep their order."""
    try:
        was: list[int] = []
        now: list[int] = []
        if _stripped(before, was, top=True) != _stripped(after, now, top=True) or len(was) != len(now):
            return None
    except _NotFacts:
        return None
    moved: dict[int, int] = {}
    for a, b in zip(was, now, strict=True):
        if moved.setdefault(a, b) != b:
            return None  # one line went to two
    pairs = sorted(moved.items())
    if any(b1 >= b2 for (_, b1), (_, b2) in zip(pairs, pairs[1:], strict=False)):
        return None  # two lines met, or swapped
    if moved.get(0, 0) != 0:
        return None  # 0 is no line (not known): it stays
    return moved


def _stripped(x: Any, lines: list[int], *, top: bool = False) -> Any:
    """``x`` with every line taken out (into ``lines``, in the order met) and ``FileFacts``' content hash,
    line count and names left out: what must be equal for an edit to have moved lines alone."""
    cls = x.__class__
    if cls in _ATOMS:
        return x
    if cls is list or cls is tuple:
        return [_stripped(v, lines) for v in x] if cls is list else tuple(_stripped(v, lines) for v in x)
    if cls is dict:
        return {k: _stripped(v, lines) for k, v in x.items()}
    if top and cls is FileFacts:
        out: list[Any] = [cls]
        for f in fields(cls):
            if f.name not in _LEFT_OUT:
                out.append(_field(cls, f.name, getattr(x, f.name), lines))
        return out
    if cls in _CLASSES:
        return [cls, *(_field(cls, f.name, getattr(x, f.name), lines) for f in fields(cls))]
    raise _NotFacts(cls.__name__)


def _field(cls: type, name: str, value: Any, lines: list[int]) -> Any:
    """One field of a facts object, stripped of its lines (``_stripped``)."""
    at = _AT.get((cls, name))
    if at is not None:
        if at == (_LINE,):
            return _line(value, lines)
        return _tuple_lines(value, at, lines)
    each = _EACH_AT.get((cls, name))
    if each is not None:
        return [_tuple_lines(v, each, lines) for v in value]
    if cls is Scope and name == "ops":
        return [_tuple_lines(op, (5,), lines) if op[0] == "C" else _stripped(op, lines) for op in value]
    return _stripped(value, lines)


def _line(value: Any, lines: list[int]) -> Any:
    if value is None:
        return None
    if value.__class__ is not int:
        raise _NotFacts("a line that is no int")
    lines.append(value)
    return _LINE


def _tuple_lines(value: Any, at: tuple[int, ...], lines: list[int]) -> Any:
    """A tuple (or None) whose items at the positions ``at`` are lines: those taken out, the rest stripped."""
    if value is None:
        return None
    if value.__class__ is not tuple:
        raise _NotFacts("a sited value that is no tuple")
    return tuple(_line(v, lines) if i in at else _stripped(v, lines) for i, v in enumerate(value))


__all__ = ["line_map"]
