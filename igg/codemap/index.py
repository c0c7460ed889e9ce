"""The declarations of every file of a link, by name: what each language's ``Linker`` resolves names against.

Types by qualified name (and the file declaring each), methods by owner, module-level functions by qualified
name. Type names are resolved by the language of the file they are written in (``Linker.resolve_type``), so
one index serves a tree of several languages; member lookup (``find_member``) is shared: a method of the type
or of its supertypes, breadth first, an override hiding the method it overrides.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from igg.codemap.facts import CallableDecl, CallRef, FileFacts, TypeDecl
from igg.codemap.model import KeptCalls


class TypeResolver(Protocol):
    """What the index asks a language's linker (``igg.codemap.language.Linker``, which is one)."""

    def resolve_type(self, name: str, f: FileFacts, ctx: TypeDecl | None) -> str | None: ...


@dataclass(frozen=True, slots=True)
class ClassLevel:
    """A call known to reach type ``type`` but not which of its methods (or a method with no declaration in
    the source, such as a Java enum's implicit ``values()``)."""

    type: str
    returns: str | None = None
    """The qualified type the call returns, when known without a declaration (``E[]`` for ``E.values()``)."""


class Index:
    """The declarations of ``files`` (see the module doc); ``linkers`` is filled by the link, one per
    language."""

    def __init__(
        self, files: list[FileFacts], configs: Sequence[FileFacts] = (), paths: Iterable[str] | None = None
    ) -> None:
        self.files = files
        self.configs = list(configs)
        """The configuration files of the tree (``FileFacts.config``), for the linkers that read them."""
        self.paths = set(paths) if paths is not None else {f.path for f in files}
        """Every source file's path, those merged into another module (stubs) included."""
        self.types: dict[str, TypeDecl] = {}
        self.type_file: dict[str, FileFacts] = {}
        self.members: dict[str, list[CallableDecl]] = {}
        self.functions: dict[str, CallableDecl] = {}
        self.function_package: dict[int, str] = {}
        for f in files:
            for t in f.types:
                self.types[t.qualified] = t
                self.type_file[t.qualified] = f
            for c in f.callables:
                if c.owner:
                    self.members.setdefault(c.owner, []).append(c)
                else:
                    self.functions[f"{f.package}.{c.name}"] = c
                    self.function_package[id(c)] = f.package
        self.aliases: dict[int, dict[str, list[str]]] = {}
        """Per file (by id): each local name an import binds -> the targets it is bound to, in order."""
        for f in files:
            bound: dict[str, list[str]] = {}
            for i in f.imports:
                if i.alias and i.member is None and i.target not in bound.setdefault(i.alias, []):
                    bound[i.alias].append(i.target)
            self.aliases[id(f)] = bound
        self.linkers: Mapping[str, TypeResolver] = {}
        self.calls: KeptCalls | None = None
        """The calls kept between links of the tree (``link(calls=...)``), for linkers that keep theirs."""

    def resolve_type(self, name: str, f: FileFacts, ctx: TypeDecl | None) -> str | None:
        """Qualified name of the in-tree type ``name`` means in ``f`` (inside ``ctx``), or None."""
        return self.linkers[f.language].resolve_type(name, f, ctx)

    def supertypes(self, t: TypeDecl) -> list[str]:
        """The in-tree types ``t`` extends or implements, as its file's language resolves their names."""
        f = self.type_file[t.qualified]
        out = []
        for name in (*t.extends, *t.implements):
            q = self.resolve_type(name, f, self.types.get(t.outer) if t.outer else None)
            if q is not None and q != t.qualified:
                out.append(q)
        return out

    def module_of(self, fn: CallableDecl) -> str:
        """The package (dotted module) a module-level function is declared in."""
        return self.function_package.get(id(fn), "")

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
                if (m.kind == "constructor") == (call.name == "<init>") and (
                    call.name == "<init>" or m.name == call.name
                ):
                    candidates.setdefault(m.signature, m)
            if call.name != "<init>":
                queue.extend(self.supertypes(self.types[q]))
        found = _choose(list(candidates.values()), call)
        return None if found is _AMBIGUOUS else found


_AMBIGUOUS: Any = object()


def _choose(named: list[CallableDecl], call: CallRef) -> Any:
    if len(named) <= 1:
        return named[0] if named else None
    n = len(call.arg_types)
    fits = [
        m for m in named if len(m.params) == n or (m.signature.endswith("...)") and n >= len(m.params) - 1)
    ]
    if len(fits) > 1:
        typed = [
            m
            for m in fits
            if all(
                a is None or a == (p or "").rpartition(".")[2]
                for a, p in zip(call.arg_types, m.params, strict=False)
            )
        ]
        fits = typed
    return fits[0] if len(fits) == 1 else _AMBIGUOUS


def type_key(qualified: str) -> str:
    """The symbol key of a type."""
    return f"type:{qualified}"


def callable_key(c: CallableDecl, package: str) -> str:
    """The symbol key of a method (by owner and signature) or a module-level function (by its package)."""
    return f"method:{c.owner}#{c.signature}" if c.owner else f"function:{package}.{c.name}"
