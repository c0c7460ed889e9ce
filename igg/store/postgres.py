"""A PostgreSQL database as the session store's database: a small psycopg 3 connection pool, short
transactions.

The store's SQL is the SQLite store's (``igg.store.sql``): ``PgConnection`` hands it to psycopg with its ``?``
placeholders as ``%s``. A write is one ``READ COMMITTED`` transaction (``SessionStore.commit_step`` updates
the session's row first, which locks it, so two processes never number two steps alike); a read is one
``REPEATABLE READ READ ONLY`` transaction (one consistent view across its statements). A serialisation
failure, a deadlock, a lost connection or a database that is restarting is retried with backoff for up to
``RETRY_SECONDS``, then reported as a ``SessionError``; but a write whose COMMIT met a broken connection is
not run again (the server may have kept it: a step would be stored twice): it fails at once with a
``SessionError`` saying so. A transaction runs in pipeline mode (a step's write is two round trips: BEGIN with
the session row's update, then the rest with the COMMIT). The pool checks a connection before handing it out
without a round trip (``_check_alive``), so a restarted database is reconnected to. The URL's password never
appears in a message: the store is named by ``PostgresURL``'s masked text, and a driver message quoting the
password has it replaced.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from functools import lru_cache
from typing import Any, Literal, TypeVar

import psycopg
from psycopg import errors as pg_errors
from psycopg_pool import ConnectionPool, PoolTimeout

from igg.errors import SessionError, SessionRefused
from igg.io.urls import scrub
from igg.store.location import PostgresURL
from igg.store.schema import migrate
from igg.store.sql import Connection, Cursor, retried

T = TypeVar("T")

POOL_MIN, POOL_MAX = 1, 8
"""Connections each store object keeps open (at least) and may open (at most)."""

RETRY_SECONDS = 30.0
"""How long a transaction is retried while the database is busy (a serialisation failure, a deadlock) or
unreachable (a restart) before it fails with a ``SessionError``."""

CONNECT_SECONDS = 5.0
"""How long opening a store waits for its database to accept connections."""

_PIPELINE = psycopg.Pipeline.is_supported()
"""Whether this libpq has pipeline mode (14 and later; psycopg's binary wheels bring their own)."""

_RETRY_CLASSES = (
    pg_errors.SerializationFailure,
    pg_errors.DeadlockDetected,
    pg_errors.LockNotAvailable,
    psycopg.OperationalError,
    PoolTimeout,
)
"""Errors after which the same transaction, run again, may succeed (``OperationalError`` covers a lost
connection and a server shutting down)."""

_NO_RETRY_STATES = ("28", "3D", "42")
"""SQLSTATE classes never retried: bad credentials, an unknown database, an error in the SQL."""

_UNREACHABLE = (
    "connection refused",
    "could not connect",
    "starting up",
    "shutting down",
    "timeout expired",
    "server closed the connection",
    "no such file or directory",
    "too many clients",
    "in recovery",
)
"""What a failed connection attempt says when the server is down or restarting (libpq gives such failures no
SQLSTATE): opening the store waits for these, and gives up at once on any other (a wrong password, an unknown
database)."""

_UNIQUE_RETRIES = 3
"""A unique violation (two processes inserting one session at once) is retried this often: the next attempt
sees the other's row and answers as the store does for an existing row."""


class _CommitLost(Exception):
    """A write's COMMIT met a broken connection: whether the server kept it is unknown, so it is not
    retried."""

    def __init__(self, cause: psycopg.Error) -> None:
        super().__init__(str(cause))
        self.cause = cause


def _check_alive(conn: psycopg.Connection[Any]) -> None:
    """The pool's check of a connection it hands out, without a round trip: what the server sent since (a
    restarting server's goodbye, the end of the stream) is read without waiting, and a connection found closed
    or broken raises, so the pool drops it and hands out another. A connection that dies unseen fails its
    transaction's first statements, which are retried on another (never its COMMIT: see ``_transaction``)."""
    if not _sound(conn):
        raise psycopg.OperationalError("the connection is closed or broken")
    # raises OperationalError once it meets the end of the stream; a server closing a connection sends a
    # message first, which one read takes in, so a second one finds the end (a sound connection: no data)
    conn.pgconn.consume_input()
    conn.pgconn.consume_input()
    if not _sound(conn):
        raise psycopg.OperationalError("the connection is broken")


def _sound(conn: psycopg.Connection[Any]) -> bool:
    """Whether the connection still talks to the server (an error it reported was then the server's
    answer)."""
    return not (conn.closed or conn.broken) and conn.pgconn.status == psycopg.pq.ConnStatus.OK


@lru_cache(maxsize=512)
def pg_sql(sql: str) -> str:
    """The store's SQL with psycopg's placeholders: ``%`` doubled, ``?`` as ``%s`` (no statement of the store
    has a ``?`` or ``%`` inside a string literal)."""
    return sql.replace("%", "%%").replace("?", "%s")


MULTI_ROW_MAX = 1000
"""Most rows one multi-row ``INSERT`` writes (``PgConnection.executemany``)."""

_MAX_PARAMETERS = 65535
"""Most parameters one statement may have (the protocol counts them in 16 bits)."""

_PLAIN_INSERT = re.compile(r"INSERT INTO \w+ \([\w, ]+\) VALUES (\(\?(?:, \?)*\))")
"""An ``INSERT`` of one row of placeholders and nothing after (no ``ON CONFLICT``, no ``RETURNING``): as
many rows in one statement mean the same as one statement per row."""


@lru_cache(maxsize=256)
def multi_row(sql: str, width: int, rows: int) -> str:
    """``INSERT INTO t (...) VALUES (?, ...)`` for ``rows`` rows of ``width`` values, psycopg's way."""
    head = pg_sql(sql).rsplit(" VALUES ", 1)[0]
    one = "(" + ", ".join(["%s"] * width) + ")"
    return f"{head} VALUES {', '.join([one] * rows)}"


class PgConnection:
    """A psycopg connection inside a transaction, taking the store's ``?`` placeholders."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.conn = conn

    def execute(self, sql: str, parameters: Sequence[Any] = (), /) -> Cursor:
        """Run one statement; its rows are read from the returned cursor."""
        return self.conn.execute(pg_sql(sql), parameters)

    def executemany(self, sql: str, parameters: Iterable[Sequence[Any]], /) -> None:
        """Run one statement once per row: a plain ``INSERT INTO t (...) VALUES (?, ...)`` as one statement
        of many rows (``multi_row``: one statement for psycopg to send, not one per row), any other statement
        once per row (psycopg pipelines them: one round trip, not one per row)."""
        rows = list(parameters)
        if not rows:
            return
        plain = _PLAIN_INSERT.fullmatch(sql)
        if plain is None:
            with self.conn.cursor() as cursor:
                cursor.executemany(pg_sql(sql), rows)
            return
        width = plain.group(1).count("?")
        per = max(1, min(MULTI_ROW_MAX, _MAX_PARAMETERS // width))
        for at in range(0, len(rows), per):
            batch = rows[at : at + per]
            self.conn.execute(multi_row(sql, width, len(batch)), [v for row in batch for v in row])


class PostgresDatabase:
    """A PostgreSQL store: a pool of connections to the database the URL names; safe to share between
    threads."""

    dialect: Literal["postgresql"] = "postgresql"

    def __init__(self, location: PostgresURL, *, min_size: int = POOL_MIN, max_size: int = POOL_MAX) -> None:
        self.location = location
        self._local = threading.local()
        self._first_connection()
        self.pool = ConnectionPool(
            location.url,
            min_size=min_size,
            max_size=max_size,
            open=True,
            kwargs={"autocommit": True},
            check=_check_alive,
            name="igg-store",
            timeout=CONNECT_SECONDS,
        )

    def _first_connection(self) -> None:
        """Migrate the schema over one connection of its own: a wrong URL or a database that is down fails
        here, with the driver's reason (the pool would only time out)."""

        def down(exc: BaseException) -> bool:  # a server still starting or briefly away: worth waiting for
            return (
                isinstance(exc, psycopg.Error)
                and self._retryable(exc)
                and any(words in str(exc).lower() for words in _UNREACHABLE)
            )

        def attempt() -> None:
            with psycopg.connect(
                self.location.url, autocommit=True, connect_timeout=int(CONNECT_SECONDS)
            ) as conn:
                self._transaction(conn, "BEGIN", lambda c: migrate(c, self.dialect, str(self.location)))

        try:
            retried(attempt, down, CONNECT_SECONDS, first_wait=0.1, longest_wait=1.0)
        except psycopg.Error as exc:
            raise SessionRefused(
                f"cannot open the PostgreSQL store {self.location}: {self._message(exc)}"
            ) from None

    @contextmanager
    def atomic(self) -> Iterator[None]:
        """Every write and read of this thread inside the block in ONE transaction on one connection (all of
        it or none is kept: a process killed inside it leaves nothing); not retried: a failure fails the block
        with a ``SessionError``."""
        if getattr(self._local, "conn", None) is not None:
            yield
            return
        try:
            with self.pool.connection() as conn:
                conn.execute("BEGIN")
                self._local.conn = PgConnection(conn)
                try:
                    yield
                except BaseException:
                    if not conn.closed:
                        conn.execute("ROLLBACK")
                    raise
                finally:
                    self._local.conn = None
                conn.execute("COMMIT")
        except psycopg.Error as exc:
            raise SessionError(f"store {self.location}: {self._message(exc)}") from None

    def write(self, work: Callable[[Connection], T]) -> T:
        """Run ``work(conn)`` in one write transaction, retried while the database is busy or unreachable."""
        return (
            self._inside(work)
            if getattr(self._local, "conn", None) is not None
            else self._retry("BEGIN", work)
        )

    def read(self, work: Callable[[Connection], T], *, statement: bool = False) -> T:
        """Run ``work(conn)`` in one read-only transaction (a consistent view), retried the same way;
        ``statement``: one statement, run on its own (autocommit: no BEGIN and COMMIT round trips)."""
        if getattr(self._local, "conn", None) is not None:
            return self._inside(work)
        return self._retry("" if statement else "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", work)

    def _inside(self, work: Callable[[Connection], T]) -> T:
        """``work`` in this thread's ``atomic`` transaction."""
        conn: PgConnection = self._local.conn
        try:
            return work(conn)
        except psycopg.Error as exc:
            raise SessionError(f"store {self.location}: {self._message(exc)}") from None

    def close(self) -> None:
        """Close the pool and its connections."""
        self.pool.close()

    # ---- transactions --------------------------------------------------------------------------------
    def _transaction(self, conn: psycopg.Connection[Any], begin: str, work: Callable[[Connection], T]) -> T:
        """``work`` between ``begin`` and COMMIT, in pipeline mode: BEGIN travels with the first statement
        whose rows ``work`` reads, and the statements after the last such read travel with the COMMIT (a
        step's write is two round trips, not one per statement). An error before the COMMIT was queued rolls
        back; one after it, on a connection that broke, is ``_CommitLost`` for a write (the server may have
        committed); a statement the server refused (the connection still sound) aborted the pipeline before
        the COMMIT, so nothing was kept: it rolls back. (Without pipeline mode in libpq: one by one.)"""
        if not begin:  # one statement of a read, on its own
            return work(PgConnection(conn))
        committing = False
        try:
            with conn.pipeline() if _PIPELINE else nullcontext():
                conn.execute(begin)
                result = work(PgConnection(conn))
                committing = True
                conn.execute("COMMIT")
        except BaseException as exc:
            if committing and begin == "BEGIN" and isinstance(exc, psycopg.Error) and not _sound(conn):
                raise _CommitLost(exc) from None  # the server may have committed before the connection broke
            if not conn.closed:
                try:
                    conn.execute("ROLLBACK")
                except psycopg.Error:
                    pass  # the connection broke: the server rolled the transaction back
            raise
        return result

    def _retry(self, begin: str, work: Callable[[Connection], T]) -> T:
        """``work`` in a transaction of its own, retried (``igg.store.sql.retried``) while the database is
        busy or unreachable, for at most ``RETRY_SECONDS``, and up to ``_UNIQUE_RETRIES`` times on a
        uniqueness race; never after a commit whose connection broke (it may have been kept)."""
        unique = 0

        def again(exc: BaseException) -> bool:
            nonlocal unique
            if isinstance(exc, pg_errors.UniqueViolation):
                unique += 1
                return unique <= _UNIQUE_RETRIES
            return isinstance(exc, psycopg.Error) and self._retryable(exc)

        def attempt() -> T:
            with self.pool.connection() as conn:
                return self._transaction(conn, begin, work)

        try:
            return retried(attempt, again, RETRY_SECONDS)
        except _CommitLost as lost:  # never run twice: a step might be stored twice
            raise SessionError(
                f"store {self.location}: the connection broke while a write was committing "
                f"({self._message(lost.cause)}); it may or may not have been kept: read the "
                "session again before repeating it"
            ) from None
        except psycopg.Error as exc:
            if isinstance(exc, pg_errors.UniqueViolation) or not self._retryable(exc):
                raise SessionError(f"store {self.location}: {self._message(exc)}") from None
            raise SessionError(
                f"store {self.location} stayed busy or unreachable for {RETRY_SECONDS:.0f} s:"
                f" {self._message(exc)}"
            ) from None

    def _retryable(self, exc: psycopg.Error) -> bool:
        state = exc.sqlstate or ""
        return isinstance(exc, _RETRY_CLASSES) and not state.startswith(_NO_RETRY_STATES)

    def _message(self, exc: BaseException) -> str:
        """The driver's message, first line, without the URL's secrets should it quote them."""
        text = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return scrub(text, self.location.secrets)
