"""The Python analyzer: one file's facts through the standard library's ``ast``.

Classes (``Protocol`` subclasses and ABCs whose methods are all abstract count as interfaces, ``Enum``
subclasses as enums; nested classes are ``Outer.Inner``), module functions and methods with their
signatures, imports, and per callable: calls with what is knowable about the receiver (``self``,
``super()``, a class or module name, an attribute or local whose type is annotated or constructed), class
instantiations, and SQL in string literals, including SQL held in module or class constants the callable
uses.
"""

from __future__ import annotations

import ast

from igg.agents.code.facts import CallableDecl, CallRef, FileFacts, ImportRef, SqlRef, TypeDecl
from igg.agents.code.sql import tables_in

_ENUM_BASES = {"Enum", "IntEnum", "StrEnum", "Flag", "IntFlag"}
_INTERFACE_BASES = {"Protocol"}
_ABC_BASES = {"ABC"}


def module_name(path: str) -> str:
    """Dotted module name of a relative path: ``src/app/auth/service.py`` -> ``app.auth.service``."""
    parts = path[:-3].split("/") if path.endswith(".py") else path.split("/")
    if len(parts) > 1 and parts[0] in ("src", "lib"):
        parts = parts[1:]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(p for p in parts if p) or "__init__"


def dotted(node: ast.AST) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    names = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        names.append(node.id)
        return ".".join(reversed(names))
    return None


def _type_name(annotation: ast.AST | None) -> str | None:
    """The class an annotation names (``Optional[T]``/``T | None``/``"T"`` -> ``T``), else None."""
    if annotation is None:
        return None
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            annotation = ast.parse(annotation.value, mode="eval").body
        except SyntaxError:
            return None
    if isinstance(annotation, ast.Subscript) and dotted(annotation.value) in ("Optional", "typing.Optional"):
        return _type_name(annotation.slice)
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        left, right = annotation.left, annotation.right
        if isinstance(right, ast.Constant) and right.value is None:
            return _type_name(left)
        if isinstance(left, ast.Constant) and left.value is None:
            return _type_name(right)
        return None
    return dotted(annotation)


def _strings(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "?"
                       for v in node.values)
    return None


def _sql_of(node: ast.AST) -> list[SqlRef]:
    text = _strings(node)
    return tables_in(text, getattr(node, "lineno", 0)) if text else []


