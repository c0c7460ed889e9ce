"""An update whose changed files changed what their bodies call, or a declaration without a node to remove:
``igg map-code --update`` that loads only the elements of the files it links again.

An edit inside a function's body that adds, removes or redirects a call (or an instantiation, a SQL string)
changes the file's facts, so the files cannot keep them (``igg.mapping.samefacts``). But when every changed
file declares what it declared (``declared.changed_names`` finds no name whose meaning changed) and keeps its
value flows, nothing of another file can change: the general path links the changed files alone and compares
their own nodes and the edges going out of them with the stored graph (``difference.plan_file_difference``).
It loads the whole stored graph to do so (15.9 s of a 30 s update at 50,000 files). When a Python file's value
flows changed (Python's calls are one program: a value passed to a parameter decides the calls of another
file), the program is solved again and the files whose calls it resolves otherwise than the last link did are
linked with them (``remap.link_bodies``; 52 s -> 13 s, 6.6 GB -> 1.8 GB for a Python call added at 50,000
files). A declaration changed or added (a function's parameters, a function, method or class added) links
the files that mention its name with them, as the general path does. A symbol added must not take another
symbol's key or identity (``_adds``): the files of its language show those of its language, and the census
of the last step (``SchemaFit.census``: every symbol's key and identity, kept in the tree's index by a map,
the general path and this one, and carried to the next step by an update that adds no symbol) those of the
others; without a census every language's facts are read (a TypeScript function added at 50,000 files:
6.2 s with every language's, 2.2 s with the census). This path does the same with the elements those files
hold:

1. every file's facts are read as the general path reads them, without walking the tree again: the index
   keeps every file the last walk read, with its module name and its text's hash, by which the facts cache
   knows it (``TreeIndex.sources``, ``TreeIndex.hashes``), and the index's stats already told that no other
   file changed (``remap.link_bodies``: the changed files parsed, the others' facts from the cache, the
   changed files linked alone against them; a file linked with them whose whole facts are not cached is left
   to the general path, which reads it from the disk);
2. the session is loaded with the elements of the files linked again (their nodes, the edges going out of them
   or sited in them, and their ends: ``updated.file_elements``, kept in the tree's index) and the nodes of
   every file their relations reach, counted with the rest of the graph (``igg.graph.partial``);
3. the difference is planned on that part of the graph (the other files' nodes, which no change of theirs can
   alter, are not compared) and applied by the act step as one update step, with the general path's record;
   the index keeps the new elements of the files linked again.

Files added beside others of their language, or removed from beside them, take this path too
(``igg.mapping.added``): a file removed, and an outside package whose last import went, take their nodes with
them once every file that holds an edge to those nodes is among the files linked (``added.held_within``), so
that no edge of a file not loaded is left in the store pointing at a node that is gone.

Anything else returns None, and the general path decides, so the graph is always the one a fresh map builds: a
file that came or went otherwise (``added_sources``), a change ``changed_names`` cannot tell (an import
of every name, a supertype), a flow that changed in a language that does not keep its calls, calls of the
last link not kept, another node to remove (a function taken away, a method whose signature, its identity,
changed), a node added that the changed files do not declare (an outside package first imported) or whose
identity another symbol holds, an edge added or removed with a site in a file not linked again, an element the
index does not hold, or a change large enough to keep a snapshot of the whole graph
(``updates.keeps_snapshot``). ``tests/unit/test_bodies.py``, ``tests/unit/test_bodies_flows.py`` and
``tests/unit/test_bodies_declared.py`` apply both paths to the same edits and compare the stored sessions;
``tests/unit/test_update_imports.py`` compares import edits with fresh maps.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

import orjson

from igg.act.difference import Difference
from igg.agents.code.mapping import SchemaFit
from igg.codemap.cache import FactsCache, content_hash
from igg.codemap.census import Census
from igg.codemap.facts import FileFacts
from igg.codemap.index import callable_key, type_key
from igg.codemap.language import language_of
from igg.codemap.model import CodeModel, KeptCalls
from igg.codemap.sources import SourceFile, with_modules
from igg.codemap.treeindex import TreeIndex, TreeIndexes
from igg.graph.collector import collector_paused
from igg.graph.state import GraphState
from igg.mapping.added import (
    NewFiles,
    Removed,
    beside_files,
    held_within,
    keep_index,
    parsed_added,
    removed_files,
)
from igg.mapping.declared import names_told
from igg.mapping.difference import SHARED, node_file, plan_file_difference
from igg.mapping.limits import check_update_size
from igg.mapping.remap import link_bodies
from igg.mapping.touched import renamed, with_added
from igg.mapping.updated import (
    UpdateResult,
    apply_step,
    load_map,
    update_result,
    update_store,
)
from igg.record.logs import get_logger
from igg.session.updates import keeps_snapshot
from igg.store.location import resolve_store_path, sidecar_path

log = get_logger("igg.code")


def _declares(f: FileFacts) -> set[str]:
    """The symbol keys of what ``f`` declares: another set means a node to add or remove (a function added, a
    method whose signature changed), which the general path updates (decided before anything is linked)."""
    return {callable_key(c, f.package) for c in f.callables} | {type_key(t.qualified) for t in f.types}


def _reached_files(model: CodeModel, local: set[str]) -> set[str]:
    """The files that declare what the relations of the files ``local`` reach (their nodes are loaded too:
    an edge added to a node that no edge of those files reached before)."""
    declared: dict[str, str] = {}
    for plan in model.files:
        for key in plan.symbols:
            declared.setdefault(key, plan.path)
    return {
        declared[r.target]
        for plan in model.files
        if plan.path in local
        for r in plan.relations
        if r.target in declared
    } - local


def _elements(
    indexes: TreeIndexes, key: str, local: set[str], reached: set[str], added: set[str]
) -> list[str] | None:
    """The elements of the files ``local`` and the nodes of the files ``reached`` (``TreeIndex.elements``;
    node ids are ``n`` and a number, as a map numbers them), but for the files ``added`` (none yet), or None:
    the index does not hold a file."""
    held = indexes.elements(key, sorted((local | reached) - added))
    if held is None:
        return None
    wanted: dict[str, None] = {}
    for path, ids in held.items():
        wanted.update(dict.fromkeys(ids if path in local else (i for i in ids if i.startswith("n"))))
    return list(wanted)


def _theirs(state: GraphState, node: str, local: set[str]) -> bool:
    """Whether the stored ``node`` is one of the files ``local`` declare (names one as its ``file``, or is
    the Module node of one)."""
    return node_file(state, node) in local


def _outside(state: GraphState, node: str) -> bool:
    """Whether the stored ``node`` is an outside package or module (``external``, of no file): every edge to
    it is an import a file states, which that file's elements hold (``file_elements``)."""
    props = state.node_properties(node)
    return props.get("external") is True and not {"file", "path"} & props.keys()


