"""The TypeScript/JavaScript analyzer: one file's facts through tree-sitter (the ``tree-sitter-typescript``
and ``tree-sitter-javascript`` wheels; ``.tsx`` with the TSX grammar, JavaScript files with JavaScript's).

A module is named by its path from the mapped root without its extension (``src/util/strings``; a ``.d.ts``
file is ``src/util/strings`` too, and merges into the implementation). Imports of every form are
``ImportRef``s whose ``source`` is the specifier as written: ES ``import`` (default, named, namespace,
type-only, side-effect), ``export ... from`` (``alias`` ``export:NAME`` for a re-exported name, ``wildcard``
for ``export *``), ``import x = require()``, and ``import()``/``require()`` calls with a literal anywhere
(also ``import('./x').T`` in a type). ``member`` is the imported name (``default``, ``*`` for a namespace).
``FileFacts.exports`` maps each exported name to its local binding (``export default class A``: ``default`` ->
``A``). Declarations: classes (abstract too), interfaces, enums, functions (also a top-level ``const f = () =>
...``), methods and constructors, inside ``namespace``s too (named ``NS.Inner``); class fields and constructor
parameter properties with their declared types. Calls are kept with what the source says of their receiver: a
bare name, ``this``/``super``, a dotted name (a namespace import, a class, a local or parameter of declared
type, ``this.field`` of declared type); ``new X()`` is an instantiation; SQL in string and template literals
of a callable gives its tables.
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from typing import Any

from igg.codemap.columns import Columns
from igg.codemap.facts import CallableDecl, FileFacts, TypeDecl
from igg.codemap.routes import is_test
from igg.codemap.syntax import first_error_line
from igg.codemap.typescript.bodies import captured
from igg.codemap.typescript.http import hinted, http_facts
from igg.codemap.typescript.modules import FUNCTIONS, Modules
from igg.codemap.typescript.nested import declare_nested
from igg.codemap.typescript.repair import repaired
from igg.codemap.typescript.syntax import dotted, text_of, type_name

TS_SUFFIXES = (".ts", ".tsx", ".mts", ".cts")
JS_SUFFIXES = (".js", ".jsx", ".mjs", ".cjs")
DECLARATION_SUFFIXES = (".d.ts", ".d.mts", ".d.cts")

_COMMON_QUERY = """
(call_expression function: (_) @callee) @call
(new_expression constructor: (_) @made) @new
(variable_declarator name: (identifier) @var) @decl
(string) @string
(template_string) @string
(class_declaration) @type
(function_declaration) @fn
(generator_function_declaration) @fn
"""
_TS_QUERY = (
    _COMMON_QUERY
    + """
