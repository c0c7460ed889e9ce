"""The Go analyzer: one file's facts through tree-sitter (the ``tree-sitter-go`` wheel).

A file's package is its folder's import path (``build.import_paths``, given as the file's ``module`` by the
walk), or that path plus ``_test`` for an external test file (``package foo_test`` in ``foo_test.go``): go
keeps such files apart as their own package. The module is the package path plus the file name
(``example.com/app/store/db.go``); ``FileFacts.exports`` holds ``{"package": NAME}``, the package clause's
name (what an import binds when it has no alias). Imports are ``ImportRef``s whose ``target`` is the import
path as written and ``alias`` the explicit name (``_``, ``.``, or an identifier; None without one).

Declarations: every package-level ``type``: a struct, or any other named type or alias, is a ``class`` (a type
that can have methods), an interface an ``interface``; a struct's embedded fields and an interface's embedded
interfaces are its ``extends`` (as written), a struct's named fields its ``fields`` (name -> type as written;
another named type's underlying type is ``fields[UNDERLYING]``, an alias's aliased type ``fields[ALIAS]``:
neither key is a Go name). Functions, and methods with their receiver's type as owner (an interface's methods
are abstract methods of it); ``params`` are the parameter types as written, one per parameter, ``returns`` the
result types joined by ``", "``.

Calls are kept with what the source says of their receiver: ``f()`` (receiver ``none``), ``x.F()`` where ``x``
is no local name (``type``: a package's function, or a method expression of a type), and ``e.M()`` where ``e``
is a typed expression (``expr``): ``("var", T)`` a local, parameter or receiver declared or built as ``T``
(``var x T``, ``x := T{}``, ``&T{}``, ``new(T)``, ``x.(T)``), ``("field", E, name)``, ``("call", CallRef)``
(what the call returns). A local is seen from its declaration to the end of its scope (a block, an
``if``/``for``/``switch`` with its clauses, a case, a function literal's parameters in it), the innermost one
shadowing the others, as the compiler scopes names; parameters, named results and the receiver hold in the
whole function. SQL in a function's string literals, and in the file's constants it names, gives its tables.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import replace
from functools import cache, partial
from typing import Any

from igg.codemap.columns import Columns
from igg.codemap.facts import CallableDecl, CallRef, FileFacts, ImportRef, SqlRef, TypeDecl
from igg.codemap.go.closures import Closures
from igg.codemap.go.http import hinted, http_facts
from igg.codemap.go.scope import ALIAS, UNDERLYING, Scope, base_type, bound, node_text, scope_node
from igg.codemap.go.signatures import named_results as _named_results
from igg.codemap.go.signatures import parameters as _parameters
from igg.codemap.go.signatures import results as _results
from igg.codemap.go.signatures import signature as _signature
from igg.codemap.routes import is_test
from igg.codemap.sql import tables_at
from igg.codemap.syntax import first_error_line

_text = node_text

_QUERY = """
(call_expression) @call
(type_conversion_expression type: (generic_type)) @generic
(short_var_declaration) @short
(var_spec) @var
(const_spec) @const
(range_clause) @range
(receive_statement) @receive
(type_switch_statement) @switch
(func_literal) @lit
(interpreted_string_literal) @string
(raw_string_literal) @string
"""


@cache
def grammar() -> tuple[Any, Any]:
    """The parser and query, made once a process."""
    import tree_sitter
    import tree_sitter_go

    language = tree_sitter.Language(tree_sitter_go.language())
    return tree_sitter.Parser(language), tree_sitter.Query(language, _QUERY)


def parse(path: str, text: str) -> Any:
    """The syntax tree of one file (a bare parse: what ``scripts/bench_map_code.py`` compares against)."""
    parser, _ = grammar()
    return parser.parse(text.encode("utf-8", "surrogatepass"))


def _string(node: Any) -> str:
    """A string literal's value (escapes of an interpreted literal left as written)."""
    raw = _text(node)
    return raw[1:-1] if len(raw) >= 2 else raw


