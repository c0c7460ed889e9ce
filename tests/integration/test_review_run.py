"""Review before apply for ``igg run``'s own loop: with ``config.review`` an iteration's validated actions
wait as a pending plan and the run stops (``awaiting_review``); ``igg review`` decides the plan exactly as for
workspace sessions, and ``igg resume`` goes on after the decision (a rejection's note is shown to the
agent)."""

from __future__ import annotations

import json
import os
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
    {
        "reasoning": "first pass",
        "actions": [
            cls("A"),
            cls("B"),
            {"type": "ADD_NODE", "label": "Class", "properties": {"name": "NoPackage"}},
            {"type": "ADD_EDGE", "label": "CALLS", "from": {"name": "A"}, "to": {"name": "B"}},
        ],
    },
    {"reasoning": "the rest", "actions": [cls("C")], "finished": True},
]


def igg(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "igg", *args], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


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
    assert plan["plan_id"] == 1  # plans count 1, 2, 3
    (tmp_path / "b").mkdir()
    request_b, transcript_b, _ = prepare(tmp_path / "b", "rr-1b")
    table = subprocess.run(
        [
            sys.executable,
            "-m",
            "igg",
            "run",
            str(request_b),
            "--agent",
            f"script:{transcript_b}",
            "--store",
            store,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "500"},
    )
    # a hint that works when pasted: the store included
    assert f"igg review rr-1b --store {store}, then igg resume rr-1b --store {store}" in table.stdout, (
        table.stdout
    )

    shown = igg("review", "rr-1", "--store", store)
    assert shown.returncode == 0, shown.stderr
    assert (
        f"plan {plan['plan_id']} for iteration 1 waits for review (3 actions would apply, 1 are rejected)"
        in shown.stdout
    )
    early = igg("resume", "rr-1", "--store", store)
    assert early.returncode == 2
    assert f"waiting for review; decide it first: `igg review rr-1 --store {store} --approve`" in early.stderr

    approved = igg("review", "rr-1", "--store", store, "--approve", "0", "1", "3")
    assert approved.returncode == 0, approved.stderr
    assert "approved: 3 actions applied, 0 rejected; 2 nodes, 1 edges" in approved.stdout

    # iteration 2's turn waits for review in its turn; approving it lets the agent's "finished" end the run
    resumed = igg("resume", "rr-1", "--store", store, "--json")
    assert resumed.returncode == 0, resumed.stderr
    second = json.loads(resumed.stdout)
    assert second["stop_reason"] == "awaiting_review" and second["review"]["iteration"] == 2
    assert igg("review", "rr-1", "--store", store, "--approve").returncode == 0
    ended = igg(
        "resume", "rr-1", "--store", store, "--json"
    )  # the approved turn said finished: no agent call
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


def test_a_run_waiting_for_review_is_listed_as_such_and_its_turn_tokens_are_counted(tmp_path):
    """`igg sessions` says awaiting_review (not interrupted); the held turn's tokens are in the --json
    summary, in `igg show`'s review row and its total; undo waits for the decision."""
    request, _, store = prepare(tmp_path, "rr-4")
    transcript = tmp_path / "raw.jsonl"
    transcript.write_text(
        json.dumps({"raw": json.dumps(TURNS[0]), "usage": {"prompt_tokens": 300, "completion_tokens": 45}})
        + "\n"
    )
    ran = igg("run", str(request), "--agent", f"script:{transcript}", "--store", store, "--json")
    assert ran.returncode == 0, ran.stderr
    tokens = json.loads(ran.stdout)["tokens"]
    assert (tokens["prompt"], tokens["completion"], tokens["total"]) == (300, 45, 345)
    listed = igg("sessions", "--store", store, "--json")
    assert [(s["session_id"], s["status"]) for s in json.loads(listed.stdout)] == [
        ("rr-4", "awaiting_review")
    ]
    shown = json.loads(igg("show", "rr-4", "--store", store, "--json").stdout)
    assert shown["status"] == "awaiting_review"
    assert [(s["kind"], s["tokens"]) for s in shown["steps"]] == [("review", 345)]
    assert "345 tokens" in igg("show", "rr-4", "--store", store).stdout.splitlines()[-1]
    undo = igg("undo", "rr-4", "--to", "0", "--store", store)
    assert undo.returncode == 2 and f"`igg review rr-4 --store {store} --approve`" in undo.stderr


def test_a_token_budget_counts_the_turns_held_for_review_across_resumes(tmp_path):
    """The LLM's budget spans the session: on resume it counts what the held turn spent, so the next call that
    could overspend is refused (budget_exhausted) instead of starting from zero in the new process."""
    from tests.support.fake_openai import FakeOpenAI, Reply

    request, _, store = prepare(tmp_path, "rr-5")
    payload = json.loads(request.read_text())
    payload["config"]["llm"] = {
        "token_budget": 3000,
        "max_output_tokens": 1000,
        "max_retries": 0,
        "timeout_seconds": 30,
    }
    request.write_text(json.dumps(payload))
    spend = {"prompt_tokens": 1200, "completion_tokens": 300, "total_tokens": 1500}
    env = {"OPENAI_BASE_URL": ""}
    with FakeOpenAI([Reply(content=json.dumps(TURNS[0]), usage=spend)]) as server:
        env["OPENAI_BASE_URL"] = server.base_url
        ran = subprocess.run(
            [sys.executable, "-m", "igg", "run", str(request), "--agent", "llm", "--store", store, "--json"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            env={**__import__("os").environ, **env},
        )
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["tokens"]["total"] == 1500
    assert igg("review", "rr-5", "--store", store, "--approve").returncode == 0
    with FakeOpenAI([Reply(content=json.dumps(TURNS[1]), usage=spend)]) as server:
        resumed = subprocess.run(
            [sys.executable, "-m", "igg", "resume", "rr-5", "--store", store, "--json"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            env={**__import__("os").environ, "OPENAI_BASE_URL": server.base_url},
        )
        calls = len(server.requests)
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads(resumed.stdout)
    assert summary["stop_reason"] == "budget_exhausted" and calls == 0
    assert "1500 of 3000 tokens spent" in summary["error"]
