"""The TypeScript/JavaScript analyzer: one file's facts through tree-sitter (the ``tree-sitter-typescript`` and
``tree-sitter-javascript`` wheels; ``.tsx`` with the TSX grammar, JavaScript files with JavaScript's).

A module is named by its path from the mapped root without its extension (``src/util/strings``; a ``.d.ts``
file is ``src/util/strings`` too, and merges into the implementation). Imports of every form are
``ImportRef``s whose ``source`` is the specifier as written: ES ``import`` (default, named, namespace,
type-only, side-effect), ``export ... from`` (``alias`` ``export:NAME`` for a re-exported name, ``wildcard``
for ``export *``), ``import x = require()``, and ``import()``/``require()`` calls with a literal anywhere
(also ``import('./x').T`` in a type). ``member`` is the imported name (``default``, ``*`` for a namespace).
``FileFacts.exports`` maps each exported name to its local binding (``export default class A``:
``default`` -> ``A``). Declarations: classes (abstract too), interfaces, enums, functions (also a top-level
``const f = () => ...``), methods and constructors, inside ``namespace``s too (named ``NS.Inner``); class fields
and constructor parameter properties with their declared types. Calls are kept with what the source says of
their receiver: a bare name, ``this``/``super``, a dotted name (a namespace import, a class, a local or
parameter of declared type, ``this.field`` of declared type); ``new X()`` is an instantiation; SQL in string
and template literals of a callable gives its tables.
"""

from __future__ import annotations

import bisect
import re
from functools import cache
from typing import Any

from igg.codemap.facts import CallableDecl, CallRef, FileFacts, ImportRef, TypeDecl
from igg.codemap.sql import tables_in

TS_SUFFIXES = (".ts", ".tsx", ".mts", ".cts")
JS_SUFFIXES = (".js", ".jsx", ".mjs", ".cjs")
DECLARATION_SUFFIXES = (".d.ts", ".d.mts", ".d.cts")

_COMMON_QUERY = """
(call_expression function: (_) @callee) @call
(new_expression constructor: (_) @made) @new
(variable_declarator name: (identifier) @var) @decl
(string) @string
(template_string) @string
"""
_TS_QUERY = _COMMON_QUERY + """
(import_require_clause source: (string) @require_source)
"""


@cache
def grammar(kind: str) -> tuple[Any, Any]:
    """The parser and query of grammar ``kind`` (``typescript``, ``tsx`` or ``javascript``), made once a process."""
    import tree_sitter

    if kind == "javascript":
        import tree_sitter_javascript

        language = tree_sitter.Language(tree_sitter_javascript.language())
        return tree_sitter.Parser(language), tree_sitter.Query(language, _COMMON_QUERY)
    import tree_sitter_typescript

    raw = tree_sitter_typescript.language_tsx() if kind == "tsx" else tree_sitter_typescript.language_typescript()
    language = tree_sitter.Language(raw)
    return tree_sitter.Parser(language), tree_sitter.Query(language, _TS_QUERY)


def grammar_of(path: str) -> str:
    """Which grammar reads ``path``."""
    lower = path.lower()
    if lower.endswith(JS_SUFFIXES):
        return "javascript"
    return "tsx" if lower.endswith(".tsx") else "typescript"


def module_name(path: str) -> str:
    """``src/util/strings.d.ts`` -> ``src/util/strings``: the path without its extension."""
    lower = path.lower()
    for suffix in (*DECLARATION_SUFFIXES, *TS_SUFFIXES, *JS_SUFFIXES):
        if lower.endswith(suffix):
            return path[:-len(suffix)]
    return path


def parse(path: str, text: str) -> Any:
    """The syntax tree of one file (a bare parse: what ``scripts/bench_map_code.py`` compares against)."""
    parser, _ = grammar(grammar_of(path))
    return parser.parse(text.encode("utf-8", "surrogatepass"))


def _text(node: Any) -> str:
    return node.text.decode("utf-8", "replace") if node is not None else ""


def _literal(node: Any) -> str | None:
    """The value of a string literal node (None when it is not one, or holds a substitution)."""
    if node is None or node.type != "string":
        return None
    raw = _text(node)
    return raw[1:-1] if len(raw) >= 2 else None


