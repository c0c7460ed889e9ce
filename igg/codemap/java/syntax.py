"""Reading tree-sitter-java's syntax nodes: names and types as written, string values (concatenations of
literals, read iteratively), lambdas' parameters, generics and their erasure. Pure functions of the nodes: the
analyzer (``java.py``) decides what they mean for the facts."""

from __future__ import annotations

import re
from typing import Any

from igg.codemap.facts import TypeDecl
from igg.codemap.java.func import split_top

SPACES = re.compile(r"\s+")
ANNOTATION = re.compile(r"@[\w.]+(\([^)]*\))?")


def text_of(node: Any) -> str:
    return str(node.text.decode("utf-8", "replace"))


def type_text(node: Any) -> str:
    """A type as written, whitespace removed (``Map<String,List<User>>``)."""
    return SPACES.sub("", text_of(node))


def base_type(text: str) -> str:
    """A type name without generics, arrays, varargs or annotations: ``List<User>[]`` -> ``List``."""
    text = ANNOTATION.sub("", text)
    return text.split("<", 1)[0].replace("[]", "").replace("...", "").strip()


_ESCAPES = re.compile(r"\\([\\'\"ntrbfs])")
_ESCAPED = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "s": " "}


def literal_value(node: Any) -> str:
    raw = text_of(node)
    quote = '"""' if raw.startswith('"""') else '"'
    body = raw[len(quote) : -len(quote)] if len(raw) >= 2 * len(quote) else ""
    return _ESCAPES.sub(lambda m: _ESCAPED.get(m.group(1), m.group(1)), body) if "\\" in body else body


def concatenation(node: Any) -> tuple[Any, Any] | None:
    """The operands of a ``+``, or of the one expression in parentheses (right None); else None."""
    if node.type == "binary_expression" and node.child_by_field_name("operator").type == "+":
        return node.child_by_field_name("left"), node.child_by_field_name("right")
    if node.type == "parenthesized_expression" and node.named_child_count == 1:
        return node.named_children[0], None
    return None


def string_value(node: Any, memo: dict[int, str | None] | None = None) -> str | None:
    """The text of a string literal, text block or ``+`` concatenation of literals (any other operand as a
    template hole ``{}``, which the SQL reader never takes for a table). Iterative (a 3,000-term concatenation
    is no deeper for it than one term); ``memo`` keeps the value of every node below, by node id, so that a
    walk meeting the inner ``+`` nodes again pays nothing for them."""
    memo = {} if memo is None else memo
    stack: list[tuple[Any, bool]] = [(node, False)]
    while stack:
        n, ready = stack.pop()
        if n.id in memo:
            continue
        if n.type in ("string_literal", "text_block"):
            memo[n.id] = literal_value(n)
            continue
        parts = concatenation(n)
        if parts is None:
            memo[n.id] = None
        elif not ready:
            stack.append((n, True))
            stack.extend((p, False) for p in reversed(parts) if p is not None)
        elif parts[1] is None:
            memo[n.id] = memo.get(parts[0].id)
        else:
            left, right = memo.get(parts[0].id), memo.get(parts[1].id)
            memo[n.id] = (
                None
                if left is None and right is None
                else (left if left is not None else "{}") + (right if right is not None else "{}")
            )
    return memo[node.id]


def operands(node: Any) -> list[Any]:
    """The operands of a string concatenation that are not string literals (where its calls are), in order."""
    out: list[Any] = []
    stack = [node]
    while stack:
        n = stack.pop()
        parts = concatenation(n)
        if parts is None:
            if n.type not in ("string_literal", "text_block"):
                out.append(n)
            continue
        stack.extend(p for p in reversed(parts) if p is not None)
    return out


def arg_nodes(node: Any) -> list[Any]:
    arguments = node.child_by_field_name("arguments")
    return [
        a
        for a in (arguments.named_children if arguments is not None else [])
        if a.type not in ("line_comment", "block_comment")
    ]


def inferred_params(node: Any) -> list[str]:
    """The names of a lambda's parameters when it declares none of their types (``f -> ..``, ``(a, b) ->
    ..``)."""
    params = node.child_by_field_name("parameters")
    if params is None:
        return []
    if params.type == "identifier":
        return [text_of(params)]
    if params.type == "inferred_parameters":
        return [text_of(c) for c in params.named_children if c.type == "identifier"]
    return []


def same_node(a: Any, b: Any) -> bool:
    return b is not None and (a.start_byte, a.end_byte) == (b.start_byte, b.end_byte)


