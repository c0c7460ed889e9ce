"""Python names across files: a module's own names, then its imports (every binding of a name bound twice;
re-exports followed), as Python binds them.

``IMPORTS`` goes from module to module, one for every import statement of every form, as an import graph has
it: ``from M import n`` imports module ``M.n`` when that is a module, else ``M`` (whatever ``n`` is: class,
function, constant, type alias), ``import a.b.c`` the deepest of ``a.b.c``, ``a.b``, ``a`` in the tree; an
import of code outside the tree (standard library, third party) goes to an external ``Package`` named by its
top-level name (two levels inside a namespace package the tree shares). ``IMPORTS_SYMBOL`` goes from the
module to the class, interface, enum or function a ``from`` import names, where it is defined (re-exports
followed). ``.pyi`` stubs merge into the ``.py`` module of the same name (``merge_stubs``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING

from igg.codemap.facts import CallableDecl, CallRef, FileFacts, ImportRef, TypeDecl
from igg.codemap.index import ClassLevel, Index, callable_key, type_key
from igg.codemap.model import CallRow, KeptCalls, Relation
from igg.codemap.python.calls import CallGraph

if TYPE_CHECKING:
    from igg.codemap.language import AddRelation, PackageKey


def _row(append: Callable[[CallRow], None], ordinal: int, r: Relation) -> None:
    """Keep relation ``r`` of the callable at ``ordinal`` as a ``CallRow``."""
    append((ordinal, r.label, r.target, r.line, r.column))


def is_init(path: str) -> bool:
    """Whether ``path`` is a package's own module (``__init__.py``/``.pyi``)."""
    return path.rpartition("/")[2] in ("__init__.py", "__init__.pyi")


