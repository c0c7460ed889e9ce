"""Whole runs with the LLM agent against a local OpenAI-compatible server: stop reasons, counts,
invariants."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import make_request
from support.fake_openai import FakeOpenAI, Reply
from support.llm import Sleeps, settings_for

from igg.agents.budget import messages_tokens
from igg.agents.llm import AsyncLLMAgent, LLMAgent
from igg.agents.retry import RetryPolicy
from igg.engine.loop import arun, run
from igg.graph.invariants import invariant_violations
from igg.interfaces.cli import main

CONTEXT = "class AuthController { AuthService service; void login() { service.check(); } }"


def answer(*actions: dict[str, Any], finished: bool = False, reasoning: str = "step") -> str:
    return json.dumps({"reasoning": reasoning, "actions": list(actions), "finished": finished})


def cls(name: str, label: str = "Class") -> dict[str, Any]:
    return {"type": "ADD_NODE", "label": label, "properties": {"name": name, "package": "com.app.auth"}}


def calls(a: str, b: str) -> dict[str, Any]:
    return {"type": "ADD_EDGE", "label": "CALLS", "from": {"name": a}, "to": {"name": b}}


NODES = answer(cls("AuthController"), cls("AuthService"))
EDGE_DONE = answer(calls("AuthController", "AuthService"), finished=True)


class InvariantGuard:
    """A recorder that checks the graph's invariants after every iteration."""

    def __init__(self) -> None:
        self.state: Any = None
        self.limits: Any = None
        self.checked = 0

    def begin(self, request: Any, state: Any, records: list[Any]) -> None:
        self.state, self.limits = state, request.config.constraints

    def record(self, record: Any) -> None:
        assert invariant_violations(self.state, self.limits) == [], f"after iteration {record.iteration}"
        self.checked += 1

    def finish(self, result: Any) -> None:
        assert invariant_violations(result.state, self.limits) == []


def go(server: FakeOpenAI, *, sync: bool = False, sleeps: Sleeps | None = None, **config: Any) -> Any:
    llm = {"timeout_seconds": 0.5, "max_retries": 3, **config.pop("llm", {})}
    request = make_request(llm=llm, context_data=CONTEXT, **config)
    settings = settings_for(server, request)
    sleeps = sleeps if sleeps is not None else Sleeps()
    policy = RetryPolicy(max_retries=llm["max_retries"], base_delay=0.01, sleep=sleeps, asleep=sleeps.asleep)
    agent = (LLMAgent if sync else AsyncLLMAgent)(settings, request, policy)
    guard = InvariantGuard()
    result = run(request, agent, recorder=guard)
    assert guard.checked == len(result.records)
    return result


def user_messages(server: FakeOpenAI) -> list[str]:
    return [r.body["messages"][1]["content"] for r in server.requests if r.answered == "reply"]


@pytest.mark.parametrize("sync", [False, True])
def test_scripted_replies_finish_with_tokens_in_the_summary(sync: bool) -> None:
    """Two turns build the graph; per-iteration usage adds up to the summary's totals."""
    with FakeOpenAI([NODES, EDGE_DONE]) as server:
        result = go(server, sync=sync)
    summary = result.summary()
    assert summary["stop_reason"] == "finished" and summary["iterations"] == 2
    assert (summary["nodes"], summary["edges"]) == (2, 1)
    assert summary["actions"] == {"proposed": 3, "accepted": 3, "rejected": 0, "rejected_by_code": {}}
    usages = [r.usage for r in result.records]
    assert summary["tokens"]["total"] == sum(u["total_tokens"] for u in usages) > 0
    assert not summary["tokens"]["estimated"]
    assert all(r.exchange and r.exchange["response"]["choices"] for r in result.records)
    assert CONTEXT in user_messages(server)[0]


def test_fenced_json_is_read() -> None:
    """A reply wrapped in prose and a markdown fence is read by the shared parser."""
    fenced = f"Here is my answer:\n```json\n{EDGE_DONE}\n```\nDone."
    with FakeOpenAI([NODES, fenced]) as server:
        result = go(server)
    assert result.stop_reason == "finished" and result.state.edge_count == 1
    assert result.records[1].raw_output == fenced


