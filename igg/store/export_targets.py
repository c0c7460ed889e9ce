"""Where a session was exported to, and what IGG wrote there: the starting point of the next delta export.

One row per (session, Bolt target, database, scope): the last step exported, its iteration, the digest IGG
wrote into the scope's marker with it (``igg.export.neo4j.sync``), the node and relationship counts the scope
held then, and the export options that shape the rows (provenance). The target is the URI without user
information (``Neo4jSettings.display_uri``): no credential ever reaches the store.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from igg.store.sql import Connection, Database


@dataclass(kw_only=True)
class ExportTarget:
    """The last export of one session into one scope of one Bolt target."""

    session_id: str
    target: str
    """The Bolt URI without user information."""
    database: str
    """The database name ("" for the server's default)."""
    scope: str
    step: int
    """The last step exported."""
    iteration: int
    """That step's iteration (what people call it)."""
    digest: str
    """What IGG wrote with it into the scope's marker."""
    nodes: int
    edges: int
    options: dict[str, Any] = field(default_factory=dict)
    """Export options that shape the rows written (``provenance``): a change means a full export."""
    updated_at: float = 0.0


_COLS = "session_id, target, database, scope, step, iteration, digest, nodes, edges, options, updated_at"
_UPDATE = ", ".join(
    f"{c} = excluded.{c}" for c in ("step", "iteration", "digest", "nodes", "edges", "options", "updated_at")
)


class ExportTargets:
    """The ``export_targets`` table of one store."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def get(self, session_id: str, target: str, database: str, scope: str) -> ExportTarget | None:
        """The record of the last export of ``session_id`` into this scope, or None."""
        row = self.db.read(
            lambda c: c.execute(
                f"SELECT {_COLS} FROM export_targets WHERE session_id = ? AND target = ? AND database = ? AND"
                " scope = ?",
                (session_id, target, database, scope),
            ).fetchone()
        )
        return None if row is None else _target(row)

    def of_session(self, session_id: str) -> list[ExportTarget]:
        """Every target the session was exported to."""
        rows = self.db.read(
            lambda c: c.execute(
                f"SELECT {_COLS} FROM export_targets WHERE session_id = ? ORDER BY updated_at", (session_id,)
            ).fetchall()
        )
        return [_target(r) for r in rows]

    def record(self, t: ExportTarget) -> None:
        """Store (or replace) the record of an export that committed."""
        now = time.time()

        def work(conn: Connection) -> None:
            conn.execute(
                f"INSERT INTO export_targets ({_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT"
                f" (session_id, target, database, scope) DO UPDATE SET {_UPDATE}",
                (
                    t.session_id,
                    t.target,
                    t.database,
                    t.scope,
                    t.step,
                    t.iteration,
                    t.digest,
                    t.nodes,
                    t.edges,
                    json.dumps(t.options, sort_keys=True),
                    now,
                ),
            )

        self.db.write(work)

    def forget(self, session_id: str, target: str, database: str, scope: str) -> None:
        """Drop the record (the next export is a full one)."""
        self.db.write(
            lambda c: c.execute(
                "DELETE FROM export_targets WHERE session_id = ? AND target = ? AND "
                "database = ? AND scope = ?",
                (session_id, target, database, scope),
            )
        )


def _target(r: tuple[Any, ...]) -> ExportTarget:
    return ExportTarget(
        session_id=r[0],
        target=r[1],
        database=r[2],
        scope=r[3],
        step=r[4],
        iteration=r[5],
        digest=r[6],
        nodes=r[7],
        edges=r[8],
        options=json.loads(r[9] or "{}"),
        updated_at=r[10],
    )