class PythonLinker:
    """Python's ``Linker`` (``igg.codemap.language``) over one ``Index``."""

    def __init__(self, index: Index) -> None:
        self.index = index
        self.modules: dict[str, FileFacts] = {}
        for f in index.files:
            if f.language == "python":
                self.modules.setdefault(f.module, f)
        self._graph: CallGraph | None = None
        self._given: dict[str, dict[int, list[CallRow]]] = {}
        """Path -> the kept calls it is given (``KeptCalls.given``), by the position of their callable."""
        self._keys: dict[int, str] = {}
        """Callee scope -> the symbol key of its declaration."""
        self.packages: set[str] = set()
        """Dotted names of in-tree packages (regular and namespace)."""
        for m, pf in self.modules.items():
            parts = m.split(".")
            self.packages.update(".".join(parts[:n]) for n in range(1, len(parts)))
            if is_init(pf.path):
                self.packages.add(m)

    def close(self) -> None:
        del self.index
        self._graph = None

    def package_of(self, f: FileFacts) -> str:
        return f.module if f.path.endswith("__init__.py") else f.module.rpartition(".")[0]

    def resolve_type(self, name: str, f: FileFacts, ctx: TypeDecl | None) -> str | None:
        found = self.name(name, f)
        return found if found in self.index.types else None

    def instantiable(self, qualified: str) -> bool:
        return True

    def callable_relations(
        self,
        f: FileFacts,
        c: CallableDecl,
        owner: TypeDecl | None,
        add: Callable[[Relation], None],
        class_level: Callable[[str | None, int, int], None],
    ) -> None:
        source = callable_key(c, f.package)
        given = self.given(f)
        if given is not None:
            if given:
                ordinal = next((i for i, d in enumerate(f.callables) if d is c), -1)
                for _, label, target, line, column in given.get(ordinal, ()):
                    add(Relation(label, source, target, line, column))
            return
        graph = self.graph()
        for g in graph.scopes_of.get(id(c), ()):
            self._relations(graph, g, source, add)

    def file_relations(self, f: FileFacts, add: Callable[[Relation], None]) -> None:
        given = self.given(f)
        if given is not None:
            for _, label, target, line, column in given.get(-1, ()):
                add(Relation(label, f"module:{f.path}", target, line, column))
            return
        graph = self.graph()
        g = graph.modules.get(f.module)
        if g is not None and graph.files[graph.owner[g]] is f:
            self._relations(graph, g, f"module:{f.path}", add)

    def given(self, f: FileFacts) -> dict[int, list[CallRow]] | None:
        """The calls kept for ``f`` from the last link (``KeptCalls.given``), by the position of their
        callable (-1: the module's code), when it has them and the program is not solved anyway."""
        kept = self.index.calls
        if kept is None or self._graph is not None or f.path not in kept.given:
            return None
        found = self._given.get(f.path)
        if found is None:
            rows = kept.given[f.path]
            found = self._given[f.path] = {}
            for row in rows:
                found.setdefault(row[0], []).append(row)
            kept.made[f.path] = (f.sha, rows)
        return found

    def graph(self) -> CallGraph:
        """The tree's calls (``calls.py``), solved on first use (and kept, when the link keeps them)."""
        if self._graph is None:
            self._graph = CallGraph(f for f in self.index.files if f.language == "python").solve()
            if self.index.calls is not None:
                self._keep(self._graph, self.index.calls)
        return self._graph

    def _keep(self, graph: CallGraph, kept: KeptCalls) -> None:
        """Every file's calls as ``graph`` resolves them, kept in ``kept.made`` (``KeptCalls``): the rows its
        callables' scopes and its module's code state, in the order a link states them."""
        made: dict[str, tuple[str | None, list[CallRow]]] = {
            f.path: (f.sha, []) for f in self.index.files if f.language == "python"
        }
        for g, scope in enumerate(graph.scopes):
            f = graph.files[graph.owner[g]]
            if scope.decl >= 0:
                ordinal = scope.decl
            elif graph.modules.get(f.module) == g:
                ordinal = -1
            else:
                continue
            rows = made[f.path][1]
            self._relations(graph, g, "", partial(_row, rows.append, ordinal))
        kept.made = made
        kept.whole = True

    def _relations(self, graph: CallGraph, g: int, source: str, add: Callable[[Relation], None]) -> None:
        index = self.index
        keys = self._keys
        for callee, sites in graph.edges.get(g, {}).items():
            key = keys.get(callee)
            if key is None:
                target = graph.decl(callee)
                if target is None:
                    continue
                key = keys[callee] = callable_key(
                    target, index.type_file[target.owner].package if target.owner else index.module_of(target)
                )
            for line, column in sites:
                add(Relation("CALLS", source, key, line, column))
        if graph.scopes[g].kind == "module":
            return  # a module instantiates nothing in the schema: its calls of __init__ are its CALLS
        for cls, sites in graph.instantiates.get(g, {}).items():
            q = graph.qualified(cls)
            if q in index.types:
                for line, column in sites:
                    add(Relation("INSTANTIATES", source, type_key(q), line, column))

    # ---- names ---------------------------------------------------------------------------------------
    def name(self, name: str, f: FileFacts, depth: int = 0) -> str | None:
        """The qualified name a dotted Python name refers to in module ``f`` (type, function or module)."""
        index = self.index
        local = f"{f.module}.{name}"
        if local in index.types or local in index.functions:
            return local
        aliases = index.aliases[id(f)]
        parts = name.split(".")
        for n in range(len(parts), 0, -1):  # longest alias first: import a.b as x; a.b.c.f()
            alias = ".".join(parts[:n])
            if alias in aliases:
                for bound in reversed(aliases[alias]):  # every binding of a name bound twice
                    found = self.target(".".join([bound, *parts[n:]]), f, depth)
                    if found is not None:
                        return found
                return None
        if name in index.types or name in index.functions or name in self.modules:
            return name
        return None

    def target(self, target: str, f: FileFacts | None = None, depth: int = 0) -> str | None:
        """The definition an absolute dotted name reaches (a type, function or module), following
        re-exports (``from ._models import Response`` in ``pkg/__init__.py``) a few modules deep."""
        index = self.index
        if target in index.types or target in index.functions or target in self.modules:
            return target
        owner, _, member = target.rpartition(".")
        module = self.modules.get(owner)
        if module is not None and depth < 5 and module is not f:
            return self.name(member, module, depth + 1)
        return None

    # ---- imports -------------------------------------------------------------------------------------
    def import_relations(
        self,
        f: FileFacts,
        i: ImportRef,
        add: AddRelation,
        package: PackageKey,
        external: bool,
        symbols_only: bool,
        in_tree: bool = True,
    ) -> None:
        found = self.import_module(i)
        if isinstance(found, FileFacts):
            add("IMPORTS", f"module:{found.path}")
        elif found and external:
            add("IMPORTS", package(found, True))
        if not i.module_only and not i.wildcard and not symbols_only:
            q = self.target(i.target, f)
            if q in self.index.types:
                add("IMPORTS_SYMBOL", type_key(q))
            elif q in self.index.functions:
                add("IMPORTS_SYMBOL", f"function:{q}")

    def import_module(self, i: ImportRef) -> FileFacts | str | None:
        """The in-tree module an import reaches, or the external name it imports (or None: nothing
        knowable)."""
        modules = self.modules
        if not i.module_only and not i.wildcard and i.target in modules:
            return modules[i.target]  # from pkg import submodule
        name = i.target if i.module_only or i.source is None else i.source
        if not name:
            return None
        parts = name.split(".")
        top = parts[0]
        if top in sys.stdlib_module_names and top not in self.packages:
            return top  # the standard library, even when a loose file of the tree bears its name
        for n in range(len(parts), 0, -1):
            found = modules.get(".".join(parts[:n]))
            if found is not None:
                return found
        if top in self.packages:  # a namespace package the tree shares: name the portion
            return ".".join(parts[:2])
        return top

    # ---- calls ---------------------------------------------------------------------------------------
    def call_target(
        self, call: CallRef, f: FileFacts, owner: TypeDecl | None
    ) -> CallableDecl | ClassLevel | str | None:
        """Nothing: Python's calls and instantiations are the flows ``calls.py`` resolves
        (``callable_relations`` and ``file_relations``), not per-call references."""
        return None


def merge_stubs(files: Iterable[FileFacts]) -> list[FileFacts]:
    """The files with every ``.pyi`` stub merged into the ``.py`` module of the same name: one module (the
    ``.py`` path and imports), the stub's definitions added where the ``.py`` lacks them. A stub without
    a ``.py`` stays a module of its own."""
    files = list(files)
    real = {f.module: f for f in files if f.language == "python" and f.path.endswith(".py")}
    out = []
    merged: dict[str, FileFacts] = {}
    for f in files:
        twin = real.get(f.module) if f.language == "python" and f.path.endswith(".pyi") else None
        if twin is None:
            out.append(f)
            continue
        known_types = {t.qualified for t in twin.types}
        known_calls = {(c.owner, c.name) for c in twin.callables}
        merged[twin.path] = replace(
            twin,
            types=[*twin.types, *(t for t in f.types if t.qualified not in known_types)],
            callables=[*twin.callables, *(c for c in f.callables if (c.owner, c.name) not in known_calls)],
        )
    return [merged.get(f.path, f) for f in out]
