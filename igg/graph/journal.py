"""The mutation journal's contract: one dataclass per kind of change, read back through ONE ``TypeAdapter``.

Every change of a ``GraphState`` appends one of these to its journal; the session store keeps each as a JSON
row (its ``to_dict`` form, ``op`` first) and reads it back with ``read_mutation`` (``MUTATION``), which is
also how stores written before the journal was typed load: their dict mutations have exactly these shapes.
Store, replay, undo, diff and explain consume the typed objects (``match`` on the class), never ``op``
strings.

=============  ===========================================================================================
``op``         class and meaning
=============  ===========================================================================================
add_node       ``NodeAdded``: a node with its id, type, properties and provenance
delete_node    ``NodeDeleted``: the same fields, as the node was (its edges are deleted first, each alone)
update_node    ``NodeUpdated``: whole property dicts ``before``/``after`` and both provenances
add_edge       ``EdgeAdded``: an edge with its id, type, ends (``from``/``to``), properties and provenance
delete_edge    ``EdgeDeleted``: the same fields, as the edge was
merge_nodes    ``NodesMerged``: node ``id`` merged into ``into`` (MERGE_NODES) as ONE mutation: the merged
               node as it was, ``into``'s properties before and after, and every edge of the merged node with
               whether it was moved onto ``into`` (``kept``) or collapsed (deleted)
=============  ===========================================================================================

Dataclasses, not pydantic models: the journal is on the apply hot path (one object per change), and pydantic
sits only at the boundary (``MUTATION``), as for the actions.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter

Properties = dict[str, Any]


@dataclass(slots=True, kw_only=True)
class Effect:
    """What one mutation did to one node or edge (the unit ``diff`` nets out): its data before and after
    (None: absent) and, for an edge, its ends before and after."""

    kind: Literal["node", "edge"]
    element: str
    type: str | None
    """The element's type (None for a node update, which does not repeat it)."""
    before: Properties | None
    after: Properties | None
    ends_before: tuple[str, str] | None = None
    ends_after: tuple[str, str] | None = None


@dataclass(slots=True)
class NodeRecord:
    """A whole node, as added or as it was when deleted: the fields ``NodeAdded`` and ``NodeDeleted``
    share."""

    id: str
    type: str
    properties: Properties
    provenance: Properties | None = None
    op: str = ""
    """Which kind (each subclass fixes it)."""

    def to_dict(self) -> dict[str, Any]:
        """The stored JSON form."""
        return {
            "op": self.op,
            "id": self.id,
            "type": self.type,
            "properties": self.properties,
            "provenance": self.provenance,
        }

    def touches(self) -> tuple[str, ...]:
        """Every node/edge id this mutation changed."""
        return (self.id,)

    def effects(self) -> list[Effect]:
        """What it did, element by element."""
        added = self.op == "add_node"
        return [
            Effect(
                kind="node",
                element=self.id,
                type=self.type,
                before=None if added else self.properties,
                after=self.properties if added else None,
            )
        ]


@dataclass(slots=True)
class NodeAdded(NodeRecord):
    """A node was added."""

    op: Literal["add_node"] = "add_node"


@dataclass(slots=True)
class NodeDeleted(NodeRecord):
    """A node was deleted (it had no edges left: those were deleted first)."""

    op: Literal["delete_node"] = "delete_node"


@dataclass(slots=True, kw_only=True)
class NodeUpdated:
    """A node's properties (whole dicts) and provenance changed."""

    id: str
    before: Properties
    after: Properties
    before_prov: Properties | None = None
    after_prov: Properties | None = None
    op: Literal["update_node"] = "update_node"

    def to_dict(self) -> dict[str, Any]:
        """The stored JSON form."""
        return {
            "op": self.op,
            "id": self.id,
            "before": self.before,
            "after": self.after,
            "before_prov": self.before_prov,
            "after_prov": self.after_prov,
        }

    def touches(self) -> tuple[str, ...]:
        """Every node/edge id this mutation changed."""
        return (self.id,)

    def effects(self) -> list[Effect]:
        """What it did, element by element."""
        return [Effect(kind="node", element=self.id, type=None, before=self.before, after=self.after)]


@dataclass(slots=True)
class EdgeRecord:
    """A whole edge, as added or as it was: the fields ``EdgeAdded``, ``EdgeDeleted`` and ``MergedEdge``
    share."""

    id: str
    type: str
    source: Annotated[str, Field(alias="from")]
    target: Annotated[str, Field(alias="to")]
    properties: Properties
    provenance: Properties | None = None

    def edge_dict(self) -> dict[str, Any]:
        """The edge's fields in their stored JSON form (``from``/``to``)."""
        return {
            "id": self.id,
            "type": self.type,
            "from": self.source,
            "to": self.target,
            "properties": self.properties,
            "provenance": self.provenance,
        }

    def touches(self) -> tuple[str, ...]:
        """Every node/edge id this mutation changed."""
        return (self.id,)


