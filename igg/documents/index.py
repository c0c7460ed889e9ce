"""Which facts each document supports or claims a property of: an index kept up to date by the graph state
(a ``GraphWatcher``), so a retraction finds a document's facts without reading the whole graph."""

from __future__ import annotations

import weakref
from typing import Any

from igg.graph.state import GraphState


def _docs(provenance: dict[str, Any]) -> tuple[str, ...]:
    return tuple({*(provenance.get("documents") or ()), *(provenance.get("claimants") or ())})


class DocumentIndex:
    """Document id -> the nodes and the edges that name it in their provenance."""

    def __init__(self, state: GraphState) -> None:
        self.state = state
        self.nodes: dict[str, set[str]] = {}
        self.edges: dict[str, set[str]] = {}
        self._of: dict[str, tuple[str, ...]] = {}
        for node_id, data in state.nodes.items():
            self._file(self.nodes, node_id, data["provenance"])
        for edge_id, (_, _, data) in state.edge_rows():
            self._file(self.edges, edge_id, data["provenance"])
        state.watch(self)

    def _file(self, table: dict[str, set[str]], element: str, provenance: dict[str, Any]) -> None:
        docs = _docs(provenance)
        if docs:
            self._of[element] = docs
            for doc in docs:
                table.setdefault(doc, set()).add(element)

    def _unfile(self, table: dict[str, set[str]], element: str) -> None:
        for doc in self._of.pop(element, ()):
            found = table.get(doc)
            if found is not None:
                found.discard(element)
                if not found:
                    del table[doc]

    def node_added(self, node_id: str, node_type: str, properties: dict[str, Any]) -> None:
        self._file(self.nodes, node_id, self.state.nodes[node_id]["provenance"])

    def node_changed(
        self, node_id: str, node_type: str, before: dict[str, Any], after: dict[str, Any]
    ) -> None:
        self._unfile(self.nodes, node_id)
        self._file(self.nodes, node_id, self.state.nodes[node_id]["provenance"])

    def node_removed(self, node_id: str, node_type: str, properties: dict[str, Any]) -> None:
        self._unfile(self.nodes, node_id)

    def edge_added(self, edge_id: str, source: str, edge_type: str, target: str) -> None:
        self._file(self.edges, edge_id, self.state.edge_ends(edge_id)[2]["provenance"])

    def edge_removed(self, edge_id: str, source: str, edge_type: str, target: str) -> None:
        self._unfile(self.edges, edge_id)

    def mentioning(self, doc: str) -> tuple[list[str], list[str]]:
        """The nodes and edges naming ``doc`` (sorted by id)."""
        return sorted(self.nodes.get(doc, ())), sorted(self.edges.get(doc, ()))


_INDEXES: weakref.WeakKeyDictionary[GraphState, DocumentIndex] = weakref.WeakKeyDictionary()


def index_of(state: GraphState) -> DocumentIndex:
    """The state's document index (built on first use, then kept up to date by the state)."""
    found = _INDEXES.get(state)
    if found is None:
        found = _INDEXES[state] = DocumentIndex(state)
    return found


__all__ = ["DocumentIndex", "index_of"]
