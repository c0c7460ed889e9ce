"""One Python file's value flows, read from its ``ast``: what ``calls.py`` resolves calls with, across files.

The file is cut into scopes as Python runs it: the module, each class body, each function (nested ones too)
and each lambda. A scope lists the names it binds (its locals, as Python decides them: any binding in the
scope, less ``global``/``nonlocal``) and, in source order, its operations:

- ``("=", target, expr)``: a binding (assignment, ``def``, ``class``, import, ``for`` target, parameter
  default or annotation); ``("=", target, expr, "name@n")`` binds that version of the name too (``bind``);
- ``("C", site, callee, args, kwargs, line, column)``: a call (``site``: its number in the file; an argument
  ``STAR`` stands for ``*args``, after which positions are unknown);
- ``("R", expr)``: a ``return`` (or a lambda's body).

Expressions are tuples: ``("n", name)`` a name, ``("a", expr, attr)`` an attribute, ``("c", site)`` what a
call returns, ``("d", scope)`` a function or lambda, ``("k", scope)`` a class, ``("u", exprs)`` any of several
(a set display's elements, ``or``/``and``, ``x if c else y``), ``("D", exprs, keys)`` a list, tuple or dict
display and ``("x", expr, index)`` a subscript (``containers.py``), ``("i", target, module_only)`` an import,
``("t", expr)`` the instances of the class an annotation names, ``("s", scope)`` ``super()`` in a method,
``("w", decorated, plain)`` a decorated ``def`` (what the decorators return, else the function itself), None:
nothing the code decides. A loop calls ``__iter__`` and ``__next__`` on what it iterates (``iterate``); a
``yield`` is a ``return`` of what it yields. Targets are ``("n", name)``, ``("a", expr, attr)`` and
``("p", scope, name)`` (a parameter of a function defined here, or its ``"<ret>"``). A tuple assigned to a
tuple of targets is matched element by element (``*rest`` takes the middle); any other value unpacked into
several targets binds them to nothing.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from igg.codemap.facts import CallableDecl, TypeDecl
from igg.codemap.python.containers import ADDERS, MUTATORS, OPEN, display, index, updated
from igg.codemap.python.names import dotted, type_name
from igg.codemap.python.unparse import parameters

Expr = Any
"""An expression tuple (see the module doc), or None."""
STAR = ("*",)
"""An argument list's ``*args``: the positions after it are not known."""
RETURN = "<ret>"
"""The pseudo-name a scope's returned values are bound to."""
_FUNCTION_KINDS = ("function", "method", "static", "classmethod", "lambda")


@dataclass(kw_only=True, slots=True)
class Scope:
    """A module, class body, function or lambda of one file, with its bindings and operations."""

    name: str
    """Its qualified name in the module (``""``: the module; ``C.m``, ``f.inner``, ``f.<lambda1>``)."""
    kind: str
    """module, class, function, method, static, classmethod or lambda."""
    parent: int = -1
    """The enclosing scope (its index in the file's list; -1: none)."""
    decl: int = -1
    """The index of its declaration in the file's ``callables`` (-1: a module, a class, an overload stub)."""
    params: tuple[str, ...] = ()
    """Positional parameters in order (``self`` first for a method)."""
    kwonly: tuple[str, ...] = ()
    locals: set[str] = field(default_factory=set)
    ops: list[tuple[Any, ...]] = field(default_factory=list)
    bases: tuple[Expr, ...] = ()
    """A class's bases, evaluated in the enclosing scope."""
    wildcards: list[str] = field(default_factory=list)
    """Modules a module imports ``*`` from."""

    @property
    def is_callable(self) -> bool:
        return self.kind in _FUNCTION_KINDS


_BUILTIN_TYPES = frozenset(
    {
        "str",
        "int",
        "float",
        "bool",
        "bytes",
        "object",
        "None",
        "Any",
        "dict",
        "list",
        "set",
        "tuple",
        "type",
        "complex",
        "bytearray",
        "frozenset",
        "typing.Any",
        "t.Any",
    }
)
"""Annotations that name no class of a tree (a tree that defines a class of such a name shadows a builtin)."""
_STATIC = {"staticmethod": "static", "classmethod": "classmethod"}


