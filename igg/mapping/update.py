"""Incremental re-mapping: ``igg map-code PATH --store S --update``.

A map-code session keeps each file's content hash on its Module node (``sha``) and the parsed facts in a
cache beside the store (``codemap.cache``). An update walks the tree again, parses only the files whose
content is new (changed, added, or renamed), takes the facts of the others from the cache, and applies the
difference between the stored graph and the graph a fresh map would build as ONE new step of the session:
nodes and edges added, removed and changed. The step is numbered as the next iteration, so
``igg diff SESSION N N+1`` shows the architecture change; it records the files re-parsed, unchanged, added,
changed, removed and renamed, how many were linked again, and the git commit when the tree is a git work tree.

What is linked again: a change in one file can change what another file's names resolve to, but only through
names. When files changed in place and each still has its module, package, imports, tables, and types with
their kinds, supertypes and enclosing types (``changed_names``), the files linked again are the changed ones
and those whose facts mention a callable, field or type that came, went or was redeclared (each cached fact
keeps the names it mentions); only their own nodes and the edges going out of them are compared with the
graph (``difference.plan_file_difference``). Anything else (files added, removed or renamed, a supertype
changed, facts not in the cache) links every file and compares the whole graph
(``difference.plan_difference``). Either difference is applied by the act step through the session
(``Session.apply_update``), and both give the graph a fresh map gives
(``tests/unit/test_code_update_local.py`` checks each kind of change both ways).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import structlog

from igg.act.difference import COUNTS, Difference
from igg.agents.code.mapping import SchemaFit
from igg.codemap.cache import FactsCache, content_hash
from igg.codemap.facts import CallableDecl, FileFacts
from igg.codemap.language import get as get_language
from igg.codemap.language import is_config, is_stub
from igg.codemap.link import link
from igg.codemap.routes import handler_names
from igg.codemap.sources import SourceFile, analyze, with_modules
from igg.codemap.treeindex import INDEX_SUFFIX, TreeIndex, TreeIndexes, index_key
from igg.codemap.walk import DEFAULT_MAX_BYTES, WalkResult, walk
from igg.errors import Problem, RequestInvalid, SessionRefused
from igg.graph.state import GraphState
from igg.mapping.difference import plan_difference, plan_file_difference
from igg.mapping.limits import check_update_size
from igg.mapping.prepare import existing_paths, git_commit_soon
from igg.store.location import resolve_store_path, sidecar_path

log = structlog.get_logger("igg.code")

MAP_CODE_AGENTS = ("code",)
"""Sessions an update can continue: those the static agent mapped (its graph is the static map)."""


@dataclass(kw_only=True)
class UpdateResult:
    """What one update did."""

    session_id: str
    step: int
    iteration: int
    files: dict[str, Any]
    graph: dict[str, int]
    git_commit: str | None
    seconds: dict[str, float] = field(default_factory=dict)
    exports: list[dict[str, Any]] = field(default_factory=list)
    """One summary per export made after the update (``igg.service.update_code_map``)."""
    export_error: Exception | None = None
    """Set when an export failed (the update itself is committed)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "step": self.step,
            "iteration": self.iteration,
            "files": self.files,
            "graph": self.graph,
            "git_commit": self.git_commit,
            "seconds": {k: round(v, 3) for k, v in self.seconds.items()},
            "exports": self.exports,
        }


def _pick_session(store: Any, session_id: str | None) -> str:
    if session_id:
        return session_id
    for info in store.sessions():
        if info.agent in MAP_CODE_AGENTS and info.goal.startswith("Map the code dependencies"):
            return str(info.session_id)
    raise RequestInvalid(
        [
            Problem(
                "--update",
                f"no map-code session in {store.path}; map the tree first "
                "(igg map-code PATH --store STORE) or name one with --session ID",
            )
        ],
        source="the command line",
    )


def _declarations(f: FileFacts) -> tuple[Any, ...]:
    """What other files' linking reads of ``f`` besides its types and callables: module, package, language,
    a parse error, its imports, the tables its statements name (line numbers left out), what it exports,
    for a configuration file what it says, and its HTTP routes, mounts and requests (joined across files and
    services: any change to them links every file again)."""
    return (
        f.module,
        f.package,
        f.language,
        f.error,
        [replace(i, line=0, column=0) for i in f.imports],
        sorted({r.table for c in f.callables for r in c.sql}),
        f.config,
        f.exports,
        f.http,
    )


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


