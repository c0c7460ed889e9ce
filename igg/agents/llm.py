"""The LLM agent: any OpenAI-compatible chat completions endpoint, through the official ``openai`` client.

``LLMAgent`` (sync) and ``AsyncLLMAgent`` share one session core that decides everything; they only differ
in how they call and sleep. Per turn the core

1. builds the messages (``igg.agents.prompt``) and refuses a call that could overspend the budget
   (``BudgetExhausted``, see ``igg.agents.budget``);
2. asks for structured output in the best mode the server accepts: ``json_schema`` -> ``json_object`` ->
   ``text`` (a 400/422 naming ``response_format`` steps down; the mode is kept for the session and logged);
   ``max_tokens``, ``temperature`` and ``seed`` rejections are adapted the same way;
3. bounds every HTTP call by a whole-call deadline: ``timeout_seconds`` from the first byte sent to the last
   byte read, however slowly the server trickles its answer (it ends within ``DEADLINE_GRACE`` seconds
   more); the ``openai`` client's timeout bounds each socket read only;
4. reads the answer itself: a 200 whose body is not UTF-8 JSON (an HTML error page, a proxy's text) is a
   transient fault like a 5xx, not a crash;
5. retries 429/5xx/timeouts/connection errors/non-JSON answers per ``igg.agents.retry`` (tenacity's
   retry loop) and raises ``AgentFailed`` with a one-line reason when retries run out or the error is not
   retryable; an attempt adapted to a rejected parameter is repeated at once and is not a retry;
6. returns an ``AgentTurn``: ``raw`` is the model's text (so a transcript replays exactly), cut to
   ``max_answer_bytes`` when bigger (reported once, ``truncated``), ``truncated`` also on
   ``finish_reason: length``, ``usage`` with tokens and cost, ``exchange`` with the request, the response
   (its message text is not repeated there: it is the turn's ``raw``) and every failed attempt, and a
   ``note`` when the model should hear about a problem (truncation, refusal, no choices) next time.

The sync ``LLMAgent`` runs the same async calls on a private event loop thread, so both share the deadline.

The API key comes from the environment and is never logged or recorded: every error text passes through
``LLMSettings.redact`` (the settings are ``igg.agents.llm_settings``), which removes the configured key's
value and the base URL's user and password whatever their shape (not only ``sk-...``-looking strings).
"""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from collections.abc import Coroutine, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

import httpx
import openai
from tenacity import RetryCallState

from igg.agents.answers import cap_text, clip, count_of, decode_answer, text_of, without_text
from igg.agents.base import AgentCapabilities, AgentTurn, Observation
from igg.agents.budget import Budget, Totals, messages_tokens
from igg.agents.llm_settings import REDACTED, LLMSettings
from igg.agents.prompt import messages, response_schema
from igg.agents.retry import (
    AnswerUnreadable,
    CallTimedOut,
    RetryHook,
    RetryPolicy,
    describe_error,
    is_retryable,
)
from igg.errors import AgentFailed, BudgetExhausted, ResponseInvalid
from igg.io.encodable import escape_unencodable
from igg.models.request import Request
from igg.record.logs import get_logger
from igg.record.records import Usage

OutputMode = Literal["json_schema", "json_object", "text"]
"""How the answer's format is requested: a JSON Schema, JSON mode, or plain text read by the shared parser."""

MODES: tuple[OutputMode, ...] = ("json_schema", "json_object", "text")
_FORMAT_WORDS = ("response_format", "json_schema", "json_object", "schema", "format", "guided", "grammar")
"""Words by which a 400/422 is recognised as a refusal of the requested output format."""
DEADLINE_GRACE = 1.0
"""Seconds a call may take beyond ``timeout_seconds`` (cancelling the request and closing its connection)."""
_T = TypeVar("_T")

log = get_logger("igg.llm")


