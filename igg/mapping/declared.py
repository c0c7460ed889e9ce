"""What a file declares that other files read (``changed_names``): a change of it decides which files
``igg map-code --update`` links again (``igg.mapping.remap``, ``igg.mapping.bodies``)."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from igg.codemap.facts import CallableDecl, FileFacts
from igg.codemap.language import get as get_language


def _declarations(f: FileFacts) -> tuple[Any, ...]:
    """What other files' linking reads of ``f`` besides its types, callables, exported names and imports
    (``_imported``): module, package, language, a parse error, the tables its statements name (line numbers
    left out), what it exports as a whole (``default``, ``export =``), for a configuration file what it says,
    and its HTTP routes, mounts and requests (joined across files and services: any change to them links
    every file again)."""
    return (
        f.module,
        f.package,
        f.language,
        f.error,
        sorted({r.table for c in f.callables for r in c.sql}),
        f.config,
        {k: v for k, v in f.exports.items() if k.partition(".")[0] in _WHOLE_EXPORTS},
        f.http,
    )


_WHOLE_EXPORTS = ("default", "=")
"""Exported names that stand for the module itself, which files import without naming them."""


def _declared(c: CallableDecl) -> tuple[Any, ...]:
    """A callable's declaration: no body, no line."""
    return (
        c.kind,
        c.name,
        c.signature,
        c.owner,
        c.params,
        c.static,
        c.returns,
        c.returns_self,
        c.returns_param,
        c.returns_element,
        c.explicit_init,
    )


def _imports(f: FileFacts) -> Counter[tuple[Any, ...]]:
    """A file's imports, their lines and columns left out: (target, alias, wildcard, module only, source,
    member, type only)."""
    return Counter(
        (i.target, i.alias, i.wildcard, i.module_only, i.source, i.member, i.type_only) for i in f.imports
    )


def _imported(old: FileFacts, new: FileFacts) -> set[str] | None:
    """The names bound by the imports the change from ``old`` to ``new`` added or removed (its alias, the
    name it imports, its target's last name, and the first for Python's ``import a.b``): other files read a
    file's imports only where it passes a name on (``from pkg import X`` where ``pkg`` imports ``X``,
    TypeScript's ``export { X }`` of an imported ``X``), and mention that name. None when one imports every
    name of a module (``from m import *``, ``export * from``, ``import a.b.*``: no name tells what it binds),
    or a name it binds is one the file's declarations are written with (a supertype, a field's or
    parameter's type, a return type): the types other files see through them change then."""
    gone, come = _imports(old), _imports(new)
    if gone == come:
        return set()
    names: set[str] = set()
    for target, alias, wildcard, module_only, _, member, _ in (gone - come) + (come - gone):
        if wildcard or member == "*" and not alias:  # TypeScript's ``import * as ns`` binds ``ns``
            return None
        # a module's path (TypeScript's "./is.js", Go's "example.com/m/p"): its file or folder, else a name
        last = target.rpartition("/")[2].partition(".")[0] if "/" in target else target.rpartition(".")[2]
        for name in (alias, member, last, target.partition(".")[0] if module_only else None):
            if name:
                names.add(name.removeprefix("export:"))
    if names & _written(old) or names & _written(new):
        return None
    return names


def _written(f: FileFacts) -> set[str]:
    """Every identifier the declarations of ``f`` are written with (their callables' and types' declared
    parts: ``_declared``, supertypes, fields, type parameters)."""
    parts: list[Any] = [_declared(c) for c in f.callables]
    parts.extend(
        (t.extends, t.implements, t.outer, t.self_args, t.type_params, t.super_args, t.fields)
        for t in f.types
    )
    parts.extend(t.field_elements for t in f.types)
    return set(_IDENTIFIER.findall(repr(parts)))


_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")


def imports_flow(old: FileFacts, new: FileFacts) -> bool:
    """Whether the change from ``old`` to ``new`` changed what the file's names hold for its language's
    calls: its value flows (``value_flows``), or, where calls are one program (Python), its imports, which
    bind its module's names."""
    if value_flows(old) != value_flows(new):
        return True
    return get_language(new.language).keeps_calls and _imports(old) != _imports(new)


