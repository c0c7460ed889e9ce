"""The rules' graph of a checked tree, kept in the facts cache so that the next ``igg check`` or ``igg
cycles`` of the same tree answers by stat, without walking, parsing or linking it again.

A graph of imports or tables (``igg.rules.reads``) is kept with what the walk that made it read: each
directory with its modification time and the names it listed, each file that decides the walk with its size,
modification time and sha256 (``igg.codemap.treeindex.TreeIndex``), and each file read with its module name
and facts key. The next run of the same folder with the same options takes the graph again when

- every directory has its time, or else the same names of what a walk may read or look at (an editor that
  saves by renaming moves the time alone; a ``__pycache__`` folder or a text file made there is no change),
  and
- every file has its size and time, or else its bytes; a file whose bytes changed must be one the walk read,
  read again as the walk reads it (``read_bytes_as_walked``), or one it skipped that it skips again by its
  bytes (a binary, a Go test file), and the facts of one it reads must differ from those the graph was
  linked from only where the graph does not look (``igg.mapping.since.same_at_commit``'s rule: bodies, line
  counts, hashes; an import on another line is a change).

A file changed in place whose facts differ where the graph looks (an import added, a Java type that another
file's import may name), but that names its module as before (module, package, language; no configuration
file), leaves every other file its name and facts: the kept files' facts are read from the cache and linked
again with its new ones, without walking or reading the tree, and the new graph is kept (``_relinked``). At
50,000 files a ``check --since HEAD~1`` that links every file so took 9.2-11.6 s (after a TypeScript export
was committed, when exports were still thought read), where the tree was mapped (15.8 s). A TypeScript export
is not where the graph looks: a link of imports resolves a specifier by paths alone, and the kept graph
answers (1.8 s). When the changed files' facts differ in their imports alone (nothing another file's imports
read of them changed), only their edges are linked again, against the files of their languages, and spliced
into the kept graph (``igg.mapping.spliced``): after a TypeScript import committed, at 50,000 files, 4.1-4.5 s
where every file was linked again in 9.0-9.3 s (2.1-2.5 s with the splice's reads cut and the checks below).
Each row names its graph with a token, new whenever the graph changes; a check keeps the keys of the
violations it found under it (``keep_known``, with the rules it judged), and a later ``check --since`` whose
``REF`` is that graph takes them (``known_keys``) instead of judging it again (0.4-0.6 s at 50,000 files). The
key the row keeps of a file read again is the one its facts were found under (a map's full facts, which an
update cached).

A file added to a folder or removed from it, beside another file of its language that stays and naming no
other file (``touched.added_sources``, as ``igg map-code --update`` takes it), is spliced into a kept graph of
imports with the files whose imports may find it (``spliced.imports_reach``), without walking the tree: the
folder's new listing, and the file's bytes and stat, are kept in the row. Anything else (a file renamed, a
folder added or removed, an ignore file changed, facts gone from the cache, a kept row that does not read
back) maps the tree as ``tree_state`` does and keeps the new graph. A cache in memory (``FactsCache(None)``)
keeps nothing. ``tests/unit/test_kept.py`` pins each answer to a fresh map of the tree.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import uuid
import zlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from igg.codemap.cache import FactsCache
from igg.codemap.facts import FileFacts
from igg.codemap.language import Reads
from igg.codemap.model import CodeModel
from igg.codemap.sources import SourceFile
from igg.codemap.treeindex import Added, Changed, TreeIndex, index_key
from igg.codemap.walk import DEFAULT_MAX_BYTES, WALK_NAMES, WalkResult, listing_of, read_bytes_as_walked
from igg.mapping.prepare import imports_view, parse_all
from igg.mapping.since import TreeState, linked_alike, linked_state, named_alike, relink
from igg.mapping.spliced import spliced_graph
from igg.mapping.touched import added_sources, with_added
from igg.models.rules import Rule
from igg.record.logs import get_logger
from igg.rules.bounds import CheckBounds
from igg.rules.depgraph import DepGraph, Edge, Node
from igg.rules.report import Violation

log = get_logger("igg.code")

KEPT_VERSION = "2"
"""Bumped when a kept row changes shape."""
KNOWN = ":known"
"""Added to a kept row's key: the row of the keys of the violations found on its graph (``keep_known``)."""
Known = tuple[set[str], bool]
"""The keys of a check's violations, and whether it stopped at a bound."""


