"""The LLM agent: any OpenAI-compatible chat completions endpoint, through the official ``openai`` client.

``LLMAgent`` (sync) and ``AsyncLLMAgent`` share one session core that decides everything; they only differ
in how they call and sleep. Per turn the core

1. builds the messages (``igg.agents.prompt``) and refuses a call that could overspend the budget
   (``BudgetExhausted``, see ``igg.agents.budget``);
2. asks for structured output in the best mode the server accepts: ``json_schema`` -> ``json_object`` ->
   ``text`` (a 400/422 naming ``response_format`` steps down; the mode is kept for the session and logged);
   ``max_tokens``, ``temperature`` and ``seed`` rejections are adapted the same way;
3. retries 429/5xx/timeouts/connection errors per ``igg.agents.retry`` and raises ``AgentFailed`` with a
   one-line reason when retries run out or the error is not retryable;
4. returns an ``AgentTurn``: ``raw`` is the model's text (so a transcript replays exactly), ``truncated``
   on ``finish_reason: length``, ``usage`` with tokens and cost, ``exchange`` with the raw request/response
   and every failed attempt, and a ``note`` when the model should hear about a problem (truncation,
   refusal, no choices) next time.

The API key comes from the environment and is never logged or recorded.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

import openai
import structlog

from igg.agents.base import AgentTurn, Observation
from igg.agents.budget import Budget, Totals, messages_tokens
from igg.agents.prompt import messages, response_schema
from igg.agents.retry import RetryPolicy, describe_error, is_retryable
from igg.errors import AgentFailed, AgentUnavailable, ResponseInvalid
from igg.models.request import LLMConfig, Request

OutputMode = Literal["json_schema", "json_object", "text"]
"""How the answer's format is requested: a JSON Schema, JSON mode, or plain text read by the shared parser."""

MODES: tuple[OutputMode, ...] = ("json_schema", "json_object", "text")
DEFAULT_MODEL = "gpt-4o-mini"
_FORMAT_WORDS = ("response_format", "json_schema", "json_object", "schema", "format", "guided", "grammar")
"""Words by which a 400/422 is recognised as a refusal of the requested output format."""
NO_KEY = "igg-no-key"
"""Sent as the key to servers that need none (the client insists on one)."""

log = structlog.get_logger("igg.llm")


class EndpointNotConfigured(AgentUnavailable):
    """Neither OPENAI_API_KEY nor OPENAI_BASE_URL is set (the CLI exits 2 with this one line)."""

    exit_code = 2
    """A setting the user must supply: invalid input, not a failure."""


def endpoint_configured(environ: Mapping[str, str] | None = None) -> bool:
    """True when an LLM endpoint is configured (OPENAI_API_KEY or OPENAI_BASE_URL is set)."""
    env = os.environ if environ is None else environ
    return bool(env.get("OPENAI_API_KEY") or env.get("OPENAI_BASE_URL"))


@dataclass(kw_only=True)
class LLMSettings:
    """Where and how to call the model; build with ``from_env`` in an entry point."""

    base_url: str | None = None
    """None: the client's default (api.openai.com)."""
    api_key: str = field(default=NO_KEY, repr=False)
    model: str = DEFAULT_MODEL
    config: LLMConfig = field(default_factory=LLMConfig)

    @classmethod
    def from_env(cls, config: LLMConfig | None = None, environ: Mapping[str, str] | None = None) -> LLMSettings:
        """Settings from OPENAI_API_KEY, OPENAI_BASE_URL, IGG_MODEL and the request's ``config.llm``."""
        env = os.environ if environ is None else environ
        if not endpoint_configured(env):
            raise EndpointNotConfigured(
                "the LLM agent needs an endpoint: set OPENAI_API_KEY (OpenAI) or OPENAI_BASE_URL (any "
                "OpenAI-compatible server, e.g. http://localhost:11434/v1 for Ollama)")
        config = config or LLMConfig()
        return cls(base_url=env.get("OPENAI_BASE_URL") or None, api_key=env.get("OPENAI_API_KEY") or NO_KEY,
                   model=config.model or env.get("IGG_MODEL") or DEFAULT_MODEL, config=config)

    @property
    def endpoint(self) -> str:
        """The endpoint for messages and logs: no key, no credentials or query that a URL may carry."""
        parts = urlsplit(self.base_url or "https://api.openai.com/v1")
        host = parts.hostname or ""
        netloc = f"[{host}]" if ":" in host else host
        if parts.port:
            netloc += f":{parts.port}"
        return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


@dataclass(kw_only=True)
class _Call:
    """One turn's request in the making."""

    observation: Observation
    messages: list[dict[str, str]]
    prompt_estimate: int
    attempts: list[dict[str, Any]] = field(default_factory=list)
    retries: int = 0
    started: float = field(default_factory=time.monotonic)