def _flows(f: FileFacts) -> list[tuple[Any, ...]]:
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
    that need not name it), or a Python file's value flows changed (``_flows``)."""
    if (
        _declarations(old) != _declarations(new)
        or _abstract(old) != _abstract(new)
        or _flows(old) != _flows(new)
    ):
        return None
    names: set[str] = set()
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


def _reach(
    facts: Sequence[FileFacts], earlier: dict[str, tuple[str | None, str | None]], cache: FactsCache
) -> set[str] | None:
    """The files to link again after the changes of ``earlier`` (changed files: path -> the module name their
    facts are cached under and their content hash at the last map): the changed files, and every other file
    that mentions a name whose meaning changed (``changed_names``). None when that cannot be known (a change
    that reaches further than names, a stub, facts or names missing from the cache): every file is then
    linked again."""
    if not earlier:
        return set()
    new = {f.path: f for f in facts if f.path in earlier}
    if len(new) != len(earlier) or any(is_stub(p) or not sha for p, (_, sha) in earlier.items()):
        return None
    stubbed = {f.module for f in facts if is_stub(f.path)}
    if any(f.module in stubbed for f in new.values()):
        return None  # a stub merges into its module: not a file of its own
    olds = cache.get_many([FactsCache.key(p, earlier[p][0], earlier[p][1] or "") for p in new], bodies=False)
    handlers = handler_names(facts)
    if handlers and any(
        c.name in handlers for f in [*new.values(), *olds] if f is not None for c in f.callables
    ):
        return None  # a route's HANDLES edge from a changed file's handler is stated by the route's file
    names: set[str] = set()
    for f, old in zip(new.values(), olds, strict=True):
        found = changed_names(old, f) if old is not None and old.module == f.module else None
        if found is None:
            return None
        names.update(found)
    reach = set(new)
    if names:
        marks = [f"\n{n}\n" for n in names]
        for f in facts:
            if f.path in reach:
                continue
            if f.names is None:  # facts cached before names were kept: nothing to go by
                return None
            if any(m in f.names for m in marks):
                reach.add(f.path)
    return reach


def _with_bodies(
    facts: list[FileFacts],
    sources: Sequence[SourceFile],
    shas: dict[str, str],
    cache: FactsCache,
    whole: set[str],
    paths: set[str] | None,
) -> None:
    """Replace the facts of ``paths`` (None: of every file) read without bodies by the whole facts (from the
    cache, else parsed again); ``whole`` (paths whose facts are whole) grows accordingly."""
    todo = [i for i, f in enumerate(facts) if f.path not in whole and (paths is None or f.path in paths)]
    found = cache.get_many(
        [FactsCache.key(sources[i].path, sources[i].module, shas[sources[i].path]) for i in todo]
    )
    for i, f in zip(todo, found, strict=True):
        facts[i] = f if f is not None else analyze(sources[i])
        whole.add(facts[i].path)


