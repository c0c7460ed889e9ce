"""Cross-file resolution: the facts of every file become symbols and relations of the code schema.

Names are resolved the way the languages do it, as far as the sources make it knowable. Java: nested
types of the enclosing types, then the file's and package's types, single-type imports, wildcard imports.
Python: the module's own names, then imports (every binding of a name bound twice; re-exports followed).

Imports become two kinds of edges. ``IMPORTS`` goes from module to module, one for every import statement
of every form, as an import graph has it: ``from M import n`` imports module ``M.n`` when that is a module,
else ``M`` (whatever ``n`` is: class, function, constant, type alias), ``import a.b.c`` the deepest of
``a.b.c``, ``a.b``, ``a`` in the tree; an import of code outside the tree (standard library, third party)
goes to an external ``Package`` named by its top-level name (two levels inside a namespace package the
tree shares). ``IMPORTS_SYMBOL`` goes from the module to the class, interface, enum or function a
``from`` import names, where it is defined (re-exports followed). Java: a single-type import is IMPORTS
to the file that declares the type plus IMPORTS_SYMBOL to the type; a wildcard import is IMPORTS to the
package. ``.pyi`` stubs merge into the ``.py`` module of the same name (its definitions win; a stub-only
module is a module too). Calls resolve to a
method of the receiver's type or its supertypes (``this``, ``super``, static calls, fields, parameters and
locals of declared type), choosing between Java overloads by arity and the argument types that are known;
a call that stays ambiguous or unknown is left out rather than guessed.

The result is grouped per file, in file order: the symbols a file introduces and the relations it states,
which is how the code agent proposes them (one file per turn).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from igg.agents.code.facts import CallableDecl, CallRef, FileFacts, ImportRef, TypeDecl
from igg.agents.code.javalink import ClassLevel, JavaResolver, ambiguous_owner

_TYPE_LABELS = {"class": "Class", "interface": "Interface", "enum": "Enum"}


@dataclass(kw_only=True, slots=True)
class Symbol:
    """A would-be node of the code schema."""

    key: str
    label: str
    properties: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Relation:
    """A would-be edge of the code schema between two symbol keys."""

    label: str
    source: str
    target: str
    line: int = field(default=0, compare=False)
    """The line of the file's statement behind it (the first one, when several state it; 0: not known). Not
    part of a relation's identity: two statements of one dependency are one relation, one edge."""


@dataclass(kw_only=True, slots=True)
class FilePlan:
    """What one file contributes: new symbols and the relations it states, in proposal order."""

    path: str
    language: str
    symbols: list[str] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)
    error: str | None = None


@dataclass(kw_only=True)
class CodeModel:
    """Every symbol and relation of a set of files, grouped per file."""

    symbols: dict[str, Symbol]
    files: list[FilePlan]
    shared: set[str] = field(default_factory=set)
    """Keys of modules, types and callables declared by more than one file (the first file's symbol stands
    for all of them)."""

    def relation_count(self) -> int:
        return sum(len(f.relations) for f in self.files)


def type_key(qualified: str) -> str:
    return f"type:{qualified}"


def callable_key(c: CallableDecl, package: str) -> str:
    return f"method:{c.owner}#{c.signature}" if c.owner else f"function:{package}.{c.name}"


