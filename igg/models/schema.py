"""The graph schema a request declares: node and edge types, required attributes, identities, patterns.

``Schema`` is the JSON contract; ``CompiledSchema`` is its lookup form, built once per session and used on
every action (sets and dicts, no pydantic on the hot path).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from igg.models.proptypes import PropertyType

DEFAULT_IDENTITY_KEYS: tuple[str, ...] = ("name",)
"""Identity keys of a node type the schema does not list in ``identity_keys``."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EdgePattern(_Strict):
    """One allowed (source type, edge type, target type) combination.

    When any pattern names an edge type, edges of that type must match one of its patterns; edge types no
    pattern names are unconstrained.
    """

    from_: str = Field(alias="from", description="Node type of the edge's source.")
    type: str = Field(description="The edge type this pattern allows.")
    to: str = Field(description="Node type of the edge's target.")

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class HasAttributeRule(_Strict):
    """Every node of ``node_type`` has a non-empty ``attribute`` (a soft to-do, unlike required
    attributes)."""

    rule: Literal["has_attribute"]
    node_type: str = Field(description="The node type the rule applies to.")
    attribute: str = Field(description="The property every such node should have.")


class NoIsolatedNodesRule(_Strict):
    """No node (of ``node_type``, or of any type when omitted) is without edges."""

    rule: Literal["no_isolated_nodes"]
    node_type: str | None = Field(default=None, description="Limit the rule to this node type.")


class MinEdgesRule(_Strict):
    """Every node of ``node_type`` has at least ``min`` edges of ``edge_type`` in ``direction``."""

    rule: Literal["min_edges"]
    node_type: str = Field(description="The node type the rule applies to.")
    edge_type: str = Field(description="The edge type to count.")
    direction: Literal["in", "out", "any"] = Field(default="out", description="Which edges count.")
    min: int = Field(default=1, ge=1, description="The least number of such edges.")


class Term(_Strict):
    """The ontology term behind a schema name (a node type, edge type or typed property key): exports and
    reports write the term's own label and IRI, not the safe name."""

    label: str = Field(description="The term's label in its ontology, e.g. 'production company'.")
    iri: str | None = Field(default=None, description="The term's IRI, when the ontology gives one.")
    datatype: str | None = Field(
        default=None,
        description=(
            "A datatype relation's range (an XSD datatype IRI); None for classes and object relations."
        ),
    )


class ValidTime(_Strict):
    """How a node or edge type is scoped in valid time (``igg.models.validtime``): its actions may carry
    ``valid_from``/``valid_to``."""

    one_at_a_time: bool = Field(
        default=False,
        description=(
            "Edge types: a source has at most one target of this type at a time (WORKS_AT, CEO_OF): a "
            "fact with a later valid_from closes the open one of the same source and type."
        ),
    )
    properties: list[str] = Field(
        default_factory=list,
        description=(
            "Node types: properties with one value at a time (a title, a city): each value is kept with "
            "the time it held, and a later one closes the one before."
        ),
    )


CompletenessRule = Annotated[
    HasAttributeRule | NoIsolatedNodesRule | MinEdgesRule, Field(discriminator="rule")
]


