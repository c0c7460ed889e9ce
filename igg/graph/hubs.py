"""The hub index of a ``GraphState``: which nodes have the most distinct neighbours, at a cost bounded by how
many are asked for, not by the graph's size.

Nodes with ``HUB_DEGREE`` or more distinct neighbours (in or out; parallel edges count once) sit in log2
degree buckets, ``bit_length(degree) -> ids``. The state's edge mutations call ``rebucket`` only when a
node's neighbour count reaches a power of two (or falls near the threshold), which keeps the index off the
hot path of adding edges.
"""

from __future__ import annotations

from collections.abc import Iterable

from igg.graph.tables import Adjacency, NodeTable

HUB_DEGREE = 4
"""Nodes with at least this many distinct neighbours are indexed for ``most_connected``."""
_LOWEST = HUB_DEGREE.bit_length()  # the lowest bucket


class HubIndex:
    """Log-scale degree buckets over one graph's adjacency (live views of the state's tables)."""

    __slots__ = ("buckets", "nodes", "pred", "succ")

    def __init__(self, nodes: NodeTable, succ: Adjacency, pred: Adjacency) -> None:
        self.nodes, self.succ, self.pred = nodes, succ, pred
        self.buckets: dict[int, dict[str, None]] = {}
        """bit_length(degree) -> ids, for nodes with HUB_DEGREE+ neighbours (no empty bucket is kept)."""

    def degree(self, node_id: str) -> int:
        """Number of distinct neighbours of a node (in or out; parallel edges count once)."""
        return len(self.succ[node_id]) + len(self.pred[node_id])

    def most_connected(self, limit: int) -> list[str]:
        """Up to ``limit`` hubs (HUB_DEGREE+ neighbours) of highest degree, highest first.

        Cost is bounded by ``limit``, not by the graph size. The top buckets give the candidates, which are
        then sorted by exact degree. Within the lowest bucket used, candidates are taken in insertion order,
        so ties within a factor of two are broken by age.
        """
        if limit <= 0:
            return []
        picked: list[str] = []
        for b in sorted(self.buckets, reverse=True):
            for n in self.buckets[b]:
                picked.append(n)
                if len(picked) >= 4 * limit:
                    break
            if len(picked) >= limit:
                break
        picked.sort(key=self.degree, reverse=True)
        return picked[:limit]

    def rebucket(self, node_id: str) -> None:
        """Move a node to the bucket of its degree now (out of every bucket, if it is gone or no hub)."""
        d = len(self.succ[node_id]) + len(self.pred[node_id]) if node_id in self.nodes else 0
        b = d.bit_length() if d >= HUB_DEGREE else 0
        hubs = self.buckets
        for other in (b - 2, b - 1, b + 1, b + 2) if b else (_LOWEST,):
            bucket = hubs.get(other)
            if bucket is not None and bucket.pop(node_id, 0) is None and not bucket:
                del hubs[other]
        if b:
            self._file(b, node_id)

    def enter(self, node_ids: Iterable[str]) -> None:
        """File hubs in the buckets of their degree, in this order (a state loaded in one pass: the order in
        which the nodes last entered a new bucket, as the edge mutations would have filed them)."""
        succ, pred = self.succ, self.pred
        for node_id in node_ids:
            self._file((len(succ[node_id]) + len(pred[node_id])).bit_length(), node_id)

    def _file(self, b: int, node_id: str) -> None:
        bucket = self.buckets.get(b)
        if bucket is None:
            self.buckets[b] = {node_id: None}
        else:
            bucket[node_id] = None


__all__ = ["HUB_DEGREE", "HubIndex"]
