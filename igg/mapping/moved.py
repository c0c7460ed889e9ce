"""The names by which other files find a file added or removed (``moved_names``), which decide the files an
update links with it (``igg.mapping.remap._moved_reach``): the files of its language that mention one of them,
or import a path whose last part is its name (``imports_stem``)."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from igg.codemap.facts import FileFacts, TypeDecl
from igg.codemap.language import get as get_language


def moved_names(f: FileFacts, facts: Sequence[FileFacts]) -> tuple[set[str], set[str]] | None:
    """The names by which other files find what ``f``, a file added or removed, declares (its callables',
    types' and exports' names, its own name, ``<init>`` for a class or constructor, a method's type where
    method sets decide what implements what: as ``declared.changed_names`` tells them of a declaration that
    came or went; a method's name only when another file may call it on a type it does not name:
    ``_dispatched_alone``), and the last part of the paths they import it by (its name without suffixes: a
    path import names no declaration; a file named ``index``, its folder's name too, which a folder's import
    names). None when its presence may change what a file finds by other means: an abstract method where
    lambdas are typed by them (``Language.functional_types``: a functional interface types the lambdas of
    files that need not name it), or a name a configuration file of its language mentions as a word
    (``package.json``'s ``main`` or ``exports``, ``tsconfig.json``'s ``paths``)."""
    folder, _, base = f.path.rpartition("/")
    stem = base.partition(".")[0]
    functional = get_language(f.language).functional_types
    if functional and any(c.abstract for c in f.callables):
        return None
    stems = {stem, folder.rpartition("/")[2]} if stem == INDEX else {stem}  # "./dir" finds dir/index.ts
    named = re.compile(rf"(?<![\w$-]){re.escape(stem)}(?![\w$-])")
    if any(g.config is not None and g.language == f.language and named.search(repr(g.config)) for g in facts):
        return None
    method_sets = get_language(f.language).method_sets
    names = {*stems, *(name for k in _own_exports(f, facts) for name in _IDENTIFIER.findall(k))}
    own = {t.qualified: t for t in f.types}
    local = _unnamed_elsewhere(f, facts)
    for t in f.types:
        names.update((t.qualified.rpartition(".")[2], "<init>"))
    for c in f.callables:
        if c.owner and (c.kind == "constructor" or method_sets):
            names.add(c.owner.rpartition(".")[2])
        if c.kind == "constructor":
            names.add("<init>")
        elif not _dispatched_alone(own.get(c.owner) if c.owner else None, local, method_sets):
            names.add(c.name)
    names.discard("")
    return names, stems


def _unnamed_elsewhere(f: FileFacts, facts: Sequence[FileFacts]) -> set[str]:
    """The names of the types ``f`` declares that no other file of its language mentions: no declaration of
    another file is written with one (a function returning it), through which a file that names neither the
    type nor ``f`` would call its methods."""
    marks = {t.qualified.rpartition(".")[2]: f"\n{t.qualified.rpartition('.')[2]}\n" for t in f.types}
    for g in facts:
        if g.language != f.language or g.path == f.path or not marks:
            continue
        if g.names is None:
            return set()
        marks = {name: mark for name, mark in marks.items() if mark not in g.names}
    return set(marks)


def _own_exports(f: FileFacts, facts: Sequence[FileFacts]) -> list[str]:
    """The exported names of ``f`` but a package clause another file of its package states alike (Go's
    ``{"package": NAME}``: the package keeps its name)."""
    return [k for k in f.exports if k != "package" or not _alike(f, facts, k)]


def _alike(f: FileFacts, facts: Sequence[FileFacts], key: str) -> bool:
    """Whether another file of the package of ``f`` exports ``key`` as ``f`` does."""
    value = f.exports[key]
    return any(g.package == f.package and g.path != f.path and g.exports.get(key) == value for g in facts)


_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")


def _dispatched_alone(owner: TypeDecl | None, local: set[str], method_sets: bool) -> bool:
    """Whether a method of ``owner``, a type declared in a file added or removed, is found by other files
    only through that type: no other file names it, nor a supertype of it but those the file declares too
    (``local``: their names, ``_unnamed_elsewhere``), and its language does not compute what implements what
    from method sets. Another file then calls it on a value of that type, and names the type (a file linked
    again)."""
    if owner is None or method_sets or owner.qualified.rpartition(".")[2] not in local:
        return False
    return all(s.partition("<")[0].rpartition(".")[2] in local for s in (*owner.extends, *owner.implements))


def imports_stem(f: FileFacts, stems: Collection[str]) -> bool:
    """Whether ``f`` imports a path whose last part, without suffixes, is one of ``stems`` (TypeScript's
    ``"./util/money.js"``: the file ``money.ts``, added or removed, may be what it finds), or, when one is
    ``index``, a path ending in a folder of its own (``"."``, ``".."``, ``"../"``)."""
    for i in f.imports:
        last = i.target.rpartition("/")[2]
        if INDEX in stems and last in ("", ".", "..") and i.target.startswith("."):
            return True
        if "/" in i.target and last.partition(".")[0] in stems:
            return True
    return False


INDEX = "index"
"""The name of the file a folder's import finds (TypeScript's ``./dir`` -> ``dir/index.ts``)."""


__all__ = ["imports_stem", "moved_names"]
