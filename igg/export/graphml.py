"""GraphML export, composed as text and written in chunks; valid against the GraphML XSD.

Layout:
- one ``<key>`` per (domain, property, value type): ``string``, ``long`` (integers), ``double``, ``boolean``;
  a property holding integers on some nodes and strings on others gets one key per type under the same
  ``attr.name``, so ``networkx.read_graphml`` returns every value with its own type. Lists are written as
  JSON text in a ``string`` key whose ``<desc>`` says ``igg:json-list``.
- node type and edge type: the reserved key ``igg_type`` (property keys cannot start with ``igg_``);
  graph-level keys ``igg_metadata`` and ``igg_schema`` hold JSON; ``igg_provenance`` (JSON) when asked for,
  with ``igg_evidence`` (the element's evidence list as JSON: quote, chunk, start, end, line, column, match)
  beside it.
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

from igg.graph.collector import collector_paused
from igg.graph.state import GraphState
from igg.io.files import open_for_write

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


_TEXT_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", "\r": "&#13;"})
_ATTR_ESCAPES = str.maketrans(
    {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "\t": "&#9;", "\n": "&#10;", "\r": "&#13;"}
)
_TEXT_SPECIAL = re.compile("[&<>\r\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
"""What text content cannot carry as is: markup characters and what XML cannot carry at all."""
_FLUSH = 20_000
"""Elements gathered before one write to the file."""
_ATTR_SPECIAL = re.compile('[&<>"\t\n\r\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]')


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

    def declare(self) -> str:
        out = []
        for (domain, prop, cls), key_id in self.ids.items():
            head = (
                f'<key id="{_attr(key_id)}" for="{domain}" attr.name="{_attr(prop)}" '
                f'attr.type="{_TYPES.get(cls, "string")}"'
            )
            out.append(head + f"><desc>{LIST_DESC}</desc></key>" if cls is list else head + "/>")
        return "".join(out)

    def openers(self, domain: str) -> dict[str, dict[type, str]]:
        """property -> value class -> ``<data key="...">``, for one domain."""
        out: dict[str, dict[type, str]] = {}
        for (d, prop, cls), key_id in self.ids.items():
            if d == domain:
                out.setdefault(prop, {})[cls] = f'<data key="{_attr(key_id)}">'
        return out


def _attr(value: str) -> str:
    return value.translate(_ATTR_ESCAPES) if _ATTR_SPECIAL.search(value) else value


def write_graphml(
    state: GraphState,
    path_or_file: str | Path | IO[bytes],
    *,
    metadata: dict[str, Any] | None = None,
    schema: Any = None,
    provenance: bool = False,
) -> dict[str, Any]:
    """Write the graph as GraphML; returns ``{"nodes", "edges", "replaced_values"}``.

    ``path_or_file`` is a path (written through ``igg.io.files``: temporary file, then rename) or a binary
    file object. The caller's graph is never modified.

    The XML is composed as text, escaped exactly as libxml2 (lxml) serializes it: in text ``& < >`` and
    carriage returns; in attribute values also ``"``, tabs and newlines. Byte for byte it is the document
    ``lxml.etree.xmlfile`` writes for the same elements (a test holds it to that), at about three times
    the speed, because no element objects are built.
    """
    if isinstance(path_or_file, str | Path):
        with open_for_write(path_or_file) as fh:
            return write_graphml(state, fh, metadata=metadata, schema=schema, provenance=provenance)
    graph_data: dict[str, str] = {}
    if metadata:
        graph_data["igg_metadata"] = json.dumps(metadata, ensure_ascii=False, default=str)
    if schema is not None:
        graph_data["igg_schema"] = schema.model_dump_json(by_alias=True, exclude_defaults=True)
    writer = _Writer(state, path_or_file.write, _declared_keys(state, graph_data, provenance), provenance)
    with collector_paused():
        writer.start(graph_data)
        writer.nodes()
        edges = writer.edges()
        writer.out.append("</graph></graphml>")
        writer.flush()
    return {"nodes": len(state.nodes), "edges": edges, "replaced_values": writer.replaced}


def _declared_keys(state: GraphState, graph_data: dict[str, str], provenance: bool) -> _Keys:
    """Every key the document declares, in the order their ids are numbered."""
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
        "edge", (d["properties"] for nbrs in state.succ.values() for kd in nbrs.values() for d in kd.values())
    )
    return keys


_text_special = _TEXT_SPECIAL.search
_attr_special = _ATTR_SPECIAL.search
_illegal = _ILLEGAL.search


class _Writer:
    """One GraphML document being composed: the escaping of values (counting those whose illegal characters
    are replaced), the elements gathered, and their writes to the file ``_FLUSH`` elements at a time."""

    def __init__(self, state: GraphState, write: Any, keys: _Keys, provenance: bool) -> None:
        self.state, self.write, self.keys, self.provenance = state, write, keys, provenance
        self.node_keys, self.edge_keys = keys.openers("node"), keys.openers("edge")
        self.replaced = 0
        self.out: list[str] = []

    def text(self, value: Any) -> str:
        """A value as escaped text content (counting the values whose illegal characters are replaced)."""
        cls = value.__class__
        if cls is bool:
            return "true" if value else "false"
        if cls is float:
            return repr(value)
        if cls is int:
            return str(value)
        s = json.dumps(value, ensure_ascii=False) if cls is list else value
        if not _text_special(s):
            return s
        if _illegal(s):
            self.replaced += 1
            s = xml_safe(s)
        return s.translate(_TEXT_ESCAPES)

    def attr(self, value: str) -> str:
        """A value as an escaped attribute value (counting it if illegal characters are replaced)."""
        if not _attr_special(value):
            return value
        if _illegal(value):
            self.replaced += 1
            value = xml_safe(value)
        return value.translate(_ATTR_ESCAPES)

    def data(self, openers: dict[str, dict[type, str]], props: dict[str, Any]) -> None:
        """The ``<data>`` elements of one node's or edge's properties."""
        out = self.out
        for k, v in props.items():
            cls = v.__class__
            if cls is str and not _text_special(v):
                out.append(f"{openers[k][str]}{v}</data>")
            else:
                out.append(f"{openers[k][cls]}{self.text(v)}</data>")

    def flush(self) -> None:
        """Write what was gathered."""
        self.write("".join(self.out).encode("utf-8"))
        self.out.clear()

    def start(self, graph_data: dict[str, str]) -> None:
        """The XML declaration, the keys, the graph element and its data."""
        self.out += [
            "<?xml version='1.0' encoding='utf-8'?>\n",
            f'<graphml xmlns="{NS}" xmlns:xsi="{XSI}" xsi:schemaLocation="{SCHEMA_LOCATION}">',
            self.keys.declare(),
            '<graph id="G" edgedefault="directed">',
        ]
        for k, v in graph_data.items():
            self.out.append(f'<data key="g_{_attr(k)}">{self.text(v)}</data>')

    def nodes(self) -> None:
        """Every node, in insertion order."""
        out, attr, text, data, node_keys, provenance = (
            self.out,
            self.attr,
            self.text,
            self.data,
            self.node_keys,
            self.provenance,
        )
        append = out.append
        size = 0
        for n, d in self.state.nodes.items():
            append(f'<node id="{attr(n)}"><data key="t_node">{text(d["type"])}</data>')
            data(node_keys, d["properties"])
            if provenance and d.get("provenance"):
                append(f'<data key="p_node">{text(json.dumps(d["provenance"]))}</data>')
                if d["provenance"].get("evidence"):
                    append(f'<data key="v_node">{text(json.dumps(d["provenance"]["evidence"]))}</data>')
            append("</node>")
            size += 1
            if size >= _FLUSH:
                self.flush()
                size = 0

    def edges(self) -> int:
        """Every edge, by source node; returns how many."""
        out, attr, text, data, edge_keys, provenance = (
            self.out,
            self.attr,
            self.text,
            self.data,
            self.edge_keys,
            self.provenance,
        )
        append = out.append
        edges = size = 0
        for u, nbrs in self.state.succ.items():
            su = attr(u)
            for v, kd in nbrs.items():
                sv = attr(v)
                for eid, d in kd.items():
                    append(
                        f'<edge id="{attr(eid)}" source="{su}" target="{sv}"><data'
                        f' key="t_edge">{text(d["type"])}</data>'
                    )
                    data(edge_keys, d["properties"])
                    if provenance and d.get("provenance"):
                        append(f'<data key="p_edge">{text(json.dumps(d["provenance"]))}</data>')
                        if d["provenance"].get("evidence"):
                            append(
                                f'<data key="v_edge">{text(json.dumps(d["provenance"]["evidence"]))}</data>'
                            )
                    append("</edge>")
                    edges += 1
                    size += 1
                    if size >= _FLUSH:
                        self.flush()
                        size = 0
        return edges
