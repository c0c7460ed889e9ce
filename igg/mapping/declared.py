"""What a file declares that other files read (``changed_names``): a change of it decides which files
``igg map-code --update`` links again (``igg.mapping.remap``, ``igg.mapping.bodies``)."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

from igg.codemap.facts import CallableDecl, FileFacts
from igg.codemap.language import get as get_language


def _declarations(f: FileFacts) -> tuple[Any, ...]:
    """What other files' linking reads of ``f`` besides its types, callables and exported names: module,
    package, language, a parse error, its imports, the tables its statements name (line numbers left out),
    what it exports as a whole (``default``, ``export =``), for a configuration file what it says, and its
    HTTP routes, mounts and requests (joined across files and services: any change to them links every file
    again)."""
    return (
        f.module,
        f.package,
        f.language,
        f.error,
        [replace(i, line=0, column=0) for i in f.imports],
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
    return Counter(_declared(c) for c in f.callables if c.abstract)


def changed_names(old: FileFacts, new: FileFacts) -> set[str] | None:
    """The names whose meaning the change from ``old`` to ``new`` (one file) may alter for other files: those
    of the callables and fields added, removed or redeclared, and of the types added or removed (empty: only
    bodies and lines changed). None when the change reaches further than names say: another module name,
    package, language, parse error, import or table, or a type whose kind, supertypes or enclosing type
    changed (every subtype's members would change with it), or an abstract method that came, went or was
    redeclared (it may be an interface's functional method, which types the parameters of lambdas in files
    that need not name it). A Python file's value flows (``value_flows``) reach further than names too, but
    only as far as the calls of its language (``remap._reach``)."""
    if _declarations(old) != _declarations(new) or _abstract(old) != _abstract(new):
        return None
    exported = old.exports.keys() | new.exports.keys()  # TypeScript's: files that import one name it
    names = {part for k in exported if old.exports.get(k) != new.exports.get(k) for part in k.split(".")}
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


__all__ = ["changed_names", "names_told", "value_flows"]
