"""RDF export: N-Triples written by hand (streamed, fast), Turtle and JSON-LD through rdflib (extra ``rdf``).

The mapping (``BASE`` is the base IRI, ``--base-iri``; default ``urn:igg:``)::

    node type T           BASE vocab/T    a rdfs:Class; every node of type T is ``rdf:type`` it
    edge type E           BASE vocab/E    an owl:ObjectProperty; an edge is the triple (source E target)
    property key k        BASE vocab/k    an owl:DatatypeProperty (rdfs:range from the schema's
                                          property_types when it declares one)
    node                  BASE node/T/V   V: its identity values, each percent-encoded, joined by "/";
                                          a value that is not a string is written as "$" + its JSON
    edge with properties  BASE edge/ID    an rdf:Statement (standard RDF reification: rdf:subject,
                                          rdf:predicate, rdf:object) carrying the edge's properties; ID is
                                          IGG's edge id

A schema imported from an ontology (``Schema.terms``) writes its own IRIs instead of ``BASE vocab/NAME`` for
its classes, relations and datatype relations, ``rdfs:subClassOf`` for ``subclass_of``, and a datatype
relation's values as literals of the ontology's datatype (``"1989-06-12"^^xsd:date``) where the text is one
(else a plain string, as the text had it), one triple per value of a multi-valued property (not an
``rdf:JSON`` list): the export satisfies the SHACL shapes ``igg schema shacl`` writes from the same ontology.

Valid time (``igg.models.validtime``): ``igg_valid_from`` and ``igg_valid_to`` are ``BASE
vocab/igg_valid_from`` and ``BASE vocab/igg_valid_to``, typed by the precision the source gave
(``"2024"^^xsd:gYear``, ``xsd:gYearMonth``, ``xsd:date``, ``xsd:dateTime`` in UTC); on an edge they sit on its
rdf:Statement like any edge property; a one-value property's history ``igg_history`` is an ``rdf:JSON`` list
of ``{key, value, from, to}``.

Values: strings are plain literals (xsd:string), integers ``xsd:integer``, floats ``xsd:double``, booleans
``xsd:boolean``, lists ``rdf:JSON`` literals holding the list as JSON. Code points UTF-8 cannot carry
(unpaired surrogates) are replaced by U+FFFD and counted (``replaced_values``). Edge properties use
reification, not RDF-star, because rdflib (the oracle and the Turtle/JSON-LD writer) reads no RDF-star.

``triples`` is the general path (rdflib terms, used for Turtle and JSON-LD); ``write_ntriples`` writes the
same triples as text without building any term (a property test pins the two together). IGG never reads RDF
back: ``igg export`` refuses RDF and GEXF input and says so.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any
from urllib.parse import quote

from igg.errors import ExportError
from igg.graph.collector import collector_paused
from igg.graph.state import GraphState
from igg.io.files import open_for_write
from igg.models.validtime import VALID_FROM, VALID_TO
from igg.ontology.model import lexical_ok

DEFAULT_BASE = "urn:igg:"
"""The base IRI when none is given."""
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
OWL = "http://www.w3.org/2002/07/owl#"
XSD = "http://www.w3.org/2001/XMLSchema#"
_DATATYPES = {int: XSD + "integer", float: XSD + "double", bool: XSD + "boolean", list: RDF + "JSON"}
_RANGES = {
    "string": XSD + "string",
    "integer": XSD + "integer",
    "float": XSD + "double",
    "boolean": XSD + "boolean",
    "list": RDF + "JSON",
}
_SURROGATE = re.compile("[\ud800-\udfff]")
_NT_SPECIAL = re.compile('[\\\\"\x00-\x1f\x7f\ud800-\udfff]')
_NT_ESCAPES = {i: f"\\u{i:04X}" for i in range(0x20)} | {
    0x7F: "\\u007F",
    ord("\\"): "\\\\",
    ord('"'): '\\"',
    ord("\n"): "\\n",
    ord("\r"): "\\r",
    ord("\t"): "\\t",
}
_FLUSH = 20_000


def check_base(base: str) -> str:
    """``base`` if it can start IRIs (a scheme, no spaces or angle brackets), else ``ExportError``."""
    if not re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:[^\s<>\"{}|\\^`]*$", base or ""):
        raise ExportError(
            f"bad base IRI {base!r}: give an absolute IRI such as urn:igg: or https://example.com/kg/ "
            "(a scheme, then no spaces, quotes or angle brackets)"
        )
    return base


_UNRESERVED = re.compile(r"[A-Za-z0-9_.~-]*\Z").match
"""Strings percent-encoding leaves as they are (the common case: names; skipping ``quote`` halves the
time)."""


def _part(value: Any) -> str:
    if value.__class__ is str:
        if _UNRESERVED(value):
            return value
        return quote(_SURROGATE.sub("\ufffd", value), safe="")
    return "$" + quote(json.dumps(value), safe="")


def _float(value: float) -> str:
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "INF" if value > 0 else "-INF"
    return repr(value)


class _Names:
    """IRIs of one export: the vocabulary, nodes and edges (cached per name; nodes computed once each)."""

    def __init__(self, state: GraphState, base: str) -> None:
        self.base = check_base(base)
        terms = state.schema.terms
        self.vocab_cache: dict[str, str] = {name: t.iri for name, t in terms.items() if t.iri}
        self.datatypes: dict[str, str] = {name: t.datatype for name, t in terms.items() if t.datatype}
        """Datatype relations' keys -> their XSD datatype IRI (their values are written typed, one per
        triple)."""
        if state.schema.time_scoped:  # valid time: typed by the precision the source gave
            self.datatypes.update(dict.fromkeys((VALID_FROM, VALID_TO), VALID_TIME))
        ident = state.schema.identity_keys
        self.nodes = {
            n: f"{base}node/{quote(d['type'], safe='')}/"
            + "/".join(_part(d["properties"].get(k)) for k in ident[d["type"]])
            for n, d in state.nodes.items()
        }

    def vocab(self, name: str) -> str:
        iri = self.vocab_cache.get(name)
        if iri is None:
            iri = self.vocab_cache[name] = f"{self.base}vocab/{quote(name, safe='')}"
        return iri


def _schema_triples(state: GraphState, names: _Names) -> Iterator[tuple[str, str, str, str | None]]:
    """(subject, predicate, object IRI, None) of the vocabulary: classes, object and datatype properties."""
    types = state.schema.property_types
    for t in state.schema.node_type_list:
        yield names.vocab(t), RDF + "type", RDFS + "Class", None
    for t in state.schema.edge_type_list:
        yield names.vocab(t), RDF + "type", OWL + "ObjectProperty", None
    keys: dict[str, None] = {}
    for d in state.nodes.values():
        keys.update(dict.fromkeys(d["properties"]))
    for _, _, _, d in state.edges():
        keys.update(dict.fromkeys(d["properties"]))
    for k in keys:
        yield names.vocab(k), RDF + "type", OWL + "DatatypeProperty", None
    ranges = {
        (k, _RANGES[spec])
        for specs in types.values()
        for k, spec in specs.items()
        if isinstance(spec, str) and k in keys
    }
    for k, rng in sorted(ranges):
        yield names.vocab(k), RDFS + "range", names.datatypes.get(k, rng), None
    for t, parents in state.schema.subclass_of.items():
        for parent in parents:
            yield names.vocab(t), RDFS + "subClassOf", names.vocab(parent), None


VALID_TIME = "igg:valid-time"
"""The datatype ``_Names`` gives ``igg_valid_from``/``igg_valid_to``: each value is written as the XSD type of
its precision (``2024``: xsd:gYear, ``2024-03``: xsd:gYearMonth, ``2024-03-05``: xsd:date, a date-time in UTC:
xsd:dateTime)."""
_TIME_TYPES = {4: XSD + "gYear", 7: XSD + "gYearMonth", 10: XSD + "date"}


def typed_value(value: Any, datatype: str) -> tuple[str, str | None]:
    """A datatype relation's value as (lexical form, datatype IRI): typed when the text is a valid literal of
    the ontology's datatype, else a plain string (None), as the text had it."""
    if datatype == VALID_TIME:
        return str(value), _TIME_TYPES.get(len(str(value)), XSD + "dateTime")
    text = (
        _float(value)
        if value.__class__ is float
        else str(value).lower()
        if value.__class__ is bool
        else str(value)
    )
    return (text, datatype) if lexical_ok(text, datatype) else (text, None)


