"""The calls a session's last link resolved over the whole program (``KeptCalls``: Python's), kept in the
tree index beside the store (``igg.codemap.treeindex``): a row per file with the content hash they were
resolved for, and the step and versions they speak for. An update that changes files without changing what
their calls resolve to gives them their kept calls, moved to their new sites, instead of solving the program
again (``igg.mapping.remap``)."""

from __future__ import annotations

import sqlite3
import zlib
from collections.abc import Mapping
from pathlib import Path

import orjson

from igg.codemap.model import CallRow, KeptCalls
from igg.record.logs import get_logger

log = get_logger("igg.code")


class CallRows:
    """The kept calls' rows of a tree index (``TreeIndexes``, which opens the database and makes the tables
    ``calls`` and ``calls_step``)."""

    path: Path
    _db: sqlite3.Connection | None

    def _calls_version(self) -> str:
        """What kept calls were resolved by: the index's format and the analyzers' and IGG's versions."""
        raise NotImplementedError

    def put_calls(self, session_id: str, step: int, calls: KeptCalls | None) -> None:
        """Keep the calls a link of session ``session_id`` resolved (``KeptCalls``), which speak for its
        step ``step``: every file's when the link solved the program, else those it replayed, the others
        kept (their files and what their calls reach did not change). None: the link kept none, and none
        are kept."""
        if self._db is None:
            return
        try:
            with self._db:
                if calls is None or calls.whole:
                    self._db.execute("DELETE FROM calls WHERE session_id = ?", (session_id,))
                if calls is not None:
                    self._db.executemany(
                        "INSERT OR REPLACE INTO calls (session_id, path, sha, data) VALUES (?, ?, ?, ?)",
                        (
                            (session_id, path, sha, zlib.compress(orjson.dumps(rows), 1))
                            for path, (sha, rows) in calls.made.items()
                        ),
                    )
                self._db.execute(
                    "INSERT OR REPLACE INTO calls_step (session_id, step, version) VALUES (?, ?, ?)",
                    (session_id, step, self._calls_version()),
                )
        except sqlite3.Error as exc:
            log.warning("code_tree_index_write_failed", path=str(self.path), error=str(exc))

    def move_calls(
        self,
        session_id: str,
        since: int,
        step: int,
        shas: Mapping[str, tuple[str | None, str | None]],
        moved: Mapping[str, list[CallRow]] | None,
    ) -> None:
        """The calls kept for step ``since`` of session ``session_id`` made to speak for its step ``step``,
        after a change of files that kept their facts, and so their calls, but for sites moved (``shas``:
        path -> its content hash then and now): each such file's rows, kept for its hash then, are kept for
        its hash now, those of ``moved`` (path -> its rows at their new sites) in their place. ``moved``
        None (its rows could not be moved), or calls kept for another step: none are kept any more."""
        if self._db is None:
            return
        try:
            with self._db:
                row = self._db.execute(
                    "SELECT step, version FROM calls_step WHERE session_id = ?", (session_id,)
                ).fetchone()
                if moved is None or row is None or tuple(row) != (since, self._calls_version()):
                    self._db.execute("DELETE FROM calls WHERE session_id = ?", (session_id,))
                    self._db.execute("DELETE FROM calls_step WHERE session_id = ?", (session_id,))
                    return
                self._db.executemany(
                    "UPDATE calls SET sha = ? WHERE session_id = ? AND path = ? AND sha = ?",
                    ((now, session_id, p, then) for p, (then, now) in shas.items() if p not in moved),
                )
                self._db.executemany(
                    "UPDATE calls SET sha = ?, data = ? WHERE session_id = ? AND path = ? AND sha = ?",
                    (
                        (shas[path][1], zlib.compress(orjson.dumps(rows), 1), session_id, path, shas[path][0])
                        for path, rows in moved.items()
                    ),
                )
                self._db.execute("UPDATE calls_step SET step = ? WHERE session_id = ?", (step, session_id))
        except sqlite3.Error as exc:
            log.warning("code_tree_index_write_failed", path=str(self.path), error=str(exc))

    def calls(
        self, session_id: str, step: int, shas: Mapping[str, str | None]
    ) -> dict[str, list[CallRow]] | None:
        """The calls kept for each file of ``shas`` (path -> its content hash at step ``step`` of session
        ``session_id``), or None when one is missing, was kept for other bytes or another step, or cannot be
        read."""
        if self._db is None or not shas:
            return None
        try:
            row = self._db.execute(
                "SELECT step, version FROM calls_step WHERE session_id = ?", (session_id,)
            ).fetchone()
            if row is None or tuple(row) != (step, self._calls_version()):
                return None
            out: dict[str, list[CallRow]] = {}
            for path, sha in shas.items():
                found = self._db.execute(
                    "SELECT sha, data FROM calls WHERE session_id = ? AND path = ?", (session_id, path)
                ).fetchone()
                if found is None or sha is None or found[0] != sha:
                    return None
                out[path] = [_call_row(r) for r in orjson.loads(zlib.decompress(found[1]))]
            return out
        except (sqlite3.Error, zlib.error, orjson.JSONDecodeError, ValueError, TypeError) as exc:
            log.warning("code_tree_index_unreadable", path=str(self.path), error=str(exc))
            return None


def _call_row(row: object) -> CallRow:
    """A kept call row read back (``CallRow``), checked: a damaged row raises ValueError."""
    if (
        isinstance(row, list)
        and len(row) == 5
        and type(row[0]) is int
        and type(row[1]) is str
        and type(row[2]) is str
        and type(row[3]) is int
        and type(row[4]) is int
    ):
        return (row[0], row[1], row[2], row[3], row[4])
    raise ValueError("a kept call row is not (int, str, str, int, int)")


__all__ = ["CallRows"]
