"""The SQLite file under the session store: where it lives, its tables, and short write transactions.

One file holds every session. Which file, when no path is given, is decided in ONE place, ``resolve_store_path``:
``--store PATH``, else ``$IGG_STORE``, else ``./.igg/sessions.sqlite`` when that file exists (a project's own
store), else the user's **default store** ``$IGG_HOME/sessions.sqlite`` (else ``$XDG_DATA_HOME/igg/``, else
``~/.local/share/igg/``). Runs, the session commands and the servers all use it.
It runs in WAL mode, so readers never block the writer, with a busy timeout, and every write is one short
``BEGIN IMMEDIATE`` transaction: taking the write lock up front means two writers queue instead of
deadlocking on a lock upgrade. What SQLite still reports as busy or locked is retried with backoff, so
several sessions (threads or processes) can share one file and no lock error reaches a person.

Tables::

    meta       key/value: the store format version
    sessions   one row per session: request, agent, status, stop reason, counters, owner (host:pid)
    steps      one row per committed step (an iteration, an undo, the finalize step): the iteration record
    mutations  the graph mutations of each step, in order, indexed by element id (explain)
    snapshots  whole-graph documents at a few steps (the end of a run, an undo), checked by ``replay``
    export_targets  per session, Bolt target (URI + database) and scope: the last step exported there and the
               digest IGG wrote with it (``igg.store.export_targets``; the delta export starts from it)

Migrations: every table is created ``IF NOT EXISTS`` when a store is opened, so a store written by an older IGG
gains the tables added since (``export_targets``: schema 2, recorded in ``meta`` as ``schema``) without
changing what it holds; the format version changes only when existing tables would be read differently.
"""

from __future__ import annotations

import os
import random
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from igg.errors import SessionError, SessionRefused

STORE_ENV = "IGG_STORE"
"""Environment variable naming the store file when ``--store`` is not given."""

HOME_ENV = "IGG_HOME"
"""Environment variable naming the directory of the default store (``sessions.sqlite``)."""

PROJECT_STORE = Path(".igg") / "sessions.sqlite"
"""A project's own store, relative to the working directory: used (without ``--store``/``$IGG_STORE``) when it
exists."""

DEFAULT_STORE = PROJECT_STORE
"""Deprecated name of ``PROJECT_STORE`` (the store used without ``--store`` is ``resolve_store_path()``)."""

FORMAT_VERSION = "1"
SCHEMA_VERSION = "2"
"""Which tables the store has: 1 the first (sessions, steps, mutations, snapshots), 2 adds export_targets."""

BUSY_TIMEOUT_MS = 10_000
RETRY_SECONDS = 120.0
"""How long a write keeps retrying a busy/locked database before giving up with a ``SessionError``."""

_DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
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

T = TypeVar("T")


def home_store() -> Path:
    """The user's default store: ``$IGG_HOME/sessions.sqlite``, else ``$XDG_DATA_HOME/igg/sessions.sqlite``,
    else ``~/.local/share/igg/sessions.sqlite``."""
    home = os.environ.get(HOME_ENV)
    if home:
        return Path(home).expanduser() / "sessions.sqlite"
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data).expanduser() / "igg" / "sessions.sqlite"


_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+:/")
"""A store argument that names a server (``postgresql://...``): never a file path (``Path`` would collapse its
``//`` and a folder named ``postgresql:`` would appear)."""


def resolve_store_path(path: str | os.PathLike[str] | None = None) -> Path:
    """The store file, the one rule every command and server follows: ``path`` if given, else ``$IGG_STORE``,
    else ``./.igg/sessions.sqlite`` if that file exists, else the default store (``home_store()``). A URL is
    refused (``SessionRefused``): stores are SQLite files here."""
    given = str(path) if path is not None and str(path) else os.environ.get(STORE_ENV) or ""
    if _URL.match(given):
        scheme = given.split(":", 1)[0]
        raise SessionRefused(f"the store {scheme}://... is a URL; this IGG keeps sessions in an SQLite file: give "
                             f"a file path (--store PATH or {STORE_ENV}), e.g. .igg/sessions.sqlite")
    if given:
        return Path(given)
    return PROJECT_STORE if PROJECT_STORE.is_file() else home_store()


_SQLITE_BUSY, _SQLITE_LOCKED, _SQLITE_NOTADB = 5, 6, 26
"""SQLite's primary result codes (https://sqlite.org/rescode.html); extended codes carry them in the low byte."""


