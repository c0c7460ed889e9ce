"""Reading an ontology file: Text2KGBench's JSON, or RDF (OWL/RDFS and SHACL shapes, in Turtle, RDF/XML,
JSON-LD or N-Triples) through rdflib.

Labels are kept as the ontology writes them (a trailing space included: the benchmark's scorer compares
relation names with the label's spaces as ``_``); names are made from them stripped.

JSON: ``concepts`` (``qid``, ``label``) and ``relations`` (``pid``, ``label``, ``domain``, ``range``; domain
and range name a concept by label or qid, or a datatype word such as ``string``, ``number``, ``Date``). IRIs
follow the benchmark's own OWL files (``https://cenguix.github.io/Text2KGBench/<id>/concepts#<qid>``).

RDF: classes are ``owl:Class``/``rdfs:Class`` subjects, ``sh:targetClass`` objects and whatever a domain,
range or ``rdfs:subClassOf`` names that is no datatype (RDFS says they are classes); relations are
``owl:ObjectProperty``, ``owl:DatatypeProperty``, ``rdf:Property`` and every ``sh:path`` of a node shape's
``sh:property`` (its ``sh:targetClass`` is a domain, ``sh:class`` a range, ``sh:datatype`` the datatype,
``sh:minCount`` the least count). Labels: ``rdfs:label``, ``skos:prefLabel`` or ``sh:name`` (English or
untagged first), else the IRI's local name; descriptions: ``rdfs:comment``, ``skos:definition`` or
``sh:description``. A domain or range given as ``owl:unionOf`` counts each member.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from igg.ontology.model import XSD, Ontology, OntologyClass, OntologyError, Relation, datatype_of

_FORMATS = {
    ".ttl": "turtle",
    ".turtle": "turtle",
    ".n3": "n3",
    ".nt": "nt",
    ".owl": "xml",
    ".rdf": "xml",
    ".xml": "xml",
    ".jsonld": "json-ld",
    ".json": "json-ld",
}
BENCH_BASE = "https://cenguix.github.io/Text2KGBench/"
"""The base of the IRIs Text2KGBench's own OWL files give its JSON ontologies' terms."""


def load_ontology(path: str | Path) -> Ontology:
    """Read an ontology file (see the module doc); ``OntologyError`` names the file and why it cannot be
    read."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise OntologyError(f"{path}: cannot read the ontology ({exc.strerror or exc})") from None
    fmt = _FORMATS.get(path.suffix.lower())
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise OntologyError(f"{path}: not JSON ({exc})") from None
        if isinstance(data, dict) and "concepts" in data:
            return read_text2kg(data, str(path))
    return read_rdf(raw, str(path), fmt)


def read_text2kg(data: dict[str, Any], source: str) -> Ontology:
    """A Text2KGBench JSON ontology (``concepts`` and ``relations``)."""
    onto = Ontology(title=str(data.get("title") or source), source=source)
    oid = data.get("id")
    base = f"{BENCH_BASE}{oid}/" if isinstance(oid, str) and oid else None
    known: dict[str, str] = {}
    for i, c in enumerate(_items(data.get("concepts"), "concepts", source)):
        label = str(c.get("label") or c.get("qid") or "")
        if not label.strip():
            onto.warnings.append(f"concepts[{i}]: no label or qid; skipped")
            continue
        qid = str(c.get("qid") or label)
        name = onto.name_for(label, "concept")
        onto.classes[name] = OntologyClass(
            name=name, label=label, iri=f"{base}concepts#{qid}" if base else None
        )
        known.setdefault(label, name)
        known.setdefault(label.strip(), name)
        known.setdefault(qid, name)
    onto.check()
    for i, r in enumerate(_items(data.get("relations", []), "relations", source)):
        label = str(r.get("label") or r.get("pid") or "")
        if not label.strip():
            onto.warnings.append(f"relations[{i}]: no label or pid; skipped")
            continue
        name = onto.name_for(label, "relation", relation=True)
        pid = str(r.get("pid") or label)
        rel = Relation(name=name, label=label, iri=f"{base}relations#{pid}" if base else None)
        domain, rng = str(r.get("domain") or "").strip(), str(r.get("range") or "").strip()
        if not domain:
            onto.warnings.append(f"relation {label!r}: no domain; its subject may be of any type")
        elif domain in known:
            rel.domain = [known[domain]]
        else:
            onto.warnings.append(
                f"relation {label!r}: domain {domain!r} is not a concept; its subject may be of any type"
            )
        if rng in known:
            rel.range = [known[rng]]
        elif rng and (dt := datatype_of(rng)):
            rel.datatype = dt
        else:
            onto.warnings.append(
                f"relation {label!r}: range {rng!r} is neither a concept nor a datatype; its "
                "object may be of any type"
                if rng
                else f"relation {label!r}: no range; its object may be of any type"
            )
        onto.relations[name] = rel
    return onto