class Schema(_Strict):
    """What the graph may contain. Type names must be safe identifiers (they become Neo4j labels)."""

    node_types: list[str] = Field(min_length=1, description="Allowed node types, e.g. Class, Method.")
    edge_types: list[str] = Field(default_factory=list, description="Allowed edge (relationship) types.")
    required_attributes: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Per node or edge type, the properties every element of that type must have.",
    )
    identity_keys: dict[str, list[str]] = Field(
        default_factory=dict,
        description=(
            "Per node type, the properties that identify a node (default ['name']). Composite keys keep "
            "e.g. overloaded methods apart: {'Method': ['name', 'signature']}. Identity keys are required."
        ),
    )
    edge_patterns: list[EdgePattern] = Field(
        default_factory=list,
        description="Allowed (from type, edge type, to type) combinations; edge types not named are free.",
    )
    completeness: list[CompletenessRule] = Field(
        default_factory=list,
        description="Soft rules shown to the agent as open to-dos until met (and optionally ending the run).",
    )
    descriptions: dict[str, str] = Field(
        default_factory=dict,
        description=(
            "Per node or edge type, what it means (shown to the agent), e.g. {'CALLS': 'a method call'}."
        ),
    )
    property_types: dict[str, dict[str, PropertyType]] = Field(
        default_factory=dict,
        description=(
            "Per node or edge type, the type of some properties: 'string', 'integer', 'float', 'boolean',"
            " 'list' or {'enum': [values]}; enforced (WRONG_PROPERTY_TYPE, VALUE_NOT_IN_ENUM). Others stay"
            " free."
        ),
    )

    subclass_of: dict[str, list[str]] = Field(
        default_factory=dict,
        description=(
            "Per node type, its parent types (rdfs:subClassOf): an edge pattern on a type admits its "
            "subtypes, e.g. {'Scientist': ['Person']}."
        ),
    )
    disjoint_with: dict[str, list[str]] = Field(
        default_factory=dict,
        description=(
            "Per node type, the types no entity may also be (owl:disjointWith; their subtypes too): an "
            "entity typed both ways is refused (TYPE_CONFLICT)."
        ),
    )
    terms: dict[str, Term] = Field(
        default_factory=dict,
        description=(
            "Per node type, edge type or property key, the ontology term it stands for (label, IRI, "
            "datatype); set by an imported ontology, read by the exports and reports."
        ),
    )

    valid_time: dict[str, ValidTime] = Field(
        default_factory=dict,
        description=(
            "Per node or edge type, that its facts hold for a time (valid_from, valid_to), e.g. "
            "{'WORKS_AT': {'one_at_a_time': true}, 'Person': {'properties': ['title']}}; a time on "
            "another type is refused (TIME_NOT_SCOPED)."
        ),
    )

    def compile(self) -> CompiledSchema:
        """The lookup form of this schema (assumes it passed ``igg.models.request.check_request``)."""
        node_types = frozenset(self.node_types)
        identity = {t: tuple(self.identity_keys.get(t, DEFAULT_IDENTITY_KEYS)) for t in self.node_types}
        required: dict[str, tuple[str, ...]] = {}
        for t in (*self.node_types, *self.edge_types):
            keys = list(identity.get(t, ()))
            keys += [k for k in self.required_attributes.get(t, []) if k not in keys]
            required[t] = tuple(keys)
        below = subtypes(self.node_types, self.subclass_of)
        patterns: dict[str, set[tuple[str, str]]] = {}
        for p in self.edge_patterns:  # a pattern on a type admits its subtypes at either end
            patterns.setdefault(p.type, set()).update(
                (a, b) for a in below.get(p.from_, (p.from_,)) for b in below.get(p.to, (p.to,))
            )
        keyed = {k for keys in identity.values() for k in keys}
        return CompiledSchema(
            types_by_identity_key={k: tuple(t for t in self.node_types if k in identity[t]) for k in keyed},
            types_without_identity_key={
                k: tuple(t for t in self.node_types if k not in identity[t]) for k in keyed
            },
            node_types=node_types,
            edge_types=frozenset(self.edge_types),
            node_type_list=tuple(self.node_types),
            edge_type_list=tuple(self.edge_types),
            identity_keys=identity,
            required=required,
            patterns={k: frozenset(v) for k, v in patterns.items()},
            declared_patterns=declared_patterns(self.edge_patterns),
            property_types={t: dict(specs) for t, specs in self.property_types.items() if specs},
            descriptions=dict(self.descriptions),
            subtypes={t: frozenset(below[t]) for t in self.node_types},
            subclass_of={t: tuple(parents) for t, parents in self.subclass_of.items() if parents},
            disjoint=frozenset(
                pair
                for a, others in self.disjoint_with.items()
                for b in others
                for x in below.get(a, (a,))
                for y in below.get(b, (b,))
                for pair in ((x, y), (y, x))
            ),
            terms=dict(self.terms),
            time_scoped=frozenset(self.valid_time),
            one_at_a_time=frozenset(t for t, v in self.valid_time.items() if v.one_at_a_time),
            timed_properties={t: frozenset(v.properties) for t, v in self.valid_time.items() if v.properties},
        )


