"""The GraphML writer as it was built on ``lxml.etree.xmlfile`` (one element object per node and edge): the
reference ``igg.export.graphml.write_graphml`` must match byte for byte (it composes the text itself)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import IO, Any

from lxml import etree

from igg.export.graphml import _ILLEGAL, _TYPES, LIST_DESC, NS, SCHEMA_LOCATION, TYPE_KEY, XSI, xml_safe
from igg.graph.collector import collector_paused
from igg.graph.state import GraphState


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
            el = etree.Element(
                "key",
                id=key_id,
                attrib={"for": domain, "attr.name": prop, "attr.type": _TYPES.get(cls, "string")},
            )
            if cls is list:
                etree.SubElement(el, "desc").text = LIST_DESC
            xf.write(el)


def write_graphml_lxml(
    state: GraphState,
    path_or_file: IO[bytes],
    *,
    metadata: dict[str, Any] | None = None,
    schema: Any = None,
    provenance: bool = False,
) -> dict[str, Any]:
    """Write the graph as GraphML; returns ``{"nodes", "edges", "replaced_values"}``.

    ``path_or_file`` is a path (written through ``igg.io.files``: temporary file, then rename) or a binary
    file object. The caller's graph is never modified.
    """
    graph_data: dict[str, str] = {}
    if metadata:
        graph_data["igg_metadata"] = json.dumps(metadata, ensure_ascii=False, default=str)
    if schema is not None:
        graph_data["igg_schema"] = schema.model_dump_json(by_alias=True, exclude_defaults=True)
    keys = _keys(state, graph_data, provenance)
    writer = _Writer(keys.ids, provenance)
    edges = 0
    with collector_paused(), etree.xmlfile(path_or_file, encoding="utf-8") as xf:
        xf.write_declaration()
        with xf.element(
            "graphml", nsmap={None: NS, "xsi": XSI}, attrib={f"{{{XSI}}}schemaLocation": SCHEMA_LOCATION}
        ):
            keys.declare(xf)
            with xf.element("graph", id="G", edgedefault="directed"):
                for k, v in graph_data.items():
                    el = etree.Element("data", key=f"g_{k}")
                    el.text = writer.text(v)
                    xf.write(el)
                writer.nodes(xf, state)
                edges = writer.edges(xf, state)
    return {"nodes": len(state.nodes), "edges": edges, "replaced_values": writer.replaced}


def _keys(state: GraphState, graph_data: dict[str, str], provenance: bool) -> _Keys:
    """The keys of the document: types, graph data, provenance (when written), then the properties met."""
    keys = _Keys()
    keys.ids[("node", TYPE_KEY, str)] = "t_node"
    keys.ids[("edge", TYPE_KEY, str)] = "t_edge"
    for k in graph_data:
        keys.ids[("graph", k, str)] = f"g_{k}"
    if provenance:
        keys.ids[("node", "igg_provenance", str)] = "p_node"
        keys.ids[("edge", "igg_provenance", str)] = "p_edge"
        keys.ids[("node", "igg_evidence", str)] = "v_node"
        keys.ids[("edge", "igg_evidence", str)] = "v_edge"
    keys.scan("node", (d["properties"] for d in state.nodes.values()))
    keys.scan(
        "edge",
        (d["properties"] for nbrs in state.succ.values() for kd in nbrs.values() for d in kd.values()),
    )
    return keys


class _Writer:
    """Node and edge elements, counting the values whose illegal characters were replaced."""

    def __init__(self, ids: dict[tuple[str, str, type], str], provenance: bool) -> None:
        self.ids = ids
        self.provenance = provenance
        self.replaced = 0

    def text(self, value: Any) -> str:
        cls = value.__class__
        if cls is bool:
            return "true" if value else "false"
        if cls is float:
            return repr(value)
        if cls is int:
            return str(value)
        s = json.dumps(value, ensure_ascii=False) if cls is list else value
        if _ILLEGAL.search(s):
            self.replaced += 1
            return xml_safe(s)
        return s

    def data(self, el: Any, domain: str, d: dict[str, Any]) -> None:
        """The type, properties and (when written) provenance of a node or edge, as ``data`` children."""
        SubElement, ids, search = etree.SubElement, self.ids, _ILLEGAL.search
        SubElement(el, "data", key=f"t_{domain}").text = d["type"]
        for k, v in d["properties"].items():
            cls = v.__class__
            if cls is str and not search(v):
                SubElement(el, "data", key=ids[(domain, k, str)]).text = v
            else:
                SubElement(el, "data", key=ids[(domain, k, cls)]).text = self.text(v)
        if self.provenance and d.get("provenance"):
            SubElement(el, "data", key=f"p_{domain}").text = self.text(json.dumps(d["provenance"]))
            if d["provenance"].get("evidence"):
                SubElement(el, "data", key=f"v_{domain}").text = self.text(
                    json.dumps(d["provenance"]["evidence"])
                )

    def nodes(self, xf: Any, state: GraphState) -> None:
        search = _ILLEGAL.search
        for n, d in state.nodes.items():
            el = etree.Element("node", id=n if not search(n) else self.text(n))
            self.data(el, "node", d)
            xf.write(el)

    def edges(self, xf: Any, state: GraphState) -> int:
        search, text = _ILLEGAL.search, self.text
        edges = 0
        for u, nbrs in state.succ.items():
            su = u if not search(u) else text(u)
            for v, kd in nbrs.items():
                sv = v if not search(v) else text(v)
                for eid, d in kd.items():
                    el = etree.Element("edge", id=eid if not search(eid) else text(eid), source=su, target=sv)
                    self.data(el, "edge", d)
                    xf.write(el)
                    edges += 1
        return edges
