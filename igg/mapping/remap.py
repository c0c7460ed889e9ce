"""The general path of ``igg map-code --update`` (``igg.mapping.update``): the stored graph loaded, the tree
walked and its changed files parsed, the files a change reaches linked again, and the difference from the
graph a fresh map would build applied as one step (see ``igg.mapping.update`` for what is linked again)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from igg.act.counts import COUNTS
from igg.act.difference import Difference
from igg.agents.code.mapping import SchemaFit
from igg.codemap.cache import FactsCache, content_hash
from igg.codemap.facts import FileFacts
from igg.codemap.language import get as get_language
from igg.codemap.language import is_config, is_stub
from igg.codemap.link import link
from igg.codemap.model import CallRow, CodeModel, KeptCalls
from igg.codemap.routes import handler_names
from igg.codemap.sources import SourceFile, analyze, with_modules
from igg.codemap.walk import WalkResult, walk
from igg.graph.collector import collector_paused
from igg.graph.state import GraphState
from igg.mapping.declared import changed_names, imports_flow
from igg.mapping.difference import plan_difference, plan_file_difference
from igg.mapping.limits import check_update_size
from igg.mapping.moved import imports_stem, moved_names
from igg.mapping.touched import Moved, alone, named_then, renamed
from igg.mapping.updated import (
    UpdateResult,
    apply_step,
    file_elements,
    load_map,
    module_nodes,
    update_result,
    update_store,
)
from igg.record.logs import get_logger
from igg.store.location import resolve_store_path, sidecar_path

log = get_logger("igg.code")

KeptRows = Callable[[Mapping[str, Any]], Mapping[str, list[CallRow]] | None]
"""Reads the calls kept from a session's last link for some files (path -> their content hash then:
``TreeIndexes.calls``)."""


def _reach(
    facts: Sequence[FileFacts],
    earlier: dict[str, tuple[str | None, str | None]],
    cache: FactsCache,
    moved: tuple[set[str], dict[str, tuple[str | None, str | None]]] = (set(), {}),
    *,
    flows: bool = True,
) -> tuple[set[str], dict[str, FileFacts], set[str]] | None:
    """The files to link again after the changes of ``earlier`` (changed files: path -> the module name their
    facts are cached under and their content hash at the last map): the changed files, and every other file
    of their languages that mentions a name whose meaning changed (``changed_names``; no analyzer resolves a
    name across languages); when a file's value flows changed (Python's: its calls, assignments, returns),
    every file of its language, whose calls are one program (``Language.keeps_calls``: values cross modules
    without a name changing; no other language reads them); and when no name or flow changed (bodies and
    lines alone), the changed files' facts at the last map, by path (else none). None when that cannot be
    known (a change that reaches further, a stub, facts or names missing from the cache): every file is then
    linked again. ``moved``: the files added and removed (path -> module name and content hash at the last
    map), which ``touched.alone`` found to name no other file: they reach the files of their languages that
    name what they declare or import their paths (``_moved_reach``). And the languages whose flows changed
    (``flows=False``: their other files are not linked again, but those mentioning a changed name;
    ``_link_flows`` finds the others)."""
    added, removed = moved
    if not earlier and not added and not removed:
        return set(), {}, set()
    new = {f.path: f for f in facts if f.path in earlier}
    if len(new) != len(earlier) or any(is_stub(p) or not sha for p, (_, sha) in earlier.items()):
        return None
    stubbed = {f.module for f in facts if is_stub(f.path)}
    if any(f.module in stubbed for f in facts if f.path in new or f.path in added):
        return None  # a stub merges into its module: not a file of its own
    olds = cache.get_many([FactsCache.key(p, earlier[p][0], earlier[p][1] or "") for p in new], bodies=False)
    handlers = handler_names(facts)
    if handlers and any(_handles(f, handlers) for f in [*new.values(), *olds] if f is not None):
        return None  # a route's HANDLES edge from a changed file's handler is stated by the route's file
    names: set[str] = set()
    flowed: set[str] = set()  # the languages whose calls a changed flow reaches: all of their files'
    for f, old in zip(new.values(), olds, strict=True):
        if old is None or old.module != f.module or (found := changed_names(old, f)) is None:
            return None
        names.update(found)
        if imports_flow(old, f):
            if not get_language(f.language).keeps_calls:
                return None
            flowed.add(f.language)
    languages = {f.language for f in new.values()}
    stems: set[str] = set()
    if added or removed:
        moved_reach = _moved_reach(facts, added, removed, cache, handlers)
        if moved_reach is None:
            return None
        moved_names, stems, moved_languages = moved_reach
        names |= moved_names
        languages |= moved_languages
        flowed.update(m for m in moved_languages if get_language(m).keeps_calls)
    elif not names and not flowed:
        kept = {f.path: old for f, old in zip(new.values(), olds, strict=True) if old is not None}
        return _with_their_methods(facts, set(new)), kept, set()
    reach = _mentioning(
        facts, {*new, *added, *removed}, (names, languages), flowed if flows else set(), stems
    )
    return (_with_their_methods(facts, reach), {}, flowed) if reach is not None else None


def _with_their_methods(facts: Sequence[FileFacts], reach: set[str]) -> set[str]:
    """``reach`` and every file that declares a method of a type declared in it (Go: a type's methods in
    other files of its package), whose CONTAINS and lifted edges go out of that type's node: linked alone,
    the type's file would not state them, and its edges would be planned without them. The files that declare
    the types of its methods come with it (their CONTAINS of those methods goes out of a node of theirs), and
    so the other files of their methods."""
    declared = {t.qualified: f.path for f in facts for t in f.types}
    reach |= {
        declared[c.owner]
        for f in facts
        if f.path in reach
        for c in f.callables
        if c.owner and c.owner in declared
    }
    owners = {t.qualified for f in facts if f.path in reach for t in f.types}
    while owners:
        found = {
            f.path
            for f in facts
            if f.path not in reach and any(c.owner in owners for c in f.callables if c.owner)
        }
        reach |= found
        owners = {t.qualified for f in facts if f.path in found for t in f.types}
    return reach


def _mentioning(
    facts: Sequence[FileFacts],
    reach: set[str],
    named: tuple[set[str], set[str]],
    flowed: set[str],
    stems: Collection[str] = (),
) -> set[str] | None:
    """``reach`` and every other file of the languages ``flowed``, or of the languages of ``named`` (names,
    languages) that mentions one of its names or imports a path whose last part is one of ``stems`` (a file
    added or removed: ``moved.moved_names``), or a name a file so found binds or exports one of them by
    (``_renamed``: ``from m import X as Z``, ``export { X as Z } from``, ``export default X``), and so on
    (no analyzer resolves a name across languages: HTTP routes, the one join across them, link every file);
    None when such a file's facts keep no names."""
    names, languages = set(named[0]), named[1]
    marks = [f"\n{n}\n" for n in names]
    while True:
        for f in facts:
            if f.path in reach:
                continue
            if f.language in flowed:
                reach.add(f.path)
            elif f.language not in languages or f.config is not None:  # a configuration resolves no name
                continue
            elif f.names is None:  # facts cached before names were kept: nothing to go by
                return None
            elif any(m in f.names for m in marks) or (stems and imports_stem(f, stems)):
                reach.add(f.path)
        renamed = {
            r for f in facts if f.path in reach and f.language in languages for r in _renamed(f, names)
        }
        if renamed <= names:
            return reach
        marks = [f"\n{n}\n" for n in renamed - names]
        names |= renamed