def package_path(path: str, module: str | None, package_name: str | None) -> str:
    """The import path of the package a file belongs to (see the module doc)."""
    folder = path.rpartition("/")[0]
    base = module if module is not None else (folder or package_name or "main")
    if path.endswith("_test.go") and package_name and package_name.endswith("_test"):
        return f"{base}_test"
    return base


class _Analyzer:
    def __init__(self, path: str, text: str, module: str | None) -> None:
        self.path = path
        self.module = module
        self.facts = FileFacts(path=path, language="go", module=path, package="", lines=text.count("\n") + 1)
        self.spans: list[tuple[int, int, CallableDecl, dict[str, str], dict[str, Any]]] = []
        """(start, end, callable, its type parameters, its scope: parameters and receiver -> written type)."""
        self.sql_names: dict[str, list[SqlRef]] = {}
        """Package-level constants and variables of the file holding SQL -> its tables."""
        self.at = Columns(text).at
        """(line, column) where a node starts."""
        self.closures = Closures()

    # ---- declarations --------------------------------------------------------------------------------
    def declarations(self, root: Any, imports_only: bool = False) -> None:
        """The package clause, the imports and (unless ``imports_only``) the declarations of the file."""
        name = None
        for node in root.named_children:
            if node.type == "package_clause":
                ident = next((c for c in node.named_children if c.type == "package_identifier"), None)
                name = _text(ident) if ident is not None else None
                break
        pkg = package_path(self.path, self.module, name)
        base = self.path.rpartition("/")[2]
        self.facts.package = pkg
        self.facts.module = f"{pkg}/{base}"
        if name:
            self.facts.exports = {"package": name}
        for node in root.named_children:
            kind = node.type
            if kind == "import_declaration":
                for spec in _specs(node, "import_spec"):
                    self.import_(spec)
            elif imports_only:
                continue
            elif kind == "type_declaration":
                for spec in node.named_children:
                    if spec.type in ("type_spec", "type_alias"):
                        self.type_(spec)
            elif kind == "function_declaration":
                self.function(node)
            elif kind == "method_declaration":
                self.method(node)
            elif kind in ("const_declaration", "var_declaration"):
                self.package_values(node)

    def import_(self, spec: Any) -> None:
        path = spec.child_by_field_name("path")
        if path is None:
            return
        alias = spec.child_by_field_name("name")
        self.facts.imports.append(
            ImportRef(
                target=_string(path),
                alias=_text(alias) if alias is not None else None,
                wildcard=alias is not None and _text(alias) == ".",
                line=spec.start_point[0] + 1,
                column=self.at(spec)[1],
            )
        )

    def type_(self, spec: Any) -> None:
        name, body = spec.child_by_field_name("name"), spec.child_by_field_name("type")
        if name is None or body is None:
            return
        interface = body.type == "interface_type" and spec.type == "type_spec"
        decl = TypeDecl(
            kind="interface" if interface else "class",
            name=_text(name),
            package=self.facts.package,
            line=spec.start_point[0] + 1,
            column=self.at(spec)[1],
        )
        self.facts.types.append(decl)
        if body.type == "struct_type" and spec.type == "type_spec":
            fields = next((c for c in body.named_children if c.type == "field_declaration_list"), None)
            for field in fields.named_children if fields is not None else ():
                if field.type != "field_declaration":
                    continue
                typed = field.child_by_field_name("type")
                names = field.children_by_field_name("name")
                if typed is None:
                    continue
                written = _text(typed)
                if not names:  # embedded: T, *T, pkg.T, T[int]
                    decl.extends.append(base_type(written))
                    decl.fields[base_type(written).rpartition(".")[2]] = written
                for n in names:
                    decl.fields[_text(n)] = written
        elif not interface and body.type != "struct_type":  # type S []T, type M map[K]V, type A = B[int]
            decl.fields[ALIAS if spec.type == "type_alias" else UNDERLYING] = " ".join(_text(body).split())
        elif interface:
            for member in body.named_children:
                if member.type == "method_elem":
                    self.interface_method(member, decl)
                elif member.type == "type_elem" and len(member.named_children) == 1:
                    inner = member.named_children[0]
                    if inner.type in ("type_identifier", "qualified_type", "generic_type"):
                        decl.extends.append(base_type(_text(inner)))

    def interface_method(self, node: Any, owner: TypeDecl) -> None:
        name = node.child_by_field_name("name")
        if name is None:
            return
        params, types, _ = _parameters(node.child_by_field_name("parameters"))
        results = _results(node.child_by_field_name("result"))
        self.facts.callables.append(
            CallableDecl(
                kind="method",
                name=_text(name),
                signature=_signature(_text(name), params, results),
                owner=owner.qualified,
                line=node.start_point[0] + 1,
                column=self.at(node)[1],
                params=tuple(types),
                returns=", ".join(results) or None,
                abstract=True,
            )
        )

    def function(self, node: Any) -> None:
        name = node.child_by_field_name("name")
        if name is None:
            return
        params, types, scope = _parameters(node.child_by_field_name("parameters"))
        results = _results(node.child_by_field_name("result"))
        scope.update(_named_results(node.child_by_field_name("result")))
        decl = CallableDecl(
            kind="function",
            name=_text(name),
            signature=_signature(_text(name), params, results),
            owner=None,
            line=node.start_point[0] + 1,
            column=self.at(node)[1],
            params=tuple(types),
            returns=", ".join(results) or None,
        )
        self.facts.callables.append(decl)
        self._span(node, decl, _type_params(node.child_by_field_name("type_parameters")), scope)

    def method(self, node: Any) -> None:
        name, receiver = node.child_by_field_name("name"), node.child_by_field_name("receiver")
        if name is None or receiver is None:
            return
        recv = next((c for c in receiver.named_children if c.type == "parameter_declaration"), None)
        typed = recv.child_by_field_name("type") if recv is not None else None
        if typed is None:
            return
        owner = base_type(_text(typed))
        generic = _generic_args(typed)
        params, types, scope = _parameters(node.child_by_field_name("parameters"))
        results = _results(node.child_by_field_name("result"))
        scope.update(_named_results(node.child_by_field_name("result")))
        recv_name = recv.child_by_field_name("name") if recv is not None else None
        if recv_name is not None:
            scope[_text(recv_name)] = _text(typed)
        qualified = f"{self.facts.package}.{owner}" if self.facts.package else owner
        decl = CallableDecl(
            kind="method",
            name=_text(name),
            signature=_signature(_text(name), params, results),
            owner=qualified,
            line=node.start_point[0] + 1,
            column=self.at(node)[1],
            params=tuple(types),
            returns=", ".join(results) or None,
        )
        self.facts.callables.append(decl)
        self._span(node, decl, generic, scope)

    def _span(
        self, node: Any, decl: CallableDecl, type_params: dict[str, str], scope: dict[str, str]
    ) -> None:
        if node.child_by_field_name("body") is not None:
            self.spans.append((node.start_byte, node.end_byte, decl, type_params, dict(scope)))

    def package_values(self, node: Any) -> None:
        for spec in _specs(node, ("const_spec", "var_spec")):
            names = [c for c in spec.children_by_field_name("name")]
            value = spec.child_by_field_name("value")
            values = value.named_children if value is not None else []
            if spec.type == "var_spec":
                self.package_var(names, spec.child_by_field_name("type"), values)
            for n, v in zip(names, values, strict=False):
                if v.type in ("interpreted_string_literal", "raw_string_literal"):
                    refs = tables_at(_string(v), partial(self.at, v))
                    if refs:
                        self.sql_names[_text(n)] = refs

    def package_var(self, names: list[Any], typed: Any, values: list[Any]) -> None:
        """A package-level variable's type as ``exports["var NAME"]``: as written, or ``= F`` / ``= pkg.F``
        for the result of the call that initialises it."""
        for i, n in enumerate(names):
            written = _text(typed) if typed is not None else None
            if written is None and len(values) == len(names):
                written = _initial_type(values[i])
            if written and _text(n) != "_":
                self.facts.exports[f"var {_text(n)}"] = " ".join(written.split())

    # ---- bodies --------------------------------------------------------------------------------------
    def bodies(self, root: Any, query: Any) -> None:
        import tree_sitter

        if not self.spans:
            return
        self.spans.sort(key=lambda s: s[0])
        starts = [s[0] for s in self.spans]
        captures = tree_sitter.QueryCursor(query).captures(root)
        declared = self._declared(captures, starts)
        self.facts.callables.extend(self.closures.find(captures, partial(self._at, starts), self._closure))
        holder = self.closures.owner
        # in source order: tree-sitter lists nested captures in an order that may differ between processes
        calls = (*captures.get("call", ()), *captures.get("generic", ()))
        for call in sorted(calls, key=lambda n: (n.start_byte, n.end_byte)):
            span = self._at(starts, call.start_byte)
            if span is not None:
                self._call(call, span, Scope(declared[id(span[2])], span[3]))
        for string in sorted(captures.get("string", ()), key=lambda n: (n.start_byte, n.end_byte)):
            span = self._at(starts, string.start_byte)
            if span is not None and string.end_byte - string.start_byte >= 10:
                tables = tables_at(_string(string), partial(self.at, string))
                (holder(string.start_byte) or span[2]).sql.extend(tables)
        if self.sql_names:
            self._named_sql(root, starts, declared)

    def _declared(self, captures: dict[str, list[Any]], starts: list[int]) -> dict[int, dict[str, list[Any]]]:
        """The locals of each function (by the id of its ``CallableDecl``): name -> its declarations, each as
        (scope start, scope end, visible from, declaration), the type parameters first."""
        declared: dict[int, dict[str, list[Any]]] = {id(s[2]): {} for s in self.spans}
        for span in self.spans:
            for local, written in span[4].items():
                declared[id(span[2])].setdefault(local, []).append(
                    (span[0], span[1], span[0], ("type", written))
                )
        add = partial(self._add, starts, declared)
        for short in captures.get("short", ()):
            left, right = short.child_by_field_name("left"), short.child_by_field_name("right")
            for name, value in bound(
                left.named_children if left is not None else [],
                right.named_children if right is not None else [],
            ):
                add(short, name, value)
        for spec in captures.get("var", ()):
            _bind_var(add, spec)
        for node in captures.get("range", ()):
            _bind_range(add, node)
        for node in captures.get("receive", ()):  # case v := <-ch: the channel's element
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            for name, value in bound(
                left.named_children if left is not None else [], [right] if right is not None else []
            ):
                add(node, name, value)
        for kind in ("const", "switch"):
            for declaring in captures.get(kind, ()):
                for local in _declared_names(declaring, kind):
                    add(
                        declaring,
                        local,
                        None,
                        visible=declaring.start_byte if kind == "switch" else None,
                        scope=declaring.parent if kind == "switch" else None,
                    )
        for lit in captures.get("lit", ()):
            _, _, params = _parameters(lit.child_by_field_name("parameters"))
            _, _, results = _parameters(lit.child_by_field_name("result"))
            for local, written in {**params, **results}.items():
                add(lit, local, ("type", written), visible=lit.start_byte, scope=lit)
        return declared

    def _add(
        self,
        starts: list[int],
        declared: dict[int, dict[str, list[Any]]],
        node: Any,
        name: str,
        declaration: Any,
        visible: int | None = None,
        scope: Any = None,
    ) -> None:
        """Declare local ``name`` at ``node`` in the function holding it: seen in ``scope`` (else the scope
        ``node`` lies in) from ``visible`` on (else from the end of ``node``)."""
        span = self._at(starts, node.start_byte)
        if span is None or name == "_":
            return
        where = scope if scope is not None else scope_node(node)
        first, last = (where.start_byte, where.end_byte) if where is not None else (span[0], span[1])
        declared[id(span[2])].setdefault(name, []).append(
            (first, last, node.end_byte if visible is None else visible, declaration)
        )

    def _named_sql(self, root: Any, starts: list[int], declared: dict[int, dict[str, list[Any]]]) -> None:
        """A function naming a package-level constant of the file that holds SQL reads or writes its
        tables."""
        stack = [root]
        while stack:
            node = stack.pop()
            if node.type == "identifier" and _text(node) in self.sql_names:
                span = self._at(starts, node.start_byte)
                if (
                    span is not None
                    and Scope(declared[id(span[2])], span[3]).local(_text(node), node.start_byte) is None
                ):
                    decl = self.closures.owner(node.start_byte) or span[2]
                    have = {(r.table, r.op) for r in decl.sql}
                    line, column = self.at(node)
                    decl.sql.extend(
                        replace(r, line=line, column=column)
                        for r in self.sql_names[_text(node)]
                        if (r.table, r.op) not in have
                    )
            else:
                stack.extend(node.named_children)

    def _at(self, starts: list[int], at: int) -> Any:
        i = bisect.bisect_right(starts, at) - 1
        if i >= 0 and self.spans[i][0] <= at < self.spans[i][1]:
            return self.spans[i]
        return None

    def _call(self, call: Any, span: Any, scope: Scope) -> None:
        function = (
            call.child_by_field_name("function")
            if call.type == "call_expression"
            else call.child_by_field_name("type")
        )
        if function is None:
            return
        site = self.at(_called_name(function))
        closure = self.closures.called(function, scope)
        ref = (
            CallRef(name=closure, line=site[0], column=site[1]) if closure else scope.callref(function, *site)
        )
        if ref is not None:
            (self.closures.owner(call.start_byte) or span[2]).calls.append(ref)

    def _closure(self, ident: Any, literal: Any, name: str) -> CallableDecl:
        """The function a named closure is (see ``igg.codemap.go.closures``)."""
        params, types, _ = _parameters(literal.child_by_field_name("parameters"))
        results = _results(literal.child_by_field_name("result"))
        return CallableDecl(
            kind="function",
            name=name,
            signature=_signature(name, params, results),
            owner=None,
            line=ident.start_point[0] + 1,
            column=self.at(ident)[1],
            params=tuple(types),
            returns=", ".join(results) or None,
        )