def test_invalid_json_then_a_fix() -> None:
    """Invalid JSON applies nothing and the model sees INVALID_JSON next time; its fix applies."""
    broken = '{"reasoning": "x", "actions": [{"type": "ADD_NODE" "label": "Class"}]}'
    with FakeOpenAI([broken, NODES, EDGE_DONE]) as server:
        result = go(server)
    assert result.stop_reason == "finished" and result.iterations == 3
    assert result.records[0].parse_error["code"] == "INVALID_JSON"
    assert "INVALID_JSON" in user_messages(server)[1]
    assert (result.state.node_count, result.state.edge_count) == (2, 1)


def test_hallucinated_types_then_a_fix() -> None:
    """Unknown node and edge types are rejected with their codes; the model sees them and fixes them."""
    wrong = answer(
        cls("AuthController", label="Service"),
        cls("AuthService"),
        {"type": "ADD_EDGE", "label": "USES", "from": {"name": "AuthService"}, "to": {"name": "AuthService"}},
    )
    with FakeOpenAI([wrong, answer(cls("AuthController")), EDGE_DONE]) as server:
        result = go(server)
    assert result.stop_reason == "finished"
    counts = result.action_counts()
    assert counts["rejected_by_code"] == {"UNKNOWN_EDGE_TYPE": 1, "UNKNOWN_NODE_TYPE": 1}
    assert counts["accepted"] == 3
    second = user_messages(server)[1]
    assert "UNKNOWN_NODE_TYPE" in second and "UNKNOWN_EDGE_TYPE" in second
    assert {result.state.node_type(n) for n in result.state.graph.nodes} == {"Class"}


def test_server_rejecting_response_format_runs_in_text_mode() -> None:
    """Both structured modes refused: the run goes on in text mode, chosen once for the session."""
    with FakeOpenAI([NODES, EDGE_DONE], reject={"json_schema", "json_object"}) as server:
        result = go(server)
    assert result.stop_reason == "finished" and result.state.edge_count == 1
    assert [r.answered for r in server.requests] == ["rejected_response_format"] * 2 + ["reply"] * 2
    assert [r.exchange["mode"] for r in result.records] == ["text", "text"]


def test_429_500_hang_and_drop_are_survived() -> None:
    """Rate limits (Retry-After honoured), 500s, a hang past the timeout and a dropped connection."""
    sleeps = Sleeps()
    script = [
        Reply(status=429, headers={"Retry-After": "3"}),
        NODES,
        Reply(status=500),
        Reply(hang=5, content=EDGE_DONE),
        Reply(drop=True),
        EDGE_DONE,
    ]
    with FakeOpenAI(script) as server:
        result = go(server, sleeps=sleeps)
    assert result.stop_reason == "finished" and (result.state.node_count, result.state.edge_count) == (2, 1)
    assert sleeps[0] == 3.0 and len(sleeps) == 4
    assert [len(r.exchange["attempts"]) for r in result.records] == [1, 3]


def test_truncated_output_keeps_whole_actions_and_asks_for_fewer() -> None:
    """finish_reason length: the whole action counts, the cut one never does; the next prompt asks for
    fewer."""
    full = answer(cls("AuthController"), cls("AuthService"))
    cut = full[: full.index("AuthService") + 4]
    with FakeOpenAI(
        [Reply(content=cut, finish_reason="length"), answer(cls("AuthService")), EDGE_DONE]
    ) as server:
        result = go(server)
    first = result.records[0]
    assert first.truncated and first.accepted == 1 and len(first.actions) == 1
    assert not any(
        "Auth" == n.get("name") for n in (result.state.node_properties(x) for x in result.state.graph.nodes)
    )
    assert result.stop_reason == "finished" and (result.state.node_count, result.state.edge_count) == (2, 1)
    second = user_messages(server)[1]
    assert "cut off" in second and "Send at most 1 action(s) per answer" in second


