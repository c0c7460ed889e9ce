"""Entity typing from the schema (``config.entity_typing: "schema"``): an ADD_EDGE end whose reference gives
no type is typed by the edge type's patterns (an ontology's domain and range), and added when it names no node
of such a type.

For each end, ``from`` first, when its reference has no ``label`` and the edge type has patterns:

1. the types the end may have are the declared patterns' types at that end (``CompiledSchema.
   declared_patterns``: a relation's domain or range), those whose other end admits the other node's type
   when that is known (a label on the other reference, or the type the ``from`` end was given);
2. a node with the reference's identity whose type is one of them, or a subtype of one, is the end;
3. else a node with that identity whose type the schema makes disjoint with them (``disjoint_with``) refuses
   the edge with ``TYPE_CONFLICT``: the entity would be typed two incompatible ways, and nothing is picked;
4. else, when one type is left, the node is added with it, as an ADD_NODE of that type with the reference's
   properties: every ADD_NODE rule applies (identity, near-duplicates, capacity, grounding); with several
   types, the edge is refused with ``AMBIGUOUS_REFERENCE`` naming them (add a ``label``).

A reference that gives a ``label`` and names no node of that type adds the node with that type (the pattern
check then judges the edge). A node of the same identity whose type the schema lets overlap with the wanted
one (OWL classes overlap unless declared disjoint) stays as it is: the new node is the entity as the wanted
type. The edge and the nodes it added are one verdict: when the edge (or a node) is refused, the nodes added
for it are taken back. A reference without a ``label`` to an edge type without patterns is resolved as always
(``NODE_NOT_FOUND`` when it names no node).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from igg.act.context import CheckContext, Rejection
from igg.graph.identity import normalize_reference
from igg.graph.state import GraphState
from igg.models.actions import AddEdge, AddNode, constructed
from igg.models.verdicts import ErrorCode as C

Role = Literal["from", "to"]


@dataclass(frozen=True, slots=True)
class TypedEnd:
    """One end of an edge, typed: its reference with the ``label`` it was given, and the node to add first
    (None when the reference names a node of that type already)."""

    ref: dict[str, Any]
    new: AddNode | None = None
    by: str = "patterns"
    """What typed a node to add: the edge type's ``patterns``, or the reference's ``label``."""

    @property
    def label(self) -> str:
        return str(self.ref["label"])


def wanted_types(ctx: CheckContext, label: str, role: Role, other: str | None) -> list[str]:
    """The types the ``role`` end of a ``label`` edge may have, as its patterns declare them, in order; those
    whose other end admits ``other`` (the other node's type) when it is known and any does (else all: the
    pattern check then names the pair that no pattern allows)."""
    i = 0 if role == "from" else 1
    subtypes = ctx.schema.subtypes
    declared = ctx.schema.declared_patterns.get(label, ())
    wanted: list[str] = []
    for pair in declared:
        if other is not None and other not in subtypes.get(pair[1 - i], (pair[1 - i],)):
            continue
        if pair[i] not in wanted:
            wanted.append(pair[i])
    if not wanted and other is not None:
        return wanted_types(ctx, label, role, None)
    return wanted


def type_end(ctx: CheckContext, a: AddEdge, role: Role, other: str | None) -> TypedEnd | Rejection | None:
    """The ``role`` end of ``a`` typed by its edge type's patterns (see the module doc), or by the label its
    reference gives (added when it names no node of that type); a rejection; or None when the reference is
    resolved as always (it names a node of the label it gives, or no pattern types it)."""
    given = a.from_ if role == "from" else a.to
    if "label" in given:
        ref = normalize_reference(given, ctx.schema.types_by_identity_key)
        if ctx.state.find_nodes(ref) or given["label"] not in ctx.schema.node_types:
            return None  # resolved as always
        properties = {k: v for k, v in ref.items() if k != "label"}
        new = constructed(AddNode, type="ADD_NODE", label=given["label"], properties=properties)
        return TypedEnd(ref, new, by="label")
    wanted = wanted_types(ctx, a.label, role, other)
    if not wanted:
        return None  # no pattern types it
    return type_ref(ctx, given, wanted, f"{role}: ", f"{a.label} wants its {role} end to be")


def type_ref(
    ctx: CheckContext, given: dict[str, Any], wanted: list[str], role: str, wants: str
) -> TypedEnd | Rejection | None:
    """A reference without a label typed as one of ``wanted`` (steps 2 to 4 of the module doc): the node of
    a fitting type it names, else the node to add, or a rejection; None when several nodes of fitting types
    match (resolving the reference says so). ``role`` opens a rejection's message (``"from: "``); ``wants``
    says who wants the types (``"director wants its from end to be"``)."""
    ref = normalize_reference(given, ctx.schema.types_by_identity_key)
    state = ctx.state
    found = state.find_nodes(ref)
    fits = fitting(state, found, wanted)
    if len(fits) == 1:
        return TypedEnd({**ref, "label": state.node_type(fits[0])})
    if fits:
        return None
    for n in found:
        have = state.node_type(n)
        clash = next((w for w in wanted if (have, w) in ctx.schema.disjoint), None)
        if clash is not None:
            return (
                C.TYPE_CONFLICT,
                f"{role}{state.describe(n)} ({n}) is a {have}; {wants} a {' or '.join(wanted)}, and the "
                f"schema makes {have} and {clash} disjoint. Refer to another node, or use another relation.",
            )
    if len(wanted) > 1:
        return (
            C.AMBIGUOUS_REFERENCE,
            f"{role}{_shown(ref)} names no node of a type that fits, and several do "
            f'({", ".join(wanted)}): add "label" (one of them) to the reference.',
        )
    properties = {k: v for k, v in ref.items() if k != "label"}
    new = constructed(AddNode, type="ADD_NODE", label=wanted[0], properties=properties)
    return TypedEnd({**ref, "label": wanted[0]}, new)


def fitting(state: GraphState, nodes: list[str], wanted: list[str]) -> list[str]:
    """The ``nodes`` whose type is one of ``wanted`` or a subtype of one, in their order."""
    subtypes = state.schema.subtypes
    return [n for n in nodes if any(state.node_type(n) in subtypes.get(w, (w,)) for w in wanted)]


def _shown(ref: dict[str, Any]) -> str:
    text = "{" + ", ".join(f"{k!r}: {v!r}" for k, v in ref.items()) + "}"
    return text if len(text) <= 200 else text[:197] + "..."


def typed_edge(a: AddEdge, ends: dict[Role, TypedEnd]) -> AddEdge:
    """``a`` with its typed ends' references (each with its label)."""
    return a.model_copy(
        update={
            "from_": ends["from"].ref if "from" in ends else a.from_,
            "to": ends["to"].ref if "to" in ends else a.to,
        }
    )


__all__ = ["TypedEnd", "fitting", "type_end", "type_ref", "typed_edge", "wanted_types"]
