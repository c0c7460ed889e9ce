"""A session store written by IGG 0.2 (tests/support/store-v2.sqlite, made by tests/support/make_store_v2.py
at commit 8ad95e9, before one ``Session`` owned every change) loads, continues and exports with today's code:
its pending and rejected review plans, its undo step, its fork and its map-code update step."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from igg.errors import WorkspaceError
from igg.export import ExportSpec
from igg.service import export_session, update_code_map
from igg.store import SessionStore, StoreSessions, replay
from igg.workspace import Workspace
from igg.workspace.ops import ApplyInput, FinishInput, ObserveInput, ReviewInput

FIXTURE = Path(__file__).parents[1] / "support" / "store-v2.sqlite"


@pytest.fixture
def store(tmp_path: Path) -> Any:
    path = tmp_path / "sessions.sqlite"
    shutil.copyfile(FIXTURE, path)
    with sqlite3.connect(
        path
    ) as conn:  # the writers' pids were real once: point them above any pid_max (2**22)
        conn.execute(
            "UPDATE sessions SET owner = substr(owner, 1, instr(owner, ':')) || '4194305' || "
            "substr(owner, instr(substr(owner, instr(owner, ':') + 1), ':') + instr(owner, ':'))"
        )
    s = SessionStore(path)
    yield s
    s.close()


def names(ws: Workspace, sid: str) -> list[str]:
    out = json.loads(
        ws.export(
            __import__("igg.workspace.ops", fromlist=["ExportInput"]).ExportInput(
                session_id=sid, format="json"
            )
        )["content"]
    )
    return sorted(n["properties"]["name"] for n in out["nodes"])


def test_a_stored_pending_plan_is_shown_refuses_finish_and_is_approved(store: SessionStore):
    ws = Workspace(StoreSessions(store))
    shown = ws.review(ReviewInput(session_id="review-pending"))
    assert shown["status"] == "awaiting_review" and shown["review"]["reasoning"] == "second"
    with pytest.raises(WorkspaceError) as refused:
        ws.finish(FinishInput(session_id="review-pending"))
    assert refused.value.code == "REVIEW_PENDING"
    done = ws.review(
        ReviewInput(session_id="review-pending", decision="approve", plan_id=shown["review"]["plan_id"])
    )
    assert (done["accepted"], done["iteration"], done["status"]) == (2, 2, "open")
    assert names(ws, "review-pending") == ["A", "B"]
    ws.finish(FinishInput(session_id="review-pending"))
    assert not replay(store, "review-pending").problems


def test_a_stored_rejection_is_shown_and_the_next_plan_counts_on(store: SessionStore):
    ws = Workspace(StoreSessions(store))
    seen = ws.observe(ObserveInput(session_id="review-rejected"))["markdown"]
    assert "name it after the file" in seen
    plan = ws.apply(
        ApplyInput(
            session_id="review-rejected",
            reasoning="again",
            actions=[{"type": "ADD_NODE", "label": "Class", "properties": {"name": "A", "package": "p"}}],
        )
    )["review"]
    assert plan["plan_id"] == 2  # plans count 1, 2, 3 (0.2 numbered them by step: this would have been 3)


def test_an_undone_session_and_its_fork_continue(store: SessionStore):
    ws = Workspace(StoreSessions(store))
    assert names(ws, "undone") == ["A"]
    assert names(ws, "undone-fork-2") == ["A", "B"]
    out = ws.apply(
        ApplyInput(
            session_id="undone",
            reasoning="after the undo",
            actions=[{"type": "ADD_NODE", "label": "Class", "properties": {"name": "D", "package": "p"}}],
        )
    )
    assert (out["iteration"], out["nodes"]) == (4, 2)  # iterations count on past an undo
    ws.finish(FinishInput(session_id="undone"))
    for sid in ("undone", "undone-fork-2"):
        assert not replay(store, sid).problems, sid


def test_a_stored_map_code_session_updates_again_and_exports(store: SessionStore, tmp_path: Path):
    tree = tmp_path / "tree"
    (tree / "pkg").mkdir(parents=True)
    (tree / "pkg" / "__init__.py").write_text("")
    (tree / "pkg" / "a.py").write_text(
        "from pkg import b\n\n\nclass A:\n    def run(self):\n        return b.helper()\n"
    )
    (tree / "pkg" / "b.py").write_text("def helper():\n    return 1\n")
    (tree / "pkg" / "c.py").write_text("from pkg.a import A\n\n\nclass C(A):\n    pass\n")
    (tree / "pkg" / "d.py").write_text("from pkg.c import C\n")
    result = update_code_map([tree], store.path, session_id="codemap")
    assert result.files["added"] == ["pkg/d.py"] and result.iteration == 5
    out = tmp_path / "g.json"
    assert export_session(store, "codemap", [ExportSpec("json", str(out))])[0]["ok"] is True
    modules = {n["properties"]["name"] for n in json.loads(out.read_text())["nodes"] if n["type"] == "Module"}
    assert {"pkg.a", "pkg.b", "pkg.c", "pkg.d"} <= modules
    assert not replay(store, "codemap").problems
