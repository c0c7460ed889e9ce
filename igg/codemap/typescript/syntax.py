"""Reading tree-sitter nodes of TypeScript/JavaScript: text, string literals, dotted names, written types."""

from __future__ import annotations

from typing import Any


def text_of(node: Any) -> str:
    """A node's source text."""
    return node.text.decode("utf-8", "replace") if node is not None else ""


def literal(node: Any) -> str | None:
    """The value of a string literal node (None when it is not one, or holds a substitution)."""
    if node is None or node.type != "string":
        return None
    raw = text_of(node)
    return raw[1:-1] if len(raw) >= 2 else None


def dotted(node: Any) -> str | None:
    """``a.b.C`` for an identifier or a chain of property accesses on one (None for anything else)."""
    if node.type in ("identifier", "type_identifier", "property_identifier", "this"):
        return text_of(node)
    if node.type == "member_expression":
        head = dotted(node.child_by_field_name("object"))
        prop = node.child_by_field_name("property")
        return f"{head}.{text_of(prop)}" if head is not None and prop is not None else None
    if node.type == "nested_type_identifier":
        return text_of(node).replace(" ", "")
    return None


def type_name(node: Any) -> str | None:
    """The type a type annotation names, as written and erased (``Foo<T>`` -> ``Foo``; ``ns.Foo``), or
    None."""
    if node is None:
        return None
    if node.type == "type_annotation":
        node = node.named_children[0] if node.named_children else None
        if node is None:
            return None
    if node.type == "generic_type":
        node = node.child_by_field_name("name")
    if node is None:
        return None
    return dotted(node) if node.type in ("type_identifier", "identifier", "nested_type_identifier") else None
