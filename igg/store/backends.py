"""The one place a store's location picks its database: an SQLite file, or a PostgreSQL server."""

from __future__ import annotations

from igg.record.logs import get_logger
from igg.store.db import Database as SqliteDatabase
from igg.store.location import PostgresURL, StoreArg, resolve_store_path
from igg.store.sql import Database

log = get_logger("igg.store.backends")


def open_database(location: StoreArg | None = None, *, synchronous: str = "FULL") -> Database:
    """The database of the store at ``location`` (resolved by ``resolve_store_path``), schema migrated:
    ``igg.store.postgres`` for a ``postgresql://`` URL, else the SQLite file (``synchronous``: its PRAGMA).
    Logged (``store_opened``, debug): a command opens its store once."""
    resolved = resolve_store_path(location)
    database: Database
    if isinstance(resolved, PostgresURL):
        # psycopg loads only for a PostgreSQL store: commands on an SQLite file start without it
        from igg.store.postgres import PostgresDatabase

        database = PostgresDatabase(resolved)
    else:
        database = SqliteDatabase(resolved, synchronous=synchronous)
    log.debug("store_opened", store=str(database.location))
    return database
