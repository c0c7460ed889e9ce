"""Incremental re-mapping: ``igg map-code PATH --store S --update``.

A map-code session keeps each file's content hash on its Module node (``sha``) and the parsed facts in a
cache beside the store (``agents.code.cache``). An update walks the tree again, parses only the files whose
content is new (changed, added, or renamed), takes the facts of the others from the cache, links everything
again (a change in one file can change what another file's names resolve to), and applies the difference
between the stored graph and the graph a fresh map would build as ONE new step of the session: nodes and
edges added, removed and changed. The step is numbered as the next iteration, so ``igg diff SESSION N N+1``
shows the architecture change; it records the files re-parsed, unchanged, added, changed, removed and
renamed, and the git commit when the tree is a git work tree.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import structlog

from igg.agents.code.cache import FactsCache, cache_path, content_hash
from igg.agents.code.facts import FileFacts
from igg.agents.code.link import link
from igg.agents.code.mapping import SchemaFit
from igg.agents.code.sources import with_modules
from igg.agents.code.walk import DEFAULT_MAX_BYTES, walk
from igg.codemap.prepare import git_commit_soon
from igg.errors import Problem, RequestInvalid, SessionRefused
from igg.graph.state import GraphState

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

    def to_dict(self) -> dict[str, Any]:
        return {"session_id": self.session_id, "step": self.step, "iteration": self.iteration,
                "files": self.files, "graph": self.graph, "git_commit": self.git_commit,
                "seconds": {k: round(v, 3) for k, v in self.seconds.items()}}


def _pick_session(store: Any, session_id: str | None) -> str:
    if session_id:
        return session_id
    for info in store.sessions():
        if info.agent in MAP_CODE_AGENTS and info.goal.startswith("Map the code dependencies"):
            return str(info.session_id)
    raise RequestInvalid([Problem("--update", f"no map-code session in {store.path}; map the tree first "
                                              "(igg map-code PATH --store STORE) or name one with --session ID")],
                         source="the command line")


def desired_graph(fit: SchemaFit) -> tuple[dict[tuple[str, tuple[Any, ...]], dict[str, Any]],
                                           set[tuple[str, tuple[str, tuple[Any, ...]], tuple[str, tuple[Any, ...]]]]]:
    """The nodes (by type and identity, with their properties) and edges the code agent proposes for
    ``fit``'s model on a fresh map."""
    nodes = {(p.label, p.identity): p.properties for p in fit.placed.values()}
    edges = set()
    for plan in fit.model.files:
        for r in plan.relations:
            for rel in (r, fit.lifted(r)):
                if rel is None:
                    continue
                label = fit.edge_label(rel)
                if label is None or rel.source == rel.target:
                    continue
                a, b = fit.placed[rel.source], fit.placed[rel.target]
                edges.add((label, (a.label, a.identity), (b.label, b.identity)))
    return nodes, edges


def apply_difference(state: GraphState, fit: SchemaFit) -> dict[str, int]:
    """Change ``state`` into the graph a fresh map builds (its journal holds the mutations); counts."""
    nodes, edges = desired_graph(fit)
    counts = {"nodes_added": 0, "nodes_removed": 0, "nodes_changed": 0, "edges_added": 0, "edges_removed": 0}
    current: dict[tuple[str, tuple[Any, ...]], str] = {}
    for node_id in list(state.graph.nodes):
        label = state.node_type(node_id)
        props = state.node_properties(node_id)
        identity = state.identity(label, props)
        want = nodes.get((label, identity)) if identity is not None else None
        if want is None or identity is None:
            state.delete_node(node_id)
            counts["nodes_removed"] += 1
            continue
        current[(label, identity)] = node_id
        if props != want:  # most nodes are as they were: one dict comparison
            changed = {k: v for k, v in want.items() if props.get(k) != v}
            gone = [k for k in props if k not in want]
            if changed or gone:
                state.update_node(node_id, changed, remove=gone)
                counts["nodes_changed"] += 1
    for key, props in nodes.items():
        if key not in current:
            current[key] = state.add_node(key[0], dict(props))
            counts["nodes_added"] += 1
    wanted = {(current[a], label, current[b]) for label, a, b in edges}
    # the adjacency itself (u -> v -> edge id -> data), not a networkx edge view: one dict walk
    have = {(source, data["type"], target): edge_id for source, targets in state.succ.items()
            for target, keyed in targets.items() for edge_id, data in keyed.items()}
    for edge_key, edge_id in have.items():
        if edge_key not in wanted:
            state.delete_edge(edge_id)
            counts["edges_removed"] += 1
    for source, label, target in sorted(wanted.difference(have)):  # in a stable order: ids follow it
        state.add_edge(source, label, target, {})
        counts["edges_added"] += 1
    return counts


