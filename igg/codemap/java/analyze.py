"""The Java analyzer: one file's facts through tree-sitter (the ``tree-sitter-java`` wheel; no downloads).

Classes, records (as classes), interfaces, enums, nested types (``Outer.Inner``), methods and
constructors with signatures (parameter types: ``login(String, String)``), ``extends``/``implements``,
imports, and per callable: calls with their receiver (``this``/``super``, a type for static calls, a
field, parameter or local of declared type, ``var x = new T()``), the static types of literal and typed
arguments (to pick between overloads), ``new T()``, and SQL in string literals (concatenations of literals
included) and in the constants of the file.
"""

from __future__ import annotations

from functools import lru_cache, partial
from typing import Any

from igg.codemap.columns import Columns
from igg.codemap.facts import SWITCH, CallableDecl, CallRef, Expr, FileFacts, ImportRef, SqlRef, TypeDecl
from igg.codemap.java.declare import add_fields, add_supertypes, parameters
from igg.codemap.java.func import type_arguments
from igg.codemap.java.http import hinted, http_facts
from igg.codemap.java.syntax import (
    arg_nodes,
    array_dims,
    base_type,
    dims_of,
    element_type,
    erase,
    generics_of,
    inferred_params,
    is_static,
    lambda_arity,
    member_nodes,
    operands,
    owner_param,
    string_value,
    target_type,
    text_of,
    type_text,
)
from igg.codemap.routes import is_test
from igg.codemap.sql import tables_at
from igg.codemap.syntax import first_error_line

_TYPE_NODES = {
    "class_declaration": "class",
    "record_declaration": "class",
    "interface_declaration": "interface",
    "enum_declaration": "enum",
    "annotation_type_declaration": "interface",
}
_CALLABLE_NODES = (
    "method_declaration",
    "constructor_declaration",
    "compact_constructor_declaration",
    "annotation_type_element_declaration",
)
"""The members that declare a callable."""
_BINDING_NODES = (
    "local_variable_declaration",
    "formal_parameter",
    "resource",
    "enhanced_for_statement",
    "catch_formal_parameter",
    "instanceof_expression",
)
"""The nodes that declare variables in a body."""
_CALL_NODES = ("method_invocation", "explicit_constructor_invocation", "switch_expression")
"""The nodes that make a call."""
_LITERAL_TYPES = {
    "string_literal": "String",
    "decimal_integer_literal": "int",
    "hex_integer_literal": "int",
    "decimal_floating_point_literal": "double",
    "character_literal": "char",
    "true": "boolean",
    "false": "boolean",
    "text_block": "String",
}


@lru_cache(maxsize=1)
def parser() -> Any:
    """The shared tree-sitter parser for Java (built once per process)."""
    import tree_sitter_java
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_java.language()))