def update_map(
    paths: Sequence[Path],
    store_path: str | Path,
    *,
    session_id: str | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    jobs: int | None = None,
    package_prefix: str | None = None,
    chosen: Sequence[str] | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> UpdateResult:
    """Re-map ``paths`` into the stored map-code session (see the module doc); returns what changed.

    Raises ``RequestInvalid`` for a path that does not exist or a store without a map-code session, and
    ``SessionRefused`` for a session that is not a finished static map. ``chosen``: the languages read
    (``--languages``; default: every one).
    """
    from igg.act.apply import collector_paused

    with collector_paused():  # loading, linking and diffing make no cycles (see igg.graph.collector)
        return _update(
            paths,
            store_path,
            session_id=session_id,
            max_bytes=max_bytes,
            jobs=jobs,
            package_prefix=package_prefix,
            chosen=chosen,
            clock=clock,
        )


def _update(
    paths: Sequence[Path],
    store_path: str | Path,
    *,
    session_id: str | None,
    max_bytes: int,
    jobs: int | None,
    package_prefix: str | None,
    chosen: Sequence[str] | None,
    clock: Callable[[], float],
) -> UpdateResult:
    from igg.store import SessionStore

    paths = existing_paths(paths)
    started = clock()
    commit_of = git_commit_soon(paths)
    store = SessionStore(store_path)
    sid = _pick_session(store, session_id)
    info = _check_map(store.session(sid), sid)
    indexes = TreeIndexes(sidecar_path(resolve_store_path(store_path), INDEX_SUFFIX))
    try:
        key = index_key(sid, paths, max_bytes=max_bytes, package_prefix=package_prefix, chosen=chosen)
        quick = _unchanged(indexes.get(key), info, commit_of, started, clock)
        if quick is not None:
            return quick
        result, walked = _general(
            paths,
            store,
            sid,
            max_bytes=max_bytes,
            jobs=jobs,
            package_prefix=package_prefix,
            chosen=chosen,
            clock=clock,
            started=started,
            commit_of=commit_of,
            store_path=store_path,
        )
        indexes.put(key, TreeIndex.of(walked, sid, result.step))
        return result
    finally:
        indexes.close()


def _unchanged(
    index: TreeIndex | None,
    info: Any,
    commit_of: Callable[[], str | None],
    started: float,
    clock: Callable[[], float],
) -> UpdateResult | None:
    """The result of an update that finds, by the tree's index alone, that no file changed since the last map
    or update of the session (which is still at that step): what the general path answers when its
    difference is empty, without parsing a file or loading the graph. None: the general path decides."""
    if index is None or index.session_id != info.session_id or index.last_step != info.last_step:
        return None
    if not index.unchanged():
        return None
    log.debug("map_code_update_unchanged", session_id=info.session_id, files=index.read)
    files: dict[str, Any] = {
        "read": index.read,
        "reparsed": 0,
        "unchanged": index.read,
        "relinked": 0,
        "added": [],
        "changed": [],
        "removed": [],
        "renamed": [],
    }
    walked = clock() - started
    seconds = {"load": 0.0, "walk": walked, "parse_and_diff": 0.0, "commit": 0.0, "total": walked}
    counts = dict.fromkeys(COUNTS, 0)
    return _result(
        info.session_id,
        info.last_step,
        info.last_iteration,
        counts,
        files,
        (info.nodes, info.edges),
        commit_of(),
        seconds,
    )


def _general(
    paths: list[Path],
    store: Any,
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
) -> tuple[UpdateResult, WalkResult]:
    """The update read from the files and the stored graph (see the module doc), and the walk it made."""
    session = _load_map(store, sid)
    state = session.state
    seconds = {"load": clock() - started}
    mark = clock()
    walked = walk(paths, max_bytes=max_bytes, package_prefix=package_prefix, chosen=chosen)
    before = _module_shas(state)
    # configuration files (tsconfig.json, go.mod) are no modules: a changed one is parsed again, and so
    # links all
    shas = {f.path: content_hash(f.text) for f in walked.files}
    now = {path: sha for path, sha in shas.items() if not is_config(path)}
    seconds["walk"] = clock() - mark
    mark = clock()
    counts: dict[str, int] = {}
    parsed: list[str] = []
    added = sorted(p for p in now if p not in before)
    removed = sorted(p for p in before if p not in now)
    changed = sorted(p for p in now if p in before and before[p] != now[p])
    diff, local = _plan(
        walked.files,
        store_path,
        state,
        jobs=jobs,
        counts=counts,
        parsed=parsed,
        shas=(before, shas),
        changed=changed,
        whole_tree=bool(added or removed),
    )
    seconds["parse_and_diff"] = clock() - mark
    check_update_size(state, diff, session.config.constraints, sid)
    files: dict[str, Any] = {
        "read": len(walked.files),
        "reparsed": counts.get("parsed", 0),
        "unchanged": counts.get("cached", 0),
        "relinked": len(local) if local is not None else len(walked.files),
        "added": added,
        "changed": changed,
        "removed": removed,
        "renamed": _renamed(before, now, added, removed),
    }
    commit = commit_of()
    mark = clock()
    if diff:
        update = session.apply_update(
            diff,
            files=files,
            git_commit=commit,
            reasoning=_reasoning(files, commit),
            timings_ms={"total": round((clock() - started) * 1000, 3)},
        )
        iteration, changes = update.iteration, update.changes
    else:  # nothing to change: no step is kept, the session stays at its last one
        iteration, changes = session.last_iteration, dict.fromkeys(COUNTS, 0)
    step = store.session(sid).last_step
    seconds["commit"] = clock() - mark
    seconds["total"] = clock() - started
    size = (state.node_count, state.edge_count)
    return _result(sid, step, iteration, changes, files, size, commit, seconds), walked


def _result(
    sid: str,
    step: int,
    iteration: int,
    changes: dict[str, int],
    files: dict[str, Any],
    size: tuple[int, int],
    commit: str | None,
    seconds: dict[str, float],
) -> UpdateResult:
    """The update's result (session ``sid`` at step ``step``, iteration ``iteration``, after ``changes``;
    ``size``: its nodes and edges now), logged."""
    log.info(
        "map_code_updated",
        session_id=sid,
        step=step,
        iteration=iteration,
        reparsed=files["reparsed"],
        unchanged=files["unchanged"],
        mutations=sum(changes.values()),
        git_commit=commit,
    )
    graph = {**changes, "nodes": size[0], "edges": size[1]}
    return UpdateResult(
        session_id=sid,
        step=step,
        iteration=iteration,
        files=files,
        graph=graph,
        git_commit=commit,
        seconds=seconds,
    )


def _reasoning(files: dict[str, Any], commit: str | None) -> str:
    """What the update step says it did (its reasoning): the files read, re-parsed, added, changed,
    removed."""
    return (
        f"Re-mapped {files['read']} files: {files['reparsed']} re-parsed, {files['unchanged']} "
        f"unchanged; {len(files['added'])} added, {len(files['changed'])} changed, "
        f"{len(files['removed'])} removed" + (f" (git {commit})" if commit else "") + "."
    )


def _check_map(info: Any, sid: str) -> Any:
    """``info``, the stored session ``sid``, when it can be updated: a finished map of the static agent (else
    ``SessionRefused``)."""
    if info.agent not in MAP_CODE_AGENTS:
        raise SessionRefused(
            f"session {sid!r} was mapped with agent {info.agent!r}; --update re-maps sessions "
            "of the static agent (--agent code)",
            session_id=sid,
        )
    if info.status != "finished":
        raise SessionRefused(
            f"session {sid!r} is {info.status}; finish it first (igg map-code ... --resume) "
            "and update it then",
            session_id=sid,
        )
    return info


def _load_map(store: Any, sid: str) -> Any:
    """Stored session ``sid`` (checked by ``_check_map``), loaded to be updated."""
    from igg.session import Session
    from igg.store import StoreSessions

    log.debug("map_code_state_loading", session_id=sid)
    repo = StoreSessions(store)
    # begun: a finished map is not claimed again; its recorder writes the update step without an owner
    return Session.load(repo, sid, lambda info: repo.recorder(agent=info.agent).for_session(sid), begun=True)


def _module_shas(state: GraphState) -> dict[str, Any]:
    """Each mapped file's path -> its content hash at the last map (from its Module node)."""
    return {
        state.node_properties(n)["path"]: state.node_properties(n).get("sha")
        for n in state.nodes_of_type("Module")
        if "path" in state.node_properties(n)
    }


def _renamed(
    before: dict[str, Any], now: dict[str, str], added: list[str], removed: list[str]
) -> list[dict[str, str]]:
    """The removed files whose content an added file has (``from`` -> ``to``), by their hashes."""
    renamed: list[dict[str, str]] = []
    for old in removed:
        twin = next((p for p in added if now[p] == before[old] and before[old]), None)
        if twin is not None:
            renamed.append({"from": old, "to": twin})
    return renamed


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
    whole_tree: bool,
) -> tuple[Difference, set[str] | None]:
    """The difference a fresh map makes, and the files linked again (None: all of them). The common case,
    files changed in place, links only them and the files that mention a changed declaration (every other
    file's facts must be those of the last map: from the cache, not parsed again by a newer IGG)."""
    from igg.mapping.prepare import parse_all

    before, now = shas
    cache = FactsCache(sidecar_path(resolve_store_path(store_path), ".codefacts"))
    try:
        sources = with_modules(walked)
        # the files not parsed again come without bodies: only those linked again need theirs (read below)
        facts, _ = parse_all(sources, jobs=jobs, cache=cache, counts=counts, parsed=parsed, bodies=False)
        whole = set(parsed)  # the files whose facts hold their bodies (the others' were read without)
        if not whole_tree and set(parsed) <= set(changed):
            module_of = {f.path: f.module for f in sources}
            local = _reach(facts, {p: (module_of[p], before[p]) for p in changed}, cache)
            if local is not None:
                _with_bodies(facts, sources, now, cache, whole, local)
                diff = plan_file_difference(state, SchemaFit(link(facts, only=local), state.schema), local)
                if diff is not None:
                    return diff, local
        # files added, removed or renamed, a supertype or import changed, facts not cached: the whole graph
        _with_bodies(facts, sources, now, cache, whole, None)
        return plan_difference(state, SchemaFit(link(facts), state.schema)), None
    finally:
        cache.close()
