"""The code agents: ``CodeAgent`` proposes a code map's symbols and relations as actions through the loop, one
file per turn, within the request's schema, limits and verdicts; ``HybridAgent`` lets an LLM add what static
analysis cannot see, grounded in the sources (``grounding``: the UNGROUNDED_SYMBOL rule).

The analysers themselves live in ``igg.codemap`` (one module per language behind ``igg.codemap.language``):
``analyze`` (one file -> ``FileFacts``) -> ``link`` (all files -> ``CodeModel``). Their entry points are named
here too, for the agents' users. The names below are imported on first use (PEP 562's module ``__getattr__``).
"""

import typing

from igg.io.lazy import lazy_names as _lazy_names

if typing.TYPE_CHECKING:
    from igg.agents.code.agent import CodeAgent
    from igg.agents.code.hybrid import GroundedLLM, HybridAgent, create_agent
    from igg.codemap.facts import FileFacts
    from igg.codemap.link import CodeModel, link
    from igg.codemap.schema import CODE_SCHEMA_PATH, load_code_schema
    from igg.codemap.sources import SourceFile, analyze, analyze_all, looks_like_source, split_context

_HOME = {
    "CodeAgent": "igg.agents.code.agent",
    "FileFacts": "igg.codemap.facts",
    **dict.fromkeys(("CodeModel", "link"), "igg.codemap.link"),
    **dict.fromkeys(("GroundedLLM", "HybridAgent", "create_agent"), "igg.agents.code.hybrid"),
    **dict.fromkeys(("CODE_SCHEMA_PATH", "load_code_schema"), "igg.codemap.schema"),
    **dict.fromkeys(
        ("SourceFile", "analyze", "analyze_all", "looks_like_source", "split_context"), "igg.codemap.sources"
    ),
}
"""The module each name lives in."""


__getattr__ = _lazy_names(__name__, _HOME)

__all__ = [
    "CODE_SCHEMA_PATH",
    "CodeAgent",
    "CodeModel",
    "FileFacts",
    "GroundedLLM",
    "HybridAgent",
    "SourceFile",
    "analyze",
    "analyze_all",
    "create_agent",
    "link",
    "load_code_schema",
    "looks_like_source",
    "split_context",
]