class _Index:
    def __init__(self, files: list[FileFacts]) -> None:
        self.types: dict[str, TypeDecl] = {}
        self.type_file: dict[str, FileFacts] = {}
        self.members: dict[str, list[CallableDecl]] = {}
        self.functions: dict[str, CallableDecl] = {}
        self.function_package: dict[int, str] = {}
        self.modules: dict[str, FileFacts] = {}
        self.packages: set[str] = set()
        for f in files:
            self.modules[f.module if f.language == "python" else f.path] = f
            if f.language == "java":
                self.packages.add(f.package)
            for t in f.types:
                self.types[t.qualified] = t
                self.type_file[t.qualified] = f
            for c in f.callables:
                if c.owner:
                    self.members.setdefault(c.owner, []).append(c)
                else:
                    self.functions[f"{f.package}.{c.name}"] = c
                    self.function_package[id(c)] = f.package
        self._closures: dict[str, tuple[str, ...]] = {}
        self._walking: set[str] = set()
        self.java = JavaResolver(self)
        self.python_modules: dict[str, FileFacts] = {}
        for f in files:
            if f.language == "python":
                self.python_modules.setdefault(f.module, f)
        self.python_packages: set[str] = set()
        """Dotted names of in-tree packages (regular and namespace)."""
        for m, pf in self.python_modules.items():
            parts = m.split(".")
            self.python_packages.update(".".join(parts[:n]) for n in range(1, len(parts)))
            if _is_init(pf.path):
                self.python_packages.add(m)
        self.aliases: dict[int, dict[str, list[str]]] = {}
        for f in files:
            bound: dict[str, list[str]] = {}
            for i in f.imports:
                if i.alias and i.member is None and i.target not in bound.setdefault(i.alias, []):
                    bound[i.alias].append(i.target)
            self.aliases[id(f)] = bound

    # ---- names ---------------------------------------------------------------------------------------
    def resolve_type(self, name: str, f: FileFacts, ctx: TypeDecl | None) -> str | None:
        """Qualified name of the in-tree type ``name`` means in ``f`` (inside ``ctx``), or None."""
        if f.language == "python":
            found = self.python_name(name, f)
            return found if found in self.types else None
        head, _, rest = name.partition(".")
        q = self._java_simple(head, f, ctx)
        if q is None:
            return name if name in self.types else None
        q = f"{q}.{rest}" if rest else q
        return q if q in self.types else None

    def _java_simple(self, name: str, f: FileFacts, ctx: TypeDecl | None) -> str | None:
        t = ctx
        while t is not None:
            if t.name.rpartition(".")[2] == name:
                return t.qualified
            member = self._member_type(t, name)
            if member is not None:
                return member
            t = self.types.get(t.outer) if t.outer else None
        # JLS 6.4.1: a type of this file, then a single-type import (it shadows the package's other types of
        # that name, even when it names a type outside the tree), then the package, then on-demand imports
        local = f"{f.package}.{name}" if f.package else name
        if local in self.types and self.type_file.get(local) is f:
            return local
        targets = self.aliases[id(f)].get(name)
        if targets:
            return targets[-1] if targets[-1] in self.types else None
        if local in self.types:
            return local
        for i in f.imports:
            if i.wildcard and f"{i.target}.{name}" in self.types:
                return f"{i.target}.{name}"
        return None

    def _member_type(self, t: TypeDecl, name: str) -> str | None:
        """The member type ``name`` of ``t``: declared in it, else inherited from any of its in-tree supertypes,
        however far up (JLS 8.5: ``Feature.X`` in a class whose superclass's interface declares ``Feature``)."""
        nested = f"{t.qualified}.{name}"
        if nested in self.types:
            return nested
        for sup in self._supertype_closure(t):
            inherited = f"{sup}.{name}"
            if inherited in self.types:
                return inherited
        return None

    def _supertype_closure(self, t: TypeDecl) -> tuple[str, ...]:
        """Every in-tree supertype of ``t``, transitively, breadth first (cached). Resolving a supertype's name
        may look up member types of enclosing types in turn; a type already being walked counts as having
        none (only a cyclic, uncompilable tree gets there)."""
        known = self._closures.get(t.qualified)
        if known is not None:
            return known
        if t.qualified in self._walking:
            return ()
        self._walking.add(t.qualified)
        try:
            found: dict[str, None] = {}
            queue = self.supertypes(t)
            while queue:
                s = queue.pop(0)
                if s not in found and s != t.qualified:
                    found[s] = None
                    queue.extend(self.supertypes(self.types[s]))
        finally:
            self._walking.discard(t.qualified)
        self._closures[t.qualified] = known = tuple(found)
        return known

    def python_name(self, name: str, f: FileFacts, depth: int = 0) -> str | None:
        """The qualified name a dotted Python name refers to in module ``f`` (type, function or module)."""
        local = f"{f.module}.{name}"
        if local in self.types or local in self.functions:
            return local
        head, _, rest = name.partition(".")
        aliases = self.aliases[id(f)]
        parts = name.split(".")
        for n in range(len(parts), 0, -1):  # longest alias first: import a.b as x; a.b.c.f()
            alias = ".".join(parts[:n])
            if alias in aliases:
                for bound in reversed(aliases[alias]):  # every binding of a name bound twice
                    found = self.python_target(".".join([bound, *parts[n:]]), f, depth)
                    if found is not None:
                        return found
                return None
        if name in self.types or name in self.functions or name in self.python_modules:
            return name
        return None

    def python_target(self, target: str, f: FileFacts | None = None, depth: int = 0) -> str | None:
        """The definition an absolute dotted name reaches (a type, function or module), following
        re-exports (``from ._models import Response`` in ``pkg/__init__.py``) a few modules deep."""
        if target in self.types or target in self.functions or target in self.python_modules:
            return target
        owner, _, member = target.rpartition(".")
        module = self.python_modules.get(owner)
        if module is not None and depth < 5 and module is not f:
            return self.python_name(member, module, depth + 1)
        return None

    # ---- members -------------------------------------------------------------------------------------
    def supertypes(self, t: TypeDecl) -> list[str]:
        f = self.type_file[t.qualified]
        out = []
        for name in (*t.extends, *t.implements):
            q = self.resolve_type(name, f, self.types.get(t.outer) if t.outer else None)
            if q is not None and q != t.qualified:
                out.append(q)
        return out

    def find_member(self, owner: str, call: CallRef, include_self: bool = True) -> CallableDecl | None:
        """The method ``call`` reaches in ``owner`` or its supertypes, if the source makes it unambiguous.

        Candidates are the methods of that name in the type and its supertypes (breadth first; an override
        hides the supertype's method of the same signature); constructors are not inherited."""
        start = [owner] if include_self else list(self.supertypes(self.types[owner]))
        if call.name == "<init>":
            start = start[:1]
        seen: set[str] = set()
        candidates: dict[str, CallableDecl] = {}
        queue = list(start)
        while queue:
            q = queue.pop(0)
            if q in seen or q not in self.types:
                continue
            seen.add(q)
            for m in self.members.get(q, ()):
                if (m.kind == "constructor") == (call.name == "<init>") and (call.name == "<init>" or m.name == call.name):
                    candidates.setdefault(m.signature, m)
            if call.name != "<init>":
                queue.extend(self.supertypes(self.types[q]))
        found = self._choose(list(candidates.values()), call)
        return None if found is _AMBIGUOUS else found

    @staticmethod
    def _choose(named: list[CallableDecl], call: CallRef) -> Any:
        if len(named) <= 1:
            return named[0] if named else None
        n = len(call.arg_types)
        fits = [m for m in named if len(m.params) == n or (m.signature.endswith("...)") and n >= len(m.params) - 1)]
        if len(fits) > 1:
            typed = [m for m in fits if all(a is None or a == (p or "").rpartition(".")[2]
                                            for a, p in zip(call.arg_types, m.params, strict=False))]
            fits = typed
        return fits[0] if len(fits) == 1 else _AMBIGUOUS


