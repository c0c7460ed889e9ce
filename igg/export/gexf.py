"""GEXF 1.2 export for Gephi, composed as text like the GraphML writer (``igg.export.graphml``).

Layout:
- ``<attributes class="node">``/``class="edge"`` declare one attribute per (property, value type): ``string``,
  ``long`` (integers), ``double``, ``boolean``. A property holding integers on some nodes and strings on
  others gets one attribute per type under the same ``title``, so ``networkx.read_gexf`` returns every value
  with its own type. Lists are written as JSON text in a ``string`` attribute whose title is the property and
  whose ``<default>`` is absent; the summary counts them (``json_lists``).
- every node's and edge's type is the attribute ``igg_type``; a node's ``label`` is its identity (``name`` for
  most schemas), an edge's ``label`` its type (Gephi shows both); ids are IGG's own.
- edges are directed (``defaultedgetype="directed"``); two edges of different types between one pair are kept.

Code points XML 1.0 cannot carry are replaced by U+FFFD (``igg.export.graphml.xml_safe``) and counted
(``replaced_values``), as in GraphML.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import IO, Any

from igg.export.graphml import xml_safe
from igg.graph.collector import collector_paused
from igg.graph.state import GraphState
from igg.io.files import open_for_write

NS = "http://www.gexf.net/1.2draft"
TYPE_KEY = "igg_type"
_TYPES = {str: "string", bool: "boolean", int: "long", float: "double", list: "string"}
_FLUSH = 20_000
_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_ESCAPES = str.maketrans(
    {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "\t": "&#9;", "\n": "&#10;", "\r": "&#13;"}
)
_SPECIAL = re.compile('[&<>"\t\n\r\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]')


class _Attributes:
    """Attribute ids by (property, python type) for one class (node or edge)."""

    def __init__(self, cls: str) -> None:
        self.cls = cls
        self.ids: dict[tuple[str, type], str] = {(TYPE_KEY, str): "t"}

    def scan(self, prop_dicts: Any) -> None:
        ids = self.ids
        for props in prop_dicts:
            for k, v in props.items():
                sig = (k, v.__class__)
                if sig not in ids:
                    ids[sig] = str(len(ids))

    def declare(self, escape: Any) -> str:
        out = [f'<attributes class="{self.cls}" mode="static">']
        for (prop, cls), aid in self.ids.items():
            out.append(f'<attribute id="{aid}" title="{escape(prop)}" type="{_TYPES.get(cls, "string")}"/>')
        out.append("</attributes>")
        return "".join(out)


class _Writer:
    """One GEXF document being written: escaping (with its count of replaced values) and the attvalues."""

    def __init__(self) -> None:
        self.replaced = 0
        self.lists = 0

    def escape(self, value: str) -> str:
        if not _SPECIAL.search(value):
            return value
        if _ILLEGAL.search(value):
            self.replaced += 1
            value = xml_safe(value)
        return value.translate(_ESCAPES)

    def value(self, v: Any) -> str:
        cls = v.__class__
        if cls is str:
            return self.escape(v)
        if cls is bool:
            return "true" if v else "false"
        if cls is int:
            return str(v)
        if cls is float:
            return repr(v)
        self.lists += 1
        return self.escape(json.dumps(v, ensure_ascii=False))

    def attvalues(self, ids: dict[tuple[str, type], str], type_name: str, props: dict[str, Any]) -> str:
        parts = [f'<attvalues><attvalue for="t" value="{self.escape(type_name)}"/>']
        for k, v in props.items():
            parts.append(f'<attvalue for="{ids[(k, v.__class__)]}" value="{self.value(v)}"/>')
        parts.append("</attvalues>")
        return "".join(parts)


def write_gexf(
    state: GraphState, path_or_file: str | Path | IO[bytes], *, metadata: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Write the graph as GEXF 1.2; returns ``{"nodes", "edges", "replaced_values", "json_lists"}``.

    ``path_or_file`` is a path (written through ``igg.io.files``) or a binary file object. The caller's graph
    is never modified."""
    if isinstance(path_or_file, str | Path):
        with open_for_write(path_or_file) as fh:
            return write_gexf(state, fh, metadata=metadata)
    nodes, succ = state.nodes, state.succ
    ident = state.schema.identity_keys
    node_attrs, edge_attrs = _Attributes("node"), _Attributes("edge")
    node_attrs.scan(d["properties"] for d in nodes.values())
    edge_attrs.scan(d["properties"] for nbrs in succ.values() for kd in nbrs.values() for d in kd.values())
    w = _Writer()
    description = json.dumps(metadata, ensure_ascii=False, default=str) if metadata else "IGG graph"
    out: list[str] = [
        '<?xml version="1.0" encoding="UTF-8"?>\n',
        f'<gexf xmlns="{NS}" version="1.2"><meta><creator>IGG</creator>'
        f"<description>{w.escape(description)}</description></meta>",
        '<graph defaultedgetype="directed" mode="static">',
        node_attrs.declare(w.escape),
        edge_attrs.declare(w.escape),
        "<nodes>",
    ]
    write = path_or_file.write
    nids, eids = node_attrs.ids, edge_attrs.ids

    def flush() -> None:
        write("".join(out).encode("utf-8"))
        out.clear()

    edges = 0
    with collector_paused():
        for n, d in nodes.items():
            t, props = d["type"], d["properties"]
            label = " ".join(str(props.get(k, "")) for k in ident.get(t, ()))
            out.append(
                f'<node id="{w.escape(n)}" label="{w.escape(label)}">{w.attvalues(nids, t, props)}</node>'
            )
            if len(out) >= _FLUSH:
                flush()
        out.append("</nodes><edges>")
        for u, nbrs in succ.items():
            su = w.escape(u)
            for v, kd in nbrs.items():
                sv = w.escape(v)
                for eid, d in kd.items():
                    t = w.escape(d["type"])
                    out.append(
                        f'<edge id="{w.escape(eid)}" source="{su}" target="{sv}" label="{t}">'
                        f"{w.attvalues(eids, d['type'], d['properties'])}</edge>"
                    )
                    edges += 1
                    if len(out) >= _FLUSH:
                        flush()
        out.append("</edges></graph></gexf>")
        flush()
    return {"nodes": len(nodes), "edges": edges, "replaced_values": w.replaced, "json_lists": w.lists}
