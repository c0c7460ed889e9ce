"""The LLM agent against a real OpenAI-compatible server on loopback, through the real ``openai`` client."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from conftest import make_request
from structlog.testing import capture_logs
from support.fake_openai import FakeOpenAI, Reply
from support.llm import KEY, Sleeps, settings_for

from igg.agents.base import Observation
from igg.agents.llm import AsyncLLMAgent, LLMAgent
from igg.agents.llm_settings import EndpointNotConfigured, LLMSettings
from igg.agents.retry import RetryPolicy
from igg.errors import AgentFailed, BudgetExhausted, RequestInvalid
from igg.models.request import LLMConfig

ANSWER = json.dumps(
    {
        "reasoning": "r",
        "actions": [{"type": "ADD_NODE", "label": "Class", "properties": {"name": "A", "package": "p"}}],
    }
)


def make_agent(
    server: FakeOpenAI, *, sleeps: Sleeps | None = None, agent_cls: type = LLMAgent, **llm: Any
) -> Any:
    llm = {"timeout_seconds": 2.0, "max_retries": 3, "model": "test-model", **llm}
    request = make_request(llm=llm)
    settings = settings_for(server, request)
    sleeps = sleeps if sleeps is not None else Sleeps()
    policy = RetryPolicy(
        max_retries=settings.config.max_retries,
        base_delay=0.5,
        max_delay=4.0,
        sleep=sleeps,
        asleep=sleeps.asleep,
        random=lambda: 0.5,
    )
    return agent_cls(settings, request, policy)


def observation(iteration: int = 1, **kw: Any) -> Observation:
    return Observation(
        session_id="s1", iteration=iteration, markdown="# Goal\nMap the auth module.", tokens=10, **kw
    )


@pytest.fixture
def server():
    with FakeOpenAI() as s:
        yield s


def test_sends_contract_observation_chunk_and_settings(server: FakeOpenAI) -> None:
    """The request carries the system contract, the markdown, the labelled context chunk and the settings."""
    server.add(ANSWER)
    agent = make_agent(server, temperature=0.2, seed=7, max_output_tokens=512)
    turn = agent(
        observation(context="class A {}\n```", chunk_index=1, chunk_count=3, chunk_label="src/A.java")
    )
    assert turn.raw == ANSWER and not turn.truncated and turn.note is None
    (req,) = server.requests
    body = req.body
    assert req.headers["authorization"] == f"Bearer {KEY}"
    assert body["model"] == "test-model" and body["temperature"] == 0.2 and body["seed"] == 7
    assert body["max_tokens"] == 512
    system, user = body["messages"]
    assert (
        system["role"] == "system"
        and "identity keys" in system["content"]
        and '"finished": true' in system["content"]
    )
    assert user["content"].startswith("# Goal\nMap the auth module.")
    assert '## Context text (chunk 2/3: "src/A.java")\n````text\nclass A {}\n```\n````' in user["content"]
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema"
    add_node = fmt["json_schema"]["schema"]["properties"]["actions"]["items"]["anyOf"][0]
    assert add_node["properties"]["label"]["enum"] == ["Class", "Interface", "Method", "DatabaseTable"]
    assert turn.usage is not None and turn.usage.prompt_tokens > 0 and not turn.usage.estimated
    assert turn.exchange["request"]["messages"] == body["messages"]
    # the answer text is stored once, as the turn's raw output; the recorded response points at it
    assert (
        turn.exchange["response"]["choices"][0]["message"]["content"]
        == f"<{len(ANSWER)} characters: the record's raw_output>"
    )
    assert agent.totals.calls == 1 and agent.totals.total_tokens == turn.usage.total_tokens
    assert KEY not in json.dumps(turn.exchange)


@pytest.mark.parametrize(
    "reject, mode", [({"json_schema"}, "json_object"), ({"json_schema", "json_object"}, "text")]
)
def test_rejected_response_format_falls_back_and_is_remembered(reject: set[str], mode: str) -> None:
    """A server that refuses response_format gets the next mode; the choice is kept and logged."""
    with FakeOpenAI([ANSWER, ANSWER], reject=reject) as server, capture_logs() as logs:
        agent = make_agent(server)
        assert agent(observation(1)).raw == ANSWER
        assert agent(observation(2)).raw == ANSWER
    answered = [r.answered for r in server.requests]
    assert answered == ["rejected_response_format"] * len(reject) + ["reply", "reply"]
    formats = [(r.body.get("response_format") or {}).get("type", "text") for r in server.requests]
    assert formats[-2:] == [mode, mode]
    assert agent.mode == mode
    assert [e["mode"] for e in logs if e["event"] == "llm_output_mode"][-1] == mode


def test_429_honours_retry_after() -> None:
    """429 with Retry-After (seconds, or retry-after-ms) waits what the server asked, then succeeds."""
    with FakeOpenAI(
        [
            Reply(status=429, headers={"Retry-After": "2"}),
            Reply(status=429, headers={"retry-after-ms": "250"}),
            ANSWER,
        ]
    ) as server:
        sleeps = Sleeps()
        turn = make_agent(server, sleeps=sleeps)(observation())
    assert turn.raw == ANSWER
    assert sleeps == [2.0, 0.25]
    assert [a["status"] for a in turn.exchange["attempts"]] == [429, 429]


def test_5xx_backoff_is_exponential_and_bounded() -> None:
    """500s are retried with doubling, jittered delays capped at max_delay."""
    with FakeOpenAI([Reply(status=500)] * 5 + [ANSWER]) as server:
        sleeps = Sleeps()
        turn = make_agent(server, sleeps=sleeps, max_retries=5)(observation())
    assert turn.raw == ANSWER
    assert sleeps == [0.375, 0.75, 1.5, 3.0, 3.0]  # 0.5*2^k * (1 - 0.5 + 0.5*0.5), capped at 4.0*0.75


def test_hang_longer_than_timeout_and_dropped_connection_are_retried() -> None:
    """A hung call times out at config.llm.timeout_seconds (not the client's 600 s) and is retried."""
    with FakeOpenAI([Reply(hang=10, content=ANSWER), Reply(drop=True), ANSWER]) as server:
        agent = make_agent(server, timeout_seconds=1.0)
        turn = agent(observation())
    assert turn.raw == ANSWER
    first, second = turn.exchange["attempts"]
    # by the agent's own clock: the hung attempt ended at its deadline, not at the hang's 10 s
    assert first["error"].startswith("timed out") and first["at_ms"] < 5000
    assert "connection error" in second["error"] and turn.exchange["elapsed_ms"] < 5000


def test_adapted_attempts_are_not_retries() -> None:
    """A refused response_format is tried again at once and costs no retry: two refusals, a 500 and an
    answer with max_retries=1; every attempt is recorded, only the 500 waited for."""
    with FakeOpenAI([Reply(status=500), ANSWER], reject={"json_schema", "json_object"}) as server:
        sleeps = Sleeps()
        turn = make_agent(server, sleeps=sleeps, max_retries=1)(observation())
    assert turn.raw == ANSWER and sleeps == [0.375]
    attempts = turn.exchange["attempts"]
    assert [a["status"] for a in attempts] == [400, 400, 500]
    assert [a.get("adapted", False) for a in attempts] == [True, True, False]
    assert attempts[2]["retry_in"] == 0.375 and "retry_in" not in attempts[0]


def test_retries_exhausted_raise_agent_failed_with_one_line_reason() -> None:
    """After max_retries the agent fails with one line naming the attempts and the last error, never the
    key."""
    with (
        FakeOpenAI([Reply(status=503, message="overloaded\nplease retry")] * 3) as server,
        capture_logs() as logs,
    ):
        agent = make_agent(server, max_retries=2)
        with pytest.raises(AgentFailed) as err:
            agent(observation())
    message = str(err.value)
    assert "\n" not in message
    assert (
        "failed after 3 attempts (config.llm.max_retries=2); last: HTTP 503: overloaded please retry"
        in message
    )
    assert len(server.requests) == 3
    assert KEY not in repr(logs) and KEY not in message


def test_non_retryable_error_fails_at_once() -> None:
    """A 401 is not retried."""
    with FakeOpenAI([Reply(status=401, message="invalid api key")]) as server:
        with pytest.raises(AgentFailed, match="HTTP 401: invalid api key"):
            make_agent(server)(observation())
    assert len(server.requests) == 1


def test_missing_usage_is_estimated() -> None:
    """A server that omits usage gets an estimate, marked as such."""
    with FakeOpenAI([Reply(content=ANSWER, usage=None)]) as server:
        turn = make_agent(server)(observation())
    assert turn.usage is not None and turn.usage.estimated
    assert turn.usage.prompt_tokens > 100 and turn.usage.completion_tokens > 10


@pytest.mark.parametrize(
    "reply, words",
    [
        (Reply(refusal="I can't help with that."), "you refused"),
        (Reply(no_choices=True), "empty choices"),
        (Reply(content=None, finish_reason="content_filter"), "no text"),
    ],
)
def test_refusal_and_empty_answers_become_turns_with_a_note(reply: Reply, words: str) -> None:
    """No actions and a note for the loop to show the model next time; the exchange keeps what came back."""
    with FakeOpenAI([reply]) as server:
        turn = make_agent(server)(observation(1))
    assert turn.response == {"reasoning": "", "actions": []} and turn.raw is None
    assert turn.note and words in turn.note
    assert turn.exchange["response"]["id"].startswith("chatcmpl-fake")


def test_token_budget_stops_before_a_call_that_could_overspend() -> None:
    """The check runs before the call: the server never sees a request the budget cannot pay for."""
    with FakeOpenAI([ANSWER, ANSWER]) as server:
        agent = make_agent(server, max_output_tokens=100, token_budget=1200)  # one call fits, two do not
        first = agent(observation(1))
        spent = first.usage.total_tokens
        with pytest.raises(
            BudgetExhausted, match=rf"token budget: {spent} of 1200 tokens spent; the next call could use"
        ):
            agent(observation(2))
    assert len(server.requests) == 1
    assert agent.totals.total_tokens <= 1200


def test_cost_budget_uses_the_price_table() -> None:
    """Cost is priced per call; the cost budget refuses the call that could exceed it."""
    prices = {"input_per_million": 1000.0, "output_per_million": 2000.0}
    with FakeOpenAI(
        [Reply(content=ANSWER, usage={"prompt_tokens": 300, "completion_tokens": 50, "total_tokens": 350})]
    ) as server:
        agent = make_agent(server, max_output_tokens=100, prices=prices, cost_budget=1.2)
        turn = agent(observation(1))
        assert turn.usage.cost == pytest.approx(0.3 + 0.1)
        with pytest.raises(BudgetExhausted, match="cost budget"):
            agent(observation(2))
    assert len(server.requests) == 1


def test_cost_budget_without_prices_is_invalid() -> None:
    with FakeOpenAI() as server, pytest.raises(RequestInvalid, match="config.llm.cost_budget"):
        make_agent(server, cost_budget=1.0)


def test_async_agent_retries_and_answers() -> None:
    """The async agent shares the policy: 429 then an answer."""
    with FakeOpenAI([Reply(status=429, headers={"Retry-After": "1"}), ANSWER]) as server:
        sleeps = Sleeps()
        agent = make_agent(server, sleeps=sleeps, agent_cls=AsyncLLMAgent)

        async def go() -> Any:
            try:
                return await agent(observation())
            finally:
                await agent.aclose()

        turn = asyncio.run(go())
    assert turn.raw == ANSWER and sleeps == [1.0]


def test_settings_from_environment() -> None:
    """Neither key nor URL: a clear error; the model comes from config, then IGG_MODEL, then the default."""
    with pytest.raises(EndpointNotConfigured, match="set OPENAI_API_KEY .* or OPENAI_BASE_URL"):
        LLMSettings.from_env(LLMConfig(), {})
    env = {"OPENAI_BASE_URL": "http://localhost:11434/v1", "IGG_MODEL": "llama3.1"}
    assert LLMSettings.from_env(LLMConfig(), env).model == "llama3.1"
    assert LLMSettings.from_env(LLMConfig(model="qwen2.5"), env).model == "qwen2.5"
    settings = LLMSettings.from_env(LLMConfig(), {"OPENAI_API_KEY": KEY})
    assert settings.model == "gpt-4o-mini" and settings.base_url is None and KEY not in repr(settings)


def test_environment_defaults_for_settings_the_request_leaves_unset() -> None:
    """IGG_MAX_OUTPUT_TOKENS / IGG_LLM_TIMEOUT fill what config.llm does not set; bad values: one clear
    line."""
    env = {
        "OPENAI_BASE_URL": "http://localhost:1/v1",
        "IGG_MAX_OUTPUT_TOKENS": "32",
        "IGG_LLM_TIMEOUT": "7.5",
    }
    settings = LLMSettings.from_env(LLMConfig(), env)
    assert (settings.config.max_output_tokens, settings.config.timeout_seconds) == (32, 7.5)
    assert LLMSettings.from_env(LLMConfig(max_output_tokens=100), env).config.max_output_tokens == 100
    with pytest.raises(
        EndpointNotConfigured, match="IGG_MAX_OUTPUT_TOKENS='8': .*greater than or equal to 16"
    ):
        LLMSettings.from_env(LLMConfig(), {**env, "IGG_MAX_OUTPUT_TOKENS": "8"})


def test_rejected_parameters_are_adapted_for_the_session() -> None:
    """max_tokens -> max_completion_tokens, and a refused temperature is no longer sent."""
    script = [
        Reply(
            status=400,
            message="Unsupported parameter: 'max_tokens' is not supported with this model. "
            "Use 'max_completion_tokens' instead.",
        ),
        Reply(
            status=400,
            message="Unsupported value: 'temperature' does not support 0.0 with this "
            "model. Only the default (1) value is supported.",
        ),
        ANSWER,
        ANSWER,
    ]
    with FakeOpenAI(script) as server:
        agent = make_agent(server)
        agent(observation(1))
        agent(observation(2))
    first, second, third, fourth = (r.body for r in server.requests)
    assert "max_tokens" in first and "temperature" in first
    assert "max_completion_tokens" in second and "max_tokens" not in second
    assert "temperature" not in third and "temperature" not in fourth and "max_completion_tokens" in fourth
    assert fourth["response_format"]["type"] == "json_schema"


def test_unrelated_bad_request_fails_at_once_without_dropping_the_mode() -> None:
    """A 400 that is not about the output format is final: no retries, no fallback."""
    with FakeOpenAI(
        [Reply(status=400, message="This model's maximum context length is 8192 tokens")]
    ) as server:
        agent = make_agent(server)
        with pytest.raises(AgentFailed, match="HTTP 400: This model's maximum context length"):
            agent(observation())
    assert len(server.requests) == 1 and agent.mode == "json_schema"


def test_registry_builds_the_llm_agent_for_llm_and_auto(monkeypatch: pytest.MonkeyPatch) -> None:
    """--agent llm and --agent auto (with an endpoint) give the async LLM agent; without one, a clear
    error."""
    from igg.agents.registry import make_agent as make

    request = make_request(llm={"model": "m1"})
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    for spec in ("llm", "auto"):
        agent = make(spec, request)
        assert isinstance(agent, AsyncLLMAgent) and agent.settings.model == "m1"
        assert agent.settings.base_url == "http://127.0.0.1:9/v1"
    monkeypatch.delenv("OPENAI_BASE_URL")
    with pytest.raises(EndpointNotConfigured, match="needs an endpoint"):
        make("llm", request)


def test_truncated_answer_is_flagged_and_later_prompts_ask_for_fewer_actions() -> None:
    """finish_reason length: truncated=True; from then on the prompt caps the actions at what arrived
    whole."""
    two = json.dumps(
        {
            "reasoning": "r",
            "actions": [
                {"type": "ADD_NODE", "label": "Class", "properties": {"name": "A", "package": "p"}},
                {"type": "ADD_NODE", "label": "Class", "properties": {"name": "B", "package": "p"}},
            ],
        }
    )
    cut = two[: two.index('"B"') + 2]
    with FakeOpenAI([Reply(content=cut, finish_reason="length"), ANSWER, ANSWER]) as server:
        agent = make_agent(server)
        turn = agent(observation(1))
        assert turn.truncated and turn.raw == cut
        assert "Send at most" not in server.requests[0].body["messages"][1]["content"]
        agent(observation(2))
        agent(observation(3))
    assert agent.action_cap == 1
    for req in server.requests[1:]:
        assert "## Answer size\n- Send at most 1 action(s) per answer" in req.body["messages"][1]["content"]


def test_endpoint_shown_in_messages_drops_credentials() -> None:
    """A base URL with user:password or a query never shows them in logs or errors."""
    settings = LLMSettings.from_env(
        LLMConfig(), {"OPENAI_BASE_URL": "https://u:secret@llm.example:8443/v1?k=s"}
    )
    assert settings.endpoint == "https://llm.example:8443/v1"
