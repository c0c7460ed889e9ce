"""TypeScript/JavaScript names across files, as the compiler binds them.

An import is resolved to a file (``resolve.Resolver``): ``IMPORTS`` to its module (a ``.d.ts`` merged into its
implementation is that module), or to an outside ``Package``. A named or default import of a class, interface,
enum or function is also ``IMPORTS_SYMBOL`` to its declaration, following ``export {a as b}``, ``export
default``, ``export ... from`` and ``export * from`` chains. Names in a module: its own declarations, then its
import bindings (a namespace import ``ns`` reaches ``ns.f``, ``ns.C``). Calls: a function by name, a method of
``this``/``super`` or of a receiver whose declared type is known (a parameter, a local, a field), a static
method of a class, a function of a namespace import; ``new C()`` instantiates ``C`` and calls its declared
constructor; ``super(...)`` calls the superclass's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from igg.codemap.facts import CallableDecl, CallRef, FileFacts, ImportRef, TypeDecl
from igg.codemap.index import ClassLevel, Index, callable_key, type_key
from igg.codemap.model import Relation
from igg.codemap.typescript.resolve import External, Resolver, implementation, is_relative

if TYPE_CHECKING:
    from igg.codemap.language import AddRelation, PackageKey

_DEPTH = 8
"""How many re-exports a name is followed through."""


class TypeScriptLinker:
    """TypeScript's ``Linker`` (``igg.codemap.language``) over one ``Index``."""

    def __init__(self, index: Index) -> None:
        self.index = index
        mine = [f for f in index.files if f.language == "typescript"]
        self.by_path = {f.path: f for f in mine}
        self.declared = {
            p: impl for p in index.paths if (impl := implementation(p, self.by_path)) is not None
        }
        """Each declaration file merged into an implementation -> that implementation."""
        configs = {c.path: c.config or {} for c in index.configs if c.language == "typescript"}
        self.resolver = Resolver(index.paths, configs)
        self._resolved: dict[tuple[str, str], FileFacts | External | None] = {}

    def close(self) -> None:
        del self.index
        self.by_path, self.declared = {}, {}

    def package_of(self, f: FileFacts) -> str:
        return f.module.rpartition("/")[0]

    def instantiable(self, qualified: str) -> bool:
        return self.index.types[qualified].kind == "class"

    def file_relations(self, f: FileFacts, add: Callable[[Relation], None]) -> None:
        return None

    # ---- modules -------------------------------------------------------------------------------------
    def module(self, f: FileFacts, specifier: str) -> FileFacts | External | None:
        """The module (its merged facts) or outside package ``specifier`` names in ``f``."""
        key = (f.path, specifier)
        if key not in self._resolved:
            found = self.resolver.resolve(specifier, f.path)
            self._resolved[key] = (
                (self.by_path.get(found) or self.declared.get(found)) if isinstance(found, str) else found
            )
        return self._resolved[key]

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
        specifier = i.source or i.target
        if not in_tree and is_relative(specifier):
            return  # never an outside package: nothing to resolve
        target = self.module(f, specifier)
        if isinstance(target, External):
            if external:
                add("IMPORTS", package(target.name, True))
            return
        if target is None:
            return
        add("IMPORTS", f"module:{target.path}")
        if symbols_only or i.member in (None, "*"):
            return
        found = self.exported(target, i.member, 0)
        if isinstance(found, str):
            if found in self.index.types:
                add("IMPORTS_SYMBOL", type_key(found))
            elif found in self.index.functions:
                add("IMPORTS_SYMBOL", f"function:{found}")

    # ---- names ---------------------------------------------------------------------------------------
    def exported(self, m: FileFacts, name: str, depth: int) -> str | FileFacts | None:
        """What module ``m`` exports as ``name``: a declaration's qualified name, a module (a namespace
        re-export), or None."""
        if depth > _DEPTH:
            return None
        local = m.exports.get(name)
        if local is not None:
            return self.name(local, m, depth + 1)
        if name != "default":
            for i in m.imports:
                if i.wildcard:
                    target = self.module(m, i.source or i.target)
                    if isinstance(target, FileFacts) and target is not m:
                        found = self.exported(target, name, depth + 1)
                        if found is not None:
                            return found
        return None

    def name(self, written: str, f: FileFacts, depth: int = 0) -> str | FileFacts | None:
        """What a (dotted) name written in ``f`` refers to: a declaration's qualified name, or a module."""
        index = self.index
        local = f"{f.module}.{written}"
        if local in index.types or local in index.functions:
            return local
        head, _, rest = written.partition(".")
        alias = f.exports.get(written) if rest else None  # a member of an object literal naming a function
        if alias is not None and depth <= _DEPTH:
            return self.name(alias, f, depth + 1)
        binding = next((i for i in reversed(f.imports) if i.alias == head), None)
        if binding is None or depth > _DEPTH:
            return None
        target = self.module(f, binding.source or binding.target)
        if not isinstance(target, FileFacts):
            return None
        found: str | FileFacts | None = (
            target if binding.member == "*" else self.exported(target, binding.member or "default", depth + 1)
        )
        if rest and binding.member not in (None, "*") and not isinstance(found, FileFacts):
            # an imported namespace (``export namespace util {...}``): ``util.f`` is a declaration of its
            # module
            local = target.exports.get(binding.member or "default", binding.member or "default")
            return (
                self.name(f"{local}.{rest}", target, depth + 1) if not local.startswith("export:") else None
            )
        for part in rest.split(".") if rest else ():
            if not isinstance(found, FileFacts):
                return None
            found = self.exported(found, part, depth + 1)
        return found

    def resolve_type(self, name: str, f: FileFacts, ctx: TypeDecl | None) -> str | None:
        found = self.name(name, f)
        if isinstance(found, FileFacts):  # a CommonJS module that is a class (module.exports = C)
            found = self.exported(found, "=", 0)
        return found if isinstance(found, str) and found in self.index.types else None

    # ---- calls ---------------------------------------------------------------------------------------
    def call_target(
        self, call: CallRef, f: FileFacts, owner: TypeDecl | None
    ) -> CallableDecl | ClassLevel | str | None:
        index = self.index
        if call.receiver == "none":
            found = self.name(call.name, f)
            if isinstance(
                found, FileFacts
            ):  # const f = require('./f'); f(): what the module is (module.exports = f)
                found = self.exported(found, "=", 0)
            return index.functions.get(found) if isinstance(found, str) else None
        if call.receiver in ("this", "super"):
            if owner is None:
                return None
            return index.find_member(owner.qualified, call, include_self=call.receiver == "this")
        if call.receiver == "var" and call.receiver_type:
            q = self.resolve_type(call.receiver_type, f, owner)
            return index.find_member(q, call) if q is not None else None
        if call.receiver == "type" and call.receiver_type:
            inside = self.name(f"{call.receiver_type}.{call.name}", f)  # a function of a namespace
            if isinstance(inside, str) and inside in index.functions:
                return index.functions[inside]
            found = self.name(call.receiver_type, f)
            if isinstance(found, FileFacts):
                inner = self.exported(found, call.name, 0)
                return index.functions.get(inner) if isinstance(inner, str) else None
            if isinstance(found, str) and found in index.types:
                member = index.find_member(found, call)
                return member if member is not None and member.static else None
        return None

    def callable_relations(
        self,
        f: FileFacts,
        c: CallableDecl,
        owner: TypeDecl | None,
        add: Callable[[Relation], None],
        class_level: Callable[[str | None, int, int], None],
    ) -> None:
        """``new C()`` calls ``C``'s declared constructor (the instantiation itself is INSTANTIATES)."""
        source = callable_key(c, f.package)
        for written, line, column in c.instantiates:
            q = self.resolve_type(written, f, owner)
            constructor = self.constructor(q) if q is not None else None
            if constructor is not None:
                owner_file = self.index.type_file[constructor.owner or ""]
                add(Relation("CALLS", source, callable_key(constructor, owner_file.package), line, column))

    def constructor(self, q: str) -> CallableDecl | None:
        """The constructor ``new q()`` runs: ``q``'s own, else the nearest in-tree superclass's (a class
        without one inherits its superclass's)."""
        index, seen = self.index, set()
        while q not in seen:
            seen.add(q)
            own = next((m for m in index.members.get(q, ()) if m.kind == "constructor"), None)
            if own is not None:
                return own
            t = index.types.get(q)
            supers = (
                [s for s in index.supertypes(t) if index.types[s].kind == "class"] if t is not None else []
            )
            if t is None or t.kind != "class" or not supers:
                return None
            q = supers[0]
        return None
