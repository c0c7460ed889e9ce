"""What the act step's rules read and return: the ``CheckContext``, a ``Rejection``, and the typed values an
action resolves to (what the apply step then acts on).

==============================  ==========================================================================
action                          resolves to
==============================  ==========================================================================
ADD_NODE                        ``NewNode``: how it is accepted (a near-duplicate note, warning, overrides)
ADD_EDGE, MERGE_NODES           ``Ends``: the two node ids (MERGE_NODES: ``source`` = node, ``target`` = into)
DELETE_EDGE, UPDATE_EDGE        ``EdgeAt``: the existing edge's id and ends
UPDATE_NODE, DELETE_NODE        the node's id (``str``)
QUERY                           ``Answer``: the answer's text
==============================  ==========================================================================
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeAlias

from igg.graph.state import GraphState
from igg.models.request import Constraints
from igg.models.schema import CompiledSchema
from igg.models.verdicts import ErrorCode

Rejection: TypeAlias = tuple[ErrorCode, str]
"""A rule's rejection: the error code and a message naming the value, the rule and what would pass."""


@dataclass(kw_only=True)
class CheckContext:
    """What rules read: the state, the compiled schema, the limits, and per-response counters."""

    state: GraphState
    schema: CompiledSchema
    limits: Constraints
    deletions: int = 0
    """Delete actions accepted so far in this response."""
    extra: dict[str, Any] = field(default_factory=dict)
    """Room for extra rules' own per-response state."""
    evidence: list[dict[str, Any]] | None = None
    """The located evidence of the action being applied (``igg.act.evidence``), stored in its provenance."""
    provenance: dict[str, Any] | None = None
    """Keys recorded in the provenance of the element being applied (a planned difference's: the documents
    supporting a fact, ``igg.documents``)."""
    planned: bool = False
    """Whether the change is a planned difference (``igg.act.difference``): one intent of a user, not an
    agent's response, so the per-response budgets (``max_deletions_per_iteration``) do not apply to it; and
    its planner decided each element's stored valid time (bounds, one-at-a-time histories and supersession:
    ``igg.documents.times``), so the act step stores those as given instead of deriving them again."""


@dataclass(frozen=True, slots=True)
class NewNode:
    """How an ADD_NODE is accepted."""

    note: str | None = None
    """Said after the accepted verdict's message (e.g. a POSSIBLE_DUPLICATE warning)."""
    warning: ErrorCode | None = None
    """The accepted verdict's warning code."""
    distinct_from: list[str] | None = None
    """Ids of the near-duplicates a ``"distinct": true`` ADD_NODE was accepted past (kept in provenance)."""


PLAIN_NODE = NewNode()
"""An ADD_NODE accepted without remarks (shared: the common case allocates nothing)."""


@dataclass(frozen=True, slots=True)
class Ends:
    """The resolved ends of an edge action (MERGE_NODES: the node merged away and the node kept)."""

    source: str
    target: str


@dataclass(frozen=True, slots=True)
class EdgeAt:
    """An existing edge an action changes: its id and ends."""

    edge: str
    source: str
    target: str


@dataclass(frozen=True, slots=True)
class Answer:
    """A QUERY's answer (the accepted verdict's message)."""

    text: str


__all__ = ["PLAIN_NODE", "Answer", "CheckContext", "EdgeAt", "Ends", "NewNode", "Rejection"]
