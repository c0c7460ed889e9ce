"""A cache of parsed facts, keyed by file content, so that re-mapping parses only what changed.

One SQLite file beside the session store (``STORE.codefacts``): a row per (path, module name, content hash,
the version of the file's language's analyzer: ``Language.cache_version``) holding that file's ``FileFacts``.
``igg map-code --store`` fills it; ``--update`` reads the facts of unchanged files from it. A missing or
unreadable cache only costs a parse. The file is IGG's own (written next to the store the user named, never
elsewhere); its rows are pickles of IGG's dataclasses, read only from that file.
"""

from __future__ import annotations

import hashlib
import pickle
import sqlite3
from collections.abc import Collection, Iterable, Sequence
from pathlib import Path

from igg.codemap.facts import FileFacts, without_bodies
from igg.codemap.language import Reads, get, language_of
from igg.record.logs import get_logger

log = get_logger("igg.code")

FORMAT_VERSION = "5"
"""Bumped whenever ``FileFacts`` itself changes: every cached fact is then parsed again. Each language's
analyzer has a version of its own (``Language.cache_version``), so a change in one reparses its files
alone."""


def content_hash(text: str) -> str:
    """The hash a file's content is known by (sha256 of its UTF-8 text, hex)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class FactsCache:
    """Facts by (path, module, content hash); opened on a file, or in memory with ``path=None``."""

    def __init__(self, path: str | Path | None) -> None:
        self.path = Path(path) if path is not None else None
        self.whole: set[str] = set()
        """Keys whose facts ``get_many(bodies=False)`` gave whole: their bodies call nothing to leave out
        (every Python file's: its calls are its flows), so reading them with their bodies reads them again."""
        try:
            if self.path is not None:  # beside its store, whose folder the first run into it creates too
                self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(self.path) if self.path is not None else ":memory:")
            # a cache: a write lost in a crash costs a parse, so no sync per write (which cost ~0.1 s a
            # commit)
            self._db.execute("PRAGMA synchronous = OFF")
            self._create()
        except (sqlite3.Error, OSError) as exc:
            log.warning("code_facts_cache_unusable", path=str(self.path), error=str(exc))
            self._db = sqlite3.connect(":memory:")
            self._create()

    def _create(self) -> None:
        # data: the facts; declared: the same without bodies (``without_bodies``), what --update reads of the
        # files it does not link again (a third of the objects to unpickle); a cache written before had none
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS facts (key TEXT PRIMARY KEY, data BLOB NOT NULL, declared BLOB)"
        )
        # kept: what a command keeps of a whole tree to answer again by stat (``igg.mapping.kept``)
        self._db.execute("CREATE TABLE IF NOT EXISTS kept (key TEXT PRIMARY KEY, data BLOB NOT NULL)")
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(facts)")}
        if "declared" not in columns:
            self._db.execute("ALTER TABLE facts ADD COLUMN declared BLOB")

    @staticmethod
    def key(path: str, module: str | None, sha: str, reads: Reads = "all") -> str:
        """The key of a file's facts: its path, module name and content hash, and the versions that made
        them; facts of its imports alone (``reads="imports"`` of a language whose ``Language.imports`` reads
        less than its analysis: ``lighter_imports``) have keys of their own, so a full map never reads them
        (``tables`` reads the full facts, as do the other languages' imports)."""
        name = language_of(path)
        language = get(name) if name is not None else None
        version = language.cache_version if language is not None else ""
        mode = ".imports" if reads == "imports" and language is not None and language.lighter_imports else ""
        return f"{FORMAT_VERSION}.{name}.{version}{mode}\x00{path}\x00{module or ''}\x00{sha}"

    def get(self, key: str) -> FileFacts | None:
        return self.get_many([key])[0]

    def get_many(self, keys: Sequence[str], *, bodies: bool = True) -> list[FileFacts | None]:
        """``get`` of each key, in order, in a few queries (``bodies=False``: the facts without the calls and
        instantiations of their callables, ``without_bodies``)."""
        found = self._rows(keys, bodies)
        if found is None:
            return [None] * len(keys)
        return [self._load(found.get(k)) for k in keys]

    def mentioning(
        self, keys: Sequence[str], words: Collection[str], *, bodies: bool = True
    ) -> dict[str, FileFacts] | None:
        """The facts of those of ``keys`` whose row holds one of ``words`` as bytes (a pickle keeps each
        string it holds whole, in UTF-8: facts that name a word hold it), by key; the others are not read (the
        facts of 12,500 TypeScript files took 0.45 s to read, where a check sought the few that import one
        name). None when one of ``keys`` has no row (or the cache cannot be read)."""
        if not words:
            return {} if self._rows(keys, bodies, count=True) is not None else None
        found = self._rows(keys, bodies, [w.encode("utf-8", "surrogatepass") for w in words])
        if found is None:
            return None
        out: dict[str, FileFacts] = {}
        for key, data in found.items():
            facts = self._load(data)
            if facts is None:
                return None
            out[key] = facts
        return out

    def _rows(
        self, keys: Sequence[str], bodies: bool, words: Sequence[bytes] | None = None, count: bool = False
    ) -> dict[str, bytes] | None:
        """The rows of ``keys`` (by key), in chunks; with ``words``, those whose data holds one of them (and
        None when one of ``keys`` has no row, as with ``count``, which reads none); None when the cache
        cannot be read."""
        column = "data, 1" if bodies else "coalesce(declared, data), declared IS NULL"
        value = "data" if bodies else "coalesce(declared, data)"
        found: dict[str, bytes] = {}
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            among = f"key IN ({','.join('?' * len(chunk))})"
            try:
                if words is not None or count:
                    held = self._db.execute(f"SELECT count(*) FROM facts WHERE {among}", chunk).fetchone()[0]
                    if held != len(set(chunk)):
                        return None
                    if count:
                        continue
                if words:
                    holds = " OR ".join(f"instr({value}, ?) > 0" for _ in words)
                    query = f"SELECT key, {column} FROM facts WHERE {among} AND ({holds})"
                    rows = self._db.execute(query, [*chunk, *words]).fetchall()
                else:
                    query = f"SELECT key, {column} FROM facts WHERE {among}"
                    rows = self._db.execute(query, chunk).fetchall()
            except sqlite3.Error as exc:
                log.warning("code_facts_cache_unreadable", path=str(self.path), error=str(exc))
                return None
            for key, data, whole in rows:
                found[key] = data
                if whole:
                    self.whole.add(key)
        return found

    @staticmethod
    def _load(data: bytes | None) -> FileFacts | None:
        if data is None:
            return None
        try:
            facts = pickle.loads(data)
        except Exception:  # a damaged row: parse the file again
            return None
        return facts if isinstance(facts, FileFacts) else None

    def put_many(self, items: Iterable[tuple[str, FileFacts]]) -> None:
        # declared: NULL where the facts have no bodies to leave out (imports alone, a file without
        # functions), which ``get_many`` reads as the data
        rows = [
            (
                k,
                pickle.dumps(f, protocol=pickle.HIGHEST_PROTOCOL),
                None if lean is f else pickle.dumps(lean, protocol=pickle.HIGHEST_PROTOCOL),
            )
            for k, f in items
            for lean in (without_bodies(f),)
        ]
        try:
            with self._db:
                self._db.executemany(
                    "INSERT OR REPLACE INTO facts (key, data, declared) VALUES (?, ?, ?)", rows
                )
        except sqlite3.Error as exc:
            log.warning("code_facts_cache_write_failed", path=str(self.path), error=str(exc))

    def get_kept(self, key: str) -> bytes | None:
        """The bytes kept under ``key`` (``put_kept``), or None."""
        try:
            row = self._db.execute("SELECT data FROM kept WHERE key = ?", (key,)).fetchone()
        except sqlite3.Error as exc:
            log.warning("code_facts_cache_unreadable", path=str(self.path), error=str(exc))
            return None
        return bytes(row[0]) if row is not None else None

    def put_kept(self, key: str, data: bytes) -> None:
        """Keep ``data`` under ``key``, in place of what was kept under it."""
        try:
            with self._db:
                self._db.execute("INSERT OR REPLACE INTO kept (key, data) VALUES (?, ?)", (key, data))
        except sqlite3.Error as exc:
            log.warning("code_facts_cache_write_failed", path=str(self.path), error=str(exc))

    def close(self) -> None:
        self._db.close()
