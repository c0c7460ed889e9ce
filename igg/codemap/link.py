"""Cross-file resolution: the facts of every file become symbols and relations of the code schema.

Each file's language resolves its names (``igg.codemap.language.Linker``): Python as Python binds names
(``python/link.py``), Java as JLS 6.4.1 scopes them (``java/link.py``), over one ``Index`` of every file's
declarations. What is common is here: a Module per file CONTAINed by its package, the types and callables it
declares (CONTAINS), EXTENDS/IMPLEMENTS to in-tree supertypes (those outside the tree are a property of the
type), the file's imports as its language reads them (``IMPORTS`` module to module or to an external
``Package``; ``IMPORTS_SYMBOL`` to an imported definition), calls (``CALLS`` to a method or function, or
between types when only the type is known), instantiations and the tables its SQL reads and writes. A call
that stays ambiguous or unknown is left out rather than guessed.

The result is grouped per file, in file order: the symbols a file introduces and the relations it states,
which is how the code agent proposes them (one file per turn).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from igg.codemap import language as languages
from igg.codemap import routes
from igg.codemap.facts import CallableDecl, FileFacts
from igg.codemap.index import ClassLevel, Index, callable_key, type_key
from igg.codemap.model import SITED, CodeModel, FilePlan, KeptCalls, Relation, Symbol

if TYPE_CHECKING:
    from igg.codemap.language import Linker, Reads

__all__ = ["CodeModel", "FilePlan", "Relation", "Symbol", "callable_key", "link", "merge", "type_key"]

_TYPE_LABELS = {"class": "Class", "interface": "Interface", "enum": "Enum"}


def merge(files: Iterable[FileFacts]) -> list[FileFacts]:
    """The files with each language's declaration-only files merged into their implementation (``.pyi`` into
    ``.py``), configuration files left out (they are read by the linkers, not mapped)."""
    out = [f for f in files if f.config is None]
    for name in dict.fromkeys(f.language for f in out):
        out = languages.get(name).merge(out)
    return out


def link(
    files: Iterable[FileFacts],
    *,
    external_imports: bool = True,
    only: Collection[str] | None = None,
    reads: Reads = "all",
    calls: KeptCalls | None = None,
) -> CodeModel:
    """Resolve the facts of ``files`` (in that order) into a ``CodeModel``.

    ``only`` (paths): resolve the relations of those files alone (``igg map-code --update`` after a change
    that leaves every declaration as it was); the other files give their symbols (declarations, the
    packages and tables they name), the same symbols in the same order as a full link, and no relations.
    ``reads`` (``igg.codemap.language.Reads``): ``imports`` makes the modules, their packages and the IMPORTS
    between them alone; ``tables`` adds the declarations and the tables their SQL reads and writes; both
    leave out calls, instantiations, supertypes, imported symbols and routes. What they make is what a full
    link makes of the same kinds, in the same order. ``calls``: the calls kept from the last link of the tree
    (``KeptCalls.given``), and where this link's are kept (the model's ``calls``)."""
    files = list(files)
    configs = [f for f in files if f.config is not None]
    mapped = merge(files)
    index = Index(mapped, configs, (f.path for f in files if f.config is None))
    index.calls = calls
    linkers = {
        name: languages.get(name).linker(index)
        for name in dict.fromkeys([*(f.language for f in mapped), *(f.language for f in configs)])
    }
    index.linkers = linkers
    run = _Linking(index, linkers, external_imports, reads)
    try:
        for f in mapped:
            run.file(f, full=only is None or f.path in only)
        if reads != "all":
            return CodeModel(symbols=run.symbols, files=run.plans, shared=run.shared, calls=calls)
        routes.join(
            mapped,
            {p.path: p for p in run.plans},
            run.symbol,
            lambda plan: _stating_once(plan) if only is None or plan.path in only else _discard,
        )
    finally:
        for linker in linkers.values():
            linker.close()
        index.linkers = {}
        index.calls = None
    return CodeModel(symbols=run.symbols, files=run.plans, shared=run.shared, calls=calls)


def _discard(_: Relation) -> None:
    """Where the relations of a file linked for its symbols only go."""


def _site(plan: FilePlan, r: Relation) -> None:
    """Keep where the file states ``r`` (every statement of it, also those of a relation already stated)."""
    if r.line and r.label in SITED:
        sites = plan.sites.get(r)
        if sites is None:
            plan.sites[r] = [(r.line, r.column)]
        else:
            sites.append((r.line, r.column))


def _stating(plan: FilePlan) -> Callable[[Relation], None]:
    """Where the relations of a file linked in full go: its plan, with their sites."""
    append = plan.relations.append

    def rel(r: Relation) -> None:
        append(r)
        _site(plan, r)

    return rel


def _stating_once(plan: FilePlan) -> Callable[[Relation], None]:
    """``_stating`` of a relation the plan may state already: listed once, every site kept."""
    seen = set(plan.relations)
    append = plan.relations.append

    def rel(r: Relation) -> None:
        if r not in seen:
            seen.add(r)
            append(r)
        _site(plan, r)

    return rel


class _Linking:
    """One link's symbols and plans, filled file by file."""

    def __init__(
        self, index: Index, linkers: Mapping[str, Linker], external: bool, reads: Reads = "all"
    ) -> None:
        self.index = index
        self.reads = reads
        self.linkers = linkers
        self.external = external
        self.symbols: dict[str, Symbol] = {}
        self.plans: list[FilePlan] = []
        self.declared: dict[str, str] = {}
        """Declaration key (module, type, callable) -> the path of the file that declared it first."""
        self.shared: set[str] = set()

    def symbol(self, plan: FilePlan, key: str, label: str, props: dict[str, Any]) -> str:
        if key not in self.symbols:
            self.symbols[key] = Symbol(key=key, label=label, properties=props)
            plan.symbols.append(key)
        return key

    def declare(self, plan: FilePlan, key: str, label: str, props: dict[str, Any]) -> str:
        first = self.declared.setdefault(key, plan.path)
        if first != plan.path:
            self.shared.add(key)
        return self.symbol(plan, key, label, props)

    def package(
        self, plan: FilePlan, name: str, external: bool, rel: Callable[[Relation], None], sep: str = "."
    ) -> str:
        """The key of package ``name``, created with the packages above it that are new (outermost first,
        each CONTAINed by its parent; ``sep`` separates the parts of a name); an external package stands
        alone."""
        key = f"package:{name}"
        if key in self.symbols:
            return key
        chain = [name]
        while (
            not external
            and (parent := chain[-1].rpartition(sep)[0])
            and f"package:{parent}" not in self.symbols
        ):
            chain.append(parent)
        for each in reversed(chain):
            self.symbol(
                plan, f"package:{each}", "Package", {"name": each, **({"external": True} if external else {})}
            )
            parent = each.rpartition(sep)[0]
            if parent and not external:
                rel(Relation("CONTAINS", f"package:{parent}", f"package:{each}"))
        return key

    def file(self, f: FileFacts, *, full: bool) -> None:
        plan = FilePlan(path=f.path, language=f.language, error=f.error)
        self.plans.append(plan)
        linker = self.linkers[f.language]
        rel = _stating(plan) if full else _discard
        module = self.declare(
            plan,
            f"module:{f.path}",
            "Module",
            {
                "name": f.module,
                "path": f.path,
                "language": f.language,
                "lines": f.lines,
                **({"sha": f.sha} if f.sha else {}),
            },
        )
        pkg_name = linker.package_of(f)
        if pkg_name:
            sep = languages.get(f.language).package_separator
            rel(Relation("CONTAINS", self.package(plan, pkg_name, False, rel, sep), module))
        if self.reads == "imports":
            self._imports(f, plan, module, symbols_only=not full)
            return
        self._declarations(f, plan, module, rel)
        self._imports(f, plan, module, symbols_only=not full)
        if self.reads == "tables":
            # each callable states a table once, with every site of it (as ``_callable`` does)
            tables = _stating_once(plan) if full else _discard
            for c in f.callables:
                self._tables(f, c, plan, tables)
            return
        self._supertypes(f, rel)
        if not full:  # the tables its statements name are symbols too
            for c in f.callables:
                for ref in c.sql:
                    self.symbol(plan, f"table:{ref.table}", "DatabaseTable", {"name": ref.table})
            return
        for c in f.callables:
            self._callable(f, c, plan)
        linker.file_relations(f, rel)

    def _declarations(
        self, f: FileFacts, plan: FilePlan, module: str, rel: Callable[[Relation], None]
    ) -> None:
        """Types, then members: a member's edges may point at any type of the file. (``declare`` inlined, and
        no CONTAINS made for a file linked for its symbols alone: a big tree declares 400,000 of them.)"""
        symbols, declared, shared, path = self.symbols, self.declared, self.shared, f.path
        mine = plan.symbols.append
        stating = rel is not _discard
        for t in f.types:
            key = type_key(t.qualified)
            if declared.setdefault(key, path) != path:
                shared.add(key)
            if key not in symbols:
                props: dict[str, Any] = {
                    "name": t.name,
                    "package": t.package,
                    "qualified_name": t.qualified,
                    "file": path,
                    "line": t.line,
                }
                symbols[key] = Symbol(key=key, label=_TYPE_LABELS[t.kind], properties=props)
                mine(key)
            if stating:
                rel(Relation("CONTAINS", type_key(t.outer) if t.outer else module, key, t.line))
        for c in f.callables:
            key = callable_key(c, f.package)
            if declared.setdefault(key, path) != path:
                shared.add(key)
            if key not in symbols:
                props = {"name": c.name, "signature": c.signature, "file": path, "line": c.line}
                if c.owner:
                    props = {"owner": c.owner, **props}
                    if c.kind == "constructor":
                        props["constructor"] = True
                else:
                    props["package"] = f.package
                if c.static:
                    props["static"] = True
                symbols[key] = Symbol(key=key, label="Method" if c.owner else "Function", properties=props)
                mine(key)
            if stating:
                rel(Relation("CONTAINS", type_key(c.owner) if c.owner else module, key, c.line))

    def _imports(self, f: FileFacts, plan: FilePlan, module: str, symbols_only: bool) -> None:
        """The file's IMPORTS and IMPORTS_SYMBOL relations, as its language reads them (``symbols_only``: just
        the external packages they name)."""
        seen: set[Relation] = set()
        runtime: set[Relation] = set()
        line = column = 0
        type_only = False
        """Where the import statement being resolved starts (its relations carry it), and whether only type
        checkers read it (a relation stated by such imports alone is ``FilePlan.type_only``)."""

        imports_only = self.reads != "all"

        def add(label: str, target: str) -> None:
            if target == module or symbols_only or imports_only and label != "IMPORTS":
                return
            r = Relation(label, module, target, line, column)
            if r not in seen:
                seen.add(r)
                plan.relations.append(r)
            if type_only:
                if r not in runtime:
                    plan.type_only.add(r)
            else:
                runtime.add(r)
                plan.type_only.discard(r)
            _site(plan, r)

        sep = languages.get(f.language).package_separator

        def package(name: str, external: bool) -> str:
            return self.package(plan, name, external, plan.relations.append, sep)

        linker = self.linkers[f.language]
        no_symbols = symbols_only or imports_only  # an IMPORTS_SYMBOL's target is not looked for
        for i in f.imports:
            line, column, type_only = i.line, i.column, i.type_only
            linker.import_relations(f, i, add, package, self.external, no_symbols, not symbols_only)

    def _supertypes(self, f: FileFacts, rel: Callable[[Relation], None]) -> None:
        """EXTENDS/IMPLEMENTS to in-tree supertypes; those outside the tree are a property of the type."""
        index = self.index
        for t in f.types:
            ctx = index.types.get(t.outer) if t.outer else None
            external = []
            for name in t.extends:
                q = index.resolve_type(name, f, ctx)
                if q is None:
                    external.append(name)
                    continue
                target_kind = index.types[q].kind
                label = "EXTENDS" if t.kind == "interface" or target_kind != "interface" else "IMPLEMENTS"
                rel(Relation(label, type_key(t.qualified), type_key(q), t.line, t.column))
            for name in t.implements:
                q = index.resolve_type(name, f, ctx)
                if q is None:
                    external.append(name)
                else:
                    rel(Relation("IMPLEMENTS", type_key(t.qualified), type_key(q), t.line, t.column))
            if external:
                self.symbols[type_key(t.qualified)].properties["external_supertypes"] = external

    def _callable(self, f: FileFacts, c: CallableDecl, plan: FilePlan) -> None:
        index = self.index
        linker = self.linkers[f.language]
        source = callable_key(c, f.package)
        owner = index.types.get(c.owner) if c.owner else None
        seen: set[Relation] = set()
        append, sites = plan.relations.append, plan.sites

        def add(
            r: Relation,
        ) -> None:  # calls, instantiations, tables: all sited (``_site`` inlined: the hot path)
            if r.target != r.source or r.label == "CALLS":  # a callable calling itself: recursion
                if r not in seen:
                    seen.add(r)
                    append(r)
                if r.line:
                    found = sites.get(r)
                    if found is None:
                        sites[r] = [(r.line, r.column)]
                    else:
                        found.append((r.line, r.column))

        def class_level(target_type: str | None, line: int, column: int = 0) -> None:
            if owner is not None and target_type is not None and target_type != owner.qualified:
                add(Relation("CALLS", type_key(owner.qualified), type_key(target_type), line, column))

        for call in c.calls:
            target = linker.call_target(call, f, owner)
            if isinstance(target, CallableDecl):
                add(Relation("CALLS", source, _target_key(index, target), call.line, call.column))
            elif isinstance(target, ClassLevel):
                class_level(target.type, call.line, call.column)
            elif isinstance(target, str):
                add(Relation("INSTANTIATES", source, type_key(target), call.line, call.column))
        linker.callable_relations(f, c, owner, add, class_level)
        for name, line, column in c.instantiates:
            q = index.resolve_type(name, f, owner)
            if q is not None and linker.instantiable(q):
                add(Relation("INSTANTIATES", source, type_key(q), line, column))
        self._tables(f, c, plan, add)

    def _tables(self, f: FileFacts, c: CallableDecl, plan: FilePlan, add: Callable[[Relation], None]) -> None:
        """The tables a callable's SQL reads and writes (symbols) and its READS_FROM/WRITES_TO (through
        ``add``, sited)."""
        source = callable_key(c, f.package)
        for ref in c.sql:
            table = self.symbol(plan, f"table:{ref.table}", "DatabaseTable", {"name": ref.table})
            add(
                Relation(
                    "READS_FROM" if ref.op == "read" else "WRITES_TO",
                    source,
                    table,
                    *((ref.line, ref.column) if ref.line else (c.line, c.column)),
                )
            )


def _target_key(index: Index, target: CallableDecl) -> str:
    return callable_key(
        target, index.type_file[target.owner].package if target.owner else index.module_of(target)
    )
