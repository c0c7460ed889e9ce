"""Several processes on one store: a process notices that a session it holds was changed by another (the
session's last stored step, read on every request) and loads it again before it answers; a store argument that
looks like a URL is never taken as a file path."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx

from igg.store import SessionStore, StoreSessions, replay
from igg.workspace import Workspace
from igg.workspace.ops import ApplyInput, ExportInput
from tests.conftest import ROOT, node
from tests.support.server import clean_env, igg_serve
from tests.test_workspace import request_dict

pytest_plugins = ["tests.support.postgres"]


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


def roomy(session_id: str) -> dict[str, Any]:
    """The seed request with room for many iterations and nodes."""
    payload = request_dict(session_id=session_id)
    payload["config"]["max_iterations"] = 10_000
    payload["config"]["constraints"]["max_nodes"] = 10_000
    return payload


def test_a_change_made_on_a_stale_copy_is_refused_and_made_again_on_the_fresh_one(store_location):
    """Two servers hold one session; b's copy is out of date when it applies (its per-request check raced with
    a's commit): the store refuses b's commit (SessionConflict: it expected the step a took), nothing is kept,
    b loads the session again and applies there. No step is lost or numbered twice."""
    a = Workspace(StoreSessions(SessionStore(store_location)))
    b = Workspace(StoreSessions(SessionStore(store_location)))
    sid = a.start(request_dict(session_id="race"))["session_id"]
    assert names(b, sid) == []
    held = b.get(sid)
    b._stale = lambda live: False  # type: ignore[method-assign]  # the race: b's check sees no change yet
    a.apply(ApplyInput(session_id=sid, reasoning="", actions=[node("Class", name="A", package="p")]))
    out = b.apply(ApplyInput(session_id=sid, reasoning="", actions=[node("Class", name="B", package="p")]))
    assert out.accepted == 1 and b.get(sid) is not held  # loaded again, then applied
    assert names(a, sid) == names(b, sid) == ["A", "B"]
    store = SessionStore(store_location)
    assert [s.step for s in store.steps(sid)] == [1, 2]  # (step 1 is the first apply; none twice)
    assert replay(store, sid).ok


def test_two_servers_applying_at_once_lose_and_repeat_nothing(store_location):
    """Two workspaces, four threads each, apply to two shared sessions at once: every action is kept once,
    the steps of each session are numbered 1..N without a gap, and each replays to its graph."""
    import threading

    servers = [Workspace(StoreSessions(SessionStore(store_location))) for _ in range(2)]
    sessions = [servers[0].start(roomy(f"busy-{i}"))["session_id"] for i in range(2)]
    problems: list[str] = []

    def client(k: int) -> None:
        server, sid = servers[k % 2], sessions[k // 4]
        for i in range(12):
            try:
                out = server.apply(ApplyInput(session_id=sid, reasoning="", actions=[
                    node("Class", name=f"C{k}x{i}", package="p")]))
                assert out.accepted == 1, out
            except Exception as exc:  # noqa: BLE001 - collected and shown
                problems.append(f"client {k} apply {i}: {exc!r}")

    threads = [threading.Thread(target=client, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert problems == []
    store = SessionStore(store_location)
    for n, sid in enumerate(sessions):
        expected = sorted(f"C{k}x{i}" for k in range(4 * n, 4 * n + 4) for i in range(12))
        assert names(servers[0], sid) == names(servers[1], sid) == expected
        assert [s.step for s in store.steps(sid)] == list(range(1, 49))
        assert replay(store, sid).ok
