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