def _sited_within(state: GraphState, diff: Difference, local: set[str]) -> bool:
    """Whether every edge ``diff`` adds or removes holds sites in the files ``local`` alone (the index keeps
    the elements of those files only: an edge sited in another file would leave that file's row stale)."""

    def within(props: dict[str, Any]) -> bool:
        first = props.get("file")
        sites = props.get("sites") or ()
        return (first is None or first in local) and all(
            type(s) is str and s.rsplit(":", 2)[0] in local for s in sites
        )

    removed = (state.edge_ends(e)[2]["properties"] for e in diff.remove_edges)
    return all(within(p) for p in removed) and all(within(p) for p in diff.edge_properties.values())


def _plan(
    state: GraphState,
    model: CodeModel,
    files: tuple[set[str], set[str]],
    added: set[str],
    census: Census | None,
) -> tuple[Difference, SchemaFit] | None:
    """The difference of the files ``local`` on ``state`` (``files``: those linked again, those of them
    removed; a part of the graph: the other files' nodes are not compared, as no change of theirs can alter
    them), and the fit it was planned by; None when it removes a node but of a file removed or an outside one
    (``_outside``: whose edges a file holds, ``added.held_within``), adds one but for the symbols ``added``
    (keys) whose identity no other symbol shares (``_adds``: a shared one renames the other), changes a node
    the files ``local`` do not declare (a symbol they share with a file of a language not linked:
    ``_their_languages``), adds or removes an edge sited in another file, or keeps a snapshot of the whole
    graph: the general path decides. ``census``: the census of the last step when only the changed files'
    languages were linked (``SchemaFit.census``)."""
    local, gone = files
    fit = SchemaFit(model, state.schema, only=_ends(model, local, state.schema.edge_types))
    diff = plan_file_difference(state, fit, local, others=False)
    if (
        diff is None
        or not _adds(state, fit, diff, added, census)
        or not all(_theirs(state, n, gone) or _outside(state, n) for n in diff.remove_nodes)
        or not all(_theirs(state, n, local) for n, _, _ in diff.set_properties)
        or not _sited_within(state, diff, local)
        or _snapshot_kept(diff, state)
    ):
        return None
    return diff, fit


