"""The mutations of a graph built from nothing in one go, read from the graph instead of kept in its journal.

A fresh static code map adds every element of its graph in one step: 2.9 million ``NodeAdded``/``EdgeAdded``
objects for a 50,000-file tree, held beside the graph until the step is stored, although each says no more
than the element it added. While such a step applies, the state's journal is an ``Unkept`` one (it counts the
additions and keeps none); the step's mutations are then ``Built``: the same ``NodeAdded`` per node and
``EdgeAdded`` per edge, in the order they were added, each made from the graph when it is read (the store
encodes them one at a time). ``tests/unit/test_graph_built.py`` pins them to the journal they stand for.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, overload

from igg.graph.journal import EdgeAdded, Mutation, NodeAdded

if TYPE_CHECKING:
    from igg.graph.state import GraphState


class Unkept(list[Mutation]):
    """A journal that keeps nothing: it counts the elements added and notes any other change (which a
    graph built from nothing cannot stand for, see ``Built``)."""

    def __init__(self) -> None:
        super().__init__()
        self.added = 0
        """``NodeAdded`` and ``EdgeAdded`` appended."""
        self.other: Mutation | None = None
        """The first other mutation appended, if any."""

    def append(self, mutation: Mutation) -> None:
        """Count an addition (anything else is noted, not kept)."""
        if mutation.__class__ is NodeAdded or mutation.__class__ is EdgeAdded:
            self.added += 1
        elif self.other is None:
            self.other = mutation


class Built(Sequence[Mutation]):
    """The mutations that built ``state`` from an empty graph: a ``NodeAdded`` per node, then an ``EdgeAdded``
    per edge, in the order they were added, made from the graph as each is read (valid while those elements
    are as they were added: the step they stand for is being stored, or reverted from the last one back)."""

    def __init__(self, state: GraphState) -> None:
        self._state = state
        self._ids = [*state.nodes, *(edge_id for edge_id, _ in state.edge_rows())]
        self._nodes = state.node_count

    def __len__(self) -> int:
        return len(self._ids)

    @overload
    def __getitem__(self, index: int) -> Mutation: ...

    @overload
    def __getitem__(self, index: slice) -> list[Mutation]: ...

    def __getitem__(self, index: int | slice) -> Mutation | list[Mutation]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self._ids)))]
        element = self._ids[index]
        if (index if index >= 0 else index + len(self._ids)) < self._nodes:
            d = self._state.nodes[element]
            return NodeAdded(element, d["type"], d["properties"], d["provenance"])
        source, target, d = self._state.edge_ends(element)
        return EdgeAdded(element, d["type"], source, target, d["properties"], d["provenance"])

    def __iter__(self) -> Iterator[Mutation]:
        for i in range(len(self._ids)):
            yield self[i]


def built(state: GraphState, journal: Unkept) -> Built:
    """The mutations ``journal`` did not keep while ``state`` was built from an empty graph (``Built``); a
    ``RuntimeError`` when that journal saw a change other than an addition, or not every element added."""
    made = Built(state)
    if journal.other is not None or journal.added != len(made):
        raise RuntimeError(
            f"a graph built from nothing changed otherwise than by additions ({journal.other!r}, "
            f"{journal.added} added, {len(made)} elements)"
        )
    return made


__all__ = ["Built", "Unkept", "built"]