@dataclass(kw_only=True)
class _Kept:
    index: TreeIndex
    listings: dict[str, str]
    """Each walked directory -> its ``listing`` (what a walk may read or look at: ``igg.codemap.walk``)."""
    files: dict[str, tuple[str | None, str]]
    """Each file read, by its path in the walked folder -> (its ``SourceFile.module``, its facts key)."""
    ignore_files: list[str]
    graph: DepGraph
    token: str = ""
    """Names this graph (a new one each time the graph kept changes; "": a row kept before tokens)."""


class KeptFacts(Mapping[str, FileFacts]):
    """A kept tree's facts by path, read from the facts cache as they are asked for (a row the cache lost is
    missing: ``get`` gives None)."""

    def __init__(
        self,
        files: Mapping[str, tuple[str | None, str]],
        cache: FactsCache,
        known: Mapping[str, FileFacts],
    ):
        self._files = files
        self._cache = cache
        self._known = dict(known)

    def __getitem__(self, path: str) -> FileFacts:
        found = self._known.get(path)
        if found is None:
            found = self._cache.get_many([self._files[path][1]], bodies=False)[0]
            if found is None:
                raise KeyError(path)
            self._known[path] = found
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self._files)

    def __len__(self) -> int:
        return len(self._files)

    def __contains__(self, path: object) -> bool:
        return path in self._files


def usable(paths: list[Path], cache: FactsCache | None, reads: Reads, schema: object) -> bool:
    """Whether a graph of ``paths`` is kept: of one folder, in a cache on disk, of imports or tables, in the
    code schema."""
    return (
        len(paths) == 1
        and paths[0].is_dir()
        and cache is not None
        and cache.path is not None
        and reads != "all"
        and schema is None
    )


def _key(paths: list[Path], reads: Reads, package_prefix: str | None, max_bytes: int) -> str:
    return index_key(
        f"check-{KEPT_VERSION}:{reads}",
        paths,
        max_bytes=max_bytes,
        package_prefix=package_prefix,
        chosen=None,
    )


