"""``igg sessions --copy-to``: sessions copied whole between stores, SQLite -> PostgreSQL -> SQLite, arrive
equal (every row, the same graphs, replay clean); an id the target holds already is refused on its own
line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from igg.store import SessionStore, replay
from igg.store.codec import canonical
from igg.store.schema import TABLE_COLUMNS
from tests.support.cli import igg

FIXTURE = Path(__file__).parents[1] / "support" / "store-v2.sqlite"
"""IGG 0.2's sessions: review plans pending and rejected, an undo, a fork, a map-code session with an
update."""


def every_row(location: str) -> dict[str, list[tuple[Any, ...]]]:
    store = SessionStore(location)
    try:
        return {
            table: sorted(
                tuple(r)
                for r in store.db.read(
                    lambda c, t=table, cols=cols: c.execute(f"SELECT {', '.join(cols)} FROM {t}").fetchall()
                )
            )
            for table, cols in TABLE_COLUMNS.items()
        }
    finally:
        store.close()


def test_sessions_go_to_postgresql_and_back_unchanged(tmp_path: Path, postgres_url: str):
    source = tmp_path / "source.sqlite"
    shutil.copyfile(FIXTURE, source)
    with_password = postgres_url.replace("postgres@", "postgres:hunter2@")  # (the test server trusts any)
    there = igg("sessions", "--store", str(source), "--copy-to", with_password)
    assert there.returncode == 0, there.stderr
    assert "copied review-pending: 3 steps, 1 mutations," in there.stdout and "hunter2" not in there.stdout
    masked = postgres_url.replace("postgres@", "postgres:***@")
    assert there.stdout.rstrip().endswith(f"copied 5 of 5 sessions from {source} to {masked}")
    back = tmp_path / "back.sqlite"
    assert igg("sessions", "--store", postgres_url, "--copy-to", str(back)).returncode == 0
    original = every_row(str(source))
    assert every_row(postgres_url) == original and every_row(str(back)) == original
    a, b = SessionStore(source), SessionStore(back)
    try:
        for info in a.sessions():
            sid = info.session_id
            assert canonical(a.load_state(sid)[1]) == canonical(b.load_state(sid)[1])
            assert not replay(b, sid).problems, sid
            assert b.session(sid).status == info.status
    finally:
        a.close()
        b.close()


def test_ids_the_target_holds_are_refused_one_by_one_and_the_rest_copied(tmp_path: Path, postgres_url: str):
    source = tmp_path / "source.sqlite"
    shutil.copyfile(FIXTURE, source)
    assert (
        igg("sessions", "undone", "codemap", "--store", str(source), "--copy-to", postgres_url).returncode
        == 0
    )
    again = igg("sessions", "--store", str(source), "--copy-to", postgres_url, "--json")
    assert again.returncode == 1
    outcomes = {r["session_id"]: r["outcome"] for r in json.loads(again.stdout)}
    assert outcomes == {
        "undone": "exists",
        "codemap": "exists",
        "undone-fork-2": "copied",
        "review-pending": "copied",
        "review-rejected": "copied",
    }
    assert again.stderr.count("already in") == 2 and "session 'undone' is already in" in again.stderr
    unknown = igg("sessions", "nope", "--store", str(source), "--copy-to", postgres_url)
    assert unknown.returncode == 2 and "no session 'nope'" in unknown.stderr


def test_a_snapshot_an_sqlite_file_keeps_compressed_reaches_postgresql_as_text(
    tmp_path: Path, postgres_url: str
):
    """A map kept today: SQLite holds its snapshots compressed (``codec.snapshot_blob``); the copy gives
    PostgreSQL their JSON text, and both stores load the same graph, and so does the copy back."""
    source = tmp_path / "source.sqlite"
    tree = Path(__file__).parents[2] / "fixtures" / "code" / "python"
    mapped = igg("map-code", str(tree), "--store", str(source), "--session", "shop-map", "--quiet")
    assert mapped.returncode == 0, mapped.stderr
    assert igg("sessions", "--store", str(source), "--copy-to", postgres_url).returncode == 0
    back = tmp_path / "back.sqlite"
    assert igg("sessions", "--store", postgres_url, "--copy-to", str(back)).returncode == 0
    stores = [SessionStore(source), SessionStore(postgres_url), SessionStore(back)]
    try:
        kept = [
            s.db.read(
                lambda c: c.execute("SELECT document FROM snapshots WHERE session_id = 'shop-map'").fetchall()
            )
            for s in stores
        ]
        assert [type(rows[0][0]) for rows in kept] == [bytes, str, str]
        graphs = [canonical(s.load_state("shop-map")[1]) for s in stores]
        assert graphs[0]["nodes"] and graphs[0] == graphs[1] == graphs[2]
        assert not replay(stores[0], "shop-map").problems
    finally:
        for s in stores:
            s.close()
