"""The Python analyzer: one file's facts through the standard library's ``ast``.

Classes (``Protocol`` subclasses and ABCs whose methods are all abstract count as interfaces, ``Enum``
subclasses as enums; nested classes are ``Outer.Inner``; classes and functions under a module-level
``if``/``try``/``with`` are the module's), module functions and methods with their signatures, imports, per
callable the SQL in its string literals (including SQL held in module or class constants it uses), and the
file's value flows (``flow.py``: its calls, resolved across files by ``calls.py``), which also declare the
functions, lambdas and classes nested in callables.
"""

from __future__ import annotations

import ast

from igg.codemap.columns import Columns
from igg.codemap.facts import CallableDecl, FileFacts, ImportRef, SqlRef, TypeDecl
from igg.codemap.python.flow import FlowBuilder
from igg.codemap.python.http import hinted, http_facts
from igg.codemap.python.names import dotted, type_name
from igg.codemap.python.scan import ImportStatement, import_statements
from igg.codemap.python.unparse import parameters
from igg.codemap.routes import is_test
from igg.codemap.sql import tables_at

_ENUM_BASES = {"Enum", "IntEnum", "StrEnum", "Flag", "IntFlag"}
_INTERFACE_BASES = {"Protocol"}
_ABC_BASES = {"ABC"}


def module_name(path: str) -> str:
    """The module name of one relative path on its own (``pymodules.names_for_paths`` names files
    together, from their packages): ``app/auth/__init__.py`` -> ``app.auth``."""
    from igg.codemap.python.modules import names_for_paths

    return names_for_paths([path]).get(path) or path.rpartition("/")[2].rsplit(".", 1)[0]


_SCALAR_FIELDS = frozenset(
    {
        "ctx",
        "op",
        "ops",
        "id",
        "attr",
        "name",
        "arg",
        "module",
        "level",
        "kind",
        "type_comment",
        "conversion",
        "is_async",
        "asname",
        "lineno",
        "col_offset",
    }
)
"""Fields that never hold a node worth visiting: names and numbers, and the operator and context singletons
(``Load``, ``Add``, ...), which no fact reads."""
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def walk_nodes(root: ast.AST) -> list[ast.AST]:
    """``root`` and every node below it in ``ast.walk``'s order (breadth first), less the operator and
    context singletons: the one walk a callable's facts need (``ast.walk`` costs about twice as much)."""
    out = [root]
    append = out.append
    fields_of = _CHILD_FIELDS
    node_type = ast.AST
    i = 0
    while i < len(out):
        node = out[i]
        i += 1
        names = fields_of.get(node.__class__)
        if names is None:
            names = fields_of[node.__class__] = tuple(f for f in node._fields if f not in _SCALAR_FIELDS)
        for name in names:
            value = getattr(node, name, None)
            if value is None:
                continue
            if value.__class__ is list:
                for item in value:
                    if isinstance(item, node_type):
                        append(item)
            elif isinstance(value, node_type):
                append(value)
    return out


def _statements(body: list[ast.stmt]) -> list[ast.stmt]:
    """Every statement of a body, nested ones too (imports are statements: no need to walk expressions)."""
    out: list[ast.stmt] = []
    stack = list(reversed(body))
    while stack:
        node = stack.pop()
        out.append(node)
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            children = getattr(node, name, None)
            if children:
                stack.extend(reversed(children))
    return out


_TYPE_CHECKING = frozenset(
    {"TYPE_CHECKING", "typing.TYPE_CHECKING", "typing_extensions.TYPE_CHECKING", "t.TYPE_CHECKING"}
)


def _type_checking_only(statements: list[ast.stmt]) -> set[int]:
    """Ids of the statements that run only under a type checker: those nested in the body of an
    ``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``), as grimp reads them; its ``else`` runs.
    ``statements``: every statement of the module (``_statements``)."""
    out: set[int] = set()
    for node in statements:
        if isinstance(node, ast.If) and dotted(node.test) in _TYPE_CHECKING:
            out.update(id(inner) for inner in _statements(node.body))
    return out


_MODULE_BLOCKS = (ast.If, ast.Try, ast.TryStar, ast.With)


