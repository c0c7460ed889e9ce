"""Versioned migrations: a store of the previous schema (2) opens at the latest schema (5: the answers tables,
then each request in a table of its own) with what it held unchanged, its requests read back, in SQLite and in
PostgreSQL; a store of a newer schema than this IGG's is
refused, with no traceback."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from igg.errors import SessionRefused
from igg.store import SessionStore, StoreSessions
from igg.store.schema import BASE_DDL, EXPORT_TARGETS_DDL, SCHEMA_VERSION, postgres_ddl
from igg.workspace import Workspace
from igg.workspace.ops import ReviewInput
from tests.conftest import ROOT
from tests.support.postgres import PostgresServer

FIXTURE = Path(__file__).parents[1] / "support" / "store-v2.sqlite"
TABLES = ("sessions", "steps", "mutations", "snapshots", "export_targets")


def schema_of(store: SessionStore) -> str:
    return str(
        store.db.read(lambda c: c.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()[0])
    )


def review_states(store: SessionStore) -> dict[tuple[str, int], Any]:
    rows = store.db.read(
        lambda c: c.execute(
            "SELECT session_id, step, review_state FROM steps WHERE kind = 'review' ORDER BY session_id, step"
        ).fetchall()
    )
    return {(r[0], r[1]): r[2] for r in rows}


def assert_pending_plan_survives(store: SessionStore) -> None:
    assert SCHEMA_VERSION == "6" and schema_of(store) == "6"
    assert store.request("review-pending").goal_prompt  # moved to the requests table, read back whole
    assert (
        store.db.read(lambda c: c.execute("SELECT count(*) FROM sessions WHERE request <> ''").fetchone()[0])
        == 0
    )
    states = review_states(store)
    assert states[("review-pending", 3)] == "pending" and "rejected" in states.values()
    assert store.session("review-pending").status == "awaiting_review"
    shown = Workspace(StoreSessions(store)).review(ReviewInput(session_id="review-pending"))
    assert shown["status"] == "awaiting_review" and shown["review"]["reasoning"] == "second"


def test_an_sqlite_store_of_schema_2_migrates_to_the_latest_and_its_pending_plan_still_waits(tmp_path: Path):
    path = tmp_path / "sessions.sqlite"
    shutil.copyfile(FIXTURE, path)
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()[0] == "2"
        before = {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}
    store = SessionStore(path)
    try:
        assert_pending_plan_survives(store)
        after = {
            t: store.db.read(lambda c, t=t: c.execute(f"SELECT count(*) FROM {t}").fetchone()[0])
            for t in TABLES
        }
        assert after == before
    finally:
        store.close()
    again = SessionStore(path)  # opened again: nothing left to migrate
    assert schema_of(again) == "6"
    again.close()


def test_a_postgresql_store_of_schema_2_migrates_to_the_latest_and_its_pending_plan_still_waits(
    postgres_server: PostgresServer, postgres_url: str
):
    """The schema-2 tables made with schema 2's DDL, filled with the rows of the SQLite fixture (IGG 0.2's
    sessions), then opened by this IGG."""
    import psycopg

    with sqlite3.connect(FIXTURE) as source, psycopg.connect(postgres_url, autocommit=True) as pg:
        pg.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        for statement in (BASE_DDL + EXPORT_TARGETS_DDL).split(";"):
            if statement.strip():
                pg.execute(postgres_ddl(statement))  # type: ignore[arg-type]
        pg.execute("INSERT INTO meta VALUES ('format', '1'), ('schema', '2')")
        for table in TABLES:
            cursor = source.execute(f"SELECT * FROM {table}")
            columns = [d[0] for d in cursor.description]
            rows = cursor.fetchall()
            if rows:
                with pg.cursor() as c:
                    c.executemany(
                        f"INSERT INTO {table} ({', '.join(columns)}) VALUES "  # type: ignore[arg-type]
                        f"({', '.join(['%s'] * len(columns))})",
                        rows,
                    )
    store = SessionStore(postgres_url)
    try:
        assert_pending_plan_survives(store)
    finally:
        store.close()


def test_stores_opened_at_once_migrate_once(postgres_url: str):
    """Four processes open one fresh PostgreSQL schema together: each opens it, the tables are made once."""
    opener = "import sys; from igg.store import SessionStore; SessionStore(sys.argv[1]).close(); print('ok')"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", opener, postgres_url],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    for p in procs:
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0 and out.strip() == "ok", err
    store = SessionStore(postgres_url)
    assert schema_of(store) == SCHEMA_VERSION
    store.close()


def test_a_store_of_a_newer_schema_is_refused_clearly(store_location: str, tmp_path: Path):
    store = SessionStore(store_location)
    store.db.write(lambda c: c.execute("UPDATE meta SET value = '99' WHERE key = 'schema'"))
    store.close()
    with pytest.raises(
        SessionRefused,
        match=r"has schema 99, newer than this IGG's \(6\): a newer IGG wrote it; "
        r"upgrade IGG",
    ):
        SessionStore(store_location)
    shown = subprocess.run(
        [sys.executable, "-m", "igg", "sessions", "--store", store_location],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shown.returncode == 2 and "has schema 99" in shown.stderr and "Traceback" not in shown.stderr


def test_the_columns_a_copy_takes_are_every_column_of_the_migrated_tables(store_location: str):
    """``TABLE_COLUMNS`` (what ``igg sessions --copy-to`` copies) names every column a migrated store has."""
    from igg.store.schema import TABLE_COLUMNS

    store = SessionStore(store_location)
    if store.db.dialect == "sqlite":
        query = "SELECT name FROM pragma_table_info(?) ORDER BY cid"
    else:
        query = (
            "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND "
            "table_name = ? ORDER BY ordinal_position"
        )
    try:
        for table, columns in TABLE_COLUMNS.items():
            found = store.db.read(lambda c, t=table: [r[0] for r in c.execute(query, (t,)).fetchall()])
            assert tuple(found) == columns, table
    finally:
        store.close()


def test_counting_the_plans_a_session_has_waiting_reads_the_index_not_its_steps(tmp_path: Path):
    """Loading a session counts its review plans still waiting: through ``steps_pending`` (schema 6), not a
    read of every step row (each holds its record: 2.2 GB for a 50,000-file code map)."""
    from igg.store.store import PENDING_PLANS

    store = SessionStore(tmp_path / "s.sqlite")
    try:
        plan = store.db.read(lambda c: c.execute("EXPLAIN QUERY PLAN " + PENDING_PLANS, ("s",)).fetchall())
    finally:
        store.close()
    assert any("steps_pending" in str(row[-1]) for row in plan), plan