def test_refusal_is_shown_to_the_model_next_time() -> None:
    """A refusal applies nothing; the next observation tells the model."""
    with FakeOpenAI([Reply(refusal="I cannot do that"), NODES, EDGE_DONE]) as server:
        result = go(server)
    assert result.stop_reason == "finished" and result.records[0].notes
    assert "you refused to answer (I cannot do that)" in user_messages(server)[1]


def test_budget_runs_out_before_overspending() -> None:
    """The run stops with budget_exhausted before a call that could overspend; the graph so far stays."""
    with FakeOpenAI([NODES, answer(cls("Extra")), EDGE_DONE]) as server:
        probe = go(server, llm={"max_output_tokens": 200})
    first, second = probe.records[0], probe.records[1]
    # exactly what the check before call 2 needs: spent so far + call 2's prompt estimate + max_output_tokens
    budget = first.usage["total_tokens"] + messages_tokens(second.exchange["request"]["messages"]) + 200
    with FakeOpenAI([NODES, answer(cls("Extra")), EDGE_DONE]) as server:
        result = go(server, llm={"max_output_tokens": 200, "token_budget": budget})
    assert result.stop_reason == "budget_exhausted" and "token budget" in result.error
    assert len(server.requests) == 2 and result.iterations == 2
    assert result.summary()["tokens"]["total"] <= budget
    assert result.state.node_count == 3


def test_retries_exhausted_end_with_agent_error_and_keep_the_graph(tmp_path: Path) -> None:
    """When retries run out the run stops with agent_error; the graph so far is kept and exportable."""
    with FakeOpenAI([NODES] + [Reply(status=503)] * 3) as server:
        result = go(server, llm={"max_retries": 2})
    assert result.stop_reason == "agent_error"
    assert "failed after 3 attempts" in result.error and "HTTP 503" in result.error
    assert result.state.node_count == 2 and result.summary()["nodes"] == 2
    document = result.state.to_document(make_request().config.schema_)
    assert len(document.nodes) == 2


def test_async_run_on_a_running_event_loop() -> None:
    """``arun`` awaits the async agent on the caller's event loop."""
    import asyncio

    with FakeOpenAI([NODES, EDGE_DONE]) as server:
        request = make_request(context_data=CONTEXT, llm={"timeout_seconds": 1})
        settings = settings_for(server, request, key=None)
        result = asyncio.run(arun(request, AsyncLLMAgent(settings, request)))
    assert result.stop_reason == "finished"
    assert server.requests[0].headers["authorization"] == "Bearer igg-no-key"


# ---- the command line ----------------------------------------------------------------------------------
def write_request(tmp_path: Path, **llm: Any) -> Path:
    payload = json.loads(Path("fixtures/seed_request.json").read_text())
    payload["context_data"] = CONTEXT
    payload["config"]["llm"] = {"timeout_seconds": 1, "max_retries": 2, **llm}
    path = tmp_path / "request.json"
    path.write_text(json.dumps(payload))
    return path


