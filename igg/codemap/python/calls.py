"""Python calls resolved the way PyCG resolves them: what each name, attribute, parameter and return can hold,
across every file of the tree, until nothing more flows.

Every scope of every file (``flow.py``) is run over and over, each binding adding the values its expression
can have to its target, until no binding adds one (a fixed point). Values are functions and lambdas, classes,
instances (the result of calling a class), modules, methods bound to an instance (``obj.m``) and ``super()``
proxies. A call reaches what its callee can hold: a function (its parameters take the arguments' values, its
result is what its ``return`` statements give), a bound method (``self`` takes the instance), a class (its
``__init__``, found along the method resolution order, is called; the result is an instance), an instance (its
``__call__``). Attribute lookups on a class or instance follow the C3 method resolution order of in-tree
classes; an attribute set on ``self`` belongs to the class of each instance ``self`` can be.

Decorated ``def``s are bound to what their decorators return; a decorator the tree does not define (or whose
result it does not decide) leaves the function itself, in a second round once everything else has flowed.
Annotated parameters, returns and attributes hold instances of the class they name. Nothing is guessed: a name
or attribute with no known value calls nothing, and so draws no edge.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from igg.codemap.facts import CallableDecl, FileFacts
from igg.codemap.python.flow import RETURN, STAR, Scope

Value = tuple[Any, ...]
"""``("f", g)`` a function, method or lambda (scope ``g``), ``("c", g)`` a class, ``("i", g)`` an instance of it,
``("m", g)`` a module, ``("b", g, v)`` method ``g`` bound to ``v``, ``("S", g, v)`` ``super()`` in class ``g``
for receiver ``v``."""
_EMPTY: frozenset[Value] = frozenset()
_MAX_ROUNDS = 50
"""Rounds per phase: a tree whose flows have not settled by then keeps what it has (a lower bound)."""


class CallGraph:
    """The calls of a set of Python files: ``edges`` (caller scope -> callee scope, with sites) once solved."""

    def __init__(self, files: Iterable[FileFacts]) -> None:
        self.scopes: list[Scope] = []
        self.files: list[FileFacts] = []
        self.owner: list[int] = []
        """Scope -> the index of its file in ``files``."""
        self.parent: list[int] = []
        self.base: list[int] = []
        self.sites: list[int] = []
        self.modules: dict[str, int] = {}
        self.scopes_of: dict[int, list[int]] = {}
        """A declaration (by id) -> its scopes (a name defined twice is one declaration)."""
        for f in files:
            if f.flow is None or f.module in self.modules:
                continue
            base = len(self.scopes)
            self.modules[f.module] = base
            self.base.append(base)
            self.sites.append(sum(1 for s in f.flow for op in s.ops if op[0] == "C"))
            for s in f.flow:
                if s.decl >= 0:
                    self.scopes_of.setdefault(id(f.callables[s.decl]), []).append(len(self.scopes))
                self.scopes.append(s)
                self.owner.append(len(self.files))
                self.parent.append(s.parent + base if s.parent >= 0 else -1)
            self.files.append(f)
        self.site_base = [0]
        for n in self.sites:
            self.site_base.append(self.site_base[-1] + n)
        self.vars: dict[tuple[int, str], set[Value]] = {}
        self.results: list[set[Value]] = [set() for _ in range(self.site_base[-1])]
        self.edges: dict[int, dict[int, list[tuple[int, int]]]] = {}
        """Caller scope -> callee scope -> the (line, column) of every call between them."""
        self.instantiates: dict[int, dict[int, list[tuple[int, int]]]] = {}
        self._lookups: dict[tuple[int, str], tuple[int, str] | None] = {}
        self._mro: dict[int, list[int]] = {}
        self.changed = False
        self.fallback = False

    # ---- solving -------------------------------------------------------------------------------------
    def solve(self) -> CallGraph:
        for fallback in (False, True):
            self.fallback = fallback
            for _ in range(_MAX_ROUNDS):
                self.changed = False
                self._mro.clear()
                self.round()
                if not self.changed:
                    break
        return self

    def round(self) -> None:
        scopes, owner, base, site_base = self.scopes, self.owner, self.base, self.site_base
        for g, scope in enumerate(scopes):
            file = owner[g]
            b, sb = base[file], site_base[file]
            for op in scope.ops:
                kind = op[0]
                if kind == "C":
                    self.call(g, b, sb, op)
                elif kind == "=":
                    values = self.eval(op[2], g, b, sb)
                    if values:
                        self.store(op[1], values, g, b, sb)
                elif kind == "R":
                    values = self.eval(op[1], g, b, sb)
                    if values:
                        self.add((g, RETURN), values)

    def add(self, key: tuple[int, str], values: Iterable[Value]) -> None:
        held = self.vars.get(key)
        if held is None:
            held = self.vars[key] = set()
        n = len(held)
        held.update(values)
        if len(held) != n:
            self.changed = True

    def store(self, target: Any, values: set[Value] | frozenset[Value], g: int, b: int, sb: int) -> None:
        kind = target[0]
        if kind == "n":
            key = self.lookup(g, target[1])
            if key is not None:
                self.add(key, values)
        elif kind == "p":
            self.add((target[1] + b, target[2]), values)
        elif kind == "v":
            self.add((g, target[1]), values)
        elif kind == "a":
            for v in self.eval(target[1], g, b, sb):
                if v[0] == "i" or v[0] == "c" or v[0] == "m":
                    self.add((v[1], target[2]), values)

    # ---- names ---------------------------------------------------------------------------------------
    def lookup(self, g: int, name: str) -> tuple[int, str] | None:
        """The variable ``name`` means in scope ``g``, as Python scopes it (a class body's names are not seen
        from the functions inside it), or None (a builtin, or a name nothing binds)."""
        key = (g, name)
        if key in self._lookups:
            return self._lookups[key]
        found: tuple[int, str] | None = None
        s, first = g, True
        while s >= 0:
            scope = self.scopes[s]
            if (first or scope.kind != "class") and name in scope.locals:
                found = (s, name)
                break
            if scope.kind == "module":
                found = self.wildcard(scope, name, 0)
                break
            s, first = self.parent[s], False
        self._lookups[key] = found
        return found

    def wildcard(self, module: Scope, name: str, depth: int) -> tuple[int, str] | None:
        if name.startswith("_") or depth > 5:
            return None
        for source in module.wildcards:
            g = self.modules.get(source)
            if g is None:
                continue
            if name in self.scopes[g].locals:
                return (g, name)
            found = self.wildcard(self.scopes[g], name, depth + 1)
            if found is not None:
                return found
        return None

    def imported(self, target: str, module_only: bool) -> set[Value] | frozenset[Value]:
        g = self.modules.get(target)
        if g is not None:
            return {("m", g)}
        if module_only:
            return _EMPTY
        owner, _, member = target.rpartition(".")
        g = self.modules.get(owner)
        if g is None:
            return _EMPTY
        key = self.lookup(g, member)
        return self.vars.get(key, _EMPTY) if key is not None else _EMPTY

    # ---- expressions ---------------------------------------------------------------------------------
    def eval(self, e: Any, g: int, b: int, sb: int) -> set[Value] | frozenset[Value]:  # noqa: C901, PLR0911, PLR0912
        if e is None:
            return _EMPTY
        kind = e[0]
        if kind == "n":
            key = self.lookup(g, e[1])
            return self.vars.get(key, _EMPTY) if key is not None else _EMPTY
        if kind == "a":
            names = []
            while e is not None and e[0] == "a":  # a chain a.b.c, outermost last: no recursion per link
                names.append(e[2])
                e = e[1]
            values = self.eval(e, g, b, sb)
            for name in reversed(names):
                out: set[Value] = set()
                for v in values:
                    out.update(self.attribute(v, name))
                values = out
            return values
        if kind == "c":
            site: int = e[1]
            return self.results[site + sb]
        if kind == "v":
            held: set[Value] | None = self.vars.get((g, e[1]))
            return _EMPTY if held is None else held
        if kind == "d":
            return {("f", e[1] + b)}
        if kind == "k":
            return {("c", e[1] + b)}
        if kind == "u":
            out = set()
            for part in e[1]:
                out.update(self.eval(part, g, b, sb))
            return out
        if kind == "i":
            return self.imported(e[1], e[2])
        if kind == "t":
            return {("i", v[1]) for v in self.eval(e[1], g, b, sb) if v[0] == "c"}
        if kind == "s":
            return self.super_(e[1] + b)
        if kind == "w":
            found = self.eval(e[1], g, b, sb)
            return found if found or not self.fallback else self.eval(e[2], g, b, sb)
        return _EMPTY

    def super_(self, method: int) -> set[Value]:
        cls = self.parent[method]
        scope = self.scopes[method]
        if cls < 0 or self.scopes[cls].kind != "class" or not scope.params:
            return set()
        return {("S", cls, v) for v in self.vars.get((method, scope.params[0]), ()) if v[0] in ("i", "c")}

    def attribute(self, v: Value, name: str) -> Iterable[Value]:
        kind = v[0]
        if kind == "m":
            key = self.lookup(v[1], name)
            if key is not None:
                return self.vars.get(key, _EMPTY)
            sub = self.modules.get(f"{self.files[self.owner[v[1]]].module}.{name}")
            return {("m", sub)} if sub is not None else _EMPTY
        if kind == "i" or kind == "c":
            return self.member(self.mro(v[1]), name, v)
        if kind == "S":
            mro = self.mro(v[2][1])
            after = mro[mro.index(v[1]) + 1:] if v[1] in mro else []
            return self.member(after, name, v[2])
        return _EMPTY

    def member(self, mro: list[int], name: str, receiver: Value) -> set[Value]:
        """What ``name`` is on ``receiver`` (an instance or class), found along ``mro``: methods bound to it."""
        for k in mro:
            key = (k, name)
            if name not in self.scopes[k].locals and key not in self.vars:
                continue
            out: set[Value] = set()
            for x in self.vars.get(key, ()):
                if x[0] == "f" and self.parent[x[1]] == k:
                    method = self.scopes[x[1]].kind
                    if method == "classmethod":
                        out.add(("b", x[1], ("c", receiver[1])))
                    elif method == "method" and receiver[0] == "i":
                        out.add(("b", x[1], receiver))
                    else:
                        out.add(x)
                else:
                    out.add(x)
            return out
        return set()

    def mro(self, cls: int) -> list[int]:
        """The C3 linearization of in-tree class ``cls`` (bases outside the tree left out)."""
        found = self._mro.get(cls)
        if found is not None:
            return found
        self._mro[cls] = [cls]  # a cycle (a class named as its own base) ends here
        scope = self.scopes[cls]
        parent = self.parent[cls]
        file = self.owner[cls]
        b, sb = self.base[file], self.site_base[file]
        bases = [v[1] for e in scope.bases for v in self.eval(e, parent, b, sb) if v[0] == "c" and v[1] != cls]
        found = [cls, *_c3([self.mro(k) for k in dict.fromkeys(bases)] + [list(dict.fromkeys(bases))])]
        self._mro[cls] = found
        return found

    # ---- calls ---------------------------------------------------------------------------------------
    def call(self, g: int, b: int, sb: int, op: tuple[Any, ...]) -> None:
        _, k, callee, args, kwargs, line, column = op
        result: set[Value] = set()
        caller = self.caller(g)
        for v in list(self.eval(callee, g, b, sb)):
            kind = v[0]
            if kind == "f":
                self.enter(caller, v[1], None, args, kwargs, g, b, sb, (line, column), result)
            elif kind == "b":
                self.enter(caller, v[1], v[2], args, kwargs, g, b, sb, (line, column), result)
            elif kind == "c":
                result.add(("i", v[1]))
                _record(self.instantiates, caller, v[1], (line, column))
                for init in self.member(self.mro(v[1]), "__init__", ("i", v[1])):
                    if init[0] == "b":
                        self.enter(caller, init[1], init[2], args, kwargs, g, b, sb, (line, column), set())
            elif kind == "i":
                for fn in self.member(self.mro(v[1]), "__call__", v):
                    if fn[0] == "b":
                        self.enter(caller, fn[1], fn[2], args, kwargs, g, b, sb, (line, column), result)
        if result:
            held = self.results[k + sb]
            n = len(held)
            held.update(result)
            if len(held) != n:
                self.changed = True

    def enter(self, caller: int, fn: int, receiver: Value | None, args: tuple[Any, ...],
              kwargs: tuple[tuple[str, Any], ...], g: int, b: int, sb: int, site: tuple[int, int],
              result: set[Value]) -> None:
        """A call of scope ``fn`` (``receiver``: bound to its first parameter): its edge, its parameters'
        values, its result."""
        if caller >= 0:
            _record(self.edges, caller, fn, site)
        scope = self.scopes[fn]
        params = scope.params
        shift = 0
        if receiver is not None and params:
            self.add((fn, params[0]), (receiver,))
            shift = 1
        for i, a in enumerate(args):
            if a is STAR:
                break
            j = i + shift
            if j >= len(params):
                break
            values = self.eval(a, g, b, sb)
            if values:
                self.add((fn, params[j]), values)
        for name, a in kwargs:
            if name in params or name in scope.kwonly:
                values = self.eval(a, g, b, sb)
                if values:
                    self.add((fn, name), values)
        result.update(self.vars.get((fn, RETURN), ()))

    def caller(self, g: int) -> int:
        """The scope a call in scope ``g`` is credited to: a class body's calls are its enclosing scope's."""
        while g >= 0 and self.scopes[g].kind == "class":
            g = self.parent[g]
        return g

    # ---- results -------------------------------------------------------------------------------------
    def qualified(self, g: int) -> str:
        """The qualified name of scope ``g`` (``module.Class.method``, as PyCG names it)."""
        module = self.files[self.owner[g]].module
        name = self.scopes[g].name
        return f"{module}.{name}" if name else module

    def decl(self, g: int) -> CallableDecl | None:
        """The declaration of callable scope ``g`` (None: a module, a class, an overload stub)."""
        d = self.scopes[g].decl
        return self.files[self.owner[g]].callables[d] if d >= 0 else None


def _record(table: dict[int, dict[int, list[tuple[int, int]]]], caller: int, callee: int,
            site: tuple[int, int]) -> None:
    sites = table.setdefault(caller, {}).setdefault(callee, [])
    if site not in sites:
        sites.append(site)


def _c3(sequences: list[list[int]]) -> list[int]:
    """Merge the base classes' linearizations (C3); an inconsistent order falls back to depth-first order."""
    seqs = [list(s) for s in sequences if s]
    out: list[int] = []
    while seqs:
        head = next((s[0] for s in seqs if not any(s[0] in other[1:] for other in seqs)), None)
        if head is None:  # Python refuses such a class; keep the bases in depth-first order
            rest = [k for s in seqs for k in s]
            return out + [k for k in dict.fromkeys(rest) if k not in out]
        out.append(head)
        seqs = [s[1:] if s[0] == head else s for s in seqs]
        seqs = [s for s in seqs if s]
    return out