_AMBIGUOUS: Any = object()


def link(files: Iterable[FileFacts], *, external_imports: bool = True,
         only: Collection[str] | None = None) -> CodeModel:
    """Resolve the facts of ``files`` (in that order) into a ``CodeModel``.

    ``only`` (paths): resolve the relations of those files alone (``igg map-code --update`` after a change
    that leaves every declaration as it was); the other files give their symbols (declarations, the
    packages and tables they name), the same symbols in the same order as a full link, and no relations."""
    files = merge_stubs(files)
    index = _Index(files)
    symbols: dict[str, Symbol] = {}
    plans: list[FilePlan] = []
    declared: dict[str, str] = {}
    """Declaration key (module, type, callable) -> the path of the file that declared it first."""
    shared: set[str] = set()

    def symbol(plan: FilePlan, key: str, label: str, props: dict[str, Any]) -> str:
        if key not in symbols:
            symbols[key] = Symbol(key=key, label=label, properties=props)
            plan.symbols.append(key)
        return key

    def declare(plan: FilePlan, key: str, label: str, props: dict[str, Any]) -> str:
        first = declared.setdefault(key, plan.path)
        if first != plan.path:
            shared.add(key)
        return symbol(plan, key, label, props)

    def package(plan: FilePlan, name: str, external: bool = False,
                declared_by: Callable[[Relation], None] | None = None) -> str:
        """The key of package ``name``, created with the packages above it that are new (outermost first,
        each CONTAINed by its parent); an external package stands alone."""
        key = f"package:{name}"
        if key in symbols:
            return key
        chain = [name]
        while not external and (parent := chain[-1].rpartition(".")[0]) and f"package:{parent}" not in symbols:
            chain.append(parent)
        for each in reversed(chain):
            symbol(plan, f"package:{each}", "Package", {"name": each, **({"external": True} if external else {})})
            parent = each.rpartition(".")[0]
            if parent and not external:
                (declared_by or plan.relations.append)(Relation("CONTAINS", f"package:{parent}", f"package:{each}"))
        return key

    for f in files:
        plan = FilePlan(path=f.path, language=f.language, error=f.error)
        plans.append(plan)
        full = only is None or f.path in only
        rel = plan.relations.append if full else _discard
        module = declare(plan, f"module:{f.path}", "Module",
                        {"name": f.module, "path": f.path, "language": f.language, "lines": f.lines,
                         **({"sha": f.sha} if f.sha else {})})
        pkg_name = f.package if f.language == "java" else f.module.rpartition(".")[0]
        if f.language == "python" and f.path.endswith("__init__.py"):
            pkg_name = f.module  # the package's own module
        if pkg_name:
            rel(Relation("CONTAINS", package(plan, pkg_name, declared_by=rel), module))
        # types, then members: a member's edges may point at any type of the file
        for t in f.types:
            props: dict[str, Any] = {"name": t.name, "package": t.package, "qualified_name": t.qualified,
                                     "file": f.path, "line": t.line}
            key = declare(plan, type_key(t.qualified), _TYPE_LABELS[t.kind], props)
            rel(Relation("CONTAINS", type_key(t.outer) if t.outer else module, key, t.line))
        for c in f.callables:
            props = {"name": c.name, "signature": c.signature, "file": f.path, "line": c.line}
            if c.owner:
                props = {"owner": c.owner, **props}
                if c.kind == "constructor":
                    props["constructor"] = True
            else:
                props["package"] = f.package
            if c.static:
                props["static"] = True
            key = declare(plan, callable_key(c, f.package), "Method" if c.owner else "Function", props)
            rel(Relation("CONTAINS", type_key(c.owner) if c.owner else module, key, c.line))
        _imports(index, f, plan, module, package, external_imports, symbols_only=not full)
        for t in f.types:  # supertypes (those outside the tree are a property of the type's symbol)
            ctx = index.types.get(t.outer) if t.outer else None
            external = []
            for name in t.extends:
                q = index.resolve_type(name, f, ctx)
                if q is None:
                    external.append(name)
                    continue
                target_kind = index.types[q].kind
                label = "EXTENDS" if t.kind == "interface" or target_kind != "interface" else "IMPLEMENTS"
                rel(Relation(label, type_key(t.qualified), type_key(q), t.line))
            for name in t.implements:
                q = index.resolve_type(name, f, ctx)
                if q is None:
                    external.append(name)
                else:
                    rel(Relation("IMPLEMENTS", type_key(t.qualified), type_key(q), t.line))
            if external:
                symbols[type_key(t.qualified)].properties["external_supertypes"] = external
        if not full:  # the tables its statements name are symbols too
            for c in f.callables:
                for ref in c.sql:
                    symbol(plan, f"table:{ref.table}", "DatabaseTable", {"name": ref.table})
            continue
        for c in f.callables:
            _callable_relations(index, f, c, plan, symbol)
        if f.language == "java":
            for t in f.types:  # the default constructor calls super()
                if t.kind == "class" and not any(m.kind == "constructor" for m in index.members.get(t.qualified, ())):
                    sup = _superclass(index, t)
                    if sup is not None:
                        plan.relations.append(Relation("CALLS", type_key(t.qualified), type_key(sup), t.line))
    # no reference cycle may outlive the link: the resolver that points back at its index would keep every fact
    # alive until the collector's next pass (0.1 s for 1,000 files)
    del index.java
    return CodeModel(symbols=symbols, files=plans, shared=shared)


