"""The PostgreSQL store: its URL's password never shows, two writers of one session never number two steps
alike, a restarted database is reconnected to, an unreachable one is reported clearly, and the URL picks the
backend."""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from igg.errors import SessionError, SessionRefused
from igg.graph.state import GraphState
from igg.store import SessionStore, resolve_store_path
from igg.store.location import PostgresURL, mask_url, sidecar_path, store_text
from igg.store.postgres import PostgresDatabase, pg_sql
from tests.conftest import ROOT, make_request
from tests.support.postgres import PostgresServer


def test_a_postgresql_url_is_a_location_whose_text_hides_the_password(monkeypatch: pytest.MonkeyPatch):
    url = "postgresql://igg:s3cret@db.example:5433/igg?sslmode=require"
    location = resolve_store_path(url)
    assert isinstance(location, PostgresURL) and location.url == url
    assert str(location) == "postgresql://igg:***@db.example:5433/igg?sslmode=require" == mask_url(url)
    assert "s3cret" not in repr(location) and "s3cret" not in f"{location}"
    assert store_text(location) == url  # handed on to another process, the password goes with it
    assert resolve_store_path("postgres://h/db") == PostgresURL("postgres://h/db")
    monkeypatch.setenv("IGG_STORE", url)
    assert resolve_store_path(None) == location
    assert mask_url("postgresql://igg@h/db") == "postgresql://igg@h/db"
    assert sidecar_path(location, ".codefacts").name == "postgresql-db.example-5433-igg.codefacts"
    for other in ("sqlite:///x.db", "mysql://h/db"):
        with pytest.raises(SessionRefused, match="is a URL IGG cannot keep sessions in"):
            resolve_store_path(other)


def test_placeholders_become_psycopgs():
    assert (
        pg_sql("SELECT 1 FROM t WHERE a = ? AND b LIKE 'x%'")
        == "SELECT 1 FROM t WHERE a = %s AND b LIKE 'x%%'"
    )