def interface(f: FileFacts) -> tuple[Any, ...]:
    """What the linking of *other* files reads of ``f``: everything but the bodies (calls, instantiations,
    SQL statements) and line numbers. Two versions of a file with equal interfaces leave every other file's
    relations as they were (the tables its statements name are kept: they are nodes other files share)."""
    return (replace(f, sha=None, lines=0, error_line=None,
                    imports=[replace(i, line=0) for i in f.imports],
                    types=[replace(t, line=0) for t in f.types],
                    callables=[replace(c, line=0, calls=[], instantiates=[], sql=[]) for c in f.callables]),
            sorted({r.table for c in f.callables for r in c.sql}))


def _bodies_changed(facts: Sequence[FileFacts], earlier: dict[str, tuple[str | None, str | None]],
                    cache: FactsCache) -> set[str] | None:
    """The paths of ``earlier`` (files whose content changed: path -> the module name their facts are cached
    under, the content hash of the last map) when each one's interface is as it was (its earlier facts are in
    the cache), else None (a full link is needed)."""
    if not earlier:
        return set()
    new = {f.path: f for f in facts if f.path in earlier}
    if len(new) != len(earlier) or any(p.endswith(".pyi") or not sha for p, (_, sha) in earlier.items()):
        return None
    stubbed = {f.module for f in facts if f.path.endswith(".pyi")}
    if any(f.module in stubbed for f in new.values()):
        return None  # a stub merges into its module: not a file of its own
    olds = cache.get_many([FactsCache.key(p, earlier[p][0], earlier[p][1] or "") for p in new])
    for f, old in zip(new.values(), olds, strict=True):
        if old is None or old.module != f.module or interface(old) != interface(f):
            return None
    return set(new)


def apply_file_difference(state: GraphState, fit: SchemaFit, paths: set[str]) -> dict[str, int] | None:
    """Change ``state`` as a fresh map would change it when only bodies of ``paths`` changed (``fit`` links
    those files alone, ``link(..., only=paths)``): their own nodes' properties and every edge going out of
    their own nodes. Every other element is one a fresh map makes the same. None, with ``state`` untouched,
    when the state is not what the last map left (a node of the files or an edge's endpoint is missing) or a
    declaration of theirs is shared with another file: the caller then diffs the whole graph."""
    counts = {"nodes_added": 0, "nodes_removed": 0, "nodes_changed": 0, "edges_added": 0, "edges_removed": 0}
    node_of: dict[str, str] = {}

    def node(key: str) -> str | None:
        found = node_of.get(key)
        if found is None:
            placed = fit.placed.get(key)
            found = state.find_identity(placed.label, placed.identity) if placed is not None else None
            if found is not None:
                node_of[key] = found
        return found

    plans = [plan for plan in fit.model.files if plan.path in paths]
    own: dict[str, str] = {}
    for plan in plans:
        for key in plan.symbols:
            if key.startswith(("package:", "table:")) or key not in fit.placed:
                continue  # shared with other files (interface-level), or no place in the schema
            if key in fit.model.shared:
                return None
            found = node(key)
            if found is None:
                return None
            own[key] = found
    wanted: set[tuple[str, str, str]] = set()
    for plan in plans:
        for r in plan.relations:
            for rel in (r, fit.lifted(r)):
                if rel is None or rel.source == rel.target:
                    continue
                if rel.source not in own:
                    if rel.source.startswith("package:"):
                        continue  # a package CONTAINS the module: declared, as it was
                    return None
                label = fit.edge_label(rel)
                if label is None:
                    continue
                target = node(rel.target)
                if target is None:
                    return None
                wanted.add((own[rel.source], label, target))
    for key, node_id in own.items():
        want = fit.placed[key].properties
        props = state.node_properties(node_id)
        if props != want:
            changed = {k: v for k, v in want.items() if props.get(k) != v}
            gone = [k for k in props if k not in want]
            if changed or gone:
                state.update_node(node_id, changed, remove=gone)
                counts["nodes_changed"] += 1
    succ = state.succ
    have: dict[tuple[str, str, str], str] = {}
    for source in dict.fromkeys(own.values()):
        for target, keyed in succ[source].items():
            for edge_id, data in keyed.items():
                have[(source, data["type"], target)] = edge_id
    for edge_key, edge_id in have.items():
        if edge_key not in wanted:
            state.delete_edge(edge_id)
            counts["edges_removed"] += 1
    for source, label, target in sorted(wanted.difference(have)):  # the order apply_difference adds them in
        state.add_edge(source, label, target, {})
        counts["edges_added"] += 1
    return counts


def update_map(paths: Sequence[Path], store_path: str | Path, *, session_id: str | None = None,
               max_bytes: int = DEFAULT_MAX_BYTES, jobs: int | None = None,
               clock: Callable[[], float] = time.perf_counter) -> UpdateResult:
    """Re-map ``paths`` into the stored map-code session (see the module doc); returns what changed.

    Raises ``RequestInvalid`` for a path that does not exist or a store without a map-code session, and
    ``SessionRefused`` for a session that is not a finished static map.
    """
    from igg.act.apply import collector_paused

    with collector_paused():  # loading, linking and diffing make no cycles (see igg.graph.collector)
        return _update(paths, store_path, session_id=session_id, max_bytes=max_bytes, jobs=jobs, clock=clock)


