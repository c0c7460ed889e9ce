"""IGG's retry policy for LLM calls: which failures are retried, and how long to wait before the next try.

The ``openai`` client's own defaults (a 600 s timeout, 2 silent retries) would let one hung server stall a
run for half an hour, so the LLM agent builds its client with ``max_retries=0`` and an explicit timeout,
and owns the policy here: rate limits (429), server errors (5xx, 408, 409), timeouts and connection
errors are retried with bounded exponential backoff and jitter; a ``Retry-After`` (or ``retry-after-ms``)
header is honoured up to ``max_retry_after``. Everything else (400, 401, 403, 404, ...) fails at once.

The retry loop itself is ``tenacity``'s (``Retrying`` / ``AsyncRetrying``): this module only supplies what
tenacity leaves to its user, a wait that reads the server's hint and a jitter whose randomness is
injectable. Sleeping and randomness are injectable so tests run fast and reproducibly.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import openai
from tenacity import AsyncRetrying, RetryCallState, Retrying, retry_if_exception, stop_after_attempt
from tenacity.wait import wait_base, wait_exponential

RETRYABLE_STATUS = frozenset({408, 409, 429})
"""HTTP statuses retried besides every 5xx."""

RetryHook = Callable[[RetryCallState], Any]
"""A tenacity hook: called with the retry state (``before_sleep``, ``retry_error_callback``)."""


class CallTimedOut(Exception):
    """A call did not finish within its whole-call deadline (``timeout_seconds``), however the bytes came."""

    def __init__(self, timeout: float) -> None:
        super().__init__(f"timed out: no complete answer within timeout_seconds={timeout:g} (the whole call)")
        self.timeout = timeout


class AnswerUnreadable(Exception):
    """A 200 answer whose body is not a UTF-8 JSON object (an HTML page, a proxy's text, broken bytes)."""


class wait_jittered(wait_base):  # noqa: N801 - named like tenacity's own strategies
    """``inner``'s wait with its last ``jitter`` fraction random: ``d * (1 - jitter + jitter * random())``.

    tenacity's jittered waits add jitter from the ``random`` module; this one scales and takes its
    randomness from the caller, so a test can pin the delays.
    """

    def __init__(self, inner: wait_base, jitter: float, rand: Callable[[], float]) -> None:
        self.inner, self.jitter, self.rand = inner, jitter, rand

    def __call__(self, retry_state: RetryCallState) -> float:
        return float(self.inner(retry_state) * (1 - self.jitter + self.jitter * self.rand()))


class wait_retry_after(wait_base):  # noqa: N801 - named like tenacity's own strategies
    """The server's ``Retry-After`` (capped at ``cap`` seconds) when the failed attempt carried one, else
    ``fallback``."""

    def __init__(self, fallback: wait_base, cap: float) -> None:
        self.fallback, self.cap = fallback, cap

    def __call__(self, retry_state: RetryCallState) -> float:
        outcome = retry_state.outcome
        error = outcome.exception() if outcome is not None and outcome.failed else None
        hint = retry_after(error) if error is not None else None
        if hint is not None:
            return min(max(hint, 0.0), self.cap)
        return self.fallback(retry_state)


@dataclass(kw_only=True)
class RetryPolicy:
    """Bounded exponential backoff with jitter; ``max_retries`` retries after the first attempt."""

    max_retries: int = 4
    base_delay: float = 0.5
    """Seconds before the first retry (before jitter); doubles with every retry."""
    max_delay: float = 20.0
    """No backoff delay exceeds this."""
    max_retry_after: float = 60.0
    """A server's Retry-After is honoured up to this many seconds."""
    jitter: float = 0.5
    """Fraction of the delay that is random: the delay is ``d * (1 - jitter + jitter * random())``."""
    sleep: Callable[[float], None] = time.sleep
    asleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    random: Callable[[], float] = field(default=random.random)

    def wait(self) -> wait_base:
        """Seconds before the next try: the server's Retry-After, else jittered exponential backoff."""
        backoff = wait_exponential(multiplier=self.base_delay, max=self.max_delay)
        return wait_retry_after(wait_jittered(backoff, self.jitter, self.random), self.max_retry_after)

    def retrying(self, *, before_sleep: RetryHook, give_up: RetryHook) -> Retrying:
        """A tenacity controller for a sync call: retryable errors again after ``wait()``, at most
        ``max_retries`` times; ``before_sleep`` sees every retry, ``give_up`` the last failure (it raises)."""
        return Retrying(sleep=self.sleep, **self._options(before_sleep, give_up))

    def aretrying(self, *, before_sleep: RetryHook, give_up: RetryHook) -> AsyncRetrying:
        """The same controller for an async call (sleeps with ``asleep``)."""
        return AsyncRetrying(sleep=self.asleep, **self._options(before_sleep, give_up))

    def _options(self, before_sleep: RetryHook, give_up: RetryHook) -> dict[str, Any]:
        return {
            "stop": stop_after_attempt(self.max_retries + 1),
            "wait": self.wait(),
            "retry": retry_if_exception(is_retryable),
            "before_sleep": before_sleep,
            "retry_error_callback": give_up,
        }


def is_retryable(error: BaseException) -> bool:
    """Rate limits, 5xx/408/409, timeouts, connection errors and unreadable 200 answers are worth another
    try."""
    if isinstance(error, CallTimedOut | AnswerUnreadable):
        return True
    if isinstance(error, openai.APIStatusError):
        return error.status_code >= 500 or error.status_code in RETRYABLE_STATUS
    return isinstance(error, openai.APIConnectionError)  # includes APITimeoutError


def retry_after(error: BaseException) -> float | None:
    """The server's requested wait in seconds (``retry-after-ms``, ``Retry-After`` seconds or HTTP date)."""
    response = getattr(error, "response", None)
    if response is None:
        return None
    headers = response.headers
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return float(ms) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return when.timestamp() - time.time()


def describe_error(error: BaseException, limit: int = 240) -> str:
    """A one-line description of a failed call (status and server message; never headers).

    The server's message may echo the key: callers pass the text through ``LLMSettings.redact``.
    """
    if isinstance(error, openai.APIStatusError):
        message = _server_message(error)
        text = f"HTTP {error.status_code}: {message}"
    elif isinstance(error, CallTimedOut | AnswerUnreadable):
        text = str(error)
    elif isinstance(error, openai.APITimeoutError):
        text = "timed out (no data within the read timeout)"
    elif isinstance(error, openai.APIConnectionError):
        cause = error.__cause__
        text = f"connection error ({type(cause).__name__ if cause else 'no response'}: {cause or error})"
    else:
        text = f"{type(error).__name__}: {error}"
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _server_message(error: openai.APIStatusError) -> str:
    body = error.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else None
        if not isinstance(message, str):
            message = body.get("message")
        if isinstance(message, str):
            return message
    return str(error.message)
