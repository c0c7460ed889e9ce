"""The one module that reads networkx's internal tables.

``MultiDiGraph`` keeps its nodes in ``_node`` (id -> data) and its edges in ``_succ`` / ``_pred``
(u -> v -> key -> data). Its public views (``G.nodes``, ``G.succ``) wrap those dicts in view objects that
cost a method call and an allocation per access; the hot paths (validation, observation, exports) read the
dicts directly, through these three functions, so a networkx change that moves them breaks here only. The
dicts are read, never written: every change goes through ``GraphState``'s mutation methods.
"""

from __future__ import annotations

from typing import Any

import networkx as nx

NodeData = dict[str, Any]
"""``{"type": T, "properties": {...}, "provenance": {...}}``."""
EdgeData = dict[str, Any]
"""``{"type": T, "properties": {...}, "provenance": {...}}``."""
NodeTable = dict[str, NodeData]
"""Node id -> its data."""
Adjacency = dict[str, dict[str, dict[str, EdgeData]]]
"""u -> v -> edge id -> edge data (successors), or v -> u -> ... (predecessors)."""


def node_table(graph: nx.MultiDiGraph[str]) -> NodeTable:
    """The graph's node dict (id -> data), live."""
    table: NodeTable = graph._node  # type: ignore[attr-defined]
    return table


def successors(graph: nx.MultiDiGraph[str]) -> Adjacency:
    """The graph's successor dict (u -> v -> key -> data), live."""
    table: Adjacency = graph._succ  # type: ignore[attr-defined]
    return table


def predecessors(graph: nx.MultiDiGraph[str]) -> Adjacency:
    """The graph's predecessor dict (v -> u -> key -> data), live."""
    table: Adjacency = graph._pred  # type: ignore[attr-defined]
    return table


__all__ = ["Adjacency", "EdgeData", "NodeData", "NodeTable", "node_table", "predecessors", "successors"]