def _adds(
    state: GraphState, fit: SchemaFit, diff: Difference, added: set[str], census: Census | None
) -> bool:
    """Whether every node ``diff`` adds is one of the symbols ``added`` (keys), none of which shares its
    identity with another symbol: of the files linked (``SchemaFit.colliding``), or, when ``census`` (the
    last step's) is given, of any language (neither its key nor its identity in the census)."""
    if not diff.add_nodes:
        return True
    if added & fit.colliding:
        return False
    if census is not None and census.holds_any(_entries(fit, added)):
        return False
    wanted = {(fit.placed[k].label, fit.placed[k].identity) for k in added if k in fit.placed}
    return all((label, state.identity(label, props)) in wanted for label, props in diff.add_nodes)


def _linked_files(
    listed: list[tuple[str, str | None]] | None,
    facts: tuple[Sequence[FileFacts], Sequence[FileFacts]],
    added: set[str],
    census: Census | None,
    gone: Sequence[str] = (),
) -> list[tuple[str, str | None]] | None:
    """The files of the index's list ``listed`` to link: those of the changed and removed (``gone``) files'
    languages (``_their_languages``), or every one when a symbol is ``added`` and no ``census`` tells which
    identities another language's symbols hold."""
    return listed if added and census is None else _their_languages(listed, facts, gone)


def _keep_census(
    indexes: TreeIndexes,
    steps: tuple[str, int, int],
    made: tuple[SchemaFit, Difference],
    added: set[str] | None,
) -> None:
    """The census of the step ``steps`` made (session, the step before, this step; ``made``: by the fit and
    the difference): the fit's when it placed every file's symbols (``added`` None), else the last one's with
    the symbols ``added`` (none: the same symbols), stale when the difference removes nodes (a census keeps no
    removal: a symbol added later that it still holds links every file, as without a census, and makes one;
    when none was kept after a removal, the next function added anywhere read every language's facts: 7.7 s
    for a TypeScript one at 50,000 files, 2.1 s with the census)."""
    sid, since, step = steps
    fit, diff = made
    if added is None:
        indexes.put_census(sid, step, fit.census())
    else:
        indexes.add_census(sid, since, step, _entries(fit, added), stale=bool(diff.remove_nodes))


def _entries(fit: SchemaFit, added: set[str]) -> set[bytes]:
    """The census entries of the symbols ``added`` (``SchemaFit.census``): each one's key, and the identity
    of each placed one (none of which collides: its identity is the one it was grouped by)."""
    found = {orjson.dumps(k) for k in added}
    placed = fit.placed
    found.update(orjson.dumps((placed[k].label, placed[k].identity)) for k in added if k in placed)
    return found