def _called_name(function: Any) -> Any:
    """The node of the name a call calls (``Sel`` of ``x.Sel(..)``, ``F`` of ``F[int](..)``): its site, the
    position Go's compiler gives the call, so each call of a chain spread over lines keeps its own line."""
    while True:
        kind = function.type
        if kind in ("selector_expression", "qualified_type"):
            return function.child_by_field_name("field") or function.child_by_field_name("name") or function
        inner = (
            function.child_by_field_name("operand") or function.child_by_field_name("type")
            if kind in ("index_expression", "generic_type")
            else function.named_children[0]
            if kind == "parenthesized_expression" and function.named_children
            else None
        )
        if inner is None:
            return function
        function = inner


def _initial_type(value: Any) -> str | None:
    """What a package-level ``var x = value`` makes ``x``: a composite literal's type, ``new(T)``'s, or ``=
    F`` / ``= pkg.F`` for a call's result."""
    if value.type == "unary_expression" and _text(value.child_by_field_name("operator")) == "&":
        value = value.child_by_field_name("operand")
    if value is None:
        return None
    if value.type == "composite_literal":
        typed = value.child_by_field_name("type")
        return _text(typed) if typed is not None else None
    if value.type != "call_expression":
        return None
    function = value.child_by_field_name("function")
    if function is None:
        return None
    if function.type == "identifier" and _text(function) == "new":
        args = value.child_by_field_name("arguments")
        return _text(args.named_children[0]) if args is not None and args.named_children else None
    if function.type == "identifier":
        return f"= {_text(function)}"
    operand = function.child_by_field_name("operand") if function.type == "selector_expression" else None
    if operand is not None and operand.type == "identifier":
        return f"= {_text(operand)}.{_text(function.child_by_field_name('field'))}"
    return None