def _module_level(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements a module runs at its top level: its body and the bodies of its ``if``/``else``,
    ``try``/``except``/``else``/``finally`` and ``with`` blocks (classes and functions defined there are the
    module's), in source order."""
    out: list[ast.stmt] = []
    for node in body:
        if isinstance(node, _MODULE_BLOCKS):
            for name in ("body", "handlers", "orelse", "finalbody"):
                for child in getattr(node, name, ()):
                    out.extend(
                        _module_level(child.body)
                        if isinstance(child, ast.ExceptHandler)
                        else _module_level([child])
                    )
        else:
            out.append(node)
    return out


_OVERLOAD = ("overload", "typing.overload", "typing_extensions.overload", "t.overload")


def _functions(body: list[ast.stmt]) -> list[list[ast.FunctionDef | ast.AsyncFunctionDef]]:
    """The functions of a body grouped by name, in order: ``@overload`` stubs are dropped when there is
    an implementation (the first stub stands for them in a stub file); later definitions of one name
    (a property's setter, a redefinition) join the first."""
    groups: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}
    overloads: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if any(dotted(d) in _OVERLOAD for d in node.decorator_list):
                overloads.setdefault(node.name, node)
            else:
                groups.setdefault(node.name, []).append(node)
    for name, stub in overloads.items():
        groups.setdefault(name, [stub])
    return sorted(groups.values(), key=lambda g: g[0].lineno)


def _strings(node: ast.AST) -> str | None:
    """The text of a string literal, or of an f-string with each hole as ``{}`` (never taken for a table)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(
            v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "{}" for v in node.values
        )
    return None


def _not_queries(nodes: list[ast.AST]) -> set[int]:
    """Ids of the string literals among ``nodes`` that cannot be queries: docstrings and every other string
    standing alone as a statement, and the literal parts of f-strings (the f-string is read whole)."""
    skip: set[int] = set()
    for node in nodes:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant | ast.JoinedStr):
            skip.add(id(node.value))
        elif isinstance(node, ast.JoinedStr):
            skip.update(id(v) for v in node.values)
    return skip


def _sql_of(node: ast.AST, columns: Columns) -> list[SqlRef]:
    text = _strings(node)
    if not text:
        return []
    line = getattr(node, "lineno", 0)
    return tables_at(text, lambda: (line, columns(line, getattr(node, "col_offset", 0)) if line else 0))


def absolute(base: str, module: str | None, level: int) -> str | None:
    """The absolute name of ``from <level dots><module> import`` in a module whose package is ``base``; None
    for a relative import above the top-level package (Python refuses it too)."""
    if level == 0:
        return module or ""
    parts = base.split(".") if base else []
    if level - 1 > len(parts) or (level - 1 == len(parts) and not module):
        return None
    if level > 1:
        parts = parts[: len(parts) - (level - 1)]
    return ".".join([*parts, module] if module else parts)


def import_refs(statement: ImportStatement, base: str) -> list[ImportRef]:
    """The names one import statement imports (``ImportRef``), in a module whose package is ``base``."""
    line, column, type_only = statement.line, statement.column + 1, statement.type_only
    if statement.level is None:
        # import a.b.c: the dotted name a.b.c refers to that module (name lookup matches prefixes)
        return [
            ImportRef(
                target=name,
                alias=alias or name,
                module_only=True,
                line=line,
                column=column,
                type_only=type_only,
            )
            for name, alias in statement.names
        ]
    source = absolute(base, statement.module, statement.level)
    if source is None:
        return []
    out: list[ImportRef] = []
    for name, alias in statement.names:
        if name == "*":
            out.append(
                ImportRef(
                    target=source, wildcard=True, source=source, line=line, column=column, type_only=type_only
                )
            )
        else:
            out.append(
                ImportRef(
                    target=f"{source}.{name}" if source else name,
                    alias=alias or name,
                    source=source,
                    line=line,
                    column=column,
                    type_only=type_only,
                )
            )
    return out


def _facts(path: str, module: str | None) -> tuple[FileFacts, str]:
    """Empty facts of a Python file and its package's name (what its relative imports start from)."""
    name = module or module_name(path)
    is_package = path.rpartition("/")[2] in ("__init__.py", "__init__.pyi")
    return FileFacts(path=path, language="python", module=name, package=name), (
        name if is_package else name.rpartition(".")[0]
    )


def scanned_imports(path: str, text: str, module: str | None = None) -> FileFacts | None:
    """The module, imports and line count of a Python file read from its text (``scan.import_statements``,
    the same as ``analyze_python(..., imports_only=True)`` gives of a file that parses), or None when the
    text is not one the scan reads exactly."""
    statements = import_statements(text)
    if statements is None:
        return None
    facts, base = _facts(path, module)
    for statement in statements:
        facts.imports.extend(import_refs(statement, base))
    facts.lines = text.count("\n") + 1
    return facts


class _Analyzer:
    def __init__(self, path: str, tree: ast.Module, columns: Columns, module: str | None = None) -> None:
        self.facts, self.base = _facts(path, module)
        self.module = self.facts.module
        self.constants: dict[str, list[SqlRef]] = {}
        self.tree = tree
        self.columns = columns
        self._decl_of: dict[int, int] = {}
        """Each declared function's node id -> its declaration's index in ``callables`` (for
        ``FlowBuilder``)."""
        self._walked: dict[int, list[ast.AST]] = {}
        """Each function's nodes, walked once."""

    def column(self, node: ast.expr | ast.stmt) -> int:
        """The 1-based character column where ``node`` starts (``ast`` counts bytes)."""
        return self.columns(node.lineno, node.col_offset)

    def _nodes(self, fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.AST]:
        nodes = self._walked.get(id(fn))
        if nodes is None:
            nodes = self._walked[id(fn)] = walk_nodes(fn)
        return nodes

    def run(self) -> FileFacts:
        body = self.tree.body
        self._constants(body, prefix="")
        self.imports()
        top = _module_level(body)
        for node in top:
            if isinstance(node, ast.ClassDef):
                self._class(node, outer=None)
        for group in _functions(top):
            self._callable(group, owner=None)
        facts = self.facts
        facts.flow = FlowBuilder(
            decl_of=self._decl_of,
            callables=facts.callables,
            types=facts.types,
            module=self.module,
            column=self.column,
            absolute=self._absolute,
        ).build(self.tree)
        return facts

    def imports(self) -> FileFacts:
        """The facts with every import of the file (wherever it stands), in source order."""
        statements = _statements(self.tree.body)
        typing_only = _type_checking_only(statements)
        nodes = [n for n in statements if isinstance(n, (ast.Import, ast.ImportFrom))]
        nodes.sort(key=lambda n: (n.lineno, n.col_offset))
        for node in nodes:
            names = [(a.name, a.asname) for a in node.names]
            column, typed = self.column(node) - 1, id(node) in typing_only
            if isinstance(node, ast.Import):
                statement = ImportStatement(node.lineno, column, None, "", names, typed)
            else:
                statement = ImportStatement(node.lineno, column, node.level, node.module or "", names, typed)
            self.facts.imports.extend(import_refs(statement, self.base))
        return self.facts

    def _absolute(self, module: str | None, level: int) -> str | None:
        return absolute(self.base, module, level)

    def _constants(self, body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets, value = node.targets, node.value
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                targets, value = [node.target], node.value
            for target in targets:
                if isinstance(target, ast.Name):
                    sql = _sql_of(value, self.columns)
                    if sql:
                        self.constants[prefix + target.id] = sql

    def _class(self, node: ast.ClassDef, outer: TypeDecl | None) -> None:
        name = f"{outer.name}.{node.name}" if outer else node.name
        bases = [b for b in (dotted(b) for b in node.bases) if b]
        short = {b.rpartition(".")[2] for b in bases}
        methods = [n for n in node.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
        kind = "class"
        if short & _ENUM_BASES:
            kind = "enum"
        elif short & _INTERFACE_BASES:
            kind = "interface"
        elif (
            (short & _ABC_BASES or any(k.arg == "metaclass" for k in node.keywords))
            and methods
            and all(
                any(dotted(d) in ("abstractmethod", "abc.abstractmethod") for d in m.decorator_list)
                for m in methods
            )
        ):
            kind = "interface"
        bases = [
            b
            for b in bases
            if b.rpartition(".")[2] not in _ENUM_BASES | _INTERFACE_BASES | _ABC_BASES
            and b not in ("object", "Generic")
            and not b.startswith("typing.")
        ]
        decl = TypeDecl(
            kind=kind,  # type: ignore[arg-type]
            name=name,
            package=self.module,
            line=node.lineno,
            column=self.column(node),
            extends=bases,
            outer=outer.qualified if outer else None,
        )
        self.facts.types.append(decl)
        self._constants(node.body, prefix=f"{node.name}.")
        for child in node.body:
            if isinstance(child, ast.ClassDef):
                self._class(child, outer=decl)
        for group in _functions(node.body):
            self._callable(group, owner=decl)

    def _callable(self, group: list[ast.FunctionDef | ast.AsyncFunctionDef], owner: TypeDecl | None) -> None:
        node = group[0]
        args = node.args
        every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
        static = any(dotted(d) in ("staticmethod", "classmethod") for d in node.decorator_list)
        decl = CallableDecl(
            kind="method" if owner else "function",
            name=node.name,
            owner=owner.qualified if owner else None,
            signature=f"{node.name}({parameters(args)})",
            line=node.lineno,
            column=self.column(node),
            static=static,
            params=tuple(type_name(a.annotation) for a in every),
        )
        self.facts.callables.append(decl)
        self_names = (
            {every[0].arg}
            if owner and every and not any(dotted(d) == "staticmethod" for d in node.decorator_list)
            else set()
        )
        for part in group:
            self._decl_of[id(part)] = len(self.facts.callables) - 1
            self._body(part, decl, owner, self_names)

    def _body(
        self,
        node: ast.FunctionDef | ast.AsyncFunctionDef,
        decl: CallableDecl,
        owner: TypeDecl | None,
        self_names: set[str],
    ) -> None:
        """The SQL of a callable's body (its calls are the file's flow: ``flow.py``, resolved by
        ``calls.py``)."""
        every_node = self._nodes(node)
        not_queries = _not_queries(every_node)
        constants = self.constants
        for sub in every_node:
            cls = sub.__class__
            if cls is ast.Constant or cls is ast.JoinedStr:
                if id(sub) not in not_queries:
                    decl.sql.extend(_sql_of(sub, self.columns))
            elif constants and (cls is ast.Name or cls is ast.Attribute) and sub.ctx.__class__ is ast.Load:  # type: ignore[attr-defined]
                key = dotted(sub)
                if key is not None:
                    if owner and key.partition(".")[0] in self_names:
                        key = owner.name.rpartition(".")[2] + "." + key.partition(".")[2]
                    where: ast.expr = sub  # type: ignore[assignment]
                    for ref in constants.get(key, ()):
                        decl.sql.append(
                            SqlRef(
                                table=ref.table,
                                op=ref.op,
                                statement=ref.statement,
                                line=where.lineno,
                                column=self.column(where),
                            )
                        )


def analyze_python(
    path: str, text: str, module: str | None = None, *, imports_only: bool = False
) -> FileFacts:
    """The facts of one Python file (``module``: its dotted name, default from its path); a file that does
    not parse yields its imports alone, read from its text (``scanned_imports``), with ``error`` set.
    ``imports_only``: its module, imports and line count alone (what linking its imports reads: Python
    resolves them by module names, not declarations), read from its text where the scan reads it exactly."""
    if imports_only:
        scanned = scanned_imports(path, text, module)
        if scanned is not None:
            return scanned
    try:
        tree = ast.parse(text, filename=path)
    except (SyntaxError, ValueError) as exc:
        # what its lines say about the dependency map is kept: the imports an imports-only read gives it too
        # (which, reading imports alone, has found the scan declines the text)
        facts = (None if imports_only else scanned_imports(path, text, module)) or _facts(path, module)[0]
        facts.error = f"syntax error: {getattr(exc, 'msg', exc)}"
        facts.error_line = getattr(exc, "lineno", None)
        return facts
    columns = Columns(text)
    analyzer = _Analyzer(path, tree, columns, module)
    facts = analyzer.imports() if imports_only else analyzer.run()
    facts.lines = text.count("\n") + 1
    if not imports_only and hinted(text) and not is_test(path):
        facts.http = http_facts(tree, facts, columns, text)
    return facts