@dataclass(kw_only=True)
class _Call:
    """One turn's request in the making."""

    observation: Observation
    messages: list[dict[str, str]]
    prompt_estimate: int
    attempts: list[dict[str, Any]] = field(default_factory=list)
    retries: int = 0
    started: float = field(default_factory=time.monotonic)
    spent: list[Usage] = field(default_factory=list)
    """What the failed attempts of this turn may have spent (estimated: the server's count never came)."""

    def spent_in_all(self, last: Usage | None = None) -> Usage | None:
        """The failed attempts' usage plus ``last`` (the answered call's), as one ``Usage``."""
        parts = [*self.spent, *([last] if last is not None else [])]
        if not parts:
            return None
        costs = [u.cost for u in parts if u.cost is not None]
        return Usage(
            prompt_tokens=sum(u.prompt_tokens for u in parts),
            completion_tokens=sum(u.completion_tokens for u in parts),
            estimated=any(u.estimated for u in parts),
            cost=sum(costs) if costs else None,
        )

    def retry_checked(self, budget: Budget, max_output_tokens: int) -> None:
        """Before a retry: ``BudgetExhausted`` (carrying what the failed attempts spent) when another attempt
        could overspend the budget, which the failed ones already count against."""
        if not self.spent:
            return
        try:
            budget.check(self.prompt_estimate, max_output_tokens)
        except BudgetExhausted as exc:
            spent = self.spent_in_all()
            exc.usage = spent.to_dict() if spent is not None else None
            raise

    def failure(self, message: str) -> AgentFailed:
        """``AgentFailed`` carrying the failed attempts and what they may have spent."""
        error = AgentFailed(message)
        error.attempts = list(self.attempts)
        spent = self.spent_in_all()
        error.usage = spent.to_dict() if spent is not None else None
        return error


