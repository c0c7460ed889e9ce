"""Go names across files, as the compiler binds them within one build context.

A Go import names a package: ``IMPORTS`` goes from the importing file's module to the ``Package`` of that
import path, an in-tree one (a package of the tree has that path: its folder's, or ``path_test`` for an
external test package) or an outside one (``external``: the standard library, other modules), named by its
import path either way; ``import "C"`` (cgo) names no package. Names in a file: its package's declarations
(every file of the package), then its import bindings (the alias, else the imported package's own name), and
the packages of its dot imports. Types: a struct's embedded types are its ``EXTENDS`` (an embedded interface
its ``IMPLEMENTS``), an interface's embedded interfaces its ``EXTENDS``. ``IMPLEMENTS`` is also computed, as
Go's rule is implicit: a non-interface type of the tree implements an interface of the tree when its method
set (its methods with value and pointer receivers, and those promoted from embedded in-tree types) holds every
method of the interface (its own and its embedded interfaces') by name and parameter and result types as
written, each type name qualified by its package's import path, and it embeds every outside type the interface
embeds (``io.Reader``: its methods are not known here, but embedding it brings all of them); interfaces
without methods are left out. A package-level variable's type is known when declared, built or a call's
result.

Calls: ``f()`` a function of the package (or of a dot import); ``pkg.F()`` a function of an in-tree package;
``T.M`` a method expression; ``e.M()`` where ``e``'s type is known (``analyze.py``): the method ``M`` of that
type or, through embedding, of the shallowest embedded type declaring it (two at the same depth: left out, as
the compiler rejects it). A field's type is read where its struct is declared, a call's result type where its
callee is.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from igg.codemap.facts import CallableDecl, CallRef, FileFacts, ImportRef, TypeDecl
from igg.codemap.go.scope import ALIAS, UNDERLYING, base_type
from igg.codemap.index import ClassLevel, Index, type_key
from igg.codemap.model import Relation

if TYPE_CHECKING:
    from igg.codemap.language import AddRelation, PackageKey

_DEPTH = 8
"""How deep embedded types are followed."""
_EXPR_DEPTH = 64
"""How deep an expression is typed (a chain of calls ``a.B().C().D()`` is one level per call and receiver)."""
_VERSION = re.compile(r"^v\d+$")


def guessed_name(path: str) -> str:
    """The name an outside package most likely declares: its path's last segment without a major version
    (``.../v2``), ``.vN`` suffix (``gopkg.in/yaml.v3``) or ``go-`` prefix."""
    parts = path.split("/")
    last = parts[-1]
    if _VERSION.match(last) and len(parts) > 1:
        last = parts[-2]
    last = re.sub(r"\.v\d+$", "", last)
    last = last.removeprefix("go-").removesuffix("-go")
    return re.sub(r"[^\w]", "_", last)


def split_types(written: str | None) -> list[str]:
    """``"int, map[string]int, error"`` -> its types (commas inside brackets and parentheses kept)."""
    if not written:
        return []
    out: list[str] = []
    current: list[str] = []
    depth = 0
    for ch in written:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append("".join(current).strip())
            current = []
            continue
        current.append(ch)
    if "".join(current).strip():
        out.append("".join(current).strip())
    return out


class GoLinker:
    """Go's ``Linker`` (``igg.codemap.language``) over one ``Index``."""

    def __init__(self, index: Index) -> None:
        self.index = index
        self.names: dict[str, str] = {}
        """In-tree import path -> the name its package clause declares."""
        self.file_of: dict[int, FileFacts] = {}
        self.globals: dict[str, dict[str, tuple[str, FileFacts]]] = {}
        """Package -> its package-level variables of known type (``analyze.py``'s ``var NAME`` exports)."""
        for f in index.files:
            if f.language != "go":
                continue
            self.names.setdefault(f.package, f.exports.get("package", guessed_name(f.package)))
            for key, written in f.exports.items():
                if key.startswith("var "):
                    self.globals.setdefault(f.package, {})[key[4:]] = (written, f)
            for c in f.callables:
                self.file_of[id(c)] = f
        self._bindings: dict[int, tuple[dict[str, str], list[str]]] = {}
        self._interfaces: list[tuple[str, MethodSet]] | None = None
        self._method_sets: dict[str, MethodSet] = {}

    def close(self) -> None:
        del self.index
        self.file_of = {}
        self._bindings = {}

    def package_of(self, f: FileFacts) -> str:
        return f.package

    def instantiable(self, qualified: str) -> bool:
        return False

    def callable_relations(
        self,
        f: FileFacts,
        c: CallableDecl,
        owner: TypeDecl | None,
        add: Callable[[Relation], None],
        class_level: Callable[[str | None, int, int], None],
    ) -> None:
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
        if i.target == "C" or not i.target:
            return
        if i.target in self.names:
            add("IMPORTS", package(i.target, False))
        elif external:
            add("IMPORTS", package(i.target, True))

    def bindings(self, f: FileFacts) -> tuple[dict[str, str], list[str]]:
        """The file's import bindings (local name -> import path) and its dot-imported paths."""
        found = self._bindings.get(id(f))
        if found is None:
            named: dict[str, str] = {}
            dots: list[str] = []
            for i in f.imports:
                if i.alias == "_":
                    continue
                if i.alias == ".":
                    dots.append(i.target)
                    continue
                named[i.alias or self.names.get(i.target) or guessed_name(i.target)] = i.target
            found = self._bindings[id(f)] = (named, dots)
        return found

    # ---- types ---------------------------------------------------------------------------------------
    def resolve_type(self, name: str, f: FileFacts, ctx: TypeDecl | None) -> str | None:
        """The in-tree type ``name`` written in ``f`` names; an alias is the type it aliases (when in the
        tree)."""
        q = self._named_type(name, f)
        for _ in range(_DEPTH):
            aliased = self.index.types[q].fields.get(ALIAS) if q is not None else None
            if aliased is None or q is None:
                break
            target = self._named_type(aliased, self.index.type_file[q])
            if target is None or target == q:
                break
            q = target
        return q

    def _named_type(self, name: str, f: FileFacts) -> str | None:
        name = base_type(name)
        types = self.index.types
        head, dot, rest = name.partition(".")
        if dot:
            path = self.bindings(f)[0].get(head)
            q = f"{path}.{rest}" if path is not None else None
            return q if q in types else None
        q = f"{f.package}.{name}"
        if q in types:
            return q
        for path in self.bindings(f)[1]:
            if f"{path}.{name}" in types:
                return f"{path}.{name}"
        return None

    def _embedded(self, q: str) -> list[str]:
        t = self.index.types[q]
        f = self.index.type_file[q]
        return [e for e in (self.resolve_type(n, f, None) for n in t.extends) if e is not None and e != q]

    def member(self, q: str, name: str) -> CallableDecl | None:
        """The method ``name`` of type ``q``, or of the shallowest embedded type declaring it (None when two
        at that depth do, or a field of that name is shallower)."""
        level, seen = [q], {q}
        for _ in range(_DEPTH):
            found = [m for t in level for m in self.index.members.get(t, ()) if m.name == name]
            if found:
                return found[0] if len(found) == 1 else None
            if any(name in self.index.types[t].fields for t in level):
                return None  # a field (of function type) at this depth hides deeper methods
            below = []
            for t in level:
                for e in self._embedded(t):
                    if e not in seen:
                        seen.add(e)
                        below.append(e)
            if not below:
                return None
            level = below
        return None

    def field_written(self, q: str, name: str) -> tuple[str, FileFacts] | None:
        """The type of field ``name`` of struct ``q`` (promoted fields too) as written, and the file it is
        written in."""
        level, seen = [q], {q}
        for _ in range(_DEPTH):
            found = [
                (t, self.index.types[t].fields[name]) for t in level if name in self.index.types[t].fields
            ]
            if found:
                if len(found) != 1 or any(
                    m.name == name for t in level for m in self.index.members.get(t, ())
                ):
                    return None
                t, written = found[0]
                return written, self.index.type_file[t]
            below = []
            for t in level:
                for e in self._embedded(t):
                    if e not in seen:
                        seen.add(e)
                        below.append(e)
            if not below:
                return None
            level = below
        return None

    def written_of(self, expr: Any, f: FileFacts, depth: int = 0) -> tuple[str, FileFacts] | None:
        """The type an expression of ``analyze.py`` has, as written, and the file it is written in."""
        if depth > _EXPR_DEPTH or not isinstance(expr, tuple) or not expr:
            return None
        kind = expr[0]
        if kind == "var":
            return expr[1], f
        if kind == "global":
            return self.global_written(expr[1], f, depth + 1)
        if kind in ("elem", "key"):
            inner = self.written_of(expr[1], f, depth + 1)
            if inner is None:
                return None
            part = _element(inner[0], kind == "key")
            if part is None and _named(inner[0]):  # type S []T: indexing an S gives a T
                q = self.resolve_type(inner[0], inner[1], None)
                under = self.index.types[q].fields.get(UNDERLYING) if q is not None else None
                if q is not None and under is not None:
                    return (
                        (part, self.index.type_file[q]) if (part := _element(under, kind == "key")) else None
                    )
            return (part, inner[1]) if part is not None else None
        base = self.type_of(expr[1], f, depth + 1) if kind == "field" else None
        if kind == "field":
            return self.field_written(base, expr[2]) if base is not None else None
        if kind == "call":
            target = self.call_target(expr[1], f, None, depth + 1)
            if target is None and expr[1].receiver in ("none", "type"):  # T(x), pkg.T(x): a conversion to T
                written = (
                    f"{expr[1].receiver_type}.{expr[1].name}" if expr[1].receiver == "type" else expr[1].name
                )
                return (written, f) if self.resolve_type(written, f, None) is not None else None
            if not isinstance(target, CallableDecl):
                return None
            results = split_types(target.returns)
            return (results[0], self.file_of.get(id(target), f)) if results else None
        return None

    def global_written(self, name: str, f: FileFacts, depth: int) -> tuple[str, FileFacts] | None:
        """The type of the package-level variable ``name`` (``v``, ``pkg.V``, or ``v.field``) written in
        ``f``."""
        head, dot, rest = name.partition(".")
        bindings, dots = self.bindings(f)
        if dot and head in bindings and head not in self.globals.get(f.package, {}):
            found = self.globals.get(bindings[head], {}).get(rest)
        elif dot:
            return self.written_of(("field", ("global", head), rest), f, depth + 1)
        else:
            found = self.globals.get(f.package, {}).get(name) or next(
                (self.globals[p][name] for p in dots if name in self.globals.get(p, {})), None
            )
        if found is None:
            return None
        written, where = found
        if not written.startswith("= "):
            return written, where
        callee = written[2:]
        owner, dotted, called = callee.rpartition(".")
        ref = CallRef(name=called, receiver="type", receiver_type=owner) if dotted else CallRef(name=callee)
        return self.written_of(("call", ref), where, depth + 1)

    def type_of(self, expr: Any, f: FileFacts, depth: int = 0) -> str | None:
        """The in-tree named type an expression of ``analyze.py`` has in ``f``, or None."""
        found = self.written_of(expr, f, depth)
        if found is None or not _named(found[0]):
            return None
        return self.resolve_type(found[0], found[1], None)

    # ---- calls ---------------------------------------------------------------------------------------
    def call_target(
        self, call: CallRef, f: FileFacts, owner: TypeDecl | None, depth: int = 0
    ) -> CallableDecl | ClassLevel | str | None:
        index = self.index
        if call.receiver == "none":
            found: CallableDecl | None = index.functions.get(f"{f.package}.{call.name}")
            if found is None:
                for path in self.bindings(f)[1]:
                    found = index.functions.get(f"{path}.{call.name}")
                    if found is not None:
                        break
            return found
        if call.receiver == "type" and call.receiver_type:
            imported = self.bindings(f)[0].get(call.receiver_type)
            if imported is not None and f"{f.package}.{call.receiver_type}" not in index.types:
                return index.functions.get(f"{imported}.{call.name}")
            q = self.resolve_type(call.receiver_type, f, None)
            if q is not None:
                return self.member(q, call.name)
            q = self.type_of(("global", call.receiver_type), f, depth + 1)  # v.M() of a package-level v
            return self.member(q, call.name) if q is not None else None
        if call.receiver == "expr" and call.expr is not None:
            q = self.type_of(call.expr, f, depth + 1)
            return self.member(q, call.name) if q is not None else None
        return None

    # ---- computed IMPLEMENTS -------------------------------------------------------------------------
    def method_set(self, q: str, seen: frozenset[str] = frozenset()) -> MethodSet:
        """Method name -> (parameter types, result types) of type ``q`` with its promoted methods, and the
        outside types it embeds (qualified names: their methods are not known here, but a type that embeds
        ``io.Reader`` has all of them, and an interface that embeds it asks for all of them)."""
        if q in self._method_sets:
            return self._method_sets[q]
        t = self.index.types[q]
        f = self.index.type_file[q]
        promoted: dict[str, Shape] = {}
        outside: set[str] = set()
        for written in t.extends:
            e = self.resolve_type(written, f, None)
            if e is None:
                outside.add(self.normal(base_type(written), f))
            elif e not in seen and e != q:
                methods, embedded = self.method_set(e, seen | {q})
                promoted.update(methods)
                outside.update(embedded)
        own = {m.name: self.shape(m, f) for m in self.index.members.get(q, ())}
        found = ({**promoted, **own}, frozenset(outside))
        self._method_sets[q] = found
        return found

    def shape(self, m: CallableDecl, f: FileFacts) -> Shape:
        """A method's parameter and result types, each named as the compiler would (``Entry`` in package
        ``example.com/log`` is ``example.com/log.Entry``, ``io.Reader`` is ``io.Reader``)."""
        return (
            tuple(self.normal(p or "", f) for p in m.params),
            tuple(self.normal(r, f) for r in split_types(m.returns)),
        )

    def normal(self, written: str, f: FileFacts) -> str:
        """A written type with every type name in it qualified by its package's import path."""
        bindings, dots = self.bindings(f)
        types = self.index.types

        def qualify(m: re.Match[str]) -> str:
            head, name = m.group(1), m.group(2)
            if name is not None:
                return f"{bindings.get(head, head)}.{name}"
            if head in _PREDECLARED:
                return head
            if dots and f"{f.package}.{head}" not in types:
                return next((f"{p}.{head}" for p in dots if f"{p}.{head}" in types), f"{f.package}.{head}")
            return f"{f.package}.{head}"

        return _QUALIFIED.sub(qualify, " ".join(written.split()))

    def interfaces(self) -> list[tuple[str, MethodSet]]:
        """Every in-tree interface with methods (its own, or those of the outside interfaces it embeds)."""
        if self._interfaces is None:
            self._interfaces = []
            for q, t in self.index.types.items():
                if t.kind == "interface" and self.index.type_file[q].language == "go":
                    methods, outside = self.method_set(q)
                    if methods or outside:
                        self._interfaces.append((q, (methods, outside)))
        return self._interfaces

    def file_relations(self, f: FileFacts, add: Callable[[Relation], None]) -> None:
        """The computed ``IMPLEMENTS`` of the file's non-interface types (see the module doc)."""
        for t in f.types:
            if t.kind == "interface" or not self.index.members.get(t.qualified) and not t.extends:
                continue
            have, embeds = self.method_set(t.qualified)
            if not have and not embeds:
                continue
            declared = set(self._embedded(t.qualified))
            for q, (wants, needs) in self.interfaces():
                if (
                    q not in declared
                    and needs <= embeds
                    and all(have.get(n) == shape for n, shape in wants.items())
                ):
                    add(Relation("IMPLEMENTS", type_key(t.qualified), type_key(q), t.line, t.column))