def _discard(_: Relation) -> None:
    """Where the relations of a file linked for its symbols only go."""


def _is_init(path: str) -> bool:
    return path.rpartition("/")[2] in ("__init__.py", "__init__.pyi")


def merge_stubs(files: Iterable[FileFacts]) -> list[FileFacts]:
    """The files with every ``.pyi`` stub merged into the ``.py`` module of the same name: one module (the
    ``.py`` path and imports), the stub's definitions added where the ``.py`` lacks them. A stub without
    a ``.py`` stays a module of its own."""
    files = list(files)
    real = {f.module: f for f in files if f.language == "python" and f.path.endswith(".py")}
    out = []
    merged: dict[str, FileFacts] = {}
    for f in files:
        twin = real.get(f.module) if f.path.endswith(".pyi") else None
        if twin is None:
            out.append(f)
            continue
        known_types = {t.qualified for t in twin.types}
        known_calls = {(c.owner, c.name) for c in twin.callables}
        merged[twin.path] = replace(
            twin, types=[*twin.types, *(t for t in f.types if t.qualified not in known_types)],
            callables=[*twin.callables, *(c for c in f.callables if (c.owner, c.name) not in known_calls)])
    return [merged.get(f.path, f) for f in out]


def _imports(index: _Index, f: FileFacts, plan: FilePlan, module: str, package: Any, external: bool,
             symbols_only: bool = False) -> None:
    """The file's IMPORTS and IMPORTS_SYMBOL relations (``symbols_only``: just the external packages they
    name)."""
    seen: set[Relation] = set()
    line = 0
    """The line of the import statement being resolved (its relations carry it)."""

    def add(label: str, target: str) -> None:
        r = Relation(label, module, target, line)
        if target != module and r not in seen and not symbols_only:
            seen.add(r)
            plan.relations.append(r)

    for i in f.imports:
        line = i.line
        if f.language == "java":
            _java_import(index, i, add, package, external, plan)
            continue
        found = _python_import_module(index, i)
        if isinstance(found, FileFacts):
            add("IMPORTS", f"module:{found.path}")
        elif found and external:
            add("IMPORTS", package(plan, found, external=True))
        if not i.module_only and not i.wildcard and not symbols_only:
            q = index.python_target(i.target, f)
            if q in index.types:
                add("IMPORTS_SYMBOL", type_key(q))
            elif q in index.functions:
                add("IMPORTS_SYMBOL", f"function:{q}")