def _specs(node: Any, kinds: str | tuple[str, ...]) -> list[Any]:
    kinds = (kinds,) if isinstance(kinds, str) else kinds
    out = []
    for child in node.named_children:
        if child.type in kinds:
            out.append(child)
        elif child.type.endswith("_list") or child.type.endswith("_spec_list"):
            out.extend(c for c in child.named_children if c.type in kinds)
    return out


def _bind_var(add: Callable[..., None], spec: Any) -> None:
    """Declare the names of a ``var`` spec: of its written type, else each of the value it is given."""
    typed = spec.child_by_field_name("type")
    names = spec.children_by_field_name("name")
    if typed is not None:
        for n in names:
            add(spec, _text(n), ("type", _text(typed)))
    else:
        value = spec.child_by_field_name("value")
        for name, declared_as in bound(names, value.named_children if value is not None else []):
            add(spec, name, declared_as)


def _bind_range(add: Callable[..., None], node: Any) -> None:
    """Declare the key and element names of a ``for k, v := range x`` (in the loop)."""
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    if not any(c.type == ":=" for c in node.children):
        return  # for k, v = range x: assigns existing names
    names = [c for c in (left.named_children if left is not None else []) if c.type == "identifier"]
    for i, ident in enumerate(names[:2]):
        add(
            node,
            _text(ident),
            ("range", right, "key" if i == 0 else "elem") if right is not None else None,
            scope=node.parent,
        )