def value_flows(f: FileFacts) -> list[tuple[Any, ...]]:
    """A file's value flows (Python: ``FileFacts.flow``) without the lines and columns of its calls. Values
    flow across modules without a name changing (what a function returns, what a call passes to another
    module's parameters): a change of them may change the calls of any file."""
    return [
        (
            s.name,
            s.kind,
            s.parent,
            s.params,
            s.kwonly,
            s.locals,
            s.bases,
            s.wildcards,
            [op[:5] if op[0] == "C" else op for op in s.ops],
        )
        for s in f.flow or ()
    ]


def _abstract(f: FileFacts) -> Counter[tuple[Any, ...]]:
    """The abstract methods of ``f`` where its language types lambdas by them (``functional_types``)."""
    if not get_language(f.language).functional_types:
        return Counter()
    return Counter(_declared(c) for c in f.callables if c.abstract)


def changed_names(old: FileFacts, new: FileFacts) -> set[str] | None:
    """The names whose meaning the change from ``old`` to ``new`` (one file) may alter for other files: those
    of the callables and fields added, removed or redeclared, and of the types added or removed (empty: only
    bodies and lines changed). None when the change reaches further than names say: another module name,
    package, language, parse error or table, an import that ``_imported`` cannot tell (one of every name, or
    of a name the declarations are written with), or a type whose kind, supertypes or enclosing type changed
    (every subtype's members would change with it), or an abstract method that came, went or was redeclared
    (it may be an interface's functional method, which types the parameters of lambdas in files that need not
    name it). An import added or removed changes the names it binds. A Python file's value flows
    (``value_flows``) and imports reach further than names too, but only as far as the calls of its language
    (``imports_flow``, ``remap._reach``)."""
    if _declarations(old) != _declarations(new) or _abstract(old) != _abstract(new):
        return None
    imported = _imported(old, new)
    if imported is None:
        return None
    exported = old.exports.keys() | new.exports.keys()  # TypeScript's: files that import one name it
    names = {part for k in exported if old.exports.get(k) != new.exports.get(k) for part in k.split(".")}
    names |= imported
    before = {t.qualified: t for t in old.types}
    after = {t.qualified: t for t in new.types}
    for q in before.keys() | after.keys():
        a, b = before.get(q), after.get(q)
        if a is None or b is None:
            names.add(q.rpartition(".")[2])
            names.add("<init>")  # a class comes or goes with its constructors
            continue
        if (a.kind, a.name, a.extends, a.implements, a.outer, a.self_args, a.type_params, a.super_args) != (
            b.kind,
            b.name,
            b.extends,
            b.implements,
            b.outer,
            b.self_args,
            b.type_params,
            b.super_args,
        ):
            return None
        for fields in ((a.fields, b.fields), (a.field_elements, b.field_elements)):
            # a key that is no name (Go's underlying or aliased type) changes what the type's name gives
            names.update(
                k if k.isidentifier() else q.rpartition(".")[2]
                for k in fields[0].keys() | fields[1].keys()
                if fields[0].get(k) != fields[1].get(k)
            )
    gone = Counter(_declared(c) for c in old.callables)
    come = Counter(_declared(c) for c in new.callables)
    method_sets = get_language(new.language).method_sets
    for kind, name, _, owner, *_rest in (gone - come) + (come - gone):
        names.add(name)
        if kind == "constructor":
            names.add("<init>")
        if owner and (kind == "constructor" or method_sets):  # Go: the type's computed IMPLEMENTS may change
            names.add(owner.rpartition(".")[2])
    return names


def names_told(old: FileFacts, new: FileFacts) -> bool:
    """Whether the change of a file from ``old`` to ``new`` keeps its module and changes names alone, which
    ``changed_names`` tells (its value flows may change too: ``link_bodies``)."""
    return old.module == new.module and changed_names(old, new) is not None


__all__ = ["changed_names", "imports_flow", "names_told", "value_flows"]