def triples(state: GraphState, *, base: str = DEFAULT_BASE) -> Any:
    """The graph as an ``rdflib.Graph`` (the general path; needs the ``rdf`` extra)."""
    try:
        from rdflib import Graph, Literal, URIRef
    except ImportError:
        raise ExportError(
            "Turtle and JSON-LD need rdflib: pip install 'rdflib>=7.0' (the rdf extra; N-Triples does not)"
        ) from None
    names = _Names(state, base)
    g = Graph()
    add = g.add
    for s, p, o, _ in _schema_triples(state, names):
        add((URIRef(s), URIRef(p), URIRef(o)))

    terms = _Terms(names, Literal, URIRef)
    rdf_type = URIRef(RDF + "type")
    for n, d in state.nodes.items():
        s = URIRef(names.nodes[n])
        add((s, rdf_type, URIRef(names.vocab(d["type"]))))
        for k, v in d["properties"].items():
            for lit in terms.literals(k, v):
                add((s, URIRef(names.vocab(k)), lit))
    for eid, u, v, d in state.edges():
        su, p, sv = URIRef(names.nodes[u]), URIRef(names.vocab(d["type"])), URIRef(names.nodes[v])
        add((su, p, sv))
        if d["properties"]:
            st = URIRef(f"{names.base}edge/{quote(eid, safe='')}")
            add((st, rdf_type, URIRef(RDF + "Statement")))
            add((st, URIRef(RDF + "subject"), su))
            add((st, URIRef(RDF + "predicate"), p))
            add((st, URIRef(RDF + "object"), sv))
            for k, val in d["properties"].items():
                for lit in terms.literals(k, val):
                    add((st, URIRef(names.vocab(k)), lit))
    return g


