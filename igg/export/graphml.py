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

    ``path_or_file`` is a path or a binary file object. The caller's graph is never modified.
    """
    graph = state.graph
    nodes = graph._node
    edges = list(state.edges())
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
    keys.scan("edge", (d["properties"] for _, _, _, d in edges))
    replaced = [0]
    ids = keys.ids

    def text(value: Any) -> str:
        cls = value.__class__
        if cls is str:
            s = value
        elif cls is bool:
            return "true" if value else "false"
        elif cls is list:
            s = json.dumps(value, ensure_ascii=False)
        elif cls is float:
            return repr(value)
        else:
            return str(value)
        if _ILLEGAL.search(s):
            replaced[0] += 1
            return xml_safe(s)
        return s

    Element, SubElement = etree.Element, etree.SubElement
    with etree.xmlfile(path_or_file, encoding="utf-8") as xf:
        xf.write_declaration()
        with xf.element("graphml", nsmap={None: NS, "xsi": XSI}, attrib={f"{{{XSI}}}schemaLocation": SCHEMA_LOCATION}):
            keys.declare(xf)
            with xf.element("graph", id="G", edgedefault="directed"):
                for k, v in graph_data.items():
                    el = Element("data", key=f"g_{k}")
                    el.text = text(v)
                    xf.write(el)
                for n, d in nodes.items():
                    el = Element("node", id=text(n))
                    SubElement(el, "data", key="t_node").text = d["type"]
                    for k, v in d["properties"].items():
                        SubElement(el, "data", key=ids[("node", k, v.__class__)]).text = text(v)
                    if provenance and d.get("provenance"):
                        SubElement(el, "data", key="p_node").text = text(json.dumps(d["provenance"]))
                    xf.write(el)
                for eid, u, v, d in edges:
                    el = Element("edge", id=text(eid), source=text(u), target=text(v))
                    SubElement(el, "data", key="t_edge").text = d["type"]
                    for k, val in d["properties"].items():
                        SubElement(el, "data", key=ids[("edge", k, val.__class__)]).text = text(val)
                    if provenance and d.get("provenance"):
                        SubElement(el, "data", key="p_edge").text = text(json.dumps(d["provenance"]))
                    xf.write(el)
    return {"nodes": len(nodes), "edges": len(edges), "replaced_values": replaced[0]}
