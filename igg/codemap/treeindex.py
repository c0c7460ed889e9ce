"""A persistent index of a mapped tree, so that ``igg map-code --update`` sees by stat alone that nothing
changed, and answers without parsing the files or loading the stored graph.

One SQLite file beside the session store and its facts cache (``STORE.codeindex``, ``sidecar_path``): a row
per (session, the walk's options: roots, languages, ``--max-file-bytes``, ``--package-prefix``, and the
versions of IGG and of its analyzers) holding what the last map or update of that session walked
(``WalkResult.dirs`` and ``stats``): each directory with its modification time, each file that decides the
walk (those of the languages read, and the ignore files) with its size, modification time and the sha256 of
the bytes read, and the session's last step then. Nothing changed when the session is still at that step,
every directory has its time (a file added, removed or renamed changes its directory's), and every file its
size and time, or else the bytes it had (only those files are read again). A time too recent to trust
(``igg.codemap.walk.RACY_NS``: a tree written just before it was mapped, as a CI checkout is) is kept as -1
for a file, so it is always hashed, and as the listing of its names for a directory, so it is listed again;
any doubt (a file gone, a row missing or unreadable) means a change, and the update takes its general path,
which writes the index again. In a row of its own, read only when files changed: each file's module name and
the id of its Module node (``TreeIndex.files``); and a row per file with the ids of the elements that hold
its lines (``TreeIndex.elements``), with which an update of files that kept their facts but for sites moved
reads those elements alone (``igg.mapping.samefacts``). In a third row, read only by an update of bodies'
calls (``igg.mapping.bodies``): every file the walk read, in its order, with the module name it gave it. With
the hash of each file's text where it is not the sha256 of its bytes (a byte order mark the walk drops; kept
in the first row, beside the files' stats), that is the tree as the facts cache knows it, without walking it
again.

Beside it, the calls the session's last link resolved over the whole program (``KeptCalls``: Python's), a row
per file with the content hash they were resolved for, and the step and versions they speak for: an update
that changes files without changing what their calls resolve to gives them their kept calls, moved to their
new sites, instead of solving the program again (``igg.mapping.remap``). And the census of the session's
symbols at its last step (``SchemaFit.census``: every key and identity), with which an update that adds a
function links the files of its language alone and still sees whether another language's symbol holds its
identity (``igg.mapping.bodies``).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import sqlite3
import time
import zlib
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import orjson

from igg.codemap import language as languages
from igg.codemap.cache import FORMAT_VERSION
from igg.codemap.callrows import CallRows
from igg.codemap.census import CENSUS_FORMAT, CensusRows
from igg.codemap.census import TABLES as CENSUS_TABLES
from igg.codemap.elementrows import ElementRows
from igg.codemap.walk import (
    DEFAULT_MAX_BYTES,
    RACY_NS,
    WALK_NAMES,
    WalkResult,
    listing,
    listing_names,
    listing_of,
    names_digest,
)
from igg.record.logs import get_logger

log = get_logger("igg.code")

_T = TypeVar("_T")

INDEX_VERSION = "9"
"""Bumped when the index's rows change shape."""
INDEX_SUFFIX = ".codeindex"
"""The index's file: the store's path with this suffix (``sidecar_path``)."""


