"""The scopes of every Python file of a tree, numbered together, with their names resolved once.

``Program`` numbers the scopes of every file (``flow.Scope``) and their call sites, resolves each name read
or bound to the variable it means (as Python scopes names: a function sees its enclosing functions and its
module, not the class bodies around it; a module sees what it imports ``*`` from), and each import to the
module or module variable it binds. Its operations come out compiled: expressions whose names are variables
(``("r", (scope, name))``), values known outright (``("K", values)``), and nothing where the code decides
nothing (a builtin, a module outside the tree): an operation whose callee or value is nothing is dropped, so
the solver (``calls.py``) never visits the many calls of the standard library and third-party code.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from igg.codemap.facts import CallableDecl, FileFacts
from igg.codemap.python.containers import OPEN, element
from igg.codemap.python.flow import RETURN, STAR, Scope

Value = tuple[Any, ...]
"""``("f", g)`` a function, method or lambda (scope ``g``), ``("c", g)`` a class, ``("i", g)`` an instance of
it, ``("m", g)`` a module, ``("P", name)`` a namespace package, ``("b", g, v)`` method ``g`` bound to ``v``,
``("S", g, v)`` ``super()`` in class ``g`` for receiver ``v``."""
Key = tuple[int, str]
"""A variable: (scope, name); a call's result is (its site, ``SITE``)."""
SITE = "()"
Op = tuple[Any, ...]
"""A compiled operation: ``("=", scope, target, expr, twin)`` (``twin``: a second target, or None), ``("C",
scope, site, callee, args, kwargs, line, column)``, ``("R", scope, expr)``."""


_NOTHING: Op = ("",)
_CONSTANT = frozenset("dkt")
"""The kinds of expression ``Program.constant`` may know the values of."""


