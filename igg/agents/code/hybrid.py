"""Code mode agents for the registry: ``code`` (static analysis only) and ``hybrid`` / ``llm`` over code.

``hybrid`` seeds the graph with the static pass and then lets the LLM add what static analysis cannot see
(framework wiring, reflection, configuration, intent). When an LLM maps code, its nodes and edges about
code symbols that do not exist in the sources are rejected (``UNGROUNDED_SYMBOL``): both agents here
offer ``validation_rules()``, which the loop adds to its act step (``Loop(extra_rules=...)``).
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Mapping, Sequence
from typing import Any

from igg.agents.base import AgentCapabilities, Observation
from igg.agents.code.agent import CodeAgent
from igg.agents.code.grounding import Grounding
from igg.codemap.language import spoken
from igg.codemap.link import link
from igg.codemap.sources import SourceFile, analyze_all, looks_like_source, split_context
from igg.errors import AgentUnavailable
from igg.models.request import Request


def _grounding(sources: Sequence[SourceFile]) -> Grounding:
    files = [s for s in sources if s.language]
    return Grounding(link(analyze_all(files)), files)


class GroundedLLM(AgentCapabilities):
    """The LLM agent mapping code: it reads files as context chunks; its proposals are grounded.

    ``llm`` is an agent, or a zero-argument factory of one (called on first use)."""

    name = "llm"

    def __init__(self, llm: Any, sources: Sequence[SourceFile]) -> None:
        self._llm = llm
        self.sources = list(sources)
        self._grounding: Grounding | None = None

    @property
    def llm(self) -> Any:
        if isinstance(self._llm, _Later):
            self._llm = self._llm()
        return self._llm

    def validation_rules(self) -> dict[type, tuple[Any, ...]]:
        """The grounding rules (UNGROUNDED_SYMBOL; quoted LLM edges) for the loop's act step."""
        return self.grounding.rules()

    @property
    def grounding(self) -> Grounding:
        """What the sources contain (built on first use); LLM edges must quote their source line."""
        if self._grounding is None:
            self._grounding = _grounding(self.sources)
            self._grounding.quotes_required = self.name == "llm"
        return self._grounding

    async def __call__(self, obs: Observation) -> Any:
        result = self.llm(obs)
        return await result if inspect.isawaitable(result) else result


class HybridAgent(GroundedLLM):
    """The static pass first (one file per turn); when it is done, the LLM takes over from the next
    iteration."""

    name = "hybrid"

    def __init__(self, llm: Any, sources: Sequence[SourceFile], static: CodeAgent | None = None) -> None:
        super().__init__(llm, sources)
        self.static = static or CodeAgent(sources=[s for s in sources if s.language])
        self.static_turns = 0

    @property
    def reads_markdown(self) -> bool:
        """The static pass reads the graph state; the LLM reads the rendered observation."""
        return self.static.finished

    async def __call__(self, obs: Observation) -> Any:
        if not self.static.finished:
            turn = self.static(obs)
            self.static_turns += 1
            if turn.get("finished"):  # hand over: the LLM gets the next (rendered) observation
                self.grounding.quotes_required = True
                return {
                    "reasoning": (
                        turn["reasoning"]
                        + " Static pass complete; the LLM adds what static analysis cannot see."
                    ),
                    "actions": [],
                }
            return turn
        result = self.llm(obs)
        return await result if inspect.isawaitable(result) else result


def create_agent(
    request: Request,
    mode: str = "code",
    *,
    environ: Mapping[str, str] | None = None,
    sources: Sequence[SourceFile] | None = None,
) -> Any:
    """The registry's hook: ``mode`` is ``code`` (static analysis, offline), ``hybrid`` or ``llm`` (code
    mode).

    Sources come from ``sources`` or from the request's ``context_data`` (files marked ``// File: path``).
    Raises ``AgentUnavailable`` when the context holds no source of a language it reads, or (hybrid/llm) when
    no LLM endpoint is configured.
    """
    if sources is None:
        if not looks_like_source(request.context_data):
            raise AgentUnavailable(
                f"the code agent needs {spoken()} sources in context_data (each file introduced by a line"
                " such as '// File: src/App.java' or '# File: app/main.py'); for a source tree use: igg"
                " map-code PATH"
            )
        sources = split_context(request.context_data)
    if mode == "code":
        return CodeAgent(sources=[s for s in sources if s.language])
    if mode not in ("hybrid", "llm"):
        raise ValueError(f"unknown code agent mode {mode!r}; use code, hybrid or llm")
    llm = _Later(request, os.environ if environ is None else environ)
    # both build the LLM agent now: without an endpoint they stop before any work, with the same message
    return HybridAgent(llm(), sources) if mode == "hybrid" else GroundedLLM(llm(), sources)


class _Later:
    """Builds the LLM agent when first needed."""

    def __init__(self, request: Request, environ: Mapping[str, str]) -> None:
        self.request, self.environ = request, environ

    def __call__(self) -> Any:
        from igg.agents import llm as llm_module

        return llm_module.create_agent(self.request, environ=self.environ)
