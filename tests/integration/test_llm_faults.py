"""Faults a real server rarely produces on demand, from the scripted fake server: trickled bytes, non-JSON
200 answers, a key echoed in an error, oversized answers."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from conftest import make_request
from structlog.testing import capture_logs
from support.fake_openai import FakeOpenAI, Reply
from support.llm import Sleeps, settings_for

from igg.agents.base import Observation
from igg.agents.llm import DEADLINE_GRACE, AsyncLLMAgent, LLMAgent, LLMSettings
from igg.agents.retry import RetryPolicy
from igg.errors import AgentFailed
from igg.interfaces.cli import main
from igg.models.request import LLMConfig

ANSWER = json.dumps(
    {
        "reasoning": "r",
        "actions": [{"type": "ADD_NODE", "label": "Class", "properties": {"name": "A", "package": "p"}}],
        "finished": True,
    }
)


def make_agent(server: FakeOpenAI, agent_cls: type = LLMAgent, **llm: Any) -> Any:
    llm = {"timeout_seconds": 1.0, "max_retries": 0, **llm}
    request = make_request(llm=llm)
    sleeps = Sleeps()
    policy = RetryPolicy(max_retries=llm["max_retries"], sleep=sleeps, asleep=sleeps.asleep)
    return agent_cls(settings_for(server, request), request, policy)


def observation() -> Observation:
    return Observation(session_id="s1", iteration=1, markdown="# Goal\nMap it.", tokens=5)


def call(agent: Any) -> Any:
    if isinstance(agent, AsyncLLMAgent):

        async def go() -> Any:
            try:
                return await agent(observation())
            finally:
                await agent.aclose()

        return asyncio.run(go())
    try:
        return agent(observation())
    finally:
        agent.close()


@pytest.mark.parametrize("agent_cls", [LLMAgent, AsyncLLMAgent])
def test_a_trickling_server_cannot_stretch_a_call_past_its_deadline(agent_cls: type) -> None:
    """One byte every 0.2 s keeps every socket read alive; the whole call still ends at timeout_seconds."""
    with FakeOpenAI([Reply(content=ANSWER, trickle=0.2)]) as server:
        agent = make_agent(server, agent_cls)
        with pytest.raises(AgentFailed) as err:
            call(agent)
    assert "timed out: no complete answer within timeout_seconds=1 (the whole call)" in str(err.value)
    (attempt,) = err.value.attempts  # the agent's own clock says when the deadline ended it
    assert attempt["error"].startswith("timed out") and attempt["at_ms"] < (1.0 + DEADLINE_GRACE) * 1000


def test_a_trickled_run_ends_with_agent_error_in_bounded_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """From the CLI: two attempts of 1 s each (plus backoff), then agent_error with the reason; exit 1."""
    request = write_request(tmp_path, timeout_seconds=1, max_retries=1)
    with FakeOpenAI([Reply(content=ANSWER, trickle=0.3)] * 2) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        code = main(["run", str(request), "--agent", "llm", "--json"])
    summary = json.loads(capsys.readouterr().out)
    assert summary["stop_reason"] == "agent_error" and "the whole call" in summary["error"]
    assert code == 1
    # by the run's own clock: two attempts + at most one backoff (<= 1 s)
    assert summary["elapsed_ms"] < (2 * (1.0 + DEADLINE_GRACE) + 1.5) * 1000


@pytest.mark.parametrize(
    "reply, words",
    [
        (
            Reply(body=b"<html><body>Bad gateway</body></html>", content_type="text/html"),
            'not a JSON object (text/html, 37 bytes, starting "<html><body>Bad gateway</body></html>")',
        ),
        (
            Reply(body=b'{"choices": "\xff\xfe"}'),
            "not UTF-8 (application/json, 17 bytes, invalid byte at offset 13)",
        ),
        (Reply(body=b"[1, 2]"), "not a JSON object (application/json, 6 bytes"),
    ],
)
def test_a_200_that_is_not_json_is_retried_then_fails_clearly(reply: Reply, words: str) -> None:
    """Non-JSON 200 answers are transient faults: retried, then agent_error naming what came."""
    with FakeOpenAI([reply, reply]) as server:
        agent = make_agent(server, max_retries=1)
        with pytest.raises(AgentFailed) as err:
            call(agent)
    assert len(server.requests) == 2
    assert "failed after 2 attempts" in str(err.value) and words in str(err.value)


def test_a_non_json_200_then_a_good_answer_succeeds() -> None:
    with FakeOpenAI([Reply(body=b"upstream timeout", content_type="text/plain"), ANSWER]) as server:
        turn = call(make_agent(server, AsyncLLMAgent, max_retries=2))
    assert turn.raw == ANSWER
    assert "not a JSON object (text/plain" in turn.exchange["attempts"][0]["error"]


def write_request(tmp_path: Path, **llm: Any) -> Path:
    payload = json.loads(Path("fixtures/seed_request.json").read_text())
    payload["context_data"] = "class A {}"
    payload["config"]["max_iterations"] = 2
    payload["config"]["llm"] = llm
    path = tmp_path / "request.json"
    path.write_text(json.dumps(payload))
    return path


def all_outputs(tmp_path: Path, out: str, err: str) -> dict[str, str]:
    """Every place a run leaves text: stdout, stderr, the run directory's files, the store's rows."""
    found = {"stdout": out, "stderr": err}
    for path in (tmp_path / "out").iterdir():
        found[path.name] = path.read_text(errors="replace")
    with sqlite3.connect(tmp_path / "store.sqlite") as db:
        tables = [r[0] for r in db.execute("select name from sqlite_master where type='table'")]
        for table in tables:
            found[f"store:{table}"] = "\n".join(map(repr, db.execute(f"select * from {table}")))  # noqa: S608
    return found


@pytest.mark.parametrize("key", ["plain-secret-value-123", "sk-proj-AbC123xyz789"])
def test_a_key_echoed_by_the_server_is_in_no_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], key: str
) -> None:
    """Whatever the key looks like, its value never reaches the store, summary.json, --json, logs or
    stderr."""
    request = write_request(tmp_path, max_retries=1, timeout_seconds=2)
    script = [
        Reply(status=503, echo=True, message=f"upstream said key={key}"),
        Reply(status=401, echo=True, message=f"invalid api key {key}"),
    ]
    with FakeOpenAI(script) as server, capture_logs() as logs:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", key)
        main(
            [
                "run",
                str(request),
                "--agent",
                "llm",
                "--out",
                str(tmp_path / "out"),
                "--store",
                str(tmp_path / "store.sqlite"),
                "--json",
            ]
        )
    out, err = capsys.readouterr()
    summary = json.loads(out)
    assert summary["stop_reason"] == "agent_error"
    assert "invalid api key [redacted]" in summary["error"] and "Bearer [redacted]" in summary["error"]
    places = all_outputs(tmp_path, out, err)
    places["logs"] = repr(logs)
    assert "summary.json" in places and any(k.startswith("store:") for k in places)
    leaks = [name for name, text in places.items() if key in text]
    assert leaks == []


def test_base_url_credentials_are_redacted_too() -> None:
    """user:password in OPENAI_BASE_URL (and their URL-encoded forms) are secrets like the key."""
    settings = LLMSettings.from_env(
        LLMConfig(),
        {"OPENAI_BASE_URL": "https://bob:p%40ss-word@llm.example/v1", "OPENAI_API_KEY": "k3y-value"},
    )
    text = "denied for bob:p%40ss-word / p@ss-word with k3y-value"
    assert settings.redact(text) == "denied for [redacted] / [redacted] with [redacted]"


def test_an_oversized_answer_is_cut_once_reported_and_stored_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 2 MB answer with a 16 KiB cap: cut at 16 KiB, truncated (whole actions only), the cut in the notes,
    and the kept text stored once per output (not again inside the recorded response)."""
    actions = [
        {"type": "ADD_NODE", "label": "Class", "properties": {"name": f"C{i}", "package": "p" * 50}}
        for i in range(20_000)
    ]
    big = json.dumps({"reasoning": "many", "actions": actions})
    assert len(big) > 2_000_000
    request = write_request(tmp_path, max_answer_bytes=16384)
    with FakeOpenAI([big, json.dumps({"reasoning": "done", "actions": [], "finished": True})]) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        main(
            [
                "run",
                str(request),
                "--agent",
                "llm",
                "--out",
                str(tmp_path / "out"),
                "--store",
                str(tmp_path / "store.sqlite"),
                "--json",
            ]
        )
    summary = json.loads(capsys.readouterr().out)
    assert summary["stop_reason"] == "finished" and summary["truncated_turns"] == 1
    first = json.loads((tmp_path / "out" / "records.jsonl").read_text().splitlines()[0])
    assert len(first["raw_output"].encode()) <= 16384 and first["truncated"]
    assert 100 < len(first["actions"]) < 200  # only whole actions of the kept 16 KiB
    assert any(f"was {len(big)} bytes long; only its first" in n for n in first["notes"])
    assert f"<{len(big)} bytes, cut to the record's raw_output>" in json.dumps(first["exchange"])
    records = (tmp_path / "out" / "records.jsonl").read_text()
    assert records.count('"name\\": \\"C7\\"') == 1  # the raw text once (the parsed action holds it too)
    assert (tmp_path / "out" / "records.jsonl").stat().st_size < 200_000
    assert (tmp_path / "store.sqlite").stat().st_size < 1_000_000


