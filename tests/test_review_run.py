"""Review before apply for ``igg run``'s own loop: with ``config.review`` an iteration's validated actions wait as a
pending plan and the run stops (``awaiting_review``); ``igg review`` decides the plan exactly as for workspace
sessions, and ``igg resume`` goes on after the decision (a rejection's note is shown to the agent)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from igg.agents.base import Observation
from igg.service import continue_session
from igg.store import SessionStore
from tests.conftest import FIXTURES, ROOT


def cls(name: str) -> dict[str, Any]:
    return {"type": "ADD_NODE", "label": "Class", "properties": {"name": name, "package": "p"}}


TURNS = [
    {"reasoning": "first pass", "actions": [cls("A"), cls("B"), {"type": "ADD_NODE", "label": "Class",
                                                                   "properties": {"name": "NoPackage"}},
                                            {"type": "ADD_EDGE", "label": "CALLS", "from": {"name": "A"},
                                             "to": {"name": "B"}}]},
    {"reasoning": "the rest", "actions": [cls("C")], "finished": True},
]


def igg(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "igg", *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


def prepare(tmp_path: Path, session_id: str) -> tuple[Path, Path, str]:
    payload = json.loads((FIXTURES / "seed_request.json").read_text())
    payload["session_id"] = session_id
    payload["config"].update({"review": True, "max_iterations": 5})
    request = tmp_path / "request.json"
    request.write_text(json.dumps(payload))
    transcript = tmp_path / "turns.jsonl"
    transcript.write_text("".join(json.dumps(t) + "\n" for t in TURNS))
    return request, transcript, str(tmp_path / "s.sqlite")


def test_a_run_waits_for_review_the_cli_approves_and_resume_goes_on(tmp_path):
    request, transcript, store = prepare(tmp_path, "rr-1")
    ran = igg("run", str(request), "--agent", f"script:{transcript}", "--store", store, "--json")
    assert ran.returncode == 0, ran.stderr
    summary = json.loads(ran.stdout)
    assert (summary["stop_reason"], summary["nodes"], summary["iterations"]) == ("awaiting_review", 0, 0)
    plan = summary["review"]
    assert plan["iteration"] == 1 and [v["accepted"] for v in plan["verdicts"]] == [True, True, False, True]

    shown = igg("review", "rr-1", "--store", store)
    assert shown.returncode == 0, shown.stderr
    assert f"plan {plan['plan_id']} for iteration 1 waits for review (3 actions would apply, 1 are rejected)" \
        in shown.stdout
    early = igg("resume", "rr-1", "--store", store)
    assert early.returncode == 2 and "waiting for review; decide it first: igg review rr-1" in early.stderr

    approved = igg("review", "rr-1", "--store", store, "--approve", "0", "1", "3")
    assert approved.returncode == 0, approved.stderr
    assert "approved: 3 actions applied, 0 rejected; 2 nodes, 1 edges" in approved.stdout

    # iteration 2's turn waits for review in its turn; approving it lets the agent's "finished" end the run
    resumed = igg("resume", "rr-1", "--store", store, "--json")
    assert resumed.returncode == 0, resumed.stderr
    second = json.loads(resumed.stdout)
    assert second["stop_reason"] == "awaiting_review" and second["review"]["iteration"] == 2
    assert igg("review", "rr-1", "--store", store, "--approve").returncode == 0
    ended = igg("resume", "rr-1", "--store", store, "--json")  # the approved turn said finished: no agent call
    assert ended.returncode == 0, ended.stderr
    assert (json.loads(ended.stdout)["stop_reason"], json.loads(ended.stdout)["nodes"]) == ("finished", 3)
    opened = SessionStore(store)
    try:
        _, state, _ = opened.load_state("rr-1")
        names = sorted(p["name"] for _, p in state.graph.nodes(data="properties"))
        kinds = [s.kind for s in opened.steps("rr-1", with_records=False)]
    finally:
        opened.close()
    assert names == ["A", "B", "C"]
    assert kinds == ["review", "iteration", "review", "iteration", "finalize"]


def test_a_rejection_note_reaches_the_agent_on_resume(tmp_path):
    request, transcript, store = prepare(tmp_path, "rr-2")
    assert igg("run", str(request), "--agent", f"script:{transcript}", "--store", store).returncode == 0
    rejected = igg("review", "rr-2", "--store", store, "--reject", "B is not a class here")
    assert rejected.returncode == 0, rejected.stderr
    seen: list[str] = []

    def agent(observation: Observation) -> dict[str, Any]:
        seen.append(observation.markdown)
        return {"reasoning": "without B", "actions": [cls("A")]}

    result = continue_session(store, "rr-2", agent=agent)
    assert result.stop_reason == "awaiting_review" and result.review is not None
    assert result.review["iteration"] == 1 and result.review["actions"] == [cls("A")]
    assert "A reviewer rejected your last plan: B is not a class here" in seen[0]


def test_review_without_a_store_is_a_clear_error(tmp_path):
    request, transcript, _ = prepare(tmp_path, "rr-3")
    ran = igg("run", str(request), "--agent", f"script:{transcript}", "--no-store")
    assert ran.returncode == 2
    assert "config.review: a run with review before apply needs a session store" in ran.stderr
    assert "Traceback" not in ran.stderr