def _ends(model: CodeModel, local: set[str], edge_types: Collection[str]) -> set[str] | None:
    """The symbols the difference of the files ``local`` reads (their own, both ends of their relations, and
    every package and table, which an edge it removes may have been the last to reach:
    ``difference._left_behind``), which are all ``SchemaFit`` places; None (all) when the schema's relations
    are lifted to the types of their ends (a schema without CONTAINS: ``SchemaFit.lifted``)."""
    if "CONTAINS" not in edge_types:
        return None
    ends = {key for key in model.symbols if key.startswith(("package:", "table:"))}
    for plan in model.files:
        if plan.path in local:
            ends.update(plan.symbols)
            for r in plan.relations:
                ends.add(r.source)
                ends.add(r.target)
    return ends


def _snapshot_kept(diff: Difference, state: GraphState) -> bool:
    """Whether the step ``diff`` makes on ``state`` would keep a snapshot of the graph it leaves
    (``keeps_snapshot``), counting no fewer mutations than it makes (an edge's properties changed counted
    twice, a node removed with each edge to or from it) and the graph it leaves no smaller: a change this
    finds too small is one whose step keeps none."""
    gone = set(diff.remove_edges)
    for n in diff.remove_nodes:
        for ends in (state.succ[n], state.pred[n]):
            for keyed in ends.values():
                gone.update(keyed)
    removed = len(diff.remove_nodes) + len(gone)
    changed = len(diff.set_properties) + 2 * len(diff.set_edge_properties)
    return keeps_snapshot(changed + len(diff.add_nodes) + len(diff.add_edges) + removed, state, removed)


def _their_languages(
    listed: list[tuple[str, str | None]] | None,
    facts: tuple[Sequence[FileFacts], Sequence[FileFacts]],
    gone: Sequence[str] = (),
) -> list[tuple[str, str | None]] | None:
    """The files of the index's list (``listed``: path, module) of the changed files' languages (``facts``:
    theirs then and now), which alone their calls can reach: no analyzer resolves a name across languages
    (the premise ``remap._reach`` links the files of a changed name's language by), and a symbol they share
    with a file of another language (an outside package both import) is one the general path updates
    (``_plan``). Every file when a changed file states HTTP: routes and requests, the one join across
    languages (``igg.codemap.routes``). At 50,000 files of four languages, a TypeScript call added read and
    linked a quarter of them (7.1 s -> 2.5 s wall)."""
    if listed is None or any(f.http is not None for group in facts for f in group):
        return listed
    languages = {f.language for group in facts for f in group} | {language_of(p) for p in gone}
    return [(path, module) for path, module in listed if language_of(path) in languages]


def _facts(
    cache: FactsCache, sources: Sequence[SourceFile], hashes: dict[str, str], now: Sequence[FileFacts]
) -> tuple[list[FileFacts], int] | None:
    """Every file's facts, in the walk's order: the changed files' ``now``, the others' from the cache,
    without their bodies (as the general path reads them), and how many files the cache did not know (the
    general path parses them: changed files whose content it had seen are not); None when a file that did not
    change is not cached (the general path parses it)."""
    changed = {f.path: f for f in now}
    found = cache.get_many([FactsCache.key(s.path, s.module, hashes[s.path]) for s in sources], bodies=False)
    facts: list[FileFacts] = []
    parsed = 0
    for s, f in zip(sources, found, strict=True):
        if s.path in changed:
            parsed += f is None
            f = changed[s.path]
        if f is None:
            return None
        facts.append(f)
    return facts, parsed


def _keep(
    store_path: str | Path, sources: Sequence[SourceFile], hashes: dict[str, str], now: Sequence[FileFacts]
) -> None:
    """The changed files' facts ``now`` kept in the facts cache, as a parse of the general path keeps them
    (only for an update this path makes: the general path reports the files it parses)."""
    module = {s.path: s.module for s in sources}
    cache = FactsCache(sidecar_path(resolve_store_path(store_path), ".codefacts"))
    try:
        cache.put_many((FactsCache.key(f.path, module[f.path], hashes[f.path]), f) for f in now)
    finally:
        cache.close()


