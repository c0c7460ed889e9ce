"""Copying sessions between stores (``igg sessions --copy-to``): SQLite to PostgreSQL, back, or file to file.

A session is copied whole, row for row (its session row, steps, mutations, snapshots and export records, in
the latest schema's columns: ``igg.store.schema.TABLE_COLUMNS``), read in one transaction of the source and
written in ONE transaction of the target, so the target holds all of it or none. A session id the target
already holds is refused (``SessionExists``) and the target's session is left as it was; copying goes on with
the next one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from igg.errors import IGGError, SessionExists
from igg.store import codec
from igg.store.location import StoreLocation
from igg.store.schema import TABLE_COLUMNS
from igg.store.sql import Connection
from igg.store.store import SessionStore


@dataclass(kw_only=True)
class CopiedSession:
    """What became of one session: copied (with its counts), or refused and why."""

    session_id: str
    outcome: Literal["copied", "exists", "failed"]
    """``copied``; ``exists``: the target already holds that id (nothing written); ``failed``: another
    error."""
    rows: dict[str, int]
    """Rows copied per table (empty unless copied)."""
    message: str = ""
    """Why it was not copied."""


def copy_sessions(
    source: SessionStore, target: SessionStore, session_ids: Sequence[str] = ()
) -> list[CopiedSession]:
    """Copy ``session_ids`` (default: every session of ``source``, oldest first) into ``target``, one
    transaction per session; one result per session, in order. An unknown id raises ``SessionNotFound`` before
    any copy."""
    ids = list(session_ids) or [i.session_id for i in reversed(source.sessions())]
    for sid in ids:
        source.session(sid)  # an unknown id is refused up front, naming the sessions there
    results = []
    for sid in ids:
        try:
            rows = copy_session(source, target, sid)
        except SessionExists as exc:
            results.append(CopiedSession(session_id=sid, outcome="exists", rows={}, message=str(exc)))
        except IGGError as exc:
            results.append(CopiedSession(session_id=sid, outcome="failed", rows={}, message=str(exc)))
        else:
            results.append(CopiedSession(session_id=sid, outcome="copied", rows=rows))
    return results


def copy_session(source: SessionStore, target: SessionStore, session_id: str) -> dict[str, int]:
    """Copy one session whole into ``target``; returns the rows copied per table. ``SessionExists`` when the
    target holds a session of that id."""

    def read(conn: Connection) -> dict[str, list[Any]]:
        return {
            table: conn.execute(
                f"SELECT {', '.join(cols)} FROM {table} WHERE session_id = ?", (session_id,)
            ).fetchall()
            for table, cols in TABLE_COLUMNS.items()
        }

    rows = source.db.read(read)

    def write(conn: Connection) -> None:
        if conn.execute("SELECT 1 FROM sessions WHERE session_id = ?", (session_id,)).fetchone() is not None:
            raise SessionExists(
                f"session {session_id!r} is already in {target.location}; not copied (delete it "
                "there first, or copy the others by name)",
                session_id=session_id,
            )
        for table, cols in TABLE_COLUMNS.items():
            if rows[table]:
                conn.executemany(
                    f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                    [_row(table, r, target.path) for r in rows[table]],
                )

    target.db.write(write)
    return {table: len(found) for table, found in rows.items()}


def _row(table: str, row: Sequence[Any], target: StoreLocation) -> tuple[Any, ...]:
    """A row as the target keeps it: a snapshot an SQLite file kept compressed goes to PostgreSQL as text."""
    if table == "snapshots":
        session_id, step, document = row
        return session_id, step, codec.snapshot_for(document, target)
    return tuple(row)


__all__ = ["CopiedSession", "copy_session", "copy_sessions"]