def _primary_code(exc: sqlite3.Error) -> int | None:
    code = getattr(exc, "sqlite_errorcode", None)  # set by the sqlite3 module on errors from the library
    return code & 0xFF if isinstance(code, int) else None


def _is_busy(exc: sqlite3.Error) -> bool:
    return _primary_code(exc) in (_SQLITE_BUSY, _SQLITE_LOCKED)


def _not_a_database(exc: sqlite3.Error) -> bool:
    return _primary_code(exc) == _SQLITE_NOTADB


class Database:
    """One SQLite store file, with a connection per thread (sqlite3 connections are not shared)."""

    def __init__(self, path: str | os.PathLike[str] | None = None, *, synchronous: str = "FULL") -> None:
        self.path = resolve_store_path(path)
        self.synchronous = synchronous
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        if self.path.exists() and self.path.is_dir():
            raise SessionError(f"store {self.path} is a directory; give a file path such as {self.path / 'sessions.sqlite'}")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SessionError(f"cannot create the directory of store {self.path}: {exc.strerror or exc}") from None
        self._retry(self._init_schema)

    # ---- connections ---------------------------------------------------------------------------------
    def connection(self) -> sqlite3.Connection:
        """This thread's connection (opened on first use)."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            try:
                conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                                       check_same_thread=False)
                conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
                conn.execute(f"PRAGMA synchronous = {self.synchronous}")
                conn.execute("PRAGMA foreign_keys = OFF")
            except sqlite3.DatabaseError as exc:
                if _not_a_database(exc):
                    raise self._not_a_store() from None
                raise SessionError(f"cannot open store {self.path}: {exc}") from None
            self._local.conn = conn
            with self._lock:
                self._connections.append(conn)
        return conn

    def close(self) -> None:
        """Close every connection this object opened."""
        with self._lock:
            conns, self._connections = self._connections, []
        for conn in conns:
            try:
                conn.close()
            except sqlite3.Error:
                pass
        self._local = threading.local()

    def _init_schema(self) -> None:
        conn = self.connection()
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise SessionError(f"store {self.path} cannot use WAL mode (got {mode!r}); use a local file system")
        with self._transaction(conn):
            for statement in _DDL.split(";"):
                if statement.strip():
                    conn.execute(statement)
            row = conn.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
            if row is None:
                conn.execute("INSERT INTO meta (key, value) VALUES ('format', ?)", (FORMAT_VERSION,))
            elif row[0] != FORMAT_VERSION:
                raise SessionError(f"store {self.path} has format {row[0]}; this IGG reads format {FORMAT_VERSION}")
            conn.execute("INSERT INTO meta (key, value) VALUES ('schema', ?) ON CONFLICT (key) DO UPDATE SET value ="
                         " excluded.value WHERE CAST(meta.value AS INTEGER) < CAST(excluded.value AS INTEGER)",
                         (SCHEMA_VERSION,))

    # ---- transactions --------------------------------------------------------------------------------
    @contextmanager
    def _transaction(self, conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def write(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``work(conn)`` in one short write transaction, retrying while the database is busy."""

        def attempt() -> T:
            conn = self.connection()
            with self._transaction(conn):
                return work(conn)

        return self._retry(attempt)

    def read(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``work(conn)`` in one read transaction (a consistent view), retrying while busy."""

        def attempt() -> T:
            conn = self.connection()
            conn.execute("BEGIN")
            try:
                return work(conn)
            finally:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")

        return self._retry(attempt)

    def _retry(self, attempt: Callable[[], T]) -> T:
        deadline = time.monotonic() + RETRY_SECONDS
        delay = 0.005
        while True:
            try:
                return attempt()
            except sqlite3.DatabaseError as exc:
                if _not_a_database(exc):
                    raise self._not_a_store() from None
                if not _is_busy(exc):
                    raise SessionError(f"store {self.path}: {exc}") from None
                if time.monotonic() > deadline:
                    raise SessionError(f"store {self.path} stayed locked for {RETRY_SECONDS:.0f} s; "
                                       "another process holds it (a stuck writer?)") from None
                time.sleep(delay * (0.5 + random.random()))
                delay = min(delay * 2, 0.5)

    def _not_a_store(self) -> SessionRefused:
        return SessionRefused(f"{self.path} is not an IGG session store (not an SQLite database); give --store "
                              "a new file name or an existing store")
