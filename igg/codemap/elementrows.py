"""Each file's elements, kept in the tree index beside the store (``igg.codemap.treeindex``): a row per file
with the ids of the elements that hold its lines or go out of it, and the ends of those edges
(``igg.mapping.updated.file_elements``). An update of a few files loads theirs alone
(``igg.mapping.samefacts``, ``igg.mapping.bodies``), and an update that removes a file finds every file
holding an edge to its nodes."""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

import orjson

from igg.record.logs import get_logger

log = get_logger("igg.code")


class ElementRows:
    """The element rows of a tree index (``TreeIndexes``, which opens the database and makes the table
    ``tree_elements``, and writes a map's rows whole)."""

    path: Path
    _db: sqlite3.Connection | None

    def elements(self, key: str, paths: Sequence[str]) -> dict[str, list[str]] | None:
        """The elements that hold each file's lines, for the files ``paths`` of the index under ``key``
        (``TreeIndex.elements``), or None (one missing, or unreadable)."""
        if self._db is None:
            return None
        out: dict[str, list[str]] = {}
        try:
            for path in paths:
                row = self._db.execute(
                    "SELECT data FROM tree_elements WHERE key = ? AND path = ?", (key, path)
                ).fetchone()
                if row is None:
                    return None
                ids = orjson.loads(row[0])
                if not (isinstance(ids, list) and all(type(i) is str for i in ids)):
                    raise ValueError("a file's elements are not a list of ids")
                out[path] = ids
        except (sqlite3.Error, orjson.JSONDecodeError, ValueError) as exc:
            log.warning("code_tree_index_unreadable", path=str(self.path), error=str(exc))
            return None
        return out

    def holding(self, key: str, ids: Collection[str]) -> set[str] | None:
        """The files whose elements (``TreeIndex.elements``, under ``key``) hold one of ``ids``: every file
        with an edge that ends at one of those nodes (``file_elements``); None when unreadable. Only the rows
        whose JSON holds one of the ids as a string (``"id"``) are read: parsing every file's row took 0.35 s
        of a TypeScript file's removal at 50,000 files."""
        if self._db is None:
            return None
        wanted = set(ids)
        marks = [orjson.dumps(i) for i in sorted(wanted)]
        found: set[str] = set()
        try:
            for start in range(0, len(marks), _MARKS):
                chunk = marks[start : start + _MARKS]
                holds = " OR ".join("instr(data, ?) > 0" for _ in chunk)
                query = f"SELECT path, data FROM tree_elements WHERE key = ? AND ({holds})"
                for path, data in self._db.execute(query, (key, *chunk)):
                    held = orjson.loads(data)
                    if not isinstance(held, list):
                        raise ValueError("a file's elements are not a list of ids")
                    if not wanted.isdisjoint(held):
                        found.add(path)
        except (sqlite3.Error, orjson.JSONDecodeError, ValueError, TypeError) as exc:
            log.warning("code_tree_index_unreadable", path=str(self.path), error=str(exc))
            return None
        return found

    def put_elements(self, key: str, elements: Mapping[str, list[str]], gone: Sequence[str] = ()) -> None:
        """Keep the elements of the files ``elements`` (path -> ids: ``TreeIndex.elements``) under ``key`` in
        place of theirs (a file added: beside them), the other files' kept as they are (an update that changed
        those files' alone), but for those of the files ``gone`` (removed)."""
        if self._db is None:
            return
        try:
            with self._db:
                self._db.executemany(
                    "DELETE FROM tree_elements WHERE key = ? AND path = ?", ((key, path) for path in gone)
                )
                self._db.executemany(
                    "INSERT INTO tree_elements (key, session_id, path, data)"
                    " SELECT key, session_id, ?, ? FROM trees WHERE key = ?"
                    " ON CONFLICT (key, path) DO UPDATE SET data = excluded.data",
                    ((path, orjson.dumps(ids), key) for path, ids in elements.items()),
                )
        except sqlite3.Error as exc:
            log.warning("code_tree_index_write_failed", path=str(self.path), error=str(exc))


_MARKS = 500
"""Ids sought per query (SQLite binds at most 32,766 values)."""

__all__ = ["ElementRows"]
