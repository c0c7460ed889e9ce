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

from igg.codemap.facts import FileFacts
from igg.codemap.python.flow import RETURN
from igg.codemap.python.scopes import SITE, Key, Program, Value

_EMPTY: frozenset[Value] = frozenset()
_WIDE = 16
"""The most values a variable holds: one that could hold more (every subclass of a large hierarchy flowing
into one parameter) is not decided by the code, and calls through it draw nothing."""
_DEPTH = 40
"""How many variables deep a first read runs what binds them at once (deeper: queued)."""
_MAX_ROUNDS = 50
"""Runs per operation and phase, on average: a tree whose flows have not settled by then keeps what it has (a
lower bound)."""


class CallGraph(Program):
    """The calls of a set of Python files: ``edges`` (caller scope -> callee scope, with sites) once
    solved."""

    def __init__(self, files: Iterable[FileFacts]) -> None:
        super().__init__(files)
        self.deps: dict[Key, set[int]] = {}
        """Variable -> the operations that read it (run again when it grows)."""
        self.queue: list[int] = []
        self.queued: set[int] = set()
        self.current = 0
        self.edges: dict[int, dict[int, list[tuple[int, int]]]] = {}
        """Caller scope -> callee scope -> the (line, column) of every call between them."""
        self.instantiates: dict[int, dict[int, list[tuple[int, int]]]] = {}
        self._mro: dict[int, list[int]] = {}
        self._mro_users: dict[int, set[int]] = {}
        self.fallback = False
        self.depth = 0
        self.wide: set[Key] = set()
        """Variables that could hold more than ``_WIDE`` values (``widen``)."""
        self.args: dict[int, tuple[list[Any], list[tuple[str, Any]]]] = {}
        """Call site -> its arguments, compiled when a callee is first known."""

    # ---- solving -------------------------------------------------------------------------------------
    def solve(self) -> CallGraph:
        """Run every call (and every binding of an attribute), and what binds each variable they read, then
        again each operation whose inputs grew, until none does; then once more the decorated ``def``s whose
        decorators gave nothing, bound to the function itself."""
        self.work(self.eager)
        self.fallback = True
        self.work(i for i, op in enumerate(self.ops) if op is not None and op[0] == "=" and op[3][0] == "w")
        return self

    def work(self, ops: Iterable[int]) -> None:
        queue, queued = self.queue, self.queued
        for i in ops:
            if i not in queued:
                queued.add(i)
                queue.append(i)
        budget = _MAX_ROUNDS * len(self.raw)
        position = 0
        while position < len(queue) and position < budget:
            i = queue[position]
            position += 1
            queued.discard(i)
            self.run(i)
        queue.clear()
        queued.clear()

    def run(self, i: int) -> None:
        op = self.ops[i]
        if op is None:
            op = self.compiled(i)
            if op is None:
                return
        elif op[0] == "":
            return
        self.current = i
        kind = op[0]
        if kind == "C":
            self.call(op)
        elif kind == "=":
            values = self.eval(op[3])
            if values:
                self.store(op[2], values)
                if op[4] is not None:
                    self.add(op[4][1], values)
        else:
            values = self.eval(op[2])
            if values:
                self.add((op[1], RETURN), values)

    def read(self, key: Key) -> set[Value] | frozenset[Value]:
        """What variable ``key`` holds, the running operation noted as its reader."""
        deps = self.deps.get(key)
        current = self.current
        if deps is None:  # read for the first time: what binds it runs now (most values arrive before use)
            deps = self.deps[key] = set()
            writers = self.writers.get(key, ())
            if writers and self.depth < _DEPTH:
                self.depth += 1
                for i in writers:
                    self.run(i)
                self.depth -= 1
                self.current = current
            else:
                for i in writers:
                    if i not in self.queued:
                        self.queued.add(i)
                        self.queue.append(i)
        deps.add(current)
        held = self.vars.get(key)
        return _EMPTY if held is None else held

    def add(self, key: Key, values: Iterable[Value]) -> None:
        held = self.vars.get(key)
        if held is None:
            held = self.vars[key] = set()
        elif key in self.wide:
            return
        n = len(held)
        held.update(values)
        if len(held) > _WIDE:
            self.widen(key, held)
        elif len(held) != n:
            for i in self.deps.get(key, ()):
                if i < 0:
                    self.rebase(-1 - i)
                elif i not in self.queued:
                    self.queued.add(i)
                    self.queue.append(i)

    def widen(self, key: Key, held: set[Value]) -> None:
        """``key`` can hold more than ``_WIDE`` values: the code does not decide what it is, so it holds
        nothing from now on (a method's ``self``: an instance of its class, as its declaration says)."""
        self.wide.add(key)
        held.clear()
        g, name = key
        scope = self.scopes[g] if g < len(self.scopes) and name != SITE else None
        if scope is not None and scope.params and name == scope.params[0]:
            if scope.kind == "method":
                held.add(("i", self.parent[g]))
            elif scope.kind == "classmethod":
                held.add(("c", self.parent[g]))

    def rebase(self, cls: int) -> None:
        """The bases of class ``cls`` grew: every resolution order holding it is computed again, and the
        operations that read one run again."""
        stale = [k for k, mro in self._mro.items() if cls in mro]
        for k in stale:
            self._mro.pop(k, None)
            for i in self._mro_users.get(k, ()):
                if i >= 0 and i not in self.queued:
                    self.queued.add(i)
                    self.queue.append(i)

    def store(self, target: Any, values: set[Value] | frozenset[Value]) -> None:
        if target[0] == "r":
            self.add(target[1], values)
            return
        for v in self.eval(target[1]):
            if v[0] == "i" or v[0] == "c" or v[0] == "m":
                self.add((v[1], target[2]), values)

    # ---- expressions ---------------------------------------------------------------------------------
    def eval(self, e: Any) -> set[Value] | frozenset[Value]:  # noqa: PLR0911
        if e is None:
            return _EMPTY
        kind = e[0]
        if kind == "r":
            key = e[1]
            deps = self.deps.get(key)
            if deps is None:
                return self.read(key)
            deps.add(self.current)  # ``read`` of a variable read before, inlined: the hot path
            held = self.vars.get(key)
            return _EMPTY if held is None else held
        if kind == "K":
            return e[1]  # type: ignore[no-any-return]
        if kind == "a":
            names = []
            while e[0] == "a":  # a chain a.b.c, outermost last: no recursion per link
                names.append(e[2])
                e = e[1]
            values = self.eval(e)
            for name in reversed(names):
                out: set[Value] = set()
                for v in values:
                    out.update(self.attribute(v, name))
                values = out
            return values
        if kind == "u":
            out = set()
            for part in e[1]:
                out.update(self.eval(part))
            return out
        if kind == "t":
            return {("i", v[1]) for v in self.eval(e[1]) if v[0] == "c"}
        if kind == "s":
            return self.super_(e[1])
        if kind == "w":
            found = self.eval(e[1])
            return found if found or not self.fallback else self.eval(e[2])
        return _EMPTY

    def super_(self, method: int) -> set[Value]:
        cls = self.parent[method]
        scope = self.scopes[method]
        if cls < 0 or self.scopes[cls].kind != "class" or not scope.params:
            return set()
        return {("S", cls, v) for v in self.read((method, scope.params[0])) if v[0] in ("i", "c")}

    def attribute(self, v: Value, name: str) -> Iterable[Value]:
        kind = v[0]
        if kind == "m":
            key = self.lookup(v[1], name)
            if key is not None:
                return self.read(self.resolve(key))
            return self.submodule(f"{self.files[self.owner[v[1]]].module}.{name}")
        if kind == "P":
            return self.submodule(f"{v[1]}.{name}")
        if kind == "i" or kind == "c":
            return self.member(self.mro(v[1]), name, v)
        if kind == "S":
            mro = self.mro(v[2][1])
            after = mro[mro.index(v[1]) + 1 :] if v[1] in mro else []
            return self.member(after, name, v[2])
        return _EMPTY

    def submodule(self, name: str) -> Iterable[Value]:
        g = self.modules.get(name)
        if g is not None:
            return {("m", g)}
        return {("P", name)} if name in self.packages else _EMPTY

    def member(self, mro: list[int], name: str, receiver: Value) -> set[Value]:
        """What ``name`` is on ``receiver`` (an instance or class), found along ``mro``: methods bound to
        it."""
        scopes, parent, deps_of, held_of = self.scopes, self.parent, self.deps, self.vars
        for k in mro:
            key = (k, name)
            deps = deps_of.get(key)
            if deps is None:
                self.read(key)
            else:
                deps.add(self.current)  # ``read`` of a variable read before, inlined
            held = held_of.get(key)
            if held is None:
                if name not in scopes[k].locals:
                    continue
                return set()
            out: set[Value] = set()
            for x in held:
                if x[0] == "f" and parent[x[1]] == k:
                    method = scopes[x[1]].kind
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
        """The C3 linearization of in-tree class ``cls`` (bases outside the tree left out); the running
        operation is noted as its reader."""
        users = self._mro_users.get(cls)
        if users is None:
            users = self._mro_users[cls] = set()
        users.add(self.current)
        found = self._mro.get(cls)
        if found is not None:
            return found
        self._mro[cls] = [cls]  # a cycle (a class named as its own base) ends here
        current, self.current = self.current, -1 - cls  # the bases' variables: a change recomputes the order
        # the bases in the order written; a base that may be one of several classes (a loop variable) lists
        # them by id, never in a set's order (which changes with PYTHONHASHSEED, and so would the MRO)
        bases = [
            k
            for e in self.bases.get(cls, ())
            for k in sorted(v[1] for v in self.eval(e) if v[0] == "c" and v[1] != cls)
        ]
        self.current = current
        found = [cls, *_c3([self.mro(k) for k in dict.fromkeys(bases)] + [list(dict.fromkeys(bases))])]
        self._mro[cls] = found
        return found

    # ---- calls ---------------------------------------------------------------------------------------
    def call(self, op: tuple[Any, ...]) -> None:
        caller, k = op[1], op[2]
        callees = list(self.eval(op[3]))
        if not callees:
            return
        compiled = self.args.get(k)
        if compiled is None:
            compiled = self.args[k] = self.arguments(op)
        result: set[Value] = set()
        site = (op[6], op[7])
        # the arguments' values, once for every callee: positions up to a *args, then keywords
        given = [_EMPTY if a is None else self.eval(a) for a in compiled[0]]
        named = [(name, self.eval(a)) for name, a in compiled[1]]
        for v in callees:
            kind = v[0]
            if kind == "f":
                self.enter(caller, v[1], None, given, named, site, result)
            elif kind == "b":
                self.enter(caller, v[1], v[2], given, named, site, result)
            elif kind == "c":
                result.add(("i", v[1]))
                _record(self.instantiates, caller, v[1], site)
                for init in self.member(self.mro(v[1]), "__init__", ("i", v[1])):
                    if init[0] == "b":
                        self.enter(caller, init[1], init[2], given, named, site, set())
            elif kind == "i":
                for fn in self.member(self.mro(v[1]), "__call__", v):
                    if fn[0] == "b":
                        self.enter(caller, fn[1], fn[2], given, named, site, result)
        if result:
            self.add((k, SITE), result)

    def enter(
        self,
        caller: int,
        fn: int,
        receiver: Value | None,
        given: list[set[Value] | frozenset[Value]],
        named: list[tuple[str, set[Value] | frozenset[Value]]],
        site: tuple[int, int],
        result: set[Value],
    ) -> None:
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
        for i, values in enumerate(given):
            j = i + shift
            if j >= len(params):
                break
            if values:
                self.add((fn, params[j]), values)
        for name, values in named:
            if values and (name in params or name in scope.kwonly):
                self.add((fn, name), values)
        key = (fn, RETURN)
        deps = self.deps.get(key)
        if deps is None:
            result.update(self.read(key))
            return
        deps.add(self.current)  # ``read`` of a variable read before, inlined
        held = self.vars.get(key)
        if held is not None:
            result.update(held)


def _record(
    table: dict[int, dict[int, list[tuple[int, int]]]], caller: int, callee: int, site: tuple[int, int]
) -> None:
    callees = table.get(caller)
    if callees is None:
        table[caller] = {callee: [site]}
        return
    sites = callees.get(callee)
    if sites is None:
        callees[callee] = [site]
    elif site not in sites:
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
