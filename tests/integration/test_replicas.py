"""Several processes on one store: a process notices that a session it holds was changed by another (the
session's last stored step, read on every request) and loads it again before it answers; a store argument that
looks like a URL is never taken as a file path."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from igg.store import SessionStore, StoreSessions, replay
from igg.workspace import Workspace
from igg.workspace.ops import ApplyInput, ExportInput
from tests.conftest import ROOT, node
from tests.support.server import clean_env, igg_serve
from tests.unit.test_workspace import request_dict

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
    with (
        igg_serve(["--store", store], env=clean_env(), log_path=tmp_path / "a.log") as (_, base_a),
        igg_serve(["--store", store], env=clean_env(), log_path=tmp_path / "b.log") as (_, base_b),
        httpx.Client(base_url=base_a, timeout=60) as a,
        httpx.Client(base_url=base_b, timeout=60) as b,
    ):
        assert a.post("/sessions", json=request_dict(session_id="r-1")).status_code == 201
        assert b.get("/sessions/r-1").json()["nodes"] == 0
        for i in range(20):
            applied = a.post(
                "/sessions/r-1/actions",
                json={"reasoning": "", "actions": [node("Class", name=f"C{i}", package="p")]},
            )
            assert applied.status_code == 200, applied.text
        assert b.get("/sessions/r-1").json()["nodes"] == 20
        exported = json.loads(b.post("/sessions/r-1/export", json={}).json()["content"])
        assert len(exported["nodes"]) == 20


def test_a_store_url_is_refused_and_never_made_a_folder(tmp_path: Path):
    """A URL of a database IGG cannot keep sessions in is refused; a PostgreSQL URL is a server to connect to
    (here none answers): neither is ever taken as a file path."""
    for value in ("sqlite:///x.db", "mysql://h/db"):
        shown = subprocess.run(
            [sys.executable, "-m", "igg", "sessions", "--store", value],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
            env=clean_env(),
        )
        assert shown.returncode == 2 and "is a URL" in shown.stderr and "Traceback" not in shown.stderr, (
            shown.stderr
        )
        by_env = subprocess.run(
            [sys.executable, "-m", "igg", "sessions"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
            env=clean_env({"IGG_STORE": value}),
        )
        assert by_env.returncode == 2 and "is a URL" in by_env.stderr, by_env.stderr
    for value in ("postgres://igg@127.0.0.1:1/igg",):  # (waits CONNECT_SECONDS for a server starting up)
        shown = subprocess.run(
            [sys.executable, "-m", "igg", "sessions", "--store", value],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
            env=clean_env(),
        )
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
                out = server.apply(
                    ApplyInput(
                        session_id=sid, reasoning="", actions=[node("Class", name=f"C{k}x{i}", package="p")]
                    )
                )
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


def test_a_review_decided_on_one_server_releases_the_run_waiting_on_another(tmp_path: Path):
    """POST /runs on server a holds its first plan for review; the reviewer approves it through server b; a's
    held run notices the decision in the store and its agent takes the next turn, which b then shows."""

    from tests.integration.test_review import cls, reviewed
    from tests.support.fake_openai import FakeOpenAI

    def turn(*names: str) -> str:
        return json.dumps({"reasoning": "next", "actions": [cls(n) for n in names]})

    payload = reviewed("h-x")
    payload["config"]["llm"] = {"max_retries": 0, "timeout_seconds": 30}
    store = str(tmp_path / "s.sqlite")
    with FakeOpenAI([turn("A", "B"), turn("C")]) as model:
        env = clean_env({"OPENAI_BASE_URL": model.base_url, "OPENAI_API_KEY": "k"})
        with (
            igg_serve(["--store", store], env=env, log_path=tmp_path / "a.log") as (_, base_a),
            igg_serve(["--store", store], env=env, log_path=tmp_path / "b.log") as (_, base_b),
            httpx.Client(base_url=base_a, timeout=60) as a,
            httpx.Client(base_url=base_b, timeout=60) as b,
        ):
            assert a.post("/runs", json={**payload, "agent": "llm"}).status_code == 202
            deadline = time.monotonic() + 60
            while (
                b.get("/sessions/h-x").json()["status"] != "awaiting_review" and time.monotonic() < deadline
            ):
                time.sleep(0.1)
            first = b.get("/sessions/h-x/review").json()["review"]
            assert [x["properties"]["name"] for x in first["actions"]] == ["A", "B"]
            approved = b.post(
                "/sessions/h-x/review", json={"plan_id": first["plan_id"], "decision": "approve"}
            )
            assert approved.status_code == 200 and approved.json()["nodes"] == 2, approved.text
            second: dict[str, Any] | None = None
            while time.monotonic() < deadline:  # a's run takes its next turn and holds it for review again
                second = b.get("/sessions/h-x/review").json()["review"]
                if second is not None and second["plan_id"] != first["plan_id"]:
                    break
                time.sleep(0.2)
            assert second is not None and [x["properties"]["name"] for x in second["actions"]] == ["C"], (
                second
            )
            assert len(model.requests) == 2


def test_a_run_on_one_server_streams_its_events_to_a_client_of_another(tmp_path: Path):
    """POST /runs on server a; a client follows the session's events on server b: each iteration's verdicts
    and counts reach it (b reads them from the store), then run_finished."""
    import threading

    from tests.integration.test_review import cls
    from tests.support.fake_openai import FakeOpenAI, Reply

    def turn(*names: str, finished: bool = False) -> Reply:
        body = {"reasoning": "next", "actions": [cls(n) for n in names], "finished": finished}
        return Reply(content=json.dumps(body), hang=1.0)  # slow enough to be followed while it runs

    payload = request_dict(session_id="run-x")
    payload["config"]["llm"] = {"max_retries": 0, "timeout_seconds": 30}
    store = str(tmp_path / "s.sqlite")
    with FakeOpenAI([turn("A"), turn("B"), turn("C", finished=True)]) as model:
        env = clean_env({"OPENAI_BASE_URL": model.base_url, "OPENAI_API_KEY": "k"})
        with (
            igg_serve(["--store", store], env=env, log_path=tmp_path / "a.log") as (_, base_a),
            igg_serve(["--store", store], env=env, log_path=tmp_path / "b.log") as (_, base_b),
        ):
            assert (
                httpx.post(f"{base_a}/runs", json={**payload, "agent": "llm"}, timeout=60).status_code == 202
            )
            seen: list[dict[str, Any]] = []

            def follow() -> None:
                with (
                    httpx.Client(base_url=base_b, timeout=60) as http,
                    http.stream("GET", "/sessions/run-x/events") as r,
                ):
                    for line in r.iter_lines():
                        if line.startswith("data: "):
                            seen.append(json.loads(line.removeprefix("data: ")))

            listener = threading.Thread(target=follow, daemon=True)
            listener.start()
            listener.join(60)
            assert not listener.is_alive(), seen  # the stream ended, with the run
            finished = [e["iteration"] for e in seen if e["kind"] == "iteration_finished"]
            assert finished == [1, 2, 3], seen
            assert [e["message"] for e in seen if e["kind"] == "action_verdict"] == [
                'added Class "A" as n1',
                'added Class "B" as n2',
                'added Class "C" as n3',
            ]
            assert seen[-1]["kind"] == "run_finished" and seen[-1]["stop_reason"] == "finished"


def test_an_iterations_events_are_the_same_whichever_process_stored_it(tmp_path: Path):
    """The events a server publishes for its own tool call and the events another server rebuilds from the
    store for that step carry the same fields and values (one builder, ``igg.act.step.iteration_events``)."""
    import asyncio

    a = Workspace(StoreSessions(SessionStore(tmp_path / "s.sqlite")))
    b_repo = StoreSessions(SessionStore(tmp_path / "s.sqlite"))
    sid = a.start(request_dict(session_id="evented"))["session_id"]

    async def published() -> list[dict[str, Any]]:
        seen: list[dict[str, Any]] = []

        async def listen() -> None:
            async for event in a.hub.listen(sid, follow=True):
                seen.append(event)
                if event["kind"] == "iteration_finished":
                    return

        task = asyncio.create_task(listen())
        await asyncio.sleep(0.05)
        await a.execute(
            ApplyInput(
                session_id=sid,
                reasoning="two",
                actions=[node("Class", name="A", package="p"), node("Nope", name="B")],
            )
        )
        await asyncio.wait_for(task, 10)
        return seen

    mine = asyncio.run(published())
    ((_, rebuilt),) = b_repo.events_since(sid, 0)
    assert [e.to_dict() for e in rebuilt] == mine
    assert [e["kind"] for e in mine] == ["action_verdict", "action_verdict", "iteration_finished"]
    assert mine[-1]["rejected_by_code"] == {"UNKNOWN_NODE_TYPE": 1} and mine[-1]["nodes"] == 1