@dataclass(kw_only=True)
class TreeIndex:
    """What one map or update of a session walked (see the module doc). The files are kept as columns, in
    the walk's order: a path, its size, its modification time and its sha256 at one position of each."""

    session_id: str
    last_step: int
    """The session's last step once that map or update was kept: the index speaks for that graph only."""
    read: int
    """The files the walk read (an update's ``files.read``)."""
    dirs: dict[str, int | str]
    paths: list[str]
    sizes: list[int]
    mtimes: list[int]
    shas: list[str | None]
    files: dict[str, tuple[str | None, str]] = field(default_factory=dict)
    """Each file read that has a Module node, by its path as the walk reported it: (its ``SourceFile.module``,
    the id of its Module node then): what an update of files whose facts stayed the same needs
    (``igg.mapping.samefacts``). Kept apart, and read only for such an update (``TreeIndexes.files``)."""
    elements: dict[str, list[str]] = field(default_factory=dict)
    """Each such file's elements that hold a line of it (``igg.mapping.updated.file_elements``): what an
    update of files whose facts moved loads. Kept a row per file, with ``files``
    (``TreeIndexes.elements``)."""
    texts: dict[int, str] = field(default_factory=dict)
    """The files (by position) whose text's hash (``cache.content_hash``, which keys their facts) is not the
    sha256 of their bytes (``WalkResult.texts``), with it; "" when unknown (noted without their text)."""
    listings: dict[str, str] = field(default_factory=dict)
    """Each directory's ``listing`` (``WalkResult.listings``): a directory whose time changed, listed again
    alike, holds the same files to read (one saved by a rename over it: ``changed``)."""
    refreshed: bool = False
    """Whether ``changed`` kept a new time for a folder listed alike or a file rewritten alike (not kept in
    the row itself: the caller keeps the index again, and the next update need not list or read them)."""
    sources: list[tuple[str, str | None]] = field(default_factory=list)
    """Every file the walk read (``WalkResult.files``: configuration files too), in its order, with the module
    name the walk gave it: the tree as an update of bodies links it without walking it again
    (``igg.mapping.bodies``). Kept with ``files``, read only for that update (``TreeIndexes.sources``)."""

    @classmethod
    def of(
        cls,
        walked: WalkResult,
        session_id: str,
        last_step: int,
        modules: Mapping[str, str] | None = None,
        elements: Mapping[str, list[str]] | None = None,
    ) -> TreeIndex:
        """The index of ``walked``, a walk of session ``session_id`` kept at step ``last_step``; ``modules``:
        the id of each mapped file's Module node, by its path (``module_nodes``); ``elements``: the elements
        that hold each file's lines (``file_elements``)."""
        stats = walked.stats.values()
        texts = walked.texts
        return cls(
            session_id=session_id,
            last_step=last_step,
            read=len(walked.files),
            dirs=dict(walked.dirs),
            listings=dict(walked.listings),
            paths=list(walked.stats),
            sizes=[size for size, _, _ in stats],
            mtimes=[mtime for _, mtime, _ in stats],
            shas=[sha for _, _, sha in stats],
            files={f.path: (f.module, modules[f.path]) for f in walked.files if f.path in modules}
            if modules
            else {},
            elements={p: elements[p] for p in modules if p in elements} if modules and elements else {},
            texts={i: texts[p] for i, p in enumerate(walked.stats) if p in texts} if texts else {},
            sources=[(f.path, f.module) for f in walked.files],
        )

    def changed(
        self,
        same_dir: Callable[[str], bool] | None = None,
        limit: int | None = None,
        added: list[Added] | None = None,
        removed: list[str] | None = None,
    ) -> list[Changed] | None:
        """The files whose bytes differ from the index: (their position in it, their bytes, their stat taken
        before they were read); a file touched or rewritten alike is no change. None when a directory changed
        (its time differs, or was too recent to tell, and ``same_dir`` of it is false; default: its
        ``listing`` differs from the one kept for it, or none was kept and its names differ from those kept
        for a time too recent), or a file is gone, unreadable, or was not read then (its sha256 is unknown),
        or more than ``limit`` files changed or were added (the rest are not read). A folder listed alike and
        a file read alike keep their new times (``refreshed``), which the index keeps when it is kept again.
        ``added``: where the files added to a folder go (``_moved_in``: a folder that holds what it held and
        files of a language read beside, whose new time and listing the index then keeps), instead of
        answering None for their folder; ``removed`` (with ``added``): where the paths of the files it read
        that a folder no longer holds go, when it holds what it held but for them (and files added)."""
        stat = os.stat
        try:
            gone = self._folders_moved(same_dir, limit, added, removed is not None)
            if gone is None:
                return None
            moved = len(added or ()) + len(gone)
            changed: list[Changed] = []
            for position, (path, size, mtime, sha) in enumerate(
                zip(self.paths, self.sizes, self.mtimes, self.shas, strict=True)
            ):
                if path in gone:
                    continue
                st = stat(path)
                if st.st_mtime_ns == mtime and st.st_size == size and mtime >= 0:
                    continue
                if sha is None:
                    return None
                with open(path, "rb") as f:
                    st = os.fstat(f.fileno())
                    data = f.read()
                if hashlib.sha256(data).hexdigest() != sha:
                    changed.append((position, data, st))
                    if limit is not None and len(changed) + moved > limit:
                        return None
                else:  # touched or rewritten alike: its new stat kept
                    self.sizes[position] = st.st_size
                    self.mtimes[position] = _mtime(st)
                    self.refreshed = True
        except OSError:
            return None
        if removed is not None:
            removed.extend(p for p in self.paths if p in gone)
        return changed

    def _folders_moved(
        self,
        same_dir: Callable[[str], bool] | None,
        limit: int | None,
        added: list[Added] | None,
        removals: bool,
    ) -> set[str] | None:
        """The paths of the files removed from folders whose time changed, the files added to them appended
        to ``added``, and the folders' new times and listings kept; None when a folder changed otherwise
        (``changed``)."""
        known: dict[str, list[str]] | None = None
        gone: set[str] = set()
        for folder, mark in list(self.dirs.items()):
            st = os.stat(folder)  # before it is listed, as a walk takes it
            if isinstance(mark, int) and mark >= 0 and st.st_mtime_ns == mark:
                continue
            if same_dir is not None:
                if not same_dir(folder):
                    return None
            elif not self._listed_alike(folder, mark):
                if added is None:
                    return None
                known = known if known is not None else self._by_folder()
                moved = self._moved_in(folder, mark, known, removals)
                if moved is None:
                    return None
                new, lost, listed = moved
                if limit is not None and len(added) + len(new) + len(gone) + len(lost) > limit:
                    return None
                added.extend(new)
                gone.update(lost)
                self.dirs[folder] = _mtime(st)
                self.listings[folder] = listed
            elif folder in self.listings:  # listed alike now: its time kept, unless too recent
                self.dirs[folder] = _mtime(st)
                self.refreshed = True
        return gone

    def _by_folder(self) -> dict[str, list[str]]:
        """The names of the files the index holds, by their folder."""
        found: dict[str, list[str]] = {}
        for path in self.paths:
            folder, name = os.path.split(path)
            found.setdefault(folder, []).append(name)
        return found

    def _listed_alike(self, folder: str, mark: int | str) -> bool:
        """Whether ``folder``, whose time differs from the index's (``mark``), holds what it held: its
        ``listing`` is the one kept (a file in it replaced by a rename over it changes its time alone), or
        without one, its names are those kept for a time too recent to tell."""
        kept = self.listings.get(folder)
        if kept is not None:
            return listing_of(folder) == kept
        return isinstance(mark, str) and names_digest(os.listdir(folder)) == mark

    def _moved_in(
        self, folder: str, mark: int | str, known: dict[str, list[str]], removals: bool
    ) -> tuple[list[Added], list[str], str] | None:
        """The files of a language read that ``folder`` holds and the index does not (``known``: the names of
        its files, by folder), read (their bytes, their stat taken before), and the paths of those it held
        that it no longer holds (``removals``: none unless asked), when without the first and with the second
        it holds what it held (its ``listing``, else the names kept for a time too recent to tell, ``mark``),
        and its listing now (from the one scan); None otherwise (a file held gone unasked, a folder gone or
        added, a file no longer a regular one, one larger than the walk's default limit, or nothing added or
        removed)."""
        with os.scandir(folder) as listed:
            entries = list(listed)
        held = set(known.get(folder, ()))
        new = [
            e
            for e in entries
            if e.name not in held
            and e.name not in WALK_NAMES
            and languages.is_read(e.name)
            and e.is_file(follow_symlinks=False)
        ]
        rest = [e for e in entries if e not in new]
        lost = sorted(held - {e.name for e in rest})
        if (lost and not removals) or not (new or lost):
            return None
        kept = self.listings.get(folder)
        if kept is not None:
            if names_digest([*listing_names(rest), *lost]) != kept:
                return None
        elif names_digest([*(e.name for e in rest), *lost]) != mark:
            return None
        found: list[Added] = []
        for e in sorted(new, key=lambda e: e.name):
            with open(e.path, "rb") as f:
                st = os.fstat(f.fileno())
                if st.st_size > DEFAULT_MAX_BYTES:  # not read whole here: the walk decides by its limit
                    return None
                found.append((e.path, f.read(), st))
        return found, [os.path.join(folder, name) for name in lost], listing(entries)

    def add(self, added: Sequence[Added], last_step: int, texts: Sequence[str]) -> None:
        """The files ``added`` (as ``changed`` gives them) read by an update kept at step ``last_step``, with
        their texts as the walk reads them: appended to the file columns (whose order is not the walk's: the
        walk's is ``sources``)."""
        for (path, data, st), text in zip(added, texts, strict=True):
            self.paths.append(path)
            self.sizes.append(st.st_size)
            self.mtimes.append(_mtime(st))
            self.shas.append(hashlib.sha256(data).hexdigest())
            encoded = text.encode("utf-8", "surrogatepass")
            if encoded != data:
                self.texts[len(self.paths) - 1] = hashlib.sha256(encoded).hexdigest()
        self.read += len(added)
        self.last_step = last_step

    def drop(self, gone: Collection[str]) -> None:
        """The files ``gone`` (absolute paths, as ``changed`` gives them in ``removed``), read by the last map
        or update, taken out of the file columns (the texts' hashes kept by their new positions)."""
        kept = [i for i, path in enumerate(self.paths) if path not in gone]
        if len(kept) == len(self.paths):
            return
        self.texts = {new: self.texts[old] for new, old in enumerate(kept) if old in self.texts}
        self.paths = [self.paths[i] for i in kept]
        self.sizes = [self.sizes[i] for i in kept]
        self.mtimes = [self.mtimes[i] for i in kept]
        self.shas = [self.shas[i] for i in kept]
        self.read -= len(gone)

    def note(self, changed: Sequence[Changed], last_step: int, texts: Sequence[str] | None = None) -> None:
        """The files ``changed`` (as ``changed`` gives them) read at their new stats and bytes, by a map or an
        update kept at step ``last_step``; ``texts``: their texts as the walk reads them (else their texts'
        hashes are unknown: ``texts``)."""
        for i, (position, data, st) in enumerate(changed):
            self.sizes[position] = st.st_size
            self.mtimes[position] = _mtime(st)
            self.shas[position] = hashlib.sha256(data).hexdigest()
            text = texts[i].encode("utf-8", "surrogatepass") if texts is not None else None
            if text == data:
                self.texts.pop(position, None)
            else:
                self.texts[position] = hashlib.sha256(text).hexdigest() if text is not None else ""
        self.last_step = last_step

    def hashes(self, root: str, sources: Sequence[tuple[str, str | None]]) -> dict[str, str] | None:
        """The hash of each file's text (``cache.content_hash``) by its path in ``sources`` (of ``sources``,
        as the index keeps them), the tree walked from the one folder ``root`` (absolute); None when one is
        unknown."""
        position = {path: i for i, path in enumerate(self.paths)}
        found: dict[str, str] = {}
        for path, _ in sources:
            i = position.get(os.path.join(root, path))
            sha = self.texts.get(i, self.shas[i]) if i is not None else None
            if not sha:
                return None
            found[path] = sha
        return found


