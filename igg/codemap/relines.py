"""Whether a file's facts after an edit are its facts before it moved in order, and how they moved.

Most edits add or remove lines (a statement, a comment, a blank line), or change a line around what a map
reads of it (a variable renamed, a string edited before a call on the same line). Every fact then keeps what
it says, on another line or at another column. ``line_map`` tells such an edit from one that changed what
the file says: it takes every site (line and column: a declaration's, an import's, a call's, an
instantiation's, a route's, a request's, a value flow's call) and every line alone (a handler's first and
last line, a mount's) out of both, compares what is left, and pairs them in order. The edit only moved facts
when what is left is the same and the pairs keep their order: a site or line goes to one, none meet or swap,
and the sites of one line stay on one line (a line split or joined is no move). Order is all a link reads of
sites (which call a handler's lines hold, which site of an edge comes first), so the map of such a tree is
the map before it with that file's sites moved (``igg.mapping.samefacts``). Names, strings and counts must be
equal: a change of any is no move.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
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
_SITED = frozenset({ImportRef, CallRef, SqlRef, CallableDecl, TypeDecl, RouteDecl, RequestDecl})
"""Facts whose ``line`` and ``column`` are one site."""
_LINES = frozenset({(MountDecl, "line"), (FileFacts, "error_line")})
"""Fields that are a line alone."""
_TUPLES: dict[tuple[type, str], tuple[tuple[int, int] | None, tuple[int, ...]]] = {
    (CallableDecl, "body_site"): ((0, 1), ()),  # (line, column)
    (RouteDecl, "scope"): (None, (1, 2)),  # (name, first line, last line)
    (RequestDecl, "scope"): (None, (1, 2)),
}
"""Tuple fields: where their site is (line, column positions), and their lines alone."""
_EACH: dict[tuple[type, str], tuple[tuple[int, int] | None, tuple[int, ...]]] = {
    (CallableDecl, "instantiates"): ((1, 2), ()),  # [(type, line, column)]
}
"""List fields of tuples, as ``_TUPLES`` for each tuple."""
_CALL = ((5, 6), ())
"""A call of a Python value flow, ``("C", site, callee, args, kwargs, line, column)``: its site."""
_CLASSES = frozenset({*_SITED, MountDecl, HttpFacts, Scope})
_SITE = "<site>"
_LINE = "<line>"
"""What a site and a line are in a stripped value."""

Site = tuple[int, int]
"""(line, column): 1-based, 0 where not known."""


@dataclass(frozen=True, slots=True)
class Moves:
    """How the lines and sites of one file's facts moved: each line then -> its line now, each site then ->
    its site now (the lines of the sites are among ``lines``)."""

    lines: dict[int, int]
    sites: dict[Site, Site]

    @property
    def moved(self) -> bool:
        """Whether anything moved."""
        return any(a != b for a, b in self.lines.items()) or any(a != b for a, b in self.sites.items())


@dataclass(slots=True)
class _Found:
    lines: list[int] = field(default_factory=list)
    sites: list[Site] = field(default_factory=list)


class _NotFacts(Exception):
    """A value of a kind facts do not hold: no map is told."""


def line_map(before: FileFacts, after: FileFacts) -> Moves | None:
    """How the lines and sites of ``before`` moved to those of ``after``, when ``after`` is ``before`` with
    its facts moved in order (see the module doc); None when anything else differs, or they do not keep
    their order: a line or site goes to two, two meet or swap, a line is split or joined."""
    was, now = _Found(), _Found()
    try:
        if _stripped(before, was, top=True) != _stripped(after, now, top=True):
            return None
    except _NotFacts:
        return None
    if len(was.sites) != len(now.sites) or len(was.lines) != len(now.lines):
        return None
    sites: dict[Site, Site] = {}
    for site, then in zip(was.sites, now.sites, strict=True):
        if sites.setdefault(site, then) != then:
            return None  # one site went to two
    lines: dict[int, int] = {}
    pairs = [(a[0], b[0]) for a, b in sites.items()] + list(zip(was.lines, now.lines, strict=True))
    for line, to in pairs:
        if lines.setdefault(line, to) != to:
            return None  # one line went to two: split, or a line's sites parted
    if not (_in_order(lines) and _in_order(sites)) or lines.get(0, 0) != 0:
        return None  # 0 is no line (not known): it stays
    return Moves(lines, sites)


def _in_order(moved: dict[Any, Any]) -> bool:
    """Whether ``moved`` keeps the order of what it moves, and moves no two to one."""
    pairs = sorted(moved.items())
    return all(b1 < b2 for (_, b1), (_, b2) in zip(pairs, pairs[1:], strict=False))


def _stripped(x: Any, found: _Found, *, top: bool = False) -> Any:
    """``x`` with every line and site taken out (into ``found``, in the order met) and ``FileFacts``' content
    hash, line count and names left out: what must be equal for an edit to have moved facts alone."""
    cls = x.__class__
    if cls in _ATOMS:
        return x
    if cls is list or cls is tuple:
        return [_stripped(v, found) for v in x] if cls is list else tuple(_stripped(v, found) for v in x)
    if cls is dict:
        return {k: _stripped(v, found) for k, v in x.items()}
    if not (top and cls is FileFacts) and cls not in _CLASSES:
        raise _NotFacts(cls.__name__)
    out: list[Any] = [cls]
    if cls in _SITED:
        out.append(_site(x.line, x.column, found))
    for f in fields(cls):
        name = f.name
        if (cls is FileFacts and name in _LEFT_OUT) or (cls in _SITED and name in ("line", "column")):
            continue
        out.append(_field(cls, name, getattr(x, name), found))
    return out


def _field(cls: type, name: str, value: Any, found: _Found) -> Any:
    """One field of a facts object, stripped of its lines and sites (``_stripped``)."""
    if (cls, name) in _LINES:
        return _line(value, found)
    at = _TUPLES.get((cls, name))
    if at is not None:
        return _tuple(value, at, found)
    at = _EACH.get((cls, name))
    if at is not None:
        return [_tuple(v, at, found) for v in value]
    if cls is Scope and name == "ops":
        return [_op(op, found) for op in value]
    return _stripped(value, found)


def _op(op: Any, found: _Found) -> Any:
    """One operation of a Python scope's value flows: a call's site taken out (``_CALL``)."""
    if op.__class__ is tuple and op[:1] == ("C",):
        return _tuple(op, _CALL, found)
    return _stripped(op, found)


def _line(value: Any, found: _Found) -> Any:
    if value is None:
        return None
    if value.__class__ is not int:
        raise _NotFacts("a line that is no int")
    found.lines.append(value)
    return _LINE


def _site(line: Any, column: Any, found: _Found) -> str:
    if line.__class__ is not int or column.__class__ is not int:
        raise _NotFacts("a site that is no pair of ints")
    found.sites.append((line, column))
    return _SITE


def _tuple(value: Any, at: tuple[tuple[int, int] | None, tuple[int, ...]], found: _Found) -> Any:
    """A tuple (or None) whose site is at the positions ``at[0]`` and whose lines alone are at ``at[1]``:
    those taken out, the rest stripped."""
    if value is None:
        return None
    if value.__class__ is not tuple:
        raise _NotFacts("a sited value that is no tuple")
    site, lines = at
    out: list[Any] = []
    for i, v in enumerate(value):
        if site is not None and i == site[0]:
            out.append(_site(v, value[site[1]], found))
        elif site is not None and i == site[1]:
            continue
        elif i in lines:
            out.append(_line(v, found))
        else:
            out.append(_stripped(v, found))
    return tuple(out)


__all__ = ["Moves", "Site", "line_map"]