class FlowBuilder:
    """Builds the scopes of one parsed file (``build``); declares nested functions, lambdas and local classes
    in ``callables``/``types`` as it meets them (``decl_of``: the declarations the analyzer made, by node
    id)."""

    def __init__(
        self,
        *,
        decl_of: dict[int, int],
        callables: list[CallableDecl],
        types: list[TypeDecl],
        module: str,
        column: Callable[[ast.expr | ast.stmt], int],
        absolute: Callable[[str | None, int], str | None],
    ) -> None:
        self.decl_of = decl_of
        self.callables = callables
        self.types = types
        self.module = module
        self.column = column
        self.absolute = absolute
        self.scopes: list[Scope] = []
        self.sites = 0
        self.lambdas: dict[int, int] = {}
        self.local_types: dict[int, str] = {}
        self.depth = 0
        """How deep in blocks (``if``, loops, ``try``, ``with``, ``match``) of the current scope the walk
        is."""
        self.versions: dict[int, dict[str, int]] = {}
        """Scope -> name -> the binding a read there sees (see ``bind``); missing: every binding of the
        name."""
        self.shown: dict[str, Expr] = {}
        """A version of a name (``"d@3"``) bound to a display -> that display (``_updated``)."""
        self.count = 0
        self.outer: dict[int, set[str]] = {}
        """Scope -> the names it declares ``global`` or ``nonlocal``."""
        """Class scopes declared here (classes inside callables) -> their qualified names."""

    def build(self, tree: ast.Module) -> list[Scope]:
        self.scopes.append(Scope(name="", kind="module"))
        self.body(tree.body, 0)
        return self.scopes

    # ---- scopes --------------------------------------------------------------------------------------
    def child(self, name: str, kind: str, parent: int) -> int:
        outer = self.scopes[parent].name
        self.scopes.append(Scope(name=f"{outer}.{name}" if outer else name, kind=kind, parent=parent))
        return len(self.scopes) - 1

    def enclosing_callable(self, s: int) -> int:
        while s >= 0 and not self.scopes[s].is_callable:
            s = self.scopes[s].parent
        return s

    def function(self, node: ast.FunctionDef | ast.AsyncFunctionDef, s: int) -> None:
        scope = self.scopes[s]
        kind = "function"
        if scope.kind == "class":
            kind = next(
                (_STATIC[n] for n in (_name(d) for d in node.decorator_list) if n in _STATIC), "method"
            )
        c = self.child(node.name, kind, s)
        self.parameters(node.args, c, s)
        params = self.scopes[c].params
        if kind in ("method", "classmethod") and params:  # self: an instance of the class (cls: the class)
            self.scopes[s].ops.append(
                ("=", ("p", c, params[0]), ("t", ("k", s)) if kind == "method" else ("k", s))
            )
        if node.returns is not None:
            self.annotate(("p", c, RETURN), node.returns, s)
        decl = self.decl_of.get(id(node))
        if decl is None and self.enclosing_callable(s) >= 0:
            decl = self.declare(node, c, f"{node.name}({parameters(node.args)})", self.local_types.get(s))
        self.scopes[c].decl = -1 if decl is None else decl
        value: Expr = ("d", c)
        decorated = False
        for dec in reversed(node.decorator_list):
            if _name(dec) in _STATIC:
                continue
            value = ("c", self.call_site(dec, s, (value,), (), dec))
            decorated = True
        self.bind(("n", node.name), ("w", value, ("d", c)) if decorated else value, s)
        self.scope_body(node.body, c)

    def declare(self, node: ast.AST, c: int, signature: str, owner: str | None = None) -> int:
        """A declaration for a function or lambda nested in a callable (named by its scope), or for a method
        of a class declared in one (``owner``)."""
        name = node.name if owner else self.scopes[c].name  # type: ignore[attr-defined]
        self.callables.append(
            CallableDecl(
                kind="method" if owner else "function",
                name=name,
                owner=owner,
                signature=signature,
                line=node.lineno,  # type: ignore[attr-defined]
                column=self.column(node),  # type: ignore[arg-type]
            )
        )
        return len(self.callables) - 1

    def parameters(self, args: ast.arguments, c: int, s: int) -> None:
        positional = [*args.posonlyargs, *args.args]
        scope = self.scopes[c]
        scope.params = tuple(a.arg for a in positional)
        scope.kwonly = tuple(a.arg for a in args.kwonlyargs)
        every = [*positional, *args.kwonlyargs]
        scope.locals.update(a.arg for a in every)
        scope.locals.update(a.arg for a in (args.vararg, args.kwarg) if a is not None)
        defaults = [*([None] * (len(positional) - len(args.defaults))), *args.defaults, *args.kw_defaults]
        for a, default in zip(every, defaults, strict=True):
            if default is not None:
                self.bind(("p", c, a.arg), self.expr(default, s), s, local=False)
            if a.annotation is not None:
                self.annotate(("p", c, a.arg), a.annotation, s)

    def annotate(self, target: Expr, annotation: ast.expr, s: int) -> None:
        name = annotation.id if annotation.__class__ is ast.Name else type_name(annotation)
        if name and name not in _BUILTIN_TYPES:
            self.scopes[s].ops.append(("=", target, ("t", _dotted_expr(name))))

    def klass(self, node: ast.ClassDef, s: int) -> None:
        c = self.child(node.name, "class", s)
        self.scopes[c].bases = tuple(self.expr(b, s) for b in node.bases)
        if self.enclosing_callable(s) >= 0:
            decl = TypeDecl(
                kind="class",
                name=self.scopes[c].name,
                package=self.module,
                line=node.lineno,
                column=self.column(node),
                extends=[b for b in (dotted(b) for b in node.bases) if b],
            )
            self.types.append(decl)
            self.local_types[c] = decl.qualified
        value: Expr = ("k", c)
        for dec in reversed(node.decorator_list):
            value = ("w", ("c", self.call_site(dec, s, (value,), (), dec)), ("k", c))
        self.bind(("n", node.name), value, s)
        self.scope_body(node.body, c)

    # ---- statements ----------------------------------------------------------------------------------
    def body(self, stmts: list[ast.stmt], s: int) -> None:
        for node in stmts:
            self.statement(node, s)

    def scope_body(self, stmts: list[ast.stmt], c: int) -> None:
        """The statements of a new scope, from its top level."""
        depth, self.depth = self.depth, 0
        self.body(stmts, c)
        self.depth = depth

    def block(self, stmts: list[ast.stmt], s: int) -> None:
        """Statements that may run or not, or more than once."""
        self.depth += 1
        self.body(stmts, s)
        self.depth -= 1

    def statement(self, node: ast.stmt, s: int) -> None:  # noqa: C901, PLR0912
        cls = node.__class__
        if cls is ast.Expr:
            self.expr(node.value, s)  # type: ignore[attr-defined]
        elif cls is ast.Assign:
            value = self.expr(node.value, s)  # type: ignore[attr-defined]
            for target in node.targets:  # type: ignore[attr-defined]
                self.assign(target, node.value, value, s)  # type: ignore[attr-defined]
        elif cls is ast.AnnAssign:
            if node.value is not None:  # type: ignore[attr-defined]
                self.assign(node.target, node.value, self.expr(node.value, s), s)  # type: ignore[attr-defined]
            target = self.target(node.target, s)  # type: ignore[attr-defined]
            if target is not None:
                self.annotate(target, node.annotation, s)  # type: ignore[attr-defined]
        elif cls is ast.Return:
            if node.value is not None:  # type: ignore[attr-defined]
                self.scopes[s].ops.append(("R", self.expr(node.value, s)))  # type: ignore[attr-defined]
        elif cls is ast.FunctionDef or cls is ast.AsyncFunctionDef:
            self.function(node, s)  # type: ignore[arg-type]
        elif cls is ast.ClassDef:
            self.klass(node, s)  # type: ignore[arg-type]
        elif cls is ast.Import or cls is ast.ImportFrom:
            self.imports(node, s)  # type: ignore[arg-type]
        elif cls is ast.For or cls is ast.AsyncFor:
            iterated = self.iterate(node.iter, s)  # type: ignore[attr-defined]
            self.depth += 1
            self.assign(node.target, None, iterated, s)  # type: ignore[attr-defined]
            self.depth -= 1
            self.block(node.body, s)  # type: ignore[attr-defined]
            self.block(node.orelse, s)  # type: ignore[attr-defined]
        elif cls is ast.Raise:
            exc = node.exc  # type: ignore[attr-defined]
            if exc is not None and exc.__class__ is not ast.Call:
                self.call_site(exc, s, (), (), exc)  # raise C: instantiates C
            elif exc is not None:
                self.expr(exc, s)
        elif cls is ast.AugAssign:
            self.expr(node.value, s)  # type: ignore[attr-defined]
            self.assign(node.target, None, None, s)  # type: ignore[attr-defined]
        elif cls is ast.Global or cls is ast.Nonlocal:
            self.scopes[s].locals.difference_update(node.names)  # type: ignore[attr-defined]
            self.outer.setdefault(s, set()).update(node.names)  # type: ignore[attr-defined]
        else:
            self.compound(node, s)

    def compound(self, node: ast.stmt, s: int) -> None:
        """Any other statement: the expressions in it, the names it binds, the statements in it (a block)."""
        self.depth += 1
        self.parts(node, s)
        self.depth -= 1

    def parts(self, node: ast.stmt, s: int) -> None:
        for name in node._fields:
            value = getattr(node, name, None)
            items = value if isinstance(value, list) else [value]
            for item in items:
                if isinstance(item, ast.stmt):
                    self.statement(item, s)
                elif isinstance(item, ast.expr):
                    self.expr(item, s)
                elif isinstance(item, ast.withitem):
                    self.expr(item.context_expr, s)
                    if item.optional_vars is not None:
                        self.assign(item.optional_vars, None, None, s)
                elif isinstance(item, ast.ExceptHandler):
                    if item.type is not None:
                        self.expr(item.type, s)
                    if item.name:
                        self.scopes[s].locals.add(item.name)
                    self.body(item.body, s)
                elif isinstance(item, ast.match_case):
                    self.body(item.body, s)

    def imports(self, node: ast.Import | ast.ImportFrom, s: int) -> None:
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    self.bind(("n", a.asname), ("i", a.name, True), s)
                else:
                    top = a.name.partition(".")[0]
                    self.bind(("n", top), ("i", top, True), s)
            return
        source = self.absolute(node.module, node.level)
        if source is None:
            return
        for a in node.names:
            if a.name == "*":
                self.scopes[s].wildcards.append(source)
            else:
                self.bind(
                    ("n", a.asname or a.name), ("i", f"{source}.{a.name}" if source else a.name, False), s
                )

    # ---- bindings ------------------------------------------------------------------------------------
    def bind(self, target: Expr, value: Expr, s: int, local: bool = True) -> None:
        """Bind ``target`` to ``value``. A name bound at the top level of its scope (in no block) is also
        bound as that binding alone (``("v", "name@n")``), which the reads that follow in the scope see, up to
        the next binding of it (one in a block: every binding from then on): ``a = f; a = g; a()`` calls
        ``g``."""
        if local and target[0] == "n":
            name = target[1]
            if name in self.outer.get(s, ()):
                local = False
            else:
                self.scopes[s].locals.add(name)
                versions = self.versions.get(s)
                if versions is None:
                    versions = self.versions[s] = {}
                if self.depth:
                    versions.pop(name, None)
                else:
                    self.count += 1
                    versions[name] = self.count
                    if value is not None:
                        self.scopes[s].ops.append(("=", target, value, f"{name}@{self.count}"))
                        if value[0] == "D":
                            self.shown[f"{name}@{self.count}"] = value
                    return
        if value is not None:
            self.scopes[s].ops.append(("=", target, value))

    def target(self, node: ast.expr, s: int) -> Expr:
        cls = node.__class__
        if cls is ast.Name:
            return ("n", node.id)  # type: ignore[attr-defined]
        if cls is ast.Attribute:
            return ("a", self.expr(node.value, s), node.attr)  # type: ignore[attr-defined]
        if cls is ast.Subscript:
            self.expr(node.slice, s)  # type: ignore[attr-defined]
            return self.target(node.value, s)  # type: ignore[attr-defined]  # a container holds what is put in it
        if cls is ast.Starred:
            return self.target(node.value, s)  # type: ignore[attr-defined]
        return None

    def assign(self, node: ast.expr, value_node: ast.expr | None, value: Expr, s: int) -> None:
        """Bind target ``node`` to ``value`` (the expression of ``value_node``), tuples element by element."""
        if isinstance(node, _SEQUENCES):
            elements = value_node.elts if isinstance(value_node, _SEQUENCES) else None
            values = value[1] if elements is not None and value is not None and value[0] in "uD" else None
            star = next((i for i, t in enumerate(node.elts) if isinstance(t, ast.Starred)), None)
            if elements is None or values is None or (star is None and len(elements) != len(node.elts)):
                for t in node.elts:  # not a display of as many elements: the code does not say which is which
                    self.assign(t, None, None, s)
                return
            after = len(node.elts) - (star or 0) - 1
            for i, t in enumerate(node.elts):
                if star is not None and i == star:
                    taken = range(star, len(elements) - after)
                    self.assign(t, None, ("u", tuple(values[j] for j in taken)), s)
                    continue
                j = i if star is None or i < star else len(elements) - (len(node.elts) - i)
                self.assign(t, elements[j], values[j], s)
            return
        target = self.target(node, s)
        if target is not None:
            # a store by index binds the container's name again, but does not make it local
            local = (
                node.__class__ is not ast.Subscript or target[0] != "n" or target[1] in self.scopes[s].locals
            )
            self.bind(target, value, s, local)

    # ---- expressions ---------------------------------------------------------------------------------
    def call_site(
        self,
        func: ast.expr,
        s: int,
        args: tuple[Expr, ...],
        kwargs: tuple[tuple[str, Expr], ...],
        where: ast.expr,
    ) -> int:
        """A call of ``func`` with already built arguments: its site number."""
        callee = self.expr(func, s)
        k = self.sites
        self.sites += 1
        self.scopes[s].ops.append(("C", k, callee, args, kwargs, where.lineno, self.column(where)))
        return k

    def expr(self, node: ast.expr | None, s: int) -> Expr:  # noqa: C901, PLR0911, PLR0912
        if node is None:
            return None
        cls = node.__class__
        if cls is _NAME:  # the commonest first
            versions = self.versions.get(s)
            version = None if versions is None else versions.get(node.id)  # type: ignore[attr-defined]
            if version is not None:
                return ("v", f"{node.id}@{version}")  # type: ignore[attr-defined]
            return ("n", node.id)  # type: ignore[attr-defined]
        if cls is _CONSTANT:
            return None
        if cls is _CALL:
            return self.call(node, s)  # type: ignore[arg-type]
        if cls is _ATTRIBUTE:
            names = []
            while isinstance(node, ast.Attribute):  # a chain a.b.c: no recursion per link
                names.append(node.attr)
                node = node.value
            inner = self.expr(node, s)
            for name in reversed(names):
                inner = None if inner is None else ("a", inner, name)
            return inner
        if cls in _DISPLAYS:
            return self.displayed(node, s)
        if cls is ast.BoolOp:
            return _union(tuple(self.expr(v, s) for v in node.values))  # type: ignore[attr-defined]
        if cls is ast.IfExp:
            self.expr(node.test, s)  # type: ignore[attr-defined]
            return _union((self.expr(node.body, s), self.expr(node.orelse, s)))  # type: ignore[attr-defined]
        if cls is ast.BinOp:
            self.expr(node.left, s)  # type: ignore[attr-defined]
            self.expr(node.right, s)  # type: ignore[attr-defined]
            return None
        if cls is ast.Compare:
            self.expr(node.left, s)  # type: ignore[attr-defined]
            for e in node.comparators:  # type: ignore[attr-defined]
                self.expr(e, s)
            return None
        if cls is ast.UnaryOp:
            self.expr(node.operand, s)  # type: ignore[attr-defined]
            return None
        if cls is ast.JoinedStr:
            for v in node.values:  # type: ignore[attr-defined]
                if v.__class__ is ast.FormattedValue:
                    self.expr(v.value, s)
            return None
        if cls is ast.Subscript:
            self.expr(node.slice, s)  # type: ignore[attr-defined]
            base = self.expr(node.value, s)  # type: ignore[attr-defined]
            return None if base is None else ("x", base, index(node.slice))  # type: ignore[attr-defined]
        if cls is ast.Yield or cls is ast.YieldFrom:  # what a generator yields is what iterating it gives
            value = self.expr(node.value, s)  # type: ignore[attr-defined]
            if value is not None:
                self.scopes[s].ops.append(("R", value))
            return None
        if cls is ast.Starred or cls is ast.Await:
            return self.expr(node.value, s)  # type: ignore[attr-defined]
        if cls is ast.NamedExpr:
            value = self.expr(node.value, s)  # type: ignore[attr-defined]
            self.assign(node.target, node.value, value, s)  # type: ignore[attr-defined]
            return value
        if cls is ast.Lambda:
            return self.lambda_(node, s)  # type: ignore[arg-type]
        if cls in _COMPREHENSIONS:
            for gen in node.generators:  # type: ignore[attr-defined]
                self.assign(gen.target, None, self.iterate(gen.iter, s), s)
                for cond in gen.ifs:
                    self.expr(cond, s)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr) and child.__class__ is not ast.Name:
                self.expr(child, s)
        return None

    def displayed(self, node: ast.expr, s: int) -> Expr:
        """A list, tuple, set or dict display: its elements (by position or constant key, ``containers``)."""
        if node.__class__ is ast.Set:
            return _union(tuple(self.expr(e, s) for e in node.elts))
        if node.__class__ is ast.Dict:
            for k in node.keys:
                self.expr(k, s)
            keys = [None if k is None else index(k) for k in node.keys]
            values = tuple([self.expr(v, s) for v in node.values])
            closed = all(k is not None and k[0] == "k" for k in keys)
            return display(values, tuple(keys) if closed else OPEN)
        elements = node.elts  # type: ignore[attr-defined]
        starred = any(e.__class__ is ast.Starred for e in elements)
        return display(tuple([self.expr(e, s) for e in elements]), OPEN if starred else None)

    def iterate(self, node: ast.expr, s: int) -> Expr:
        """What a loop over ``node`` binds its target to: the elements of a container (what it holds), and
        what ``__next__`` returns on what ``__iter__`` returns (both called, as the loop calls them, on an
        instance whose class defines them)."""
        iterated = self.expr(node, s)
        if iterated is None:
            return None
        k, where = self.sites, (node.lineno, self.column(node))
        self.sites += 2
        ops = self.scopes[s].ops
        ops.append(("C", k, ("a", iterated, "__iter__"), (), (), *where))
        ops.append(("C", k + 1, ("a", ("c", k), "__next__"), (), (), *where))
        return ("u", (iterated, ("c", k + 1)))

    def call(self, node: ast.Call, s: int) -> Expr:
        func = node.func
        if isinstance(func, ast.Name) and func.id == "super" and not node.args:
            return ("s", s)
        args: list[Expr] = []
        for a in node.args:
            if a.__class__ is ast.Starred:
                self.expr(a, s)
                args.append(STAR)
            else:
                args.append(self.expr(a, s))
        kwargs = tuple((k.arg, self.expr(k.value, s)) for k in node.keywords if k.arg is not None)
        for k in node.keywords:
            if k.arg is None:
                self.expr(k.value, s)
        site = self.call_site(func, s, tuple(args), kwargs, node)
        if func.__class__ is ast.Attribute and func.attr in MUTATORS and func.value.__class__ is _NAME:
            name = func.value.id
            held = self.expr(func.value, s)
            put = args[1:] if func.attr in ("insert", "setdefault") else args if func.attr in ADDERS else []
            before = self.shown.get(held[1]) if held[0] == "v" else None
            merged = updated(before, func.attr, args, kwargs) or _union(
                (held, *[a for a in put if a is not STAR], *[v for _, v in kwargs])
            )
            self.bind(("n", name), merged, s, local=name in self.scopes[s].locals)
        return ("c", site)

    def lambda_(self, node: ast.Lambda, s: int) -> Expr:
        n = self.lambdas[s] = self.lambdas.get(s, 0) + 1
        c = self.child(f"<lambda{n}>", "lambda", s)
        self.parameters(node.args, c, s)
        names = [a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)]
        self.scopes[c].decl = self.declare(node, c, f"<lambda{n}>({', '.join(names)})")
        self.scopes[c].ops.append(("R", self.expr(node.body, c)))
        return ("d", c)


_NAME, _CONSTANT, _CALL, _ATTRIBUTE = ast.Name, ast.Constant, ast.Call, ast.Attribute
"""The commonest expressions, ``expr`` tells apart without looking ``ast`` up."""
_DISPLAYS = frozenset((ast.Tuple, ast.List, ast.Set, ast.Dict))
_SEQUENCES = (ast.Tuple, ast.List)
"""Displays ``assign`` matches element by element (a tuple, made once: not a union made at every call)."""
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


def _union(parts: tuple[Expr, ...]) -> Expr:
    """Any of ``parts`` (None: none of them is anything)."""
    for p in parts:
        if p is not None:
            return ("u", parts)
    return None


def _name(node: ast.expr) -> str | None:
    return node.id if isinstance(node, ast.Name) else None


def _dotted_expr(name: str) -> Expr:
    parts = name.split(".")
    out: Expr = ("n", parts[0])
    for p in parts[1:]:
        out = ("a", out, p)
    return out
