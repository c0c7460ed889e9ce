"""The database seam under the session store: what its SQL runs on, whichever database holds the store.

The store's statements are written once, with ``?`` placeholders and SQL both SQLite and PostgreSQL read (no
``INSERT OR REPLACE``, no JSON functions). A ``Database`` runs ``work(conn)`` in one write or read
transaction; ``conn`` is a ``Connection``: an ``sqlite3.Connection`` for an SQLite file (``igg.store.db``), an
adapter over psycopg that turns ``?`` into ``%s`` for PostgreSQL (``igg.store.postgres``). ``open_database``
in ``igg.store.backends`` picks one from the store's location.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, Literal, Protocol, TypeVar

from igg.record.logs import get_logger
from igg.store.location import StoreLocation

T = TypeVar("T")
log = get_logger("igg.store.sql")

Dialect = Literal["sqlite", "postgresql"]
"""Which database runs the SQL: ``sqlite`` (a file, ``igg.store.db``) or ``postgresql``
(``igg.store.postgres``)."""


def retried(
    attempt: Callable[[], T],
    again: Callable[[BaseException], bool],
    seconds: float,
    *,
    first_wait: float = 0.005,
    longest_wait: float = 0.5,
) -> T:
    """``attempt()``, tried again while it fails with an error ``again`` accepts (the database busy or briefly
    unreachable), with jittered exponential waits (``first_wait`` doubling up to ``longest_wait``), for at
    most ``seconds`` (by tenacity's clock; each retry is logged, ``store_retry``, with the seconds since the
    first attempt); then its last error is raised. The retry loop is tenacity's; it is imported only when a
    first attempt fails (it costs a command's start-up 60 ms, and nearly every attempt succeeds)."""
    try:
        return attempt()
    except Exception as exc:
        if not again(exc):
            raise
    import random
    import time

    import tenacity

    def wait(state: tenacity.RetryCallState) -> float:  # the delay doubles, capped, times a jitter of 0.5-1.5
        return float(min(first_wait * 2**state.attempt_number, longest_wait) * (0.5 + random.random()))

    def note(state: tenacity.RetryCallState) -> None:
        log.debug(
            "store_retry",
            attempt=state.attempt_number,
            since_first=round(state.seconds_since_start or 0.0, 3),
            within=seconds,
        )

    time.sleep(first_wait * (0.5 + random.random()))
    retrying = tenacity.Retrying(
        retry=tenacity.retry_if_exception(again),
        stop=tenacity.stop_after_delay(seconds),
        wait=wait,
        before_sleep=note,
        reraise=True,
    )
    return retrying(attempt)


class Cursor(Protocol):
    """The rows of one statement."""

    def fetchone(self) -> Any:
        """The next row (a tuple), or None."""

    def fetchall(self) -> list[Any]:
        """The remaining rows."""

    def __iter__(self) -> Iterator[Any]:
        """The remaining rows, one by one."""


class Connection(Protocol):
    """A connection inside one transaction: statements with ``?`` placeholders."""

    def execute(self, sql: str, parameters: Sequence[Any] = ..., /) -> Cursor:
        """Run one statement."""

    def executemany(self, sql: str, parameters: Iterable[Sequence[Any]], /) -> Any:
        """Run one statement once per row of parameters."""


class Database(Protocol):
    """The store's database: short transactions, retried while the database is busy or briefly unreachable."""

    @property
    def dialect(self) -> Dialect:
        """Which database this is."""

    @property
    def location(self) -> StoreLocation:
        """Where the store is (a file, or a URL whose text hides its password)."""

    def atomic(self) -> AbstractContextManager[None]:
        """This thread's writes and reads inside the block in ONE transaction (a whole session copied in)."""

    def write(self, work: Callable[[Connection], T]) -> T:
        """Run ``work(conn)`` in one write transaction."""

    def read(self, work: Callable[[Connection], T], *, statement: bool = False) -> T:
        """Run ``work(conn)`` in one read transaction (a consistent view); ``statement``: ``work`` runs ONE
        statement, consistent by itself, so no transaction is opened around it (a round trip less each
        way)."""

    def close(self) -> None:
        """Close the database's connections."""
