"""Verdicts: every action gets one. Error codes are stable: agents see them, logs and counts use them."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class ErrorCode(StrEnum):
    """Why an action or a turn was rejected. Values are stable strings."""

    INVALID_JSON = "INVALID_JSON"
    """The agent's output held no readable JSON response."""
    INVALID_RESPONSE = "INVALID_RESPONSE"
    """JSON, but not a response object (wrong keys or types at the top level)."""
    INVALID_ACTION = "INVALID_ACTION"
    """An action object with missing, unknown or mistyped fields."""
    UNKNOWN_ACTION = "UNKNOWN_ACTION"
    """An action whose ``type`` is not one of ADD_NODE, ADD_EDGE, UPDATE_NODE, DELETE_NODE, DELETE_EDGE,
    UPDATE_EDGE, MERGE_NODES, QUERY."""
    UNKNOWN_NODE_TYPE = "UNKNOWN_NODE_TYPE"
    """A node type the schema does not list."""
    UNKNOWN_EDGE_TYPE = "UNKNOWN_EDGE_TYPE"
    """An edge type the schema does not list."""
    MISSING_REQUIRED_ATTRIBUTE = "MISSING_REQUIRED_ATTRIBUTE"
    """A required attribute (or identity key) absent, empty, or removed."""
    INVALID_PROPERTY = "INVALID_PROPERTY"
    """A property key that is not a safe identifier or is reserved, or a value of a wrong type or too long."""
    NODE_NOT_FOUND = "NODE_NOT_FOUND"
    """A node reference that matches no node (the message lists close names)."""
    AMBIGUOUS_REFERENCE = "AMBIGUOUS_REFERENCE"
    """A node reference that matches several nodes (the message says how to disambiguate)."""
    EDGE_NOT_FOUND = "EDGE_NOT_FOUND"
    """DELETE_EDGE of an edge that does not exist."""
    DUPLICATE_NODE = "DUPLICATE_NODE"
    """A node whose identity already exists (re-adding never overwrites; use UPDATE_NODE)."""
    DUPLICATE_EDGE = "DUPLICATE_EDGE"
    """An edge of the same type between the same two nodes already exists."""
    SELF_LOOP_FORBIDDEN = "SELF_LOOP_FORBIDDEN"
    """An edge from a node to itself while allow_self_loops is false."""
    MAX_NODES_EXCEEDED = "MAX_NODES_EXCEEDED"
    """The graph already holds max_nodes nodes."""
    MAX_EDGES_EXCEEDED = "MAX_EDGES_EXCEEDED"
    """The graph already holds max_edges edges."""
    EDGE_PATTERN_FORBIDDEN = "EDGE_PATTERN_FORBIDDEN"
    """An edge whose (from type, edge type, to type) matches none of its type's allowed patterns."""
    TOO_MANY_ACTIONS = "TOO_MANY_ACTIONS"
    """An action beyond max_actions_per_response."""
    DELETION_FORBIDDEN = "DELETION_FORBIDDEN"
    """A delete while allow_deletions is false."""
    DELETION_LIMIT_EXCEEDED = "DELETION_LIMIT_EXCEEDED"
    """A delete beyond max_deletions_per_iteration in one response."""
    PROTECTED_NODE = "PROTECTED_NODE"
    """Deleting a seed node while protect_seed_nodes is true."""
    ROLLED_BACK = "ROLLED_BACK"
    """A valid action undone because another action of an atomic response was rejected."""
    WRONG_PROPERTY_TYPE = "WRONG_PROPERTY_TYPE"
    """A property whose value does not have the type the schema's property_types declares."""
    VALUE_NOT_IN_ENUM = "VALUE_NOT_IN_ENUM"
    """A property declared as an enum in property_types, with a value not among the allowed ones."""
    INVALID_MERGE = "INVALID_MERGE"
    """MERGE_NODES of a node into itself or into a node of another type."""
    INVALID_QUERY = "INVALID_QUERY"
    """A QUERY that cannot be answered: not a query object, or a bad filter, edge type or node type."""
    QUERY_BUDGET_EXHAUSTED = "QUERY_BUDGET_EXHAUSTED"
    """The QUERY actions of one response have used up its query work (``igg.observe.query.RESPONSE_VISITS``
    edge and node visits); ask again in the next response, or narrow the earlier queries."""
    POSSIBLE_DUPLICATE = "POSSIBLE_DUPLICATE"
    """An ADD_NODE whose identity is close to an existing node of its type (case, separators, alias,
    abbreviation, similarity; see ``igg.graph.duplicates``). Use the existing node, or send the action again
    with ``"distinct": true``. Under the ``warn`` policy the node is added and the code is the verdict's
    warning."""
    UNGROUNDED_EVIDENCE = "UNGROUNDED_EVIDENCE"
    """An action's evidence quote is not in the context (exactly, normalized or approximately), or its span
    points outside it; the message says where IGG looked and the closest passage. Under ``config.grounding:
    warn`` the action is applied and this is its verdict's warning."""
    MISSING_EVIDENCE = "MISSING_EVIDENCE"
    """``config.grounding`` is ``required`` (or ``required_edges``) and the action carries no ``evidence``."""
    UNGROUNDED_VALUE = "UNGROUNDED_VALUE"
    """``config.grounding`` is ``values`` and a node identity or property value the action writes is not
    stated in the context (``igg.act.values``); the message names the value and the closest passage."""
    TYPE_CONFLICT = "TYPE_CONFLICT"
    """An entity the ontology types two incompatible ways (two relations' domain or range, neither a subtype
    of the other): the triple that would retype it is refused, not silently picked."""
    INVALID_TIME = "INVALID_TIME"
    """A ``valid_from``/``valid_to`` that is not an ISO 8601 time, or a ``valid_to`` not after its
    ``valid_from`` (``igg.models.validtime``: the message states the rule)."""
    TIME_NOT_SCOPED = "TIME_NOT_SCOPED"
    """A valid time on a node or edge type the schema's ``valid_time`` does not name."""
    TIME_CONFLICT = "TIME_CONFLICT"
    """A fact of a one-at-a-time type (edge type, or node property) starting when another of the same source
    and type starts, with another target or value: which one held is not decidable."""
    SUPERSEDED = "SUPERSEDED"
    """Informational (an accepted verdict's warning): the fact closed an earlier fact of the same source and
    one-at-a-time type (its valid_to became this fact's valid_from), or was itself closed by a later one it
    arrived after; the message names both facts."""
    UNGROUNDED_SYMBOL = "UNGROUNDED_SYMBOL"
    """Code mapping only: a node or edge about a code symbol (class, method, table, ...) the sources lack."""


@dataclass(slots=True)
class Verdict:
    """The outcome of one action: accepted, or rejected with a stable code and a message an agent can act
    on."""

    index: int
    """Position of the action in the response (0-based)."""
    action: str
    """The action type (ADD_NODE, ...) or '?' when it could not be read."""
    accepted: bool
    code: ErrorCode | None
    """None when accepted."""
    message: str
    element: str | None = None
    """Id of the node or edge the action created, changed or deleted."""
    warning: ErrorCode | None = None
    """An accepted action's warning (POSSIBLE_DUPLICATE under the ``warn`` policy); its message says more."""

    def to_dict(self) -> dict[str, Any]:
        """JSON form, as shown to agents and tool callers."""
        out: dict[str, Any] = {"index": self.index, "action": self.action, "accepted": self.accepted}
        if self.code is not None:
            out["code"] = str(self.code)
        out["message"] = self.message
        if self.element is not None:
            out["element"] = self.element
        if self.warning is not None:
            out["warning"] = str(self.warning)
        return out