def kept_state(
    paths: list[Path],
    cache: FactsCache,
    *,
    reads: Reads,
    package_prefix: str | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> TreeState | None:
    """The kept state of ``paths`` when it still holds (see the module doc), else None."""
    key = _key(paths, reads, package_prefix, max_bytes)
    kept = _load(cache.get_kept(key))
    if kept is None:
        return None
    added: list[Added] = []
    gone: list[str] = []
    # a folder listed otherwise than kept: the files added to it and removed from it, read as the walk reads
    kept.index.listings = kept.listings
    changed = kept.index.changed(added=added, removed=gone)
    if changed is None:
        return None
    moved = _moved(paths, kept, cache, (added, gone), reads, max_bytes) if added or gone else None
    if (added or gone) and moved is None:
        return None
    known: dict[str, FileFacts] = {}
    parsed = 0
    if changed or moved:
        found = _read_again(paths, kept, cache, changed, reads, max_bytes)
        if found is None:
            return None
        sources, before, now, keys, parsed = found
        alike = all(b is not None and linked_alike(b, n, reads) for b, n in zip(before, now, strict=True))
        for source, facts, (_, made) in zip(sources, now, keys, strict=True):
            known[source.path] = facts
            kept.files[source.path] = (source.module, made)
        if not alike or moved:
            kept_facts: dict[str, FileFacts | None] = {
                s.path: b for s, b in zip(sources, before, strict=True) if b is not None
            }
            linked_from = (kept.graph, kept_facts)
            return _relinked(key, kept, cache, known, (changed, parsed), reads, linked_from, moved)
        kept.index.note(changed, kept.index.last_step)
        cache.put_kept(key, _dump(kept))  # the next run reads these files by stat again
    log.debug("code_check_graph_kept", files=kept.index.read, read_again=len(changed), parsed=parsed)
    return TreeState(
        model=None,
        graph=kept.graph,
        files=kept.index.read,
        parsed=parsed,
        facts=KeptFacts(kept.files, cache, known),
        keys=kept.files,
        reads=reads,
        ignore_files=kept.ignore_files,
        kept=True,
        kept_as=(key, kept.token, None) if kept.token else None,
    )


ReadAgain = tuple[
    list[SourceFile], list[FileFacts | None], list[FileFacts], list[tuple[str | None, str]], int
]
"""The files changed in place read again (``_read_again``): their sources, facts then and now, keys, and how
many were parsed."""


def _read_again(
    paths: list[Path],
    kept: _Kept,
    cache: FactsCache,
    changed: Sequence[Changed],
    reads: Reads,
    max_bytes: int,
) -> ReadAgain | None:
    """The files ``changed`` in place that the walk read, read again as it reads them: their sources, their
    facts in the kept graph and now, the keys of those now and how many were parsed; None when one may change
    the walk (a file it skipped that it reads now, an ignore file) or names its module otherwise."""
    root = os.path.abspath(paths[0])
    sources: list[SourceFile] = []
    for position, data, _ in changed:
        path = os.path.relpath(kept.index.paths[position], root)
        then = read_bytes_as_walked(path, data, max_bytes=max_bytes)
        if path not in kept.files:  # a file the walk skipped (binary, not in the build), or an ignore file
            if os.path.basename(path) in WALK_NAMES or isinstance(then, SourceFile):
                return None  # the walk may differ
            continue  # skipped still, by its bytes
        if not isinstance(then, SourceFile):
            return None
        sources.append(replace(then, module=kept.files[path][0]))
    before = cache.get_many([kept.files[s.path][1] for s in sources], bodies=False)
    counts: dict[str, int] = {}
    keys: list[tuple[str | None, str]] = []  # where the cache holds them (a map's full facts, or theirs)
    now, _ = parse_all(sources, cache=cache, counts=counts, bodies=False, reads=reads, keys=keys)
    if not all(b is not None and named_alike(b, n) for b, n in zip(before, now, strict=True)):
        return None
    return sources, before, now, keys, counts.get("parsed", 0)


@dataclass(kw_only=True)
class _Moves:
    """Files added to a kept tree and removed from it (``_moved``)."""

    sources: list[SourceFile]
    """The files added, as the walk reads and names them, in its order."""
    facts: list[FileFacts]
    keys: list[tuple[str | None, str]]
    """Their facts and where the cache holds them."""
    removed: dict[str, FileFacts]
    """The facts of the files removed, as the kept graph had them, by their paths."""
    read: tuple[list[Added], list[str]]
    """The files added and the files removed as ``TreeIndex.changed`` found them."""


def _moved(
    paths: list[Path],
    kept: _Kept,
    cache: FactsCache,
    moved: tuple[list[Added], list[str]],
    reads: Reads,
    max_bytes: int,
) -> _Moves | None:
    """The files added and removed (``moved``: as ``TreeIndex.changed`` found them) when a check may splice
    them into its kept graph of imports: each beside another file of its language that stays, naming no other
    file (``touched.added_sources``); the added ones parsed. None otherwise (the tree is mapped)."""
    if reads != "imports":
        return None
    listed = [(path, module) for path, (module, _) in kept.files.items()]
    found = added_sources(paths, moved, listed, max_bytes=max_bytes, chosen=None)
    if found is None:
        return None
    sources, gone = found
    then = cache.get_many([kept.files[p][1] for p in gone], bodies=False)
    if any(f is None for f in then):
        return None
    keys: list[tuple[str | None, str]] = []
    facts, _ = parse_all(sources, cache=cache, bodies=False, reads=reads, keys=keys)
    removed = {p: f for p, f in zip(gone, then, strict=True) if f is not None}
    return _Moves(sources=sources, facts=facts, keys=keys, removed=removed, read=moved)


def _relinked(
    key: str,
    kept: _Kept,
    cache: FactsCache,
    known: dict[str, FileFacts],
    changed: tuple[Sequence[Any], int],
    reads: Reads,
    linked_from: tuple[DepGraph, dict[str, FileFacts | None]],
    moved: _Moves | None = None,
) -> TreeState | None:
    """The state of the kept tree after files changed in place so that the graph may change (an import added,
    a Java type another file's import names), each naming its module alike, or files were added or removed
    (``moved``): spliced into the kept graph when it is one of imports (``igg.mapping.spliced``), else every
    file linked again from the facts the cache holds of them, those ``known`` (read now) in their place,
    without walking or reading the tree (a walk reads every file to hash it); the new graph kept. None: a
    file's facts are gone from the cache (the tree is mapped). ``linked_from``: the kept graph and the facts
    it had of the files read again (``TreeState.linked_from``), to which those added and removed are added."""
    then = {path: f for path, f in linked_from[1].items() if f is not None}
    now = {path: known[path] for path in then}
    files, parsed = changed
    kept.index.note(files, kept.index.last_step)  # by their positions, before files are taken out
    moves = None
    if moved is not None:
        _move(kept, moved)
        added = {s.path: f for s, f in zip(moved.sources, moved.facts, strict=True)}
        known.update(added)
        linked_from[1].update(dict.fromkeys(added))
        linked_from[1].update(moved.removed)
        moves = (added, moved.removed)
    model: CodeModel | None = None
    facts: Mapping[str, FileFacts] = KeptFacts(kept.files, cache, known)
    found = (
        spliced_graph(kept.graph, list(kept.files), kept.files, cache, (then, now), moves)
        if reads == "imports"
        else None
    )
    spliced = found[1] | (moves[1].keys() if moves else set()) if found is not None else None
    if found is None:
        linked = relink(list(kept.files), known, KeptFacts(kept.files, cache, {}), kept.files, cache, reads)
        if linked is None:
            return None
        model, graph, facts = linked
    else:
        graph = found[0]
    kept.graph = graph
    token, kept.token = kept.token, _token()
    cache.put_kept(key, _dump(kept))
    log.debug("code_check_graph_relinked", files=kept.index.read, read_again=len(files), parsed=parsed)
    return TreeState(
        model=model,
        graph=graph,
        files=kept.index.read,
        parsed=parsed,
        facts=facts,
        keys=kept.files,
        reads=reads,
        ignore_files=kept.ignore_files,
        linked_from=linked_from,
        spliced=spliced,
        kept_as=(key, kept.token, token or None),
    )


def _move(kept: _Kept, moved: _Moves) -> None:
    """The files ``moved`` added to the kept tree's files (in the walk's order) and index, those removed
    taken out of them."""
    listed = [(path, module) for path, (module, _) in kept.files.items()]
    made = {s.path: made for s, (_, made) in zip(moved.sources, moved.keys, strict=True)}
    kept.files = {
        path: (module, made[path] if path in made else kept.files[path][1])
        for path, module in with_added(listed, moved.sources, moved.removed.keys())
    }
    added, gone = moved.read
    kept.index.drop(set(gone))
    kept.index.add(added, kept.index.last_step, [s.text for s in moved.sources])


def keep(
    paths: list[Path],
    cache: FactsCache,
    state: TreeState,
    *,
    package_prefix: str | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> None:
    """Keep ``state``, just mapped from ``paths`` (with its walk's ``index``), for the next run."""
    if state.index is None:
        return
    listings = dict(state.index.listings)  # a map's walk kept them as it listed each folder
    for folder in state.index.dirs.keys() - listings.keys():
        try:
            listings[folder] = listing_of(folder)
        except OSError:
            return
    kept = _Kept(
        index=state.index,
        listings=listings,
        files=dict(state.keys),
        ignore_files=list(state.ignore_files),
        graph=state.graph,
        token=_token(),
    )
    key = _key(paths, state.reads, package_prefix, max_bytes)
    cache.put_kept(key, _dump(kept))
    state.kept_as = (key, kept.token, None)


def keep_mapped(
    paths: list[Path],
    cache: FactsCache,
    walked: WalkResult,
    facts: Sequence[FileFacts],
    keys: Sequence[tuple[str | None, str]],
    *,
    package_prefix: str | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> bool:
    """Keep the graph of imports of a tree just mapped (``igg map-code PATH --store S`` of every language, or
    an ``--update`` of it that linked every file: its walk, and the facts of the files it read with their
    modules and keys), as a check of the tree would have kept it: the next ``igg check`` or ``igg cycles`` of
    the tree whose rules read its imports takes it by stat, where it would walk, read the facts of and link
    the whole tree. Whether it was kept (not for several trees, or a cache in memory)."""
    if not usable(paths, cache, "imports", None) or len(keys) != len(facts):
        return False
    try:
        state = linked_state(paths, walked, [imports_view(f) for f in facts], keys, reads="imports")
    except Exception as exc:  # noqa: BLE001 - it only saves the next check a map: the map goes on without it
        log.warning("code_check_graph_not_kept", error=f"{type(exc).__name__}: {exc}")
        return False
    keep(paths, cache, state, package_prefix=package_prefix, max_bytes=max_bytes)
    return True


def known_keys(
    cache: FactsCache, kept_as: tuple[str, str, str | None], rules: Sequence[Rule]
) -> Known | None:
    """The keys of the violations a check found on the kept graph ``kept_as`` names, and whether it stopped
    at a bound, when it judged the same ``rules`` (``keep_known``); else None (the graph is checked)."""
    data = cache.get_kept(kept_as[0] + KNOWN)
    if data is None:
        return None
    try:
        row = json.loads(data)
        if row["token"] != kept_as[1] or row["rules"] != _fingerprint(rules):
            return None
        return {str(k) for k in row["keys"]}, bool(row["truncated"])
    except (ValueError, KeyError, TypeError):  # a damaged row: the graph is checked
        return None


def keep_known(
    cache: FactsCache,
    kept_as: tuple[str, str, str | None],
    rules: Sequence[Rule],
    violations: Sequence[Violation],
    truncated: bool,
) -> None:
    """Keep the keys of the ``violations`` ``rules`` found on the kept graph ``kept_as`` names (``truncated``:
    the check stopped at a bound), in place of those of the graph before it: a ``check --since REF`` whose
    ``REF`` is that graph (``baseline: kept``, each commit checked in turn) knows them without checking it
    again (0.4-0.6 s at 50,000 files)."""
    row = {
        "token": kept_as[1],
        "rules": _fingerprint(rules),
        "keys": sorted({v.key for v in violations}),
        "truncated": truncated,
    }
    cache.put_kept(kept_as[0] + KNOWN, json.dumps(row).encode())


def _fingerprint(rules: Sequence[Rule]) -> str:
    """The rules and the command line's bounds, as a check judges by them."""
    judged = [r.model_dump(mode="json") for r in rules]
    text = json.dumps([KEPT_VERSION, repr(CheckBounds.for_command_line()), judged], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _token() -> str:
    return uuid.uuid4().hex


def _dump(kept: _Kept) -> bytes:
    graph = kept.graph
    row = {
        "index": kept.index,
        "listings": kept.listings,
        "files": kept.files,
        "ignore_files": kept.ignore_files,
        "nodes": [(n.id, n.type, n.name, n.file, n.line, n.external) for n in graph.nodes.values()],
        "edges": [
            (e.source, e.type, e.target, e.file, e.line, e.type_checking) for e in graph.edges.values()
        ],
        "container": graph.container,
        "token": kept.token,
    }
    # not compressed: at 50,000 files zlib took 0.16 s of each write and 0.1 s of each read of 31 MB
    return pickle.dumps(row, protocol=pickle.HIGHEST_PROTOCOL)


def _load(data: bytes | None) -> _Kept | None:
    """A kept row read back (None: none, or one that does not read back as one)."""
    if data is None:
        return None
    try:
        row: Any = pickle.loads(zlib.decompress(data) if data[:1] == b"x" else data)  # a row kept compressed
        index = row["index"]
        if not isinstance(index, TreeIndex):
            raise TypeError("no tree index")
        graph = DepGraph(
            nodes={n[0]: Node(*n) for n in row["nodes"]},
            edges={(e[0], e[1], e[2]): Edge(*e) for e in row["edges"]},
            container=row["container"],
        )
        return _Kept(
            index=index,
            listings=row["listings"],
            files=row["files"],
            ignore_files=row["ignore_files"],
            graph=graph,
            token=row.get("token", ""),
        )
    except Exception as exc:  # noqa: BLE001 - a damaged or older row: the tree is mapped again
        log.warning("code_kept_graph_unreadable", error=f"{type(exc).__name__}: {exc}"[:200])
        return None
