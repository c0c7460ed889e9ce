"""An update whose changed files kept their facts, moved in order at most: ``igg map-code --update`` at the
cost of those files.

Most edits of a file change what it says but not what a map reads of it: a constant, an operator, a string, a
comment or a condition rewritten on its own lines. A file's facts (``igg.codemap.facts.FileFacts``: its
module, imports, declarations, calls and their lines, value flows) are all the link reads of it, so when they
are the same after the edit, every element a fresh map would make is the same too, except the file's Module
node, whose ``sha`` is the new content's. Most other edits add or remove whole lines, or change a line around
the facts it holds: the facts are then the same but for their sites (lines and columns), moved in order
(``igg.codemap.relines``), and as the link reads sites only to order them, a fresh map makes every element as
before with the file's sites moved (``igg.mapping.relined``). The
general path (``igg.mapping.remap``) finds that after loading the whole stored graph, walking and hashing
every file, reading every file's facts and linking the changed files again: 30 s for one such edit at 50,000
files. This path finds it from the files alone:

1. the tree's index (``igg.codemap.treeindex``) says which files' bytes changed, by stat (no directory
   changed: no file was added, removed or renamed), where each file's Module node is, and which elements
   hold its lines;
2. the session is loaded with those elements alone, counted with the rest of the graph
   (``igg.graph.partial``);
3. each changed file is read as the walk reads it (``read_bytes_as_walked``, named as the walk named it) and
   parsed; its facts at the last map come from the facts cache (keyed by the ``sha`` its Module node holds);
4. when every changed file's facts are equal to those but for ``sha``, the line count, the names derived
   from them and sites moved in order, the difference (each Module node's new ``sha`` and ``lines``, and the
   moved lines of the elements that hold them, in the order ``plan_file_difference`` plans a change) is
   applied by the act step as one update step, with the same record as the general path's. The Python calls
   kept beside the store move to their new sites, as the general path moves them.

Anything else returns None, and the general path decides, so the graph is always the one a fresh map builds:
one root that is no folder, an index of another step, a configuration or ignore file changed, a file the walk
skips now, facts not cached or changed otherwise, other bytes of the same text, an element that holds a line
the facts do not, or a change of a fifth of a small graph or more, whose step keeps a snapshot of the whole
graph (``updates.keeps_snapshot``). ``tests/unit/test_samefacts.py`` applies both paths to the same edits and
compares the stored sessions.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

from igg.codemap.cache import FactsCache, content_hash
from igg.codemap.facts import FileFacts
from igg.codemap.language import get as get_language
from igg.codemap.language import is_config
from igg.codemap.model import CallRow
from igg.codemap.relines import Moves, line_map
from igg.codemap.sources import SourceFile, with_modules
from igg.codemap.treeindex import Added, Changed, TreeIndex, TreeIndexes
from igg.codemap.walk import read_bytes_as_walked
from igg.mapping.added import NewFiles
from igg.mapping.limits import check_update_size
from igg.mapping.relined import relined_difference
from igg.mapping.touched import added_sources
from igg.mapping.updated import UpdateResult, apply_step, load_map, update_result, update_store
from igg.record.logs import get_logger
from igg.session.updates import keeps_snapshot
from igg.store.location import resolve_store_path, sidecar_path

log = get_logger("igg.code")


@dataclass(kw_only=True)
class _Edit:
    """One changed file: where the index holds it, its source as the walk reads it now, its Module node."""

    changed: Changed
    source: SourceFile
    node: str


def _edits(
    paths: Sequence[Path],
    index: TreeIndex,
    changed: Sequence[Changed],
    *,
    max_bytes: int,
    chosen: Sequence[str] | None,
) -> list[_Edit] | None:
    """The files ``changed`` (``TreeIndex.changed``), each read as the walk reads it and named as it was
    named; None when one is not a file this path updates (see the module doc)."""
    if len(paths) != 1 or not paths[0].is_dir() or not index.files:
        return None
    root = os.path.abspath(paths[0])
    edits: list[_Edit] = []
    for item in changed:
        path = os.path.relpath(index.paths[item[0]], root).replace(os.sep, "/")
        known = index.files.get(path)
        if known is None or is_config(path):  # an ignore file, one the walk skipped, a configuration
            return None
        source = read_bytes_as_walked(path, item[1], max_bytes=max_bytes, chosen=chosen)
        if not isinstance(source, SourceFile):
            return None
        edits.append(_Edit(changed=item, source=replace(source, module=known[0]), node=known[1]))
    return edits


def _modules_then(state: Any, edits: Sequence[_Edit]) -> dict[str, dict[str, Any]] | None:
    """Each edited file's Module node's properties at the last map, from ``state``; None when a node is not
    the Module node of its file (the index speaks of another graph)."""
    before: dict[str, dict[str, Any]] = {}
    for e in edits:
        data = state.nodes.get(e.node)
        if data is None or data["type"] != "Module" or data["properties"].get("path") != e.source.path:
            return None
        before[e.source.path] = data["properties"]
    return before


def _facts_now(
    store_path: str | Path, edits: Sequence[_Edit], before: dict[str, dict[str, Any]]
) -> tuple[list[FileFacts], list[FileFacts], dict[str, Moves] | None] | None:
    """The facts of the edited files at the last map (from the facts cache, keyed by the content hash their
    Module node holds) and now (parsed apart from the cache: the general path reports the files it parses),
    with how their sites moved (``_moved``; None: the facts changed otherwise than by sites moved); None when
    one is not cached, or the bytes changed and the text did not."""
    from igg.mapping.prepare import parse_all

    cache = FactsCache(sidecar_path(resolve_store_path(store_path), ".codefacts"))
    try:
        sources = with_modules([e.source for e in edits])
        then = cache.get_many(
            [FactsCache.key(s.path, s.module, before[s.path].get("sha") or "") for s in sources]
        )
        now, _ = parse_all(sources, jobs=1, named=True)
        if any(f is None for f in then):
            return None
        if any(before[f.path].get("sha") == f.sha for f in now):
            return None  # other bytes, the same text (a byte order mark): no change, as the general path says
        olds = [f for f in then if f is not None]
        return olds, now, _moved(olds, now)
    finally:
        cache.close()


def _keep_facts(store_path: str | Path, edits: Sequence[_Edit], now: Sequence[FileFacts]) -> None:
    """The facts ``now`` of the edited files kept in the facts cache, as a parse of the general path keeps
    them (only for an update this path makes: the general path reports the files it parses)."""
    cache = FactsCache(sidecar_path(resolve_store_path(store_path), ".codefacts"))
    try:
        cache.put_many(
            (FactsCache.key(e.source.path, e.source.module, content_hash(e.source.text)), f)
            for e, f in zip(edits, now, strict=True)
        )
    finally:
        cache.close()


def _moved(then: Sequence[FileFacts], now: Sequence[FileFacts]) -> dict[str, Moves] | None:
    """How each edited file's lines and sites moved (``line_map``), for the files whose facts moved; None
    when one file's facts changed otherwise."""
    moved: dict[str, Moves] = {}
    for a, b in zip(then, now, strict=True):
        found = line_map(a, b)
        if found is None:
            return None
        if found.moved:
            moved[b.path] = found
    return moved


