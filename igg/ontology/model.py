"""One ontology, whatever it was read from: classes, relations, their safe names, and the IGG schema it makes.

The schema (``Ontology.schema``):

=============================  =====================================================================
class C                        node type ``safe_name(C's label)``; ``rdfs:subClassOf`` -> ``subclass_of``
object relation r (D -> R)     edge type r; one edge pattern per (domain, range) pair; a pattern on a
                               type admits its subtypes (``Schema.subclass_of``)
datatype relation r (D -> xsd) property r of D, typed (``property_types``: string, integer, float,
                               boolean; dates and years stay strings, their datatype kept in the term)
``sh:minCount`` >= 1           a datatype relation: required attribute of D; an object relation: a
                               ``min_edges`` completeness rule on D
label, comment                 ``terms`` (label, IRI, datatype) and ``descriptions``
=============================  =====================================================================

Labels with spaces or punctuation (``production company``) become safe names (``production_company``); the
``terms`` of the schema map each name back to its label and IRI, and travel with the session's request.

A problem with the ontology is a warning (``Ontology.warnings``, one per problem, naming the element) when the
import can go on: a range that is neither a class nor a datatype (the relation's range is left open), a
relation without a domain (its edges may start anywhere; a datatype relation without a domain stays an untyped
property), two terms with one label (the second gets a numbered name), a ``subClassOf`` cycle (the link that
closes it is dropped). An unreadable file or an ontology with no class is refused (``OntologyError``).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Literal

from igg.models.proptypes import PropertyKind
from igg.models.schema import EdgePattern, MinEdgesRule, Schema, Term

XSD = "http://www.w3.org/2001/XMLSchema#"
DATATYPE_KINDS: dict[str, PropertyKind] = {
    "string": "string",
    "normalizedString": "string",
    "token": "string",
    "anyURI": "string",
    "langString": "string",
    "Literal": "string",
    "date": "string",
    "dateTime": "string",
    "gYear": "string",
    "gYearMonth": "string",
    "time": "string",
    "integer": "integer",
    "int": "integer",
    "long": "integer",
    "short": "integer",
    "nonNegativeInteger": "integer",
    "positiveInteger": "integer",
    "negativeInteger": "integer",
    "nonPositiveInteger": "integer",
    "double": "float",
    "float": "float",
    "decimal": "float",
    "boolean": "boolean",
}
"""What property type each XSD datatype (by local name) becomes."""
DATATYPE_WORDS: dict[str, str] = {
    "string": "string",
    "text": "string",
    "number": "double",
    "numeric": "double",
    "date": "date",
    "year": "gYear",
    "datetime": "dateTime",
    "integer": "integer",
    "int": "integer",
    "float": "double",
    "double": "double",
    "decimal": "decimal",
    "boolean": "boolean",
    "literal": "string",
}
"""Range names that mean a datatype when no class of that name exists (Text2KGBench writes ``string``,
``number``, ``Date``, ``Year``), with the XSD datatype each stands for."""

_UNSAFE = re.compile(r"[^A-Za-z0-9_]+")
RESERVED = frozenset({"label", "name"})
"""Property keys IGG keeps for itself (a node reference's type, the default identity): relations so named get
a trailing underscore."""


class OntologyError(Exception):
    """An ontology IGG cannot import (unreadable, or nothing to import); the message names the file and
    why."""


def safe_name(label: str) -> str:
    """A schema name for an ontology label: ASCII letters, digits and ``_`` (accents dropped, other characters
    as ``_``), not starting with a digit, at most 64 characters; ``production company`` ->
    ``production_company``."""
    ascii_text = unicodedata.normalize("NFKD", label).encode("ascii", "ignore").decode()
    name = _UNSAFE.sub("_", ascii_text).strip("_") or "term"
    if name[0].isdigit():
        name = "_" + name
    return name[:64]


@dataclass(kw_only=True)
class OntologyClass:
    """A class: its safe name, label, IRI, description and parents (safe names)."""

    name: str
    label: str
    iri: str | None = None
    description: str | None = None
    parents: list[str] = field(default_factory=list)
    disjoint: list[str] = field(default_factory=list)


@dataclass(kw_only=True)
class Relation:
    """A relation: object (range: classes) or datatype (``datatype``: an XSD IRI)."""

    name: str
    label: str
    iri: str | None = None
    description: str | None = None
    domain: list[str] = field(default_factory=list)
    range: list[str] = field(default_factory=list)
    datatype: str | None = None
    min_count: int = 0

    @property
    def kind(self) -> Literal["object", "datatype"]:
        """``datatype`` when the range is a datatype, else ``object``."""
        return "datatype" if self.datatype else "object"


@dataclass(kw_only=True)
class Ontology:
    """An ontology read by ``igg.ontology.read``: classes and relations by safe name, and the warnings."""

    title: str
    source: str
    classes: dict[str, OntologyClass] = field(default_factory=dict)
    relations: dict[str, Relation] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    _labels: dict[str, str] = field(default_factory=dict)

    def name_for(self, label: str, what: str, *, relation: bool = False) -> str:
        """A new term's safe name: warns and numbers it when another term has that label (or name)."""
        base = safe_name(label)
        if relation and base in RESERVED:
            base += "_"
        key = label.strip()
        taken = set(self.classes) | set(self.relations)
        if key in self._labels or base in taken:
            other = self._labels.get(key, base)
            self.warnings.append(
                f"{what} {label!r}: another term has this label or name ({other}); "
                "it is imported under a numbered name"
            )
            n = 2
            while f"{base}_{n}" in taken:
                n += 1
            base = f"{base}_{n}"
        self._labels.setdefault(key, base)
        return base

    def check(self) -> None:
        """Warn about relations without a domain, ranges that name nothing, and break ``subClassOf``
        cycles."""
        for cls in self.classes.values():
            cls.parents = [p for p in cls.parents if p in self.classes and p != cls.name]
        for cls in sorted(self.classes.values(), key=lambda c: c.name):
            for parent in list(cls.parents):
                if cls.name in self.ancestors(parent):
                    cls.parents.remove(parent)
                    self.warnings.append(
                        f"class {cls.label!r}: subClassOf {self.classes[parent].label!r} closes a "
                        "cycle; that link is dropped"
                    )
        if not self.classes:
            raise OntologyError(
                f"{self.source}: no class to import (owl:Class, rdfs:Class, sh:targetClass or 'concepts')"
            )

    def ancestors(self, name: str) -> set[str]:
        """The class's ancestors (not itself unless in a cycle)."""
        seen: set[str] = set()
        stack = list(self.classes[name].parents) if name in self.classes else []
        while stack:
            p = stack.pop()
            if p not in seen:
                seen.add(p)
                stack.extend(self.classes[p].parents if p in self.classes else ())
        return seen

    def schema(self) -> Schema:
        """The IGG schema of this ontology (see the module doc)."""
        node_types = list(self.classes)
        terms: dict[str, Term] = {c.name: Term(label=c.label, iri=c.iri) for c in self.classes.values()}
        descriptions = {c.name: c.description for c in self.classes.values() if c.description}
        edges: list[str] = []
        patterns: list[EdgePattern] = []
        property_types: dict[str, dict[str, PropertyKind]] = {}
        required: dict[str, list[str]] = {}
        completeness: list[MinEdgesRule] = []
        for r in self.relations.values():
            terms[r.name] = Term(label=r.label, iri=r.iri, datatype=r.datatype)
            if r.kind == "datatype":
                kind = DATATYPE_KINDS.get(_local(r.datatype or ""), "string")
                for d in r.domain:
                    property_types.setdefault(d, {})[r.name] = kind
                    if r.min_count:
                        required.setdefault(d, []).append(r.name)
                continue
            edges.append(r.name)
            if r.description:
                descriptions[r.name] = r.description
            if r.domain or r.range:
                patterns += [
                    EdgePattern.model_validate({"from": d, "type": r.name, "to": t})
                    for d in (r.domain or node_types)
                    for t in (r.range or node_types)
                ]
            completeness += [
                MinEdgesRule(rule="min_edges", node_type=d, edge_type=r.name, min=r.min_count)
                for d in r.domain
                if r.min_count
            ]
        return Schema.model_validate(
            {
                "node_types": node_types,
                "edge_types": edges,
                "edge_patterns": patterns,
                "required_attributes": required,
                "property_types": property_types,
                "descriptions": descriptions,
                "completeness": completeness,
                "subclass_of": {c.name: c.parents for c in self.classes.values() if c.parents},
                "disjoint_with": {c.name: c.disjoint for c in self.classes.values() if c.disjoint},
                "terms": terms,
            }
        )


def _local(iri: str) -> str:
    return re.split(r"[#/:]", iri)[-1]


_LEXICAL = {
    "date": r"-?\d{4,}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])(Z|[+-]\d\d:\d\d)?",
    "gYear": r"-?\d{4,}(Z|[+-]\d\d:\d\d)?",
    "gYearMonth": r"-?\d{4,}-(0[1-9]|1[0-2])(Z|[+-]\d\d:\d\d)?",
    "dateTime": r"-?\d{4,}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d+)?"
    r"(Z|[+-]\d\d:\d\d)?",
    "integer": r"[+-]?\d+",
    "int": r"[+-]?\d+",
    "long": r"[+-]?\d+",
    "short": r"[+-]?\d+",
    "nonNegativeInteger": r"\+?\d+",
    "positiveInteger": r"\+?0*[1-9]\d*",
    "decimal": r"[+-]?(\d+(\.\d*)?|\.\d+)",
    "double": r"[+-]?((\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?|INF)|NaN",
    "float": r"[+-]?((\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?|INF)|NaN",
    "boolean": r"true|false|1|0",
}
"""The lexical forms (XML Schema 1.1, Part 2) of the datatypes whose values IGG writes typed."""


def lexical_ok(text: str, datatype: str) -> bool:
    """Whether ``text`` is a valid literal of the XSD ``datatype``: always for ``xsd:string``; by its lexical
    form for dates, years, numbers and booleans; never for other datatypes (they are written as plain
    strings)."""
    if datatype == XSD + "string":
        return True
    pattern = _LEXICAL.get(datatype.removeprefix(XSD)) if datatype.startswith(XSD) else None
    return pattern is not None and re.fullmatch(pattern, text) is not None


def datatype_of(name: str) -> str | None:
    """The XSD datatype IRI a range stands for: an XSD IRI or local name, or a datatype word; None
    otherwise."""
    if name.startswith(XSD):
        return name
    if name.endswith("#Literal"):  # rdfs:Literal
        return XSD + "string"
    local = _local(name)
    if local in DATATYPE_KINDS and name == local:
        return XSD + local
    word = DATATYPE_WORDS.get(local.casefold())
    return XSD + word if word else None


__all__ = [
    "DATATYPE_KINDS",
    "DATATYPE_WORDS",
    "RESERVED",
    "XSD",
    "Ontology",
    "OntologyClass",
    "OntologyError",
    "Relation",
    "datatype_of",
    "lexical_ok",
    "safe_name",
]
