"""Java declarations as facts: a type's supertypes (with the type arguments they are written with, and which
of those are the type itself), its fields and record components, a callable's parameters. Pure functions of
the syntax nodes: the analyzer (``analyze.py``) builds the declarations and walks the bodies."""

from __future__ import annotations

from typing import Any

from igg.codemap.facts import TypeDecl
from igg.codemap.java.func import type_arguments
from igg.codemap.java.syntax import base_type, dims_of, element_type, erase, text_of, type_text, written_args


def add_supertypes(decl: TypeDecl, node: Any, simple: str, bounded: set[str]) -> None:
    """Record the ``extends``/``implements`` of ``decl`` (declared by ``node`` under the simple name
    ``simple``), their written type arguments, and which supertypes take the type itself (``"self"``) or one
    of its self-bounded type parameters (``bounded``: ``"param"``) as an argument."""
    written = _written_supertypes(decl, node)
    for text in written:
        decl.super_args[base_type(text)] = written_args(text)
    for text in written:
        args = type_arguments(text)
        if {simple, decl.name, decl.qualified} & set(args):
            decl.self_args[base_type(text)] = "self"
        elif bounded & set(args):
            decl.self_args[base_type(text)] = "param"


def _written_supertypes(decl: TypeDecl, node: Any) -> list[str]:
    """The supertypes of ``node`` as written (the superclass first), added to ``decl``'s ``extends`` and
    ``implements`` by their base type."""
    written: list[str] = []
    superclass = node.child_by_field_name("superclass")
    if superclass is not None and superclass.named_child_count:
        written.append(type_text(superclass.named_children[0]))
        decl.extends.append(base_type(written[-1]))
    for child in node.children:
        if child.type == "super_interfaces" or (child.type == "extends_interfaces"):
            type_list = next((c for c in child.named_children if c.type == "type_list"), None)
            texts = [type_text(t) for t in (type_list.named_children if type_list else [])]
            written.extend(texts)
            (decl.extends if child.type == "extends_interfaces" else decl.implements).extend(
                map(base_type, texts)
            )
    return written


def add_fields(decl: TypeDecl, node: Any, members: list[Any], generics: dict[str, str]) -> None:
    """Record the fields of ``decl``: a record's components, its field declarations among ``members``, and
    its enum constants (of the type's own simple name)."""
    if node.type == "record_declaration":
        params = node.child_by_field_name("parameters")
        for p in params.named_children if params is not None else []:
            if p.type == "formal_parameter":
                _field(decl, p.child_by_field_name("type"), p, generics)
    for m in members:
        if m.type in ("field_declaration", "constant_declaration"):
            for d in m.children_by_field_name("declarator"):
                _field(decl, m.child_by_field_name("type"), d, generics)
        elif m.type == "enum_constant":
            decl.fields[text_of(m.child_by_field_name("name"))] = text_of(node.child_by_field_name("name"))


def _field(decl: TypeDecl, type_node: Any, declarator: Any, generics: dict[str, str]) -> None:
    """Record a field (or record component) of ``decl``: its erased type, and its element type if it has
    one."""
    name, dims = text_of(declarator.child_by_field_name("name")), dims_of(declarator)
    decl.fields[name] = erase(type_node, generics) + "[]" * dims
    element = element_type(type_node, generics) if not dims else None
    if element:
        decl.field_elements[name] = element


def parameters(plist: Any, generics: dict[str, str]) -> list[tuple[str, str, str]]:
    """A callable's parameters as (type as written, erased type, name); a varargs parameter is written
    ``T...`` and erased to ``T[]``."""
    params: list[tuple[str, str, str]] = []
    for p in plist.named_children if plist is not None else []:
        if p.type == "formal_parameter":
            written = type_text(p.child_by_field_name("type"))
            erased = erase(p.child_by_field_name("type"), generics) + "[]" * dims_of(p)
            params.append((written, erased, text_of(p.child_by_field_name("name"))))
        elif p.type == "spread_parameter":
            t = next(
                (c for c in p.named_children if c.type not in ("modifiers", "variable_declarator")), None
            )
            d = next((c for c in p.named_children if c.type == "variable_declarator"), None)
            if t is not None and d is not None:
                params.append(
                    (type_text(t) + "...", erase(t, generics) + "[]", text_of(d.child_by_field_name("name")))
                )
    return params