def _moved_calls(
    indexes: TreeIndexes,
    sid: str,
    step: int,
    then: Sequence[FileFacts],
    now: Sequence[FileFacts],
    moved: Mapping[str, Moves],
) -> dict[str, list[CallRow]] | None:
    """The calls kept for each file whose facts moved and whose language keeps calls, at their new sites
    (``moved_calls``, as the general path moves them); None when they cannot be read or moved: none are
    kept then, and the next link solves the program."""
    old = {f.path: f for f in then if f.path in moved and get_language(f.language).keeps_calls}
    if not old:
        return {}
    shas = {f.path: f.sha for f in old.values()}
    rows = indexes.calls(sid, step, shas)
    if rows is None:
        return None
    out: dict[str, list[CallRow]] = {}
    for f in now:
        if f.path in old:
            found = get_language(f.language).moved_calls(old[f.path], f, rows[f.path])
            if found is None:
                return None
            out[f.path] = found
    return out


def _news(
    paths: Sequence[Path],
    key: str,
    indexes: TreeIndexes,
    moved: tuple[Sequence[Added], Sequence[str]],
    *,
    max_bytes: int,
    chosen: Sequence[str] | None,
) -> NewFiles | None:
    """The files added (``moved``: those added, the absolute paths of those removed, as ``TreeIndex.changed``
    finds them) read as the walk reads them and named as it names them, and those removed as the walk named
    them (``touched.added_sources``); None when one is not a file an update takes alone."""
    added, removed = moved
    if not added and not removed:
        return [], added, None, []
    listed = indexes.sources(key)
    read = added_sources(paths, moved, listed, max_bytes=max_bytes, chosen=chosen) if listed else None
    return (read[0], added, listed, read[1]) if read is not None else None