def _update(paths: Sequence[Path], store_path: str | Path, *, session_id: str | None, max_bytes: int,
            jobs: int | None, clock: Callable[[], float]) -> UpdateResult:
    from igg.codemap.prepare import parse_all
    from igg.store import SessionStore

    paths = [Path(p) for p in paths]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise RequestInvalid([Problem("PATH", f"{p}: no such file or directory") for p in missing],
                             source="the command line")
    started = clock()
    commit_of = git_commit_soon(paths)
    store = SessionStore(store_path)
    sid = _pick_session(store, session_id)
    info = store.session(sid)
    if info.agent not in MAP_CODE_AGENTS:
        raise SessionRefused(f"session {sid!r} was mapped with agent {info.agent!r}; --update re-maps sessions "
                             "of the static agent (--agent code)", session_id=sid)
    if info.status != "finished":
        raise SessionRefused(f"session {sid!r} is {info.status}; finish it first (igg map-code ... --resume) "
                             "and update it then", session_id=sid)
    request, state, _ = store.load_state(sid)
    seconds = {"load": clock() - started}
    mark = clock()
    walked = walk(paths, max_bytes=max_bytes)
    before = {state.node_properties(n)["path"]: state.node_properties(n).get("sha")
              for n in state.nodes_of_type("Module") if "path" in state.node_properties(n)}
    now = {f.path: content_hash(f.text) for f in walked.files}
    seconds["walk"] = clock() - mark
    mark = clock()
    cache = FactsCache(cache_path(store_path))
    counts: dict[str, int] = {}
    parsed: list[str] = []
    added = sorted(p for p in now if p not in before)
    removed = sorted(p for p in before if p not in now)
    changed = sorted(p for p in now if p in before and before[p] != now[p])
    local = None
    try:
        sources = with_modules(walked.files)
        facts, _ = parse_all(sources, jobs=jobs, cache=cache, counts=counts, parsed=parsed)
        seconds["parse"] = clock() - mark
        mark = clock()
        # the common case, a change inside bodies: only the changed files' relations are resolved again (every
        # other file's facts must be those of the last map: from the cache, not parsed again by a newer IGG)
        if not added and not removed and set(parsed) <= set(changed):
            modules = {f.path: f.module for f in sources if f.path in before and before[f.path] != now[f.path]}
            local = _bodies_changed(facts, {p: (modules[p], before[p]) for p in changed}, cache)
    finally:
        cache.close()
    iteration = info.last_iteration + 1
    state.iteration, state.chunk = iteration, None
    changes = None
    if local is not None:
        fit = SchemaFit(link(facts, only=local), state.schema)
        changes = apply_file_difference(state, fit, local)
    if changes is None:  # files added, removed or renamed, a declaration changed, or facts the cache lacks
        state.take_journal()
        changes = apply_difference(state, SchemaFit(link(facts), state.schema))
        local = None
    mutations = state.take_journal()
    seconds["diff"] = clock() - mark
    renamed: list[dict[str, str]] = []
    for old in removed:
        twin = next((p for p in added if now[p] == before[old] and before[old]), None)
        if twin is not None:
            renamed.append({"from": old, "to": twin})
    files: dict[str, Any] = {"read": len(walked.files), "reparsed": counts.get("parsed", 0),
                             "unchanged": counts.get("cached", 0),
                             "relinked": len(local) if local is not None else len(walked.files),
                             "added": added, "changed": changed, "removed": removed, "renamed": renamed}
    commit = commit_of()
    record = {"kind": "update", "iteration": iteration, "git_commit": commit, "files": files, "changes": changes,
              "reasoning": (f"Re-mapped {len(walked.files)} files: {files['reparsed']} re-parsed, "
                            f"{files['unchanged']} unchanged; {len(added)} added, {len(files['changed'])} changed, "
                            f"{len(removed)} removed" + (f" (git {commit})" if commit else "") + "."),
              "verdicts": [], "timings_ms": {"total": round((clock() - started) * 1000, 3)}}
    mark = clock()
    # a snapshot only when the change is large: a small update loads from the last snapshot plus its mutations
    big = len(mutations) * 5 > state.node_count + state.edge_count
    step = store.commit_step(sid, kind="update", record=record, mutations=mutations, state=state, snapshot=big)
    seconds["commit"] = clock() - mark
    seconds["total"] = clock() - started
    log.info("map_code_updated", session_id=sid, step=step, iteration=iteration, reparsed=files["reparsed"],
             unchanged=files["unchanged"], mutations=len(mutations), git_commit=commit)
    return UpdateResult(session_id=sid, step=step, iteration=iteration, files=files,
                        graph={**changes, "nodes": state.node_count, "edges": state.edge_count},
                        git_commit=commit, seconds=seconds)
