"""The LLM agent's settings: where and how to call the model, and the secrets no error text may carry.

``LLMSettings`` holds the endpoint (``OPENAI_BASE_URL``, else api.openai.com), the API key
(``OPENAI_API_KEY``), the model (``IGG_MODEL``) and the request's ``config.llm``; ``LLMSettings.from_env``
builds them in an entry point, raising ``EndpointNotConfigured`` when no endpoint is set, and fills the
``config.llm`` settings a request leaves unset from ``ENV_DEFAULTS``. ``LLMSettings.redact`` removes the key
and the base URL's credentials from a text, whatever their shape; ``LLMSettings.endpoint`` is the URL as
messages and logs may show it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, unquote, urlsplit, urlunsplit

from pydantic import ValidationError

from igg.errors import AgentUnavailable
from igg.models.request import LLMConfig

DEFAULT_MODEL = "gpt-4o-mini"
NO_KEY = "igg-no-key"
"""Sent as the key to servers that need none (the client insists on one)."""
ENV_DEFAULTS = {"IGG_MAX_OUTPUT_TOKENS": "max_output_tokens", "IGG_LLM_TIMEOUT": "timeout_seconds"}
"""Environment variables giving ``config.llm`` settings the request leaves unset (e.g. for ``igg map-code``,
whose request IGG builds): the output token cap and the whole-call deadline in seconds."""
BYTES_PER_OUTPUT_TOKEN = 8
"""Default answer cap per ``max_output_tokens``: twice a typical token's ~4 bytes, far below a token's
worst."""
MIN_ANSWER_BYTES = 16_384
REDACTED = "[redacted]"


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
    def from_env(
        cls, config: LLMConfig | None = None, environ: Mapping[str, str] | None = None
    ) -> LLMSettings:
        """Settings from OPENAI_API_KEY, OPENAI_BASE_URL, IGG_MODEL and the request's ``config.llm``."""
        env = os.environ if environ is None else environ
        if not endpoint_configured(env):
            raise EndpointNotConfigured(
                "the LLM agent needs an endpoint: set OPENAI_API_KEY (OpenAI) or OPENAI_BASE_URL (any "
                "OpenAI-compatible server, e.g. http://localhost:11434/v1 for Ollama)"
            )
        config = config or LLMConfig()
        config = _env_defaults(config, env)
        return cls(
            base_url=env.get("OPENAI_BASE_URL") or None,
            api_key=env.get("OPENAI_API_KEY") or NO_KEY,
            model=config.model or env.get("IGG_MODEL") or DEFAULT_MODEL,
            config=config,
        )

    @property
    def max_answer_bytes(self) -> int:
        """Answers longer than this (UTF-8 bytes) are cut: ``config.llm.max_answer_bytes`` or the default."""
        if self.config.max_answer_bytes is not None:
            return self.config.max_answer_bytes
        return max(MIN_ANSWER_BYTES, BYTES_PER_OUTPUT_TOKEN * self.config.max_output_tokens)

    def secrets(self) -> list[str]:
        """The values no error text may carry: the key, and the base URL's user, password and query values."""
        found: list[str] = []
        if self.api_key and self.api_key != NO_KEY:
            found.append(self.api_key)
        if self.base_url:
            parts = urlsplit(self.base_url)
            if "@" in parts.netloc:
                userinfo = parts.netloc.rsplit("@", 1)[0]
                found += [userinfo, *userinfo.split(":", 1)]
            found += [v for _, v in parse_qsl(parts.query)]
        out: list[str] = []
        for value in found:
            for form in (value, unquote(value), json.dumps(value)[1:-1]):
                if len(form) >= 4 and form not in out:
                    out.append(form)
        return sorted(out, key=len, reverse=True)  # a longer secret first: it may contain a shorter one

    def redact(self, text: str) -> str:
        """``text`` without any secret of these settings (replaced by ``[redacted]``)."""
        for secret in self.secrets():
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text

    @property
    def endpoint(self) -> str:
        """The endpoint for messages and logs: no key, no credentials or query that a URL may carry."""
        parts = urlsplit(self.base_url or "https://api.openai.com/v1")
        host = parts.hostname or ""
        netloc = f"[{host}]" if ":" in host else host
        if parts.port:
            netloc += f":{parts.port}"
        return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _env_defaults(config: LLMConfig, env: Mapping[str, str]) -> LLMConfig:
    """``config`` with the settings it leaves unset taken from ``ENV_DEFAULTS`` variables (checked)."""
    update = {
        key: env[name]
        for name, key in ENV_DEFAULTS.items()
        if env.get(name) and key not in config.model_fields_set
    }
    if not update:
        return config
    try:
        return LLMConfig.model_validate({**config.model_dump(exclude_unset=True), **update})
    except ValidationError as exc:
        error = exc.errors()[0]
        name = next((n for n, k in ENV_DEFAULTS.items() if error["loc"] and k == error["loc"][0]), "")
        raise EndpointNotConfigured(f"{name}={env.get(name)!r}: {error['msg']}") from None