(import_require_clause source: (string) @require_source)
(abstract_class_declaration) @type
(interface_declaration) @type
(enum_declaration) @type
"""
)


@cache
def grammar(kind: str) -> tuple[Any, Any]:
    """The parser and query of grammar ``kind`` (``typescript``, ``tsx`` or ``javascript``), made once a
    process."""
    import tree_sitter

    if kind == "javascript":
        import tree_sitter_javascript

        language = tree_sitter.Language(tree_sitter_javascript.language())
        return tree_sitter.Parser(language), tree_sitter.Query(language, _COMMON_QUERY)
    import tree_sitter_typescript

    raw = (
        tree_sitter_typescript.language_tsx()
        if kind == "tsx"
        else tree_sitter_typescript.language_typescript()
    )
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
            return path[: -len(suffix)]
    return path


def parse(path: str, text: str) -> Any:
    """The syntax tree of one file (a bare parse: what ``scripts/bench_map_code.py`` compares against)."""
    parser, _ = grammar(grammar_of(path))
    return parser.parse(text.encode("utf-8", "surrogatepass"))


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
                name = dotted(value) if value is not None else None
                if name:
                    extends.append(name)
            elif clause.type == "implements_clause":
                implements.extend(n for n in (type_name(t) for t in clause.named_children) if n)
            else:  # JavaScript's grammar: class_heritage holds the expression itself
                name = dotted(clause)
                if name:
                    extends.append(name)
    return extends, implements


class _Analyzer(Modules):
    def __init__(self, path: str, text: str, module: str | None) -> None:
        name = module or module_name(path)
        self.facts = FileFacts(
            path=path, language="typescript", module=name, package=name, lines=text.count("\n") + 1
        )
        self.spans: list[tuple[int, int, CallableDecl, TypeDecl | None, dict[str, str]]] = []
        """(start byte, end byte, callable, its type, its typed names) of each callable with a body."""
        self.exports: dict[str, str] = {}
        self.declared_types: set[int] = set()
        self.at = Columns(text).at

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
        self.statements(body, f"{prefix}{dotted(name) or text_of(name)}.")

    def type_(
        self,
        node: Any,
        kind: Any,
        prefix: str,
        exported: bool,
        extends: list[str] | None = None,
        implements: list[str] | None = None,
        named: str | None = None,
    ) -> TypeDecl | None:
        name = node.child_by_field_name("name")
        written = (
            named
            if named is not None
            else f"{prefix}{text_of(name)}"
            if name is not None
            else "default"
            if exported
            else None
        )
        if written is None:
            return None
        decl = TypeDecl(
            kind=kind,
            name=written,
            package=self.facts.module,
            line=node.start_point[0] + 1,
            column=self.at(node)[1],
            extends=extends or [],
            implements=implements or [],
        )
        self.facts.types.append(decl)
        self.declared_types.add(node.start_byte)
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
                typed = type_name(member.child_by_field_name("type"))
                value = member.child_by_field_name("value")
                if typed is None and value is not None and value.type == "new_expression":
                    typed = (
                        dotted(value.child_by_field_name("constructor"))
                        if value.child_by_field_name("constructor") is not None
                        else None
                    )
                if name is not None and typed:
                    decl.fields[text_of(name)] = typed
        for member in body.named_children:
            if member.type in ("method_definition", "abstract_method_signature", "method_signature"):
                self.method(member, decl)

    def interface(self, node: Any, prefix: str, exported: bool) -> None:
        extends: list[str] = []
        for part in node.named_children:
            if part.type in ("extends_type_clause", "extends_clause"):
                extends.extend(n for n in (type_name(t) for t in part.named_children) if n)
        decl = self.type_(node, "interface", prefix, exported, extends)
        body = node.child_by_field_name("body")
        if decl is None or body is None:
            return
        for member in body.named_children:
            if member.type == "method_signature":
                self.method(member, decl)
            elif member.type == "property_signature":
                name = member.child_by_field_name("name")
                typed = type_name(member.child_by_field_name("type"))
                if name is not None and typed:
                    decl.fields[text_of(name)] = typed

    def _params(
        self, node: Any, owner: TypeDecl | None
    ) -> tuple[list[str], list[str | None], dict[str, str]]:
        """(parameters as written, their declared types, name -> declared type, '' where none is declared)."""
        written: list[str] = []
        types: list[str | None] = []
        typed: dict[str, str] = {}
        params = node.child_by_field_name("parameters")
        for p in params.named_children if params is not None else ():
            pattern = p.child_by_field_name("pattern") or (p if p.type == "identifier" else None)
            name = text_of(pattern) if pattern is not None else text_of(p)
            kind = type_name(p.child_by_field_name("type"))
            written.append(name if kind is None else f"{name}: {kind}")
            types.append(kind)
            if pattern is not None and pattern.type == "identifier":
                typed[name] = kind or ""
                if (
                    kind
                    and owner is not None
                    and any(c.type in ("accessibility_modifier", "readonly") for c in p.children)
                ):
                    owner.fields[name] = kind  # a parameter property: a field too
        return written, types, typed

    def method(self, node: Any, owner: TypeDecl) -> None:
        name_node = node.child_by_field_name("name")
        if name_node is None:
            return
        name = text_of(name_node)
        constructor = name == "constructor"
        written, types, typed = self._params(node, owner if constructor else None)
        static = any(c.type == "static" for c in node.children)
        body = node.child_by_field_name("body")
        decl = CallableDecl(
            kind="constructor" if constructor else "method",
            name=name,
            signature=f"{name}({', '.join(written)})",
            owner=f"{owner.package}.{owner.name}",
            line=node.start_point[0] + 1,
            column=self.at(node)[1],
            params=tuple(types),
            static=static,
            returns=type_name(node.child_by_field_name("return_type")),
            abstract=body is None,
        )
        self.facts.callables.append(decl)
        if body is not None:
            self.spans.append((node.start_byte, node.end_byte, decl, owner, typed))

    def function(
        self, node: Any, prefix: str, exported: bool, name: str | None = None, span: Any = None
    ) -> None:
        if name is None:
            name_node = node.child_by_field_name("name")
            name = (
                f"{prefix}{text_of(name_node)}"
                if name_node is not None
                else ("default" if exported else None)
            )
        if name is None:
            return
        written, types, typed = self._params(node, None)
        body = node.child_by_field_name("body")
        decl = CallableDecl(
            kind="function",
            name=name,
            signature=f"{name}({', '.join(written)})",
            owner=None,
            line=node.start_point[0] + 1,
            column=self.at(node)[1],
            params=tuple(types),
            returns=type_name(node.child_by_field_name("return_type")),
        )
        self.facts.callables.append(decl)
        if body is not None:
            outer = span if span is not None else node
            self.spans.append((outer.start_byte, outer.end_byte, decl, None, typed))

    def variable(self, d: Any, prefix: str) -> bool:
        """``const f = () => ...`` (a function ``prefix + f``) or ``const C = class {...}`` (a class); False
        for any other declarator."""
        name, value = d.child_by_field_name("name"), d.child_by_field_name("value")
        if name is None or value is None or name.type != "identifier":
            return False
        if value.type in FUNCTIONS:
            self.function(value, prefix, False, name=f"{prefix}{text_of(name)}", span=d)
        elif value.type == "class":  # const Foo = class {...}: the class is Foo
            self.class_(value, prefix, False, named=f"{prefix}{text_of(name)}")
        elif value.type == "object" and not prefix:
            self.object_literal(value, text_of(name))
        else:
            return False
        return True

    def object_literal(self, node: Any, name: str) -> None:
        """A module-level object literal used as a namespace (``const api = {get() {...}, post: () => ...,
        put, del: remove}``, ``export default {...}``, named ``default``): its methods and functions are
        functions ``api.get``, ``api.post``; a member naming a function of the module is an alias
        (``FileFacts.exports`` ``api.put`` -> ``put``, through which ``api.put()`` and ``utils.put()`` of an
        importer resolve)."""
        for part in node.named_children:
            if part.type == "method_definition":
                key = part.child_by_field_name("name")
                if key is not None and key.type == "property_identifier":
                    self.function(part, "", False, name=f"{name}.{text_of(key)}")
            elif part.type == "shorthand_property_identifier":
                self.exports[f"{name}.{text_of(part)}"] = text_of(part)
            elif part.type == "pair":
                key, value = part.child_by_field_name("key"), part.child_by_field_name("value")
                if key is None or value is None or key.type != "property_identifier":
                    continue
                if value.type in FUNCTIONS:
                    self.function(value, "", False, name=f"{name}.{text_of(key)}", span=part)
                elif value.type == "identifier":
                    self.exports[f"{name}.{text_of(key)}"] = text_of(value)

    def variables(self, node: Any, prefix: str, exported: bool) -> None:
        for d in node.named_children:
            if d.type == "variable_declarator":
                self.variable(d, prefix)

    # ---- bodies --------------------------------------------------------------------------------------


def analyze_typescript(path: str, text: str, module: str | None = None) -> FileFacts:
    """The facts of one TypeScript or JavaScript file (a syntax error keeps what tree-sitter recovered)."""
    parser, query = grammar(grammar_of(path))
    source = text.encode("utf-8", "surrogatepass")
    source, tree, type_only = repaired(source, parser.parse(source), parser.parse)
    analyzer = _Analyzer(path, text, module)
    analyzer.statements(tree.root_node, "")
    captures = captured(tree.root_node, query)
    declare_nested(analyzer, captures)
    analyzer.bodies(captures)
    facts = analyzer.facts
    facts.exports = analyzer.exports
    if type_only:  # export type * from './x', read as export * from './x'
        facts.imports = [
            replace(i, type_only=True) if i.line in type_only and i.member == "*" else i
            for i in facts.imports
        ]
    if hinted(text) and not is_test(path):
        facts.http = http_facts(tree.root_node, facts, Columns(text), analyzer.call_nodes, text)
    if tree.root_node.has_error:
        line = first_error_line(tree.root_node)
        facts.error, facts.error_line = "syntax error (tree-sitter recovered; facts may be partial)", line
    return facts
