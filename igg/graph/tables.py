"""The one module that reads networkx's internal tables.

``MultiDiGraph`` keeps its nodes in ``_node`` (id -> data) and its edges in ``_succ`` / ``_pred``
(u -> v -> key -> data). Its public views (``G.nodes``, ``G.succ``) wrap those dicts in view objects that
cost a method call and an allocation per access; the hot paths (validation, observation, exports) read the
dicts directly, through these functions, so a networkx change that moves them breaks here only. They are
written only by ``insert_node`` and ``insert_edge`` (what ``add_node``/``add_edge`` do, without building
keyword dicts per call: the apply hot path adds one element per action), which ``GraphState``'s mutation
methods call; every change goes through those methods.
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


def insert_node(graph: nx.MultiDiGraph[str], node_id: str, data: NodeData) -> None:
    """``graph.add_node(node_id, **data)`` for a node that is not in the graph yet (``data`` is kept as
    is)."""
    graph._succ[node_id] = {}  # type: ignore[attr-defined]
    graph._pred[node_id] = {}  # type: ignore[attr-defined]
    graph._node[node_id] = data  # type: ignore[attr-defined]
    if graph.__dict__.get("__networkx_cache__"):
        _clear_cache(graph)


def insert_edge(graph: nx.MultiDiGraph[str], source: str, target: str, key: str, data: EdgeData) -> None:
    """``graph.add_edge(source, target, key, **data)`` between two nodes in the graph, under a key they do
    not have yet (``data`` is kept as is)."""
    out = graph._succ[source]  # type: ignore[attr-defined]
    keys = out.get(target)
    if keys is None:
        keys = out[target] = {}
        graph._pred[target][source] = keys  # type: ignore[attr-defined]
    keys[key] = data
    if graph.__dict__.get("__networkx_cache__"):
        _clear_cache(graph)


def _clear_cache(graph: nx.MultiDiGraph[str]) -> None:
    # what networkx's own mutators do (its cache holds graphs converted for other backends)
    graph.__dict__["__networkx_cache__"].clear()


__all__ = [
    "Adjacency",
    "EdgeData",
    "NodeData",
    "NodeTable",
    "insert_edge",
    "insert_node",
    "node_table",
    "predecessors",
    "successors",
]
