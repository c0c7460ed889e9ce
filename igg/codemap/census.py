"""The census of a map's symbols, kept in its tree's index (``STORE.codeindex``, ``igg.codemap.treeindex``):
every symbol's key and identity at the session's last step (``SchemaFit.census``), with which an update that
adds a function links the files of its language alone and still sees whether another language's symbol holds
its key or identity (``igg.mapping.bodies``). A row per session (the step and the versions it speaks for, and
the census, compressed), and a row per value added since by updates that linked one language."""

from __future__ import annotations

import sqlite3
import zlib
from collections.abc import Collection, Iterable
from pathlib import Path

from igg.record.logs import get_logger

log = get_logger("igg.code")

TABLES = (
    "CREATE TABLE IF NOT EXISTS census (session_id TEXT PRIMARY KEY, step INTEGER NOT NULL,"
    " version TEXT NOT NULL, data BLOB NOT NULL)",
    "CREATE TABLE IF NOT EXISTS census_added"
    " (session_id TEXT NOT NULL, entry BLOB NOT NULL, PRIMARY KEY (session_id, entry))",
)


class Census:
    """The keys and identities of every symbol of a map at one step (``SchemaFit.census``): the JSON values
    of ``data``, joined by commas, and ``added`` since; ``stale`` when a step since removed symbols, which it
    may still hold (``CensusRows.add_census``)."""

    def __init__(self, data: bytes, added: set[bytes], stale: bool = False) -> None:
        self._data = data
        self._added = added
        self.stale = stale

    def holds_any(self, entries: Iterable[bytes]) -> bool:
        """Whether any of ``entries`` (each one JSON value: ``orjson.dumps`` of a key or an identity) is in
        the census: a search of ``,value,`` (10-20 ms for the 885,000 values of 50,000 files, where a set of
        them takes 0.3 s to make). A value is found wherever it is one; a string inside another value may be
        taken for one (``["Function", ["a", "x", "b"]]`` holds ``,"x",``), which only sends an update to the
        general path."""
        data = self._data  # not copied between two commas: 40 MB at 50,000 files, 36 ms
        return any(
            e in self._added
            or b"," + e + b"," in data
            or data.startswith(e + b",")
            or data.endswith(b"," + e)
            or data == e
            for e in entries
        )


class CensusRows:
    """The census rows of a tree index (``TreeIndexes``, which opens the database and makes ``TABLES``)."""

    path: Path
    _db: sqlite3.Connection | None

    def _census_version(self) -> str:
        """What a census was made by and its format (``CENSUS_FORMAT``): the tree index's versions."""
        raise NotImplementedError

    def put_census(self, session_id: str, step: int, census: bytes | None) -> None:
        """Keep the census of session ``session_id`` at its step ``step`` (``SchemaFit.census``); None: none
        is kept any more."""
        if self._db is None:
            return
        try:
            with self._db:
                self._db.execute("DELETE FROM census_added WHERE session_id = ?", (session_id,))
                if census is None:
                    self._db.execute("DELETE FROM census WHERE session_id = ?", (session_id,))
                    return
                self._db.execute(
                    "INSERT OR REPLACE INTO census (session_id, step, version, data) VALUES (?, ?, ?, ?)",
                    (session_id, step, self._census_version(), zlib.compress(census, 1)),
                )
        except sqlite3.Error as exc:
            log.warning("code_tree_index_write_failed", path=str(self.path), error=str(exc))

    def add_census(
        self, session_id: str, since: int, step: int, entries: Collection[bytes] = (), stale: bool = False
    ) -> None:
        """The census kept for step ``since`` of session ``session_id`` made to speak for its step ``step``,
        with the ``entries`` of the symbols that step added (``SchemaFit.census``'s form; none: a step that
        added no symbol); ``stale``: the step removed symbols, which the census keeps (a census holds no
        removal), so that it holds every symbol's key and identity and may hold some of those gone (until the
        next census made of every file). A census kept for another step is no longer kept."""
        if self._db is None:
            return
        version = self._census_version()
        try:
            with self._db:
                moved = self._db.execute(
                    "UPDATE census SET step = ?, version = CASE WHEN ? THEN ? ELSE version END"
                    " WHERE session_id = ? AND step = ? AND version IN (?, ?)",
                    (step, stale, version + STALE, session_id, since, version, version + STALE),
                ).rowcount
                if not moved:
                    self._db.execute("DELETE FROM census WHERE session_id = ?", (session_id,))
                    self._db.execute("DELETE FROM census_added WHERE session_id = ?", (session_id,))
                    return
                self._db.executemany(
                    "INSERT OR IGNORE INTO census_added (session_id, entry) VALUES (?, ?)",
                    ((session_id, e) for e in entries),
                )
        except sqlite3.Error as exc:
            log.warning("code_tree_index_write_failed", path=str(self.path), error=str(exc))

    def census(self, session_id: str, step: int) -> Census | None:
        """The census kept for step ``step`` of session ``session_id``, or None: none, one of another step or
        IGG, or one that cannot be read."""
        if self._db is None:
            return None
        try:
            row = self._db.execute(
                "SELECT step, version, data FROM census WHERE session_id = ?", (session_id,)
            ).fetchone()
            version = self._census_version()
            if row is None or row[0] != step or row[1] not in (version, version + STALE):
                return None
            added = self._db.execute("SELECT entry FROM census_added WHERE session_id = ?", (session_id,))
            return Census(zlib.decompress(row[2]), {bytes(e) for (e,) in added}, row[1] == version + STALE)
        except (sqlite3.Error, zlib.error) as exc:
            log.warning("code_tree_index_unreadable", path=str(self.path), error=str(exc))
            return None


CENSUS_FORMAT = "1"
"""Bumped when a census changes shape."""
STALE = ":stale"
"""Added to the version of a census that may hold symbols since removed (``Census.stale``)."""


__all__ = ["CENSUS_FORMAT", "Census", "CensusRows"]