class _Analyzer:
    def __init__(self, path: str, columns: Columns) -> None:
        self.facts = FileFacts(path=path, language="java", module="", package="")
        self.at = columns.at
        """(line, column) where a node starts."""
        self.constants: dict[str, list[SqlRef]] = {}
        self.strings: dict[int, str | None] = {}
        """The value of each string expression met (``_string_value``'s memo), by node id."""
        self.calls: dict[int, CallRef] = {}
        """Each call read (``_invocation``), by node id: a chain ``a.b().c().d()`` is read once, not once per
        link."""
        self.lambdas: dict[tuple[int, int], tuple[CallRef, int]] = {}
        """A lambda argument's (start, end) byte -> the call it is an argument of, and its position."""
        self.self_bounded: dict[str, set[str]] = {}
        """Qualified type -> its type parameters bounded by the type itself (``B extends Builder<B>``)."""

    def run(self, root: Any) -> FileFacts:
        package = ""
        for child in root.named_children:
            if child.type == "package_declaration":
                name = next(
                    (c for c in child.named_children if c.type in ("scoped_identifier", "identifier")), None
                )
                package = text_of(name) if name is not None else ""
            elif child.type == "import_declaration":
                self._import(child)
        stem = self.facts.path.rpartition("/")[2].removesuffix(".java")
        self.facts.package = package
        self.facts.module = f"{package}.{stem}" if package else stem
        types = [c for c in root.named_children if c.type in _TYPE_NODES]
        for t in types:  # constants first: a method may use one declared further down
            self._collect_constants(t)
        for t in types:
            self._type(t, outer=None, generics={})
        return self.facts

    def _import(self, node: Any) -> None:
        name = next((c for c in node.named_children if c.type in ("scoped_identifier", "identifier")), None)
        if name is None:
            return
        target = text_of(name)
        static = any(c.type == "static" for c in node.children)
        wildcard = any(c.type == "asterisk" for c in node.children)
        line, column = self.at(node)
        if static:
            # import static a.b.Util.hash / a.b.Util.*: the dependency is on the type, the member is bound
            owner, _, member = (target, "", "*") if wildcard else target.rpartition(".")
            self.facts.imports.append(
                ImportRef(
                    target=owner,
                    alias=None if wildcard else member,
                    member=member,
                    wildcard=wildcard,
                    line=line,
                    column=column,
                )
            )
            return
        self.facts.imports.append(
            ImportRef(
                target=target,
                alias=None if wildcard else target.rpartition(".")[2],
                wildcard=wildcard,
                line=line,
                column=column,
            )
        )

    def _collect_constants(self, node: Any) -> None:
        body = node.child_by_field_name("body")
        if body is None:
            return
        for member in member_nodes(body):
            if member.type in ("field_declaration", "constant_declaration"):
                for decl in member.children_by_field_name("declarator"):
                    value = decl.child_by_field_name("value")
                    text = string_value(value) if value is not None else None
                    sql = tables_at(text, partial(self.at, value)) if text else []
                    if sql:
                        self.constants[text_of(decl.child_by_field_name("name"))] = sql
            elif member.type in _TYPE_NODES:
                self._collect_constants(member)

    # ---- types ---------------------------------------------------------------------------------------
    def _type(self, node: Any, outer: TypeDecl | None, generics: dict[str, str]) -> None:
        simple = text_of(node.child_by_field_name("name"))
        kind = _TYPE_NODES[node.type]
        decl = TypeDecl(
            kind=kind,  # type: ignore[arg-type]
            name=f"{outer.name}.{simple}" if outer else simple,
            package=self.facts.package,
            line=node.start_point[0] + 1,
            column=self.at(node)[1],
            outer=outer.qualified if outer else None,
        )
        inner_class = (
            outer is not None
            and outer.kind != "interface"
            and node.type == "class_declaration"
            and not is_static(node)
        )  # an inner class sees its outer type's type parameters
        generics = generics_of(node, generics if inner_class else {})
        own = generics_of(node, {})
        self.self_bounded[decl.qualified] = {p for p, bound in own.items() if bound == simple}
        decl.type_params = own
        add_supertypes(decl, node, simple, self.self_bounded[decl.qualified])
        self.facts.types.append(decl)
        body = node.child_by_field_name("body")
        members = member_nodes(body) if body is not None else []
        add_fields(decl, node, members, generics)
        static_init, instance_init = self._members(members, decl, generics)
        for name, nodes in (("<clinit>", static_init), ("<init>", instance_init)):
            if nodes:
                self._initializer(name, nodes, decl, generics)

    def _members(
        self, members: list[Any], decl: TypeDecl, generics: dict[str, str]
    ) -> tuple[list[Any], list[Any]]:
        """Read the callables and nested types among ``members``; the initialisers left, as (static ones,
        instance ones): static fields, static blocks and enum constants run in ``<clinit>``, the others in
        every constructor (``<init>``), and calls there are real calls."""
        static_init: list[Any] = []
        instance_init: list[Any] = []
        for m in members:
            if m.type in _CALLABLE_NODES:
                self._callable(m, decl, generics)
            elif m.type in _TYPE_NODES:
                self._type(m, outer=decl, generics=generics)
            elif m.type in ("static_initializer", "enum_constant"):
                static_init.append(m)
            elif m.type == "block":
                instance_init.append(m)
            elif m.type in ("field_declaration", "constant_declaration"):
                values = [d.child_by_field_name("value") for d in m.children_by_field_name("declarator")]
                values = [v for v in values if v is not None]
                if values:
                    static = m.type == "constant_declaration" or decl.kind == "interface" or is_static(m)
                    (static_init if static else instance_init).extend(values)
        return static_init, instance_init

    def _initializer(self, name: str, nodes: list[Any], decl: TypeDecl, generics: dict[str, str]) -> None:
        """Record the initialiser ``name`` (``<clinit>`` or ``<init>``) of ``decl`` made of ``nodes``, if it
        calls, instantiates or runs SQL."""
        init = CallableDecl(
            kind="method",
            name=name,
            signature=f"{name}()",
            owner=decl.qualified,
            line=nodes[0].start_point[0] + 1,
            column=self.at(nodes[0])[1],
            static=name == "<clinit>",
        )
        scope: dict[str, Expr] = {}
        for n in nodes:
            before = len(init.sql)
            self._walk(n, init, decl, scope, generics)
            if n.type not in ("static_initializer", "block"):
                del init.sql[before:]  # a constant holding SQL text runs no SQL (methods using it do)
        if init.calls or init.instantiates or init.sql:
            self.facts.callables.append(init)

    def _callable(self, node: Any, owner: TypeDecl, generics: dict[str, str]) -> None:
        constructor = node.type in ("constructor_declaration", "compact_constructor_declaration")
        name = text_of(node.child_by_field_name("name"))
        generics = generics_of(node, generics)
        plist = node.child_by_field_name("parameters")
        params = parameters(plist, generics)
        static = is_static(node)
        returns = None
        rtype = node.child_by_field_name("type")
        if rtype is not None and not constructor:
            returns = erase(rtype, generics) + "[]" * dims_of(node)
        decl = CallableDecl(
            kind="constructor" if constructor else "method",
            name=name,
            owner=owner.qualified,
            signature=f"{name}({', '.join(t for t, _, _ in params)})",
            line=node.start_point[0] + 1,
            column=self.at(node)[1],
            params=tuple(e.removesuffix("[]") if w.endswith("...") else e for w, e, _ in params),
            static=static,
            returns=returns,
            abstract=not constructor and node.child_by_field_name("body") is None,
            returns_param=owner_param(rtype, owner, node) if not constructor else None,
            returns_element=element_type(rtype, generics)
            if rtype is not None and not constructor and not dims_of(node)
            else None,
            returns_self=rtype is not None
            and not constructor
            and not static
            and type_text(rtype) in self.self_bounded.get(owner.qualified, ())
            and type_text(rtype) not in generics_of(node, {}),
        )
        self.facts.callables.append(decl)
        body = node.child_by_field_name("body")
        if body is None:
            return
        if constructor:
            first = next(
                (c for c in body.named_children if c.type != "line_comment" and c.type != "block_comment"),
                None,
            )
            decl.explicit_init = first is not None and first.type == "explicit_constructor_invocation"
            decl.body_site = self.at(body)
        scope: dict[str, Expr] = {n: ("var", e) for _, e, n in params}
        for p in plist.named_children if plist is not None else []:  # List<Filter> filters: its elements too
            element = (
                element_type(p.child_by_field_name("type"), generics)
                if p.type == "formal_parameter"
                else None
            )
            if element and not dims_of(p):
                pname = text_of(p.child_by_field_name("name"))
                scope[pname] = (*scope[pname], element)
        self._walk(body, decl, owner, scope, generics)

    # ---- bodies --------------------------------------------------------------------------------------
    def _declare(
        self,
        scope: dict[str, Expr],
        type_node: Any,
        name_node: Any,
        generics: dict[str, str],
        value: Any = None,
        dims: int = 0,
    ) -> None:
        if name_node is None:
            return
        name = text_of(name_node)
        if type_node is None:
            return
        written = base_type(type_text(type_node))
        if written == "var":
            inferred = self._expr(value, scope, generics) if value is not None else None
            scope[name] = inferred if inferred is not None else ("lit", None)
        else:
            element = element_type(type_node, generics) if not dims else None
            erased = erase(type_node, generics) + "[]" * dims
            scope[name] = ("var", erased, element) if element else ("var", erased)

    def _walk(
        self, root: Any, decl: CallableDecl, owner: TypeDecl, scope: dict[str, Expr], generics: dict[str, str]
    ) -> None:
        stack: list[Any] = [root]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):  # leaving a lambda: its parameters' names mean what they meant before
                _restore(scope, node)
                continue
            kind = node.type
            if kind in _TYPE_NODES and node is not root and not _in_anonymous(node, root):
                self._type(
                    node, outer=owner, generics=generics
                )  # a local class: Outer.Local, a type of its own
                continue
            if kind == "lambda_expression":
                self._lambda(node, scope, stack, generics)
            elif kind in _BINDING_NODES:
                self._bind(node, decl, scope, generics)
            elif kind in _CALL_NODES:
                self._call_site(node, decl, scope, generics)
            elif kind == "object_creation_expression":
                decl.instantiates.append(
                    (base_type(type_text(node.child_by_field_name("type"))), *self.at(node))
                )
            elif kind in ("string_literal", "text_block", "binary_expression"):
                text = string_value(node, self.strings)
                if text is not None:
                    decl.sql.extend(tables_at(text, partial(self.at, node)))
                    # the literal parts of a concatenation are not statements of their own; calls in it are
                    stack.extend(reversed(operands(node)))
                    continue
            elif kind == "identifier" and self.constants and text_of(node) in self.constants:
                line, column = self.at(node)
                decl.sql.extend(
                    SqlRef(table=r.table, op=r.op, statement=r.statement, line=line, column=column)
                    for r in self.constants[text_of(node)]
                )
            # lambdas, anonymous and local classes: their calls count as this callable's
            stack.extend(reversed(node.named_children))

    def _bind(self, node: Any, decl: CallableDecl, scope: dict[str, Expr], generics: dict[str, str]) -> None:
        """Declare in ``scope`` the variables a node of ``_BINDING_NODES`` introduces (a resource is also
        closed)."""
        kind = node.type
        if kind == "local_variable_declaration":
            tnode = node.child_by_field_name("type")
            for d in node.children_by_field_name("declarator"):
                self._declare(
                    scope,
                    tnode,
                    d.child_by_field_name("name"),
                    generics,
                    d.child_by_field_name("value"),
                    dims_of(d),
                )
        elif kind in ("formal_parameter", "resource", "enhanced_for_statement"):
            self._declare(
                scope,
                node.child_by_field_name("type"),
                node.child_by_field_name("name"),
                generics,
                node.child_by_field_name("value") if kind != "enhanced_for_statement" else None,
                dims_of(node),
            )
            if kind == "resource":  # try-with-resources closes it: javac calls close() on its static type
                self._close(node, decl, scope, generics)
        elif kind == "catch_formal_parameter":
            types = [c for c in node.named_children if c.type == "catch_type"]
            names = [c for c in node.named_children if c.type == "identifier"]
            alternatives = types[0].named_children if types else []
            if len(alternatives) == 1 and names:
                self._declare(scope, alternatives[0], names[0], generics)
        elif kind == "instanceof_expression":
            tnode = node.child_by_field_name("right")
            name = node.child_by_field_name("name")
            if tnode is not None and name is not None:
                self._declare(scope, tnode, name, generics)

    def _call_site(
        self, node: Any, decl: CallableDecl, scope: dict[str, Expr], generics: dict[str, str]
    ) -> None:
        """Record the call a node of ``_CALL_NODES`` makes."""
        kind = node.type
        if kind == "method_invocation":
            decl.calls.append(self._invocation(node, scope, generics))
        elif kind == "explicit_constructor_invocation":
            ctor = node.child_by_field_name("constructor")
            line, column = self.at(ctor)
            decl.calls.append(
                CallRef(
                    name="<init>",
                    receiver="this" if ctor.type == "this" else "super",
                    args=self._args(node, scope, generics),
                    line=line,
                    column=column,
                )
            )
        elif kind == "switch_expression":
            # a switch over an enum calls its ordinal() (javac's switch map): a dependency on the enum,
            # kept as a class-level call when the selector's type is an enum of the tree
            cond = node.child_by_field_name("condition")
            selector = self._expr(cond, scope, generics) if cond is not None else None
            if selector is not None:
                line, column = self.at(node)
                decl.calls.append(
                    CallRef(name=SWITCH, receiver="expr", expr=selector, line=line, column=column)
                )

    def _close(self, node: Any, decl: CallableDecl, scope: dict[str, Expr], generics: dict[str, str]) -> None:
        """The implicit ``close()`` of a try-with-resources resource (JLS 14.20.3): a declared resource
        (``try (Out o = ..)``) or an effectively final variable or field named in the header (``try (o)``)."""
        name = node.child_by_field_name("name")
        if name is not None:
            expr = scope.get(text_of(name))
        else:
            named = [c for c in node.named_children if c.type in ("identifier", "field_access")]
            expr = self._expr(named[0], scope, generics) if len(named) == 1 else None
        if expr is not None and expr != ("lit", None):
            line, column = self.at(node)
            decl.calls.append(
                CallRef(name="close", receiver="expr", expr=expr, args=(), line=line, column=column)
            )

    def _lambda(self, node: Any, scope: dict[str, Expr], stack: list[Any], generics: dict[str, str]) -> None:
        """Bind the parameters of a lambda that declares no types, for its body: each is typed by the call it
        is an argument of (``("lambda", call, i, j)``), else by the type it is declared, cast or returned as
        (``("typed", T, args, j)``: ``Predicate<Matcher> p = m -> ..``), else unknown. The names they shadow
        come back once the body is walked (the dict pushed under its children)."""
        names = inferred_params(node)
        if not names:
            return
        stack.append({n: scope.get(n) for n in names})
        target = self.lambdas.get((node.start_byte, node.end_byte))
        declared = target_type(node) if target is None else None
        typed: tuple[str, tuple[str, ...]] | None = None
        if declared is not None and base_type(type_text(declared)) != "var":
            args = tuple(
                generics.get(base_type(a), base_type(a)) + "[]" * array_dims(a) if a else ""
                for a in type_arguments(type_text(declared))
            )
            typed = (erase(declared, generics), args)
        for j, n in enumerate(names):
            if target is not None:
                scope[n] = ("lambda", target[0], target[1], j)
            elif typed is not None:
                scope[n] = ("typed", typed[0], typed[1], j)
            else:
                scope[n] = ("lit", None)

    def _invocation(self, node: Any, scope: dict[str, Expr], generics: dict[str, str]) -> CallRef:
        known = self.calls.get(node.id)
        if known is not None:
            return known
        ref = self.calls[node.id] = self._call_ref(node, scope, generics)
        for i, a in enumerate(arg_nodes(node)):
            if a.type == "lambda_expression":
                self.lambdas[(a.start_byte, a.end_byte)] = (ref, i)
        return ref

    def _call_ref(self, node: Any, scope: dict[str, Expr], generics: dict[str, str]) -> CallRef:
        name_node = node.child_by_field_name("name")
        name = text_of(name_node)
        obj = node.child_by_field_name("object")
        args = self._args(node, scope, generics)
        line, column = self.at(name_node)  # the method's name: where javac puts the call of a chain's link
        if obj is None:
            return CallRef(name=name, receiver="none", args=args, line=line, column=column)
        if obj.type == "this":
            return CallRef(name=name, receiver="this", args=args, line=line, column=column)
        if obj.type == "super":
            return CallRef(name=name, receiver="super", args=args, line=line, column=column)
        expr = self._expr(obj, scope, generics)
        if expr is None:
            return CallRef(name=name, receiver="unknown", args=args, line=line, column=column)
        return CallRef(name=name, receiver="expr", expr=expr, args=args, line=line, column=column)

    def _expr(self, node: Any, scope: dict[str, Expr], generics: dict[str, str]) -> Expr | None:
        kind = node.type
        if kind == "identifier":
            ident = text_of(node)
            return scope.get(ident) or ("name", ident)
        if kind == "this":
            return ("this",)
        if kind == "super":
            return ("super",)
        if kind == "parenthesized_expression" and node.named_child_count == 1:
            return self._expr(node.named_children[0], scope, generics)
        if kind == "field_access":
            obj, fld = node.child_by_field_name("object"), node.child_by_field_name("field")
            if fld is not None and fld.type == "this":
                return ("outer", text_of(obj))
            inner = self._expr(obj, scope, generics) if obj is not None else None
            return ("field", inner, text_of(fld)) if inner is not None and fld is not None else None
        if kind == "scoped_identifier":
            return ("name", text_of(node))
        if kind == "method_invocation":
            return ("call", self._invocation(node, scope, generics))
        if kind == "object_creation_expression":
            return ("new", base_type(type_text(node.child_by_field_name("type"))))
        if kind == "cast_expression":
            return ("cast", erase(node.child_by_field_name("type"), generics))
        return self._value_expr(node, scope, generics)

    def _value_expr(self, node: Any, scope: dict[str, Expr], generics: dict[str, str]) -> Expr | None:
        """The expression of a value that names nothing of the tree: an array, a literal, a lambda, an
        element of an array (``_expr``'s other half)."""
        kind = node.type
        if kind == "array_creation_expression":  # new T[n]: an array, of no type of the tree
            dims = (
                sum(
                    1 if c.type == "dimensions_expr" else text_of(c).count("[")
                    for c in node.children
                    if c.type in ("dimensions_expr", "dimensions")
                )
                or 1
            )
            return ("lit", erase(node.child_by_field_name("type"), generics) + "[]" * dims)
        if kind in _LITERAL_TYPES:
            return ("lit", _LITERAL_TYPES[kind])
        if kind == "null_literal":
            return ("lit", "null")
        if kind == "binary_expression" and string_value(node, self.strings) is not None:
            return ("lit", "String")
        if kind in ("lambda_expression", "method_reference"):
            return ("fn", lambda_arity(node))
        if kind == "array_access":
            inner = self._expr(node.child_by_field_name("array"), scope, generics)
            return ("elem", inner) if inner is not None else None
        return None

    def _args(self, node: Any, scope: dict[str, Expr], generics: dict[str, str]) -> tuple[Expr | None, ...]:
        return tuple(self._expr(a, scope, generics) for a in arg_nodes(node))