def _renamed(f: FileFacts, names: set[str]) -> set[str]:
    """The names by which ``f`` binds or exports one of ``names`` (a declaration's or one bound so): an
    import's alias, an export's name. A file that imports ``f``'s name reaches the declaration through it,
    mentioning neither the declaration's name nor ``f``'s (Python's ``from pkg import Z`` where ``pkg`` holds
    ``from .sub import X as Z``; TypeScript's ``export { X as Z } from "./sub"``, ``export default X``)."""
    found: set[str] = set()
    for i in f.imports:
        imported = i.member if i.member is not None else i.target.rpartition(".")[2] if i.source else None
        if imported in names and i.alias:
            found.add(i.alias.removeprefix("export:"))
    for name, local in f.exports.items():
        if local.removeprefix("export:").partition(".")[0] in names:
            found.update(name.split("."))
    return found


def _moved_reach(
    facts: Sequence[FileFacts],
    added: set[str],
    removed: dict[str, tuple[str | None, str | None]],
    cache: FactsCache,
    handlers: set[str],
) -> tuple[set[str], set[str], set[str]] | None:
    """What the files ``added`` and ``removed`` (see ``_reach``) reach: the names other files find their
    declarations by and the last parts of the paths other files import them by (``moved.moved_names``), and
    their languages (whose files alone can: no analyzer resolves a name across languages; where calls are one
    program, Python's, every file of it). None when a removed file's facts at the last map are missing, one
    states HTTP routes or declares a route's handler (``handlers``: HTTP routes, the one join across
    languages, link every file), or ``moved_names`` cannot tell. (A package, a table or an outside module
    that comes or goes with one is found by ``difference.plan_file_difference``.)"""
    keys = [FactsCache.key(p, module, sha or "") for p, (module, sha) in removed.items()]
    then = cache.get_many(keys, bodies=False)
    files = [f for f in facts if f.path in added] + [f for f in then if f is not None]
    if len(files) != len(added) + len(removed):
        return None
    if any(f.http or _handles(f, handlers) for f in files):
        return None
    names: set[str] = set()
    stems: set[str] = set()
    for f in files:
        found = moved_names(f, facts)
        if found is None:
            return None
        names |= found[0]
        stems |= found[1]
    return names, stems, {f.language for f in files}


