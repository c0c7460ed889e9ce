"""The difference that turns a session's graph into the graph a corpus makes (``igg.documents.fold``).

Nodes are matched by type and identity, edges by type and ends; what differs in properties or in the documents
recorded in provenance (``documents``, ``property_documents``) is set, what the corpus no longer makes is
removed, what it newly makes is added. The act step applies it (``igg.act.difference``) as one change.
"""

from __future__ import annotations

import json
from typing import Any

from igg.act.difference import Difference, NodeRef
from igg.documents.fold import Desired, EdgeKey, NodeKey
from igg.graph.state import GraphState

SOURCE_KEYS = ("documents", "property_documents", "claimants", "chunks", "evidence")
"""The provenance keys a document build records on each fact."""


def _sources(provenance: dict[str, Any]) -> dict[str, Any]:
    return {k: provenance.get(k) for k in SOURCE_KEYS}


def plan_documents(state: GraphState, desired: Desired) -> Difference:
    """What turns ``state`` into ``desired`` (nothing changed yet)."""
    diff = Difference()
    refs: dict[NodeKey, NodeRef] = {}
    nodes = state.nodes
    for node_id, data in nodes.items():
        label = data["type"]
        identity = state.identity(label, data["properties"])
        key = (label, identity) if identity is not None else None
        want = desired.nodes.get(key) if key is not None else None
        if want is None or key is None:
            diff.remove_nodes.append(node_id)
            continue
        refs[key] = node_id
        props, prov = data["properties"], want.provenance()
        if props != want.properties or _sources(data["provenance"]) != prov:
            changed = {k: v for k, v in want.properties.items() if props.get(k) != v}
            diff.set_properties.append((node_id, changed, [k for k in props if k not in want.properties]))
            diff.node_provenance[node_id] = prov
    for key, fact in desired.nodes.items():
        if key not in refs:
            refs[key] = len(diff.add_nodes)
            diff.node_provenance[len(diff.add_nodes)] = fact.provenance()
            diff.add_nodes.append((key[0], dict(fact.properties)))
    gone = set(diff.remove_nodes)
    wanted: dict[tuple[NodeRef, str, NodeRef], EdgeKey] = {
        (refs[a], label, refs[b]): (label, a, b) for label, a, b in desired.edges
    }
    seen: set[tuple[NodeRef, str, NodeRef]] = set()
    for edge_id, (source, target, data) in state.edge_rows():
        if source in gone or target in gone:
            continue
        place: tuple[NodeRef, str, NodeRef] = (source, data["type"], target)
        edge_key = wanted.get(place)
        if edge_key is None or place in seen:
            diff.remove_edges.append(edge_id)
            continue
        seen.add(place)
        fact = desired.edges[edge_key]
        if data["properties"] != fact.properties or _sources(data["provenance"]) != fact.provenance():
            diff.set_edge_properties.append((edge_id, dict(fact.properties)))
            diff.edge_provenance[edge_id] = fact.provenance()
    for place, edge_key in wanted.items():
        if place not in seen:
            fact = desired.edges[edge_key]
            diff.add_edges.append(place)
            if fact.properties:
                diff.edge_properties[place] = dict(fact.properties)
            diff.edge_provenance[place] = fact.provenance()
    return diff


def fact_counts(state: GraphState, diff: Difference, touched: set[str]) -> dict[str, int]:
    """Of the facts ``touched`` documents (changed or removed) supported: how many the difference retracts and
    how many it keeps (other support, or the new text says them again)."""
    from igg.documents.index import index_of

    index = index_of(state)
    nodes: set[str] = set()
    edges: set[str] = set()
    for doc in touched:
        found = index.mentioning(doc)
        nodes.update(found[0])
        edges.update(found[1])
    removed_nodes, removed_edges = set(diff.remove_nodes), set(diff.remove_edges)
    retracted = len(nodes & removed_nodes) + sum(
        1 for e in edges if e in removed_edges or not removed_nodes.isdisjoint(state.edge_ends(e)[:2])
    )
    return {"facts_retracted": retracted, "facts_kept": len(nodes) + len(edges) - retracted}


def content_form(state: GraphState, *, sources: bool = True) -> tuple[frozenset[Any], frozenset[Any]]:
    """A graph as a fresh build is compared with an update: nodes by type and identity with their properties,
    edges by type and ends with theirs (ids aside), and, with ``sources``, the documents recorded for each."""

    def form(data: dict[str, Any]) -> str:
        return json.dumps(
            [data["properties"], _sources(data["provenance"]) if sources else None],
            sort_keys=True,
            default=str,
        )

    keys = {n: (d["type"], repr(state.identity(d["type"], d["properties"]))) for n, d in state.nodes.items()}
    nodes = frozenset((keys[n], form(d)) for n, d in state.nodes.items())
    edges = frozenset(
        (d["type"], keys[u], keys[v], form(d)) for u, v, d in (row for _, row in state.edge_rows())
    )
    return nodes, edges


__all__ = ["SOURCE_KEYS", "content_form", "fact_counts", "plan_documents"]
