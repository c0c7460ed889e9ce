"""SHACL shapes from an IGG schema (``igg schema shacl ONTOLOGY``): what an RDF export of a graph under that
schema must satisfy, and an ontology ``igg schema import`` reads back into the same schema.

The shapes graph (Turtle) holds the vocabulary (``owl:Class`` with ``rdfs:label``, ``rdfs:comment`` and
``rdfs:subClassOf``; ``owl:ObjectProperty`` / ``owl:DatatypeProperty`` with their labels) and one
``sh:NodeShape`` per node type (``sh:targetClass``), with a property shape per relation it may start: an edge
type's ``sh:class`` (``sh:or`` of several), a typed property's ``sh:datatype`` and ``sh:minCount`` for
required attributes and ``min_edges`` rules. A date, year or other datatype IGG keeps as text may also be a
plain string (``sh:or``): a value written as the text wrote it ("12 June 1989") is not an ill-typed date.
IRIs are the ontology's own (``Schema.terms``), else ``BASE vocab/NAME`` as the RDF export writes them.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from igg.models.schema import Schema
from igg.ontology.model import DATATYPE_KINDS, XSD, OntologyError

KIND_DATATYPES = {
    "string": XSD + "string",
    "integer": XSD + "integer",
    "float": XSD + "double",
    "boolean": XSD + "boolean",
}
"""The datatype of a typed property that names no ontology datatype."""
SH = "http://www.w3.org/ns/shacl#"


def term_iri(schema: Schema, name: str, base: str = "urn:igg:") -> str:
    """The IRI of a schema name: the ontology term's, else ``BASE vocab/NAME`` (the RDF export's)."""
    term = schema.terms.get(name)
    if term is not None and term.iri:
        return term.iri
    return f"{base}vocab/{quote(name, safe='')}"


def _one_of(g: Any, prop: Any, constraint: Any, values: list[Any]) -> None:
    """``prop sh:or ( [constraint v1] [constraint v2] ... )`` in ``g`` (an ``rdflib.Graph``)."""
    from rdflib import BNode, Namespace
    from rdflib.collection import Collection

    alternatives: list[Any] = []
    for value in values:
        alt = BNode()
        g.add((alt, constraint, value))
        alternatives.append(alt)
    head = BNode()
    Collection(g, head, alternatives)
    g.add((prop, Namespace(SH)["or"], head))


def shapes_graph(schema: Schema, base: str = "urn:igg:") -> Any:
    """The SHACL shapes (and vocabulary) of ``schema`` as an ``rdflib.Graph`` (``OntologyError`` without
    rdflib)."""
    try:
        from rdflib import Graph
    except ImportError:
        raise OntologyError("writing SHACL shapes needs rdflib: pip install 'igg[rdf]'") from None

    writer = _Shapes(schema, base, Graph())
    shapes = writer.classes()
    writer.relations(shapes)
    writer.properties(shapes)
    return writer.g


class _Shapes:
    """The writer of ``shapes_graph``: one part of the schema at a time, into ``g``."""

    def __init__(self, schema: Schema, base: str, g: Any) -> None:
        from rdflib import OWL, Namespace

        self.schema, self.base, self.g = schema, base, g
        self.sh = Namespace(SH)
        g.bind("sh", self.sh)
        g.bind("owl", OWL)

    def iri(self, name: str) -> Any:
        from rdflib import URIRef

        return URIRef(term_iri(self.schema, name, self.base))

    def label(self, name: str) -> Any:
        from rdflib import Literal

        term = self.schema.terms.get(name)
        return Literal(term.label if term is not None else name)

    def classes(self) -> dict[str, Any]:
        """Each node type as a class (label, comment, parents, disjoint classes) and its node shape, by
        type."""
        from rdflib import OWL, RDF, RDFS, Literal, URIRef

        g, sh, schema, iri = self.g, self.sh, self.schema, self.iri
        shapes: dict[str, URIRef] = {}
        for t in schema.node_types:
            c = iri(t)
            g.add((c, RDF.type, OWL.Class))
            g.add((c, RDFS.label, self.label(t)))
            if t in schema.descriptions:
                g.add((c, RDFS.comment, Literal(schema.descriptions[t])))
            for parent in schema.subclass_of.get(t, ()):
                g.add((c, RDFS.subClassOf, iri(parent)))
            for other in schema.disjoint_with.get(t, ()):
                g.add((c, OWL.disjointWith, iri(other)))
            shape = shapes[t] = URIRef(f"{self.base}shape/{quote(t, safe='')}")
            g.add((shape, RDF.type, sh.NodeShape))
            g.add((shape, sh.targetClass, c))
        return shapes

    def relations(self, shapes: dict[str, Any]) -> None:
        """Each edge type as an object property, and a property shape per source type of its patterns (the
        classes it may reach, the least count its ``min_edges`` rule asks)."""
        from rdflib import OWL, RDF, RDFS, BNode, Literal

        g, sh, schema, iri = self.g, self.sh, self.schema, self.iri
        least = {(r.node_type, r.edge_type): r.min for r in schema.completeness if r.rule == "min_edges"}
        for e in schema.edge_types:
            p = iri(e)
            g.add((p, RDF.type, OWL.ObjectProperty))
            g.add((p, RDFS.label, self.label(e)))
            if e in schema.descriptions:
                g.add((p, RDFS.comment, Literal(schema.descriptions[e])))
            ranges: dict[str, list[str]] = {}
            for pattern in schema.edge_patterns:
                if pattern.type == e:
                    ranges.setdefault(pattern.from_, []).append(pattern.to)
            for source, targets in ranges.items():
                prop = BNode()
                g.add((shapes[source], sh.property, prop))
                g.add((prop, sh.path, p))
                if len(targets) == 1:
                    g.add((prop, sh["class"], iri(targets[0])))
                else:
                    _one_of(g, prop, sh["class"], [iri(t) for t in targets])
                if (source, e) in least:
                    g.add((prop, sh.minCount, Literal(least[(source, e)])))

    def properties(self, shapes: dict[str, Any]) -> None:
        """Each typed property (not a list) as a datatype property, and a property shape on its type's node
        shape (its datatype, ``minCount 1`` when it is required)."""
        from rdflib import OWL, RDF, RDFS, BNode, Literal, URIRef

        g, sh, schema = self.g, self.sh, self.schema
        for t, specs in schema.property_types.items():
            for key, kind in specs.items():
                if not isinstance(kind, str) or kind == "list":
                    continue
                term = schema.terms.get(key)
                datatype = term.datatype if term is not None and term.datatype else KIND_DATATYPES[kind]
                p = self.iri(key)
                g.add((p, RDF.type, OWL.DatatypeProperty))
                g.add((p, RDFS.label, self.label(key)))
                prop = BNode()
                g.add((shapes[t], sh.property, prop))
                g.add((prop, sh.path, p))
                if DATATYPE_KINDS.get(datatype.removeprefix(XSD)) == "string" and datatype != XSD + "string":
                    _one_of(g, prop, sh.datatype, [URIRef(datatype), URIRef(XSD + "string")])
                else:
                    g.add((prop, sh.datatype, URIRef(datatype)))
                if key in schema.required_attributes.get(t, ()):
                    g.add((prop, sh.minCount, Literal(1)))


def shapes_turtle(schema: Schema, base: str = "urn:igg:") -> str:
    """The shapes of ``schema`` as Turtle text."""
    text: str = shapes_graph(schema, base).serialize(format="turtle")
    return text


__all__ = ["KIND_DATATYPES", "shapes_graph", "shapes_turtle", "term_iri"]
