"""The locals of one Go function, scoped as the compiler scopes them, and the expressions that type them.

A local is seen from its declaration to the end of its scope (``scope_node``: a block, an ``if``/``for``/
``switch`` with its clauses, a case, a function literal); the innermost declaration seen shadows the others.
``Scope.callref`` turns a call's function expression into a ``CallRef`` (``analyze.py`` documents the forms),
``Scope.expr`` an expression into the ``Expr`` the linker types (``("var", T)``, ``("field", E, name)``,
``("call", CallRef)``, ``("elem", E)``, ``("key", E)``, ``("global", name)``), or ``UNKNOWN``.
"""

from __future__ import annotations

import re
from typing import Any

from igg.codemap.facts import CallRef, Expr

IDENT = re.compile(r"(?<![\w.])[A-Za-z_]\w*")
"""An unqualified identifier in a written type."""
UNKNOWN: Any = object()
"""A local whose type is not knowable."""
UNDERLYING = "<underlying>"
"""The key of ``TypeDecl.fields`` holding a defined non-struct type's underlying type (``type S []T``)."""
ALIAS = "<alias>"
"""The key of ``TypeDecl.fields`` holding an alias's aliased type (``type A = B[int]``)."""


def node_text(node: Any) -> str:
    """A node's source text."""
    return node.text.decode("utf-8", "replace") if node is not None else ""


def base_type(written: str) -> str:
    """``*pkg.T[int]`` -> ``pkg.T``: the named type a written type refers to through pointers and type
    args."""
    written = written.strip().lstrip("*").strip()
    bracket = written.find("[")
    if bracket > 0:
        written = written[:bracket]
    return written


SCOPES = frozenset(
    {
        "block",
        "if_statement",
        "for_statement",
        "expression_switch_statement",
        "type_switch_statement",
        "select_statement",
        "expression_case",
        "type_case",
        "default_case",
        "communication_case",
        "func_literal",
        "function_declaration",
        "method_declaration",
    }
)
"""Nodes that open a scope: a declaration inside one is seen up to its end."""


def scope_node(node: Any) -> Any:
    """The node whose scope a declaration at ``node`` belongs to (None: the function's)."""
    at = node.parent
    while at is not None and at.type not in SCOPES:
        at = at.parent
    return at


def bound(left: list[Any], right: list[Any]) -> list[tuple[str, Any]]:
    """(name, declaration) of ``a, b := x, y`` / ``a, b := f()`` (a name on the left of a call of several
    results other than the first: not typed)."""
    out = []
    for i, ident in enumerate(left):
        if ident.type != "identifier":
            continue
        value = right[i] if len(right) == len(left) else right[0] if i == 0 and len(right) == 1 else None
        out.append((node_text(ident), ("expr", value) if value is not None else None))
    return out