class _Session:
    """What the sync and async agents share: every decision, and the one async HTTP call (``attempt``)."""

    def __init__(
        self, settings: LLMSettings, request: Request | None = None, policy: RetryPolicy | None = None
    ) -> None:
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
        self._schemas: dict[int | None, dict[str, Any]] = {}
        self._secrets = settings.secrets()
        log.info(
            "llm_agent_ready",
            endpoint=settings.endpoint,
            model=settings.model,
            mode=self.mode,
            timeout_seconds=cfg.timeout_seconds,
            max_retries=self.policy.max_retries,
        )

    @property
    def totals(self) -> Totals:
        """Tokens and cost this session spent so far."""
        return self.budget.totals

    def count_spent(self, spent: Usage) -> None:
        """A continued session's earlier calls count against the token and cost budgets."""
        self.budget.add_spent(spent)

    def client_options(self) -> dict[str, Any]:
        # the per-read timeout is a backstop: the whole-call deadline (``attempt``) fires first
        return {
            "api_key": self.settings.api_key,
            "base_url": self.settings.base_url,
            "timeout": self.settings.config.timeout_seconds + DEADLINE_GRACE,
            "max_retries": 0,
        }

    def redact(self, text: str) -> str:
        """``text`` without the key or the base URL's credentials."""
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text

    async def attempt(self, client: openai.AsyncOpenAI, params: dict[str, Any]) -> dict[str, Any]:
        """One HTTP call within the whole-call deadline; the decoded JSON body of a 200 answer.

        Raises ``CallTimedOut`` past the deadline, ``AnswerUnreadable`` for a body that is not UTF-8 JSON,
        and the ``openai`` client's errors for HTTP errors and connection failures.
        """
        timeout = self.settings.config.timeout_seconds
        try:
            async with asyncio.timeout(timeout):
                raw = await client.chat.completions.with_raw_response.create(**params)
                response: httpx.Response = raw.http_response
                body = await response.aread()
        except TimeoutError:
            raise CallTimedOut(timeout) from None
        return decode_answer(response, body)

    def begin(self, observation: Observation) -> _Call:
        hints = []
        if self.action_cap is not None:
            hints.append(
                f"Send at most {self.action_cap} action(s) per answer: an earlier answer was cut off "
                "at the output token limit."
            )
        msgs = messages(observation, hints)
        call = _Call(observation=observation, messages=msgs, prompt_estimate=messages_tokens(msgs))
        self.budget.check(call.prompt_estimate, self.settings.config.max_output_tokens)
        return call

    def params(self, call: _Call) -> dict[str, Any]:
        cfg = self.settings.config
        params: dict[str, Any] = {
            "model": self.settings.model,
            "messages": call.messages,
            self.token_param: cfg.max_output_tokens,
        }
        if "temperature" not in self.dropped:
            params["temperature"] = cfg.temperature
        if cfg.seed is not None and "seed" not in self.dropped:
            params["seed"] = cfg.seed
        if self.mode == "json_schema":
            schema = self._schemas.get(self.action_cap)
            if schema is None:
                schema = self._schemas[self.action_cap] = response_schema(
                    self.request, action_cap=self.action_cap
                )
            params["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "igg_response", "schema": schema, "strict": False},
            }
        elif self.mode == "json_object":
            params["response_format"] = {"type": "json_object"}
        return params

    def failed(self, call: _Call, error: Exception) -> bool:
        """Record a failed attempt and decide: True to try again at once (adapted to a rejected parameter;
        not a retry), False to hand the error to the retry controller (``policy.retrying``).

        Raises ``AgentFailed`` when the error is final.
        """
        reason = self.redact(describe_error(error))
        attempt: dict[str, Any] = {
            "error": reason,
            "mode": self.mode,
            "status": getattr(error, "status_code", None),
            "at_ms": round((time.monotonic() - call.started) * 1000, 1),
        }
        call.attempts.append(attempt)
        self._count_failed(call, error, attempt)
        if (
            isinstance(error, openai.APIStatusError)
            and error.status_code in (400, 422)
            and self._adapt(error)
        ):
            attempt["adapted"] = True
            return True
        if not is_retryable(error):
            raise call.failure(f"LLM call to {self.settings.endpoint} failed: {reason}")
        return False

    def _count_failed(self, call: _Call, error: Exception, attempt: dict[str, Any]) -> None:
        """Count what a failed attempt may have spent: one the server worked on (a timeout: it processed the
        prompt and generated until the client left; an unreadable 200; a server error) costs the prompt's
        estimate, and for a timeout or an unreadable answer up to ``max_output_tokens`` more, since the
        server's own count never arrives. A refused request (4xx) or a refused connection costs nothing."""
        generating = isinstance(error, CallTimedOut | AnswerUnreadable | openai.APITimeoutError)
        server_error = isinstance(error, openai.APIStatusError) and error.status_code >= 500
        if not (generating or server_error):
            return
        usage = self.budget.usage(
            prompt_tokens=None,
            prompt_estimate=call.prompt_estimate,
            completion_text="",
            completion_tokens=self.settings.config.max_output_tokens if generating else 0,
        )
        call.spent.append(usage)
        attempt["usage"] = usage.to_dict()

    def retrying(self, call: _Call) -> dict[str, RetryHook]:
        """The hooks the retry controller calls for ``call``: one logs and records a retry, one gives up."""

        def before_sleep(state: RetryCallState) -> None:
            call.retries = state.attempt_number
            delay = round(state.upcoming_sleep, 3)
            attempt = call.attempts[-1]
            attempt["retry_in"] = delay
            log.warning(
                "llm_call_failed",
                iteration=call.observation.iteration,
                attempt=len(call.attempts),
                error=attempt["error"],
                retry_in=delay,
            )

        def give_up(state: RetryCallState) -> None:
            raise call.failure(
                f"LLM call to {self.settings.endpoint} failed after {state.attempt_number} attempts "
                f"(config.llm.max_retries={self.policy.max_retries}); "
                f"last: {call.attempts[-1]['error']}"
            )

        return {"before_sleep": before_sleep, "give_up": give_up}

    def _adapt(self, error: openai.APIStatusError) -> bool:
        """Adapt to a parameter the server rejected; False when there is nothing left to adapt."""
        param = str(getattr(error, "param", None) or "")
        described = self.redact(describe_error(error))
        text = f"{param} {described}".lower()
        if self.token_param == "max_tokens" and "max_completion_tokens" in text:
            self.token_param = "max_completion_tokens"
            log.info("llm_parameter_adapted", parameter="max_tokens", now="max_completion_tokens")
            return True
        for name in ("temperature", "seed"):
            if (
                name not in self.dropped
                and (param == name or f"'{name}'" in text)
                and "response_format" not in text
            ):
                self.dropped.add(name)
                log.info("llm_parameter_adapted", parameter=name, now="not sent")
                return True
        if self.mode != "text" and (param == "response_format" or any(w in text for w in _FORMAT_WORDS)):
            old = self.mode
            self.mode = MODES[MODES.index(old) + 1]
            log.info("llm_output_mode", mode=self.mode, previous=old, reason=described)
            return True
        return False

    def finish(self, call: _Call, params: dict[str, Any], data: dict[str, Any]) -> AgentTurn:
        """The turn for the decoded body of a 200 answer."""
        choices = data.get("choices")
        choice = (
            choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else None
        )
        message = choice.get("message") if choice is not None else None
        message = message if isinstance(message, dict) else {}
        text = text_of(message.get("content"))
        refusal = text_of(message.get("refusal"))
        finish_reason = choice.get("finish_reason") if choice is not None else None
        usage_field = data.get("usage")
        reported: dict[str, Any] = usage_field if isinstance(usage_field, dict) else {}
        cut = None
        if text is not None:
            text, escaped = escape_unencodable(text)
            if escaped:
                log.warning("llm_answer_unencodable", iteration=call.observation.iteration, escaped=escaped)
            text, cut = cap_text(text, self.settings.max_answer_bytes)
        usage = self.budget.usage(
            prompt_tokens=count_of(reported.get("prompt_tokens")),
            completion_tokens=count_of(reported.get("completion_tokens")),
            prompt_estimate=call.prompt_estimate,
            completion_text=text or refusal or "",
        )
        exchange = {
            "endpoint": self.settings.endpoint,
            "mode": self.mode,
            "request": params,
            "response": without_text(data, cut),
            "attempts": call.attempts,
            "elapsed_ms": round((time.monotonic() - call.started) * 1000, 1),
        }
        log.info(
            "llm_call",
            iteration=call.observation.iteration,
            model=self.settings.model,
            mode=self.mode,
            finish_reason=finish_reason,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            estimated=usage.estimated,
            retries=call.retries,
            elapsed_ms=exchange["elapsed_ms"],
        )
        usage = call.spent_in_all(usage) or usage  # the turn's usage: every attempt's, failed ones included
        turn = AgentTurn(raw=text, usage=usage, exchange=exchange)
        if choice is None:
            return self._problem(turn, "the server returned no answer (empty choices); answer again")
        if refusal:
            return self._problem(
                turn,
                f"you refused to answer ({clip(refusal)}); the task is to extract a graph "
                "from the given data: answer with the JSON object",
            )
        if text is None:
            return self._problem(
                turn,
                f"the server returned no text (finish_reason {finish_reason!r}); "
                "answer again with the JSON object",
            )
        if cut is not None or finish_reason == "length":
            self._truncated(call, turn, text, cut)
        return turn

    def _truncated(self, call: _Call, turn: AgentTurn, text: str, cut: int | None) -> None:
        """Mark a cut (``cut``: the answer's size in bytes) or length-truncated answer, with a note for the
        model, and cap the actions asked for next by how many arrived whole."""
        if cut is not None:
            turn.truncated = True
            turn.note = (
                f"Your previous answer was {cut} bytes long; only its first {len(text.encode())} bytes "
                f"were read (the answer size limit is {self.settings.max_answer_bytes} bytes): send "
                "fewer, shorter actions."
            )
            log.warning(
                "llm_answer_cut",
                iteration=call.observation.iteration,
                answer_bytes=cut,
                kept_bytes=len(text.encode()),
                max_answer_bytes=self.settings.max_answer_bytes,
            )
        turn.truncated = True
        whole = _whole_actions(text)
        cap = max(1, whole)
        self.action_cap = cap if self.action_cap is None else min(self.action_cap, cap)
        log.warning(
            "llm_answer_truncated",
            iteration=call.observation.iteration,
            whole_actions=whole,
            max_output_tokens=self.settings.config.max_output_tokens,
            action_cap=self.action_cap,
        )

    def _problem(self, turn: AgentTurn, note: str) -> AgentTurn:
        turn.raw = None
        turn.response = {"reasoning": "", "actions": []}
        turn.note = note  # the loop shows it in the next observation
        log.warning("llm_answer_unusable", note=note)
        return turn