def _python_import_module(index: _Index, i: ImportRef) -> FileFacts | str | None:
    """The in-tree module an import reaches, or the external name it imports (or None: nothing knowable)."""
    modules = index.python_modules
    if not i.module_only and not i.wildcard and i.target in modules:
        return modules[i.target]  # from pkg import submodule
    name = i.target if i.module_only or i.source is None else i.source
    if not name:
        return None
    parts = name.split(".")
    top = parts[0]
    if top in sys.stdlib_module_names and top not in index.python_packages:
        return top  # the standard library, even when a loose file of the tree bears its name
    for n in range(len(parts), 0, -1):
        found = modules.get(".".join(parts[:n]))
        if found is not None:
            return found
    if top in index.python_packages:  # a namespace package the tree shares: name the portion
        return ".".join(parts[:2])
    return top


def _java_import(index: _Index, i: ImportRef, add: Any, package: Any, external: bool, plan: FilePlan) -> None:
    if i.wildcard and i.target in index.packages:
        add("IMPORTS", f"package:{i.target}")
        return
    if i.target in index.types:
        add("IMPORTS", f"module:{index.type_file[i.target].path}")
        add("IMPORTS_SYMBOL", type_key(i.target))
        return
    ext = i.target if i.wildcard else i.target.rpartition(".")[0]
    if not external or not ext or ext in index.packages:
        return  # an in-tree package, but a type we do not know (e.g. generated): no guess
    add("IMPORTS", package(plan, ext, external=True))


