"""JSON exports (IGG's own document and networkx node-link) and reading a saved graph back.

``write_json`` writes the ``seed_data`` format (``igg.models.document``) straight from the graph's dicts
with the C JSON encoder, never through pydantic (it is the hot path of large exports). ``load_document``
reads either format; ``document_to_state`` loads a document through ``Actor.load_seed``, so a hand-edited
file is checked like any seed graph, and a document without a schema gets one inferred from its content.
"""

from __future__ import annotations

import gc
import io
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import orjson
from pydantic import ValidationError
from pydantic_core import PydanticSerializationError, to_json

from igg.errors import Problem, RequestInvalid
from igg.files import write_file
from igg.graph.state import GraphState
from igg.inputs import parse_json, read_text
from igg.models.document import DocEdge, DocNode, GraphDocument
from igg.models.request import Constraints, DuplicateGuard
from igg.models.schema import Schema

TYPE_KEY = "igg_type"
"""Node-link attribute holding the node or edge type (property keys cannot start with ``igg_``)."""


def _dump(obj: Any, path_or_file: str | Path | IO[str] | IO[bytes], indent: int | None) -> int:
    """Encode ``obj`` as UTF-8 JSON and write it; returns the byte count."""
    data = encode_json(obj, indent)
    if isinstance(path_or_file, str | Path):
        write_file(path_or_file, data)
    elif isinstance(path_or_file, io.TextIOBase):
        path_or_file.write(data.decode("utf-8"))
    else:
        path_or_file.write(data)  # type: ignore[arg-type]
    return len(data)


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
            parts = [to_json(k) + b":" + (_fast(v) if k in _BULK else to_json(v)) for k, v in obj.items()]
            return b"{" + b",".join(parts) + b"}"
        return to_json(obj, indent=indent)
    except PydanticSerializationError:
        return json.dumps(obj, ensure_ascii=True, indent=indent,
                          separators=None if indent else (",", ":")).encode()


def _fast(value: Any) -> bytes:
    try:
        data = orjson.dumps(value)
    except orjson.JSONEncodeError:
        return to_json(value)
    if b":null" in data or b",null" in data or b"[null" in data:
        return to_json(value)
    return data


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while an export builds or writes many small acyclic objects
    (its generation scans over a large graph cost more than the work; reference counting still frees)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def document_dict(state: GraphState, *, schema: Schema | None = None, metadata: dict[str, Any] | None = None,
                  provenance: bool = False) -> dict[str, Any]:
    """The graph as a JSON-ready IGG document dict (the shape of ``GraphDocument``)."""
    with paused_gc():
        return _document_dict(state, schema, metadata, provenance)


def _document_dict(state: GraphState, schema: Schema | None, metadata: dict[str, Any] | None,
                   provenance: bool) -> dict[str, Any]:
    if provenance:
        nodes = [{"id": n, "type": d["type"], "properties": d["properties"], "provenance": d["provenance"]}
                 for n, d in state.nodes.items()]
        edges = [{"id": k, "type": d["type"], "from": u, "to": v, "properties": d["properties"],
                  "provenance": d["provenance"]} for k, u, v, d in state.edges()]
    else:
        nodes = [{"id": n, "type": d["type"], "properties": d["properties"]} for n, d in state.nodes.items()]
        edges = [{"id": k, "type": d["type"], "from": u, "to": v, "properties": d["properties"]}
                 for u, nbrs in state.succ.items() for v, kd in nbrs.items() for k, d in kd.items()]
    doc: dict[str, Any] = {"format": "igg-graph", "version": 1}
    if schema is not None:
        doc["schema"] = schema.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    doc["nodes"] = nodes
    doc["edges"] = edges
    doc["metadata"] = metadata or {}
    return doc


def write_json(state: GraphState, path_or_file: str | Path | IO[Any], *, schema: Schema | None = None,
               metadata: dict[str, Any] | None = None, provenance: bool = False, indent: int | None = None) -> dict[str, Any]:
    """Write IGG's JSON document (the ``seed_data`` format); returns ``{"nodes", "edges", "bytes"}``."""
    doc = document_dict(state, schema=schema, metadata=metadata, provenance=provenance)
    size = _dump(doc, path_or_file, indent)
    return {"nodes": len(doc["nodes"]), "edges": len(doc["edges"]), "bytes": size}


NODE_FIELDS = ("id", TYPE_KEY)
EDGE_FIELDS = ("source", "target", "key", TYPE_KEY)
RENAMED = "igg_prop_"
"""Prefix of a property whose key is a node-link field (``id``, ``source``, ...): ``igg_prop_id``."""


def _flat(fields: dict[str, Any], props: dict[str, Any], reserved: tuple[str, ...]) -> dict[str, Any]:
    if any(k in reserved for k in props):
        props = {(RENAMED + k if k in reserved else k): v for k, v in props.items()}
    return {**fields, **props}


def _unflat(item: dict[str, Any], reserved: tuple[str, ...]) -> dict[str, Any]:
    return {(k[len(RENAMED):] if k.startswith(RENAMED) else k): v for k, v in item.items() if k not in reserved}


