"""Part of a stored graph, loaded to change those elements alone (``SessionStore.load_elements``).

An update that changes a few elements of a large stored graph (``igg map-code --update`` after an edit that
left a file's facts as they were, but for lines moved: ``igg.mapping.samefacts``) loads those elements, not
the graph: reading 2.9 million elements back takes 17 s at 50,000 files, a file's elements milliseconds. Its
counts are the whole graph's (the step it keeps records them, and the limits judge them), so an update applied
to it is recorded as it would be on the whole graph. It keeps no snapshot (``igg.store.commit.prepare_step``
refuses one): a snapshot is the whole graph.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from igg.graph.journal import EdgeAdded, EdgeDeleted, Mutation, NodeAdded, NodeDeleted, NodeUpdated
from igg.graph.state import GraphState
from igg.models.schema import CompiledSchema


class PartialState(GraphState):
    """Some elements of a graph, counted with the rest of it (see the module doc). Use it only for changes
    of the elements it holds: a check that reads other elements (identity uniqueness of a new identity, an
    edge's ends) sees them missing."""

    def __init__(self, schema: CompiledSchema) -> None:
        super().__init__(schema)
        self._rest = (0, 0)

    @classmethod
    def of(
        cls,
        schema: CompiledSchema,
        mutations: Iterable[Mutation],
        elements: Sequence[str],
        *,
        counters: tuple[int, int],
        whole: tuple[int, int],
    ) -> PartialState | None:
        """The nodes and edges ``elements`` made by their own ``mutations`` (in the order applied), with the
        graph's id counters and whole counts (nodes, edges); None when a mutation is another element's or of
        another kind (a merge), an edge's end is not among them, or one of them is not in the graph."""
        asked = set(elements)
        state = cls(schema)
        for m in mutations:
            if not isinstance(m, NodeAdded | NodeUpdated | NodeDeleted | EdgeAdded | EdgeDeleted):
                return None
            if m.id not in asked or (
                isinstance(m, EdgeAdded) and not (m.source in state.nodes and m.target in state.nodes)
            ):
                return None
            state.apply_mutation(m)
        state.take_journal()
        if len(state.nodes) + len(state.edge_data()) != len(asked):
            return None
        state.restore_id_counters(*counters)
        state.count_rest(*whole)
        return state

    def count_rest(self, nodes: int, edges: int) -> None:
        """The whole graph holds ``nodes`` and ``edges``, those loaded included: the rest is counted."""
        rest = (nodes - len(self.nodes), edges - len(self._edge_ends))
        if min(rest) < 0:
            raise ValueError(f"the graph holds {nodes} nodes and {edges} edges, fewer than were loaded")
        self._rest = rest

    @property
    def node_count(self) -> int:
        """Number of nodes of the whole graph."""
        return len(self.nodes) + self._rest[0]

    @property
    def edge_count(self) -> int:
        """Number of edges of the whole graph."""
        return len(self._edge_ends) + self._rest[1]


__all__ = ["PartialState"]
