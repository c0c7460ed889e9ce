"""Java call resolution: typing receivers and arguments, choosing overloads, as javac would.

A receiver expression (``facts.Expr``) is typed from what the sources declare: locals, parameters,
for-each variables, catch and pattern variables (by the analyzer), fields of the type, of its supertypes
and of its enclosing types, statically imported fields, casts, ``new``, ``Outer.this``, and the declared
return type of a call (chained calls), generics erased to their bound. Method lookup follows Java's
scoping: an unqualified call goes to the innermost enclosing type that has a method of that name (and
stops there, even when that type cannot decide between its overloads), then to static imports.
Overloads are chosen by arity, then by applicability of the known argument types (subtypes in the tree,
primitive widening, boxing), then the most specific. A call that stays ambiguous between overloads of one
type, or reaches an in-tree type that does not declare the method itself (one inherited from the JDK),
is kept at the class level: ``ClassLevel(type)``; so is an enum's implicit ``values()``/``valueOf(String)``,
which has no declaration but a known return type for the rest of a chain.
"""

from __future__ import annotations

from typing import Any

from igg.codemap.facts import SWITCH, CallableDecl, CallRef, Expr, FileFacts, TypeDecl
from igg.codemap.index import ClassLevel
from igg.codemap.java.func import (
    CONTAINERS,
    ELEMENT_RETURNS,
    FUNCTION_PARAMS,
    IDENTITY,
    OBJECT_METHODS,
    SAME_ELEMENTS,
    lambda_element,
    type_arguments,
    written_params,
)
from igg.codemap.java.overloads import FUNCTION, Ambiguous, Overloads, Typed, dedupe, simple

_ENUM_IMPLICIT = {("values", 0): "[]", ("valueOf", 1): ""}
"""The static methods every enum ``E`` has without declaring them (JLS 8.9.3): ``values()`` returns ``E[]``
and ``valueOf(String)`` returns ``E``; javac calls them on ``E`` itself."""