class _Session:
    """The decisions shared by the sync and async agents (no I/O here)."""

    def __init__(self, settings: LLMSettings, request: Request | None = None,
                 policy: RetryPolicy | None = None) -> None:
        self.settings = settings
        self.request = request
        cfg = settings.config
        self.policy = policy or RetryPolicy(max_retries=cfg.max_retries)
        self.budget = Budget(cfg)
        self.mode: OutputMode = "json_schema"
        self.dropped: set[str] = set()
        """Parameters the server rejected (temperature, seed), not sent again this session."""
        self.token_param = "max_tokens"
        self.action_cap: int | None = None
        """After a truncated answer: ask for at most this many actions per answer."""
        self._schema = response_schema(request)
        log.info("llm_agent_ready", endpoint=settings.endpoint, model=settings.model, mode=self.mode,
                 timeout_seconds=cfg.timeout_seconds, max_retries=self.policy.max_retries)

    @property
    def totals(self) -> Totals:
        """Tokens and cost this session spent so far."""
        return self.budget.totals

    def client_options(self) -> dict[str, Any]:
        return {"api_key": self.settings.api_key, "base_url": self.settings.base_url,
                "timeout": self.settings.config.timeout_seconds, "max_retries": 0}

    def begin(self, observation: Observation) -> _Call:
        hints = []
        if self.action_cap is not None:
            hints.append(f"Send at most {self.action_cap} action(s) per answer: an earlier answer was cut off "
                         "at the output token limit.")
        msgs = messages(observation, hints)
        call = _Call(observation=observation, messages=msgs, prompt_estimate=messages_tokens(msgs))
        self.budget.check(call.prompt_estimate, self.settings.config.max_output_tokens)
        return call

    def params(self, call: _Call) -> dict[str, Any]:
        cfg = self.settings.config
        params: dict[str, Any] = {"model": self.settings.model, "messages": call.messages,
                                  self.token_param: cfg.max_output_tokens}
        if "temperature" not in self.dropped:
            params["temperature"] = cfg.temperature
        if cfg.seed is not None and "seed" not in self.dropped:
            params["seed"] = cfg.seed
        if self.mode == "json_schema":
            params["response_format"] = {"type": "json_schema", "json_schema": {
                "name": "igg_response", "schema": self._schema, "strict": False}}
        elif self.mode == "json_object":
            params["response_format"] = {"type": "json_object"}
        return params

    def failed(self, call: _Call, error: Exception) -> float | None:
        """Decide after a failed attempt: None to try again at once (adapted), a delay to retry after.

        Raises ``AgentFailed`` when the error is final or the retries are used up.
        """
        reason = describe_error(error)
        attempt: dict[str, Any] = {"error": reason, "mode": self.mode,
                                   "status": getattr(error, "status_code", None)}
        call.attempts.append(attempt)
        if isinstance(error, openai.APIStatusError) and error.status_code in (400, 422) and self._adapt(error):
            attempt["adapted"] = True
            return None
        if not is_retryable(error):
            raise AgentFailed(f"LLM call to {self.settings.endpoint} failed: {reason}")
        if call.retries >= self.policy.max_retries:
            raise AgentFailed(f"LLM call to {self.settings.endpoint} failed after {call.retries + 1} attempts "
                              f"(config.llm.max_retries={self.policy.max_retries}); last: {reason}")
        call.retries += 1
        delay = self.policy.delay(call.retries, error)
        attempt["retry_in"] = round(delay, 3)
        log.warning("llm_call_failed", iteration=call.observation.iteration, attempt=len(call.attempts),
                    error=reason, retry_in=round(delay, 3))
        return delay

    def _adapt(self, error: openai.APIStatusError) -> bool:
        """Adapt to a parameter the server rejected; False when there is nothing left to adapt."""
        param = str(getattr(error, "param", None) or "")
        text = f"{param} {describe_error(error)}".lower()
        if self.token_param == "max_tokens" and "max_completion_tokens" in text:
            self.token_param = "max_completion_tokens"
            log.info("llm_parameter_adapted", parameter="max_tokens", now="max_completion_tokens")
            return True
        for name in ("temperature", "seed"):
            if name not in self.dropped and (param == name or f"'{name}'" in text) \
                    and "response_format" not in text:
                self.dropped.add(name)
                log.info("llm_parameter_adapted", parameter=name, now="not sent")
                return True
        if self.mode != "text" and (param == "response_format" or any(w in text for w in _FORMAT_WORDS)):
            old = self.mode
            self.mode = MODES[MODES.index(old) + 1]
            log.info("llm_output_mode", mode=self.mode, previous=old, reason=describe_error(error))
            return True
        return False

    def finish(self, call: _Call, params: dict[str, Any], completion: Any) -> AgentTurn:
        """The turn for a completion the server returned."""
        choice = completion.choices[0] if completion.choices else None
        message = choice.message if choice is not None else None
        text = message.content if message is not None else None
        refusal = getattr(message, "refusal", None) if message is not None else None
        finish_reason = choice.finish_reason if choice is not None else None
        reported = completion.usage
        usage = self.budget.usage(
            prompt_tokens=reported.prompt_tokens if reported else None,
            completion_tokens=reported.completion_tokens if reported else None,
            prompt_estimate=call.prompt_estimate, completion_text=text or refusal or "")
        exchange = {"endpoint": self.settings.endpoint, "mode": self.mode, "request": params,
                    "response": completion.model_dump(mode="json", exclude_none=True),
                    "attempts": call.attempts,
                    "elapsed_ms": round((time.monotonic() - call.started) * 1000, 1)}
        log.info("llm_call", iteration=call.observation.iteration, model=self.settings.model, mode=self.mode,
                 finish_reason=finish_reason, prompt_tokens=usage.prompt_tokens,
                 completion_tokens=usage.completion_tokens, estimated=usage.estimated,
                 retries=call.retries, elapsed_ms=exchange["elapsed_ms"])
        turn = AgentTurn(raw=text, usage=usage, exchange=exchange)
        if choice is None:
            return self._problem(turn, "the server returned no answer (empty choices); answer again")
        if refusal:
            return self._problem(turn, f"you refused to answer ({_clip(refusal)}); the task is to extract a graph "
                                       "from the given data: answer with the JSON object")
        if text is None:
            return self._problem(turn, f"the server returned no text (finish_reason {finish_reason!r}); "
                                       "answer again with the JSON object")
        if finish_reason == "length":
            turn.truncated = True
            whole = _whole_actions(text)
            cap = max(1, whole)
            self.action_cap = cap if self.action_cap is None else min(self.action_cap, cap)
            log.warning("llm_answer_truncated", iteration=call.observation.iteration, whole_actions=whole,
                        max_output_tokens=self.settings.config.max_output_tokens, action_cap=self.action_cap)
        return turn

    def _problem(self, turn: AgentTurn, note: str) -> AgentTurn:
        turn.raw = None
        turn.response = {"reasoning": "", "actions": []}
        turn.note = note  # the loop shows it in the next observation
        log.warning("llm_answer_unusable", note=note)
        return turn