def _items(value: Any, key: str, source: str) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise OntologyError(f"{source}: {key!r} must be a list of objects")
    return value


def read_rdf(raw: bytes, source: str, fmt: str | None) -> Ontology:
    """An OWL/RDFS ontology or SHACL shapes (or both in one graph), parsed by rdflib."""
    try:
        from rdflib import Graph
        from rdflib.util import guess_format
    except ImportError:
        raise OntologyError("reading RDF ontologies needs rdflib: pip install 'igg[rdf]'") from None
    graph = Graph()
    try:
        graph.parse(data=raw, format=fmt or guess_format(source) or "turtle")
    except Exception as exc:  # rdflib raises many kinds (BadSyntax, SAXParseException, JSON errors, ...)
        first = " ".join(str(exc).split()) or type(exc).__name__
        raise OntologyError(f"{source}: not readable as {fmt or 'RDF'}: {first[:200]}") from None
    return _RdfReader(graph, source).read()


class _RdfReader:
    """One RDF graph read into an ``Ontology``."""

    def __init__(self, graph: Any, source: str) -> None:
        from rdflib import OWL, RDF, RDFS, SKOS, Namespace, URIRef

        self.g, self.URIRef = graph, URIRef
        self.RDF, self.RDFS, self.OWL, self.SKOS, self.SH = (
            RDF,
            RDFS,
            OWL,
            SKOS,
            Namespace("http://www.w3.org/ns/shacl#"),
        )
        title = graph.value(None, RDF.type, OWL.Ontology)
        label = self.label(title) if title is not None else None
        self.onto = Ontology(title=label or Path(source).stem, source=source)
        self.class_names: dict[Any, str] = {}

    def read(self) -> Ontology:
        g, RDFS, OWL = self.g, self.RDFS, self.OWL
        props = self.properties()
        for c in sorted(set(self.declared(props)), key=str):
            self.add_class(c)
        for c, parent in g.subject_objects(RDFS.subClassOf):
            if c in self.class_names and parent in self.class_names:
                self.onto.classes[self.class_names[c]].parents.append(self.class_names[parent])
        for c, other in g.subject_objects(OWL.disjointWith):
            if c in self.class_names and other in self.class_names:
                self.onto.classes[self.class_names[c]].disjoint.append(self.class_names[other])
        self.onto.check()
        relations: dict[Any, Relation] = {}
        for p in sorted(set(props), key=str):
            relations[p] = self.relation(p)
        self.shapes(relations)
        for p, rel in relations.items():
            if not rel.domain:
                self.onto.warnings.append(
                    f"relation {rel.label!r} ({p}): no domain; its subject may be of any type"
                )
            if not rel.range and not rel.datatype:
                self.onto.warnings.append(
                    f"relation {rel.label!r} ({p}): no range; its object may be of any type"
                )
            self.onto.relations[rel.name] = rel
        return self.onto

    def properties(self) -> list[Any]:
        """The IRIs declared properties (``owl:ObjectProperty``, ``owl:DatatypeProperty``,
        ``rdf:Property``)."""
        g, RDF, OWL = self.g, self.RDF, self.OWL
        props: list[Any] = []
        for kind in (OWL.ObjectProperty, OWL.DatatypeProperty, RDF.Property):
            props += [p for p in g.subjects(RDF.type, kind) if isinstance(p, self.URIRef)]
        return props

    def declared(self, props: list[Any]) -> list[Any]:
        """The IRIs that are classes: declared so, a shape's target, in a ``rdfs:subClassOf``, the domain or
        range (not a datatype) of one of ``props``, or the class of a shape's property (repeats included)."""
        g, RDF, RDFS, OWL, SH = self.g, self.RDF, self.RDFS, self.OWL, self.SH
        declared: list[Any] = []
        for kind in (OWL.Class, RDFS.Class):
            declared += [c for c in g.subjects(RDF.type, kind) if isinstance(c, self.URIRef)]
        declared += [c for c in g.objects(None, SH.targetClass) if isinstance(c, self.URIRef)]
        for c, parent in g.subject_objects(RDFS.subClassOf):
            declared += [x for x in (c, parent) if isinstance(x, self.URIRef)]
        for p in props:
            for end in (RDFS.domain, RDFS.range):
                declared += [c for c in self.members(g.objects(p, end)) if self.datatype(c) is None]
        for shape in g.subjects(SH.property, None):
            for prop in g.objects(shape, SH.property):
                declared += [c for c in self.members(g.objects(prop, SH["class"]))]
        return declared

    def add_class(self, c: Any) -> None:
        label = self.label(c) or _local(c)
        name = self.onto.name_for(label, "class")
        self.class_names[c] = name
        self.onto.classes[name] = OntologyClass(
            name=name, label=label, iri=str(c), description=self.comment(c)
        )

    def relation(self, p: Any) -> Relation:
        g = self.g
        label = self.label(p) or _local(p)
        rel = Relation(
            name=self.onto.name_for(label, "relation", relation=True),
            label=label,
            iri=str(p),
            description=self.comment(p),
        )
        rel.domain = [
            self.class_names[c] for c in self.members(g.objects(p, self.RDFS.domain)) if c in self.class_names
        ]
        for r in self.members(g.objects(p, self.RDFS.range)):
            if (dt := self.datatype(r)) is not None:
                rel.datatype = dt
            elif r in self.class_names:
                rel.range.append(self.class_names[r])
        if (p, self.RDF.type, self.OWL.DatatypeProperty) in g and not rel.range and not rel.datatype:
            rel.datatype = XSD + "string"
        return rel

    def shapes(self, relations: dict[Any, Relation]) -> None:
        """Node shapes' property shapes: each path a relation, its target classes a domain."""
        g, SH = self.g, self.SH
        for shape in sorted(set(g.subjects(SH.property, None)), key=str):
            targets = [self.class_names[c] for c in g.objects(shape, SH.targetClass) if c in self.class_names]
            for prop in g.objects(shape, SH.property):
                path = g.value(prop, SH.path)
                if not isinstance(path, self.URIRef):
                    self.onto.warnings.append(
                        f"shape {shape}: a property shape without an IRI sh:path; skipped"
                    )
                    continue
                rel = relations.get(path)
                if rel is None:
                    rel = relations[path] = self.relation(path)
                    name = g.value(prop, SH.name)
                    if name is not None and self.label(path) is None:
                        rel.label = str(name)
                    rel.description = rel.description or _text(g.value(prop, SH.description))
                rel.domain += [t for t in targets if t not in rel.domain]
                ranges = list(g.objects(prop, SH["class"]))
                datatypes = [str(d) for d in g.objects(prop, SH.datatype)]
                for alt in self.members(g.objects(prop, SH["or"])):
                    ranges += list(g.objects(alt, SH["class"]))
                    datatypes += [str(d) for d in g.objects(alt, SH.datatype)]
                rel.range += [
                    self.class_names[c]
                    for c in ranges
                    if c in self.class_names and self.class_names[c] not in rel.range
                ]
                if datatypes:  # sh:or (a date, plain text): the datatype that is not xsd:string
                    rel.datatype = next((d for d in datatypes if d != XSD + "string"), datatypes[0])
                least = g.value(prop, SH.minCount)
                if least is not None and str(least).isdigit():
                    rel.min_count = max(rel.min_count, int(str(least)))

    def members(self, nodes: Iterable[Any]) -> list[Any]:
        """The nodes, with an ``owl:unionOf`` class (or an RDF list, as ``sh:or`` takes) replaced by its
        members."""
        from rdflib.collection import Collection

        out: list[Any] = []
        for n in nodes:
            union = self.g.value(n, self.OWL.unionOf)
            if union is not None:
                out += list(Collection(self.g, union))
            elif (n, self.RDF.first, None) in self.g:
                out += list(Collection(self.g, n))
            else:
                out.append(n)
        return out

    def datatype(self, node: Any) -> str | None:
        """The XSD datatype IRI a range stands for (an XSD IRI, rdfs:Literal, a datatype word not declared as
        a class), or None."""
        text = str(node)
        if text.startswith(XSD) or text == str(self.RDFS.Literal):
            return datatype_of(text)
        if (node, self.RDF.type, self.OWL.Class) in self.g or (
            node,
            self.RDF.type,
            self.RDFS.Datatype,
        ) in self.g:
            return None if (node, self.RDF.type, self.OWL.Class) in self.g else XSD + "string"
        return datatype_of(_local(node))

    def label(self, node: Any) -> str | None:
        for p in (self.RDFS.label, self.SKOS.prefLabel, self.SH.name):
            values = list(self.g.objects(node, p))
            if values:
                values.sort(key=lambda v: (getattr(v, "language", None) not in (None, "en"), str(v)))
                return str(values[0]) if str(values[0]).strip() else None
        return None

    def comment(self, node: Any) -> str | None:
        for p in (self.RDFS.comment, self.SKOS.definition, self.SH.description):
            value = self.g.value(node, p)
            if value is not None:
                return str(value).strip() or None
        return None


def _local(iri: Any) -> str:
    return re.split(r"[#/:]", str(iri).rstrip("/#"))[-1] or str(iri)


def _text(value: Any) -> str | None:
    return str(value).strip() or None if value is not None else None


__all__ = ["BENCH_BASE", "load_ontology", "read_rdf", "read_text2kg"]