def _callable_relations(index: _Index, f: FileFacts, c: CallableDecl, plan: FilePlan, symbol: Any) -> None:
    source = callable_key(c, f.package)
    owner = index.types.get(c.owner) if c.owner else None
    seen: set[Relation] = set()

    def add(r: Relation) -> None:
        if r not in seen and r.target != r.source:
            seen.add(r)
            plan.relations.append(r)

    def class_level(target_type: str | None, line: int) -> None:
        if owner is not None and target_type is not None and target_type != owner.qualified:
            add(Relation("CALLS", type_key(owner.qualified), type_key(target_type), line))

    java = f.language == "java"
    for call in c.calls:
        target = index.java.call_target(call, f, owner) if java else _call_target(index, f, owner, call)
        if isinstance(target, CallableDecl):
            add(Relation("CALLS", source, callable_key(target, index.type_file[target.owner].package
                                                        if target.owner else _module_of(index, target)), call.line))
        elif isinstance(target, ClassLevel):
            class_level(target.type, call.line)
        elif java and ambiguous_owner(target) is not None:
            class_level(ambiguous_owner(target), call.line)
        elif isinstance(target, str):
            add(Relation("INSTANTIATES", source, type_key(target), call.line))
    if java and c.kind == "constructor" and not c.explicit_init and owner is not None:
        class_level(_implicit_super(index, owner, add, source, c.line), c.line)
    for name, line in c.instantiates:
        q = index.resolve_type(name, f, owner)
        if q is not None and (not java or index.types[q].kind != "interface"):  # new I() {...}: anonymous
            add(Relation("INSTANTIATES", source, type_key(q), line))
    for ref in c.sql:
        table = symbol(plan, f"table:{ref.table}", "DatabaseTable", {"name": ref.table})
        add(Relation("READS_FROM" if ref.op == "read" else "WRITES_TO", source, table, ref.line or c.line))


def _implicit_super(index: _Index, owner: TypeDecl, add: Any, source: str, line: int) -> str | None:
    """A constructor without ``this(...)``/``super(...)`` calls its superclass's no-argument constructor:
    CALLS to it when declared (returns None), else the superclass for a class-level edge."""
    sup = _superclass(index, owner)
    if sup is None:
        return None
    for m in index.members.get(sup, ()):
        if m.kind == "constructor" and not m.params:
            add(Relation("CALLS", source, callable_key(m, index.type_file[sup].package), line))
            return None
    return sup


def _superclass(index: _Index, t: TypeDecl) -> str | None:
    """The in-tree superclass of a class (None for an interface, an enum, or one outside the tree)."""
    if t.kind != "class" or not t.extends:
        return None
    ctx = index.types.get(t.outer) if t.outer else None
    q = index.resolve_type(t.extends[0], index.type_file[t.qualified], ctx)
    return q if q is not None and q != t.qualified and index.types[q].kind == "class" else None


def _module_of(index: _Index, fn: CallableDecl) -> str:
    return index.function_package.get(id(fn), "")


def _call_target(index: _Index, f: FileFacts, owner: TypeDecl | None, call: CallRef) -> Any:
    """A CallableDecl (CALLS), a qualified type name (Python ``T()``: INSTANTIATES), or None."""
    if call.receiver == "none":
        if f.language == "java":
            t = owner
            while t is not None:
                found = index.find_member(t.qualified, call)
                if found is not None:
                    return found
                t = index.types.get(t.outer) if t.outer else None
            return None
        q = index.python_name(call.name, f)
        if q in index.functions:
            return index.functions[q]
        if q in index.types:
            return q
        return None
    if call.receiver in ("this", "super"):
        if owner is None:
            return None
        return index.find_member(owner.qualified, call, include_self=call.receiver == "this")
    if call.receiver in ("type", "var") and call.receiver_type:
        q = index.resolve_type(call.receiver_type, f, owner)
        if q is not None:
            return index.find_member(q, call)
        if f.language == "python" and call.receiver == "type":
            m = index.python_name(call.receiver_type, f)
            if m in index.python_modules:
                return index.functions.get(f"{m}.{call.name}")
    return None