Changed = tuple[int, bytes, os.stat_result]
"""A file whose bytes changed since an index (``TreeIndex.changed``): its position, its bytes, its stat."""
Added = tuple[str, bytes, os.stat_result]
"""A file added to a folder since an index (``TreeIndex.changed``): its absolute path, its bytes, its stat."""


def _mtime(st: os.stat_result) -> int:
    """``st``'s modification time, or -1 when too recent to tell a later change (as a walk keeps it)."""
    return st.st_mtime_ns if st.st_mtime_ns < time.time_ns() - RACY_NS else -1


def index_key(
    session_id: str,
    paths: Sequence[Path],
    *,
    max_bytes: int,
    package_prefix: str | None,
    chosen: Sequence[str] | None,
) -> str:
    """The key of a session's index for a walk with these options (and this IGG's analyzers)."""
    try:
        version = importlib.metadata.version("igg")
    except (
        importlib.metadata.PackageNotFoundError
    ):  # run from a checkout: the analyzers' versions still count
        version = ""
    names = languages.check_languages(chosen)
    versions = [f"{n}:{languages.get(n).cache_version}" for n in names]
    return json.dumps(
        [
            session_id,
            [os.path.abspath(p) for p in paths],
            max_bytes,
            package_prefix,
            names,
            versions,
            FORMAT_VERSION,
            INDEX_VERSION,
            version,
        ]
    )