class LLMAgent(_Session, AgentCapabilities):
    """The synchronous LLM agent: ``agent(observation) -> AgentTurn``.

    Its calls run on a private event loop (the same whole-call deadline as the async agent), in the
    caller's thread, or in a helper thread when the caller is itself inside a running event loop; retry
    delays are slept with ``policy.sleep`` in the caller's thread. ``close()`` closes the connections and
    the loop.
    """

    def __init__(
        self, settings: LLMSettings, request: Request | None = None, policy: RetryPolicy | None = None
    ) -> None:
        super().__init__(settings, request, policy)
        self._loop = asyncio.new_event_loop()
        self.client = openai.AsyncOpenAI(**self.client_options())
        self._finalizer = weakref.finalize(self, _close_loop, self._loop, self.client)

    def _run(self, coro: Coroutine[Any, Any, _T]) -> _T:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return self._loop.run_until_complete(coro)
        result: list[_T] = []
        errors: list[BaseException] = []

        def work() -> None:
            try:
                result.append(self._loop.run_until_complete(coro))
            except BaseException as exc:  # handed to the caller's thread below
                errors.append(exc)

        helper = threading.Thread(target=work, name="igg-llm-call", daemon=True)
        helper.start()
        helper.join()
        if errors:
            raise errors[0]
        return result[0]

    def __call__(self, observation: Observation) -> AgentTurn:
        call = self.begin(observation)
        params, data = self.policy.retrying(**self.retrying(call))(self._try, call)
        return self.finish(call, params, data)

    def _try(self, call: _Call) -> tuple[dict[str, Any], dict[str, Any]]:
        """One attempt for the retry controller, repeated at once while the server's refusals are adapted
        to."""
        while True:
            call.retry_checked(self.budget, self.settings.config.max_output_tokens)
            params = self.params(call)
            try:
                return params, self._run(self.attempt(self.client, params))
            except Exception as exc:
                if not self.failed(call, exc):
                    raise

    def close(self) -> None:
        """Close the HTTP connections and the private event loop."""
        self._finalizer()


