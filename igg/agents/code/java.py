"""The Java analyzer: one file's facts through tree-sitter (the ``tree-sitter-java`` wheel; no downloads).

Classes, records (as classes), interfaces, enums, nested types (``Outer.Inner``), methods and
constructors with signatures (parameter types: ``login(String, String)``), ``extends``/``implements``,
imports, and per callable: calls with their receiver (``this``/``super``, a type for static calls, a
field, parameter or local of declared type, ``var x = new T()``), the static types of literal and typed
arguments (to pick between overloads), ``new T()``, and SQL in string literals (concatenations of literals
included) and in the constants of the file.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from igg.agents.code.facts import CallableDecl, CallRef, FileFacts, ImportRef, SqlRef, TypeDecl
from igg.agents.code.sql import tables_in

_TYPE_NODES = {"class_declaration": "class", "record_declaration": "class", "interface_declaration": "interface",
               "enum_declaration": "enum", "annotation_type_declaration": "interface"}
_LITERAL_TYPES = {"string_literal": "String", "decimal_integer_literal": "int", "hex_integer_literal": "int",
                  "decimal_floating_point_literal": "double", "character_literal": "char", "true": "boolean",
                  "false": "boolean", "text_block": "String"}
_SPACES = re.compile(r"\s+")


@lru_cache(maxsize=1)
def parser() -> Any:
    """The shared tree-sitter parser for Java (built once per process)."""
    import tree_sitter_java
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_java.language()))


def _text(node: Any) -> str:
    return str(node.text.decode("utf-8", "replace"))


def type_text(node: Any) -> str:
    """A type as written, whitespace removed (``Map<String,List<User>>``)."""
    return _SPACES.sub("", _text(node))


def base_type(text: str) -> str:
    """A type name without generics, arrays or varargs: ``List<User>[]`` -> ``List``."""
    return text.split("<", 1)[0].replace("[]", "").replace("...", "").strip()


def _string_value(node: Any) -> str | None:
    """The text of a string literal, text block or ``+`` concatenation of literals (others as ``?``)."""
    if node.type in ("string_literal", "text_block"):
        raw = _text(node)
        quote = '"""' if raw.startswith('"""') else '"'
        return raw[len(quote):-len(quote)] if len(raw) >= 2 * len(quote) else ""
    if node.type == "binary_expression" and node.child_by_field_name("operator").type == "+":
        left = _string_value(node.child_by_field_name("left"))
        right = _string_value(node.child_by_field_name("right"))
        if left is None and right is None:
            return None
        return (left if left is not None else "?") + (right if right is not None else "?")
    if node.type == "parenthesized_expression" and node.named_child_count == 1:
        return _string_value(node.named_children[0])
    return None


class _Analyzer:
    def __init__(self, path: str) -> None:
        self.facts = FileFacts(path=path, language="java", module="", package="")
        self.constants: dict[str, list[SqlRef]] = {}

    def run(self, root: Any) -> FileFacts:
        package = ""
        for child in root.named_children:
            if child.type == "package_declaration":
                name = next((c for c in child.named_children if c.type in ("scoped_identifier", "identifier")), None)
                package = _text(name) if name is not None else ""
            elif child.type == "import_declaration":
                self._import(child)
        stem = self.facts.path.rpartition("/")[2].removesuffix(".java")
        self.facts.package = package
        self.facts.module = f"{package}.{stem}" if package else stem
        types = [c for c in root.named_children if c.type in _TYPE_NODES]
        for t in types:  # constants first: a method may use one declared further down
            self._collect_constants(t)
        for t in types:
            self._type(t, outer=None)
        return self.facts

    def _import(self, node: Any) -> None:
        name = next((c for c in node.named_children if c.type in ("scoped_identifier", "identifier")), None)
        if name is None:
            return
        target = _text(name)
        static = any(c.type == "static" for c in node.children)
        wildcard = any(c.type == "asterisk" for c in node.children)
        if static and not wildcard:
            # import static a.b.Util.hash: the dependency is on the type
            target = target.rpartition(".")[0]
        self.facts.imports.append(ImportRef(target=target, alias=None if wildcard else target.rpartition(".")[2],
                                            wildcard=wildcard))

    def _collect_constants(self, node: Any) -> None:
        body = node.child_by_field_name("body")
        if body is None:
            return
        for member in _members(body):
            if member.type == "field_declaration":
                for decl in member.children_by_field_name("declarator"):
                    value = decl.child_by_field_name("value")
                    text = _string_value(value) if value is not None else None
                    sql = tables_in(text, value.start_point[0] + 1) if text else []
                    if sql:
                        self.constants[_text(decl.child_by_field_name("name"))] = sql
            elif member.type in _TYPE_NODES:
                self._collect_constants(member)

    def _type(self, node: Any, outer: TypeDecl | None) -> None:
        simple = _text(node.child_by_field_name("name"))
        kind = _TYPE_NODES[node.type]
        decl = TypeDecl(kind=kind, name=f"{outer.name}.{simple}" if outer else simple,  # type: ignore[arg-type]
                        package=self.facts.package, line=node.start_point[0] + 1,
                        outer=outer.qualified if outer else None)
        superclass = node.child_by_field_name("superclass")
        if superclass is not None and superclass.named_child_count:
            decl.extends.append(base_type(type_text(superclass.named_children[0])))
        for child in node.children:
            if child.type == "super_interfaces" or (child.type == "extends_interfaces"):
                type_list = next((c for c in child.named_children if c.type == "type_list"), None)
                names = [base_type(type_text(t)) for t in (type_list.named_children if type_list else [])]
                (decl.extends if child.type == "extends_interfaces" else decl.implements).extend(names)
        self.facts.types.append(decl)
        body = node.child_by_field_name("body")
        members = _members(body) if body is not None else []
        if node.type == "record_declaration":
            params = node.child_by_field_name("parameters")
            for p in params.named_children if params is not None else []:
                if p.type == "formal_parameter":
                    decl.fields[_text(p.child_by_field_name("name"))] = base_type(type_text(p.child_by_field_name("type")))
        for m in members:
            if m.type in ("field_declaration", "constant_declaration"):
                t = base_type(type_text(m.child_by_field_name("type")))
                for d in m.children_by_field_name("declarator"):
                    decl.fields[_text(d.child_by_field_name("name"))] = t
        for m in members:
            if m.type in ("method_declaration", "constructor_declaration", "compact_constructor_declaration"):
                self._callable(m, decl)
            elif m.type in _TYPE_NODES:
                self._type(m, outer=decl)

    def _callable(self, node: Any, owner: TypeDecl) -> None:
        constructor = node.type != "method_declaration"
        name = _text(node.child_by_field_name("name"))
        params: list[tuple[str, str]] = []
        plist = node.child_by_field_name("parameters")
        for p in plist.named_children if plist is not None else []:
            if p.type == "formal_parameter":
                params.append((type_text(p.child_by_field_name("type")), _text(p.child_by_field_name("name"))))
            elif p.type == "spread_parameter":
                t = next((c for c in p.named_children if c.type not in ("modifiers", "variable_declarator")), None)
                d = next((c for c in p.named_children if c.type == "variable_declarator"), None)
                if t is not None and d is not None:
                    params.append((type_text(t) + "...", _text(d.child_by_field_name("name"))))
        modifiers = next((c for c in node.children if c.type == "modifiers"), None)
        static = modifiers is not None and any(c.type == "static" for c in modifiers.children)
        decl = CallableDecl(kind="constructor" if constructor else "method", name=name, owner=owner.qualified,
                            signature=f"{name}({', '.join(t for t, _ in params)})", line=node.start_point[0] + 1,
                            params=tuple(base_type(t) for t, _ in params), static=static)
        self.facts.callables.append(decl)
        body = node.child_by_field_name("body")
        if body is None:
            return
        scope: dict[str, str] = dict(owner.fields)
        scope.update({n: base_type(t) for t, n in params})
        self._walk(body, decl, owner, scope)

    def _walk(self, root: Any, decl: CallableDecl, owner: TypeDecl, scope: dict[str, str]) -> None:
        stack = [root]
        while stack:
            node = stack.pop()
            kind = node.type
            if kind == "local_variable_declaration":
                t = base_type(type_text(node.child_by_field_name("type")))
                for d in node.children_by_field_name("declarator"):
                    local = t
                    value = d.child_by_field_name("value")
                    if t == "var" and value is not None and value.type == "object_creation_expression":
                        local = base_type(type_text(value.child_by_field_name("type")))
                    scope[_text(d.child_by_field_name("name"))] = local
            elif kind == "method_invocation":
                decl.calls.append(self._invocation(node, owner, scope))
            elif kind == "explicit_constructor_invocation":
                ctor = node.child_by_field_name("constructor")
                decl.calls.append(CallRef(name="<init>", receiver="this" if ctor.type == "this" else "super",
                                          arg_types=self._args(node, owner, scope), line=node.start_point[0] + 1))
            elif kind == "object_creation_expression":
                decl.instantiates.append((base_type(type_text(node.child_by_field_name("type"))),
                                          node.start_point[0] + 1))
            elif kind in ("string_literal", "text_block", "binary_expression"):
                text = _string_value(node)
                if text is not None:
                    decl.sql.extend(tables_in(text, node.start_point[0] + 1))
                    # the literal parts of a concatenation are not statements of their own; calls in it are
                    stack.extend(c for c in reversed(node.named_children)
                                 if c.type not in ("string_literal", "text_block"))
                    continue
            elif kind == "identifier" and self.constants and _text(node) in self.constants:
                decl.sql.extend(SqlRef(table=r.table, op=r.op, statement=r.statement, line=node.start_point[0] + 1)
                                for r in self.constants[_text(node)])
            elif kind in ("lambda_expression", "class_body"):
                pass  # their calls still count as this callable's
            stack.extend(reversed(node.named_children))

    def _invocation(self, node: Any, owner: TypeDecl, scope: dict[str, str]) -> CallRef:
        name = _text(node.child_by_field_name("name"))
        obj = node.child_by_field_name("object")
        args = self._args(node, owner, scope)
        line = node.start_point[0] + 1
        if obj is None:
            return CallRef(name=name, receiver="none", arg_types=args, line=line)
        if obj.type == "this":
            return CallRef(name=name, receiver="this", arg_types=args, line=line)
        if obj.type == "super":
            return CallRef(name=name, receiver="super", arg_types=args, line=line)
        if obj.type == "field_access" and obj.child_by_field_name("object").type == "this":
            t = owner.fields.get(_text(obj.child_by_field_name("field")))
            return CallRef(name=name, receiver="var" if t else "unknown", receiver_type=t, arg_types=args, line=line)
        if obj.type == "identifier":
            ident = _text(obj)
            if ident in scope:
                return CallRef(name=name, receiver="var", receiver_type=scope[ident], arg_types=args, line=line)
            if ident[:1].isupper():
                return CallRef(name=name, receiver="type", receiver_type=ident, arg_types=args, line=line)
            return CallRef(name=name, receiver="unknown", arg_types=args, line=line)
        if obj.type in ("field_access", "scoped_identifier") and _text(obj).replace(".", "").isidentifier():
            text = _text(obj)
            if text.rpartition(".")[2][:1].isupper():
                return CallRef(name=name, receiver="type", receiver_type=text, arg_types=args, line=line)
        if obj.type == "object_creation_expression":
            t = base_type(type_text(obj.child_by_field_name("type")))
            return CallRef(name=name, receiver="var", receiver_type=t, arg_types=args, line=line)
        return CallRef(name=name, receiver="unknown", arg_types=args, line=line)

    def _args(self, node: Any, owner: TypeDecl, scope: dict[str, str]) -> tuple[str | None, ...]:
        arguments = node.child_by_field_name("arguments")
        out: list[str | None] = []
        for a in arguments.named_children if arguments is not None else []:
            if a.type in _LITERAL_TYPES:
                out.append(_LITERAL_TYPES[a.type])
            elif a.type == "identifier":
                out.append(scope.get(_text(a)))
            elif a.type == "object_creation_expression":
                out.append(base_type(type_text(a.child_by_field_name("type"))))
            elif a.type == "this":
                out.append(owner.name.rpartition(".")[2])
            else:
                out.append(None)
        return tuple(out)


def _members(body: Any) -> list[Any]:
    out = []
    for c in body.named_children:
        if c.type == "enum_body_declarations":
            out.extend(c.named_children)
        else:
            out.append(c)
    return out


def analyze_java(path: str, text: str) -> FileFacts:
    """The facts of one Java file (tree-sitter recovers from errors; ``error`` notes that there were some)."""
    tree = parser().parse(text.encode("utf-8"))
    facts = _Analyzer(path).run(tree.root_node)
    facts.lines = text.count("\n") + 1
    if tree.root_node.has_error:
        facts.error = "syntax errors (tree-sitter recovered; facts may be partial)"
    return facts
