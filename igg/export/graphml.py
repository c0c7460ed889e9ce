"""GraphML export, streamed with ``lxml.etree.xmlfile`` and valid against the GraphML XSD.

Layout:
- one ``<key>`` per (domain, property, value type): ``string``, ``long`` (integers), ``double``, ``boolean``;
  a property holding integers on some nodes and strings on others gets one key per type under the same
  ``attr.name``, so ``networkx.read_graphml`` returns every value with its own type. Lists are written as
  JSON text in a ``string`` key whose ``<desc>`` says ``igg:json-list``.
- node type and edge type: the reserved key ``igg_type`` (property keys cannot start with ``igg_``);
  graph-level keys ``igg_metadata`` and ``igg_schema`` hold JSON; ``igg_provenance`` when asked for.
- node and edge ids are IGG's own (stable across exports).

XML 1.0 cannot carry some code points at all, not even as character references: U+0000-U+0008, U+000B,
U+000C, U+000E-U+001F, U+FFFE, U+FFFF and unpaired surrogates. Each is replaced by U+FFFD (the Unicode
replacement character); the summary reports how many values were changed (``replaced_values``).
Tabs, newlines and carriage returns are kept (lxml writes ``\\r`` as ``&#13;``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from lxml import etree

from igg.export.document import paused_gc
from igg.files import open_for_write
from igg.graph.state import GraphState

NS = "http://graphml.graphdrawing.org/xmlns"
XSI = "http://www.w3.org/2001/XMLSchema-instance"
SCHEMA_LOCATION = f"{NS} http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd"
TYPE_KEY = "igg_type"
LIST_DESC = "igg:json-list"

_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_TYPES = {str: "string", bool: "boolean", int: "long", float: "double", list: "string"}


def xml_safe(text: str) -> str:
    """``text`` with every code point XML 1.0 cannot carry replaced by U+FFFD."""
    return _ILLEGAL.sub("\ufffd", text)


class _Keys:
    """Key ids by (domain, property, python type), declared before the graph element."""

    def __init__(self) -> None:
        self.ids: dict[tuple[str, str, type], str] = {}

    def scan(self, domain: str, prop_dicts: Iterable[dict[str, Any]]) -> None:
        ids = self.ids
        for props in prop_dicts:
            for k, v in props.items():
                sig = (domain, k, v.__class__)
                if sig not in ids:
                    ids[sig] = f"{domain[0]}{len(ids)}"

    def declare(self, xf: Any) -> None:
        for (domain, prop, cls), key_id in self.ids.items():
            el = etree.Element("key", id=key_id, attrib={"for": domain, "attr.name": prop,
                                                          "attr.type": _TYPES.get(cls, "string")})
            if cls is list:
                etree.SubElement(el, "desc").text = LIST_DESC
            xf.write(el)


def write_graphml(state: GraphState, path_or_file: str | Path | IO[bytes], *, metadata: dict[str, Any] | None = None,
                  schema: Any = None, provenance: bool = False) -> dict[str, Any]:
    """Write the graph as GraphML; returns ``{"nodes", "edges", "replaced_values"}``.

    ``path_or_file`` is a path (written through ``igg.files``: temporary file, then rename) or a binary file
    object. The caller's graph is never modified.
    """
    if isinstance(path_or_file, str | Path):
        with open_for_write(path_or_file) as fh:
            return write_graphml(state, fh, metadata=metadata, schema=schema, provenance=provenance)
    nodes = state.nodes
    succ = state.succ
    keys = _Keys()
    keys.ids[("node", TYPE_KEY, str)] = "t_node"
    keys.ids[("edge", TYPE_KEY, str)] = "t_edge"
    graph_data: dict[str, str] = {}
    if metadata:
        graph_data["igg_metadata"] = json.dumps(metadata, ensure_ascii=False, default=str)
    if schema is not None:
        graph_data["igg_schema"] = schema.model_dump_json(by_alias=True, exclude_defaults=True)
    for k in graph_data:
        keys.ids[("graph", k, str)] = f"g_{k}"
    if provenance:
        keys.ids[("node", "igg_provenance", str)] = "p_node"
        keys.ids[("edge", "igg_provenance", str)] = "p_edge"
    keys.scan("node", (d["properties"] for d in nodes.values()))
    keys.scan("edge", (d["properties"] for nbrs in succ.values() for kd in nbrs.values() for d in kd.values()))
    replaced = 0
    ids = keys.ids
    search = _ILLEGAL.search

    def text(value: Any) -> str:
        nonlocal replaced
        cls = value.__class__
        if cls is bool:
            return "true" if value else "false"
        if cls is float:
            return repr(value)
        if cls is int:
            return str(value)
        s = json.dumps(value, ensure_ascii=False) if cls is list else value
        if search(s):
            replaced += 1
            return xml_safe(s)
        return s

    def data(el: Any, domain: str, props: dict[str, Any]) -> None:
        nonlocal replaced
        for k, v in props.items():
            cls = v.__class__
            if cls is str and not search(v):
                SubElement(el, "data", key=ids[(domain, k, str)]).text = v
            else:
                SubElement(el, "data", key=ids[(domain, k, cls)]).text = text(v)

    Element, SubElement = etree.Element, etree.SubElement
    edges = 0
    with paused_gc(), etree.xmlfile(path_or_file, encoding="utf-8") as xf:
        xf.write_declaration()
        with xf.element("graphml", nsmap={None: NS, "xsi": XSI}, attrib={f"{{{XSI}}}schemaLocation": SCHEMA_LOCATION}):
            keys.declare(xf)
            with xf.element("graph", id="G", edgedefault="directed"):
                for k, v in graph_data.items():
                    el = Element("data", key=f"g_{k}")
                    el.text = text(v)
                    xf.write(el)
                for n, d in nodes.items():
                    el = Element("node", id=n if not search(n) else text(n))
                    SubElement(el, "data", key="t_node").text = d["type"]
                    data(el, "node", d["properties"])
                    if provenance and d.get("provenance"):
                        SubElement(el, "data", key="p_node").text = text(json.dumps(d["provenance"]))
                    xf.write(el)
                for u, nbrs in succ.items():
                    su = u if not search(u) else text(u)
                    for v, kd in nbrs.items():
                        sv = v if not search(v) else text(v)
                        for eid, d in kd.items():
                            el = Element("edge", id=eid if not search(eid) else text(eid), source=su, target=sv)
                            SubElement(el, "data", key="t_edge").text = d["type"]
                            data(el, "edge", d["properties"])
                            if provenance and d.get("provenance"):
                                SubElement(el, "data", key="p_edge").text = text(json.dumps(d["provenance"]))
                            xf.write(el)
                            edges += 1
    return {"nodes": len(nodes), "edges": edges, "replaced_values": replaced}