class LLMAgent(_Session):
    """The synchronous LLM agent: ``agent(observation) -> AgentTurn``."""

    def __init__(self, settings: LLMSettings, request: Request | None = None,
                 policy: RetryPolicy | None = None) -> None:
        super().__init__(settings, request, policy)
        self.client = openai.OpenAI(**self.client_options())

    def __call__(self, observation: Observation) -> AgentTurn:
        call = self.begin(observation)
        while True:
            params = self.params(call)
            try:
                completion = self.client.chat.completions.create(**params)
            except openai.APIError as exc:
                delay = self.failed(call, exc)
                if delay:
                    self.policy.sleep(delay)
                continue
            return self.finish(call, params, completion)

    def close(self) -> None:
        """Close the HTTP connections."""
        self.client.close()


class AsyncLLMAgent(_Session):
    """The asynchronous LLM agent: ``await agent(observation) -> AgentTurn``.

    Its HTTP client belongs to the event loop that first used it; a later run on another event loop gets a
    fresh client (connection pools cannot cross event loops).
    """

    def __init__(self, settings: LLMSettings, request: Request | None = None,
                 policy: RetryPolicy | None = None) -> None:
        super().__init__(settings, request, policy)
        self.client: openai.AsyncOpenAI | None = None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    def _client(self) -> openai.AsyncOpenAI:
        running = asyncio.get_running_loop()
        if self.client is None or self._client_loop is not running:
            self.client, self._client_loop = openai.AsyncOpenAI(**self.client_options()), running
        return self.client

    async def __call__(self, observation: Observation) -> AgentTurn:
        call = self.begin(observation)
        client = self._client()
        while True:
            params = self.params(call)
            try:
                completion = await client.chat.completions.create(**params)
            except openai.APIError as exc:
                delay = self.failed(call, exc)
                if delay:
                    await self.policy.asleep(delay)
                continue
            return self.finish(call, params, completion)

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        if self.client is not None:
            await self.client.close()
            self.client = None


def create_agent(request: Request, *, environ: Mapping[str, str] | None = None,
                 asynchronous: bool = True) -> LLMAgent | AsyncLLMAgent:
    """The LLM agent for ``request`` with settings from the environment (``--agent llm``; the registry's hook).

    The async agent serves both ``run`` (driven on the run's private event loop) and ``arun``. Raises
    ``EndpointNotConfigured`` when neither OPENAI_API_KEY nor OPENAI_BASE_URL is set.
    """
    settings = LLMSettings.from_env(request.config.llm, environ)
    return (AsyncLLMAgent if asynchronous else LLMAgent)(settings, request)


def _whole_actions(text: str) -> int:
    """How many actions of a cut-off answer were received whole (the shared parser decides)."""
    from igg.agents.parsing import parse_turn

    try:
        return len(parse_turn(text, truncated=True).items)
    except ResponseInvalid:
        return 0


def _clip(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