def declared_patterns(patterns: list[EdgePattern]) -> dict[str, tuple[tuple[str, str], ...]]:
    """Per edge type, its patterns' (from, to) types as declared, in order, subtypes not added (an ontology's
    domain and range): what entity typing (``igg.act.entities``) types a new endpoint by."""
    out: dict[str, list[tuple[str, str]]] = {}
    for p in patterns:
        pairs = out.setdefault(p.type, [])
        if (p.from_, p.to) not in pairs:
            pairs.append((p.from_, p.to))
    return {k: tuple(v) for k, v in out.items()}


def subtypes(node_types: list[str], subclass_of: dict[str, list[str]]) -> dict[str, tuple[str, ...]]:
    """Each node type with its subtypes, direct and indirect (itself first); a cycle does not loop."""
    children: dict[str, list[str]] = {}
    for child, parents in subclass_of.items():
        for parent in parents:
            children.setdefault(parent, []).append(child)
    out: dict[str, tuple[str, ...]] = {}
    for t in node_types:
        seen = [t]
        stack = list(children.get(t, ()))
        while stack:
            c = stack.pop()
            if c not in seen:
                seen.append(c)
                stack.extend(children.get(c, ()))
        out[t] = tuple(seen)
    return out


@dataclass(frozen=True, kw_only=True)
class CompiledSchema:
    """Schema lookups used on every action; built by ``Schema.compile``."""

    node_types: frozenset[str]
    edge_types: frozenset[str]
    node_type_list: tuple[str, ...]
    edge_type_list: tuple[str, ...]
    identity_keys: dict[str, tuple[str, ...]]
    """Identity keys per node type."""
    required: dict[str, tuple[str, ...]]
    """Required properties per node or edge type (identity keys first)."""
    patterns: dict[str, frozenset[tuple[str, str]]] = field(default_factory=dict)
    """Allowed (from type, to type) pairs per constrained edge type."""
    declared_patterns: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    """Per constrained edge type, its (from type, to type) pairs as declared (subtypes not added)."""
    types_by_identity_key: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Identity key -> node types whose identity includes it."""
    types_without_identity_key: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Identity key -> node types whose identity does not include it (references must scan those)."""
    property_types: dict[str, dict[str, PropertyType]] = field(default_factory=dict)
    """Declared property types per node or edge type (types without any are absent)."""
    descriptions: dict[str, str] = field(default_factory=dict)
    """What each node or edge type means, where the schema says."""
    subtypes: dict[str, frozenset[str]] = field(default_factory=dict)
    """Each node type with its subtypes (``subclass_of`` read downwards; itself included)."""
    terms: dict[str, Term] = field(default_factory=dict)
    """The ontology term behind a schema name, where the schema came from an ontology."""
    subclass_of: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Each node type's direct parent types, where it has any."""
    disjoint: frozenset[tuple[str, str]] = frozenset()
    """Pairs of node types no entity may be both of (``disjoint_with``, both ways, subtypes included)."""
    time_scoped: frozenset[str] = frozenset()
    """Node and edge types whose facts may carry valid time (``valid_time``)."""
    one_at_a_time: frozenset[str] = frozenset()
    """Edge types whose source has at most one target at a time."""
    timed_properties: dict[str, frozenset[str]] = field(default_factory=dict)
    """Per node type, the properties with one value at a time (their history is kept)."""
