"""Files an update finds added beside others of their language (``TreeIndex.changed`` with ``added``), read
and named as the walk reads and names them, without walking the tree again: what ``igg.mapping.bodies``
links and maps for ``igg map-code --update`` when files come in folders that keep what they held.

A file added is one the update takes alone when it names no other file and its folder keeps another file of
its language that the walk read (``touched.alone``: no package ``__init__.py``, stub, configuration or naming
marker), no ignore file ignores it (``touched.ignored``), and the walk reads it (``read_bytes_as_walked``:
not binary, generated, too large or out of the build). It is named as the walk names it, beside that file
(``touched.named_beside``), and comes in the walk's order among the files the index keeps
(``touched.in_walk_order``). Anything else is left to the general path (``igg.mapping.remap``), which walks
the tree.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from igg.codemap.sources import SourceFile
from igg.codemap.treeindex import Added
from igg.codemap.walk import read_bytes_as_walked
from igg.mapping.touched import alone, ignored, in_walk_order, named_beside, sibling_files


def added_sources(
    paths: Sequence[Path],
    added: Sequence[Added],
    listed: Sequence[tuple[str, str | None]],
    *,
    max_bytes: int,
    chosen: Sequence[str] | None,
) -> list[SourceFile] | None:
    """The files ``added`` to the tree of ``paths`` (one folder) as the walk reads and names them, beside the
    files it read (``listed``: ``TreeIndex.sources``); None when one is not a file an update takes alone (see
    the module doc)."""
    if len(paths) != 1 or not paths[0].is_dir():
        return None
    root = os.path.abspath(paths[0])
    rels = [os.path.relpath(path, root).replace(os.sep, "/") for path, _, _ in added]
    module_of = dict(listed)
    if any(rel in module_of for rel in rels) or not alone(rels, (), [*module_of, *rels], list(module_of)):
        return None
    siblings = sibling_files(module_of, set(rels))
    found: list[SourceFile] = []
    for (_, data, _), rel in zip(added, rels, strict=True):
        if ignored(Path(root), rel):
            return None
        source = read_bytes_as_walked(rel, data, max_bytes=max_bytes, chosen=chosen)
        named = named_beside(rel, siblings, module_of.__getitem__, lambda p: os.path.join(root, p))
        if not isinstance(source, SourceFile) or named is None:
            return None
        found.append(replace(source, module=named[0]))
    return found


def with_added(
    listed: Sequence[tuple[str, str | None]], added: Sequence[SourceFile]
) -> list[tuple[str, str | None]]:
    """``listed`` (the files the walk read, in its order, with their module names: ``TreeIndex.sources``) with
    the files ``added`` where a walk reads them."""
    modules = dict(listed)
    modules.update((s.path, s.module) for s in added)
    return [(path, modules[path]) for path in in_walk_order([p for p, _ in listed], [s.path for s in added])]


__all__ = ["added_sources", "with_added"]