@dataclass(slots=True)
class _EdgeMutation(EdgeRecord):
    op: str = ""
    """Which kind (each subclass fixes it)."""

    def to_dict(self) -> dict[str, Any]:
        """The stored JSON form."""
        return {"op": self.op, **self.edge_dict()}

    def effects(self) -> list[Effect]:
        """What it did, element by element."""
        ends = (self.source, self.target)
        if self.op == "add_edge":
            return [
                Effect(
                    kind="edge",
                    element=self.id,
                    type=self.type,
                    before=None,
                    after=self.properties,
                    ends_after=ends,
                )
            ]
        return [
            Effect(
                kind="edge",
                element=self.id,
                type=self.type,
                before=self.properties,
                after=None,
                ends_before=ends,
            )
        ]


@dataclass(slots=True)
class EdgeAdded(_EdgeMutation):
    """An edge was added."""

    op: Literal["add_edge"] = "add_edge"


@dataclass(slots=True)
class EdgeDeleted(_EdgeMutation):
    """An edge was deleted."""

    op: Literal["delete_edge"] = "delete_edge"


@dataclass(slots=True, kw_only=True)
class MergedEdge(EdgeRecord):
    """One edge of a merged node, as it was, and whether the merge moved it onto ``into`` or collapsed it."""

    kept: bool
    """True: moved onto ``into`` under its id (its ends renamed); False: collapsed (deleted), because it would
    repeat an edge ``into`` has or become a forbidden self-loop."""

    def to_dict(self) -> dict[str, Any]:
        """The stored JSON form."""
        return {**self.edge_dict(), "kept": self.kept}

    def moved_ends(self, node: str, into: str) -> tuple[str, str]:
        """Its ends once ``node`` is merged into ``into``."""
        return (into if self.source == node else self.source, into if self.target == node else self.target)


@dataclass(slots=True, kw_only=True)
class NodesMerged:
    """Node ``id`` was merged into node ``into`` (one MERGE_NODES): its edges moved or collapsed, ``into``'s
    properties and provenance set to ``after``/``after_prov``, and the node deleted."""

    id: str
    """The node merged away (deleted)."""
    into: str
    """The node that stays."""
    type: str
    """Both nodes' type."""
    properties: Properties
    """The merged node's properties, as they were."""
    provenance: Properties | None = None
    """The merged node's provenance, as it was."""
    before: Properties
    """``into``'s properties before the merge."""
    after: Properties
    """``into``'s properties after the merge."""
    before_prov: Properties | None = None
    after_prov: Properties | None = None
    edges: list[MergedEdge] = field(default_factory=list)
    """Every edge of the merged node, in the order they were moved or collapsed."""
    op: Literal["merge_nodes"] = "merge_nodes"

    def to_dict(self) -> dict[str, Any]:
        """The stored JSON form."""
        return {
            "op": self.op,
            "id": self.id,
            "into": self.into,
            "type": self.type,
            "properties": self.properties,
            "provenance": self.provenance,
            "before": self.before,
            "after": self.after,
            "before_prov": self.before_prov,
            "after_prov": self.after_prov,
            "edges": [e.to_dict() for e in self.edges],
        }

    def touches(self) -> tuple[str, ...]:
        """Every node/edge id this mutation changed."""
        return (self.id, self.into, *(e.id for e in self.edges))

    @property
    def moved(self) -> int:
        """How many edges moved onto ``into``."""
        return sum(1 for e in self.edges if e.kept)

    def effects(self) -> list[Effect]:
        """What it did, element by element: edges moved (ends changed) or deleted, ``into`` updated, the
        merged node deleted."""
        out = [
            Effect(
                kind="edge",
                element=e.id,
                type=e.type,
                before=e.properties,
                after=e.properties if e.kept else None,
                ends_before=(e.source, e.target),
                ends_after=e.moved_ends(self.id, self.into) if e.kept else None,
            )
            for e in self.edges
        ]
        out.append(
            Effect(kind="node", element=self.into, type=self.type, before=self.before, after=self.after)
        )
        out.append(Effect(kind="node", element=self.id, type=self.type, before=self.properties, after=None))
        return out


Mutation = NodeAdded | NodeDeleted | NodeUpdated | EdgeAdded | EdgeDeleted | NodesMerged
"""One journaled change (the ``op`` field tells them apart)."""

MUTATION: TypeAdapter[Mutation] = TypeAdapter(Annotated[Mutation, Field(discriminator="op")])
"""THE reader of stored mutations (JSON text or decoded dicts, old stores included)."""


def read_mutation(data: str | bytes | Mapping[str, Any]) -> Mutation:
    """A stored mutation (its JSON text or decoded dict) as its typed object."""
    if isinstance(data, str | bytes):
        return MUTATION.validate_json(data)
    return MUTATION.validate_python(data)


def mutations_to_dicts(mutations: list[Mutation]) -> list[dict[str, Any]]:
    """The stored JSON forms of a list of mutations."""
    return [m.to_dict() for m in mutations]


__all__ = [
    "MUTATION",
    "EdgeAdded",
    "EdgeDeleted",
    "EdgeRecord",
    "Effect",
    "MergedEdge",
    "Mutation",
    "NodeAdded",
    "NodeDeleted",
    "NodeRecord",
    "NodeUpdated",
    "NodesMerged",
    "mutations_to_dicts",
    "read_mutation",
]