class Program:
    """Every scope of ``files`` (see the module doc)."""

    def __init__(self, files: Iterable[FileFacts]) -> None:
        self.scopes: list[Scope] = []
        self.files: list[FileFacts] = []
        self.owner: list[int] = []
        """Scope -> the index of its file in ``files``."""
        self.parent: list[int] = []
        self.modules: dict[str, int] = {}
        """Module name -> its scope."""
        self.scopes_of: dict[int, list[int]] = {}
        """A declaration (by id) -> its scopes (a name defined twice is one declaration)."""
        bases: list[int] = []  # the first scope of each file
        for f in files:
            if f.flow is None or f.module in self.modules:
                continue
            base = len(self.scopes)
            self.modules[f.module] = base
            bases.append(base)
            for s in f.flow:
                if s.decl >= 0:
                    self.scopes_of.setdefault(id(f.callables[s.decl]), []).append(len(self.scopes))
                self.scopes.append(s)
                self.owner.append(len(self.files))
                self.parent.append(s.parent + base if s.parent >= 0 else -1)
            self.files.append(f)
        self.packages = {
            ".".join(parts[:n])
            for m in self.modules
            for parts in [m.split(".")]
            for n in range(1, len(parts))
        } - set(self.modules)
        """Dotted names of the namespace packages above modules (no module of their own)."""
        self._lookups: dict[Key, Key | None] = {}
        self._imports: dict[tuple[str, bool], Any] = {}
        """(an import's target, whether it must be a module) -> what it binds (``_import``)."""
        self.raw: list[tuple[int, int, int, tuple[Any, ...]]] = []
        """Every operation as its file states it: (scope, the file's first scope, its first site,
        operation)."""
        self.ops: list[Op | None] = []
        """The operations compiled, each when it first runs (``compiled``)."""
        self.writers: dict[Key, list[int]] = {}
        """Variable -> the operations that bind it: run when something first reads it."""
        self.eager: list[int] = []
        """The operations run whatever is read: bindings of attributes (whose object is a value), then calls
        (which mostly read what those bind: ``self.repo = repo`` before ``self.repo.get()``)."""
        self.bases: dict[int, tuple[Any, ...]] = {}
        """Class scope -> its bases, compiled in the enclosing scope."""
        self.vars: dict[Key, set[Value]] = {}
        """(scope, name) -> the values it can hold; a call's result is (its site, ``SITE``)."""
        self.dead: set[Key] = set()
        """Variables only imports of code outside the tree bind (``os``, ``httpx``): a call on them calls
        nothing of the tree."""
        self.fixed: set[Key] = set()
        """Variables a ``def``, ``class`` or import of a module binds (known without running anything)."""
        self._aliases: list[tuple[Key, Key, int]] = []
        self.alias: dict[Key, Key] = {}
        """A variable only an import binds -> the variable of the module it imports it from (``from m import
        f``: ``f`` is ``m.f``), read in its place."""
        self.operations(bases)

    def operations(self, bases: list[int]) -> None:
        """Note every operation of every file (``index``), then the calls that may reach the tree, in source
        order."""
        live: set[Key] = set()
        pending: list[int | tuple[int, int, int, tuple[Any, ...]]] = []
        classes: list[tuple[int, int, int, int]] = []
        site = calls = 0
        for base, f in zip(bases, self.files, strict=True):
            for local, scope in enumerate(f.flow or ()):
                g = base + local
                if scope.kind == "class":
                    classes.append((g, base + scope.parent, base, site))
                for op in scope.ops:
                    if op[0] == "C":
                        pending.append((g, base, site, op))
                        calls += 1
                    else:
                        i = self.index(op, g, base, site, live)
                        if i is not None:
                            pending.append(i)
            site += calls  # a file numbers its call sites from 0, one per call operation
            calls = 0
        self.dead -= live
        for key, target, i in self._aliases:
            if self.writers.get(key) == [i]:
                self.alias[key] = target
                del self.writers[key]
        for g, parent, b, sb in classes:  # once the aliases are known
            parts = (self.compile(e, parent, b, sb) for e in self.scopes[g].bases)
            self.bases[g] = tuple(p for p in parts if p is not None)
        for item in pending:  # in source order: a scope's bindings before the calls that read them
            if isinstance(item, int):
                self.eager.append(item)
                continue
            g, b, sb, op = item
            if not self.calls_nothing(op[2], g):
                self.eager.append(len(self.raw))
                self.raw.append(item)
                self.ops.append(None)

    @staticmethod
    def constant(value: Any, g: int, b: int) -> frozenset[Value] | None:
        """The values of a ``def`` or ``class`` (undecorated), known without running anything."""
        kind = value[0]
        if kind == "d":
            return frozenset({("f", value[1] + b)})
        if kind == "k":
            return frozenset({("c", value[1] + b)})
        if kind == "t" and value[1][0] == "k":  # self: an instance of its class
            return frozenset({("i", value[1][1] + b)})
        return None

    def resolve(self, key: Key) -> Key:
        """``key``, or the variable it is an alias of (``alias``), followed a few imports deep."""
        alias = self.alias
        for _ in range(8):
            target = alias.get(key)
            if target is None:
                return key
            key = target
        return key

    def calls_nothing(self, callee: Any, g: int) -> bool:
        """Whether the callee is a builtin (``len``), or a name or attribute of code outside the tree."""
        while callee is not None and callee[0] == "a":
            callee = callee[1]
        if callee is None:
            return True
        if callee[0] == "n":
            key = self.lookup(g, callee[1])
            return key is None or key in self.dead
        return callee[0] == "v" and (g, callee[1]) in self.dead

    def index(self, op: tuple[Any, ...], g: int, b: int, sb: int, live: set[Key]) -> int | None:
        """Note binding or return ``op`` of scope ``g``: as the writer of the variables it binds, or (a
        binding of an attribute) as an eager operation: its number, then."""
        kind = op[0]
        if kind == "=":
            target = op[1]
            keys = self._bound_keys(op, g, b)
            if target[0] != "a" and not keys:
                return None
            value = op[2]
            known = self.constant(value, g, b) if value[0] in _CONSTANT else None
            if value[0] == "i" and known is None:
                imported = self.imported(value[1], value[2], g)
                if imported is None:
                    self.dead.update(keys)
                    return None
                known = imported[1] if imported[0] == "K" else None
                if imported[0] == "r" and target[0] == "n":
                    for key in keys:
                        self._aliases.append((key, imported[1], len(self.raw)))
            live.update(keys)
            if known is not None and target[0] != "a":  # a def, a class, a module: bound once, no need to run
                self.fixed.update(keys)
                for key in keys:
                    held = self.vars.get(key)
                    if held is None:
                        self.vars[key] = set(known)
                    else:
                        held.update(known)
                return None
        else:
            keys = [(g, RETURN)] if kind == "R" else []
        i = len(self.raw)
        self.raw.append((g, b, sb, op))
        self.ops.append(None)
        writers = self.writers
        for key in keys:
            found = writers.get(key)
            if found is None:
                writers[key] = [i]
            else:
                found.append(i)
        return None if keys else i

    def _bound_keys(self, op: tuple[Any, ...], g: int, b: int) -> list[Key]:
        """The variables binding ``op`` of scope ``g`` writes: its target's (none for an attribute), and the
        name it also binds when it has one (``op[3]``)."""
        target = op[1]
        keys: list[Key] = []
        if target[0] == "n":
            key = self.lookup(g, target[1])
            if key is not None:
                keys.append(key)
        elif target[0] == "v":
            keys.append((g, target[1]))
        elif target[0] == "p":
            keys.append((target[1] + b, target[2]))
        if len(op) > 3:
            keys.append((g, op[3]))
        return keys

    def compiled(self, i: int) -> Op | None:
        """Operation ``i`` compiled (None: it does nothing)."""
        op = self.ops[i]
        if op is None:
            g, b, sb, raw = self.raw[i]
            op = self.ops[i] = self.compile_op(raw, g, b, sb) or _NOTHING
        return None if op is _NOTHING else op

    # ---- names ---------------------------------------------------------------------------------------
    def lookup(self, g: int, name: str) -> Key | None:
        """The variable ``name`` means in scope ``g``, or None (a builtin, or a name nothing binds)."""
        if name in self.scopes[g].locals:  # its own: the most common case, no need to remember it
            return (g, name)
        key = (g, name)
        found = self._lookups.get(key, key)
        if found is not key:
            return found
        found = None
        scopes, parent = self.scopes, self.parent
        scope = scopes[g]
        if scope.kind != "module":
            s = parent[g]
            while s >= 0:
                scope = scopes[s]
                if scope.kind == "module":
                    found = (
                        (s, name)
                        if name in scope.locals
                        else (self.wildcard(scope, name, 0) if scope.wildcards else None)
                    )
                    break
                if scope.kind != "class" and name in scope.locals:
                    found = (s, name)
                    break
                s = parent[s]
        elif scope.wildcards:
            found = self.wildcard(scope, name, 0)
        self._lookups[key] = found
        return found

    def wildcard(self, module: Scope, name: str, depth: int) -> Key | None:
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

    def imported(self, target: str, module_only: bool, g: int) -> Any:
        """What an import binds: a module, a namespace package or a module's variable (compiled), or None.
        A name the tree has no top-level module for is looked for beside the importing module too (a script's
        own folder is on ``sys.path``: ``import helpers`` next to it)."""
        found = self._imported(target, module_only)
        top = target.partition(".")[0]
        if found is None and top not in self.modules and top not in self.packages:
            module = self.files[self.owner[g]].module
            folder = (
                module
                if self.files[self.owner[g]].path.endswith("__init__.py")
                else module.rpartition(".")[0]
            )
            if folder:
                found = self._imported(f"{folder}.{target}", module_only)
        return found

    def _imported(self, target: str, module_only: bool) -> Any:
        memo = (target, module_only)
        found = self._imports.get(memo, memo)
        if found is memo:
            found = self._imports[memo] = self._import(target, module_only)
        return ("r", self.resolve(found[1])) if found is not None and found[0] == "r" else found

    def _import(self, target: str, module_only: bool) -> Any:
        """What ``_imported`` finds, a module's variable not yet followed to what it is an alias of."""
        g = self.modules.get(target)
        if g is not None:
            return ("K", frozenset({("m", g)}))
        if target in self.packages:
            return ("K", frozenset({("P", target)}))
        if module_only:
            return None
        owner, _, member = target.rpartition(".")
        g = self.modules.get(owner)
        key = self.lookup(g, member) if g is not None else None
        return ("r", key) if key is not None else None

    # ---- compiling -----------------------------------------------------------------------------------
    def compile(self, e: Any, g: int, b: int, sb: int) -> Any:  # noqa: C901, PLR0911, PLR0912
        """Expression ``e`` of scope ``g`` (of the file whose first scope is ``b`` and first site ``sb``),
        compiled: ``("r", key)``, ``("K", values)``, ``("a", e, name)``, ``("u", parts)``, ``("t", e)``,
        ``("s", method)``, ``("w", e, e)``, or None (nothing)."""
        if e is None:
            return None
        kind = e[0]
        if kind == "n":
            key = self.lookup(g, e[1])
            return None if key is None else ("r", self.resolve(key))
        if kind == "a":
            names = []
            while e is not None and e[0] == "a":  # a chain a.b.c: no recursion per link
                names.append(e[2])
                e = e[1]
            inner = self.compile(e, g, b, sb)
            for name in reversed(names):
                inner = None if inner is None else ("a", inner, name)
            return inner
        if kind == "v":
            return ("r", self.resolve((g, e[1])))
        if kind == "c":
            return ("r", (e[1] + sb, SITE))
        if kind == "d":
            return ("K", frozenset({("f", e[1] + b)}))
        if kind == "k":
            return ("K", frozenset({("c", e[1] + b)}))
        if kind == "u" or kind == "D":
            parts = tuple(p for p in (self.compile(x, g, b, sb) for x in e[1]) if p is not None)
            return None if not parts else parts[0] if len(parts) == 1 else ("u", parts)
        if kind == "x":
            return self.subscript(e, g, b, sb)
        if kind == "i":
            return self.imported(e[1], e[2], g)
        if kind == "t":
            inner = self.compile(e[1], g, b, sb)
            return None if inner is None else ("t", inner)
        if kind == "s":
            return ("s", e[1] + b)
        if kind == "w":
            return ("w", self.compile(e[1], g, b, sb), self.compile(e[2], g, b, sb))
        return None

    # ---- subscripts ----------------------------------------------------------------------------------
    def subscript(self, e: Any, g: int, b: int, sb: int) -> Any:
        """``base[index]`` compiled: when the base is for sure one display (``display``), the element the
        index decides, and nothing when the index is computed or names no element; else what the base holds
        (a container is then taken for the union of what was put in it)."""
        found = self.display(e[1], g, b, sb, 0)
        if found is None:
            return self.compile(e[1], g, b, sb)
        picked = element(found[0], e[2])
        return None if picked is None else self.compile(picked, *found[1:])

    def display(self, e: Any, g: int, b: int, sb: int, depth: int) -> tuple[Any, int, int, int] | None:
        """The list, tuple or dict display expression ``e`` of scope ``g`` is for sure, with the scope and
        file it is written in, or None. A name is its display when one binding alone binds it, to a display
        whose keys are all known, and nothing else gives it values: not a parameter, not a method that
        changes it in place (``containers.MUTATORS`` bind it again), not a ``def``, class or import."""
        if e is None or depth > 8:
            return None
        kind = e[0]
        if kind == "D":
            return None if e[2] == OPEN else (e, g, b, sb)
        if kind == "n" or kind == "v":
            key = self.lookup(g, e[1]) if kind == "n" else (g, e[1])
            if key is None:
                return None
            key = self.resolve(key)
            writers = self.writers.get(key)
            if writers is None or len(writers) != 1 or key in self.fixed:
                return None
            scope = self.scopes[key[0]]
            if key[1] in scope.params or key[1] in scope.kwonly:
                return None
            wg, wb, wsb, op = self.raw[writers[0]]
            return self.display(op[2], wg, wb, wsb, depth + 1) if op[0] == "=" else None
        if kind == "x":
            found = self.display(e[1], g, b, sb, depth + 1)
            if found is None:
                return None
            picked = element(found[0], e[2])
            return None if picked is None else self.display(picked, *found[1:], depth + 1)
        return None

    def compile_target(self, t: Any, g: int, b: int, sb: int) -> Any:
        kind = t[0]
        if kind == "n":
            key = self.lookup(g, t[1])
            return None if key is None else ("r", key)
        if kind == "v":
            return ("r", (g, t[1]))
        if kind == "p":
            return ("r", (t[1] + b, t[2]))
        if kind == "a":
            inner = self.compile(t[1], g, b, sb)
            return None if inner is None else ("a", inner, t[2])
        return None

    def compile_op(self, op: tuple[Any, ...], g: int, b: int, sb: int) -> Op | None:
        kind = op[0]
        if kind == "C":
            _, k, callee, args, kwargs, line, column = op
            c = self.compile(callee, g, b, sb)
            if c is None:
                return None  # a builtin or outside code: nothing of the tree is called, nothing flows
            caller = g
            while caller >= 0 and self.scopes[caller].kind == "class":  # a class body's calls: its scope's
                caller = self.parent[caller]
            return ("C", caller, k + sb, c, args, kwargs, line, column, g, b, sb)
        if kind == "=":
            value = self.compile(op[2], g, b, sb)
            if value is None:
                return None
            target = self.compile_target(op[1], g, b, sb)
            twin = ("r", (g, op[3])) if len(op) > 3 else None
            if target is None:
                target, twin = twin, None
            return None if target is None else ("=", g, target, value, twin)
        if kind == "R":
            value = self.compile(op[1], g, b, sb)
            return None if value is None else ("R", g, value)
        return None

    def arguments(self, op: Op) -> tuple[list[Any], list[tuple[str, Any]]]:
        """The positional arguments of call ``op`` up to a ``*args``, and its keyword arguments, compiled;
        those that are nothing left out (positions: those after the last that is something; the others stay,
        as None, to keep the positions)."""
        _, _, _, _, args, kwargs, _, _, g, b, sb = op
        given: list[Any] = []
        for a in args:
            if a is STAR:
                break
            given.append(self.compile(a, g, b, sb))
        while given and given[-1] is None:
            given.pop()
        named = [(n, self.compile(a, g, b, sb)) for n, a in kwargs]
        return given, [(n, a) for n, a in named if a is not None]

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
