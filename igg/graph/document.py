"""The IGG document of a graph (format ``igg-graph``, the shape of ``igg.models.document.GraphDocument``): its
one builder, and its JSON.

``element_chunks`` is the builder: the nodes, then the edges, as the document's element dicts, a chunk at a
time, straight from the graph's own dicts (never through pydantic: exports, snapshots and ``GraphState
.to_document`` all start here). ``document_dict`` is the whole document as plain dicts (what the store's
snapshot holds and ``GraphDocument`` is read from); ``document_json`` writes its JSON without holding it as
dicts: each chunk of elements is encoded while it is fresh, and the bytes are exactly what pydantic-core's
``to_json`` writes for ``document_dict`` (``encode_json``).

A graph whose schema came from an ontology (``Schema.terms``) has its facts written back as the ontology's
triples too (``triples``, after the edges): ``[subject, relation, object]`` with the relation's own label.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, ItemsView, Iterator, Mapping
from itertools import islice
from typing import Any, BinaryIO, Literal, Protocol

import orjson
from pydantic_core import PydanticSerializationError, to_json

from igg.graph.collector import collector_paused
from igg.models.schema import Schema, Term

CHUNK = 4096
"""Elements built and encoded together by ``document_json`` (small enough to stay in the CPU caches)."""

HEAD: dict[str, Any] = {"format": "igg-graph", "version": 1}
"""The keys every document starts with."""


class Elements(Protocol):
    """What a document is built from (a ``GraphState``): its node table and its edges in insertion order."""

    @property
    def nodes(self) -> Mapping[str, dict[str, Any]]:
        """Node id -> ``{"type", "properties", "provenance"}``."""
        ...

    def edge_rows(self) -> Iterator[tuple[str, tuple[str, str, dict[str, Any]]]]:
        """(edge id, (from id, to id, ``{"type", "properties", "provenance", ...}``)), in insertion order."""
        ...

    def edge_data(self) -> ItemsView[str, dict[str, Any]]:
        """Edge id -> ``{"type", "from", "to", "properties", "provenance"}``, in insertion order."""
        ...


def element_chunks(
    graph: Elements, kind: Literal["nodes", "edges"], provenance: bool, size: int = CHUNK
) -> Iterator[list[dict[str, Any]]]:
    """The document's ``nodes`` or ``edges`` entries (with ``provenance`` or without), ``size`` at a time."""
    if kind == "nodes":
        nodes = iter(graph.nodes.items())
        while True:
            if provenance:
                chunk = [
                    {"id": n, "type": d["type"], "properties": d["properties"], "provenance": d["provenance"]}
                    for n, d in islice(nodes, size)
                ]
            else:
                chunk = [
                    {"id": n, "type": d["type"], "properties": d["properties"]}
                    for n, d in islice(nodes, size)
                ]
            if not chunk:
                return
            yield chunk
    edges = iter(graph.edge_data())
    while True:
        if provenance:
            chunk = [
                {
                    "id": k,
                    "type": d["type"],
                    "from": d["from"],
                    "to": d["to"],
                    "properties": d["properties"],
                    "provenance": d["provenance"],
                }
                for k, d in islice(edges, size)
            ]
        else:
            chunk = [
                {"id": k, "type": d["type"], "from": d["from"], "to": d["to"], "properties": d["properties"]}
                for k, d in islice(edges, size)
            ]
        if not chunk:
            return
        yield chunk


def term_triples(graph: Elements, terms: Mapping[str, Term]) -> list[list[Any]]:
    """A graph's facts in its ontology's names: each edge ``[source name, relation label, target name]``, then
    each value of a datatype relation ``[node name, relation label, value]`` (a list property gives one triple
    per item); entities are named by their ``name`` property. Empty when ``terms`` is."""
    if not terms:
        return []
    nodes = graph.nodes

    def label(name: str) -> str:
        term = terms.get(name)
        return term.label if term is not None else name

    out: list[list[Any]] = [
        [nodes[u]["properties"].get("name"), label(d["type"]), nodes[v]["properties"].get("name")]
        for _, (u, v, d) in graph.edge_rows()
    ]
    typed = {k for k, t in terms.items() if t.datatype is not None}
    for d in nodes.values():
        props = d["properties"]
        for key in typed.intersection(props):
            value = props[key]
            out += [
                [props.get("name"), label(key), item]
                for item in (value if isinstance(value, list) else [value])
            ]
    return out


def _head(schema: Schema | None) -> dict[str, Any]:
    head = dict(HEAD)
    if schema is not None:
        head["schema"] = schema.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    return head


def document_dict(
    graph: Elements,
    *,
    schema: Schema | None = None,
    metadata: dict[str, Any] | None = None,
    provenance: bool = False,
) -> dict[str, Any]:
    """The graph as a JSON-ready IGG document dict (``metadata`` None: the document has no ``metadata`` key,
    as the store's snapshot; ``GraphDocument`` reads that as ``{}``)."""
    with collector_paused():
        doc = _head(schema)
        for kind in ("nodes", "edges"):
            doc[kind] = next(element_chunks(graph, kind, provenance, sys.maxsize), [])
        if schema is not None and schema.terms:
            doc["triples"] = term_triples(graph, schema.terms)
    if metadata is not None:
        doc["metadata"] = metadata
    return doc