def _link(
    store_path: str | Path,
    sources: Sequence[SourceFile],
    shas: tuple[dict[str, Any], dict[str, str]],
    now: tuple[Sequence[FileFacts], Sequence[FileFacts], Removed],
    calls: tuple[KeptCalls, Callable[[Any], Any]],
) -> tuple[CodeModel, set[str], int] | None:
    """The changed and added files (their facts ``now``: of those changed, of those added; and the files
    removed, ``_removed``) linked alone against every file's facts (``_facts``, ``remap.link_bodies``;
    ``shas``: each file's content hash at the last map and now), the files linked again, and how many files
    the cache did not know; None: the general path decides."""
    changed, born, removed = now
    cache = _Cached(sidecar_path(resolve_store_path(store_path), ".codefacts"))
    try:
        read = _facts(cache, sources, shas[1], [*changed, *born])
        if read is None:
            return None
        edited = sorted(f.path for f in changed)
        new = sorted(f.path for f in born)
        gone = {p: (module, sha) for p, (module, sha, _) in removed.items()}
        linked = link_bodies(read[0], sources, shas, edited, cache, edited + new, calls, new, gone)
    except _Unread:
        return None
    finally:
        cache.close()
    return (*linked, read[1]) if linked is not None else None


class _Unread(Exception):
    """A file this path did not read (``_sources``) has no whole facts cached: the general path parses it."""


class _Cached(FactsCache):
    """The facts cache, as the link of the changed files reads it: the whole facts it asks for are those of
    files this path did not read (the changed files' are parsed), so one missing raises ``_Unread`` rather
    than parse the empty text that stands for the file."""

    def get_many(self, keys: Sequence[str], *, bodies: bool = True) -> list[FileFacts | None]:
        found = super().get_many(keys, bodies=bodies)
        if bodies and any(f is None for f in found):
            raise _Unread
        return found


def _sources(
    paths: Sequence[Path],
    index: TreeIndex,
    listed: list[tuple[str, str | None]] | None,
    files: tuple[Sequence[SourceFile], Sequence[FileFacts], Sequence[SourceFile]],
) -> tuple[list[SourceFile], dict[str, str], dict[str, Any]] | None:
    """The files to link as the last walk read them (``listed``: of ``TreeIndex.sources``, those of the
    changed files' languages, ``_their_languages``, with the files added: ``with_added``), named as the
    link names them (``with_modules``), the ``edited`` ones (changed or added) as read now and the others with
    an empty text (their facts come from the cache), and each one's content hash (``TreeIndex.hashes``, the
    edited ones' now); None when the index cannot tell them, or a file the walk did not name is named from its
    text (a Go file outside a module: its text is not read here). ``files``: the files changed or added as
    read now, the changed ones' facts then, the files added; with the hashes, each file's content hash at the
    last map (``_before``)."""
    edited, then, news = files
    if listed is None or len(paths) != 1:
        return None
    now = {s.path: s for s in edited}
    hashes = index.hashes(os.path.abspath(paths[0]), [(p, m) for p, m in listed if p not in now])
    if hashes is None:
        return None
    if not now.keys() <= {p for p, _ in listed}:
        return None
    hashes.update((p, content_hash(s.text)) for p, s in now.items())
    sources = with_modules([now.get(p) or SourceFile(p, "", module) for p, module in listed])
    if any(s.module != module and s.path not in now for s, (_, module) in zip(sources, listed, strict=True)):
        return None
    return sources, hashes, _before(hashes, then, news)


