"""The code agent: deterministic static analysis of Python (``ast``) and Java (tree-sitter) sources.

``analyze`` (one file -> ``FileFacts``) -> ``link`` (all files -> ``CodeModel`` of symbols and relations)
-> ``CodeAgent`` (proposes them as actions through the loop, one file per turn, within the request's
schema, limits and verdicts). ``grounding`` holds the UNGROUNDED_SYMBOL rule used when an LLM maps code.
"""

from igg.agents.code.agent import CodeAgent
from igg.agents.code.facts import FileFacts
from igg.agents.code.hybrid import GroundedLLM, HybridAgent, create_agent
from igg.agents.code.link import CodeModel, link
from igg.agents.code.schema import CODE_SCHEMA_PATH, load_code_schema
from igg.agents.code.sources import SourceFile, analyze, analyze_all, looks_like_source, split_context

__all__ = ["CODE_SCHEMA_PATH", "CodeAgent", "CodeModel", "FileFacts", "GroundedLLM", "HybridAgent", "SourceFile",
           "analyze", "analyze_all", "create_agent", "link", "load_code_schema", "looks_like_source", "split_context"]