def _close_loop(loop: asyncio.AbstractEventLoop, client: openai.AsyncOpenAI) -> None:
    if loop.is_closed() or loop.is_running():
        return
    if asyncio._get_running_loop() is None:  # collected inside another loop: the sockets die with this loop
        try:
            loop.run_until_complete(client.close())
        except Exception:  # closing is best effort
            pass
    loop.close()


class AsyncLLMAgent(_Session, AgentCapabilities):
    """The asynchronous LLM agent: ``await agent(observation) -> AgentTurn``.

    Its HTTP client belongs to the event loop that first used it; a later run on another event loop gets a
    fresh client (connection pools cannot cross event loops).
    """

    def __init__(
        self, settings: LLMSettings, request: Request | None = None, policy: RetryPolicy | None = None
    ) -> None:
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
        answer: tuple[dict[str, Any], dict[str, Any]] = await self.policy.aretrying(**self.retrying(call))(
            self._try, client, call
        )
        params, data = answer
        return self.finish(call, params, data)

    async def _try(self, client: openai.AsyncOpenAI, call: _Call) -> tuple[dict[str, Any], dict[str, Any]]:
        """One attempt for the retry controller, repeated at once while the server's refusals are adapted
        to."""
        while True:
            call.retry_checked(self.budget, self.settings.config.max_output_tokens)
            params = self.params(call)
            try:
                return params, await self.attempt(client, params)
            except Exception as exc:
                if not self.failed(call, exc):
                    raise

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        if self.client is not None:
            await self.client.close()
            self.client = None


def create_agent(
    request: Request, *, environ: Mapping[str, str] | None = None, asynchronous: bool = True
) -> LLMAgent | AsyncLLMAgent:
    """The LLM agent for ``request`` with settings from the environment (``--agent llm``; the registry's
    hook).

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