def test_cli_llm_run_replays_offline_to_the_same_graph(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A recorded LLM run (truncation, invalid JSON, a refusal included) replays with script: exactly."""
    request = write_request(tmp_path)
    full = answer(cls("AuthController"), cls("AuthService"))
    script = [
        Reply(content=full[: full.index("AuthService") + 4], finish_reason="length"),
        "not json at all",
        Reply(refusal="no"),
        Reply(status=429, headers={"Retry-After": "0"}),
        answer(cls("AuthService")),
        EDGE_DONE,
    ]
    with FakeOpenAI(script) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        assert main(["run", str(request), "--agent", "llm", "--out", str(tmp_path / "live"), "--json"]) == 0
    live = json.loads(capsys.readouterr().out)
    assert live["stop_reason"] == "finished" and live["tokens"]["total"] > 0
    monkeypatch.delenv("OPENAI_BASE_URL")
    transcript = tmp_path / "live" / "transcript.jsonl"
    assert (
        main(
            [
                "run",
                str(request),
                "--agent",
                f"script:{transcript}",
                "--out",
                str(tmp_path / "replay"),
                "--json",
            ]
        )
        == 0
    )
    replay = json.loads(capsys.readouterr().out)
    for key in ("stop_reason", "iterations", "nodes", "edges", "actions", "invalid_turns", "truncated_turns"):
        assert replay[key] == live[key], key
    graphs = [json.loads((tmp_path / d / "graph.json").read_text()) for d in ("live", "replay")]
    assert [g["nodes"] for g in graphs][0] == [g["nodes"] for g in graphs][1]
    assert graphs[0]["edges"] == graphs[1]["edges"]


def test_cli_llm_without_endpoint_is_one_line_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """--agent llm with neither OPENAI_API_KEY nor OPENAI_BASE_URL: one clear line, exit code 2."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert main(["run", str(write_request(tmp_path)), "--agent", "llm"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "OPENAI_API_KEY" in err and "OPENAI_BASE_URL" in err


def test_cli_agent_error_keeps_an_exportable_graph(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Retries exhausted from the CLI: exit 1, stop agent_error, graph.json written with the nodes so far."""
    request = write_request(tmp_path, max_retries=0)
    with FakeOpenAI([NODES, Reply(status=500)]) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        assert main(["run", str(request), "--agent", "llm", "--out", str(tmp_path / "out"), "--json"]) == 1
    summary = json.loads(capsys.readouterr().out)
    assert summary["stop_reason"] == "agent_error" and "HTTP 500" in summary["error"]
    graph = json.loads((tmp_path / "out" / "graph.json").read_text())
    assert len(graph["nodes"]) == 2


def test_cost_per_iteration_and_in_total(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """With a price table each iteration records its cost; --json and the human summary carry the total."""
    prices = {"input_per_million": 150.0, "output_per_million": 600.0}
    usage = {"prompt_tokens": 1000, "completion_tokens": 100, "total_tokens": 1100}
    request = write_request(tmp_path, prices=prices)
    for flags in (["--json"], []):
        with FakeOpenAI([Reply(content=NODES, usage=usage), Reply(content=EDGE_DONE, usage=usage)]) as server:
            monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
            assert main(["run", str(request), "--agent", "llm", "--out", str(tmp_path / "out"), *flags]) == 0
        out = capsys.readouterr().out
        if flags:
            tokens = json.loads(out)["tokens"]
            assert tokens["total"] == 2200 and tokens["cost"] == pytest.approx(2 * (0.15 + 0.06))
        else:
            assert "2200 (2000 prompt + 200 completion), cost 0.420000" in out
    records = [json.loads(line) for line in (tmp_path / "out" / "records.jsonl").read_text().splitlines()]
    assert [r["usage"]["cost"] for r in records] == [pytest.approx(0.21)] * 2


def test_the_bundled_auth_transcript_through_the_llm_agent_gives_the_scripted_graph(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The auth fixture's turns served as model output (with faults between them) build the same graph."""
    request = Path("fixtures/auth/request.json")
    transcript = Path("fixtures/auth/transcript.jsonl")
    script: list[str | Reply] = []
    for i, line in enumerate(transcript.read_text().splitlines()):
        turn = json.loads(line)
        if i % 4 == 1:
            script.append(Reply(status=429, headers={"Retry-After": "0"}))
        if "raw" in turn:
            script.append(
                Reply(content=turn["raw"], finish_reason="length" if turn.get("truncated") else "stop")
            )
        else:
            script.append(json.dumps(turn))
    assert (
        main(
            [
                "run",
                str(request),
                "--agent",
                f"script:{transcript}",
                "--out",
                str(tmp_path / "script"),
                "--json",
            ]
        )
        == 0
    )
    scripted = json.loads(capsys.readouterr().out)
    with FakeOpenAI(script, reject={"json_schema"}) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        assert main(["run", str(request), "--agent", "llm", "--out", str(tmp_path / "llm"), "--json"]) == 0
    live = json.loads(capsys.readouterr().out)
    for key in ("stop_reason", "iterations", "nodes", "edges", "actions", "invalid_turns", "truncated_turns"):
        assert live[key] == scripted[key], key
    graphs = [json.loads((tmp_path / d / "graph.json").read_text()) for d in ("script", "llm")]
    assert graphs[0]["nodes"] == graphs[1]["nodes"] and graphs[0]["edges"] == graphs[1]["edges"]
    assert server.remaining == 0