def _in_anonymous(node: Any, root: Any) -> bool:
    """Whether ``node`` lies in the body of an anonymous class (or an enum constant's) below ``root``: javac
    names what such a body holds after its encloser (``Outer$1$1Local``), so it stays part of the callable."""
    parent = node.parent
    while parent is not None and parent != root:
        if (
            parent.type == "class_body"
            and parent.parent is not None
            and parent.parent.type in ("object_creation_expression", "enum_constant")
        ):
            return True
        parent = parent.parent
    return False


def _restore(scope: dict[str, Expr], saved: dict[str, Expr | None]) -> None:
    for name, before in saved.items():
        if before is None:
            scope.pop(name, None)
        else:
            scope[name] = before


def analyze_java(path: str, text: str) -> FileFacts:
    """The facts of one Java file (tree-sitter recovers from errors; ``error`` notes that there were some)."""
    tree = parser().parse(text.encode("utf-8"))
    columns = Columns(text)
    facts = _Analyzer(path, columns).run(tree.root_node)
    facts.lines = text.count("\n") + 1
    if hinted(text) and not is_test(path):
        facts.http = http_facts(tree.root_node, facts, columns)
    if tree.root_node.has_error:
        facts.error = "syntax error (tree-sitter recovered; facts may be partial)"
        facts.error_line = first_error_line(tree.root_node)
    return facts