def _with_bodies(
    facts: list[FileFacts],
    sources: Sequence[SourceFile],
    shas: dict[str, str],
    cache: FactsCache,
    whole: set[str],
    paths: set[str] | None,
) -> None:
    """Replace the facts of ``paths`` (None: of every file) read without bodies by the whole facts (from the
    cache, else parsed again; those it gave whole already stay: ``FactsCache.whole``); ``whole`` (paths whose
    facts are whole) grows accordingly."""
    todo: list[tuple[int, str]] = []
    for i, f in enumerate(facts):
        if f.path in whole or (paths is not None and f.path not in paths):
            continue
        key = FactsCache.key(sources[i].path, sources[i].module, shas[sources[i].path])
        if key in cache.whole:
            whole.add(f.path)
        else:
            todo.append((i, key))
    for (i, _), found in zip(todo, cache.get_many([k for _, k in todo]), strict=True):
        facts[i] = found if found is not None else analyze(sources[i])
        whole.add(facts[i].path)


def _given_calls(
    facts: Sequence[FileFacts], olds: dict[str, FileFacts], before: dict[str, Any], kept: KeptRows
) -> dict[str, list[CallRow]]:
    """The calls kept from the last link for each changed file whose language keeps them (``KeptCalls``),
    moved to the file's new sites (``olds``: the changed files' facts at the last map, when only bodies and
    lines changed; ``before``: each file's content hash then). Empty when one file's are not kept or cannot
    be moved: the link solves the program."""
    wanted = {p: before.get(p) for p, old in olds.items() if get_language(old.language).keeps_calls}
    rows = kept(wanted) if wanted else None
    if rows is None:
        return {}
    new = {f.path: f for f in facts if f.path in wanted}
    given: dict[str, list[CallRow]] = {}
    for path, found in rows.items():
        moved = get_language(new[path].language).moved_calls(olds[path], new[path], found)
        if moved is None:
            return {}
        given[path] = moved
    return given


