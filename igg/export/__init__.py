"""Exporters: the finished graph as GraphML, JSON (IGG document, node-link), Neo4j, a Cypher script, Mermaid.

``perform_exports`` runs a list of ``ExportSpec`` (``FORMAT[:TARGET]``); each format's writer is usable
alone. ``load_document``/``document_to_state`` read a saved graph back (checked like a seed graph).

``igg.export.spec`` (the formats and ``ExportSpec``) is imported here; the writers on first use (PEP 562's
module ``__getattr__``), so naming a format does not load the graph, networkx or the neo4j driver.
"""

import typing

from igg.export.spec import FORMATS, ExportSpec, parse_export_spec, perform_exports
from igg.io.lazy import lazy_names as _lazy_names

if typing.TYPE_CHECKING:
    from igg.export.cypher_script import write_cypher
    from igg.export.document import write_json, write_node_link
    from igg.export.graphml import write_graphml
    from igg.export.load import document_to_state, load_document
    from igg.export.mermaid import write_mermaid
    from igg.export.neo4j.bolt import export_neo4j
    from igg.export.neo4j.settings import Neo4jSettings

_HOME = {
    "write_cypher": "igg.export.cypher_script",
    **dict.fromkeys(("write_json", "write_node_link"), "igg.export.document"),
    "write_graphml": "igg.export.graphml",
    **dict.fromkeys(("document_to_state", "load_document"), "igg.export.load"),
    "write_mermaid": "igg.export.mermaid",
    "Neo4jSettings": "igg.export.neo4j.settings",
    "export_neo4j": "igg.export.neo4j.bolt",
}
"""The module each lazily imported name lives in."""


__getattr__ = _lazy_names(__name__, _HOME)

__all__ = [
    "FORMATS",
    "ExportSpec",
    "Neo4jSettings",
    "document_to_state",
    "export_neo4j",
    "load_document",
    "parse_export_spec",
    "perform_exports",
    "write_cypher",
    "write_graphml",
    "write_json",
    "write_mermaid",
    "write_node_link",
]
