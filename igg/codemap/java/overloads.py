"""Java overload resolution over the tree's declarations: which methods a call may reach, and which one.

Candidates are the methods of that name in the receiver's type and its in-tree supertypes (an override hides
the method it overrides; an interface's static methods are not inherited); a single candidate the arguments
surely do not fit is none (an overload inherited from outside the tree is called). Among them a call chooses
by arity, then by applicability of the argument types the tree knows (subtypes in the tree, primitive
widening, boxing), then the most specific, as javac does (JLS 15.12.2). Several left over: ``Ambiguous``
(their owner, when one type declares them all, gets a class-level edge). ``resolve.JavaResolver`` types the
arguments.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from igg.codemap.facts import CallableDecl, CallRef, Expr, FileFacts, TypeDecl
from igg.codemap.index import Index

_WIDENING = {"byte": 1, "short": 2, "char": 2, "int": 3, "long": 4, "float": 5, "double": 6}
_BOXES = {
    "int": "Integer",
    "long": "Long",
    "double": "Double",
    "float": "Float",
    "boolean": "Boolean",
    "char": "Character",
    "byte": "Byte",
    "short": "Short",
}
_STRING_SUPERS = {"String", "Object", "CharSequence", "Comparable", "Serializable"}
FINAL_EXTERNAL = {"String", *_BOXES.values(), *_BOXES}
"""External types whose supertypes are known to be only the ones above (for applicability)."""

Typed = tuple[str | None, str | None]
"""(in-tree qualified type, or None; the type's name as written, or None when unknown)."""

FUNCTION = "->"
"""The written type of a lambda or method reference argument: only a functional interface can take it."""
_NOT_FUNCTIONAL = {"Object", "boolean", *FINAL_EXTERNAL}
"""Outside parameter types that are surely no functional interface."""


class Overloads:
    """Candidates and the choice between them, over one ``Index`` (``expr_type`` types the arguments)."""

    def __init__(self, index: Index) -> None:
        self.index = index
        self._ancestors: dict[str, set[str]] = {}
        self._candidates: dict[tuple[str, str], list[CallableDecl]] = {}

    def expr_type(self, expr: Expr | None, f: FileFacts, ctx: TypeDecl | None, depth: int = 0) -> Typed:
        """The type of an argument expression (``JavaResolver`` knows how)."""
        raise NotImplementedError

    def ancestors(self, q: str) -> set[str]:
        """Every in-tree supertype of ``q``, transitively (``q`` included)."""
        known = self._ancestors.get(q)
        if known is None:
            known = {q}
            queue = [q]
            while queue:
                t = self.index.types.get(queue.pop())
                if t is None:
                    continue
                for s in self.index.supertypes(t):
                    if s not in known:
                        known.add(s)
                        queue.append(s)
            self._ancestors[q] = known
        return known

    def _named(self, written: str | None, f: FileFacts, ctx: TypeDecl | None) -> Typed:
        if written is None:
            return None, None
        if written.endswith("[]"):
            return None, written
        return self.index.resolve_type(written, f, ctx), written

    def candidates(self, q: str, name: str) -> list[CallableDecl]:
        """Methods named ``name`` in ``q`` and its supertypes, breadth first; an override hides the
        method it overrides (same signature)."""
        known = self._candidates.get((q, name))
        if known is None:
            known = self._candidates[(q, name)] = self._find_candidates(q, name)
        return known

    def _find_candidates(self, q: str, name: str) -> list[CallableDecl]:
        found: dict[tuple[str | None, ...], CallableDecl] = {}
        for t, m in self._members_up(q):
            # an interface's static methods are not inherited (JLS 8.4.8): only its own name calls them
            inherited_static = m.static and t != q and self.index.types[t].kind == "interface"
            if m.kind != "constructor" and m.name == name and not inherited_static:
                found.setdefault(m.params, m)
        return list(found.values())

    def _members_up(self, q: str) -> Iterator[tuple[str, CallableDecl]]:
        """(declaring type, callable) of in-tree type ``q`` and of its in-tree supertypes, breadth first, each
        type once: a member met first hides a later one of the same signature (callers keep the first)."""
        queue, seen = [q], set()
        while queue:
            t = queue.pop(0)
            if t in seen or t not in self.index.types:
                continue
            seen.add(t)
            yield from ((t, m) for m in self.index.members.get(t, ()))
            queue.extend(self.index.supertypes(self.index.types[t]))

    def choose(
        self, named: list[CallableDecl], call: CallRef, f: FileFacts, ctx: TypeDecl | None, depth: int
    ) -> Any:
        args = [self.expr_type(a, f, ctx, depth + 1) for a in (call.args or ())]
        if len(named) == 1 and call.args is not None and _arity_fits(named[0], len(call.args)):
            # the one in-tree method of that name, unless the arguments surely do not fit it: then the call is
            # of an overload the type inherits from outside the tree (setStackTrace(StackTraceElement[]) of
            # Throwable, not the tree's static setStackTrace(boolean))
            fit = all(
                self._assignable(a, p, named[0])
                for a, p in zip(args, _params(named[0], len(args)), strict=False)
            )
            return named[0] if fit else None
        fits = [m for m in named if _arity_fits(m, len(args))]
        if len(fits) > 1:
            applicable = [
                m
                for m in fits
                if all(self._assignable(a, p, m) for a, p in zip(args, _params(m, len(args)), strict=False))
            ]
            fits = applicable or fits
        if len(fits) > 1 and args and all(w for _, w in args):
            # an overload whose parameters are exactly the arguments' types is applicable and more specific
            # than any other applicable one, even where the tree cannot tell how outside types relate
            # (ClassName.get(Class<?>) over the inherited TypeName.get(Type) for a Class argument)
            exact = [
                m
                for m in fits
                if all(simple(p) == simple(w) for (_, w), p in zip(args, _params(m, len(args)), strict=False))
            ]
            if len(exact) == 1:
                fits = exact
        if len(fits) > 1:
            specific = [m for m in fits if all(m is o or self._more_specific(m, o, len(args)) for o in fits)]
            if len(specific) == 1:
                fits = specific
        if len(fits) == 1:
            return fits[0]
        pool = fits or named
        owners = {m.owner for m in pool}
        if len(owners) == 1:
            owner = next(iter(owners))
            return Ambiguous(pool, owner) if owner else None
        return Ambiguous(pool, None)

    def _param_type(self, m: CallableDecl, written: str) -> Typed:
        owner = self.index.types.get(m.owner) if m.owner else None
        f = self.index.type_file.get(m.owner) if m.owner else None
        if f is None:
            return None, written
        return self._named(written, f, owner)

    def _assignable(self, arg: Typed, param: str, m: CallableDecl) -> bool:
        aq, aw = arg
        if aq is None and aw is None:
            return True  # unknown: any parameter may take it
        pq, pw = self._param_type(m, param)
        return self.assignable(aq, aw, pq, pw)

    def assignable(self, aq: str | None, aw: str | None, pq: str | None, pw: str | None) -> bool:
        if aw == FUNCTION:  # a lambda or method reference: any interface may be functional, no class is
            if pq is not None:
                return self.index.types[pq].kind == "interface"
            return bool(pw) and simple(pw) not in _NOT_FUNCTIONAL and not (pw or "").endswith("[]")
        pw = (pw or "").rpartition(".")[2]
        aw = (aw or "").rpartition(".")[2]
        if aw == "null":
            return pw not in _WIDENING and pw != "boolean"
        if pq is not None:
            return aq is not None and pq in self.ancestors(aq)
        if pw == "Object":
            return True
        if aq is not None:  # an in-tree argument for an outside parameter type
            return pw not in FINAL_EXTERNAL and pw not in _WIDENING
        if aw == pw:
            return True
        if aw in _WIDENING and pw in _WIDENING:
            return _WIDENING[aw] <= _WIDENING[pw] and not (aw == "char" and pw == "short")
        if _BOXES.get(aw) == pw or _BOXES.get(pw) == aw:
            return True
        if aw == "String":
            return pw in _STRING_SUPERS
        if aw in FINAL_EXTERNAL or pw in FINAL_EXTERNAL:
            return False
        return True  # two outside types: the tree cannot say; do not rule it out

    def _more_specific(self, a: CallableDecl, b: CallableDecl, n: int) -> bool:
        for pa, pb in zip(_params(a, n), _params(b, n), strict=False):
            qa, wa = self._param_type(a, pa)
            qb, wb = self._param_type(b, pb)
            if not self.assignable(qa, wa, qb, wb):
                return False
        return True


@dataclass(frozen=True, slots=True)
class Ambiguous:
    """Several overloads fit; ``owner`` when they all belong to one type."""

    candidates: list[CallableDecl]
    owner: str | None


def simple(written: str | None) -> str:
    """A written type's erased simple name: ``java.util.List<String>`` -> ``List``."""
    return (written or "").partition("<")[0].rpartition(".")[2]


def _arity_fits(m: CallableDecl, n: int) -> bool:
    if m.signature.endswith("...)"):
        return n >= len(m.params) - 1
    return len(m.params) == n


def _params(m: CallableDecl, n: int) -> list[str]:
    params = [p or "Object" for p in m.params]
    if m.signature.endswith("...)") and params:
        last = params[-1]
        if n != len(params):  # the variable arity call: the element type for every trailing argument
            params = params[:-1] + [last] * (n - len(params) + 1)
    return params[:n]


def dedupe(methods: list[CallableDecl]) -> list[CallableDecl]:
    seen: dict[tuple[str | None, ...], CallableDecl] = {}
    for m in methods:
        seen.setdefault(m.params, m)
    return list(seen.values())


def is_ambiguous(target: Any) -> bool:
    return isinstance(target, Ambiguous)


def ambiguous_owner(target: Any) -> str | None:
    return target.owner if isinstance(target, Ambiguous) else None
