"""Files an update finds added beside others of their language (``TreeIndex.changed`` with ``added``), read
and named as the walk reads and names them, without walking the tree again: what ``igg.mapping.bodies``
links and maps for ``igg map-code --update`` when files come in folders that keep what they held.

A file removed is one the walk read, and its folder keeps another file of its language. A file added is one
the update takes alone when it names no other file and its folder keeps another file of
its language that the walk read (``touched.alone``: no package ``__init__.py``, stub, configuration or naming
marker), no ignore file ignores it (``touched.ignored``), and the walk reads it (``read_bytes_as_walked``:
not binary, generated, too large or out of the build). It is named as the walk names it, beside that file
(``touched.named_beside``), and comes in the walk's order among the files the index keeps
(``touched.in_walk_order``). Anything else is left to the general path (``igg.mapping.remap``), which walks
the tree.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from igg.act.difference import Difference
from igg.codemap.facts import FileFacts
from igg.codemap.language import language_of
from igg.codemap.sources import SourceFile
from igg.codemap.treeindex import Added, TreeIndex, TreeIndexes
from igg.codemap.walk import read_bytes_as_walked
from igg.graph.state import GraphState
from igg.mapping.touched import alone, ignored, in_walk_order, named_beside, sibling_files
from igg.mapping.updated import file_elements, module_nodes

NewFiles = tuple[list[SourceFile], Sequence[Added], list[tuple[str, str | None]] | None, list[str]]
"""Files added and removed (``igg.mapping.added``): those added as the walk reads and names them and as the
index found them, the walk's files the index keeps (``TreeIndex.sources``) when read, and the paths of those
removed as the walk gave them."""


def added_sources(
    paths: Sequence[Path],
    moved: tuple[Sequence[Added], Sequence[str]],
    listed: Sequence[tuple[str, str | None]],
    *,
    max_bytes: int,
    chosen: Sequence[str] | None,
) -> tuple[list[SourceFile], list[str]] | None:
    """The files added to the tree of ``paths`` (one folder; ``moved``: those added, the absolute paths of
    those removed, as ``TreeIndex.changed`` finds them) as the walk reads and names them, beside the files it
    read (``listed``: ``TreeIndex.sources``), and the paths of those removed as the walk gave them; None when
    one is not a file an update takes alone (see the module doc; a file removed must be one the walk read)."""
    if len(paths) != 1 or not paths[0].is_dir():
        return None
    added, removed = moved
    root = os.path.abspath(paths[0])
    rels = [os.path.relpath(path, root).replace(os.sep, "/") for path, _, _ in added]
    gone = [os.path.relpath(path, root).replace(os.sep, "/") for path in removed]
    module_of = dict(listed)
    now = [*(p for p in module_of if p not in gone), *rels]
    if any(rel in module_of for rel in rels) or any(p not in module_of for p in gone):
        return None
    if not alone(rels, gone, now, list(module_of)):
        return None
    siblings = sibling_files({p: m for p, m in module_of.items() if p not in gone}, set(rels))
    found: list[SourceFile] = []
    for (_, data, _), rel in zip(added, rels, strict=True):
        if ignored(Path(root), rel):
            return None
        source = read_bytes_as_walked(rel, data, max_bytes=max_bytes, chosen=chosen)
        named = named_beside(rel, siblings, module_of.__getitem__, lambda p: os.path.join(root, p))
        if not isinstance(source, SourceFile) or named is None:
            return None
        found.append(replace(source, module=named[0]))
    return found, gone


def with_added(
    listed: Sequence[tuple[str, str | None]], added: Sequence[SourceFile], removed: Collection[str] = ()
) -> list[tuple[str, str | None]]:
    """``listed`` (the files the walk read, in its order, with their module names: ``TreeIndex.sources``) with
    the files ``added`` where a walk reads them, without those ``removed`` (paths)."""
    modules = {p: m for p, m in listed if p not in removed}
    kept = list(modules)
    modules.update((s.path, s.module) for s in added)
    return [(path, modules[path]) for path in in_walk_order(kept, [s.path for s in added])]


Removed = dict[str, tuple[str | None, str | None, str]]
"""The files an update removes, by their paths as the walk gave them: each one's module name and content hash
at the last map, and its absolute path (as the index keeps it)."""


def removed_files(
    paths: Sequence[Path], index: TreeIndex, listed: list[tuple[str, str | None]] | None, gone: Sequence[str]
) -> Removed | None:
    """The files ``gone`` (removed, by their paths as the walk gave them) with their module names (``listed``:
    the walk's files the index keeps) and their content hashes at the last map (``TreeIndex.hashes``), and
    their absolute paths; None when the index cannot tell them, or a file removed is not one with a Module
    node (``TreeIndex.files``: a configuration file)."""
    if not gone:
        return {}
    if listed is None or len(paths) != 1:
        return None
    root = os.path.abspath(paths[0])
    module_of = dict(listed)
    hashes = index.hashes(root, [(p, module_of.get(p)) for p in gone])
    if hashes is None or not all(p in module_of and p in index.files for p in gone):
        return None
    return {p: (module_of[p], hashes[p], os.path.join(root, p)) for p in gone}


def held_within(indexes: TreeIndexes, key: str, diff: Difference, local: set[str]) -> bool:
    """Whether every file that holds an edge to a node ``diff`` removes (``TreeIndexes.holding``: every edge
    that ends at a file's node is one a file holds, ``file_elements``) is linked again (``local``), its
    elements loaded: an edge of another file would be left in the store, its end gone."""
    holding = indexes.holding(key, diff.remove_nodes)
    return holding is not None and holding <= local


def keep_index(
    indexes: TreeIndexes,
    at: tuple[str, TreeIndex, int],
    state: GraphState,
    local: set[str],
    files: tuple[
        Sequence[Any],
        Sequence[SourceFile],
        Sequence[SourceFile],
        Sequence[Added],
        list[tuple[str, str | None]] | None,
        Removed,
    ],
) -> None:
    """The tree's index after the step ``at`` made (its key, the index, the step): the elements of the files
    linked again (``local``, from ``state``), the files changed noted, and the files added (as the walk reads
    them, as the index found them) with their stats and hashes, their places in the walk's order with their
    module names (``listed``: the walk's files with them) and their Module nodes, and the files removed
    (``removed_files``) taken out."""
    key, index, step = at
    changed, edited, news, found, listed, removed = files
    rows = file_elements(state)  # once: it reads every element of the part loaded
    indexes.put_elements(key, {p: rows.get(p, []) for p in local if p not in removed}, sorted(removed))
    index.note(list(changed), step, [s.text for s in edited])  # by their positions before any is dropped
    index.drop({absolute for _, _, absolute in removed.values()})
    if (news or removed) and listed is not None:
        modules = module_nodes(state)
        index.add(found, step, [s.text for s in news])
        index.sources = listed
        for path in removed:
            del index.files[path]
        index.files.update((s.path, (s.module, modules[s.path])) for s in news)
        indexes.put_files(key, index)


def parsed_added(news: Sequence[SourceFile]) -> list[FileFacts]:
    """The facts of the files added, parsed now (apart from the cache, as the changed files' are)."""
    if not news:
        return []
    from igg.mapping.prepare import parse_all

    return parse_all(news, jobs=1, named=True)[0]


def beside_files(listed: list[tuple[str, str | None]] | None, added: set[str]) -> set[str]:
    """A file the walk read in the folder of each file ``added``, of its language (``listed``: the walk's
    files; ``touched.sibling_files``): its elements hold the node of the package that holds the file added
    (``file_elements``)."""
    if not added or listed is None:
        return set()
    siblings = sibling_files(dict(listed), added)
    folders = {(p.rpartition("/")[0], language_of(p)) for p in added}
    return {siblings[f] for f in folders if f in siblings}


__all__ = [
    "NewFiles",
    "Removed",
    "added_sources",
    "beside_files",
    "held_within",
    "keep_index",
    "parsed_added",
    "removed_files",
    "with_added",
]