@collector_paused()
def update_bodies(
    paths: Sequence[Path],
    sid: str,
    tree: tuple[str, TreeIndex, Sequence[Any]],
    facts: tuple[Sequence[FileFacts], Sequence[FileFacts]],
    edited: Sequence[SourceFile],
    *,
    store_path: str | Path,
    clock: Callable[[], float],
    started: float,
    commit_of: Callable[[], str | None],
    indexes: TreeIndexes,
    kept: Callable[[Any], Any],
    request: Any = None,
    added: NewFiles = ([], (), None, []),
) -> UpdateResult | None:
    """The update of session ``sid`` when the files changed since its index (``tree``: its key, the index, the
    files whose bytes changed) changed from ``facts`` (then, now) what their bodies call alone (see the module
    doc), with the files ``added`` beside others of their language or removed from beside them
    (``added.NewFiles``); its kept calls and the index's rows of the files linked again written, the index
    noted (to be kept); None: the general path decides. ``edited``: the changed files as the walk reads them
    now (``samefacts``); ``kept``: reads the last link's calls (``TreeIndexes.calls``); ``request``: the
    session's, loaded already. It makes no cycles (collector paused: at 50,000 files, its passes over the
    facts and the model took half the time)."""
    key, index, changed = tree
    then, now = facts
    news, found_added, listed, gone = added
    declared = [(_declares(a), _declares(b)) for a, b in zip(then, now, strict=True)]
    if not all(names_told(a, b) for a, b in zip(then, now, strict=True)) or any(a - b for a, b in declared):
        return None
    born = parsed_added(news)
    symbols = {k for a, b in declared for k in b - a} | {k for f in born for k in _declares(f)}
    mark = clock()
    removed = removed_files(paths, index, listed, gone)
    moving = (then, now, born, news, gone)
    listed, listing, census = _listing(indexes, (key, sid, index), listed, moving, symbols)
    found = _sources(paths, index, listing, ([*edited, *news], then, news))
    if found is None or removed is None:
        return None
    sources, hashes, before = found
    seconds = {"walk": mark - started + clock() - mark}
    mark = clock()
    calls = KeptCalls()
    linked = _link(store_path, sources, (before, hashes), (now, born, removed), (calls, kept))
    if linked is None:
        return None
    model, local, parsed = linked
    new_paths = {f.path for f in born}
    symbols |= _symbols_of(model, new_paths)
    elements = _elements(
        indexes, key, local, _reached_files(model, local) | beside_files(listed, new_paths), new_paths
    )
    seconds["parse_and_diff"] = clock() - mark
    store, whole = update_store(store_path), listing is listed
    planning = (model, local, set(gone), symbols)
    loaded = _load_and_plan((store, sid, request), elements, planning, census, clock, whole)
    if loaded is None or (loaded[1].remove_nodes and not held_within(indexes, key, loaded[1], local)):
        return None
    session, diff, fit, took = loaded
    state = session.state
    seconds["load"], seconds["parse_and_diff"] = took[0], seconds["parse_and_diff"] + took[1]
    check_update_size(state, diff, session.config.constraints, sid)
    counts = (index.read + len(born), parsed, len(local & hashes.keys()))
    files = _files(counts, (sorted(f.path for f in now), new_paths), (removed, hashes))
    commit = commit_of()
    mark = clock()
    _keep(store_path, sources, hashes, [*now, *born])
    update = apply_step(session, diff, files, commit, (clock, started))
    step = store.session(sid).last_step
    indexes.put_calls(sid, step, calls)
    _keep_census(indexes, (sid, index.last_step, step), (fit, diff), None if whole else symbols)
    kept_files = (changed, edited, news, found_added, listed, removed)
    keep_index(indexes, (key, index, step), state, local, kept_files)
    seconds["commit"] = clock() - mark
    seconds["total"] = clock() - started
    log.debug("map_code_update_bodies", session_id=sid, files=files)
    size = (state.node_count, state.edge_count)
    seconds = {k: seconds[k] for k in ("load", "walk", "parse_and_diff", "commit", "total")}
    return update_result(sid, step, update.iteration, update.changes, files, size, commit, seconds)


