"""The graph as of an instant of valid time: the facts that held then (``igg.models.validtime``).

``as_of(state, at)`` is a new state holding the nodes and edges valid at ``at`` (an element without bounds is
always valid; an edge needs both its ends valid), each node with the properties it had then (a one-at-a-time
property takes its value of that time, and is absent when it had none). Ids, types and provenance are kept, so
exports and ``explain`` name the same elements. Nothing of the original changes.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from igg.graph.state import GraphState
from igg.models.validtime import HISTORY, holds, properties_at


def as_of(state: GraphState, at: datetime) -> GraphState:
    """The facts of ``state`` valid at ``at``, as a new state (the module docstring)."""
    out = GraphState(state.schema)
    nodes: list[dict[str, Any]] = []
    kept: set[str] = set()
    for node_id, data in state.nodes.items():
        props = data["properties"]
        if not holds(props, at):
            continue
        if HISTORY in props:
            props = properties_at(props, at)
        nodes.append(
            {"id": node_id, "type": data["type"], "properties": props, "provenance": data["provenance"]}
        )
        kept.add(node_id)
    edges = [
        {
            "id": eid,
            "type": data["type"],
            "from": source,
            "to": target,
            "properties": data["properties"],
            "provenance": data["provenance"],
        }
        for eid, (source, target, data) in state.edge_rows()
        if source in kept and target in kept and holds(data["properties"], at)
    ]
    out.load(nodes, edges)
    out.protected = state.protected & kept
    out.restore_id_counters(*state.id_counters)
    return out


def edge_holds(data: dict[str, Any], at: datetime | None) -> bool:
    """Whether an edge (its data dict) is valid at ``at`` (None: no time asked, always)."""
    return at is None or holds(data["properties"], at)


def node_holds(state: GraphState, node_id: str, at: datetime | None) -> bool:
    """Whether a node is valid at ``at`` (None: always)."""
    return at is None or holds(state.nodes[node_id]["properties"], at)


__all__ = ["as_of", "edge_holds", "node_holds"]