class Scope:
    """The locals of one function by scope, typed on demand."""

    def __init__(self, declared: dict[str, list[Any]], type_params: dict[str, str]) -> None:
        self.declared = declared
        self.type_params = type_params
        self.typing: set[int] = set()

    def binding(self, name: str, at: int) -> Any:
        """The declaration of the local ``name`` seen at byte ``at`` (the innermost scope's), as ``_add``
        recorded it: (scope start, scope end, visible from, declaration); None when no local is seen."""
        found = self.declared.get(name)
        if found is None:
            return None
        seen = [d for d in found if d[0] <= at < d[1] and d[2] <= at]
        if not seen:
            return None
        inner = max(d[0] for d in seen)
        return min((d for d in seen if d[0] == inner), key=lambda d: d[2])

    def local(self, name: str, at: int) -> Expr | None | Any:
        """The expression typing the local ``name`` seen at byte ``at`` (None: no local of that name is seen
        there; ``UNKNOWN``: one is, of a type not knowable)."""
        declaration = self.binding(name, at)
        if declaration is None:
            return None
        key = id(declaration)
        if key in self.typing:
            return UNKNOWN
        self.typing.add(key)
        try:
            return self.typed(declaration[3])
        finally:
            self.typing.discard(key)

    def typed(self, declaration: Any) -> Any:
        if declaration is None:
            return UNKNOWN
        kind, value = declaration[0], declaration[1]
        if kind == "type":
            return self.written(value)
        if kind == "range":  # for k, v := range x: the key (a channel's element) and the element
            base = self.expr(value)
            return UNKNOWN if base is UNKNOWN else (declaration[2], base)
        return self.expr(value)

    def written(self, written: str) -> Any:
        base = base_type(written)
        if not base:
            return UNKNOWN
        written = " ".join(written.split())
        if (
            self.type_params
        ):  # a type parameter stands for its constraint, if it is a named one (else for none)
            written = IDENT.sub(
                lambda m: (
                    self.type_params.get(m.group(0)) or "?" if m.group(0) in self.type_params else m.group(0)
                ),
                written,
            )
            if base_type(written).startswith("?"):
                return UNKNOWN
        return ("var", written)

    def expr(self, node: Any) -> Any:
        kind = node.type
        if kind == "identifier":
            found = self.local(node_text(node), node.start_byte)
            return ("global", node_text(node)) if found is None else found
        if kind == "parenthesized_expression" and node.named_children:
            return self.expr(node.named_children[0])
        if kind == "unary_expression" and node_text(node.child_by_field_name("operator")) == "&":
            operand = node.child_by_field_name("operand")
            return (
                self.expr(operand) if operand is not None and operand.type == "composite_literal" else UNKNOWN
            )
        if kind == "unary_expression" and node_text(node.child_by_field_name("operator")) == "<-":
            operand = node.child_by_field_name("operand")  # a channel's element: its "key" as range reads it
            base = self.expr(operand) if operand is not None else UNKNOWN
            return UNKNOWN if base is UNKNOWN else ("key", base)
        if kind in ("composite_literal", "type_assertion_expression"):
            typed = node.child_by_field_name("type")
            return self.written(node_text(typed)) if typed is not None else UNKNOWN
        if kind == "selector_expression":
            operand, field = node.child_by_field_name("operand"), node.child_by_field_name("field")
            if operand is None or field is None:
                return UNKNOWN
            if operand.type == "identifier" and self.local(node_text(operand), operand.start_byte) is None:
                return (
                    "global",
                    f"{node_text(operand)}.{node_text(field)}",
                )  # pkg.Var, or a field of a package's var
            base = self.expr(operand)
            return UNKNOWN if base is UNKNOWN else ("field", base, node_text(field))
        if kind == "index_expression":
            operand = node.child_by_field_name("operand")
            base = self.expr(operand) if operand is not None else UNKNOWN
            return UNKNOWN if base is UNKNOWN else ("elem", base)
        if kind == "type_conversion_expression":  # F[int](x): a generic function's call (or a conversion)
            typed = node.child_by_field_name("type")
            ref = self.callref(typed, node.start_point[0] + 1) if typed is not None else None
            return ("call", ref) if ref is not None else UNKNOWN
        if kind == "call_expression":
            function = node.child_by_field_name("function")
            if function is None:
                return UNKNOWN
            if (
                function.type == "identifier"
                and node_text(function) == "new"
                and self.local("new", node.start_byte) is None
            ):
                args = node.child_by_field_name("arguments")
                first = args.named_children[0] if args is not None and args.named_children else None
                return self.written(node_text(first)) if first is not None else UNKNOWN
            ref = self.callref(function, node.start_point[0] + 1)
            return ("call", ref) if ref is not None else UNKNOWN
        return UNKNOWN

    def callref(self, function: Any, line: int, column: int = 0) -> CallRef | None:
        """The call of ``function`` (its site: ``line``, ``column``), or None when it is not knowable."""
        kind = function.type
        if kind in ("index_expression", "generic_type"):
            inner = function.child_by_field_name("operand") or function.child_by_field_name("type")
            return self.callref(inner, line, column) if inner is not None else None
        if kind == "parenthesized_expression" and function.named_children:
            return self.callref(function.named_children[0], line, column)
        if kind in ("identifier", "type_identifier"):
            seen = self.local(node_text(function), function.start_byte)
            return CallRef(name=node_text(function), line=line, column=column) if seen is None else None
        if kind in ("selector_expression", "qualified_type"):
            operand = function.child_by_field_name("operand") or function.child_by_field_name("package")
            field = function.child_by_field_name("field") or function.child_by_field_name("name")
            if operand is None or field is None:
                return None
            if operand.type in ("identifier", "package_identifier"):
                found = self.local(node_text(operand), operand.start_byte)
                if found is None:
                    return CallRef(
                        name=node_text(field),
                        receiver="type",
                        receiver_type=node_text(operand),
                        line=line,
                        column=column,
                    )
                return (
                    None
                    if found is UNKNOWN
                    else CallRef(name=node_text(field), receiver="expr", expr=found, line=line, column=column)
                )
            typed = self.expr(operand)
            return (
                None
                if typed is UNKNOWN
                else CallRef(name=node_text(field), receiver="expr", expr=typed, line=line, column=column)
            )
        return None
