"""Java names across files, as JLS 6.4.1 scopes them: nested types of the enclosing types (and member types
inherited from their supertypes), then the file's own types, single-type imports, the package's types,
on-demand imports. A single-type import is IMPORTS to the file that declares the type plus IMPORTS_SYMBOL to
the type; a wildcard import is IMPORTS to the package. Calls go through ``resolve.JavaResolver``; a
constructor without ``this(...)``/``super(...)`` and a class without constructors call ``super()``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from igg.codemap.facts import CallableDecl, CallRef, FileFacts, ImportRef, TypeDecl
from igg.codemap.index import ClassLevel, Index, callable_key, type_key
from igg.codemap.java.overloads import ambiguous_owner
from igg.codemap.java.resolve import JavaResolver
from igg.codemap.model import Relation

if TYPE_CHECKING:
    from igg.codemap.language import AddRelation, PackageKey


class JavaLinker:
    """Java's ``Linker`` (``igg.codemap.language``) over one ``Index``."""

    def __init__(self, index: Index) -> None:
        self.index = index
        self.packages = {f.package for f in index.files if f.language == "java"}
        self._closures: dict[str, tuple[str, ...]] = {}
        self._walking: set[str] = set()
        self.resolver = JavaResolver(index)

    def close(self) -> None:
        # the resolver points back at the index: no reference cycle may outlive the link (it would keep every
        # fact alive until the collector's next pass, 0.1 s for 1,000 files)
        del self.resolver
        del self.index

    def package_of(self, f: FileFacts) -> str:
        return f.package

    def instantiable(self, qualified: str) -> bool:
        return self.index.types[qualified].kind != "interface"  # new I() {...}: an anonymous class

    # ---- names ---------------------------------------------------------------------------------------
    def resolve_type(self, name: str, f: FileFacts, ctx: TypeDecl | None) -> str | None:
        types = self.index.types
        head, _, rest = name.partition(".")
        q = self._simple(head, f, ctx)
        if q is None:
            return name if name in types else None
        q = f"{q}.{rest}" if rest else q
        return q if q in types else None

    def _simple(self, name: str, f: FileFacts, ctx: TypeDecl | None) -> str | None:
        index = self.index
        t = ctx
        while t is not None:
            if t.name.rpartition(".")[2] == name:
                return t.qualified
            member = self._member_type(t, name)
            if member is not None:
                return member
            t = index.types.get(t.outer) if t.outer else None
        # JLS 6.4.1: a type of this file, then a single-type import (it shadows the package's other types of
        # that name, even when it names a type outside the tree), then the package, then on-demand imports
        local = f"{f.package}.{name}" if f.package else name
        if local in index.types and index.type_file.get(local) is f:
            return local
        targets = index.aliases[id(f)].get(name)
        if targets:
            return targets[-1] if targets[-1] in index.types else None
        if local in index.types:
            return local
        for i in f.imports:
            if i.wildcard and f"{i.target}.{name}" in index.types:
                return f"{i.target}.{name}"
        return None

    def _member_type(self, t: TypeDecl, name: str) -> str | None:
        """The member type ``name`` of ``t``: declared in it, else inherited from any of its in-tree
        supertypes, however far up (JLS 8.5: ``Feature.X`` in a class whose superclass's interface declares
        ``Feature``)."""
        nested = f"{t.qualified}.{name}"
        if nested in self.index.types:
            return nested
        for sup in self._supertype_closure(t):
            inherited = f"{sup}.{name}"
            if inherited in self.index.types:
                return inherited
        return None

    def _supertype_closure(self, t: TypeDecl) -> tuple[str, ...]:
        """Every in-tree supertype of ``t``, transitively, breadth first (cached). Resolving a supertype's
        name may look up member types of enclosing types in turn; a type already being walked counts as having
        none (only a cyclic, uncompilable tree gets there)."""
        known = self._closures.get(t.qualified)
        if known is not None:
            return known
        if t.qualified in self._walking:
            return ()
        self._walking.add(t.qualified)
        try:
            found: dict[str, None] = {}
            queue = self.index.supertypes(t)
            while queue:
                s = queue.pop(0)
                if s not in found and s != t.qualified:
                    found[s] = None
                    queue.extend(self.index.supertypes(self.index.types[s]))
        finally:
            self._walking.discard(t.qualified)
        self._closures[t.qualified] = known = tuple(found)
        return known

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
        index = self.index
        if i.wildcard and i.target in self.packages:
            add("IMPORTS", f"package:{i.target}")
            return
        if i.target in index.types:
            add("IMPORTS", f"module:{index.type_file[i.target].path}")
            add("IMPORTS_SYMBOL", type_key(i.target))
            return
        ext = i.target if i.wildcard else i.target.rpartition(".")[0]
        if not external or not ext or ext in self.packages:
            return  # an in-tree package, but a type we do not know (e.g. generated): no guess
        add("IMPORTS", package(ext, True))

    # ---- calls ---------------------------------------------------------------------------------------
    def call_target(
        self, call: CallRef, f: FileFacts, owner: TypeDecl | None
    ) -> CallableDecl | ClassLevel | str | None:
        target = self.resolver.call_target(call, f, owner)
        if isinstance(target, CallableDecl | ClassLevel):
            return target
        ambiguous = ambiguous_owner(target)
        return ClassLevel(ambiguous) if ambiguous is not None else None

    def callable_relations(
        self,
        f: FileFacts,
        c: CallableDecl,
        owner: TypeDecl | None,
        add: Callable[[Relation], None],
        class_level: Callable[[str | None, int, int], None],
    ) -> None:
        if c.kind == "constructor" and not c.explicit_init and owner is not None:
            site = (
                c.body_site if c.body_site[0] else (c.line, c.column)
            )  # javac's implicit super() is at the {
            class_level(self._implicit_super(owner, add, callable_key(c, f.package), site), *site)

    def _implicit_super(
        self, owner: TypeDecl, add: Callable[[Relation], None], source: str, site: tuple[int, int]
    ) -> str | None:
        """A constructor without ``this(...)``/``super(...)`` calls its superclass's no-argument constructor:
        CALLS to it when declared (returns None), else the superclass for a class-level edge."""
        sup = self._superclass(owner)
        if sup is None:
            return None
        for m in self.index.members.get(sup, ()):
            if m.kind == "constructor" and not m.params:
                add(Relation("CALLS", source, callable_key(m, self.index.type_file[sup].package), *site))
                return None
        return sup

    def _superclass(self, t: TypeDecl) -> str | None:
        """The in-tree superclass of a class (None for an interface, an enum, or one outside the tree)."""
        if t.kind != "class" or not t.extends:
            return None
        ctx = self.index.types.get(t.outer) if t.outer else None
        q = self.resolve_type(t.extends[0], self.index.type_file[t.qualified], ctx)
        return q if q is not None and q != t.qualified and self.index.types[q].kind == "class" else None

    def file_relations(self, f: FileFacts, add: Callable[[Relation], None]) -> None:
        for t in f.types:  # the default constructor calls super()
            if t.kind == "class" and not any(
                m.kind == "constructor" for m in self.index.members.get(t.qualified, ())
            ):
                sup = self._superclass(t)
                if sup is not None:
                    add(Relation("CALLS", type_key(t.qualified), type_key(sup), t.line, t.column))
