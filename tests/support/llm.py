"""Helpers for tests of the LLM agent: a recording sleep and settings pointing at a local server."""

from __future__ import annotations

from typing import Any

from igg.agents.llm import LLMSettings

KEY = "sk-test-secret-do-not-log"
"""The API key tests send; it must never appear in logs, errors or records."""


class Sleeps(list[float]):
    """An injectable sleep (sync and async) that records the delays instead of sleeping."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)

    async def asleep(self, seconds: float) -> None:
        self.append(seconds)


def settings_for(server: Any, request: Any, *, key: str | None = KEY) -> LLMSettings:
    """LLM settings for ``request`` pointing at a ``FakeOpenAI`` server, as the environment would give
    them."""
    env = {"OPENAI_BASE_URL": server.base_url}
    if key:
        env["OPENAI_API_KEY"] = key
    return LLMSettings.from_env(request.config.llm, env)