def target_type(node: Any) -> Any:
    """The type node a lambda is given to when it is no call's argument: the declared type of the variable or
    field it initialises, the type it is cast to, or the return type of the method it is returned from."""
    parent = node.parent
    if parent is None:
        return None
    if parent.type == "variable_declarator" and same_node(node, parent.child_by_field_name("value")):
        declaration = parent.parent
        return declaration.child_by_field_name("type") if declaration is not None else None
    if parent.type == "cast_expression" and same_node(node, parent.child_by_field_name("value")):
        return parent.child_by_field_name("type")
    if parent.type == "return_statement":
        up = parent.parent
        while up is not None and up.type not in (
            "method_declaration",
            "lambda_expression",
            "class_body",
            "constructor_declaration",
        ):
            up = up.parent
        if up is not None and up.type == "method_declaration":
            return up.child_by_field_name("type")
    return None


def element_type(node: Any, generics: dict[str, str]) -> str | None:
    """The erased type argument of a type that has exactly one (``List<Filter>``, ``Stream<? extends
    Filter>``: ``Filter``); None for others and for ``? super`` wildcards (whose elements are of no known
    type)."""
    if node is None or node.type != "generic_type":
        return None
    args = next((c for c in node.named_children if c.type == "type_arguments"), None)
    if args is None or args.named_child_count != 1:
        return None
    arg = args.named_children[0]
    if arg.type == "wildcard":
        if any(c.type == "super" for c in arg.children) or not arg.named_child_count:
            return None
        arg = arg.named_children[-1]
    return erase(arg, generics)


def written_args(written: str) -> list[str]:
    """The type arguments of a supertype as written, each erased (``A<B<C>, ? extends D, E[]>``: ``B``,
    ``''``, ``E[]``): a type parameter's name stays its name."""
    if "<" not in written:
        return []
    inner = written.partition("<")[2].rpartition(">")[0]
    return [
        "" if arg.startswith("?") else base_type(arg) + "[]" * array_dims(arg) for arg in split_top(inner)
    ]


def owner_param(rtype: Any, owner: TypeDecl, method: Any) -> str | None:
    """The owner's type parameter a method returns (``T get()``), unless the method declares one of that
    name."""
    if rtype is None:
        return None
    text = type_text(rtype)
    if (
        text in owner.type_params
        and text not in generics_of(method, {})
        and method.child_by_field_name("dimensions") is None
    ):
        return text
    return None


def is_static(node: Any) -> bool:
    modifiers = next((c for c in node.children if c.type == "modifiers"), None)
    return modifiers is not None and any(c.type == "static" for c in modifiers.children)


def lambda_arity(node: Any) -> int | None:
    """How many parameters a lambda declares (None for a method reference, whose arity depends on its
    target)."""
    if node.type != "lambda_expression":
        return None
    params = node.child_by_field_name("parameters")
    if params is None:
        return 0
    return 1 if params.type == "identifier" else params.named_child_count


def dims_of(node: Any) -> int:
    dims = node.child_by_field_name("dimensions")
    return text_of(dims).count("[") if dims is not None else 0


def generics_of(node: Any, outer: dict[str, str]) -> dict[str, str]:
    """Type parameters in scope -> their erasure (the first bound, else Object)."""
    params = node.child_by_field_name("type_parameters")
    if params is None:
        params = next((c for c in node.named_children if c.type == "type_parameters"), None)
    if params is None:
        return outer
    out = dict(outer)
    for p in params.named_children:
        if p.type != "type_parameter":
            continue
        name = next((c for c in p.named_children if c.type in ("type_identifier", "identifier")), None)
        bound = next((c for c in p.named_children if c.type == "type_bound"), None)
        if name is not None:
            first = bound.named_children[0] if bound is not None and bound.named_child_count else None
            out[text_of(name)] = base_type(type_text(first)) if first is not None else "Object"
    return out


def erase(node: Any, generics: dict[str, str]) -> str:
    """A declared type without generics, a type parameter replaced by its bound."""
    if node is None:
        return "Object"
    text = type_text(node)
    base = base_type(text)
    arrays = "[]" * array_dims(text)
    return generics.get(base, base) + arrays


def array_dims(text: str) -> int:
    """The array dimensions of a type as written, not those of its type arguments: ``Fn<byte[]>[]`` -> 1."""
    depth, outside = 0, ""
    for ch in text:
        depth += (ch == "<") - (ch == ">")
        if depth == 0 and ch != ">":
            outside += ch
    return outside.count("[]")


def member_nodes(body: Any) -> list[Any]:
    out = []
    for c in body.named_children:
        if c.type == "enum_body_declarations":
            out.extend(c.named_children)
        else:
            out.append(c)
    return out