class _Terms:
    """The rdflib literals of property values (``Literal`` and ``URIRef`` given: ``triples`` imports
    rdflib)."""

    def __init__(self, names: _Names, literal: Any, uri: Any) -> None:
        self.names = names
        self.Literal = literal
        self.URIRef = uri

    def literals(self, k: str, v: Any) -> list[Any]:
        """The literals of property ``k``'s value ``v``: one per item, typed as the property's datatype says,
        when it has one; else one, typed by the value's Python type."""
        if k not in self.names.datatypes:
            return [self.literal(v)]
        out = []
        for item in v if v.__class__ is list else [v]:
            text, dt = typed_value(item, self.names.datatypes[k])
            out.append(self.Literal(_SURROGATE.sub("\ufffd", text), datatype=self.URIRef(dt) if dt else None))
        return out

    def literal(self, v: Any) -> Any:
        """The literal of a value of a property without a datatype."""
        cls = v.__class__
        if cls is str:
            return self.Literal(_SURROGATE.sub("\ufffd", v))
        if cls is float:
            return self.Literal(_float(v), datatype=self.URIRef(_DATATYPES[float]))
        if cls is list:
            return self.Literal(json.dumps(v, ensure_ascii=False), datatype=self.URIRef(_DATATYPES[list]))
        return self.Literal(v)


