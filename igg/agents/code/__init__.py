"""The code agent: deterministic static analysis of Python (``ast``) and Java (tree-sitter) sources.

``analyze`` (one file -> ``FileFacts``) -> ``link`` (all files -> ``CodeModel`` of symbols and relations)
-> ``CodeAgent`` (proposes them as actions through the loop, one file per turn, within the request's
schema, limits and verdicts). ``grounding`` holds the UNGROUNDED_SYMBOL rule used when an LLM maps code.

The names below are imported on first use (PEP 562's module ``__getattr__``), so a light module of this
package (``walk``'s limits, which the command line shows in its help) can be imported alone.
"""

import typing

# ``link`` is imported here, not lazily: it names a function and its module alike, and a module imported after
# the package would otherwise leave ``igg.agents.code.link`` naming the module.
from igg.agents.code.link import CodeModel, link
from igg.io.lazy import lazy_names as _lazy_names

if typing.TYPE_CHECKING:
    from igg.agents.code.agent import CodeAgent
    from igg.agents.code.facts import FileFacts
    from igg.agents.code.hybrid import GroundedLLM, HybridAgent, create_agent
    from igg.agents.code.schema import CODE_SCHEMA_PATH, load_code_schema
    from igg.agents.code.sources import SourceFile, analyze, analyze_all, looks_like_source, split_context

_HOME = {
    "CodeAgent": "igg.agents.code.agent",
    "FileFacts": "igg.agents.code.facts",
    **dict.fromkeys(("GroundedLLM", "HybridAgent", "create_agent"), "igg.agents.code.hybrid"),
    **dict.fromkeys(("CODE_SCHEMA_PATH", "load_code_schema"), "igg.agents.code.schema"),
    **dict.fromkeys(("SourceFile", "analyze", "analyze_all", "looks_like_source", "split_context"),
                    "igg.agents.code.sources"),
}
"""The module each name lives in."""


__getattr__ = _lazy_names(__name__, _HOME)

__all__ = ["CODE_SCHEMA_PATH", "CodeAgent", "CodeModel", "FileFacts", "GroundedLLM", "HybridAgent", "SourceFile",
           "analyze", "analyze_all", "create_agent", "link", "load_code_schema", "looks_like_source", "split_context"]