class TreeIndexes(CensusRows, CallRows, ElementRows):
    """The indexes of one store's trees (``STORE.codeindex``); a missing or unreadable file only costs an
    update its general path."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db: sqlite3.Connection | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(path))
            self._db.execute("PRAGMA synchronous = OFF")  # an index lost in a crash costs one general update
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS trees"
                " (key TEXT PRIMARY KEY, session_id TEXT NOT NULL, data BLOB NOT NULL)"
            )
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS tree_files"
                " (key TEXT PRIMARY KEY, session_id TEXT NOT NULL, data BLOB NOT NULL)"
            )
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS tree_sources"
                " (key TEXT PRIMARY KEY, session_id TEXT NOT NULL, data BLOB NOT NULL)"
            )
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS tree_elements (key TEXT NOT NULL, session_id TEXT NOT NULL,"
                " path TEXT NOT NULL, data BLOB NOT NULL, PRIMARY KEY (key, path))"
            )
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS calls (session_id TEXT NOT NULL, path TEXT NOT NULL, sha TEXT,"
                " data BLOB NOT NULL, PRIMARY KEY (session_id, path))"
            )
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS calls_step"
                " (session_id TEXT PRIMARY KEY, step INTEGER NOT NULL, version TEXT NOT NULL)"
            )
            for table in CENSUS_TABLES:
                self._db.execute(table)
        except (sqlite3.Error, OSError) as exc:
            log.warning("code_tree_index_unusable", path=str(path), error=str(exc))
            self._db = None

    def get(self, key: str) -> TreeIndex | None:
        """The index under ``key``, or None (none, or unreadable); without its ``files`` (``files`` reads
        them: a no-op update needs none)."""

        def index(data: Any) -> TreeIndex:
            found = TreeIndex(
                session_id=data["session_id"],
                last_step=data["last_step"],
                read=data["read"],
                dirs=data["dirs"],
                listings=data["listings"],
                paths=data["paths"],
                sizes=data["sizes"],
                mtimes=data["mtimes"],
                shas=data["shas"],
                texts={int(i): sha for i, sha in data["texts"].items()},
            )
            if not all(type(sha) is str and 0 <= i < len(found.paths) for i, sha in found.texts.items()):
                raise ValueError("a text's hash is not a string, or of no file")
            if not len(found.paths) == len(found.sizes) == len(found.mtimes) == len(found.shas):
                raise ValueError("the file columns differ in length")
            if not (
                all(type(p) is str for p in found.paths)
                and all(type(n) is int for n in (*found.sizes, *found.mtimes))
                and all(h is None or type(h) is str for h in found.shas)
                and all(type(d) is str and type(v) is str for d, v in found.listings.items())
            ):  # never a file descriptor's number for a path, nor a crash of the check
                raise ValueError("a file column holds a value of another type")
            return found

        return self._read("trees", key, index)

    def files(self, key: str) -> dict[str, tuple[str | None, str]] | None:
        """The ``files`` of the index under ``key`` (``TreeIndex.files``), or None (none, or unreadable)."""

        def files(data: Any) -> dict[str, tuple[str | None, str]]:
            found = {path: (module, node) for path, (module, node) in data.items()}
            if not all(
                type(p) is str and (m is None or type(m) is str) and type(n) is str
                for p, (m, n) in found.items()
            ):
                raise ValueError("a file's module or node is of another type")
            return found

        return self._read("tree_files", key, files)

    def sources(self, key: str) -> list[tuple[str, str | None]] | None:
        """The ``sources`` of the index under ``key`` (``TreeIndex.sources``), or None (none, or
        unreadable)."""

        def sources(data: Any) -> list[tuple[str, str | None]]:
            found = [(path, module) for path, module in data]
            if not all(type(p) is str and (m is None or type(m) is str) for p, m in found):
                raise ValueError("a source's path or module is of another type")
            return found

        return self._read("tree_sources", key, sources)

    def _read(self, table: str, key: str, made: Callable[[Any], _T]) -> _T | None:
        """What ``made`` makes of the row of ``table`` under ``key`` (its data decompressed and decoded), or
        None: no row, or one that does not read back (logged)."""
        if self._db is None:
            return None
        try:
            row = self._db.execute(f"SELECT data FROM {table} WHERE key = ?", (key,)).fetchone()
            return made(orjson.loads(zlib.decompress(row[0]))) if row is not None else None
        except (sqlite3.Error, zlib.error, ValueError, KeyError, TypeError, AttributeError) as exc:
            log.warning("code_tree_index_unreadable", path=str(self.path), error=str(exc))
            return None

    def put(self, key: str, index: TreeIndex, *, files: bool = True) -> None:
        """Keep ``index`` under ``key`` (the session's other indexes are dropped: they speak for an older
        step), with its ``files`` (``files=False``: those kept under ``key`` stay, as they are still its)."""
        if self._db is None:
            return
        data = {
            "session_id": index.session_id,
            "last_step": index.last_step,
            "read": index.read,
            "dirs": index.dirs,
            "listings": index.listings,
            "paths": index.paths,
            "sizes": index.sizes,
            "mtimes": index.mtimes,
            "shas": index.shas,
            "texts": {str(i): sha for i, sha in index.texts.items()},
        }
        blob = zlib.compress(orjson.dumps(data), 1)
        try:
            with self._db:
                self._db.execute("DELETE FROM trees WHERE session_id = ?", (index.session_id,))
                self._db.execute(
                    "INSERT INTO trees (key, session_id, data) VALUES (?, ?, ?)",
                    (key, index.session_id, blob),
                )
                if files:
                    self._db.execute("DELETE FROM tree_files WHERE session_id = ?", (index.session_id,))
                    self._db.execute(
                        "INSERT INTO tree_files (key, session_id, data) VALUES (?, ?, ?)",
                        (key, index.session_id, zlib.compress(orjson.dumps(index.files), 1)),
                    )
                    self._db.execute("DELETE FROM tree_sources WHERE session_id = ?", (index.session_id,))
                    self._db.execute(
                        "INSERT INTO tree_sources (key, session_id, data) VALUES (?, ?, ?)",
                        (key, index.session_id, zlib.compress(orjson.dumps(index.sources), 1)),
                    )
                    self._db.execute("DELETE FROM tree_elements WHERE session_id = ?", (index.session_id,))
                    self._db.executemany(
                        "INSERT INTO tree_elements (key, session_id, path, data) VALUES (?, ?, ?, ?)",
                        ((key, index.session_id, p, orjson.dumps(ids)) for p, ids in index.elements.items()),
                    )
        except sqlite3.Error as exc:
            log.warning("code_tree_index_write_failed", path=str(self.path), error=str(exc))

    def put_files(self, key: str, index: TreeIndex) -> None:
        """Keep the ``files`` and ``sources`` of ``index`` (kept under ``key``) in place of those kept: an
        update that added files (``igg.mapping.bodies``)."""
        if self._db is None:
            return
        try:
            with self._db:
                for table, data in (("tree_files", index.files), ("tree_sources", index.sources)):
                    self._db.execute(
                        f"UPDATE {table} SET data = ? WHERE key = ?",
                        (zlib.compress(orjson.dumps(data), 1), key),
                    )
        except sqlite3.Error as exc:
            log.warning("code_tree_index_write_failed", path=str(self.path), error=str(exc))

    def _calls_version(self) -> str:
        """What kept calls were resolved by (``index_version``)."""
        return index_version()

    def _census_version(self) -> str:
        """What a census was made by (``index_version``: another IGG may place symbols otherwise) and its
        format."""
        return index_version() + "/census-" + CENSUS_FORMAT

    def close(self) -> None:
        if self._db is not None:
            self._db.close()


def index_version() -> str:
    """What kept calls were resolved by: the index's format and the analyzers' and IGG's versions (another
    IGG may resolve calls otherwise)."""
    return index_key("", [], max_bytes=0, package_prefix=None, chosen=None)


__all__ = ["INDEX_SUFFIX", "TreeIndex", "TreeIndexes", "index_key", "index_version"]