def write_ntriples(
    state: GraphState, path_or_file: str | Path | IO[bytes], *, base: str = DEFAULT_BASE
) -> dict[str, Any]:
    """Write the graph as N-Triples (UTF-8, one triple a line); returns ``{"nodes", "edges", "triples",
    "replaced_values", "base"}``. Streams: memory stays flat whatever the graph's size."""
    if isinstance(path_or_file, str | Path):
        with open_for_write(path_or_file) as fh:
            return write_ntriples(state, fh, base=base)
    names = _Names(state, base)
    writer = _NTriples(names, path_or_file.write)
    writer.out += [f"<{s}> <{p}> <{o}> .\n" for s, p, o, _ in _schema_triples(state, names)]
    with collector_paused():
        iris = {n: f"<{iri}>" for n, iri in names.nodes.items()}
        writer.nodes(state, iris)
        edges = writer.edges(state, iris)
        writer.count += len(writer.out)
        writer.flush()
    return {
        "nodes": state.node_count,
        "edges": edges,
        "triples": writer.count,
        "replaced_values": writer.replaced,
        "base": base,
    }


_TYPED = {cls: f'"^^<{iri}>' for cls, iri in _DATATYPES.items()}
"""A typed literal's end, by Python class: ``"^^<datatype IRI>``."""
_T_INT, _T_FLOAT, _T_BOOL, _T_LIST = _TYPED[int], _TYPED[float], _TYPED[bool], _TYPED[list]
_RDF_TYPE = f"<{RDF}type>"
_nt_special = _NT_SPECIAL.search


class _NTriples:
    """One N-Triples document being written: the escaping of literals (counting the values whose surrogates
    are replaced), the predicates' IRIs, and the lines gathered, written ``_FLUSH`` at a time."""

    def __init__(self, names: _Names, write: Any) -> None:
        self.names, self.write = names, write
        self.out: list[str] = []
        self.count = 0
        """Triples written so far (those still in ``out`` are added at the end)."""
        self.replaced = 0
        self.vocab: dict[str, str] = {}

    def text(self, v: str) -> str:
        """A string escaped for a literal (counting it if surrogates are replaced)."""
        if not _nt_special(v):
            return v
        if _SURROGATE.search(v):
            self.replaced += 1
            v = _SURROGATE.sub("\ufffd", v)
        return v.translate(_NT_ESCAPES)

    def literal(self, v: Any) -> str:
        """A property value as a literal, typed by its class."""
        cls = v.__class__
        if cls is str:
            return f'"{self.text(v)}"'
        if cls is int:
            return f'"{v}{_T_INT}'
        if cls is bool:
            return f'"{"true" if v else "false"}{_T_BOOL}'
        if cls is float:
            return f'"{_float(v)}{_T_FLOAT}'
        return f'"{self.text(json.dumps(v, ensure_ascii=False))}{_T_LIST}'

    def pred(self, k: str) -> str:
        """The predicate of a property key or a type, ``<IRI>`` (memoised)."""
        p = self.vocab.get(k)
        if p is None:
            p = self.vocab[k] = f"<{self.names.vocab(k)}>"
        return p

    def flush(self) -> None:
        """Write the lines gathered."""
        self.write("".join(self.out).encode("utf-8"))
        self.out.clear()

    def term(self, k: str, v: Any) -> list[str]:
        """A datatype relation's values as literals of the ontology's datatype (see ``typed_value``)."""
        out = []
        for item in v if v.__class__ is list else [v]:
            text, dt = typed_value(item, self.names.datatypes[k])
            out.append(f'"{self.text(text)}"' + (f"^^<{dt}>" if dt else ""))
        return out

    def nodes(self, state: GraphState, iris: dict[str, str]) -> None:
        """Each node's type and properties."""
        out, get, pred, literal = self.out, self.vocab.get, self.pred, self.literal
        append = out.append
        datatypes = self.names.datatypes
        for n, d in state.nodes.items():
            s = iris[n]
            append(f"{s} {_RDF_TYPE} {pred(d['type'])} .\n")
            for k, v in d["properties"].items():
                if datatypes and k in datatypes:
                    out += [f"{s} {pred(k)} {lit} .\n" for lit in self.term(k, v)]
                elif v.__class__ is str and not _nt_special(v):
                    append(f'{s} {get(k) or pred(k)} "{v}" .\n')
                else:
                    append(f"{s} {get(k) or pred(k)} {literal(v)} .\n")
            if len(out) >= _FLUSH:
                self.count += len(out)
                self.flush()

    def edges(self, state: GraphState, iris: dict[str, str]) -> int:
        """Each edge (reified when it has properties); returns how many."""
        out, get, pred, literal = self.out, self.vocab.get, self.pred, self.literal
        append = out.append
        statement = f"{_RDF_TYPE} <{RDF}Statement> .\n"
        subj, predi, obj = f"<{RDF}subject>", f"<{RDF}predicate>", f"<{RDF}object>"
        edge_base = f"<{self.names.base}edge/"
        edges = 0
        for eid, (u, v, d) in state.edge_rows():
            su, sv = iris[u], iris[v]
            p = get(d["type"]) or pred(d["type"])
            edges += 1
            props = d["properties"]
            if props:
                st = f"{edge_base}{eid if _UNRESERVED(eid) else quote(eid, safe='')}>"
                append(
                    f"{su} {p} {sv} .\n{st} {statement}{st} {subj} {su} .\n{st} {predi} {p} .\n"
                    f"{st} {obj} {sv} .\n"
                )
                self.count += 4
                for k, val in props.items():
                    if k in self.names.datatypes:
                        out += [f"{st} {pred(k)} {lit} .\n" for lit in self.term(k, val)]
                    elif val.__class__ is int:
                        append(f'{st} {get(k) or pred(k)} "{val}{_T_INT} .\n')
                    else:
                        append(f"{st} {get(k) or pred(k)} {literal(val)} .\n")
            else:
                append(f"{su} {p} {sv} .\n")
            if len(out) >= _FLUSH:
                self.count += len(out)
                self.flush()
        return edges


