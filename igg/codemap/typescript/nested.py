"""Callables and types declared inside callables (``docs/code-maps.md``, TypeScript): after the module-level
declarations, one pass in document order over the query's function declarations, variable declarators and type
declarations, with a stack of the callables open at each point, declares each one a named callable holds as
``enclosing.name`` (``outer.inner``, ``Class.method.inner``, ``outer.Local``); anonymous functions in between
add nothing to the name. A type in a function no named callable holds (a test's callback at module level)
keeps its own name; a function there is no node.
"""

from __future__ import annotations

import bisect
from typing import Any, Protocol


class Declarations(Protocol):
    """What the pass declares through (``analyze._Analyzer``)."""

    spans: list[Any]
    declared_types: set[int]

    def variable(self, d: Any, prefix: str) -> bool: ...

    def function(self, node: Any, prefix: str, exported: bool) -> None: ...

    def interface(self, node: Any, prefix: str, exported: bool) -> None: ...

    def type_(self, node: Any, kind: Any, prefix: str, exported: bool) -> Any: ...

    def class_(self, node: Any, prefix: str, exported: bool) -> None: ...


_FUNCTION_NODES = frozenset(
    (
        "arrow_function",
        "function_expression",
        "function",
        "generator_function",
        "function_declaration",
        "generator_function_declaration",
        "method_definition",
    )
)
_TYPES = frozenset(
    ("class_declaration", "abstract_class_declaration", "interface_declaration", "enum_declaration")
)


def _opened(span: tuple[Any, ...]) -> tuple[int, int, str]:
    """(start, end, the name nested declarations are qualified by) of a callable's span."""
    start, end, decl, owner = span[0], span[1], span[2], span[3]
    return start, end, f"{owner.name}.{decl.name}" if owner is not None else decl.name


def declare_nested(analyzer: Declarations, captures: dict[str, list[Any]]) -> None:
    """Declare what the module doc says (``captures``: the file's query captures by name)."""
    candidates = sorted(
        [*captures.get("fn", ()), *captures.get("decl", ()), *captures.get("type", ())],
        key=lambda n: (n.start_byte, n.end_byte),
    )
    if not candidates:
        return
    pending = sorted(_opened(s) for s in analyzer.spans)
    declared = {s[0] for s in analyzer.spans}
    stack: list[tuple[int, int, str]] = []
    j = 0
    for node in candidates:
        at = node.start_byte
        while j < len(pending) and pending[j][0] <= at:
            while stack and stack[-1][1] <= pending[j][0]:
                stack.pop()
            stack.append(pending[j])
            j += 1
        while stack and stack[-1][1] <= at:
            stack.pop()
        if at in declared or at in analyzer.declared_types:
            continue
        before = len(analyzer.spans)
        if stack:
            _declare(analyzer, node, f"{stack[-1][2]}.")
        elif node.type in _TYPES and _in_function(node):
            _declare(analyzer, node, "")
        for span in analyzer.spans[before:]:  # opened when the pass reaches them
            declared.add(span[0])
            bisect.insort(pending, _opened(span), lo=j)


def _declare(analyzer: Declarations, node: Any, prefix: str) -> None:
    kind = node.type
    if kind == "variable_declarator":
        analyzer.variable(node, prefix)
    elif kind in ("function_declaration", "generator_function_declaration"):
        analyzer.function(node, prefix, False)
    elif kind == "interface_declaration":
        analyzer.interface(node, prefix, False)
    elif kind == "enum_declaration":
        analyzer.type_(node, "enum", prefix, False)
    elif kind in ("class_declaration", "abstract_class_declaration"):
        analyzer.class_(node, prefix, False)


def _in_function(node: Any) -> bool:
    parent = node.parent
    while parent is not None and parent.type not in _FUNCTION_NODES:
        parent = parent.parent
    return parent is not None


__all__ = ["Declarations", "declare_nested"]
