"""Exporters: the finished graph as GraphML, JSON (IGG document, node-link), Neo4j, a Cypher script, Mermaid.

``perform_exports`` runs a list of ``ExportSpec`` (``FORMAT[:TARGET]``); each format's writer is usable
alone. ``load_document``/``document_to_state`` read a saved graph back (checked like a seed graph).
"""

from igg.export.cypher_script import write_cypher
from igg.export.document import write_json, write_node_link
from igg.export.graphml import write_graphml
from igg.export.load import document_to_state, load_document
from igg.export.mermaid import write_mermaid
from igg.export.neo4j import Neo4jSettings, export_neo4j
from igg.export.spec import FORMATS, ExportSpec, parse_export_spec, perform_exports

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