def write_rdflib(
    state: GraphState, path_or_file: str | Path | IO[bytes], fmt: str, *, base: str = DEFAULT_BASE
) -> dict[str, Any]:
    """Write the graph as Turtle (``fmt="ttl"``) or JSON-LD (``fmt="jsonld"``) through rdflib; returns
    ``{"nodes", "edges", "triples", "base"}``."""
    if fmt == "jsonld":
        _refuse_infinities(state)
    g = triples(state, base=base)
    names = {"ttl": "turtle", "jsonld": "json-ld"}
    g.bind("v", f"{base}vocab/")
    g.bind("node", f"{base}node/")
    g.bind("owl", OWL)
    data: bytes = g.serialize(format=names[fmt], encoding="utf-8")
    if isinstance(path_or_file, str | Path):
        with open_for_write(path_or_file) as fh:
            fh.write(data)
    else:
        path_or_file.write(data)
    return {"nodes": state.node_count, "edges": state.edge_count, "triples": len(g), "base": base}


def _refuse_infinities(state: GraphState) -> None:
    """rdflib's JSON-LD writer turns an infinite xsd:double into null: refuse rather than lose the value."""
    for n, d in state.nodes.items():
        for k, v in d["properties"].items():
            if v.__class__ is float and v in (float("inf"), float("-inf")):
                raise ExportError(
                    f"JSON-LD cannot carry node {state.describe(n)}'s property {k!r} = {v} (rdflib "
                    "writes an infinite double as null); export it as nt or ttl instead"
                )
    for eid, _, _, d in state.edges():
        for k, v in d["properties"].items():
            if v.__class__ is float and v in (float("inf"), float("-inf")):
                raise ExportError(
                    f"JSON-LD cannot carry edge {eid}'s property {k!r} = {v} (rdflib writes an "
                    "infinite double as null); export it as nt or ttl instead"
                )
