"""Paths of edges between two sets of nodes: the evidence a violation shows.

``Adjacency`` is a graph of node ids reduced to the edges a rule reads. Two searches, the two import-linter
uses (so its verdicts and IGG's can be compared chain for chain):

* ``shortest_chains`` (forbidden contracts): for each (downstream, upstream) pair, one shortest chain that
  does not pass through another node of either set;
* ``routes`` (layers and independence): the direct edges from the lower set to the higher one, then, with the
  sets squashed into one node each and the direct edges gone, shortest chains popped one by one (each found
  chain's edges removed before the next search), every one widened to each first and last node it can start
  from and end at. This is grimp's ``find_illegal_dependencies_for_layers``.

Neighbours are visited in name order, so a tie between two shortest chains is broken the same way every run.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from igg.rules.depgraph import DepGraph

Chain = tuple[str, ...]
"""Node ids from the first importer to the last imported."""
NameOf = Callable[[str], str]
"""A node id's name (what ties are broken by)."""
Visit = Callable[[int], None]
"""Charges visits to a check's bounds (``igg.rules.bounds.CheckBounds.visit``: raises once they are spent)."""


def _free(n: int) -> None:
    """No bound (a caller that does not charge visits)."""


@dataclass(kw_only=True)
class Adjacency:
    """Successors of each node (by id) over the chosen edge types, visited in name order."""

    succ: dict[str, list[str]] = field(default_factory=dict)
    pred: dict[str, set[str]] = field(default_factory=dict)

    @classmethod
    def of(
        cls, graph: DepGraph, types: Iterable[str], without: Iterable[str] = (), visit: Visit = _free
    ) -> Adjacency:
        """The edges of ``types`` in ``graph`` between nodes other than ``without``."""
        visit(len(graph.edges))
        skip = set(without)
        succ: dict[str, set[str]] = {}
        pred: dict[str, set[str]] = {}
        for e in graph.of_types(types):
            if e.source in skip or e.target in skip or e.source == e.target:
                continue
            succ.setdefault(e.source, set()).add(e.target)
            pred.setdefault(e.target, set()).add(e.source)
        return cls(succ={k: sorted(v, key=graph.name) for k, v in succ.items()}, pred=pred)

    def remove(self, source: str, target: str) -> None:
        """Remove the edge ``source -> target`` (if there)."""
        if target in self.succ.get(source, ()):
            self.succ[source].remove(target)
            self.pred[target].discard(source)


def _reach(adj: Adjacency, start: str, goals: set[str], blocked: set[str], visit: Visit) -> Iterator[Chain]:
    """A shortest chain from ``start`` to each node of ``goals`` it reaches with inner nodes outside
    ``blocked`` (goals are never inner nodes), in the order the search meets them. One search serves every
    goal: each chain is the one a search for that goal alone finds (neighbours in name order, first discovery
    wins)."""
    parent: dict[str, str | None] = {start: None}
    queue: deque[str] = deque([start])
    while queue:
        node = queue.popleft()
        successors = adj.succ.get(node, ())
        visit(1 + len(successors))
        for nxt in successors:
            if nxt in parent:
                continue
            parent[nxt] = node
            if nxt in goals:
                chain = [nxt]
                back: str | None = node
                while back is not None:
                    chain.append(back)
                    back = parent[back]
                yield tuple(reversed(chain))
            elif nxt not in blocked:
                queue.append(nxt)


def shortest_chains(
    adj: Adjacency, downstream: set[str], upstream: set[str], name: NameOf, visit: Visit = _free
) -> Iterator[Chain]:
    """One shortest chain per (downstream, upstream) pair that has one, never through another node of
    either set; in name order of the pairs (one search per downstream node, not per pair)."""
    others = downstream | upstream
    for d in sorted(downstream, key=name):
        goals = upstream - {d}
        found = {chain[-1]: chain for chain in _reach(adj, d, goals, others - {d}, visit)}
        for u in sorted(found, key=name):
            yield found[u]


def routes(
    adj: Adjacency, lower: set[str], higher: set[str], name: NameOf, visit: Visit = _free
) -> list[Chain]:
    """Every chain from ``lower`` to ``higher`` as grimp's layers search finds them (see the module doc);
    ``adj`` has the nodes of other layers removed already, and is changed (the direct edges are popped)."""
    out: list[Chain] = []
    for low in sorted(lower, key=name):
        for high in sorted(adj.succ.get(low, ()), key=name):
            if high in higher:
                out.append((low, high))
    for low, high in out:
        adj.remove(low, high)
    heads_of = {m: {p for p in adj.pred.get(m, ()) if p in lower} for m in list(adj.pred)}
    tails_of = {m: {t for t in adj.succ.get(m, ()) if t in higher} for m in list(adj.succ)}
    squashed = _Squashed(adj, lower, higher)
    middles: list[Chain] = []
    while (middle := squashed.pop_shortest(name, visit)) is not None:
        middles.append(middle)
    for middle in middles:
        for head in sorted(heads_of.get(middle[0], ()), key=name):
            for tail in sorted(tails_of.get(middle[-1], ()), key=name):
                out.append((head, *middle, tail))
    return out


class _Squashed:
    """``adj`` with ``lower`` and ``higher`` each squashed into one node, for popping chains between them."""

    def __init__(self, adj: Adjacency, lower: set[str], higher: set[str]) -> None:
        self.lower, self.higher = lower, higher
        self.first: set[str] = {
            t for low in lower for t in adj.succ.get(low, ()) if t not in lower and t not in higher
        }
        """Nodes the squashed lower node imports."""
        self.last: set[str] = {
            s for high in higher for s in adj.pred.get(high, ()) if s not in lower and s not in higher
        }
        """Nodes that import the squashed higher node."""
        self.succ = {
            k: [t for t in v if t not in lower and t not in higher]
            for k, v in adj.succ.items()
            if k not in lower and k not in higher
        }

    def pop_shortest(self, name: NameOf, visit: Visit = _free) -> Chain | None:
        """The middle (inner nodes) of a shortest chain from the lower node to the higher one, whose edges are
        then removed; None when there is none left."""
        parent: dict[str, str | None] = {}
        queue: deque[str] = deque()
        for s in sorted(self.first, key=name):
            parent[s] = None
            queue.append(s)
        while queue:
            node = queue.popleft()
            visit(1 + len(self.succ.get(node, ())))
            if node in self.last:
                middle = [node]
                back = parent[node]
                while back is not None:
                    middle.append(back)
                    back = parent[back]
                middle.reverse()
                self._remove(middle)
                return tuple(middle)
            for nxt in self.succ.get(node, ()):
                if nxt not in parent:
                    parent[nxt] = node
                    queue.append(nxt)
        return None

    def _remove(self, middle: list[str]) -> None:
        self.first.discard(middle[0])
        for a, b in zip(middle, middle[1:], strict=False):
            self.succ[a].remove(b)
        self.last.discard(middle[-1])