def node_link_dict(state: GraphState, *, schema: Schema | None = None,
                   metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    """networkx node-link data (``edges="edges"``): properties flat, the type under ``igg_type``.

    A property named like a node-link field (``id``; ``source``, ``target``, ``key`` on edges) is written
    as ``igg_prop_<key>`` and read back under its own name.
    """
    nodes = [_flat({"id": n, TYPE_KEY: d["type"]}, d["properties"], NODE_FIELDS)
             for n, d in state.nodes.items()]
    edges = [_flat({"source": u, "target": v, "key": k, TYPE_KEY: d["type"]}, d["properties"], EDGE_FIELDS)
             for u, nbrs in state.succ.items() for v, kd in nbrs.items() for k, d in kd.items()]
    graph = dict(metadata or {})
    if schema is not None:
        graph["igg_schema"] = schema.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    return {"directed": True, "multigraph": True, "graph": graph, "nodes": nodes, "edges": edges}


def write_node_link(state: GraphState, path_or_file: str | Path | IO[Any], *, schema: Schema | None = None,
                    metadata: dict[str, Any] | None = None, indent: int | None = None) -> dict[str, Any]:
    """Write networkx node-link JSON (read it with ``networkx.node_link_graph(data, edges="edges")``).

    The graph attributes hold the metadata and, under ``igg_schema``, the schema.
    """
    with paused_gc():
        data = node_link_dict(state, schema=schema, metadata=metadata)
    size = _dump(data, path_or_file, indent)
    return {"nodes": len(data["nodes"]), "edges": len(data["edges"]), "bytes": size}


def node_link_to_document(data: dict[str, Any]) -> dict[str, Any]:
    """An IGG document dict from node-link data written by ``write_node_link``."""
    links = data.get("edges", data.get("links", []))
    nodes = [{"id": str(n["id"]), "type": n.get(TYPE_KEY),
              "properties": _unflat(n, NODE_FIELDS)} for n in data["nodes"]]
    edges = []
    for i, e in enumerate(links):
        edges.append({"id": str(e.get("key", f"e{i + 1}")), "type": e.get(TYPE_KEY), "from": str(e["source"]),
                      "to": str(e["target"]),
                      "properties": _unflat(e, EDGE_FIELDS)})
    graph = dict(data.get("graph") or {})
    schema = graph.pop("igg_schema", None)
    return {**({"schema": schema} if schema is not None else {}), "nodes": nodes, "edges": edges, "metadata": graph}


def load_document(path: str | Path) -> GraphDocument:
    """Read an IGG document (or node-link JSON) from a file. Raises ``RequestInvalid`` naming each problem."""
    from igg.compile import pydantic_problems

    path = Path(path)
    name = "standard input" if str(path) == "-" else str(path)
    raw = parse_json(read_text(path, source=name), source=name)
    if isinstance(raw, dict) and "directed" in raw and "format" not in raw:
        raw = node_link_to_document(raw)
    if not isinstance(raw, dict):
        raise RequestInvalid([Problem("", "a graph document must be a JSON object with 'nodes' and 'edges'")],
                             source=name)
    try:
        return GraphDocument.model_validate(raw)
    except ValidationError as exc:
        raise RequestInvalid(pydantic_problems(exc, GraphDocument), source=name) from None


def infer_schema(doc: GraphDocument, *, source: str = "document") -> Schema:
    """A schema that admits the document: its node and edge types, identity ``name`` where every node has one.

    A node type whose nodes lack ``name`` is identified by ``id`` if they all have it, else by the first key
    all its nodes share; types in first-seen order.
    """
    node_types: dict[str, list[set[str]]] = {}
    for n in doc.nodes:
        node_types.setdefault(n.type, []).append(set(n.properties))
    edge_types = list(dict.fromkeys(e.type for e in doc.edges))
    identity: dict[str, list[str]] = {}
    for t, key_sets in node_types.items():
        common = set.intersection(*key_sets) if key_sets else set()
        if "name" in common:
            continue
        pick = "id" if "id" in common else next(iter(sorted(common)), None)
        if pick is None:
            raise RequestInvalid([Problem("schema", f"the document has no schema and the {t} nodes share no "
                                          "property to identify them by; add a schema with identity_keys")],
                                 source=source)
        identity[t] = [pick]
    return Schema(node_types=list(node_types) or ["Node"], edge_types=edge_types, identity_keys=identity)


def document_to_state(doc: GraphDocument, *, constraints: Constraints | None = None,
                      source: str = "document") -> GraphState:
    """A graph state holding the document, checked by ``Actor.load_seed``; raises ``RequestInvalid``.

    Limits default to the document's own size (a saved graph is never too big to reload).
    """
    from igg.act import Actor
    from igg.compile import check_schema

    schema = doc.schema_ if doc.schema_ is not None else infer_schema(doc, source=source)
    problems = check_schema(schema, "schema")
    if problems:
        raise RequestInvalid(problems, source=source)
    if constraints is None:
        elements: list[DocNode | DocEdge] = [*doc.nodes, *doc.edges]
        longest = max([1, *(_longest(p) for x in elements for p in x.properties.values())])
        widest = max([1, *(len(x.properties) for x in elements)])
        # a saved graph is reloaded as it is: its near-duplicates were already judged when they were added
        # (static maps skip the guard; "distinct": true overrides it), so the guard is off here
        constraints = Constraints(max_nodes=max(1, len(doc.nodes)), max_edges=len(doc.edges),
                                  allow_self_loops=True, max_property_length=max(16384, longest),
                                  max_properties=max(64, widest), duplicates=DuplicateGuard(policy="off"))
    state = GraphState(schema.compile())
    problems = Actor(state.schema, constraints).load_seed(state, doc, path="document")
    if problems:
        raise RequestInvalid(problems, source=source)
    return state


def _longest(value: Any) -> int:
    return len(value) if isinstance(value, str | list) else 0
