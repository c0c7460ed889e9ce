"""What one ``igg map-code --update`` did (``UpdateResult``), as the update's start (``igg.mapping.update``),
its path for files that kept their facts (``igg.mapping.samefacts``) and its general path
(``igg.mapping.remap``) all report it, the step's reasoning, and the session loaded to be updated."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from igg.record.logs import get_logger

if TYPE_CHECKING:
    from igg.act.difference import Difference
    from igg.graph.state import GraphState

log = get_logger("igg.code")


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


def update_result(
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


def reasoning(files: dict[str, Any], commit: str | None) -> str:
    """What the update step says it did (its reasoning): the files read, re-parsed, added, changed,
    removed."""
    return (
        f"Re-mapped {files['read']} files: {files['reparsed']} re-parsed, {files['unchanged']} "
        f"unchanged; {len(files['added'])} added, {len(files['changed'])} changed, "
        f"{len(files['removed'])} removed" + (f" (git {commit})" if commit else "") + "."
    )


def apply_step(
    session: Any,
    diff: Difference,
    files: dict[str, Any],
    commit: str | None,
    clock: tuple[Callable[[], float], float],
) -> Any:
    """``diff`` applied to ``session`` as the update step of ``files`` (``UpdateStep``): its reasoning said
    from them, the git commit, and the time since the update started (``clock``: the clock, the start)."""
    now, started = clock
    return session.apply_update(
        diff,
        files=files,
        git_commit=commit,
        reasoning=reasoning(files, commit),
        timings_ms={"total": round((now() - started) * 1000, 3)},
    )


_OPENED: ContextVar[dict[str, Any] | None] = ContextVar("igg_update_stores", default=None)


@contextmanager
def update_stores() -> Iterator[None]:
    """The stores an update opens (``update_store``: one per location, shared by its paths), closed when it
    ends: a PostgreSQL store left to the collector has its pool closed from one of the pool's own threads."""
    opened: dict[str, Any] = {}
    token = _OPENED.set(opened)
    try:
        yield
    finally:
        _OPENED.reset(token)
        for store in opened.values():
            store.close()


def update_store(store_path: str | Path) -> Any:
    """The ``SessionStore`` at ``store_path``: the one the running update opened (``update_stores``), else a
    new one."""
    from igg.store import SessionStore

    opened = _OPENED.get()
    if opened is None:
        return SessionStore(store_path)
    store = opened.get(str(store_path))
    if store is None:
        store = opened[str(store_path)] = SessionStore(store_path)
    return store


def load_map(store: Any, sid: str, elements: Sequence[str] | None = None, request: Any = None) -> Any:
    """Stored session ``sid`` (checked by ``_check_map``), loaded to be updated (``elements``: only those
    nodes and edges of its graph, counted with the rest: ``igg.graph.partial``; ``request``: its request,
    when loaded already, else read without its context when its grounding is off)."""
    from igg.session import Session
    from igg.store import StoreSessions

    log.debug("map_code_state_loading", session_id=sid)
    repo = StoreSessions(store)
    if request is None:  # an update reads no context (a 50,000-file map's is 68 MB): see SessionStore.request
        request = store.request(sid, context=False)
    # begun: a finished map is not claimed again; its recorder writes the update step without an owner
    return Session.load(
        repo,
        sid,
        lambda info: repo.recorder(agent=info.agent).for_session(sid),
        begun=True,
        elements=elements,
        request=request,
    )


def module_nodes(state: GraphState) -> dict[str, str]:
    """Each mapped file's path -> the id of its Module node in ``state``."""
    props = state.node_properties
    return {p["path"]: n for n in state.nodes_of_type("Module") if "path" in (p := props(n))}


def file_elements(state: GraphState) -> dict[str, list[str]]:
    """Each mapped file's path -> the ids of the elements that hold a line of it or go out of it: its nodes
    (its Module node, every node that names it as its ``file``), every edge one of whose sites (or its first,
    ``file``) is in it, every edge going out of one of its nodes (a ``CONTAINS`` has no site), and both ends
    of those edges, and an edge without a site from a node of no file to one of its nodes with that node's
    other end (its package's ``CONTAINS`` of its Module node: where an update that adds a file beside it finds
    the package). So every edge that ends at a file's node is held by a file: an update that removes the
    file finds them all (``TreeIndexes.holding``). An update that only moved the file's lines loads
    those alone (``igg.mapping.samefacts``); one that changed only what its bodies call, or added files,
    those of the files linked again (``igg.mapping.bodies``)."""
    out: dict[str, dict[str, None]] = {}
    props = state.node_properties
    owner: dict[str, str] = {}
    for n in state.nodes:
        p = props(n)
        path = p.get("file") if "file" in p else p.get("path") if state.node_type(n) == "Module" else None
        if type(path) is str:
            out.setdefault(path, {})[n] = None
            owner[n] = path
    for e, d in state.edge_data():
        p = d["properties"]
        first = p.get("file")
        source = owner.get(d["from"])
        if type(first) is not str:
            if source is not None:
                held = out[source]
                held[e] = held[d["to"]] = None
            elif (target := owner.get(d["to"])) is not None:  # a package's CONTAINS of its Module node
                held = out[target]
                held[e] = held[d["from"]] = None
            continue
        sites = p.get("sites")
        paths = {first}
        if source is not None:
            paths.add(source)
        if p.get("site_count") != 1 and type(sites) is list:  # a site no map writes holds no file's line
            paths.update(s.rsplit(":", 2)[0] for s in sites if type(s) is str)
        for path in paths:
            held = out.setdefault(path, {})
            held[e] = held[d["from"]] = held[d["to"]] = None
    return {path: list(held) for path, held in out.items()}


def index_map(store: Any, result: Any, codemap: Any, options: dict[str, Any]) -> None:
    """Keep in ``store``'s tree index the tree a static map (``result``, of ``codemap`` with the prepare
    ``options``) walked (``igg.codemap.treeindex``), with each file's Module node and elements: a later
    ``--update`` of the session sees by stat alone whether any file changed, and which."""
    from igg.codemap.treeindex import INDEX_SUFFIX, TreeIndex, TreeIndexes, index_key
    from igg.codemap.walk import DEFAULT_MAX_BYTES
    from igg.graph.collector import collector_paused
    from igg.store.location import sidecar_path

    session_id = result.session_id
    key = index_key(
        session_id,
        codemap.paths,
        max_bytes=options.get("max_bytes", DEFAULT_MAX_BYTES),
        package_prefix=options.get("package_prefix"),
        chosen=options.get("chosen"),
    )
    indexes = TreeIndexes(sidecar_path(store.location, INDEX_SUFFIX))
    try:
        step = store.session(session_id).last_step
        state = result.state
        with collector_paused():  # millions of ids, no cycle: 1.6 s at 50,000 files, 5.9 s with passes
            index = TreeIndex.of(codemap.walk, session_id, step, module_nodes(state), file_elements(state))
        indexes.put(key, index)
        indexes.put_calls(session_id, step, codemap.model.calls)
        indexes.put_census(session_id, step, codemap.census)
    finally:
        indexes.close()


__all__ = [
    "UpdateResult",
    "apply_step",
    "file_elements",
    "index_map",
    "load_map",
    "module_nodes",
    "reasoning",
    "update_result",
]
