"""A callable's parameters as ``ast.unparse`` writes them, without its general unparser for the common forms.

``ast.unparse`` builds an unparser and walks it for each call: on an annotated code base (an API client, a
typed library) it is a tenth of the analysis. ``parameters`` writes names, dotted names, subscripts, ``|``
unions, lists and plain constants itself, in ``ast.unparse``'s exact text, and hands a parameter list holding
anything else (a call, a lambda, a float, an f-string, ...) to ``ast.unparse`` whole. The tests pin the two
together on every ``def`` of several installed packages and on generated annotations.
"""

from __future__ import annotations

import ast

__all__ = ["parameters"]


class _Other(Exception):
    """An expression this module does not write: ``ast.unparse`` writes the whole list."""


def parameters(args: ast.arguments) -> str:
    """``ast.unparse(args)``."""
    try:
        return _arguments(args)
    except _Other:
        return ast.unparse(args)


def _arguments(node: ast.arguments) -> str:
    out: list[str] = []
    positional = node.posonlyargs + node.args
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(node.defaults))
    defaults += node.defaults
    for index, (a, d) in enumerate(zip(positional, defaults, strict=True), 1):
        out.append(_arg(a) if d is None else f"{_arg(a)}={_expr(d)}")
        if index == len(node.posonlyargs):
            out.append("/")
    if node.vararg is not None or node.kwonlyargs:
        out.append("*" if node.vararg is None else f"*{_arg(node.vararg)}")
    for a, kd in zip(node.kwonlyargs, node.kw_defaults, strict=True):
        out.append(_arg(a) if kd is None else f"{_arg(a)}={_expr(kd)}")
    if node.kwarg is not None:
        out.append(f"**{_arg(node.kwarg)}")
    return ", ".join(out)


def _arg(a: ast.arg) -> str:
    return a.arg if a.annotation is None else f"{a.arg}: {_expr(a.annotation)}"


def _expr(e: ast.expr) -> str:
    """``e`` where ``ast.unparse`` puts no parentheses around it (an annotation, a default, an element of a
    subscript or a list)."""
    cls = e.__class__
    if cls is ast.Name:  # the commonest
        return e.id  # type: ignore[attr-defined, no-any-return]
    if cls is ast.BinOp and e.op.__class__ is ast.BitOr:  # type: ignore[attr-defined]
        return _union(e)  # type: ignore[arg-type]
    if cls is ast.List:
        return f"[{', '.join([_expr(x) for x in e.elts])}]"  # type: ignore[attr-defined]
    if (
        cls is ast.UnaryOp
        and e.op.__class__ is ast.USub  # type: ignore[attr-defined]
        and e.operand.__class__ is ast.Constant  # type: ignore[attr-defined]
        and e.operand.value.__class__ is int  # type: ignore[attr-defined]
    ):
        return f"-{_constant(e.operand)}"  # type: ignore[attr-defined]
    return _operand(e)


def _union(e: ast.BinOp) -> str:
    """``a | b | c``: left-associative, so a union on the left needs no parentheses; on the right it would."""
    left = e.left
    if isinstance(left, ast.BinOp) and left.op.__class__ is ast.BitOr:
        return f"{_union(left)} | {_operand(e.right)}"
    return f"{_operand(left)} | {_operand(e.right)}"


def _operand(e: ast.expr) -> str:
    """An operand of ``|``: only what binds tighter than it (no parentheses needed)."""
    return _constant(e) if e.__class__ is ast.Constant else _atom(e)


def _atom(e: ast.expr) -> str:
    """A name, a dotted name or a subscript of one."""
    cls = e.__class__
    if cls is ast.Name:
        return e.id  # type: ignore[attr-defined, no-any-return]
    if cls is ast.Attribute:
        return f"{_atom(e.value)}.{e.attr}"  # type: ignore[attr-defined]
    if cls is ast.Subscript:
        index = e.slice  # type: ignore[attr-defined]
        if index.__class__ is ast.Tuple and index.elts:
            items = index.elts
            inner = f"{_expr(items[0])}," if len(items) == 1 else ", ".join([_expr(x) for x in items])
        else:
            inner = _expr(index)
        return f"{_atom(e.value)}[{inner}]"  # type: ignore[attr-defined]
    raise _Other


def _constant(e: ast.Constant) -> str:
    value = e.value
    if value is ...:
        return "..."
    if e.kind is None and value.__class__ in (str, bytes, int, bool) or value is None:
        return repr(value)
    raise _Other
