"""Review before apply: a pending plan over HTTP (across a restart), MCP and the CLI; approve exactly what was
shown."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from typing import Any

from mcp import Client

from tests.conftest import ROOT, edge, node
from tests.integration.test_http import error_of, serve
from tests.integration.test_mcp import call, server
from tests.unit.test_workspace import request_dict


def cls(name: str, **extra: Any) -> dict[str, Any]:
    return node("Class", name=name, package="p", **extra)


PLAN = [
    cls("AuthService"),
    cls("Ctrl"),
    node("Class", name="NoPackage"),
    edge("CALLS", {"name": "Ctrl"}, {"name": "AuthService"}),
]


def reviewed(session_id: str) -> dict[str, Any]:
    payload = request_dict(session_id=session_id)
    payload["config"]["review"] = True
    return payload


def test_a_plan_waits_for_review_across_a_server_restart_and_approval_applies_what_was_shown(tmp_path):
    with serve(tmp_path) as http:
        assert http.post("/sessions", json=reviewed("r-1")).status_code == 201
        proposed = http.post(
            "/sessions/r-1/actions", json={"actions": PLAN, "reasoning": "first pass"}
        ).json()
        assert proposed["status"] == "awaiting_review" and proposed["nodes"] == 0
        plan = proposed["review"]
        assert [v["accepted"] for v in plan["verdicts"]] == [True, True, False, True]
        assert plan["verdicts"][2]["code"] == "MISSING_REQUIRED_ATTRIBUTE"
        assert error_of(http.post("/sessions/r-1/actions", json={"actions": [cls("X")]})) == (
            409,
            "REVIEW_PENDING",
        )
        listed = http.get("/sessions").json()["sessions"]
        assert [(s["session_id"], s["status"]) for s in listed] == [("r-1", "awaiting_review")]
    with serve(tmp_path) as http:  # another server process: the plan is in the store
        listed = http.get("/sessions", params={"status": "awaiting_review"}).json()["sessions"]
        assert [(s["session_id"], s["status"]) for s in listed] == [("r-1", "awaiting_review")]
        assert http.get("/sessions/r-1").json()["status"] == "awaiting_review"
        shown = http.get("/sessions/r-1/review").json()
        assert shown["status"] == "awaiting_review" and shown["review"] == plan
        assert error_of(
            http.post("/sessions/r-1/review", json={"plan_id": plan["plan_id"] + 1, "decision": "approve"})
        ) == (409, "REVIEW_STALE")
        approved = http.post(
            "/sessions/r-1/review",
            json={"plan_id": plan["plan_id"], "decision": "approve", "actions": [0, 1]},
        ).json()
        assert approved["status"] == "open" and approved["approved"] == [0, 1]
        assert [v["message"] for v in approved["verdicts"]] == [v["message"] for v in plan["verdicts"][:2]]
        assert approved["nodes"] == 2 and approved["edges"] == 0 and approved["iteration"] == 1
        second = http.post("/sessions/r-1/actions", json={"actions": [cls("Mailer")]}).json()["review"]
        rejected = http.post(
            "/sessions/r-1/review",
            json={"plan_id": second["plan_id"], "decision": "reject", "note": "Mailer is out of scope"},
        )
        assert rejected.status_code == 200 and rejected.json()["nodes"] == 2
        observed = http.get("/sessions/r-1/observation").json()["markdown"]
        assert "A reviewer rejected your last plan: Mailer is out of scope" in observed


def test_review_over_mcp_and_the_cli(tmp_path):
    async def scenario() -> None:
        async with Client(server(tmp_path)) as client:
            await call(client, "start_session", **reviewed("r-2"))
            proposed = await call(client, "apply_actions", session_id="r-2", actions=PLAN)
            plan = proposed.structured_content["review"]
            shown = await call(client, "review", session_id="r-2")
            assert shown.structured_content["review"]["plan_id"] == plan["plan_id"]
            done = await call(client, "review", session_id="r-2", plan_id=plan["plan_id"], decision="approve")
            assert done.structured_content["accepted"] == 3 and done.structured_content["nodes"] == 2
            again = await call(client, "apply_actions", session_id="r-2", actions=[cls("Repo")])
            assert again.structured_content["status"] == "awaiting_review"
            listed = (await call(client, "list_sessions")).structured_content["sessions"]
            assert [(s["session_id"], s["status"]) for s in listed] == [("r-2", "awaiting_review")]

    asyncio.run(scenario())
    store = str(tmp_path / "sessions.sqlite")
    igg = [sys.executable, "-m", "igg", "review", "r-2", "--store", store]
    listed = subprocess.run(
        [sys.executable, "-m", "igg", "sessions", "--store", store],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert listed.returncode == 0 and listed.stdout.splitlines()[1].split()[:2] == ["r-2", "awaiting_review"]
    shown = subprocess.run(igg, capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert "waits for review (1 actions would apply, 0 are rejected)" in shown.stdout
    assert (
        '[0] ok  {"type": "ADD_NODE", "label": "Class", "properties": {"name": "Repo", "package": "p"}}'
        in shown.stdout
    )
    approved = subprocess.run([*igg, "--approve"], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert approved.returncode == 0, approved.stderr
    assert "approved: 1 actions applied, 0 rejected; 3 nodes" in approved.stdout
    none = subprocess.run([*igg, "--approve"], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert none.returncode == 2


def auth_run(session_id: str, *, review: bool) -> dict[str, Any]:
    import json

    payload = json.loads((ROOT / "fixtures" / "auth" / "request.json").read_text())
    payload["session_id"] = session_id
    payload["config"]["review"] = review
    return payload


def test_an_autonomous_run_on_an_in_memory_session_waits_for_review_over_mcp(tmp_path):
    """`run_session` with config.review on `igg mcp --memory`: the run stops awaiting_review with its plan
    held in memory; each `review` approval applies the plan and the held agent's next turn waits again;
    approving every plan builds the same graph as the run without review."""
    params = server(tmp_path)
    params.args = [*params.args, "--memory"]

    async def scenario() -> None:
        async with Client(params) as client:
            plain = await call(client, "run_session", **auth_run("plain", review=False), agent="code")
            assert plain.structured_content["stop_reason"] == "finished"
            held = await call(client, "run_session", **auth_run("held", review=True), agent="code")
            out = held.structured_content
            assert (out["stop_reason"], out["status"], out["nodes"]) == (
                "awaiting_review",
                "awaiting_review",
                3,
            )
            listed = (await call(client, "list_sessions", status="awaiting_review")).structured_content[
                "sessions"
            ]
            assert [s["session_id"] for s in listed] == ["held"]
            plan, decisions = out["review"], 0
            while plan is not None:
                decided = (
                    await call(
                        client, "review", session_id="held", plan_id=plan["plan_id"], decision="approve"
                    )
                ).structured_content
                decisions += 1
                assert decided["approved"] == list(range(len(plan["actions"])))
                plan = decided["run"].get("review")
                assert decided["status"] == ("awaiting_review" if plan else "finished")
            assert decisions > 3
            assert decided["nodes"] == plain.structured_content["nodes"]
            assert decided["edges"] == plain.structured_content["edges"]

    asyncio.run(scenario())


def test_an_autonomous_run_held_for_review_over_http_takes_a_rejection_note_and_goes_on(tmp_path):
    """POST /runs (the server's LLM) on an in-memory server: the session is listed awaiting_review; a
    rejection's note is in the model's next prompt; an approval of chosen actions applies exactly those, and
    the next turn waits in its turn."""
    import json
    import time

    from tests.support.fake_openai import FakeOpenAI

    def turn(*names: str) -> str:
        return json.dumps({"reasoning": "next", "actions": [cls(n) for n in names]})

    payload = reviewed("h-1")
    payload["config"]["llm"] = {"max_retries": 0, "timeout_seconds": 30}
    with (
        FakeOpenAI([turn("A", "B"), turn("C", "D"), turn("E")]) as model,
        serve(tmp_path, "--memory", env={"OPENAI_BASE_URL": model.base_url, "OPENAI_API_KEY": "k"}) as http,
    ):
        assert http.post("/runs", json={**payload, "agent": "llm"}).status_code == 202
        deadline = time.monotonic() + 60
        while http.get("/sessions/h-1").json()["status"] != "awaiting_review" and time.monotonic() < deadline:
            time.sleep(0.1)
        assert [s["status"] for s in http.get("/sessions").json()["sessions"]] == ["awaiting_review"]
        first = http.get("/sessions/h-1/review").json()["review"]
        assert [a["properties"]["name"] for a in first["actions"]] == ["A", "B"]
        rejected = http.post(
            "/sessions/h-1/review",
            json={"plan_id": first["plan_id"], "decision": "reject", "note": "A and B are out of scope"},
        ).json()
        assert rejected["nodes"] == 0 and rejected["status"] == "awaiting_review"
        assert "A reviewer rejected your last plan: A and B are out of scope" in json.dumps(
            model.requests[1].body
        )
        second = rejected["run"]["review"]
        assert [a["properties"]["name"] for a in second["actions"]] == ["C", "D"]
        approved = http.post(
            "/sessions/h-1/review", json={"plan_id": second["plan_id"], "decision": "approve", "actions": [1]}
        ).json()
        assert (
            approved["approved"] == [1] and approved["nodes"] == 1 and approved["status"] == "awaiting_review"
        )
        assert approved["run"]["review"]["actions"] == [cls("E")]
        names = [
            n["properties"]["name"]
            for n in json.loads(http.post("/sessions/h-1/export", json={"format": "json"}).json()["content"])[
                "nodes"
            ]
        ]
        assert names == ["D"]


def test_an_approval_takes_distinct_indices_in_plan_order_and_finish_waits_for_the_decision():
    """Repeated or reordered indices could apply actions otherwise than the verdicts shown: refused, with the
    order that would do; finishing (or undoing) while a plan waits is REVIEW_PENDING, naming both ways on."""
    import pytest

    from igg.errors import WorkspaceError
    from igg.workspace import Workspace
    from igg.workspace.ops import ApplyInput, FinishInput, ReviewInput, UndoInput

    ws = Workspace()
    sid = ws.start(reviewed("order"))["session_id"]
    plan = ws.apply(ApplyInput(session_id=sid, reasoning="plan", actions=PLAN))["review"]
    with pytest.raises(WorkspaceError) as finishing:
        ws.finish(FinishInput(session_id=sid))
    assert (
        finishing.value.code == "REVIEW_PENDING"
        and "approve" in finishing.value.message
        and "reject" in finishing.value.message
    )
    with pytest.raises(
        WorkspaceError
    ) as undoing:  # a remote client is told the ways on, not a server command
        ws.undo(UndoInput(session_id=sid, to_iteration=0))
    assert (
        undoing.value.code == "REVIEW_PENDING"
        and "igg " not in undoing.value.message
        and "/" not in undoing.value.message
    )
    for chosen in ([0, 0], [1, 0], [3, 1, 0]):
        with pytest.raises(WorkspaceError) as refused:
            ws.review(
                ReviewInput(session_id=sid, decision="approve", plan_id=plan["plan_id"], actions=chosen)
            )
        assert refused.value.code == "INVALID_ARGUMENTS" and "plan's order" in refused.value.message
    done = ws.review(
        ReviewInput(session_id=sid, decision="approve", plan_id=plan["plan_id"], actions=[0, 1, 3])
    )
    assert (done["accepted"], done["nodes"], done["edges"], done["status"]) == (3, 2, 1, "open")
    second = ws.apply(ApplyInput(session_id=sid, reasoning="next", actions=[cls("Repo")]))["review"]
    assert (plan["plan_id"], second["plan_id"]) == (1, 2)  # plans count 1, 2, 3