def _dotted(node: Any) -> str | None:
    """``a.b.C`` for an identifier or a chain of property accesses on one (None for anything else)."""
    if node.type in ("identifier", "type_identifier", "property_identifier", "this"):
        return _text(node)
    if node.type == "member_expression":
        head = _dotted(node.child_by_field_name("object"))
        prop = node.child_by_field_name("property")
        return f"{head}.{_text(prop)}" if head is not None and prop is not None else None
    if node.type == "nested_type_identifier":
        return _text(node).replace(" ", "")
    return None


def _type_name(node: Any) -> str | None:
    """The type a type annotation names, as written and erased (``Foo<T>`` -> ``Foo``; ``ns.Foo``), or None."""
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
    return _dotted(node) if node.type in ("type_identifier", "identifier", "nested_type_identifier") else None


def _heritage(node: Any) -> tuple[list[str], list[str]]:
    """(extends, implements) of a class, as written, erased."""
    extends: list[str] = []
    implements: list[str] = []
    for part in node.named_children:
        if part.type != "class_heritage":
            continue
        for clause in part.named_children:
            if clause.type == "extends_clause":
                value = clause.child_by_field_name("value")
                name = _dotted(value) if value is not None else None
                if name:
                    extends.append(name)
            elif clause.type == "implements_clause":
                implements.extend(n for n in (_type_name(t) for t in clause.named_children) if n)
            else:  # JavaScript's grammar: class_heritage holds the expression itself
                name = _dotted(clause)
                if name:
                    extends.append(name)
    return extends, implements


