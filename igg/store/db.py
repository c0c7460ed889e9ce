"""An SQLite file as the session store's database: WAL mode, short write transactions, retries while busy.

The file runs in WAL mode, so readers never block the writer, with a busy timeout, and every write is one
short ``BEGIN IMMEDIATE`` transaction: taking the write lock up front means two writers queue instead of
deadlocking on a lock upgrade. What SQLite still reports as busy or locked is retried with backoff, so several
sessions (threads or processes) can share one file and no lock error reaches a person. Which file is
``igg.store.location.resolve_store_path``'s answer; the tables and their migrations are
``igg.store.schema``'s.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal, TypeVar

from igg.errors import SessionError, SessionRefused
from igg.store.location import PostgresURL, resolve_store_path
from igg.store.schema import migrate
from igg.store.sql import Connection, retried

BUSY_TIMEOUT_MS = 10_000
RETRY_SECONDS = 120.0
"""How long a write keeps retrying a busy/locked database before giving up with a ``SessionError``."""

T = TypeVar("T")


_SQLITE_BUSY, _SQLITE_LOCKED, _SQLITE_NOTADB = 5, 6, 26
"""SQLite's primary result codes (https://sqlite.org/rescode.html); extended codes carry them in the low
byte."""


def _primary_code(exc: sqlite3.Error) -> int | None:
    code = getattr(exc, "sqlite_errorcode", None)  # set by the sqlite3 module on errors from the library
    return code & 0xFF if isinstance(code, int) else None


def _is_busy(exc: sqlite3.Error) -> bool:
    return _primary_code(exc) in (_SQLITE_BUSY, _SQLITE_LOCKED)


def _not_a_database(exc: sqlite3.Error) -> bool:
    return _primary_code(exc) == _SQLITE_NOTADB


class Database:
    """One SQLite store file, with a connection per thread (sqlite3 connections are not shared)."""

    dialect: Literal["sqlite"] = "sqlite"

    def __init__(self, path: str | os.PathLike[str] | None = None, *, synchronous: str = "FULL") -> None:
        location = resolve_store_path(path)
        if isinstance(location, PostgresURL):
            raise SessionError(
                f"store {location} is a PostgreSQL URL; open it with igg.store.backends.open_database"
            )
        self.path: Path = location
        self.location: Path = location
        self.synchronous = synchronous
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        if self.path.exists() and self.path.is_dir():
            raise SessionError(
                f"store {self.path} is a directory; give a file path such as {self.path / 'sessions.sqlite'}"
            )
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SessionError(
                f"cannot create the directory of store {self.path}: {exc.strerror or exc}"
            ) from None
        self._retry(self._init_schema)

    # ---- connections ---------------------------------------------------------------------------------
    def connection(self) -> sqlite3.Connection:
        """This thread's connection (opened on first use)."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            try:
                conn = sqlite3.connect(
                    self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False
                )
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
            raise SessionError(
                f"store {self.path} cannot use WAL mode (got {mode!r}); use a local file system"
            )
        with self._transaction(conn):
            migrate(conn, self.dialect, str(self.path))

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

    @contextmanager
    def atomic(self) -> Iterator[None]:
        """Every write and read of this thread inside the block in ONE transaction (all of it or none is
        kept); not retried: a busy database past the busy timeout fails the block with a ``SessionError``."""
        if getattr(self._local, "atomic", False):
            yield
            return
        conn = self.connection()
        try:
            with self._transaction(conn):
                self._local.atomic = True
                try:
                    yield
                finally:
                    self._local.atomic = False
        except sqlite3.DatabaseError as exc:
            raise SessionError(f"store {self.path}: {exc}") from None

    def write(self, work: Callable[[Connection], T]) -> T:
        """Run ``work(conn)`` in one short write transaction, retrying while the database is busy."""
        if getattr(self._local, "atomic", False):
            return work(self.connection())

        def attempt() -> T:
            conn = self.connection()
            with self._transaction(conn):
                return work(conn)

        return self._retry(attempt)

    def read(self, work: Callable[[Connection], T], *, statement: bool = False) -> T:
        """Run ``work(conn)`` in one read transaction (a consistent view), retrying while busy; ``statement``:
        one statement, consistent on its own, run without a transaction around it."""
        if getattr(self._local, "atomic", False):
            return work(self.connection())
        if statement:
            return self._retry(lambda: work(self.connection()))

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
        """``attempt``, retried while the database is busy or locked, for at most ``RETRY_SECONDS``."""
        try:
            return retried(
                attempt, lambda e: isinstance(e, sqlite3.DatabaseError) and _is_busy(e), RETRY_SECONDS
            )
        except sqlite3.DatabaseError as exc:
            if _not_a_database(exc):
                raise self._not_a_store() from None
            if not _is_busy(exc):
                raise SessionError(f"store {self.path}: {exc}") from None
            raise SessionError(
                f"store {self.path} stayed locked for {RETRY_SECONDS:.0f} s; "
                "another process holds it (a stuck writer?)"
            ) from None

    def _not_a_store(self) -> SessionRefused:
        return SessionRefused(
            f"{self.path} is not an IGG session store (not an SQLite database); give --store "
            "a new file name or an existing store"
        )
