"""JSON exports: IGG's own document and networkx node-link.

``write_json`` writes the ``seed_data`` format (``igg.models.document``) straight from the graph's dicts
with the C JSON encoder, never through pydantic (it is the hot path of large exports). Reading either
format back is ``igg.export.load``.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import IO, Any

import orjson
from pydantic_core import PydanticSerializationError, to_json

from igg.graph.collector import collector_paused
from igg.graph.state import GraphState
from igg.io.files import write_file
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
            pieces = [b"{"]
            for k, v in obj.items():
                pieces += (to_json(k), b":", _fast(v) if k in _BULK else to_json(v), b",")
            pieces[-1] = b"}"
            return b"".join(pieces)  # one copy of the bulk, not one per concatenation
        return to_json(obj, indent=indent)
    except PydanticSerializationError:
        return json.dumps(obj, ensure_ascii=True, indent=indent,
                          separators=None if indent else (",", ":")).encode()


def _fast(value: Any) -> bytes:
    try:
        data = orjson.dumps(value)
    except orjson.JSONEncodeError:
        return to_json(value)
    if b"null" in data and (b":null" in data or b",null" in data or b"[null" in data):  # one scan, usually
        return to_json(value)
    return data


def document_dict(state: GraphState, *, schema: Schema | None = None, metadata: dict[str, Any] | None = None,
                  provenance: bool = False) -> dict[str, Any]:
    """The graph as a JSON-ready IGG document dict (the shape of ``GraphDocument``)."""
    with collector_paused():
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
                 for k, (u, v, d) in state.edge_rows()]
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
    with collector_paused():
        data = node_link_dict(state, schema=schema, metadata=metadata)
    size = _dump(data, path_or_file, indent)
    return {"nodes": len(data["nodes"]), "edges": len(data["edges"]), "bytes": size}