class _Analyzer:
    def __init__(self, path: str, text: str, module: str | None) -> None:
        name = module or module_name(path)
        self.facts = FileFacts(path=path, language="typescript", module=name, package=name,
                               lines=text.count("\n") + 1)
        self.spans: list[tuple[int, int, CallableDecl, TypeDecl | None, dict[str, str]]] = []
        """(start byte, end byte, callable, its type, its typed names) of each callable with a body."""
        self.exports: dict[str, str] = {}

    # ---- declarations --------------------------------------------------------------------------------
    def statements(self, body: Any, prefix: str, exported: bool = False) -> None:
        for node in body.named_children:
            self.statement(node, prefix, exported)

    def statement(self, node: Any, prefix: str, exported: bool = False) -> None:
        kind = node.type
        if kind == "import_statement":
            self.import_statement(node)
        elif kind == "export_statement":
            self.export_statement(node, prefix)
        elif kind in ("class_declaration", "abstract_class_declaration", "class"):
            self.class_(node, prefix, exported)
        elif kind == "interface_declaration":
            self.interface(node, prefix, exported)
        elif kind == "enum_declaration":
            self.type_(node, "enum", prefix, exported)
        elif kind in ("function_declaration", "generator_function_declaration", "function_signature"):
            self.function(node, prefix, exported)
        elif kind in ("lexical_declaration", "variable_declaration"):
            self.variables(node, prefix, exported)
        elif kind == "expression_statement" and node.named_children:
            inner = node.named_children[0]
            if inner.type == "internal_module":
                self.namespace(inner, prefix)
            elif inner.type == "assignment_expression" and not prefix:
                self.commonjs_export(inner)
        elif kind in ("internal_module", "module"):
            self.namespace(node, prefix)
        elif kind == "ambient_declaration":
            for inner in node.named_children:
                if inner.type == "statement_block":  # declare global {...}
                    self.statements(inner, f"{prefix}global.")
                else:
                    self.statement(inner, prefix, exported)

    def namespace(self, node: Any, prefix: str) -> None:
        name = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        if name is None or body is None:
            return
        if name.type == "string":  # declare module "x" {...}: declarations that merge into module x's
            self.statements(body, prefix)
            return
        self.statements(body, f"{prefix}{_dotted(name) or _text(name)}.")

    def import_statement(self, node: Any) -> None:
        line = node.start_point[0] + 1
        source = _literal(node.child_by_field_name("source"))
        clause = next((c for c in node.named_children if c.type in ("import_clause", "import_require_clause")), None)
        if clause is not None and clause.type == "import_require_clause":
            alias = clause.named_children[0] if clause.named_children else None
            source = _literal(clause.child_by_field_name("source"))
            if source is not None:
                self.add_import(source, member="*", alias=_text(alias) if alias is not None else None, line=line)
            return
        if source is None:
            return
        if clause is None:  # import './side-effect'
            self.add_import(source, line=line)
            return
        bound = False
        for part in clause.named_children:
            if part.type == "identifier":
                self.add_import(source, member="default", alias=_text(part), line=line)
                bound = True
            elif part.type == "namespace_import":
                ids = [c for c in part.named_children if c.type == "identifier"]
                self.add_import(source, member="*", alias=_text(ids[0]) if ids else None, line=line)
                bound = True
            elif part.type == "named_imports":
                for spec in part.named_children:
                    if spec.type != "import_specifier":
                        continue
                    name = spec.child_by_field_name("name")
                    alias = spec.child_by_field_name("alias") or name
                    self.add_import(source, member=_text(name), alias=_text(alias), line=line)
                    bound = True
        if not bound:
            self.add_import(source, line=line)

    def add_import(self, source: str, *, member: str | None = None, alias: str | None = None,
                   wildcard: bool = False, line: int = 0) -> None:
        self.facts.imports.append(ImportRef(target=source, source=source, member=member, alias=alias,
                                            wildcard=wildcard, line=line))

    def export_statement(self, node: Any, prefix: str) -> None:
        line = node.start_point[0] + 1
        source = _literal(node.child_by_field_name("source"))
        default = any(c.type == "default" for c in node.children)
        declaration = node.child_by_field_name("declaration")
        if declaration is not None:
            names = self.declared_names(declaration, prefix)
            self.statement(declaration, prefix, exported=True)
            for name in names:
                self.exports["default" if default else name] = name
            return
        if any(c.type == "=" for c in node.children):  # TypeScript's export = X: the module is X
            named = [c for c in node.named_children if _dotted(c)]
            if named:
                self.exports["="] = _dotted(named[0]) or ""
            return
        value = node.child_by_field_name("value")
        if value is not None:
            if value.type in ("class", "function_expression", "arrow_function") or default and value.type in (
                    "class_declaration", "function_declaration"):
                self.statement(value, prefix, exported=True)
            written = _dotted(value)
            if written:
                self.exports["default"] = written
            return
        for part in node.named_children:
            if part.type == "export_clause":
                for spec in part.named_children:
                    if spec.type != "export_specifier":
                        continue
                    name = spec.child_by_field_name("name")
                    alias = spec.child_by_field_name("alias") or name
                    if source is not None:
                        self.add_import(source, member=_text(name), alias=f"export:{_text(alias)}", line=line)
                        self.exports[_text(alias)] = f"export:{_text(alias)}"
                    else:
                        self.exports[_text(alias)] = _text(name)
            elif part.type == "namespace_export" and source is not None:
                ids = [c for c in part.named_children if c.type in ("identifier", "string")]
                alias = _text(ids[0]) if ids else "*"
                self.add_import(source, member="*", alias=f"export:{alias}", line=line)
                self.exports[alias] = f"export:{alias}"
        if source is not None and not any(p.type in ("export_clause", "namespace_export") for p in node.named_children):
            self.add_import(source, member="*", wildcard=True, line=line)  # export * from './x'

    def commonjs_export(self, node: Any) -> None:
        """``module.exports = {a, b: c}``, ``module.exports = X`` (the module itself is ``X``: export ``=``),
        ``exports.a = X`` and ``module.exports.a = X``, ``X`` a name of the module. A function or class written
        in place (``exports.a = function () {...}``) is no declaration the compiler names: left out."""
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        target = _dotted(left) if left is not None else None
        local = _dotted(right) if right is not None else None
        if target is None or right is None:
            return
        if target == "module.exports" and right.type == "object":
            for part in right.named_children:
                if part.type == "shorthand_property_identifier":
                    self.exports[_text(part)] = _text(part)
                elif part.type == "pair":
                    key, value = part.child_by_field_name("key"), part.child_by_field_name("value")
                    named = _dotted(value) if value is not None else None
                    if key is not None and named:
                        self.exports[_text(key)] = named
        elif target == "module.exports" and local:
            self.exports["="] = local
        elif target.rpartition(".")[0] in ("exports", "module.exports") and local:
            self.exports[target.rpartition(".")[2]] = local

    def declared_names(self, node: Any, prefix: str) -> list[str]:
        if node.type in ("lexical_declaration", "variable_declaration"):
            return [_text(d.child_by_field_name("name")) for d in node.named_children
                    if d.type == "variable_declarator" and d.child_by_field_name("name") is not None]
        name = node.child_by_field_name("name")
        return [f"{prefix}{_text(name)}"] if name is not None else []

    def type_(self, node: Any, kind: Any, prefix: str, exported: bool, extends: list[str] | None = None,
              implements: list[str] | None = None, named: str | None = None) -> TypeDecl | None:
        name = node.child_by_field_name("name")
        written = (named if named is not None else f"{prefix}{_text(name)}" if name is not None
                   else "default" if exported else None)
        if written is None:
            return None
        decl = TypeDecl(kind=kind, name=written, package=self.facts.module, line=node.start_point[0] + 1,
                        extends=extends or [], implements=implements or [])
        self.facts.types.append(decl)
        return decl

    def class_(self, node: Any, prefix: str, exported: bool, named: str | None = None) -> None:
        extends, implements = _heritage(node)
        decl = self.type_(node, "class", prefix, exported, extends, implements, named)
        body = node.child_by_field_name("body")
        if decl is None or body is None:
            return
        for member in body.named_children:
            if member.type in ("public_field_definition", "field_definition"):
                name = member.child_by_field_name("name") or member.child_by_field_name("property")
                typed = _type_name(member.child_by_field_name("type"))
                value = member.child_by_field_name("value")
                if typed is None and value is not None and value.type == "new_expression":
                    typed = _dotted(value.child_by_field_name("constructor")) if value.child_by_field_name(
                        "constructor") is not None else None
                if name is not None and typed:
                    decl.fields[_text(name)] = typed
        for member in body.named_children:
            if member.type in ("method_definition", "abstract_method_signature", "method_signature"):
                self.method(member, decl)

    def interface(self, node: Any, prefix: str, exported: bool) -> None:
        extends: list[str] = []
        for part in node.named_children:
            if part.type in ("extends_type_clause", "extends_clause"):
                extends.extend(n for n in (_type_name(t) for t in part.named_children) if n)
        decl = self.type_(node, "interface", prefix, exported, extends)
        body = node.child_by_field_name("body")
        if decl is None or body is None:
            return
        for member in body.named_children:
            if member.type == "method_signature":
                self.method(member, decl)
            elif member.type == "property_signature":
                name = member.child_by_field_name("name")
                typed = _type_name(member.child_by_field_name("type"))
                if name is not None and typed:
                    decl.fields[_text(name)] = typed

    def _params(self, node: Any, owner: TypeDecl | None) -> tuple[list[str], list[str | None], dict[str, str]]:
        """(parameters as written, their declared types, name -> declared type, '' where none is declared)."""
        written: list[str] = []
        types: list[str | None] = []
        typed: dict[str, str] = {}
        params = node.child_by_field_name("parameters")
        for p in params.named_children if params is not None else ():
            pattern = p.child_by_field_name("pattern") or (p if p.type == "identifier" else None)
            name = _text(pattern) if pattern is not None else _text(p)
            kind = _type_name(p.child_by_field_name("type"))
            written.append(name if kind is None else f"{name}: {kind}")
            types.append(kind)
            if pattern is not None and pattern.type == "identifier":
                typed[name] = kind or ""
                if kind and owner is not None and any(c.type in ("accessibility_modifier", "readonly") for c in p.children):
                    owner.fields[name] = kind  # a parameter property: a field too
        return written, types, typed

    def method(self, node: Any, owner: TypeDecl) -> None:
        name_node = node.child_by_field_name("name")
        if name_node is None:
            return
        name = _text(name_node)
        constructor = name == "constructor"
        written, types, typed = self._params(node, owner if constructor else None)
        static = any(c.type == "static" for c in node.children)
        body = node.child_by_field_name("body")
        decl = CallableDecl(kind="constructor" if constructor else "method", name=name,
                            signature=f"{name}({', '.join(written)})", owner=f"{owner.package}.{owner.name}",
                            line=node.start_point[0] + 1, params=tuple(types), static=static,
                            returns=_type_name(node.child_by_field_name("return_type")), abstract=body is None)
        self.facts.callables.append(decl)
        if body is not None:
            self.spans.append((node.start_byte, node.end_byte, decl, owner, typed))

    def function(self, node: Any, prefix: str, exported: bool, name: str | None = None,
                 span: Any = None) -> None:
        if name is None:
            name_node = node.child_by_field_name("name")
            name = f"{prefix}{_text(name_node)}" if name_node is not None else ("default" if exported else None)
        if name is None:
            return
        written, types, typed = self._params(node, None)
        body = node.child_by_field_name("body")
        decl = CallableDecl(kind="function", name=name, signature=f"{name}({', '.join(written)})", owner=None,
                            line=node.start_point[0] + 1, params=tuple(types),
                            returns=_type_name(node.child_by_field_name("return_type")))
        self.facts.callables.append(decl)
        if body is not None:
            outer = span if span is not None else node
            self.spans.append((outer.start_byte, outer.end_byte, decl, None, typed))

    def variables(self, node: Any, prefix: str, exported: bool) -> None:
        for d in node.named_children:
            if d.type != "variable_declarator":
                continue
            name, value = d.child_by_field_name("name"), d.child_by_field_name("value")
            if name is None or value is None or name.type != "identifier":
                continue
            if value.type in ("arrow_function", "function_expression", "function", "generator_function"):
                self.function(value, prefix, exported, name=f"{prefix}{_text(name)}", span=d)
            elif value.type == "class":  # const Foo = class {...}: the class is Foo
                self.class_(value, prefix, exported, named=f"{prefix}{_text(name)}")

    # ---- bodies --------------------------------------------------------------------------------------
    def bodies(self, root: Any, query: Any) -> None:
        import tree_sitter

        self.spans.sort(key=lambda s: s[0])
        starts = [s[0] for s in self.spans]
        # in document order: the cursor's order is not stable from one process to the next
        captures = {name: sorted(nodes, key=lambda n: (n.start_byte, n.end_byte))
                    for name, nodes in tree_sitter.QueryCursor(query).captures(root).items()}
        scopes: dict[int, dict[str, str]] = {id(s[2]): dict(s[4]) for s in self.spans}
        for decl in captures.get("decl", ()):  # locals, of declared or constructed type where known, per callable
            span = self._span(starts, decl.start_byte)
            name, value = decl.child_by_field_name("name"), decl.child_by_field_name("value")
            typed = _type_name(decl.child_by_field_name("type"))
            if typed is None and value is not None and value.type == "new_expression":
                made = value.child_by_field_name("constructor")
                typed = _dotted(made) if made is not None else None
            if span is not None and name is not None:
                scopes[id(span[2])][_text(name)] = typed or scopes[id(span[2])].get(_text(name)) or ""
        for node in captures.get("require_source", ()):
            self._dynamic(node)
        for call in captures.get("call", ()):
            self._call(call, starts, scopes)
        for made in captures.get("new", ()):
            span = self._span(starts, made.start_byte)
            constructor = made.child_by_field_name("constructor")
            written = _dotted(constructor) if constructor is not None else None
            if span is not None and written and written.partition(".")[0] not in scopes[id(span[2])]:
                span[2].instantiates.append((written, made.start_point[0] + 1))
        for string in captures.get("string", ()):
            self._sql(string, starts)

    def _span(self, starts: list[int], at: int) -> Any:
        i = bisect.bisect_right(starts, at) - 1
        if i >= 0 and self.spans[i][0] <= at < self.spans[i][1]:
            return self.spans[i]
        return None

    def _dynamic(self, string: Any) -> None:
        source = _literal(string)
        if source is not None:
            self.add_import(source, line=string.start_point[0] + 1)

    def _call(self, call: Any, starts: list[int], scopes: dict[int, dict[str, str]]) -> None:
        function = call.child_by_field_name("function")
        args = call.child_by_field_name("arguments")
        if function is None:
            return
        if function.type == "import" or function.type == "identifier" and _text(function) == "require":
            first = args.named_children[0] if args is not None and args.named_children else None
            if first is not None and first.type == "string":
                if function.type == "import" or not self._required(call, first):
                    self._dynamic(first)
            return
        span = self._span(starts, call.start_byte)
        if span is None:
            return
        decl, owner, line = span[2], span[3], call.start_point[0] + 1
        n = len(args.named_children) if args is not None else 0
        arg_types: tuple[str | None, ...] = (None,) * n
        if function.type == "super":
            decl.calls.append(CallRef(name="<init>", receiver="super", arg_types=arg_types, line=line))
            return
        scope = scopes.get(id(decl), {})
        if function.type == "identifier":
            if _text(function) not in scope:  # a local or parameter holding a function: not knowable
                decl.calls.append(CallRef(name=_text(function), arg_types=arg_types, line=line))
            return
        if function.type != "member_expression":
            return
        obj, prop = function.child_by_field_name("object"), function.child_by_field_name("property")
        if obj is None or prop is None:
            return
        name = _text(prop)
        if obj.type in ("this", "super"):
            decl.calls.append(CallRef(name=name, receiver=obj.type, arg_types=arg_types, line=line))
            return
        written = _dotted(obj)
        if written is None:
            return
        head, _, rest = written.partition(".")
        if head == "this" and owner is not None and rest and "." not in rest and rest in owner.fields:
            decl.calls.append(CallRef(name=name, receiver="var", receiver_type=owner.fields[rest], line=line,
                                      arg_types=arg_types))
        elif not rest and scope.get(head):
            decl.calls.append(CallRef(name=name, receiver="var", receiver_type=scope[head], line=line,
                                      arg_types=arg_types))
        elif head != "this" and head not in scope:
            decl.calls.append(CallRef(name=name, receiver="type", receiver_type=written, line=line,
                                      arg_types=arg_types))

    def _required(self, call: Any, string: Any) -> bool:
        """``const x = require('./m')`` binds ``x`` to the module, ``const {a, b: c} = require('./m')`` binds
        ``a`` and ``c`` to its exports (as imports do); False when the call binds nothing."""
        source, parent = _literal(string), call.parent
        if source is None or parent is None or parent.type != "variable_declarator":
            return False
        name, line = parent.child_by_field_name("name"), string.start_point[0] + 1
        if name is None:
            return False
        if name.type == "identifier":
            self.add_import(source, member="*", alias=_text(name), line=line)
            return True
        if name.type != "object_pattern":
            return False
        bound = False
        for part in name.named_children:
            if part.type == "shorthand_property_identifier_pattern":
                self.add_import(source, member=_text(part), alias=_text(part), line=line)
                bound = True
            elif part.type == "pair_pattern":
                key, value = part.child_by_field_name("key"), part.child_by_field_name("value")
                if key is not None and value is not None and value.type == "identifier":
                    self.add_import(source, member=_text(key), alias=_text(value), line=line)
                    bound = True
        return bound

    def _sql(self, string: Any, starts: list[int]) -> None:
        span = self._span(starts, string.start_byte)
        if span is None:
            return
        raw = _text(string)
        if len(raw) < 8:
            return
        body = _HOLE.sub("{hole}", raw[1:-1]) if string.type == "template_string" else raw[1:-1]
        span[2].sql.extend(tables_in(body, string.start_point[0] + 1))


_HOLE = re.compile(r"\$\{[^{}]*\}")
"""A template literal's substitution, read as a template hole by the SQL detection."""


def analyze_typescript(path: str, text: str, module: str | None = None) -> FileFacts:
    """The facts of one TypeScript or JavaScript file (a syntax error keeps what tree-sitter recovered)."""
    parser, query = grammar(grammar_of(path))
    tree = parser.parse(text.encode("utf-8", "surrogatepass"))
    analyzer = _Analyzer(path, text, module)
    analyzer.statements(tree.root_node, "")
    analyzer.bodies(tree.root_node, query)
    facts = analyzer.facts
    facts.exports = analyzer.exports
    if tree.root_node.has_error:
        line = _first_error_line(tree.root_node)
        facts.error, facts.error_line = "syntax error (tree-sitter recovered; facts may be partial)", line
    return facts


def _first_error_line(root: Any) -> int | None:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            return int(node.start_point[0]) + 1
        stack.extend(reversed([c for c in node.children if c.has_error or c.is_missing]))
    return None