class JavaResolver(Overloads):
    """Types Java expressions and resolves calls against one ``Index``."""

    # ---- types ---------------------------------------------------------------------------------------
    def field(self, q: str, name: str) -> Typed | None:
        """The type of field ``name`` of in-tree type ``q`` or its supertypes."""
        t = self.field_owner(q, name)
        return self._named(t.fields[name], self.index.type_file[t.qualified], t) if t is not None else None

    def field_owner(self, q: str, name: str) -> TypeDecl | None:
        """The type that declares field ``name`` of in-tree type ``q``: ``q`` or its nearest supertype."""
        queue, seen = [q], set()
        while queue:
            t = self.index.types.get(queue.pop(0))
            if t is None or t.qualified in seen:
                continue
            seen.add(t.qualified)
            if name in t.fields:
                return t
            queue.extend(self.index.supertypes(t))
        return None

    def expr_type(self, expr: Expr | None, f: FileFacts, ctx: TypeDecl | None, depth: int = 0) -> Typed:
        if expr is None or depth > 12:
            return None, None
        kind = expr[0]
        if kind in ("var", "new", "cast", "outer"):
            return self._named(expr[1], f, ctx)
        if kind == "lit":
            return None, expr[1]
        if kind == "fn":
            return None, FUNCTION
        if kind == "lambda":
            return self._lambda_param(expr[1], expr[2], expr[3], f, ctx, depth)
        if kind == "typed":
            return self._declared_lambda_param(expr[1], list(expr[2]), expr[3], f, ctx)
        if kind == "this":
            return (ctx.qualified, ctx.name) if ctx is not None else (None, None)
        if kind == "super":
            if ctx is None:
                return None, None
            sups = [s for s in self.index.supertypes(ctx) if self.index.types[s].kind == "class"]
            return (sups[0], sups[0]) if sups else (None, None)
        if kind == "name":
            return self._name(expr[1], f, ctx)
        if kind == "field":
            return self._field_of(expr[1], expr[2], f, ctx, depth)
        if kind == "elem":
            _, written = self.expr_type(expr[1], f, ctx, depth + 1)
            if written and written.endswith("[]"):
                return self._named(written[:-2], f, ctx)
            return None, None
        if kind == "call":
            return self._call_type(expr[1], f, ctx, depth)
        return None, None

    def _call_type(self, call: CallRef, f: FileFacts, ctx: TypeDecl | None, depth: int) -> Typed:
        """The type a call returns (``expr_type`` of a ``("call", call)``)."""
        target = self.call_target(call, f, ctx, depth + 1)
        if target is None and call.args and self._identity(call, f, ctx):
            return self.expr_type(call.args[0], f, ctx, depth + 1)
        if target is None and call.receiver == "expr" and call.name in ELEMENT_RETURNS:
            return self._element(call.expr, f, ctx, depth + 1)  # list.get(0), optional.get(), it.next()
        if isinstance(target, ClassLevel) and target.returns is not None:
            return self._named(target.returns, f, ctx)
        decls = [target] if isinstance(target, CallableDecl) else []
        if isinstance(target, Ambiguous):
            decls = target.candidates
        # overloads the arguments cannot tell apart still type the chain when they all return one type
        typed = [self._returns(d, call, f, ctx, depth) for d in decls]
        if typed and all(t[0] is not None for t in typed) and len({t[0] for t in typed}) == 1:
            return typed[0]
        if typed and all(t == typed[0] for t in typed):
            return typed[0]
        return None, None

    def _returns(
        self, d: CallableDecl, call: CallRef, f: FileFacts, ctx: TypeDecl | None, depth: int
    ) -> Typed:
        """The type a call of ``d`` returns: a type parameter of its owner as the receiver's type binds it, a
        self-typed method's receiver type, else the declared return type (generics erased)."""
        if d.owner is None:
            return None, None
        if d.returns_param or d.returns_self:
            own, _ = self._receiver_type(call, f, ctx, depth + 1)
            bound = None
            if own is not None and d.returns_param:
                bound = self._bind_param(
                    own, d.owner, d.returns_param, call.receiver in ("this", "super", "none")
                )
            if own is not None and bound is None and d.returns_self:
                bound = self._self_binding(own, d.owner)
            if bound is not None:
                return bound, self.index.types[bound].name
        if d.returns:
            return self._named(d.returns, self.index.type_file[d.owner], self.index.types.get(d.owner))
        return None, None

    def _identity(self, call: CallRef, f: FileFacts, ctx: TypeDecl | None) -> bool:
        """Whether ``call`` is a JDK static method that returns its first argument (``IDENTITY``): called on
        the class by its name (imported, ``java.lang``-like by its full name, or written in full) or
        statically imported, the tree declaring no type of that name."""
        for owner, names in IDENTITY.items():
            if call.name not in names:
                continue
            simple = owner.rpartition(".")[2]
            written = _dotted(call.expr) if call.receiver == "expr" and call.expr is not None else None
            if written is not None:
                if written == owner:
                    return True
                if (
                    written == simple
                    and self.index.resolve_type(simple, f, ctx) is None
                    and any(i.target in (owner, owner.rpartition(".")[0]) and not i.member for i in f.imports)
                ):
                    return True
            if call.receiver == "none" and any(
                i.target == owner and i.member in (call.name, "*") for i in f.imports
            ):
                return True
        return False

    def _receiver_type(self, call: CallRef, f: FileFacts, ctx: TypeDecl | None, depth: int) -> Typed:
        """The static type of the receiver of ``call`` (the enclosing type for ``this``, ``super`` and
        unqualified calls): what a self-typed method (``B setName(..)`` of ``Builder<B extends Builder<B>>``)
        returns when the receiver is a subtype of its owner."""
        if call.receiver == "expr":
            return self.expr_type(call.expr, f, ctx, depth)
        if call.receiver in ("this", "super", "none") and ctx is not None:
            return ctx.qualified, ctx.name
        return None, None

    def _bind_param(self, q: str, owner: str, param: str, own: bool) -> str | None:
        """The in-tree type that type parameter ``param`` of ``owner`` is on a receiver of type ``q``:
        followed from ``q`` up its supertypes' type arguments (``Builder extends AbstractBuilder<Visitor,
        Builder>``: ``B`` of ``AbstractBuilder`` is ``Builder``). When it comes down to a type parameter of
        ``q`` itself, only a call on ``this`` knows it (its erasure); on another receiver the arguments ``q``
        was given are not known (None, as for a raw supertype, an outside type or a wildcard)."""
        start = self.index.types.get(q)
        if start is None:
            return None
        value = self._binding(q, {p: ("own", p) for p in start.type_params}, owner, param)
        if value is None:
            return None
        if value[0] == "type":
            return value[1]
        if not own:
            return None
        return self.index.resolve_type(start.type_params[value[1]], self.index.type_file[q], start)

    def _binding(
        self, q: str, env: dict[str, tuple[str, str] | None], owner: str, param: str
    ) -> tuple[str, str] | None:
        """What type parameter ``param`` of ``owner`` is, given what ``q``'s own parameters are (``env``):
        ``("type", T)`` for an in-tree type that a supertype clause on the way names, else ``q``'s own
        ``env`` value it comes down to; None when a raw, outside or wildcard argument is on the way."""
        queue: list[tuple[str, dict[str, tuple[str, str] | None]]] = [(q, env)]
        seen: set[str] = set()
        while queue:
            t, env = queue.pop(0)
            if t in seen:
                continue
            seen.add(t)
            if t == owner:
                return env.get(param)
            decl = self.index.types[t]
            tf = self.index.type_file[t]
            outer = self.index.types.get(decl.outer) if decl.outer else None
            for written, args in decl.super_args.items():
                s = self.index.resolve_type(written, tf, outer)
                if s is None or s in seen or s not in self.index.types:
                    continue
                names = list(self.index.types[s].type_params)
                bound: dict[str, tuple[str, str] | None] = {}
                for name, arg in zip(names, args, strict=False):
                    if arg in decl.type_params:
                        bound[name] = env.get(arg)
                    elif arg and not arg.endswith("[]"):
                        r = self.index.resolve_type(arg, tf, outer)
                        bound[name] = ("type", r) if r is not None else None
                queue.append((s, bound))
        return None

    def _self_binding(self, q: str, owner: str) -> str | None:
        """What a self-typed method of ``owner`` returns on a ``q``: the nearest type from ``q`` up that binds
        ``owner``'s self-bounded parameter to itself (``PipeBuilder extends AbstractBuilder<PipeBuilder>``);
        None when none does (``W extends Bld<O>``: the erased bound is all that is known)."""
        queue, seen = [q], set()
        while queue:
            t = queue.pop(0)
            if t in seen or t == owner or t not in self.index.types:
                continue
            seen.add(t)
            if self._binds_itself(t, owner, first=True, depth=0):
                return t
            queue.extend(self.index.supertypes(self.index.types[t]))
        return None

    def _binds_itself(self, t: str, owner: str, first: bool, depth: int) -> bool:
        """Whether ``t`` passes itself (only as the first step) or its own self-bounded parameter up to
        ``owner``'s self-bounded parameter."""
        decl = self.index.types[t]
        ctx = self.index.types.get(decl.outer) if decl.outer else None
        for name, how in decl.self_args.items():
            if (how == "self" and not first) or depth > 12:
                continue
            s = self.index.resolve_type(name, self.index.type_file[t], ctx)
            if s == owner or (s is not None and s != t and self._binds_itself(s, owner, False, depth + 1)):
                return True
        return False

    def _name(self, name: str, f: FileFacts, ctx: TypeDecl | None) -> Typed:
        owner = self._named_field(name, f, ctx)
        if owner is not None:
            return self._named(owner.fields[name], self.index.type_file[owner.qualified], owner)
        q = self.index.resolve_type(name, f, ctx)
        return (q, name) if q is not None else (None, None)

    def _named_field(self, name: str, f: FileFacts, ctx: TypeDecl | None) -> TypeDecl | None:
        """The type declaring the field a bare identifier means: one of this type, its supertypes, then of
        the enclosing types, then a statically imported one."""
        if "." in name:
            return None
        t = ctx
        while t is not None:
            found = self.field_owner(t.qualified, name)
            if found is not None:
                return found
            t = self.index.types.get(t.outer) if t.outer else None
        for i in f.imports:
            if i.member in (name, "*") and i.target in self.index.types:
                found = self.field_owner(i.target, name)
                if found is not None:
                    return found
        return None

    def _field_of(self, base: Expr, name: str, f: FileFacts, ctx: TypeDecl | None, depth: int) -> Typed:
        q, written = self.expr_type(base, f, ctx, depth + 1)
        if q is not None:
            found = self.field(q, name)
            if found is not None:
                return found
            nested = (
                self.index.resolve_type(f"{q}.{name}", f, ctx) if f"{q}.{name}" in self.index.types else None
            )
            if nested is not None:
                return nested, name
            return None, None
        dotted = _dotted(base)
        if dotted is not None:  # a qualified type name: pkg.Type or Type.Nested
            q = self.index.resolve_type(f"{dotted}.{name}", f, ctx)
            if q is not None:
                return q, name
        return None, None

    # ---- lambdas -------------------------------------------------------------------------------------
    def _lambda_param(
        self, call: CallRef, i: int, j: int, f: FileFacts, ctx: TypeDecl | None, depth: int
    ) -> Typed:
        """Parameter ``j`` of the lambda given as argument ``i`` of ``call``: typed by the functional
        interface the chosen in-tree method takes there, or, given to a JDK container's method, the receiver's
        element type; else unknown (no call is guessed)."""
        target = self.call_target(call, f, ctx, depth + 1)
        if isinstance(target, CallableDecl):
            return self._functional_param(target, i, j)
        if target is None and i == 0 and call.receiver == "expr" and lambda_element(call.name, j):
            return self._element(call.expr, f, ctx, depth + 1)
        return None, None

    def _functional_param(self, m: CallableDecl, i: int, j: int) -> Typed:
        """Parameter ``j`` of the functional interface that parameter ``i`` of ``m`` is: the single abstract
        method's of an in-tree interface, or a type argument of a ``java.util.function`` type."""
        written = written_params(m.signature)
        if m.signature.endswith("...)") and written and i >= len(written) - 1:
            param = written[-1].removesuffix("...")
        elif i < len(written):
            param = written[i]
        else:
            return None, None
        owner = self.index.types.get(m.owner) if m.owner else None
        mf = self.index.type_file.get(m.owner) if m.owner else None
        if mf is None:
            return None, None
        return self._declared_lambda_param(param.partition("<")[0], type_arguments(param), j, mf, owner)

    def _declared_lambda_param(
        self, base: str, args: list[str], j: int, f: FileFacts, ctx: TypeDecl | None
    ) -> Typed:
        """Parameter ``j`` of a lambda given to functional interface ``base`` with type arguments ``args`` (as
        written in ``f``): the single abstract method's parameter of an in-tree interface (a type parameter
        of it bound by ``args``), or a type argument of a ``java.util.function`` type."""
        q = self.index.resolve_type(base, f, ctx)
        if q is not None:
            sam = self._sam(q) if self.index.types[q].kind == "interface" else None
            return self._sam_param(sam, j, q, args, f, ctx) if sam is not None else (None, None)
        indices = FUNCTION_PARAMS.get(base.rpartition(".")[2], ())
        if j >= len(indices) or indices[j] >= len(args):
            return None, None
        return self._in_tree(args[indices[j]], f, ctx)

    def _sam(self, q: str) -> CallableDecl | None:
        """The one abstract method of in-tree interface ``q`` (declared or inherited from in-tree interfaces;
        a default method or a redeclaration hides what it overrides), or None."""
        found: dict[tuple[str, tuple[str | None, ...]], CallableDecl] = {}
        for _, m in self._members_up(q):
            if m.kind == "method" and not m.static and m.name not in OBJECT_METHODS:
                found.setdefault((m.name, m.params), m)
        abstract = [m for m in found.values() if m.abstract]
        return abstract[0] if len(abstract) == 1 else None

    def _sam_param(
        self, sam: CallableDecl, j: int, q: str, args: list[str], f: FileFacts, ctx: TypeDecl | None
    ) -> Typed:
        """Parameter ``j`` of functional method ``sam`` of interface ``q`` given type arguments ``args``
        (written in ``f``): its declared type, or, when that is a type parameter of the method's interface,
        what ``args`` bind it to through ``q``'s supertypes (``IOConsumer<Observer>``: ``accept(T)`` takes an
        Observer)."""
        written = written_params(sam.signature)
        if j >= len(sam.params) or j >= len(written) or sam.owner is None:
            return None, None
        erased = sam.params[j]
        declaring = self.index.types[sam.owner]
        name = written[j].removeprefix("final ").strip()
        if name in declaring.type_params:
            env = {p: ("arg", a) for p, a in zip(self.index.types[q].type_params, args, strict=False) if a}
            value = self._binding(q, dict(env), sam.owner, name)
            if value is None or value[0] == "own":
                return None, None
            if value[0] == "type":
                return value[1], self.index.types[value[1]].name
            return self._in_tree(value[1], f, ctx)
        if erased is None or simple(written[j]) != simple(erased):
            return None, None
        return self._in_tree(erased, self.index.type_file[sam.owner], declaring)

    def _element(self, expr: Expr | None, f: FileFacts, ctx: TypeDecl | None, depth: int) -> Typed:
        """The element type of a JDK collection, stream or Optional declared with one type argument
        (``List<Filter> filters``), also through the methods that keep the elements (``filters.stream()``)."""
        if expr is None or depth > 12:
            return None, None
        kind = expr[0]
        if kind == "var" and len(expr) > 2 and self._container(expr[1], f, ctx):
            return self._in_tree(expr[2], f, ctx)
        if kind in ("name", "field"):
            t = (
                self._named_field(expr[1], f, ctx)
                if kind == "name"
                else self._field_owner_of(expr[1], expr[2], f, ctx, depth)
            )
            name = expr[1] if kind == "name" else expr[2]
            if t is not None and name in t.field_elements:
                tf = self.index.type_file[t.qualified]
                if self._container(t.fields[name], tf, t):
                    return self._in_tree(t.field_elements[name], tf, t)
        if kind == "call":
            c = expr[1]
            target = self.call_target(c, f, ctx, depth + 1)
            if c.receiver == "expr" and c.name in SAME_ELEMENTS and target is None:
                return self._element(c.expr, f, ctx, depth + 1)
            if (
                isinstance(target, CallableDecl)
                and target.returns_element
                and target.returns
                and target.owner
            ):
                # an in-tree method declared to return a JDK container of one element type (List<Diff<?>>)
                of, owner = self.index.type_file[target.owner], self.index.types.get(target.owner)
                if self._container(target.returns, of, owner):
                    return self._in_tree(target.returns_element, of, owner)
        return None, None

    def _field_owner_of(
        self, base: Expr, name: str, f: FileFacts, ctx: TypeDecl | None, depth: int
    ) -> TypeDecl | None:
        q, _ = self.expr_type(base, f, ctx, depth + 1)
        return self.field_owner(q, name) if q is not None else None

    def _container(self, written: str, f: FileFacts, ctx: TypeDecl | None) -> bool:
        return simple(written) in CONTAINERS and self.index.resolve_type(written, f, ctx) is None

    def _in_tree(self, written: str, f: FileFacts, ctx: TypeDecl | None) -> Typed:
        found = self._named(written, f, ctx) if written else (None, None)
        return found if found[0] is not None else (None, None)

    # ---- calls ---------------------------------------------------------------------------------------
    def call_target(self, call: CallRef, f: FileFacts, ctx: TypeDecl | None, depth: int = 0) -> Any:
        """A CallableDecl, a ClassLevel, an Ambiguous (between types), or None."""
        index = self.index
        if call.receiver == "none":
            return self._unqualified_target(call, f, ctx, depth)
        if call.receiver in ("this", "super"):
            if ctx is None:
                return None
            if call.receiver == "this":
                start = [ctx.qualified]
            else:
                start = [
                    s
                    for s in index.supertypes(ctx)
                    if call.name != "<init>" or index.types[s].kind == "class"
                ]
            if call.name == "<init>":
                if not start:
                    return None
                ctors = [m for m in index.members.get(start[0], ()) if m.kind == "constructor"]
                return self.choose(ctors, call, f, ctx, depth) if ctors else ClassLevel(start[0])
            candidates = [c for s in start for c in self.candidates(s, call.name)]
            chosen = self.choose(dedupe(candidates), call, f, ctx, depth) if candidates else None
            return chosen if chosen is not None or not candidates else ClassLevel(start[0])
        if call.receiver == "expr":
            q, _ = self.expr_type(call.expr, f, ctx, depth)
            if q is None:
                return None
            if call.name == SWITCH:
                return ClassLevel(q) if index.types[q].kind == "enum" else None
            found = self._method_of(q, call, f, ctx, depth)
            return ClassLevel(q) if found is None else found  # else a method inherited from outside the tree
        return None

    def _unqualified_target(self, call: CallRef, f: FileFacts, ctx: TypeDecl | None, depth: int) -> Any:
        """What a call without a receiver (``m()``) reaches: a method of the innermost enclosing type that has
        one of that name, else a statically imported one."""
        index = self.index
        t = ctx
        while t is not None:  # the innermost type with a method of that name decides, and only it
            found = self._method_of(t.qualified, call, f, ctx, depth)
            if found is not None:
                return found
            if self.candidates(t.qualified, call.name):  # none fits: an overload inherited from outside
                return ClassLevel(t.qualified)
            t = index.types.get(t.outer) if t.outer else None
        for i in f.imports:
            if i.member in (call.name, "*") and i.target in index.types:
                found = self._method_of(i.target, call, f, ctx, depth)
                if found is not None:
                    return found
        return None

    def _method_of(self, q: str, call: CallRef, f: FileFacts, ctx: TypeDecl | None, depth: int) -> Any:
        """The method ``call`` reaches among those named so in ``q`` and its supertypes, an enum's implicit
        ``values()``/``valueOf(String)`` (a class-level call that knows its return type), or None when ``q``
        has no method of that name in the tree."""
        candidates = self.candidates(q, call.name)
        if candidates:
            return self.choose(candidates, call, f, ctx, depth)
        suffix = _ENUM_IMPLICIT.get((call.name, len(call.args or ())))
        if suffix is not None and self.index.types[q].kind == "enum":
            return ClassLevel(q, returns=q + suffix)
        return None


def _dotted(expr: Expr) -> str | None:
    if expr[0] == "name":
        return str(expr[1])
    if expr[0] == "field":
        head = _dotted(expr[1])
        return f"{head}.{expr[2]}" if head is not None else None
    return None
