"""Named closures of Go bodies: ``x := func(...) {...}`` (or ``var x = func(...) {...}``) in a callable is a
function of its own, named by the callable it is declared in: ``Outer.x`` in function ``Outer``, ``T.Run.x``
in method ``Run`` of ``T``, ``Outer.x.y`` for one declared in ``x``. Its calls are its own, not its enclosing
callable's, and a call ``x()`` where ``x`` is that local calls it. Go's compiler numbers function literals
(``Outer.func1``) rather than naming them: a literal bound to no name (a callback, ``go func() {...}()``) is
no node, and its calls are those of the named callable around it."""

from __future__ import annotations

import bisect
from collections.abc import Callable
from typing import Any

from igg.codemap.facts import CallableDecl
from igg.codemap.go.scope import Scope, node_text

Declare = Callable[[Any, Any, str], CallableDecl]
"""Builds the ``CallableDecl`` of a closure: (its name's identifier, its ``func_literal``, its name)."""


class Closures:
    """The named closures of one file: where each one's body is, and what calls it."""

    def __init__(self) -> None:
        self.spans: list[tuple[int, int, CallableDecl]] = []
        """(body start, body end, the closure), in source order."""
        self.starts: list[int] = []
        self.named: dict[tuple[int, int], str] = {}
        """A closure's ``func_literal`` (start, end byte) -> its function's name."""

    def find(
        self, captures: dict[str, list[Any]], enclosing: Callable[[int], Any], declare: Declare
    ) -> list[CallableDecl]:
        """Every named closure of the file (``captures``: the body query's ``short`` and ``var`` captures;
        ``enclosing``: the span of the callable holding a byte), in source order."""
        found = []
        for ident, value in sorted(_bound(captures), key=lambda b: b[1].start_byte):
            at = value.start_byte
            outer = self.owner(at) or (enclosing(at) or (None, None, None))[2]
            if outer is None or node_text(ident) == "_":
                continue
            decl = declare(ident, value, f"{_qualified(outer)}.{node_text(ident)}")
            self.spans.append((value.start_byte, value.end_byte, decl))
            self.starts.append(value.start_byte)
            self.named[(value.start_byte, value.end_byte)] = decl.name
            found.append(decl)
        return found

    def owner(self, at: int) -> CallableDecl | None:
        """The innermost named closure whose body holds byte ``at`` (None: none does)."""
        i = bisect.bisect_right(self.starts, at) - 1
        while i >= 0:
            start, end, decl = self.spans[i]
            if start <= at < end:
                return decl
            i -= 1
        return None

    def called(self, function: Any, scope: Scope) -> str | None:
        """The closure a call of ``function`` calls: a local bound to a named closure where it is called."""
        if function.type != "identifier" or not self.named:
            return None
        binding = scope.binding(node_text(function), function.start_byte)
        declaration = binding[3] if binding is not None else None
        if not (isinstance(declaration, tuple) and declaration[0] == "expr"):
            return None
        value = declaration[1]
        return self.named.get((value.start_byte, value.end_byte)) if value.type == "func_literal" else None


def _bound(captures: dict[str, list[Any]]) -> list[tuple[Any, Any]]:
    """(name, func_literal) of each ``x := func...`` and ``var x = func...`` binding one name to one
    literal."""
    out = []
    for short in captures.get("short", ()):
        left, right = short.child_by_field_name("left"), short.child_by_field_name("right")
        names = left.named_children if left is not None else []
        values = right.named_children if right is not None else []
        if len(names) == 1 and len(values) == 1 and names[0].type == "identifier":
            out.append((names[0], values[0]))
    for spec in captures.get("var", ()):
        names, value = spec.children_by_field_name("name"), spec.child_by_field_name("value")
        values = value.named_children if value is not None else []
        if len(names) == 1 and len(values) == 1 and spec.child_by_field_name("type") is None:
            out.append((names[0], values[0]))
    return [(ident, value) for ident, value in out if value.type == "func_literal"]


def _qualified(decl: CallableDecl) -> str:
    """What a closure's name starts with: its enclosing function's name, or ``Type.Method``."""
    if decl.kind == "method" and decl.owner:
        return f"{decl.owner.rpartition('.')[2]}.{decl.name}"
    return decl.name


__all__ = ["Closures", "Declare"]