Shape = tuple[tuple[str, ...], tuple[str, ...]]
"""A method's parameter types and result types, qualified (``GoLinker.shape``)."""
MethodSet = tuple[dict[str, Shape], frozenset[str]]
"""A type's methods by name, and the outside types it embeds (``GoLinker.method_set``)."""
_QUALIFIED = re.compile(r"\b([A-Za-z_]\w*)(?:\.([A-Za-z_]\w*))?")
_PREDECLARED = frozenset(
    """bool byte complex64 complex128 error float32 float64 int int8 int16 int32 int64 rune string
uint uint8 uint16 uint32 uint64 uintptr any comparable func map chan struct interface""".split()
)


def _element(written: str, key: bool) -> str | None:
    """The element type of a slice, array, map (its key with ``key``) or channel type as written (what
    ``range`` and an index give), or None."""
    written = written.strip()
    if written.startswith("[") and not key:
        close = written.find("]")
        return written[close + 1 :].strip() if close > 0 or written.startswith("[]") else None
    if written.startswith("map["):
        depth = 0
        for at, ch in enumerate(written[3:], 3):
            depth += ch == "["
            depth -= ch == "]"
            if depth == 0:
                return written[4:at].strip() if key else written[at + 1 :].strip()
        return None
    for prefix in ("chan ", "<-chan ", "chan<- "):
        if written.startswith(prefix):
            return written[len(prefix) :].strip() if key else None
    return None


def _named(written: str) -> bool:
    """Whether a written type is a (pointer to a) named type: not a slice, map, channel or function type."""
    stripped = written.strip().lstrip("*")
    return (
        bool(stripped)
        and (stripped[0].isalpha() or stripped[0] == "_")
        and not stripped.startswith(
            ("map[", "chan ", "chan<-", "func(", "func ", "struct{", "struct {", "interface{", "interface {")
        )
    )
