"""Review before apply: a pending plan over HTTP (across a restart), MCP and the CLI; approve exactly what was shown."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from typing import Any

from mcp import Client

from tests.conftest import ROOT, edge, node
from tests.test_http import error_of, serve
from tests.test_mcp import call, server
from tests.test_workspace import request_dict


def cls(name: str, **extra: Any) -> dict[str, Any]:
    return node("Class", name=name, package="p", **extra)


PLAN = [cls("AuthService"), cls("Ctrl"), node("Class", name="NoPackage"),
        edge("CALLS", {"name": "Ctrl"}, {"name": "AuthService"})]


def reviewed(session_id: str) -> dict[str, Any]:
    payload = request_dict(session_id=session_id)
    payload["config"]["review"] = True
    return payload


def test_a_plan_waits_for_review_across_a_server_restart_and_approval_applies_what_was_shown(tmp_path):
    with serve(tmp_path) as http:
        assert http.post("/sessions", json=reviewed("r-1")).status_code == 201
        proposed = http.post("/sessions/r-1/actions", json={"actions": PLAN, "reasoning": "first pass"}).json()
        assert proposed["status"] == "awaiting_review" and proposed["nodes"] == 0
        plan = proposed["review"]
        assert [v["accepted"] for v in plan["verdicts"]] == [True, True, False, True]
        assert plan["verdicts"][2]["code"] == "MISSING_REQUIRED_ATTRIBUTE"
        assert error_of(http.post("/sessions/r-1/actions", json={"actions": [cls("X")]})) == (409, "REVIEW_PENDING")
    with serve(tmp_path) as http:  # another server process: the plan is in the store
        shown = http.get("/sessions/r-1/review").json()
        assert shown["status"] == "awaiting_review" and shown["review"] == plan
        assert error_of(http.post("/sessions/r-1/review", json={"plan_id": plan["plan_id"] + 1,
                                                                "decision": "approve"})) == (409, "REVIEW_STALE")
        approved = http.post("/sessions/r-1/review", json={"plan_id": plan["plan_id"], "decision": "approve",
                                                           "actions": [0, 1]}).json()
        assert approved["status"] == "open" and approved["approved"] == [0, 1]
        assert [v["message"] for v in approved["verdicts"]] == [v["message"] for v in plan["verdicts"][:2]]
        assert approved["nodes"] == 2 and approved["edges"] == 0 and approved["iteration"] == 1
        second = http.post("/sessions/r-1/actions", json={"actions": [cls("Mailer")]}).json()["review"]
        rejected = http.post("/sessions/r-1/review", json={"plan_id": second["plan_id"], "decision": "reject",
                                                           "note": "Mailer is out of scope"})
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

    asyncio.run(scenario())
    store = str(tmp_path / "sessions.sqlite")
    igg = [sys.executable, "-m", "igg", "review", "r-2", "--store", store]
    shown = subprocess.run(igg, capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert "waits for review (1 actions would apply, 0 are rejected)" in shown.stdout
    assert '[0] ok  {"type": "ADD_NODE", "label": "Class", "properties": {"name": "Repo", "package": "p"}}' \
        in shown.stdout
    approved = subprocess.run([*igg, "--approve"], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert approved.returncode == 0, approved.stderr
    assert "approved: 1 actions applied, 0 rejected; 3 nodes" in approved.stdout
    none = subprocess.run([*igg, "--approve"], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert none.returncode == 2