class _Analyzer:
    def __init__(self, path: str, tree: ast.Module, module: str | None = None) -> None:
        self.module = module or module_name(path)
        is_package = path.endswith("__init__.py")
        self.facts = FileFacts(path=path, language="python", module=self.module, package=self.module)
        self.base = self.module if is_package else self.module.rpartition(".")[0]
        self.constants: dict[str, list[SqlRef]] = {}
        self.tree = tree

    def run(self) -> FileFacts:
        body = self.tree.body
        self._constants(body, prefix="")
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    self.facts.imports.append(ImportRef(target=a.name, alias=a.asname or a.name, module_only=True))
            elif isinstance(node, ast.ImportFrom):
                source = self._absolute(node.module, node.level)
                for a in node.names:
                    if a.name == "*":
                        self.facts.imports.append(ImportRef(target=source, wildcard=True))
                    else:
                        target = f"{source}.{a.name}" if source else a.name
                        self.facts.imports.append(ImportRef(target=target, alias=a.asname or a.name))
        for node in body:
            if isinstance(node, ast.ClassDef):
                self._class(node, outer=None)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                self._callable(node, owner=None, fields={})
        return self.facts

    def _absolute(self, module: str | None, level: int) -> str:
        if level == 0:
            return module or ""
        parts = self.base.split(".") if self.base else []
        if level > 1:
            parts = parts[: len(parts) - (level - 1)]
        return ".".join([*parts, module] if module else parts)

    def _constants(self, body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                targets, value = node.targets, node.value
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                targets, value = [node.target], node.value
            for target in targets:
                if isinstance(target, ast.Name):
                    sql = _sql_of(value)
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
        elif (short & _ABC_BASES or any(k.arg == "metaclass" for k in node.keywords)) and methods and all(
                any(dotted(d) in ("abstractmethod", "abc.abstractmethod") for d in m.decorator_list)
                for m in methods):
            kind = "interface"
        bases = [b for b in bases if b.rpartition(".")[2] not in _ENUM_BASES | _INTERFACE_BASES | _ABC_BASES
                 and b not in ("object", "Generic") and not b.startswith("typing.")]
        decl = TypeDecl(kind=kind, name=name, package=self.module, line=node.lineno, extends=bases,  # type: ignore[arg-type]
                        outer=outer.qualified if outer else None)
        self.facts.types.append(decl)
        self._constants(node.body, prefix=f"{node.name}.")
        decl.fields.update(self._fields(node))
        for child in node.body:
            if isinstance(child, ast.ClassDef):
                self._class(child, outer=decl)
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                self._callable(child, owner=decl, fields=decl.fields)

    def _fields(self, node: ast.ClassDef) -> dict[str, str]:
        """Attribute types: class annotations, ``self.x: T``, ``self.x = T(...)``, ``self.x = param: T``."""
        fields: dict[str, str] = {}
        for child in node.body:
            if isinstance(child, ast.AnnAssign) and isinstance(child.target, ast.Name):
                if (t := _type_name(child.annotation)) is not None:
                    fields[child.target.id] = t
        for fn in node.body:
            if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            params = {a.arg: _type_name(a.annotation) for a in (*fn.args.posonlyargs, *fn.args.args,
                                                                  *fn.args.kwonlyargs)}
            for stmt in ast.walk(fn):
                target = value = annotation = None
                if isinstance(stmt, ast.AnnAssign):
                    target, value, annotation = stmt.target, stmt.value, stmt.annotation
                elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                    target, value = stmt.targets[0], stmt.value
                if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                        and target.value.id == "self"):
                    continue
                t = _type_name(annotation) or self._value_type(value, params)
                if t is not None:
                    fields.setdefault(target.attr, t)
        return fields

    @staticmethod
    def _value_type(value: ast.AST | None, known: dict[str, str | None]) -> str | None:
        if isinstance(value, ast.Call):
            name = dotted(value.func)
            if name and name.rpartition(".")[2][:1].isupper():
                return name
        if isinstance(value, ast.Name):
            return known.get(value.id)
        return None

    def _callable(self, node: ast.FunctionDef | ast.AsyncFunctionDef, owner: TypeDecl | None,
                  fields: dict[str, str]) -> None:
        args = node.args
        every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
        static = any(dotted(d) in ("staticmethod", "classmethod") for d in node.decorator_list)
        decl = CallableDecl(
            kind="method" if owner else "function", name=node.name, owner=owner.qualified if owner else None,
            signature=f"{node.name}({ast.unparse(args)})", line=node.lineno, static=static,
            params=tuple(_type_name(a.annotation) for a in every))
        self.facts.callables.append(decl)
        local: dict[str, str | None] = {a.arg: _type_name(a.annotation) for a in every}
        self_names = {every[0].arg} if owner and every and not any(
            dotted(d) == "staticmethod" for d in node.decorator_list) else set()
        for stmt in ast.walk(node):
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                local[stmt.target.id] = _type_name(stmt.annotation)
            elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                local.setdefault(stmt.targets[0].id, self._value_type(stmt.value, local))
        for sub in ast.walk(node):
            if isinstance(sub, ast.Call):
                self._call(decl, sub, local, self_names, fields)
            elif isinstance(sub, ast.Constant | ast.JoinedStr):
                decl.sql.extend(_sql_of(sub))
            elif isinstance(sub, ast.Name | ast.Attribute) and isinstance(getattr(sub, "ctx", None), ast.Load):
                key = dotted(sub)
                if key is not None:
                    if owner and key.partition(".")[0] in self_names:
                        key = owner.name.rpartition(".")[2] + "." + key.partition(".")[2]
                    for ref in self.constants.get(key, ()):
                        decl.sql.append(SqlRef(table=ref.table, op=ref.op, statement=ref.statement,
                                               line=getattr(sub, "lineno", 0)))

    def _call(self, decl: CallableDecl, call: ast.Call, local: dict[str, str | None], self_names: set[str],
              fields: dict[str, str]) -> None:
        line = call.lineno
        func = call.func
        if isinstance(func, ast.Name):
            if func.id == "super":
                return
            decl.calls.append(CallRef(name=func.id, receiver="none", line=line))
            return
        if not isinstance(func, ast.Attribute):
            return
        value = func.value
        if isinstance(value, ast.Call) and dotted(value.func) == "super":
            decl.calls.append(CallRef(name=func.attr, receiver="super", line=line))
            return
        if isinstance(value, ast.Name) and value.id in self_names:
            decl.calls.append(CallRef(name=func.attr, receiver="this", line=line))
            return
        if (isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name)
                and value.value.id in self_names):
            t = fields.get(value.attr)
            decl.calls.append(CallRef(name=func.attr, receiver="var" if t else "unknown", receiver_type=t,
                                      line=line))
            return
        if isinstance(value, ast.Name) and value.id in local:
            t = local[value.id]
            decl.calls.append(CallRef(name=func.attr, receiver="var" if t else "unknown", receiver_type=t,
                                      line=line))
            return
        name = dotted(value)
        if name is not None:
            decl.calls.append(CallRef(name=func.attr, receiver="type", receiver_type=name, line=line))
        else:
            decl.calls.append(CallRef(name=func.attr, receiver="unknown", line=line))


def analyze_python(path: str, text: str, module: str | None = None) -> FileFacts:
    """The facts of one Python file (``module``: its dotted name, default from its path); a file that does
    not parse yields empty facts with ``error`` set."""
    try:
        tree = ast.parse(text, filename=path)
    except (SyntaxError, ValueError) as exc:
        name = module or module_name(path)
        facts = FileFacts(path=path, language="python", module=name, package=name)
        facts.error = f"syntax error: {getattr(exc, 'msg', exc)} (line {getattr(exc, 'lineno', '?')})"
        return facts
    facts = _Analyzer(path, tree, module).run()
    facts.lines = text.count("\n") + 1
    return facts