def _link_reached(
    facts: list[FileFacts],
    sources: Sequence[SourceFile],
    shas: tuple[dict[str, Any], dict[str, str]],
    cache: FactsCache,
    whole: set[str],
    reached: tuple[set[str], dict[str, FileFacts]],
    calls: tuple[KeptCalls, KeptRows],
) -> CodeModel:
    """The link of the files ``reached`` (``_reach``: the files to link again, and the changed files' facts at
    the last map when only bodies and lines changed) alone, with their bodies, the kept calls of the changed
    files given (``_given_calls``)."""
    local, olds = reached
    keeping, kept = calls
    before, now = shas
    _with_bodies(facts, sources, now, cache, whole, local)
    keeping.given = _given_calls(facts, olds, before, kept)
    return link(facts, only=local, calls=keeping)


def link_bodies(
    facts: list[FileFacts],
    sources: Sequence[SourceFile],
    shas: tuple[dict[str, Any], dict[str, str]],
    changed: list[str],
    cache: FactsCache,
    parsed: list[str],
    calls: tuple[KeptCalls, KeptRows],
    added: Collection[str] = (),
    removed: Mapping[str, tuple[str | None, str | None]] | None = None,
) -> tuple[CodeModel, set[str]] | None:
    """The link of the files ``changed`` in place and ``added`` (facts read without bodies, those of
    ``parsed`` parsed now), without those ``removed`` (path -> module name and content hash at the last map),
    as the general path links them, and the files linked (those removed among them): those ``_reach`` finds
    (with the kept calls when only bodies and lines changed), and when flows changed those whose calls the
    program solved again resolves otherwise (``_link_flows``); None when a change reaches further or another
    file was parsed."""
    before = shas[0]
    if not set(parsed) <= {*changed, *added}:
        return None
    module_of = {f.path: f.module for f in sources}
    earlier = {p: (module_of[p], before[p]) for p in changed}
    reached = _reach(facts, earlier, cache, (set(added), dict(removed or {})), flows=False)
    if reached is None:
        return None
    reach, olds, flowed = reached
    if flowed:  # a value flow changed: the program is solved again
        program = {f.path for f in facts if f.language in flowed}
        return _link_flows(facts, sources, shas, (sorted(reach), set(parsed), program), cache, calls)
    return _link_reached(facts, sources, shas, cache, set(parsed), (reach, olds), calls), reach


def _link_flows(
    facts: list[FileFacts],
    sources: Sequence[SourceFile],
    shas: tuple[dict[str, Any], dict[str, str]],
    files: tuple[list[str], set[str], set[str]],
    cache: FactsCache,
    calls: tuple[KeptCalls, KeptRows],
) -> tuple[CodeModel, set[str]] | None:
    """The link after changes of value flows (``files``: the files ``_reach`` found, those parsed now, and
    the program: every file of their languages), solved again with every file's bodies as the general path
    solves it. Files whose calls it resolves as the last link did (``KeptCalls``) state what they stated; the
    others are linked again, their calls given (a route's handler among them: with every file of routes and
    handlers). None when the last link's calls are not kept."""
    changed, parsed, program = files
    keeping, kept = calls
    _with_bodies(facts, sources, shas[1], cache, parsed, program | set(changed))
    solved = KeptCalls()
    # the program is solved as a file of it is linked: with a file removed alone, one that stays is linked
    solving = changed if program.intersection(changed) else [*changed, *sorted(program)[:1]]
    link(facts, only=solving, calls=solved)
    if not solved.whole:
        return None
    others = {p: shas[0].get(p) for p in solved.made if p not in changed}
    rows = kept(others) if others else {}
    if rows is None:
        return None
    moved = {*changed, *(p for p, (_, found) in solved.made.items() if p not in changed and rows[p] != found)}
    handlers = handler_names(facts)
    if handlers and any(_handles(f, handlers) for f in facts if f.path in moved):
        # the files of routes state the HANDLES edges going out of their handlers' (Django's views)
        moved |= {f.path for f in facts if (f.http and f.http.routes) or _handles(f, handlers)}
    local = _with_their_methods(facts, moved)
    keeping.given = {p: solved.made[p][1] for p in local if p in solved.made}
    model = link(facts, only=local, calls=keeping)
    keeping.made, keeping.whole = {p: solved.made[p] for p in moved if p in solved.made}, False
    return model, local


