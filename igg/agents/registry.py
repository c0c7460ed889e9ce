"""Choosing an agent from a spec string: ``auto``, ``llm``, ``local``, ``code``, ``hybrid`` or
``script:PATH``.

Extension points (the modules other parts of IGG provide):

* ``igg.agents.llm`` defines ``create_agent(request, environ=...)`` -> an agent (sync or async callable);
* ``igg.agents.local`` defines ``create_agent(request, environ=...)``: the LLM agent on an in-process
  llama.cpp server (``IGG_MODEL_FILE``, or the packaged SmolLM2 of ``igg[local]``);
* ``igg.agents.code`` defines ``create_agent(request, mode, environ=...)`` with ``mode`` ``"code"`` or
  ``"hybrid"``, and may define ``looks_like_source(text) -> bool`` (used by ``auto``; a simple built-in check
  otherwise).

``auto`` picks the LLM agent when ``OPENAI_API_KEY`` or ``OPENAI_BASE_URL`` is set, else the code agent when
the context is source code, else it says what to do. ``code`` (and ``auto``'s choice of it) reads the context
as the run goes (``igg.agents.streaming``).
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from igg.agents.scripted import ScriptedAgent
from igg.errors import AgentUnavailable, Problem, RequestInvalid
from igg.models.request import Request

if TYPE_CHECKING:
    from igg.agents.base import AnyAgent

AGENT_SPECS = ("auto", "llm", "local", "code", "hybrid", "script:PATH")
"""What ``--agent`` accepts."""


def make_agent(spec: str, request: Request, *, env: Mapping[str, str] | None = None) -> AnyAgent:
    """The agent a spec names, built for ``request``. ``env`` defaults to ``os.environ`` (for ``auto``).

    Raises ``RequestInvalid`` for a spec that names no agent or a bad transcript, ``AgentUnavailable`` when
    the agent cannot be built in this installation or environment.
    """
    env = os.environ if env is None else env
    spec = spec.strip()
    if spec.startswith("script:"):
        path = spec[len("script:") :]
        if not path:
            raise _bad_spec(
                spec, "script: needs a transcript path, e.g. script:fixtures/auth/transcript.jsonl"
            )
        return ScriptedAgent.from_path(path)
    if spec == "llm":
        return _extension("igg.agents.llm", "llm", request, environ=env)
    if spec == "local":
        return _extension("igg.agents.local", "local", request, environ=env)
    if spec == "code":
        return _code(request)
    if spec == "hybrid":
        return _extension("igg.agents.code", spec, request, mode=spec, environ=env)
    if spec == "auto":
        return _auto(request, env)
    raise _bad_spec(spec, f"unknown agent; use one of {', '.join(AGENT_SPECS)}")


def _auto(request: Request, env: Mapping[str, str]) -> AnyAgent:
    endpoint = bool(env.get("OPENAI_API_KEY") or env.get("OPENAI_BASE_URL"))
    if not endpoint and looks_like_source(request.context_data):
        return _code(request)
    from igg.agents.llm_settings import EndpointNotConfigured

    try:
        return _extension("igg.agents.llm", "llm", request, environ=env)
    except EndpointNotConfigured as exc:  # the same line and exit code as --agent llm, with auto's other ways
        raise EndpointNotConfigured(
            f"{exc}; or, since --agent auto found no source code in context_data for the offline code agent, "
            "use --agent local for a GGUF model run in-process (igg[local]) or replay a transcript with "
            "--agent script:PATH"
        ) from None


def _code(request: Request) -> AnyAgent:
    """The code agent over the request's context, fed as it goes: the files are read, parsed and linked in
    growing batches while the run proceeds (``igg.agents.streaming``), so the first turn comes after the first
    batch, not after every file of a huge context."""
    try:
        from igg.agents.streaming import StreamingCodeAgent
        from igg.codemap.language import spoken
        from igg.codemap.sources import looks_like_source as has_source
    except ModuleNotFoundError as exc:
        if not (exc.name or "").startswith("igg.agents"):
            raise
        raise AgentUnavailable(
            "the code agent is not available in this installation (module igg.agents.code is "
            "missing); use --agent script:PATH"
        ) from None
    if not has_source(request.context_data):
        raise AgentUnavailable(
            f"the code agent needs {spoken()} sources in context_data (each file introduced by a line such as"
            " '// File: src/App.java' or '# File: app/main.py'); for a source tree use: igg map-code PATH"
        )
    return StreamingCodeAgent(request.context_data)


def _extension(module_name: str, spec: str, request: Request, **kwargs: Any) -> AnyAgent:
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise
        raise AgentUnavailable(
            f"the {spec} agent is not available in this installation "
            f"(module {module_name} is missing); use --agent script:PATH"
        ) from None
    factory = getattr(module, "create_agent", None)
    if factory is None:
        raise AgentUnavailable(f"the {spec} agent is not available: {module_name} has no create_agent()")
    return cast(
        "AnyAgent", factory(request, **kwargs)
    )  # an extension module's create_agent() builds an agent


_MARKER = re.compile(r"(?m)^\s*(?://|#|--)\s*[Ff]ile:\s*\S+\.[A-Za-z0-9]+\s*$")
_CODE_LINE = re.compile(
    r"(?m)^\s*(?:(?:public|private|protected|static|final|abstract)\s+)*"
    r"(?:package\s+[\w.]+;|import\s+[\w.*]+;?|class\s+\w+|interface\s+\w+|def\s+\w+\s*\(|from\s+[\w.]+\s+import\s"
    r"|@\w+|return\b.*;|[\w<>\[\]]+\s+\w+\s*\([^)]*\)\s*(?:throws\s+[\w, ]+)?\s*\{)"
)


def looks_like_source(text: str) -> bool:
    """Whether ``text`` is mostly source code (file markers, or many lines that read like code)."""
    try:
        code = importlib.import_module("igg.agents.code")
    except ModuleNotFoundError:
        code = None
    custom = getattr(code, "looks_like_source", None)
    if custom is not None:
        return bool(custom(text))
    if not text.strip():
        return False
    if _MARKER.search(text):
        return True
    lines = [line for line in text.splitlines() if line.strip()]
    hits = len(_CODE_LINE.findall(text))
    return hits >= 3 and hits * 5 >= len(lines)


def _bad_spec(spec: str, message: str) -> RequestInvalid:
    return RequestInvalid([Problem("--agent", f"{spec!r}: {message}")], source="the command line")