def test_failed_attempts_count_in_the_turn_and_stop_a_retry_the_budget_cannot_pay() -> None:
    """Issue 47: a failed attempt the server worked on (an unreadable 200, a 5xx) spent tokens IGG never
    counted, so a token budget could be overrun by retries. Each counts (estimated) in the turn's usage, and a
    retry the budget cannot pay for is refused with BudgetExhausted carrying what was spent."""
    from igg.errors import BudgetExhausted

    bad = Reply(body=b"upstream timeout", content_type="text/plain")
    with FakeOpenAI([bad, Reply(status=502), ANSWER]) as server:
        agent = make_agent(server, AsyncLLMAgent, max_retries=2, max_output_tokens=100)
        turn = call(agent)
    assert len(server.requests) == 3 and turn.usage is not None and turn.usage.estimated
    assert [a.get("usage", {}).get("completion_tokens") for a in turn.exchange["attempts"]] == [100, 0]
    reported = turn.exchange["response"]["usage"]  # the answered call's, as the server counted it
    assert turn.usage.completion_tokens == reported["completion_tokens"] + 100
    assert turn.usage.prompt_tokens > 2 * reported["prompt_tokens"]  # two more prompts, estimated
    assert agent.totals.total_tokens == turn.usage.total_tokens
    with FakeOpenAI([bad, bad, ANSWER]) as server:
        agent = make_agent(server, AsyncLLMAgent, max_retries=2, max_output_tokens=100, token_budget=1_000)
        with pytest.raises(BudgetExhausted) as stopped:
            call(agent)
    assert len(server.requests) < 3 and stopped.value.usage is not None
    assert stopped.value.usage["completion_tokens"] >= 100 and stopped.value.usage["estimated"] is True