def _bodies(
    paths: Sequence[Path],
    sid: str,
    tree: tuple[str, TreeIndex, Sequence[Changed]],
    edited: list[SourceFile],
    news: NewFiles,
    indexes: TreeIndexes,
    options: dict[str, Any],
    facts: tuple[Sequence[FileFacts], Sequence[FileFacts]],
    request: Any,
) -> UpdateResult | None:
    """``bodies.update_bodies`` of the files changed (``edited``, their ``facts`` then and now) and added."""
    from igg.mapping.bodies import update_bodies

    last = tree[1].last_step
    kept = partial(indexes.calls, sid, last)
    return update_bodies(
        paths, sid, tree, facts, edited, indexes=indexes, kept=kept, request=request, added=news, **options
    )


def _files(index: TreeIndex, edits: Sequence[_Edit]) -> dict[str, Any]:
    """The update's ``files``: every file read, the edited ones parsed again and linked again none."""
    return {
        "read": index.read,
        "reparsed": len(edits),
        "unchanged": index.read - len(edits),
        "relinked": 0,
        "added": [],
        "changed": sorted(e.source.path for e in edits),
        "removed": [],
        "renamed": [],
    }


def update_same_facts(
    paths: Sequence[Path],
    sid: str,
    tree: tuple[str, TreeIndex, Sequence[Changed]],
    *,
    store_path: str | Path,
    max_bytes: int,
    chosen: Sequence[str] | None,
    clock: Callable[[], float],
    started: float,
    commit_of: Callable[[], str | None],
    indexes: TreeIndexes,
    moved_files: tuple[Sequence[Added], Sequence[str]] = ((), ()),
) -> UpdateResult | None:
    """The update of session ``sid`` when every file changed since its index (``tree``: the index's key, the
    index, of the session's last step, and the files whose bytes changed) kept its facts, moved in order at
    most (see the module doc); its kept calls written, the index noted (to be kept); None: the general path
    decides. Files added or removed (``moved_files``, as ``TreeIndex.changed`` finds them), or facts changed
    otherwise, are updated by ``igg.mapping.bodies`` when they can be."""
    key, index, changed = tree
    edits = _edits(paths, index, changed, max_bytes=max_bytes, chosen=chosen)
    if edits is None:
        return None
    news = _news(paths, key, indexes, moved_files, max_bytes=max_bytes, chosen=chosen)
    if news is None:
        return None
    options = {"store_path": store_path, "clock": clock, "started": started, "commit_of": commit_of}
    bodies = partial(_bodies, paths, sid, tree, [e.source for e in edits], news, indexes, options)
    if not edits:  # files added or removed alone
        return bodies(([], []), None)
    seconds = {"walk": clock() - started}
    mark = clock()
    held = indexes.elements(key, [e.source.path for e in edits])
    wanted = dict.fromkeys(e.node for e in edits)
    for ids in (held or {}).values():
        wanted.update(dict.fromkeys(ids))
    store = update_store(store_path)
    session = load_map(store, sid, elements=list(wanted))
    state = session.state
    before = _modules_then(state, edits)
    seconds["load"] = clock() - mark
    mark = clock()
    found = _facts_now(store_path, edits, before) if before is not None else None
    if before is None or found is None:
        return None
    then, now, moved = found
    if moved is None or any(
        moved_files
    ):  # the facts changed (perhaps only what the bodies call), files moved
        return bodies((then, now), session.request)
    if moved and held is None:
        return None
    diff = relined_difference(state, {f.path: f for f in now}, moved)
    if diff is None or keeps_snapshot(len(diff.set_properties) + 2 * len(diff.set_edge_properties), state):
        return None  # an update step that keeps a snapshot of the whole graph: the general path's
    diff.sources = [e.node for e in edits]
    seconds["parse_and_diff"] = clock() - mark
    check_update_size(state, diff, session.config.constraints, sid)
    files, commit = _files(index, edits), commit_of()
    mark = clock()
    _keep_facts(store_path, edits, now)
    calls = _moved_calls(indexes, sid, index.last_step, then, now, moved)
    update = apply_step(session, diff, files, commit, (clock, started))
    step = store.session(sid).last_step
    shas = {f.path: (before[f.path].get("sha"), f.sha) for f in now}
    indexes.move_calls(sid, index.last_step, step, shas, calls)  # their calls resolve as they did
    indexes.add_census(sid, index.last_step, step)  # the same symbols
    index.note([e.changed for e in edits], step, [e.source.text for e in edits])
    seconds["commit"] = clock() - mark
    seconds["total"] = clock() - started
    log.debug("map_code_update_same_facts", session_id=sid, files=files["changed"], moved=sorted(moved))
    size = (state.node_count, state.edge_count)
    seconds = {k: seconds[k] for k in ("load", "walk", "parse_and_diff", "commit", "total")}
    return update_result(sid, step, update.iteration, update.changes, files, size, commit, seconds)


__all__ = ["update_same_facts"]
