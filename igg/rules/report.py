"""What a check finds: violations, each with the path of edges that breaks its rule and where each edge
stands.

These are the output models of ``igg check`` (``--json``), of the MCP ``check`` tool and of ``POST
/sessions/{id}/check``: pydantic at the boundary, so each is also its tool's output schema.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import PurePosixPath
from typing import Literal

from pydantic import BaseModel, Field

PathOf = Callable[[str], str]
"""A report's file path (relative to the tree it is in) -> its path from the repository's top."""


def repository_path(prefix: str | PathOf, file: str) -> str:
    """``file`` from the repository's top: under ``prefix`` (a folder), or as ``prefix`` maps it."""
    return prefix(file) if callable(prefix) else str(PurePosixPath(prefix) / file)


TRUNCATED = (
    "igg check stopped at its bounds (violations, edges shown or nodes visited): more violations may exist "
    "and the counts are lower bounds; narrow the rules or check fewer paths"
)
"""What every output of a truncated report says (text, GitHub annotations, SARIF)."""


class Hop(BaseModel):
    """One edge of a violation's path."""

    source: str
    """The dotted name of the edge's source node."""
    target: str
    """The dotted name of its target node."""
    edge: str
    """The edge type (IMPORTS, CALLS, READS_FROM, ...)."""
    file: str | None = None
    """The source file of the statement behind the edge."""
    line: int | None = None
    """Its line (None when the graph does not say, e.g. a session built by an LLM)."""
    type_checking: bool = False
    """A type-only import (under ``if TYPE_CHECKING:``, ``import type``): no dependency when the code runs."""

    def where(self) -> str:
        """``file:line`` (or what is known of it)."""
        if self.file is None:
            return "(no file)"
        return f"{self.file}:{self.line}" if self.line else self.file

    def describe(self) -> str:
        """``a -> b (IMPORTS) at file:line``, with ``type-only`` for a type-only import."""
        edge = f"{self.edge}, type-only" if self.type_checking else self.edge
        return f"{self.source} -> {self.target} ({edge}) at {self.where()}"


class Violation(BaseModel):
    """One breach of one rule."""

    rule: str
    """The rule's name."""
    kind: str
    """The rule's kind."""
    severity: Literal["error", "warning"] = "error"
    message: str
    """What is wrong, in a sentence."""
    path: list[Hop]
    """The edges that break the rule, in order (one edge for a direct dependency; a chain; a cycle)."""
    key: str
    """What identifies this violation across commits (the ratchet compares these): the rule and the names
    along its path (or a cycle's members), never file lines, which move with unrelated edits."""
    status: Literal["new", "known"] = "new"
    """With a baseline (``--since``): known when the baseline breaks the rule the same way."""
    breaking_edges: list[Hop] = Field(default_factory=list)
    """For a cycle: a small set of its edges whose removal breaks it (a feedback-arc heuristic)."""


class RuleSummary(BaseModel):
    """A rule as the report lists it."""

    name: str
    kind: str
    severity: Literal["error", "warning"]
    description: str | None = None
    violations: int = 0
    """The rule's violations (a lower bound when the report is ``truncated``)."""


class DependencyChange(BaseModel):
    """A dependency a change added or removed (``--since``)."""

    level: Literal["module", "package"]
    source: str
    target: str
    edges: list[Hop]
    """The edges behind it, with their statements' lines (in the commit that has them)."""


class CheckReport(BaseModel):
    """The outcome of ``igg check``."""

    target: str
    """What was checked: the paths, or ``session ID``."""
    rules: list[RuleSummary]
    violations: list[Violation]
    failed: bool
    """Whether the check fails (exit 1): an error-severity violation (with ``new_only``, a new one)."""
    since: str | None = None
    """The baseline's git ref, when there is one."""
    new_only: bool = False
    """Ratchet mode: only new violations fail; known ones are listed."""
    added: list[DependencyChange] = Field(default_factory=list)
    """Dependencies the change added (with ``since``)."""
    removed: list[DependencyChange] = Field(default_factory=list)
    """Dependencies the change removed (with ``since``)."""
    nodes: int = 0
    edges: int = 0
    reads: Literal["imports", "tables", "all"] | None = None
    """How much of a source tree was mapped for the rules (``igg.rules.reads``): its imports, its imports and
    tables, or all of it (``nodes`` and ``edges`` count that graph); None for a stored session."""
    kept: bool | None = None
    """For a source tree mapped for imports or tables with a store: whether its graph was the one the last
    check kept, taken again by stat (``igg.mapping.kept``); None otherwise."""
    baseline: Literal["same", "kept", "relinked", "mapped"] | None = None
    """With ``since``, how the commit was judged (``igg.mapping.since``): ``same``, its files give the tree's
    own graph, as git told without unpacking it; ``kept``, the graph the last check kept is the commit's (it
    ran on the commit's tree); ``relinked``, the files it changed were read from git and linked with the
    others' facts as they are now; ``mapped``, its tree was unpacked and mapped."""
    truncated: bool = False
    """The check stopped at one of its bounds (``igg.rules.bounds``: violations, the edges along their paths,
    nodes and edges visited): violations were left out, and each rule's count is a lower bound."""