def test_no_message_names_the_password(postgres_server: PostgresServer, tmp_path: Path):
    """A database that does not exist, reached with a password in the URL: refused, naming the store with the
    password masked, in Python and on the command line."""
    url = f"postgresql://postgres:hunter2hunter2@127.0.0.1:{postgres_server.port}/no_such_db"
    with pytest.raises(SessionRefused) as refused:
        SessionStore(url)
    assert "hunter2" not in str(refused.value) and "postgres:***@127.0.0.1" in str(refused.value)
    assert 'database "no_such_db" does not exist' in str(refused.value)
    shown = subprocess.run(
        [sys.executable, "-m", "igg", "sessions", "--store", url],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shown.returncode == 2 and "hunter2" not in shown.stderr + shown.stdout, shown.stderr
    assert "Traceback" not in shown.stderr and "cannot open the PostgreSQL store" in shown.stderr


def test_an_unreachable_server_is_refused_within_seconds(monkeypatch: pytest.MonkeyPatch):
    from tests.support.bolt import free_port

    monkeypatch.setattr("igg.store.postgres.CONNECT_SECONDS", 1.0)
    with (
        capture_logs() as logs,
        pytest.raises(
            SessionRefused, match=r"cannot open the PostgreSQL store postgresql://x:\*\*\*@127\.0\.0\.1"
        ),
    ):
        SessionStore(f"postgresql://x:pw@127.0.0.1:{free_port(set())}/igg")
    # retried while the server may be starting, and given up once CONNECT_SECONDS are over (tenacity's clock)
    retries = [e for e in logs if e["event"] == "store_retry"]
    assert retries and all(e["within"] == 1.0 for e in retries)
    assert retries[-1]["since_first"] < 1.0


def _commit(store: SessionStore, sid: str, state: GraphState) -> int:
    return store.commit_step(sid, kind="undo", record={"kind": "undo"}, mutations=[], state=state)


def test_writers_in_many_connections_never_number_two_steps_alike(postgres_url: str):
    """Six store objects (six pools, as six replicas would have) commit 20 steps each into ONE session at
    once: the session's row lock numbers them 1..120, each once."""
    from igg.request.load import build_state

    request = make_request(session_id="shared")
    stores = [SessionStore(postgres_url) for _ in range(6)]
    stores[0].create_session(request, agent="tool")
    state, _ = build_state(request)
    numbers: list[int] = []
    errors: list[BaseException] = []

    def writer(store: SessionStore) -> None:
        try:
            for _ in range(20):
                numbers.append(_commit(store, "shared", state))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert sorted(numbers) == list(range(1, 121))
    assert [s.step for s in stores[0].steps("shared", with_records=False)] == list(range(1, 121))
    assert stores[0].session("shared").last_step == 120
    for s in stores:
        s.close()


def test_a_restarted_database_is_reconnected_to(postgres_server: PostgresServer, postgres_url: str):
    """The server restarts between two writes: the pool drops its dead connections and the next write
    succeeds; one whose database is down past the retry time fails with a SessionError naming the store."""
    from igg.request.load import build_state

    request = make_request(session_id="r")
    store = SessionStore(postgres_url)
    store.create_session(request, agent="tool")
    state, _ = build_state(request)
    assert _commit(store, "r", state) == 1
    postgres_server.restart()
    assert _commit(store, "r", state) == 2
    assert store.session("r").last_step == 2
    store.close()


def test_a_database_down_past_the_retry_time_is_a_session_error(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr("igg.store.postgres.RETRY_SECONDS", 0.5)
    db = PostgresDatabase(resolve_store_path(postgres_url))
    db.pool.close()  # every connection gone: as if the server were down
    db.pool = type(db.pool)(
        db.location.url.replace(str(_port(postgres_url)), "1"), min_size=1, open=True, timeout=0.2
    )
    with pytest.raises(SessionError, match=r"stayed busy or unreachable for 0 s"):
        db.read(lambda c: c.execute("SELECT 1").fetchone())
    db.close()


def _port(url: str) -> int:
    from urllib.parse import urlsplit

    port = urlsplit(url).port
    assert port is not None
    return port


def test_a_run_refused_for_an_existing_session_names_the_store_masked(postgres_url: str, tmp_path: Path):
    """The refusal quotes the commands that go on (show, --force): their URL is masked too."""
    import json

    from tests.integration.test_store import request_for
    from tests.support.cli import igg

    request = tmp_path / "r.json"
    request.write_text(json.dumps(request_for().model_dump(mode="json", by_alias=True, exclude_none=True)))
    turns = tmp_path / "t.jsonl"
    turns.write_text('{"reasoning": "", "actions": [], "finished": true}\n')
    url = postgres_url.replace("postgres@", "postgres:hunter2@")
    first = igg("run", str(request), "--agent", f"script:{turns}", "--store", url, "--quiet")
    assert first.returncode == 0, first.stderr
    again = igg("run", str(request), "--agent", f"script:{turns}", "--store", url)
    assert (
        again.returncode == 2 and "session 's1' already exists in postgresql://postgres:***@" in again.stderr
    )
    assert "hunter2" not in again.stderr + again.stdout, again.stderr


def test_a_write_whose_commit_loses_its_connection_is_not_run_again(postgres_url: str):
    """The connection dies between a write's last statement and its COMMIT: the write may have been kept, so
    it is not retried (a step stored twice); a SessionError says so, and the next write works."""
    import psycopg

    db = PostgresDatabase(resolve_store_path(postgres_url))
    runs: list[int] = []

    def work(conn: Any) -> None:
        runs.append(1)
        pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
        with psycopg.connect(postgres_url, autocommit=True) as other:
            other.execute("SELECT pg_terminate_backend(%s)", (pid,))
        time.sleep(0.2)

    with pytest.raises(
        SessionError,
        match="the connection broke while a write was committing .* may or may not have been kept",
    ):
        db.write(work)
    assert runs == [1]
    assert db.write(lambda c: c.execute("SELECT 1").fetchone()[0]) == 1
    db.close()


def test_a_statement_refused_with_the_commit_in_its_pipeline_rolls_back_and_is_retried(postgres_url: str):
    """The step's last statements travel with its COMMIT: one the server refuses (a duplicate key) aborts them
    before the COMMIT, so nothing is kept; the connection is sound, so it is not taken for a lost commit, and
    a uniqueness race is retried as before."""
    import psycopg

    with psycopg.connect(postgres_url, autocommit=True) as setup:
        setup.execute("CREATE TABLE pipelined (a int PRIMARY KEY)")
    db = PostgresDatabase(resolve_store_path(postgres_url))
    runs: list[int] = []

    def work(conn: Any) -> None:
        runs.append(1)
        conn.execute("INSERT INTO pipelined VALUES (2)")
        conn.execute("INSERT INTO pipelined VALUES (1)")
        conn.execute("INSERT INTO pipelined VALUES (1)")  # its error arrives with the COMMIT's round trip

    with pytest.raises(SessionError, match="duplicate key") as refused:
        db.write(work)
    assert "may or may not have been kept" not in str(refused.value)
    assert len(runs) == 4  # the first attempt and three retries of a uniqueness race
    assert db.read(lambda c: c.execute("SELECT count(*) FROM pipelined").fetchone()[0]) == 0
    assert db.write(lambda c: c.execute("INSERT INTO pipelined VALUES (3) RETURNING a").fetchone()[0]) == 3
    db.close()


def test_the_pool_hands_out_no_connection_whose_server_end_is_gone(postgres_url: str):
    """The pool's check costs no round trip, yet a connection whose backend was terminated is refused (and a
    sound one passes), so the next transaction runs on a fresh connection."""
    import psycopg

    from igg.store.postgres import _check_alive

    with psycopg.connect(postgres_url, autocommit=True) as conn:
        _check_alive(conn)
        pid = conn.info.backend_pid
        with psycopg.connect(postgres_url, autocommit=True) as other:
            other.execute("SELECT pg_terminate_backend(%s)", (pid,))
        time.sleep(0.2)
        with pytest.raises(psycopg.OperationalError):
            _check_alive(conn)


def test_a_plain_insert_of_many_rows_stores_what_one_insert_per_row_stores(postgres_url: str):
    """``executemany`` of a plain INSERT writes its rows as multi-row statements (``MULTI_ROW_MAX`` a
    statement): the same rows, values and types as one INSERT per row; an INSERT with ``ON CONFLICT`` still
    runs once per row."""
    import psycopg

    from igg.store import postgres

    with psycopg.connect(postgres_url, autocommit=True) as setup:
        for name in ("many_rows", "one_row"):
            setup.execute(
                f"CREATE TABLE {name} (k integer PRIMARY KEY, big bigint, text_ text, flag boolean,"
                " x double precision)"
            )
    rows = [
        (
            i,
            None if i % 7 == 0 else i * 3_000_000_000 * (-1) ** i,
            None if i % 5 == 0 else f"v{i}é",
            i % 2 == 0,
            i / 3,
        )
        for i in range(postgres.MULTI_ROW_MAX * 2 + 3)
    ]
    db = PostgresDatabase(resolve_store_path(postgres_url))
    db.write(
        lambda c: c.executemany("INSERT INTO many_rows (k, big, text_, flag, x) VALUES (?, ?, ?, ?, ?)", rows)
    )

    def one_by_one(c: Any) -> None:
        for row in rows:
            c.execute("INSERT INTO one_row (k, big, text_, flag, x) VALUES (?, ?, ?, ?, ?)", row)

    db.write(one_by_one)
    many = db.read(lambda c: c.execute("SELECT * FROM many_rows ORDER BY k").fetchall())
    one = db.read(lambda c: c.execute("SELECT * FROM one_row ORDER BY k").fetchall())
    assert many == one and len(many) == len(rows) and many[3] == rows[3]
    upsert = (
        "INSERT INTO many_rows (k, big, text_, flag, x) VALUES (?, ?, ?, ?, ?)"
        " ON CONFLICT (k) DO UPDATE SET x = 0"
    )
    twice = [(1, 1, "a", True, 1.0), (1, 1, "a", True, 1.0)]  # one statement could not update a row twice
    db.write(lambda c: c.executemany(upsert, twice))
    assert db.read(lambda c: c.execute("SELECT x FROM many_rows WHERE k = 1").fetchone()[0]) == 0
    db.close()


def test_an_update_of_a_file_that_kept_its_facts_reads_its_module_node_alone(
    postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """``igg.mapping.samefacts`` on a PostgreSQL store: the Module node (and then the elements that hold the
    file's moved lines) read from their own rows, the step written as the general path writes it, the graph
    that of a fresh map; and ``igg.mapping.bodies`` for a call added, from its elements' rows too."""
    from igg.codemap.cache import FactsCache
    from igg.mapping.update import update_map
    from igg.service import map_code
    from tests.unit.test_code_update import graph_of

    tree = tmp_path / "tree"
    shutil.copytree(ROOT / "fixtures" / "code" / "python", tree)
    shutil.copytree(ROOT / "fixtures" / "code" / "java", tree / "java")  # a graph no such step snapshots
    cache = FactsCache(sidecar_path(resolve_store_path(postgres_url), ".codefacts"))
    try:
        map_code([tree], agent="code", jobs=1, store=postgres_url, session_id="m", cache=cache)
    finally:
        cache.close()
    service = tree / "shop" / "service.py"
    service.write_text(service.read_text().replace("format_amount(10)", "format_amount(25)"))
    result = update_map([tree], postgres_url, session_id="m", jobs=1)
    assert result.files["changed"] == ["shop/service.py"] and result.files["relinked"] == 0
    assert result.graph["nodes_changed"] == 1 and result.graph["nodes"] == _session(postgres_url, "m").nodes
    map_code([tree], agent="code", jobs=1, store=tmp_path / "fresh.db", session_id="f")
    assert graph_of(postgres_url, "m") == graph_of(tmp_path / "fresh.db", "f")
    # a blank line above a function: the lines below it move, read and changed from their elements' own rows
    service.write_text(service.read_text().replace("def helper", "\ndef helper", 1))
    result = update_map([tree], postgres_url, session_id="m", jobs=1)
    assert result.files["changed"] == ["shop/service.py"] and result.files["relinked"] == 0
    assert result.graph["nodes_changed"] >= 2 and result.graph["edges_changed"] >= 1
    map_code([tree], agent="code", jobs=1, store=tmp_path / "fresh2.db", session_id="f")
    assert graph_of(postgres_url, "m") == graph_of(tmp_path / "fresh2.db", "f")
    # a call added on the line of another in a Java method: the bodies path, its elements' own rows again
    auth = tree / "java/src/main/java/com/acme/service/AuthService.java"
    auth.write_text(auth.read_text().replace("audit(user);", "audit(user); users.save(user);"))

    def whole(*_: object, **__: object) -> None:
        raise AssertionError("the whole graph was loaded")

    with monkeypatch.context() as m:
        m.setattr(SessionStore, "load_state", whole)
        result = update_map([tree], postgres_url, session_id="m", jobs=1)
    assert result.files["relinked"] == 1 and result.graph["edges_added"] == 1
    map_code([tree], agent="code", jobs=1, store=tmp_path / "fresh3.db", session_id="f")
    assert graph_of(postgres_url, "m") == graph_of(tmp_path / "fresh3.db", "f")


def _session(url: str, session_id: str) -> Any:
    """The stored row of a session (its store closed again)."""
    store = SessionStore(url)
    try:
        return store.session(session_id)
    finally:
        store.close()