def document_json(
    graph: Elements,
    *,
    schema: Schema | None = None,
    metadata: dict[str, Any] | None = None,
    provenance: bool = False,
    indent: int | None = None,
) -> bytes:
    """``encode_json(document_dict(...), indent)`` (``metadata`` None: ``{}``), byte for byte, built and
    encoded a chunk of elements at a time when not indented."""
    if indent is not None:
        return encode_json(
            document_dict(graph, schema=schema, metadata=metadata or {}, provenance=provenance), indent
        )
    try:
        return b"".join(_json_pieces(graph, schema, metadata, provenance))
    except PydanticSerializationError:
        return _escaped(
            document_dict(graph, schema=schema, metadata=metadata or {}, provenance=provenance), None
        )


def write_document(
    graph: Elements,
    out: BinaryIO,
    *,
    schema: Schema | None = None,
    metadata: dict[str, Any] | None = None,
    provenance: bool = False,
) -> int:
    """Write ``document_json(...)``'s bytes (not indented) to ``out`` a piece at a time, never held whole (a
    100,000-node graph's 34 MB are not joined into one copy first); returns how many. Raises
    ``PydanticSerializationError`` where ``document_json`` falls back to ``\\u`` escapes (a lone surrogate):
    what was written then is incomplete, and the caller writes ``document_json``'s bytes instead."""
    size = 0
    write = out.write
    for piece in _json_pieces(graph, schema, metadata, provenance):
        size += write(piece)
    return size


def _json_pieces(
    graph: Elements, schema: Schema | None, metadata: dict[str, Any] | None, provenance: bool
) -> Iterator[bytes | memoryview]:
    """The pieces of ``document_json``'s bytes, not indented (``metadata`` None: ``{}``)."""
    return document_pieces(
        graph,
        schema=schema,
        metadata=metadata or {},
        provenance=provenance,
        encode=to_json,
        encode_list=_fast,
    )


def document_pieces(
    graph: Elements,
    *,
    schema: Schema | None,
    metadata: dict[str, Any] | None,
    provenance: bool,
    encode: Callable[[Any], bytes],
    encode_list: Callable[[list[Any]], bytes],
) -> Iterator[bytes | memoryview]:
    """The JSON of ``document_dict(...)`` in pieces, one after the other, the whole graph never held as dicts:
    each chunk of elements is encoded by ``encode_list`` when it is asked for; ``encode`` writes the rest (the
    head, the triples and the metadata). Raises what they raise."""
    sep = b"{"
    for key, value in _head(schema).items():
        yield from (sep, encode(key), b":", encode(value))
        sep = b","
    with collector_paused():
        for kind in ("nodes", "edges"):
            yield from (b",", encode(kind), b":[")
            first = True
            for chunk in element_chunks(graph, kind, provenance, CHUNK):
                if not first:
                    yield b","
                yield memoryview(encode_list(chunk))[1:-1]
                first = False
            yield b"]"
        if schema is not None and schema.terms:
            yield from (b",", encode("triples"), b":", encode(term_triples(graph, schema.terms)))
    if metadata is not None:
        yield from (b",", encode("metadata"), b":", encode(metadata))
    yield b"}"


_BULK = ("nodes", "edges")
"""The keys of a document that hold one entry per element (the bulk of its bytes)."""


def encode_json(obj: Any, indent: int | None = None) -> bytes:
    """``obj`` (a document dict) as UTF-8 JSON, byte for byte what pydantic-core's ``to_json`` writes.

    The encoder is pydantic-core's (Rust) ``to_json`` on plain dicts and lists: about 3x the standard
    library's. Without ``indent``, the element lists (``nodes``, ``edges``) go through ``orjson``, about 4x
    ``to_json`` again, whose output for them is the same bytes, except in what it cannot write or writes
    otherwise: lone surrogates and integers beyond 64 bits (it refuses) and non-finite floats (it writes
    ``null`` where ``to_json`` writes ``Infinity``/``NaN``). Property values hold no nulls, so a ``null``
    token in its output means one of those: that list is encoded by ``to_json`` instead. Unpaired surrogates,
    which UTF-8 cannot carry, fall back to ``json.dumps`` with ``\\u`` escapes (valid JSON that reads back
    to the same string).
    """
    try:
        if indent is None and isinstance(obj, dict) and any(k in obj for k in _BULK):
            pieces = [b"{"]
            for k, v in obj.items():
                pieces += (to_json(k), b":", _fast(v) if k in _BULK else to_json(v), b",")
            pieces[-1] = b"}"
            return b"".join(pieces)  # one copy of the bulk, not one per concatenation
        return to_json(obj, indent=indent)
    except PydanticSerializationError:
        return _escaped(obj, indent)


def _escaped(obj: Any, indent: int | None) -> bytes:
    """The standard library's JSON with ``\\u`` escapes: what text UTF-8 cannot carry is written too."""
    return json.dumps(
        obj, ensure_ascii=True, indent=indent, separators=None if indent else (",", ":")
    ).encode()


def _fast(value: Any) -> bytes:
    try:
        data = orjson.dumps(value)
    except orjson.JSONEncodeError:
        return to_json(value)
    if b"null" in data and (b":null" in data or b",null" in data or b"[null" in data):  # one scan, usually
        return to_json(value)
    return data


__all__ = [
    "CHUNK",
    "HEAD",
    "Elements",
    "document_dict",
    "document_json",
    "document_pieces",
    "element_chunks",
    "encode_json",
    "write_document",
]
