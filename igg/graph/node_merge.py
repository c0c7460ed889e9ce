"""Merging one node into another (MERGE_NODES) on the graph state, as ONE journaled mutation.

``merge_nodes`` decides what becomes of each edge of the merged node: it moves onto the node that stays under
its own id and provenance, or collapses (is deleted) when it would repeat an edge that node has, or become a
self-loop while those are forbidden. The decision is one ``NodesMerged`` (``igg.graph.journal``), which the
state applies like any recorded mutation (``GraphState.apply_mutation``: replay applies it the same way, and
``revert_mutation`` undoes it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from igg.graph.journal import MergedEdge, NodesMerged
from igg.graph.state import GraphState


def merge_nodes(
    state: GraphState,
    node: str,
    into: str,
    after: dict[str, Any],
    *,
    allow_self_loops: Callable[[str], bool],
) -> NodesMerged:
    """Merge ``node`` into ``into`` (MERGE_NODES): each of its edges moves onto ``into`` under its own id and
    provenance, or is collapsed (deleted) when it would repeat an edge ``into`` has or become a self-loop its
    type may not be (``allow_self_loops(edge_type)``); ``into`` gets the properties ``after`` (provenance
    ``merged`` lists the merged ids) and ``node`` is deleted. Journaled as ONE ``NodesMerged``, which it
    returns."""
    edges: list[MergedEdge] = []
    seen: set[str] = set()  # a self-loop is both an in- and an out-edge
    ends: set[tuple[str, str, str]] = set()  # (from, type, to) of the edges kept so far
    for u, v, k, d in (
        *state.graph.in_edges(node, keys=True, data=True),
        *state.graph.out_edges(node, keys=True, data=True),
    ):
        if k in seen:
            continue
        seen.add(k)
        edge = MergedEdge(
            id=k,
            type=d["type"],
            source=u,
            target=v,
            properties=d["properties"],
            provenance=d["provenance"],
            kept=False,
        )
        new_u, new_v = edge.moved_ends(node, into)
        existing = state.edge_between(new_u, edge.type, new_v)
        edge.kept = (
            (new_u != new_v or allow_self_loops(edge.type))
            and (new_u, edge.type, new_v) not in ends
            and (existing is None or existing == k)
        )
        if edge.kept:
            ends.add((new_u, edge.type, new_v))
        edges.append(edge)
    data = state.nodes[into]
    before_prov = data["provenance"]
    after_prov = {
        **before_prov,
        "updated": state.iteration,
        "merged": [*before_prov.get("merged", []), node],
    }
    source = state.nodes[node]
    merge = NodesMerged(
        id=node,
        into=into,
        type=source["type"],
        properties=source["properties"],
        provenance=source["provenance"],
        before=data["properties"],
        after=dict(after),
        before_prov=before_prov,
        after_prov=after_prov,
        edges=edges,
    )
    state.apply_mutation(merge)
    return merge