def _handles(f: FileFacts, handlers: set[str]) -> bool:
    """Whether ``f`` declares a function or class of one of the names routes give their ``handlers`` (a
    class: Django's class-based views, whose methods' ``HANDLES`` edges the route's file states)."""
    return any(c.name in handlers for c in f.callables) or any(t.name in handlers for t in f.types)


@collector_paused()
def remap(
    paths: list[Path],
    sid: str,
    *,
    max_bytes: int,
    jobs: int | None,
    package_prefix: str | None,
    chosen: Sequence[str] | None,
    clock: Callable[[], float],
    started: float,
    commit_of: Callable[[], str | None],
    store_path: str | Path,
    kept: KeptRows,
) -> tuple[UpdateResult, WalkResult, KeptCalls, tuple[dict[str, str], dict[str, list[str]]], bytes | None]:
    """The update of session ``sid`` (see the module doc), its walk, the calls its link resolved (``kept``
    reads the last link's: ``KeptCalls``), each file's Module node and elements now, and the census of the
    symbols of its model (``SchemaFit.census``); it makes no cycles (collector paused)."""
    store = update_store(store_path)
    session = load_map(store, sid)
    state = session.state
    seconds = {"load": clock() - started}
    mark = clock()
    walked = walk(paths, max_bytes=max_bytes, package_prefix=package_prefix, chosen=chosen, listings=True)
    before = _module_shas(state)
    # configuration files (tsconfig.json, go.mod) are no modules: a changed one is parsed again (links all)
    shas = {f.path: content_hash(f.text) for f in walked.files}
    now = {path: sha for path, sha in shas.items() if not is_config(path)}
    seconds["walk"] = clock() - mark
    mark = clock()
    counts: dict[str, int] = {}
    parsed: list[str] = []
    added = sorted(p for p in now if p not in before)
    removed = sorted(p for p in before if p not in now)
    changed = sorted(p for p in now if p in before and before[p] != now[p])
    calls = KeptCalls()
    diff, local, census = _plan(
        walked.files,
        store_path,
        state,
        jobs=jobs,
        counts=counts,
        parsed=parsed,
        shas=(before, shas),
        changed=changed,
        moved=(set(added), removed, walked.disk) if alone(added, removed, now, before) else None,
        calls=(calls, kept),
        keep=_keeping(paths, walked, chosen=chosen, package_prefix=package_prefix, max_bytes=max_bytes),
    )
    seconds["parse_and_diff"] = clock() - mark
    check_update_size(state, diff, session.config.constraints, sid)
    files: dict[str, Any] = {
        "read": len(walked.files),
        "reparsed": counts.get("parsed", 0),
        "unchanged": counts.get("cached", 0),
        "relinked": len(local & shas.keys()) if local is not None else len(walked.files),
        "added": added,
        "changed": changed,
        "removed": removed,
        "renamed": renamed(before, now, added, removed),
    }
    commit = commit_of()
    mark = clock()
    if diff:
        update = apply_step(session, diff, files, commit, (clock, started))
        iteration, changes = update.iteration, update.changes
    else:  # nothing to change: no step is kept, the session stays at its last one
        iteration, changes = session.last_iteration, dict.fromkeys(COUNTS, 0)
    step = store.session(sid).last_step
    seconds["commit"] = clock() - mark
    seconds["total"] = clock() - started
    size = (state.node_count, state.edge_count)
    result = update_result(sid, step, iteration, changes, files, size, commit, seconds)
    return result, walked, calls, (module_nodes(state), file_elements(state)), census


KeepFacts = Callable[[FactsCache, list[FileFacts], list[tuple[str | None, str]]], object]
"""Keeps what a whole tree's facts (with their modules and keys) give for later commands."""


