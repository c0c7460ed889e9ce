"""Several processes on one store: a process notices that a session it holds was changed by another (the
session's last stored step, read on every request) and loads it again before it answers; a store argument that
looks like a URL is never taken as a file path."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx

from igg.store import SessionStore, StoreSessions
from igg.workspace import Workspace
from igg.workspace.ops import ApplyInput, ExportInput
from tests.conftest import ROOT, node
from tests.support.server import clean_env, igg_serve
from tests.test_workspace import request_dict


def names(ws: Workspace, sid: str) -> list[str]:
    document = json.loads(ws.export(ExportInput(session_id=sid, format="json"))["content"])
    return sorted(n["properties"]["name"] for n in document["nodes"])


def test_a_workspace_sees_what_another_process_committed(tmp_path: Path):
    """Two workspaces over one store file, as two servers: what one commits, the other shows next."""
    a = Workspace(StoreSessions(SessionStore(tmp_path / "s.sqlite")))
    b = Workspace(StoreSessions(SessionStore(tmp_path / "s.sqlite")))
    sid = a.start(request_dict(session_id="shared"))["session_id"]
    a.apply(ApplyInput(session_id=sid, reasoning="", actions=[node("Class", name="A", package="p")]))
    assert names(b, sid) == ["A"]  # b loads it
    for name in ("B", "C"):
        a.apply(ApplyInput(session_id=sid, reasoning="", actions=[node("Class", name=name, package="p")]))
    assert names(b, sid) == ["A", "B", "C"]  # b held it: it loads it again, as a's commits changed it
    assert b.get(sid).info.iteration == 3 and b.get(sid) is b.get(sid)  # unchanged since: kept, not reloaded
    assert names(a, sid) == ["A", "B", "C"]


def test_two_servers_on_one_store_answer_what_either_committed(tmp_path: Path):
    store = str(tmp_path / "s.sqlite")
    with igg_serve(["--store", store], env=clean_env(), log_path=tmp_path / "a.log") as (_, base_a), \
            igg_serve(["--store", store], env=clean_env(), log_path=tmp_path / "b.log") as (_, base_b), \
            httpx.Client(base_url=base_a, timeout=60) as a, httpx.Client(base_url=base_b, timeout=60) as b:
        assert a.post("/sessions", json=request_dict(session_id="r-1")).status_code == 201
        assert b.get("/sessions/r-1").json()["nodes"] == 0
        for i in range(20):
            applied = a.post("/sessions/r-1/actions", json={"reasoning": "", "actions": [
                node("Class", name=f"C{i}", package="p")]})
            assert applied.status_code == 200, applied.text
        assert b.get("/sessions/r-1").json()["nodes"] == 20
        exported = json.loads(b.post("/sessions/r-1/export", json={}).json()["content"])
        assert len(exported["nodes"]) == 20


def test_a_store_url_is_refused_and_never_made_a_folder(tmp_path: Path):
    """A URL of a database IGG cannot keep sessions in is refused; a PostgreSQL URL is a server to connect to
    (here none answers): neither is ever taken as a file path."""
    for value in ("sqlite:///x.db", "mysql://h/db"):
        shown = subprocess.run([sys.executable, "-m", "igg", "sessions", "--store", value], cwd=tmp_path,
                               capture_output=True, text=True, timeout=60, env=clean_env())
        assert shown.returncode == 2 and "is a URL" in shown.stderr and "Traceback" not in shown.stderr, shown.stderr
        by_env = subprocess.run([sys.executable, "-m", "igg", "sessions"], cwd=tmp_path, capture_output=True,
                                text=True, timeout=60, env=clean_env({"IGG_STORE": value}))
        assert by_env.returncode == 2 and "is a URL" in by_env.stderr, by_env.stderr
    for value in ("postgres://igg@127.0.0.1:1/igg",):  # (waits CONNECT_SECONDS for a server starting up)
        shown = subprocess.run([sys.executable, "-m", "igg", "sessions", "--store", value], cwd=tmp_path,
                               capture_output=True, text=True, timeout=60, env=clean_env())
        assert shown.returncode == 2 and "cannot open the PostgreSQL store" in shown.stderr, shown.stderr
        assert "Traceback" not in shown.stderr
    assert list(tmp_path.iterdir()) == []  # no "postgresql:" folder
    assert ROOT.exists()
