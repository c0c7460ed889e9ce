"""Incremental re-mapping: ``igg map-code PATH --store S --update``.

A map-code session keeps each file's content hash on its Module node (``sha``) and the parsed facts in a
cache beside the store (``codemap.cache``). An update walks the tree again, parses only the files whose
content is new (changed, added, or renamed), takes the facts of the others from the cache, and applies the
difference between the stored graph and the graph a fresh map would build as ONE new step of the session:
nodes and edges added, removed and changed. The step is numbered as the next iteration, so
``igg diff SESSION N N+1`` shows the architecture change; it records the files re-parsed, unchanged, added,
changed, removed and renamed, how many were linked again, and the git commit when the tree is a git work tree.

What is linked again: a change in one file can change what another file's names resolve to, but only through
names. When files changed in place and each still has its module, package, tables, and types with their
kinds, supertypes and enclosing types (``changed_names``), the files linked again are the changed ones and
those of their languages whose facts mention a callable, field or type that came, went or was redeclared, or
a name an import added or removed binds (each cached fact keeps the names it mentions), or a name such a file
passes one of those on by (``remap._renamed``); only their own nodes and the edges going out of them are
compared with the graph (``difference.plan_file_difference``). Files added, removed or renamed beside others
of their language, that name no other file (``touched.alone``), link the files of their languages that name
what they declare or import their paths (``moved.moved_names``: whose imports may now find them, or lose
them; in Python every file) and are compared the same way, a package's ``CONTAINS`` of a module
added included. Anything else (a package or folder that comes or goes, a supertype changed, facts not in the
cache) links every file and compares the whole graph (``difference.plan_difference``). Either difference is
applied by the act step through the session (``Session.apply_update``), and both give the graph a fresh map
gives (``tests/unit/test_code_update_local.py`` checks each kind of change both ways).

Every update starts here, light: the session is picked and checked from its row (``igg.store.catalog``) and,
when the tree's index (``igg.codemap.treeindex``) shows that no file changed since the session's last step,
answered at once, without loading the graph or importing what loads it. When it shows files changed in place
whose facts stayed the same (a constant, a condition or a comment edited on its own lines), or the same but
for sites moved in order (lines added or removed, a line edited around its calls), only those files are
parsed, and only the elements that hold their lines loaded and given their new content hashes, line counts
and sites (``igg.mapping.samefacts``). When their facts changed in what their bodies call alone (their
declarations and value flows kept), they are linked alone against the other files' cached facts, and only the
elements of the files linked again are loaded and changed (``igg.mapping.bodies``). When a Python file's
value flows changed too (a call added, an argument changed), the program is solved again, and only the files
whose calls it now resolves otherwise are linked again and loaded, the same way; so for a declaration changed
without a node to add or remove (a function's parameters), with the files that name it; and for files added
to folders that hold what they held (``TreeIndex.changed``'s ``added``), read and named as the walk would
(``igg.mapping.added``), with the files that name them or import their paths, and for files removed from
folders that keep others of their language (``removed``), with the files that named them, once no file not
linked holds an edge to a node of theirs (``TreeIndexes.holding``).
Anything else takes the general path (``igg.mapping.remap``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from igg.act.counts import COUNTS
from igg.codemap.treeindex import INDEX_SUFFIX, Added, TreeIndex, TreeIndexes, index_key
from igg.codemap.walk import DEFAULT_MAX_BYTES
from igg.errors import Problem, RequestInvalid, SessionRefused
from igg.mapping.trees import existing_paths, git_commit_soon
from igg.mapping.updated import UpdateResult, update_result, update_stores
from igg.record.logs import get_logger
from igg.store import catalog
from igg.store.backends import open_database
from igg.store.location import resolve_store_path, sidecar_path

log = get_logger("igg.code")

SAME_FACTS_FILES = 64
"""Most changed files an update reads before its general path (``igg.mapping.samefacts`` parses them one
after the other, and the general path again when one changed its facts): a larger change, a branch checked
out, takes the general path at once."""
MAP_CODE_AGENTS = ("code",)
"""Sessions an update can continue: those the static agent mapped (its graph is the static map)."""


def _pick_session(db: Any, session_id: str | None) -> str:
    if session_id:
        return session_id
    for info in catalog.sessions(db):
        if info.agent in MAP_CODE_AGENTS and info.goal.startswith("Map the code dependencies"):
            return str(info.session_id)
    raise RequestInvalid(
        [
            Problem(
                "--update",
                f"no map-code session in {db.location}; map the tree first "
                "(igg map-code PATH --store STORE) or name one with --session ID",
            )
        ],
        source="the command line",
    )


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
    """Re-map ``paths`` into the stored map-code session (see the module doc); returns what changed. Raises
    ``RequestInvalid`` for a path that does not exist or a store without a map-code session, and
    ``SessionRefused`` for a session that is not a finished static map. ``chosen``: the languages read
    (``--languages``; default: every one)."""
    paths = existing_paths(paths)
    started = clock()
    commit_of = git_commit_soon(paths)
    db = open_database(store_path)
    try:
        sid = _pick_session(db, session_id)
        info = _check_map(catalog.session(db, sid), sid)
    finally:
        db.close()
    indexes = TreeIndexes(sidecar_path(resolve_store_path(store_path), INDEX_SUFFIX))
    with update_stores():  # one store for the paths this update tries, closed at its end
        try:
            key = index_key(sid, paths, max_bytes=max_bytes, package_prefix=package_prefix, chosen=chosen)
            index = indexes.get(key)
            if index is not None and (index.session_id, index.last_step) != (sid, info.last_step):
                index = None  # it speaks for another graph
            added: list[Added] = []
            removed: list[str] = []
            changed = index.changed(limit=SAME_FACTS_FILES, added=added, removed=removed) if index else None
            if index is not None and changed == [] and not added and not removed:
                if index.refreshed:  # folders listed and files read alike: not again next time
                    indexes.put(key, index, files=False)
                return _unchanged(index, info, commit_of, started, clock)
            if index is not None and changed is not None and (changed or added or removed):
                from igg.mapping.samefacts import update_same_facts

                index.files = indexes.files(key) or {}
                kept = update_same_facts(
                    paths,
                    sid,
                    (key, index, changed),
                    store_path=store_path,
                    max_bytes=max_bytes,
                    chosen=chosen,
                    clock=clock,
                    started=started,
                    commit_of=commit_of,
                    indexes=indexes,
                    moved_files=(added, removed),
                )
                if kept is not None:  # noted: its files' new stats and bytes, the step kept
                    indexes.put(key, index, files=False)
                    return kept
            from igg.mapping.remap import remap

            result, walked, calls, modules, census = remap(
                paths,
                sid,
                max_bytes=max_bytes,
                jobs=jobs,
                package_prefix=package_prefix,
                chosen=chosen,
                clock=clock,
                started=started,
                commit_of=commit_of,
                store_path=store_path,
                kept=lambda shas: indexes.calls(sid, info.last_step, shas),
            )
            indexes.put(key, TreeIndex.of(walked, sid, result.step, *modules))
            indexes.put_calls(sid, result.step, calls)
            indexes.put_census(sid, result.step, census)
            return result
        finally:
            indexes.close()


def _unchanged(
    index: TreeIndex,
    info: Any,
    commit_of: Callable[[], str | None],
    started: float,
    clock: Callable[[], float],
) -> UpdateResult:
    """The result of an update that finds, by the tree's index alone, that no file changed since the last map
    or update of the session (which is still at that step): what the general path answers when its
    difference is empty, without parsing a file or loading the graph."""
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
    return update_result(
        info.session_id,
        info.last_step,
        info.last_iteration,
        counts,
        files,
        (info.nodes, info.edges),
        commit_of(),
        seconds,
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


__all__ = ["MAP_CODE_AGENTS", "UpdateResult", "update_map"]