def _declared_names(node: Any, kind: str) -> list[str]:
    if kind == "const":
        return [_text(n) for n in node.children_by_field_name("name")]
    if kind == "switch":
        alias = node.child_by_field_name("alias")
        return [
            _text(n) for n in (alias.named_children if alias is not None else []) if n.type == "identifier"
        ]
    left = node.child_by_field_name("left")
    return [_text(n) for n in (left.named_children if left is not None else []) if n.type == "identifier"]


def _type_params(node: Any) -> dict[str, str]:
    """A function's type parameters -> the named type constraining each (``T Shape``: ``Shape``; ``''`` for
    ``any``, a union or an approximation: no methods to call through it)."""
    out: dict[str, str] = {}
    for d in node.named_children if node is not None else ():
        constraint = d.child_by_field_name("type")
        inner = (
            constraint.named_children[0]
            if constraint is not None and len(constraint.named_children) == 1
            else None
        )
        named = (
            _text(inner) if inner is not None and inner.type in ("type_identifier", "qualified_type") else ""
        )
        for n in d.children_by_field_name("name"):
            out[_text(n)] = "" if named in ("any", "comparable") else named
    return out


def _generic_args(typed: Any) -> dict[str, str]:
    """``*G[K, V]`` in a receiver: its type parameters' names (``K``, ``V``), constraints not known here."""
    stack = [typed]
    while stack:
        node = stack.pop()
        if node.type == "generic_type":
            args = node.child_by_field_name("type_arguments")
            return dict.fromkeys((_text(a) for a in (args.named_children if args is not None else ())), "")
        stack.extend(node.named_children)
    return {}


def analyze_go(path: str, text: str, module: str | None = None, *, imports_only: bool = False) -> FileFacts:
    """The facts of one Go file (a syntax error keeps what tree-sitter recovered); ``imports_only``: its
    package and imports alone (what linking its imports reads: import paths and package clauses)."""
    parser, query = grammar()
    tree = parser.parse(text.encode("utf-8", "surrogatepass"))
    analyzer = _Analyzer(path, text, module)
    analyzer.declarations(tree.root_node, imports_only)
    if not imports_only:
        analyzer.bodies(tree.root_node, query)
    facts = analyzer.facts
    if tree.root_node.has_error:
        facts.error = "syntax error (tree-sitter recovered; facts may be partial)"
        facts.error_line = first_error_line(tree.root_node)
    if not imports_only and hinted(text) and not is_test(path):
        facts.http = http_facts(tree.root_node, facts, Columns(text))
    return facts
