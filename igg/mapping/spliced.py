"""The kept graph of imports of a checked tree with the files changed in place linked again alone: what
``igg check`` and ``igg cycles`` take when a file's imports changed and nothing else another file's imports
read of it (``igg.mapping.kept``).

A graph of imports holds the modules, their packages and the outside packages they import, each package's
``CONTAINS`` of its modules and the ``IMPORTS`` between them (``link(..., reads="imports")``). Linking one
file's imports reads of the other files their modules' names, packages and languages, the configuration
files, and what its language's imports read of their declarations (``Language.declared_for_imports``): when a
changed file keeps all of those (its facts differ from those the graph was linked from in their imports
alone: ``since.linked_alike``'s view), no other file's imports resolve otherwise, and its own edges are all
that change. They are linked again against the files of its language (no other language's imports find
its modules): in a language whose link of imports reads other files' paths and module names alone
(``Language.imports_by_name``: Python, TypeScript), those files as the kept graph's modules name them
(``named_alone``); else their facts, read from the cache. They are put in place of those it had: its
module's edges out and its package's ``CONTAINS`` of it, and an outside package no other module imports any
more goes. The graph is the one a link of every file makes (``tests/unit/test_spliced.py`` pins it to a
fresh map's), where a link of every file read 50,000 files' facts; reading the facts of the 12,500 Python
files of such a tree took 1.1 s of a splice's 1.6 s, the modules' names 0.02 s.

A file added or removed beside others of its language changes no other file's module name
(``touched.alone``), but another file's import may find it now, or find something else without it: those
files (``imports_reach``, read from the facts of the files of its language) are linked again with it, and a
removed file's module goes with its edges.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from igg.codemap import language as languages
from igg.codemap.cache import FactsCache
from igg.codemap.facts import FileFacts
from igg.codemap.language import is_config, language_of
from igg.codemap.link import link
from igg.codemap.schema import load_code_schema
from igg.mapping.depgraph import model_graph
from igg.mapping.moved import INDEX
from igg.mapping.since import linked_alike, read_by_others
from igg.rules.depgraph import DepGraph


def spliced_graph(
    graph: DepGraph,
    order: Sequence[str],
    keys: Mapping[str, tuple[str | None, str]],
    cache: FactsCache,
    changed: tuple[Mapping[str, FileFacts], Mapping[str, FileFacts]],
    moved: tuple[Mapping[str, FileFacts], Mapping[str, FileFacts]] | None = None,
) -> tuple[DepGraph, set[str]] | None:
    """``graph`` (of the files ``order``, in the walk's order, whose facts the cache holds under ``keys``)
    with the files ``changed`` (their facts then, the graph's, and now) linked again alone, those whose
    imports link otherwise (see the module doc), and the files linked again; None when one changed more than
    its imports, or a file's facts are gone from the cache. ``moved``: the files added (in ``order``, with
    their facts now) and removed (not in it, with the graph's facts), linked with the files whose imports may
    find them (``imports_reach``)."""
    then, now = changed
    added, removed = moved if moved is not None else ({}, {})
    for path, f in now.items():
        before = then.get(path)
        if before is None or read_by_others(before) != read_by_others(f):
            return None
    # a file read again whose imports link as they did keeps its edges (its body edited, an import elsewhere)
    linking = {path for path, f in now.items() if not linked_alike(then[path], f, "imports")} | set(added)
    languages = {f.language for f in (*added.values(), *removed.values())}
    languages |= {now[path].language for path in linking if path in now}
    wanted = [p for p in order if p not in now and p not in added and language_of(p) in languages]
    facts: dict[str, FileFacts | None] = named_alone(graph, wanted, languages)
    if moved is not None:
        reached = _reaching(wanted, keys, cache, [*added.values(), *removed.values()], facts)
        if reached is None:
            return None
        facts.update(reached[0])
        linking |= reached[1]
        # the file that now states first what a removed file stated first (its package's CONTAINS)
        restating = sorted(_restating(order, removed) - linking)
        found = cache.get_many([keys[p][1] for p in restating], bodies=False)
        if any(f is None for f in found):
            return None
        facts.update(zip(restating, found, strict=True))
        linking.update(restating)
    read = [p for p in wanted if p not in facts]
    cached = cache.get_many([keys[p][1] for p in read], bodies=False)
    if any(f is None for f in cached):
        return None
    facts.update(zip(read, cached, strict=True))
    facts.update((path, f) for path, f in now.items() if f.language in languages)
    facts.update(added)
    linked = [f for f in (facts.get(p) for p in order) if f is not None]
    model = link(linked, only=linking, reads="imports")
    part = model_graph(model, load_code_schema(None).compile(), linking)
    position = {p: i for i, p in enumerate(order)}
    spliced = _in_place(graph, part, position, linking | set(removed))
    return (spliced, linking) if spliced is not None else None


def _reaching(
    wanted: list[str],
    keys: Mapping[str, tuple[str | None, str]],
    cache: FactsCache,
    moved: list[FileFacts],
    named: Mapping[str, FileFacts | None],
) -> tuple[dict[str, FileFacts], set[str]] | None:
    """The facts read of the files of ``wanted``, and those whose imports may find one of the files ``moved``
    (``imports_reach``): of a language whose link of imports reads names alone (``named``: its files as the
    kept graph names them), only the facts that hold one of the words such an import is written with are read
    (``FactsCache.mentioning``), and the configuration files'; of the others, every file's. None when a file's
    facts are gone from the cache, or a configuration file names a moved file."""
    words = set().union(*(_words(m) for m in moved))
    # many words (a commit of many files): every file's facts read, rather than searched for each word
    sought = [p for p in wanted if p in named and not is_config(p)] if len(words) <= _MOST_WORDS else []
    found = cache.mentioning([keys[p][1] for p in sought], words, bodies=False)
    searched = set(sought)
    rest = [p for p in wanted if p not in searched]
    read = cache.get_many([keys[p][1] for p in rest], bodies=False)
    if found is None or any(f is None for f in read):
        return None
    facts = {p: found[keys[p][1]] for p in sought if keys[p][1] in found}
    facts.update((p, f) for p, f in zip(rest, read, strict=True) if f is not None)
    reach = imports_reach(list(facts.values()), moved)
    return (facts, reach) if reach is not None else None


def _restating(order: Sequence[str], removed: Mapping[str, FileFacts]) -> set[str]:
    """For each file ``removed`` that came first of its folder and language in the walk, the first one now
    (in the walk's ``order``): the one that states first, now, the edges every file of its package states
    (its package's ``CONTAINS`` of the package, up to the top), which the removed one stated first
    (``_in_place``). A walk reads a folder's files by name, before its subfolders, and the folder of a file
    removed keeps one of its language (``touched.alone``)."""
    firsts: dict[tuple[str, str | None], str] = {}
    for path in order:
        if not is_config(path):
            firsts.setdefault((path.rpartition("/")[0], language_of(path)), path)
    found = set()
    for path in removed:
        first = firsts.get((path.rpartition("/")[0], language_of(path)))
        if first is not None and path.rpartition("/")[2] < first.rpartition("/")[2]:
            found.add(first)
    return found


def imports_reach(facts: Sequence[FileFacts], moved: Sequence[FileFacts]) -> set[str] | None:
    """The files of ``facts`` whose imports may find one of the files ``moved`` (added or removed) or, without
    it, find something else: each import written with a part (between dots and slashes) that is one of the
    words of a moved file of its language (``_words``), or, when one is named ``index``, a path ending in a
    folder (``"."``, ``"../"``). None when a configuration file of its language names a moved file
    (``package.json``'s ``main``, ``tsconfig.json``'s ``paths``): what it resolves to may change another
    way. One pass over the files, whatever the number of files moved."""
    words: dict[str, set[str]] = {}
    folders: set[str] = set()  # the languages of a moved ``index`` file
    stems: dict[str, set[str]] = {}
    for m in moved:
        words.setdefault(m.language, set()).update(_words(m))
        stem = m.path.rpartition("/")[2].partition(".")[0]
        stems.setdefault(m.language, set()).add(stem)
        if stem == INDEX:
            folders.add(m.language)
    named = {
        language: re.compile("|".join(rf"(?<![\w$-]){re.escape(stem)}(?![\w$-])" for stem in sorted(mine)))
        for language, mine in stems.items()
    }
    reach: set[str] = set()
    for f in facts:
        mine = words.get(f.language)
        if mine is None:
            continue
        if f.config is not None:
            if named[f.language].search(repr(f.config)):
                return None
            continue
        for i in f.imports:
            parts = set(_PARTS.split(i.target))
            if i.source:
                parts.update(_PARTS.split(i.source))
            folder_import = i.target.startswith(".") and i.target.endswith((".", "/"))
            if not parts.isdisjoint(mine) or (folder_import and f.language in folders):
                reach.add(f.path)
                break
    return reach


def _words(m: FileFacts) -> set[str]:
    """The parts an import that may find the file ``m`` is written with: its name without suffixes (Python's
    ``from pkg import mod``, TypeScript's ``"./util/mod.js"``); for a file named ``index``, its folder's name
    too; in a language that does not link imports by other files' names alone (``Language.imports_by_name``:
    Go's imports name a package's folder, Java's wildcards a package), the name of its folder."""
    folder, _, base = m.path.rpartition("/")
    stem = base.partition(".")[0]
    if stem == INDEX or not languages.get(m.language).imports_by_name:
        return {stem, folder.rpartition("/")[2]}
    return {stem}


_MOST_WORDS = 64
"""The most words the facts are searched for (``FactsCache.mentioning``); with more, every file's are read."""
_PARTS = re.compile(r"[./\\]")
"""What separates the parts of an import's target: a dotted name's dots, a path's slashes."""


def named_alone(graph: DepGraph, paths: list[str], names: set[str]) -> dict[str, FileFacts | None]:
    """The files of ``paths`` of the languages ``names`` whose link of imports reads other files' paths and
    module names alone (``Language.imports_by_name``), as their modules in ``graph`` give them: each file its
    module's name, no import, no declaration. A file with no module of its own (a configuration file, a stub
    merged into its module) is left out: its facts are read."""
    alone = {name for name in names if languages.get(name).imports_by_name}
    if not alone:
        return {}
    modules = {n.file: n.name for n in graph.nodes.values() if n.type == "Module" and n.file}
    found: dict[str, FileFacts | None] = {}
    for path in paths:
        name = language_of(path)
        module = modules.get(path)
        if name in alone and module is not None:
            found[path] = FileFacts(path=path, language=name, module=module, package=module)
    return found


def _in_place(graph: DepGraph, part: DepGraph, position: dict[str, int], paths: set[str]) -> DepGraph | None:
    """``graph`` with the edges of the files ``paths`` those of ``part`` (the graph of their link alone): the
    edges out of their modules and into them from their packages replaced, their modules' nodes too, the
    nodes ``part`` adds (an outside package first imported) added, and an outside package the edges gone
    alone reached removed. An edge several files state (a package's ``CONTAINS`` of a package) is the first
    one's in the walk's order (``position``); None when one of the files ``paths`` stated it first and no
    longer does (which file states it then, the graph cannot tell)."""
    own = {n.id for n in graph.nodes.values() if n.type == "Module" and n.file in paths}
    gone: set[str] = set()
    edges = []
    new = dict(part.edges)
    for key, e in graph.edges.items():
        if e.source in own or (e.type == "CONTAINS" and e.target in own):
            gone.add(e.target)
            continue
        mine = new.pop(key, None)
        if mine is not None and (
            e.file in paths or position.get(mine.file or "", -1) < position.get(e.file or "", -1)
        ):
            e = mine  # stated first by a file linked again
        elif e.file in paths:
            return None
        edges.append(e)
    edges.extend(new.values())
    ends = {x for e in edges for x in (e.source, e.target)}
    out = DepGraph()
    for node in graph.nodes.values():
        if node.id in own:
            if node.file not in position:
                continue  # a file removed
            node = part.nodes.get(node.id, node)
        elif node.id in gone and node.external and node.id not in ends:
            continue  # an outside package no module imports any more
        out.add_node(node)
    for node in part.nodes.values():
        out.add_node(node)
    for e in edges:
        out.add_edge(e)
    return out


__all__ = ["imports_reach", "spliced_graph"]
