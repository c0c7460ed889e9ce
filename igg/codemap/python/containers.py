"""Python's list, tuple and dict displays as the call flows read them: which element a subscript decides.

A display (``[f, g]``, ``(f, g)``, ``{"a": f, 1: g}``) is the expression ``("D", elements, keys)``: ``keys``
None for a list or tuple (elements by position), the constant keys of a dict (``("k", value)`` each), or
``OPEN`` when some position or key is not decided (a ``*x``, a ``**x``, a computed key). A subscript is
``("x", base, index)``: ``index`` a constant ``("k", value)``, a slice of constant bounds ``("s", lower,
upper)``, or None (computed). ``element`` picks what an index decides (the last equal key wins, as in
Python; ``1`` and ``"1"`` are different keys). ``scopes.Program.subscript`` applies it where the base is for
sure one display; a name changed in place (``MUTATORS``) is bound again, so it is no longer that display.
"""

from __future__ import annotations

import ast
from typing import Any

Expr = Any

OPEN = "*"
"""The keys of a display some of whose positions or keys the code does not decide."""
MUTATORS = frozenset(
    ("append", "extend", "insert", "remove", "pop", "popitem", "clear", "sort", "reverse", "update")
    + ("setdefault",)
)
"""Methods that change a list or dict in place: a name they are called on is bound again, to what it held and
what they put in it, so its elements are no longer those of the display it was bound to."""
ADDERS = frozenset(("append", "extend", "update"))
"""Mutators whose arguments are all put in the container (``insert``, ``setdefault``: all but the first)."""


def display(parts: tuple[Expr, ...], keys: Any) -> Expr:
    """A list or tuple display (``keys`` None), or a dict display (``keys``: its constant keys, ``("k",
    value)`` each), whose elements are ``parts``; ``keys`` ``OPEN``: some position or key is not known (a
    ``*x`` or ``**x`` in it, a computed key). None: none of its elements is anything."""
    for p in parts:
        if p is not None:
            return ("D", parts, keys)
    return None


def index(node: ast.expr) -> Any:
    """A subscript's index as the code decides it: ``("k", value)`` a constant, ``("s", lower, upper)`` a
    slice with constant bounds (or none) and no step, None: computed."""
    cls = node.__class__
    if cls is ast.Constant:
        return ("k", node.value)  # type: ignore[attr-defined]
    if cls is ast.UnaryOp:
        value = _integer(node)
        return None if value is _COMPUTED else ("k", value)
    if cls is ast.Slice and node.step is None:  # type: ignore[attr-defined]
        bounds = [_integer(b) for b in (node.lower, node.upper)]  # type: ignore[attr-defined]
        if all(b is not _COMPUTED for b in bounds):
            return ("s", *bounds)
    return None


_COMPUTED = object()


def _integer(node: ast.expr | None) -> Any:
    """The integer a slice bound is (None: no bound), or ``_COMPUTED``."""
    if node is None:
        return None
    if node.__class__ is ast.Constant and node.value.__class__ is int:
        return node.value
    if (
        node.__class__ is ast.UnaryOp
        and node.op.__class__ is ast.USub
        and node.operand.__class__ is ast.Constant
        and node.operand.value.__class__ is int
    ):
        return -node.operand.value
    return _COMPUTED


def updated(before: Expr, method: str, args: list[Expr], kwargs: tuple[tuple[str, Expr], ...]) -> Expr:
    """``d.update({...})`` on a name bound to the dict display ``before``, with a dict display of known keys:
    the display both make, the argument's keys last (they win). None: anything else."""
    if method != "update" or len(args) != 1 or kwargs:
        return None
    given = args[0]
    if before is None or given is None or given[0] != "D" or before[2] == OPEN or given[2] == OPEN:
        return None
    if before[2] is None or given[2] is None:  # a list or tuple: not a dict display
        return None
    return ("D", before[1] + given[1], before[2] + given[2])


def element(display: Any, index: Any) -> Any:
    """The element of a closed display an index decides (a slice of a list or tuple: a display of its
    elements), or None: a computed index, or one that names no element."""
    if index is None:
        return None
    _, parts, keys = display
    if index[0] == "s":
        return None if keys is not None else ("D", parts[index[1] : index[2]], None)
    value = index[1]
    if keys is None:  # a list or tuple: an integer position (a bool is one too)
        if value.__class__ is not int and value.__class__ is not bool:
            return None
        position = int(value) + (len(parts) if value < 0 else 0)
        return parts[position] if 0 <= position < len(parts) else None
    found = None
    for k, part in zip(keys, parts, strict=True):  # the last equal key wins, as in Python
        try:
            if k[1] == value and hash(k[1]) == hash(value):
                found = part
        except TypeError:  # an unhashable constant (a tuple holding a list cannot be written; be safe)
            continue
    return found


__all__ = ["ADDERS", "MUTATORS", "OPEN", "display", "element", "index", "updated"]
