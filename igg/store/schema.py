"""The store's tables and their versioned migrations, for SQLite and PostgreSQL alike.

Tables::

    meta       key/value: the store format version (``format``) and schema version (``schema``)
    sessions   one row per session: agent, status, stop reason, counters, owner (host:pid); its
               ``request`` column is empty since schema 5
    requests   each session's request (schema 5): kept out of the ``sessions`` row, which every step updates
               (SQLite rewrites a whole row on update: a code map's request holds its sources, megabytes)
    steps      one row per committed step (an iteration, an undo, the finalize step, a review): the iteration
               record; ``review_state`` is a review step's state (``pending``, ``approved``...), else NULL;
               indexed by session, kind and review state (schema 6: the plans still waiting are counted)
    mutations  the graph mutations of each step, in order, indexed by element id (explain)
    snapshots  whole-graph documents at a few steps (the end of a run, an undo), checked by ``replay``
    export_targets  per session, Bolt target (URI + database) and scope: the last step exported there and the
               digest IGG wrote with it (``igg.store.export_targets``; the delta export starts from it)
    answers, document_answers, answer_mentions  agents' answers to documents' chunks by what they depend on,
               shared by every session of the store (``igg.documents.cache``)

Migrations: ``MIGRATIONS`` is numbered; the store's ``meta.schema`` says how many it has had. Opening a store
applies the missing ones in order, inside ONE write transaction (PostgreSQL first takes a transaction-level
advisory lock, so replicas opening one database at once migrate it once), so a store is at one version or the
next, never between. A store whose schema is newer than this IGG's is refused (an older IGG would misread it).
The DDL is written once, in SQLite's words; ``postgres_ddl`` turns its types into PostgreSQL's (INTEGER ->
BIGINT, REAL -> DOUBLE PRECISION; JSON stays TEXT in both, so one codec reads both). The format version
changes only when existing tables would be read differently.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass

from igg.errors import SessionRefused
from igg.store.sql import Connection, Dialect

FORMAT_VERSION = "1"

BASE_DDL = """
CREATE TABLE IF NOT EXISTS sessions (
    session_id TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    stop_reason TEXT,
    goal TEXT NOT NULL,
    request TEXT NOT NULL,
    agent TEXT,
    options TEXT NOT NULL DEFAULT '{}',
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    last_step INTEGER NOT NULL DEFAULT 0,
    last_iteration INTEGER NOT NULL DEFAULT 0,
    nodes INTEGER NOT NULL DEFAULT 0,
    edges INTEGER NOT NULL DEFAULT 0,
    owner TEXT,
    result TEXT
);
CREATE TABLE IF NOT EXISTS steps (
    session_id TEXT NOT NULL,
    step INTEGER NOT NULL,
    kind TEXT NOT NULL,
    iteration INTEGER,
    chunk TEXT,
    chunk_cursor INTEGER,
    proposed INTEGER NOT NULL DEFAULT 0,
    accepted INTEGER NOT NULL DEFAULT 0,
    rejected INTEGER NOT NULL DEFAULT 0,
    rejected_by_code TEXT NOT NULL DEFAULT '{}',
    tokens INTEGER NOT NULL DEFAULT 0,
    ms REAL NOT NULL DEFAULT 0,
    nodes INTEGER NOT NULL,
    edges INTEGER NOT NULL,
    next_node INTEGER NOT NULL,
    next_edge INTEGER NOT NULL,
    mutation_count INTEGER NOT NULL DEFAULT 0,
    record TEXT NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (session_id, step)
) WITHOUT ROWID;
CREATE UNIQUE INDEX IF NOT EXISTS steps_one_per_iteration ON steps (session_id, iteration)
    WHERE kind = 'iteration';
