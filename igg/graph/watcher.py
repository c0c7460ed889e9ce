"""The watcher protocol: how a derived index (the to-do index, a property index, a document's facts) is kept
up to date by ``GraphState``, which tells each watcher (``GraphState.watch``) about every change it makes."""

from __future__ import annotations

from typing import Any, Protocol


class GraphWatcher(Protocol):
    """A derived index kept up to date by ``GraphState``: told after each change, with the element's data.

    ``node_changed`` gets the whole property dicts before and after; ``delete_node`` reports the node's
    edges as ``edge_removed`` first. Watchers only read the state; they never change it.
    """

    def node_added(self, node_id: str, node_type: str, properties: dict[str, Any]) -> None: ...

    def node_changed(
        self, node_id: str, node_type: str, before: dict[str, Any], after: dict[str, Any]
    ) -> None: ...

    def node_removed(self, node_id: str, node_type: str, properties: dict[str, Any]) -> None: ...

    def edge_added(self, edge_id: str, source: str, edge_type: str, target: str) -> None: ...

    def edge_removed(self, edge_id: str, source: str, edge_type: str, target: str) -> None: ...
