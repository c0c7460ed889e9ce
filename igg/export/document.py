"""JSON exports: IGG's own document and networkx node-link.

``write_json`` writes the ``seed_data`` format (``igg.models.document``) straight from the graph's dicts,
never through pydantic (it is the hot path of large exports): ``igg.graph.document``, the one builder of
the document, encodes it a chunk of elements at a time. Reading either format back is ``igg.export.load``.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import IO, Any

from pydantic_core import PydanticSerializationError

from igg.graph.collector import collector_paused
from igg.graph.document import document_json, encode_json, write_document
from igg.graph.state import GraphState
from igg.io.files import open_for_write, write_file
from igg.models.schema import Schema

TYPE_KEY = "igg_type"
"""Node-link attribute holding the node or edge type (property keys cannot start with ``igg_``)."""


def _dump(obj: Any, path_or_file: str | Path | IO[str] | IO[bytes], indent: int | None) -> int:
    """Encode ``obj`` as UTF-8 JSON and write it; returns the byte count."""
    return _write(encode_json(obj, indent), path_or_file)


def _write(data: bytes, path_or_file: str | Path | IO[str] | IO[bytes]) -> int:
    """Write UTF-8 ``data`` to a path (safely: ``write_file``) or a text or binary file; returns its size."""
    if isinstance(path_or_file, str | Path):
        write_file(path_or_file, data)
    elif isinstance(path_or_file, io.TextIOBase):
        path_or_file.write(data.decode("utf-8"))
    else:
        path_or_file.write(data)  # type: ignore[arg-type]
    return len(data)


def write_json(
    state: GraphState,
    path_or_file: str | Path | IO[Any],
    *,
    schema: Schema | None = None,
    metadata: dict[str, Any] | None = None,
    provenance: bool = False,
    indent: int | None = None,
) -> dict[str, Any]:
    """Write IGG's JSON document (the ``seed_data`` format); returns ``{"nodes", "edges", "bytes"}``. A file
    named by its path, not indented, is written as it is encoded (``write_document``)."""
    counts = {"nodes": state.node_count, "edges": state.edge_count}
    if indent is None and isinstance(path_or_file, str | Path):
        try:
            with open_for_write(path_or_file) as out:
                size = write_document(state, out, schema=schema, metadata=metadata, provenance=provenance)
            return {**counts, "bytes": size}
        except PydanticSerializationError:
            pass  # the file was not replaced: written whole below, with escapes
    data = document_json(state, schema=schema, metadata=metadata, provenance=provenance, indent=indent)
    return {**counts, "bytes": _write(data, path_or_file)}


NODE_FIELDS = ("id", TYPE_KEY)
EDGE_FIELDS = ("source", "target", "key", TYPE_KEY)
RENAMED = "igg_prop_"
"""Prefix of a property whose key is a node-link field (``id``, ``source``, ...): ``igg_prop_id``."""


def _flat(fields: dict[str, Any], props: dict[str, Any], reserved: tuple[str, ...]) -> dict[str, Any]:
    if any(k in reserved for k in props):
        props = {(RENAMED + k if k in reserved else k): v for k, v in props.items()}
    return {**fields, **props}


def node_link_dict(
    state: GraphState, *, schema: Schema | None = None, metadata: dict[str, Any] | None = None
) -> dict[str, Any]:
    """networkx node-link data (``edges="edges"``): properties flat, the type under ``igg_type``.

    A property named like a node-link field (``id``; ``source``, ``target``, ``key`` on edges) is written
    as ``igg_prop_<key>`` and read back under its own name.
    """
    nodes = [
        _flat({"id": n, TYPE_KEY: d["type"]}, d["properties"], NODE_FIELDS) for n, d in state.nodes.items()
    ]
    edges = [
        _flat({"source": u, "target": v, "key": k, TYPE_KEY: d["type"]}, d["properties"], EDGE_FIELDS)
        for u, nbrs in state.succ.items()
        for v, kd in nbrs.items()
        for k, d in kd.items()
    ]
    graph = dict(metadata or {})
    if schema is not None:
        graph["igg_schema"] = schema.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    return {"directed": True, "multigraph": True, "graph": graph, "nodes": nodes, "edges": edges}


def write_node_link(
    state: GraphState,
    path_or_file: str | Path | IO[Any],
    *,
    schema: Schema | None = None,
    metadata: dict[str, Any] | None = None,
    indent: int | None = None,
) -> dict[str, Any]:
    """Write networkx node-link JSON (read it with ``networkx.node_link_graph(data, edges="edges")``).

    The graph attributes hold the metadata and, under ``igg_schema``, the schema.
    """
    with collector_paused():
        data = node_link_dict(state, schema=schema, metadata=metadata)
    size = _dump(data, path_or_file, indent)
    return {"nodes": len(data["nodes"]), "edges": len(data["edges"]), "bytes": size}