CREATE TABLE IF NOT EXISTS mutations (
    session_id TEXT NOT NULL,
    step INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    op TEXT NOT NULL,
    element TEXT NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (session_id, step, seq)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS mutations_by_element ON mutations (session_id, element);
CREATE TABLE IF NOT EXISTS snapshots (
    session_id TEXT NOT NULL,
    step INTEGER NOT NULL,
    document TEXT NOT NULL,
    PRIMARY KEY (session_id, step)
) WITHOUT ROWID;
"""

EXPORT_TARGETS_DDL = """
CREATE TABLE IF NOT EXISTS export_targets (
    session_id TEXT NOT NULL,
    target TEXT NOT NULL,
    database TEXT NOT NULL,
    scope TEXT NOT NULL,
    step INTEGER NOT NULL,
    iteration INTEGER NOT NULL,
    digest TEXT NOT NULL,
    nodes INTEGER NOT NULL,
    edges INTEGER NOT NULL,
    options TEXT NOT NULL DEFAULT '{}',
    updated_at REAL NOT NULL,
    PRIMARY KEY (session_id, target, database, scope)
) WITHOUT ROWID;
"""

ANSWERS_DDL = """
CREATE TABLE IF NOT EXISTS answers (
    key TEXT PRIMARY KEY,
    answer TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS document_answers (
    key TEXT PRIMARY KEY,
    answer TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS answer_mentions (
    value TEXT NOT NULL,
    key TEXT NOT NULL,
    PRIMARY KEY (value, key)
) WITHOUT ROWID;
"""

TABLE_COLUMNS: dict[str, tuple[str, ...]] = {
    "sessions": (
        "session_id",
        "status",
        "stop_reason",
        "goal",
        "request",
        "agent",
        "options",
        "created_at",
        "updated_at",
        "last_step",
        "last_iteration",
        "nodes",
        "edges",
        "owner",
        "result",
    ),
    "requests": ("session_id", "request"),
    "steps": (
        "session_id",
        "step",
        "kind",
        "iteration",
        "chunk",
        "chunk_cursor",
        "proposed",
        "accepted",
        "rejected",
        "rejected_by_code",
        "tokens",
        "ms",
        "nodes",
        "edges",
        "next_node",
        "next_edge",
        "mutation_count",
        "record",
        "created_at",
        "review_state",
    ),
    "mutations": ("session_id", "step", "seq", "op", "element", "data"),
    "snapshots": ("session_id", "step", "document"),
    "export_targets": (
        "session_id",
        "target",
        "database",
        "scope",
        "step",
        "iteration",
        "digest",
        "nodes",
        "edges",
        "options",
        "updated_at",
    ),
}
"""Every column of each per-session table at the latest schema (what copying a session between stores
copies)."""

_META = "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"


def postgres_ddl(statement: str) -> str:
    """An SQLite DDL statement in PostgreSQL's types (64-bit integers, double precision, no ``WITHOUT
    ROWID``)."""
    statement = re.sub(r"\bINTEGER\b", "BIGINT", statement)
    statement = re.sub(r"\bREAL\b", "DOUBLE PRECISION", statement)
    return statement.replace(") WITHOUT ROWID", ")")


def _statements(ddl: str) -> Callable[[Connection, Dialect], None]:
    def run(conn: Connection, dialect: Dialect) -> None:
        for statement in ddl.split(";"):
            if statement.strip():
                conn.execute(postgres_ddl(statement) if dialect == "postgresql" else statement)

    return run


def _review_state(conn: Connection, dialect: Dialect) -> None:
    """Schema 3: ``steps.review_state``, the state of a review step (so the pending test needs no JSON
    function), filled in for the review steps already stored."""
    conn.execute("ALTER TABLE steps ADD COLUMN review_state TEXT")
    rows = conn.execute("SELECT session_id, step, record FROM steps WHERE kind = 'review'").fetchall()
    conn.executemany(
        "UPDATE steps SET review_state = ? WHERE session_id = ? AND step = ?",
        [(review_state_of(json.loads(record)), sid, step) for sid, step, record in rows],
    )


def review_state_of(record: object) -> str | None:
    """A review step's state as its record stores it (``pending``, ``approved``, ``rejected``...), else
    None."""
    state = record.get("state") if isinstance(record, dict) else None
    return state if isinstance(state, str) else None


@dataclass(frozen=True)
class Migration:
    """One step of the schema: its number (the schema it brings a store to) and what it does."""

    version: int
    summary: str
    apply: Callable[[Connection, Dialect], None]


REQUESTS_DDL = """
CREATE TABLE IF NOT EXISTS requests (
    session_id TEXT PRIMARY KEY,
    request TEXT NOT NULL
)
"""


def _requests(conn: Connection, dialect: Dialect) -> None:
    """Schema 5: each session's request in a table of its own, out of the ``sessions`` row every step
    updates (the column stays, empty)."""
    _statements(REQUESTS_DDL)(conn, dialect)
    conn.execute("INSERT INTO requests (session_id, request) SELECT session_id, request FROM sessions")
    conn.execute("UPDATE sessions SET request = ''")


PENDING_DDL = """
CREATE INDEX IF NOT EXISTS steps_pending ON steps (session_id, kind, review_state)
"""
"""Schema 6: the steps by session, kind and review state. Loading a session counts its review plans still
waiting; without the index that count read every step row of the session, and ``review_state``, a column
added by schema 3, sits after the step's record (0.6 s for a 5,833-step code map whose records hold 2.2 GB).
The index covers the count (a partial index on the waiting plans alone is passed over by SQLite's planner
for the primary key)."""


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "sessions, steps, mutations, snapshots", _statements(BASE_DDL)),
    Migration(2, "export_targets: where each session was exported", _statements(EXPORT_TARGETS_DDL)),
    Migration(3, "steps.review_state: a review step's state as a column", _review_state),
    Migration(
        4, "answers: agents' answers to documents, shared by the store's sessions", _statements(ANSWERS_DDL)
    ),
    Migration(5, "requests: each session's request out of its sessions row", _requests),
    Migration(6, "steps_pending: steps by session, kind and review state", _statements(PENDING_DDL)),
)
"""Every schema change, in order; ``MIGRATIONS[-1].version`` is the schema this IGG writes."""

SCHEMA_VERSION = str(MIGRATIONS[-1].version)


def migrate(conn: Connection, dialect: Dialect, where: str) -> list[int]:
    """Bring the store to ``SCHEMA_VERSION`` inside the caller's write transaction; returns the migrations
    applied. ``where`` names the store in refusals (a newer schema, another format)."""
    if dialect == "postgresql":  # replicas opening one database at once: the first migrates, the others wait
        conn.execute("SELECT pg_advisory_xact_lock(?)", (0x16_60_35,))
    conn.execute(_META)
    row = conn.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
    if row is None:
        conn.execute("INSERT INTO meta (key, value) VALUES ('format', ?)", (FORMAT_VERSION,))
    elif row[0] != FORMAT_VERSION:
        raise SessionRefused(f"store {where} has format {row[0]}; this IGG reads format {FORMAT_VERSION}")
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
    current = (
        int(row[0]) if row is not None else 0
    )  # the first stores recorded no schema (their DDL is rerun)
    latest = MIGRATIONS[-1].version
    if current > latest:
        raise SessionRefused(
            f"store {where} has schema {current}, newer than this IGG's ({latest}): a newer IGG "
            "wrote it; upgrade IGG to open it (pip install -U igg)"
        )
    applied = []
    for migration in MIGRATIONS:
        if migration.version > current:
            migration.apply(conn, dialect)
            applied.append(migration.version)
    if applied:
        conn.execute(
            "INSERT INTO meta (key, value) VALUES ('schema', ?) ON CONFLICT (key) DO UPDATE SET value ="
            " excluded.value",
            (str(latest),),
        )
    return applied
