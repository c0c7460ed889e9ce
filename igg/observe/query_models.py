"""The questions of ``QUERY`` and its answers: ``neighbours``, ``path`` and ``find`` as models (read by
``QUERY_ADAPTER``; their fields and descriptions are the tool schema), ``QueryAnswer`` and ``QueryError``.
``igg.observe.query`` answers them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from igg.graph.grounding import Grounding
from igg.models.common import PropertyValue
from igg.observe.tokens import estimate_tokens

DEFAULT_BUDGET = 1000

Direction = Literal["out", "in", "both"]

_NodeRef = Annotated[
    dict[str, PropertyValue],
    Field(
        min_length=1,
        description='Properties matching exactly one node, e.g. {"name": "AuthService"}; add "label" '
        "(the node type) to disambiguate.",
    ),
]
_Budget = Annotated[
    int,
    Field(
        default=DEFAULT_BUDGET,
        ge=100,
        le=50_000,
        description="Estimated tokens the answer may use (100-50000).",
    ),
]
_AsOf = Annotated[
    str | None, Field(default=None, description="Only the facts valid at this time (ISO 8601).")
]


class _Query(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class NeighboursQuery(_Query):
    """The nodes within ``depth`` hops of one node, with the edges that reach them."""

    query: Literal["neighbours"] = "neighbours"
    node: _NodeRef
    depth: int = Field(default=1, ge=1, le=5, description="Hops to follow (1-5).")
    edge_types: list[str] | None = Field(
        default=None, description="Follow only these edge types (default all)."
    )
    direction: Direction = Field(default="both", description="out: edges from the node; in: into it; both.")
    token_budget: _Budget = DEFAULT_BUDGET
    as_of: _AsOf = None


class PathQuery(_Query):
    """A shortest path (fewest edges) from one node to another."""

    query: Literal["path"] = "path"
    from_: _NodeRef = Field(alias="from")
    to: _NodeRef
    edge_types: list[str] | None = Field(
        default=None, description="Follow only these edge types (default all)."
    )
    direction: Literal["out", "both"] = Field(
        default="out", description="out: follow edges forwards only; both: either way."
    )
    token_budget: _Budget = DEFAULT_BUDGET
    as_of: _AsOf = None


class FindQuery(_Query):
    """Nodes of a type whose properties match every filter."""

    query: Literal["find"] = "find"
    label: str | None = Field(default=None, description="The node type (default any).")
    where: dict[str, PropertyValue | dict[str, Any]] = Field(
        default_factory=dict,
        description='Property filters: a value (equality) or one operator: {"contains": "x"}, {"in": [..]}, '
        '{"gt"|"ge"|"lt"|"le": n}, {"exists": true}.',
    )
    grounded: Grounding | None = Field(
        default=None, description="Only nodes with evidence found, not found, or none."
    )
    limit: int = Field(default=100, ge=1, le=10_000, description="Most nodes to list (budget permitting).")
    token_budget: _Budget = DEFAULT_BUDGET
    as_of: _AsOf = None


Query = Annotated[NeighboursQuery | PathQuery | FindQuery, Field(discriminator="query")]
QUERY_ADAPTER: TypeAdapter[NeighboursQuery | PathQuery | FindQuery] = TypeAdapter(Query)


class QueryError(ValueError):
    """A query that cannot be answered (unknown node or type, bad filter); ``code`` is a verdict code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(kw_only=True)
class QueryAnswer:
    """A budgeted answer: text lines, the shown nodes and edges as data, and what was left out."""

    query: str
    lines: list[str]
    nodes: list[dict[str, Any]] = field(default_factory=list)
    edges: list[dict[str, Any]] = field(default_factory=list)
    matched_nodes: int = 0
    """Nodes the question matched (for ``find`` and ``neighbours``), shown or not."""
    omitted_nodes: int = 0
    omitted_edges: int = 0
    complete: bool = True
    """False when something was left out (the ``left out`` line says what and how to narrow)."""
    token_budget: int = DEFAULT_BUDGET
    truncated: bool = False
    """The walk stopped at its visit cap (``MAX_VISITS``): the counts of what was left out are lower
    bounds."""
    visited: int = 0
    """Edges or nodes the answer cost to find (counted against a response's ``RESPONSE_VISITS``)."""

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text)

    def to_dict(self) -> dict[str, Any]:
        """JSON form (tool answers)."""
        return {
            "query": self.query,
            "text": self.text,
            "tokens": self.tokens,
            "token_budget": self.token_budget,
            "complete": self.complete,
            "matched_nodes": self.matched_nodes,
            "omitted_nodes": self.omitted_nodes,
            "omitted_edges": self.omitted_edges,
            "nodes": self.nodes,
            "edges": self.edges,
            "truncated": self.truncated,
        }