def _keeping(
    paths: list[Path],
    walked: WalkResult,
    *,
    chosen: Sequence[str] | None,
    package_prefix: str | None,
    max_bytes: int,
) -> KeepFacts | None:
    """How an update whose change the imports may show (one that links every file, or adds or removes files)
    keeps the tree's graph of imports for the next ``igg check``, as a map does
    (``igg.mapping.kept.keep_mapped``: the change may have left the graph kept before behind); None for a map
    of some languages."""
    from igg.codemap.language import check_languages
    from igg.mapping.kept import keep_mapped

    if check_languages(chosen) != check_languages(None):
        return None
    return lambda cache, facts, keys: keep_mapped(
        paths, cache, walked, facts, keys, package_prefix=package_prefix, max_bytes=max_bytes
    )


def _module_shas(state: GraphState) -> dict[str, Any]:
    """Each mapped file's path -> its content hash at the last map (from its Module node)."""
    return {
        state.node_properties(n)["path"]: state.node_properties(n).get("sha")
        for n in state.nodes_of_type("Module")
        if "path" in state.node_properties(n)
    }


def _plan(
    walked: Sequence[Any],
    store_path: str | Path,
    state: GraphState,
    *,
    jobs: int | None,
    counts: dict[str, int],
    parsed: list[str],
    shas: tuple[dict[str, Any], dict[str, str]],
    changed: list[str],
    moved: Moved | None,
    calls: tuple[KeptCalls, KeptRows],
    keep: KeepFacts | None = None,
) -> tuple[Difference, set[str] | None, bytes | None]:
    """The difference a fresh map makes, the files linked again (None: all of them), and the census of the
    symbols of the model it was planned from (``SchemaFit.census``). The common case,
    files changed in place, links only them and the files that mention a changed declaration (every other
    file's facts must be those of the last map: from the cache, not parsed again by a newer IGG); when only
    bodies and lines changed, the changed files take the calls kept from the last link, moved
    (``_given_calls``). ``calls``: where the link's calls are kept, and how to read those kept before. A
    change that links every file, or adds or removes files (``moved``; None when they cannot be linked alone:
    ``touched.alone``), gives ``keep`` the facts of the whole tree (``_keeping``)."""
    from igg.mapping.prepare import parse_all

    before, now = shas
    keeping, kept = calls
    cache = FactsCache(sidecar_path(resolve_store_path(store_path), ".codefacts"))
    try:
        sources = with_modules(walked)
        # the files not parsed again come without bodies: only those linked again need theirs (read below)
        keys: list[tuple[str | None, str]] = []
        facts, _ = parse_all(
            sources, jobs=jobs, cache=cache, counts=counts, parsed=parsed, bodies=False, keys=keys
        )
        whole = set(parsed)  # the files whose facts hold their bodies (the others' were read without)
        if moved is not None and set(parsed) <= {*changed, *moved[0]}:
            module_of = {f.path: f.module for f in sources}
            then = named_then(moved, module_of, before)
            reached = (
                _reach(facts, {p: (module_of[p], before[p]) for p in changed}, cache, (moved[0], then))
                if then is not None
                else None
            )
            if reached is not None:
                local, olds, _ = reached
                if keep is not None and (moved[0] or moved[1]):
                    keep(cache, facts, keys)  # the tree's imports changed: the graph kept for checks too
                    keep = None
                model = _link_reached(facts, sources, (before, now), cache, whole, (local, olds), calls)
                fit = SchemaFit(model, state.schema)
                diff = plan_file_difference(state, fit, local)
                if diff is not None:
                    return diff, local, fit.census()
                keeping.given, keeping.made, keeping.whole = {}, {}, False
        # files added, removed or renamed, a supertype or import changed, facts not cached: the whole graph
        if keep is not None:
            keep(cache, facts, keys)
        _with_bodies(facts, sources, now, cache, whole, None)
        model = link(facts, calls=keeping)
        facts.clear()  # the difference reads the model alone: it takes the facts' memory (a GB at 50k files)
        fit = SchemaFit(model, state.schema)
        return plan_difference(state, fit), None, fit.census()
    finally:
        cache.close()


__all__ = ["link_bodies", "remap"]