def _load_and_plan(
    session: tuple[Any, str, Any],
    elements: list[str] | None,
    linked: tuple[CodeModel, set[str], set[str], set[str]],
    census: Census | None,
    clock: Callable[[], float],
    whole: bool,
) -> tuple[Any, Difference, SchemaFit, tuple[float, float]] | None:
    """The session (``session``: its store, id and request, when loaded already) loaded with ``elements``, the
    difference of the files linked again planned on it (``linked``: the model, the files, those of them
    removed, the symbols added;
    ``_plan``, with the last step's ``census`` unless every file was linked: ``whole``), and the seconds each
    took; None: the general path decides."""
    store, sid, request = session
    mark = clock()
    loaded = load_map(store, sid, elements=elements, request=request) if elements else None
    if loaded is None:
        return None
    load = clock() - mark
    mark = clock()
    model, local, gone, symbols = linked
    planned = _plan(loaded.state, model, (local, gone), symbols, None if whole else census)
    if planned is None:
        return None
    return loaded, *planned, (load, clock() - mark)


def _listing(
    indexes: TreeIndexes,
    at: tuple[str, str, TreeIndex],
    listed: list[tuple[str, str | None]] | None,
    facts: tuple[
        Sequence[FileFacts], Sequence[FileFacts], Sequence[FileFacts], Sequence[SourceFile], Sequence[str]
    ],
    symbols: set[str],
) -> tuple[list[tuple[str, str | None]] | None, list[tuple[str, str | None]] | None, Census | None]:
    """The files the walk read (``listed``, else the index's, ``at``: its key, the session, the index) with
    those added where it reads them and without those removed, those of them to link (``_linked_files``),
    and the census of the last step when symbols are added (``facts``: the changed files' then and now, the
    added files' and their sources, the paths of the files removed). When the census holds the key of a
    symbol added: every file, without the census, if it is stale (the symbol's file perhaps removed since,
    then put back: ``Census.stale``), else None to link (the general path decides)."""
    key, sid, index = at
    then, now, born, news, gone = facts
    listed = listed if listed is not None else indexes.sources(key)
    if (news or gone) and listed is not None:
        listed = with_added(listed, news, gone)
    census = indexes.census(sid, index.last_step) if symbols or news else None
    if census is not None and census.holds_any(orjson.dumps(k) for k in symbols):
        if census.stale:  # perhaps a symbol removed since: every file linked, as without a census
            return listed, _linked_files(listed, (then, [*now, *born]), symbols, None, gone), None
        return listed, None, census
    return listed, _linked_files(listed, (then, [*now, *born]), symbols, census, gone), census


def _files(
    counts: tuple[int, int, int], paths: tuple[list[str], set[str]], moved: tuple[Removed, dict[str, str]]
) -> dict[str, Any]:
    """The update's ``files``: the files read (``counts``: but for those removed), parsed and linked again,
    changed and added (``paths``), removed, and renamed (``touched.renamed``: a file added with the content of
    one removed; ``moved``: the files removed, each file's content hash now)."""
    read, parsed, relinked = counts
    changed, added = paths
    gone, hashes = moved
    removed = sorted(gone)
    read -= len(removed)
    renames = renamed({p: sha for p, (_, sha, _) in gone.items()}, hashes, sorted(added), removed)
    return {
        "read": read,
        "reparsed": parsed,
        "unchanged": read - parsed,
        "relinked": relinked,
        "added": sorted(added),
        "changed": changed,
        "removed": removed,
        "renamed": renames,
    }


def _before(hashes: dict[str, str], then: Sequence[FileFacts], news: Sequence[SourceFile]) -> dict[str, Any]:
    """Each file's content hash at the last map: the index's (``hashes``), the changed files' from their facts
    then (``then``), none for the files added (``news``)."""
    added = {s.path for s in news}
    before: dict[str, Any] = {p: h for p, h in hashes.items() if p not in added}
    before.update((f.path, f.sha) for f in then)
    return before


def _symbols_of(model: CodeModel, paths: set[str]) -> set[str]:
    """The symbols the files ``paths`` (added) declare in ``model``, none of which another file shares (their
    Module nodes, their declarations): each is a node to add (``_adds``)."""
    return {k for plan in model.files if plan.path in paths for k in plan.symbols if not k.startswith(SHARED)}


__all__ = ["update_bodies"]
