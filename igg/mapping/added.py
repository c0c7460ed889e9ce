"""Files an update finds added beside others of their language (``TreeIndex.changed`` with ``added``), read
and named as the walk reads and names them without walking the tree again (``touched.added_sources``): what
``igg.mapping.bodies`` links and maps for ``igg map-code --update`` when files come in folders that keep what
they held.

A file removed is one the walk read, and its folder keeps another file of its language. A file added is one
the update takes alone when it names no other file and its folder keeps another file of its language that the
walk read (``touched.alone``: no package ``__init__.py``, stub, configuration or naming
marker), no ignore file ignores it (``touched.ignored``), and the walk reads it (``read_bytes_as_walked``: not
binary, generated, too large or out of the build). It is named as the walk names it, beside that file
(``touched.named_beside``), and comes in the walk's order among the files the index keeps
(``touched.in_walk_order``). Anything else is left to the general path (``igg.mapping.remap``), which walks
the tree.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from igg.act.difference import Difference
from igg.codemap.facts import FileFacts
from igg.codemap.language import language_of
from igg.codemap.sources import SourceFile
from igg.codemap.treeindex import Added, TreeIndex, TreeIndexes
from igg.graph.state import GraphState
from igg.mapping.touched import sibling_files
from igg.mapping.updated import file_elements, module_nodes

NewFiles = tuple[list[SourceFile], Sequence[Added], list[tuple[str, str | None]] | None, list[str]]
"""Files added and removed (``igg.mapping.added``): those added as the walk reads and names them and as the
index found them, the walk's files the index keeps (``TreeIndex.sources``) when read, and the paths of those
removed as the walk gave them."""


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
    "beside_files",
    "held_within",
    "keep_index",
    "parsed_added",
    "removed_files",
]
