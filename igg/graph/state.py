"""The graph state: a networkx ``MultiDiGraph`` plus the indexes that make validation O(1).

Node data is ``{"type": T, "properties": {...}, "provenance": {...}}``; edges are keyed by their id and
carry ``{"type": T, "from": u, "to": v, "properties": {...}, "provenance": {...}}`` (the ends in the data: a
dict of five keys costs what one of three does, and the index by id needs no tuple). Every change goes
through the mutation methods below, which keep the indexes right and append a typed *mutation*
(``igg.graph.journal``) to ``journal``: the session store persists those per iteration, ``replay`` re-applies
them (``apply_mutation``) and ``undo`` applies their inverses (``revert_mutation``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, ItemsView, Iterable, Iterator, Mapping, Sequence
from itertools import islice
from typing import Any, cast

import networkx as nx

from igg.graph.document import document_dict
from igg.graph.duplicates import NearDuplicateIndex
from igg.graph.grounding import kept_evidence
from igg.graph.hubs import HUB_DEGREE, HubIndex
from igg.graph.journal import (
    EdgeAdded,
    EdgeDeleted,
    Mutation,
    NodeAdded,
    NodeDeleted,
    NodesMerged,
    NodeUpdated,
)
from igg.graph.lookup import NodeLookup
from igg.graph.tables import (
    Adjacency,
    NodeTable,
    insert_edge,
    insert_node,
    node_table,
    predecessors,
    successors,
)
from igg.graph.watcher import GraphWatcher
from igg.models.common import freeze
from igg.models.document import GraphDocument
from igg.models.schema import CompiledSchema, Schema

RECENT_CAPACITY = 4096
"""How many node touches ``recently_touched`` remembers (a ring: older touches fall off)."""


class GraphState:
    """The graph being built, its identity index and its mutation journal."""

    def __init__(self, schema: CompiledSchema) -> None:
        self.schema = schema
        self.graph: nx.MultiDiGraph[str] = nx.MultiDiGraph()
        self.nodes: NodeTable = node_table(self.graph)
        """Node id -> ``{"type", "properties", "provenance"}`` (read only: change it through the methods)."""
        self.succ: Adjacency = successors(self.graph)
        """u -> v -> edge id -> edge data (read only)."""
        self.pred: Adjacency = predecessors(self.graph)
        """v -> u -> edge id -> edge data (read only)."""
        self.journal: list[Mutation] = []
        """Mutations since the last ``take_journal``."""
        self.protected: set[str] = set()
        """Node ids loaded from seed_data (protected from deletion when so configured)."""
        self.iteration = 0
        """Iteration stamped into provenance of elements created or updated now."""
        self.chunk: str | None = None
        """Context chunk label stamped into provenance."""
        self.lookup = NodeLookup(schema, self.nodes)
        """The node indexes and the lookups over them (``find_nodes``, ``describe``, ``close_matches``)."""
        # the lookup's dicts, shared: the mutation methods below keep them right without a call each
        lk = self.lookup
        self._by_identity, self._by_prop, self._by_type = lk.by_identity, lk.by_prop, lk.by_type
        self._edge_ends: dict[str, dict[str, Any]] = {}
        """Edge id -> edge data, in insertion order (``edges`` reads it 2x faster than the adjacency)."""
        self._edge_type_counts: dict[str, int] = {t: 0 for t in schema.edge_type_list}
        self._next_node = self._next_edge = 1
        self._prov_key: tuple[int, str | None] | None = None
        self._prov: dict[str, Any] = {}
        self._recent: deque[str] = deque(maxlen=RECENT_CAPACITY)
        """Ids of nodes added, updated or given an edge, newest last (duplicates allowed)."""
        self.hubs = HubIndex(self.nodes, self.succ, self.pred)
        """The nodes with the most neighbours (``most_connected``), kept up to date by the edge mutations."""
        self._hubs = self.hubs.buckets
        self.near: NearDuplicateIndex | None = None
        """The near-duplicate index, built on first use (``near_duplicates``) and kept up to date after."""
        self.watchers: list[GraphWatcher] = []
        """Derived indexes told about every change (``watch``); empty on the hot path unless asked for."""
        self.indexes: dict[str, Any] = {}
        """Derived indexes by name (the to-do index, property indexes), built on first use by modules."""

    # ---- reading -------------------------------------------------------------------------------------
    @property
    def node_count(self) -> int:
        """Number of nodes."""
        return len(self.nodes)

    @property
    def edge_count(self) -> int:
        """Number of edges (O(1), unlike ``MultiDiGraph.number_of_edges``)."""
        return len(self._edge_ends)

    def node_type(self, node_id: str) -> str:
        """The type of a node."""
        return str(self.nodes[node_id]["type"])

    def node_properties(self, node_id: str) -> dict[str, Any]:
        """The properties of a node (do not mutate: use ``update_node``)."""
        return cast("dict[str, Any]", self.nodes[node_id]["properties"])

    def identity(self, node_type: str, properties: dict[str, Any]) -> tuple[Any, ...] | None:
        """The identity tuple of a would-be node, or None when an identity key is missing."""
        try:
            return self.lookup.identity_of(node_type, properties)
        except KeyError:
            return None

    def find_identity(self, node_type: str, identity: tuple[Any, ...]) -> str | None:
        """The id of the node of ``node_type`` with this identity, if any."""
        return self._by_identity.get((node_type, identity))

    def find_nodes(self, ref: dict[str, Any]) -> list[str]:
        """Ids of the nodes matching a reference (properties, plus optional ``label`` = node type)."""
        return self.lookup.find_nodes(ref)

    def describe(self, node_id: str) -> str:
        """A short human/agent-readable name: ``Class "AuthService"`` or ``Method name=.. signature=..``."""
        return self.lookup.describe(node_id)

    def close_matches(self, ref: dict[str, Any], limit: int = 3) -> list[str]:
        """Descriptions of nodes whose identity is close to the reference's, best first."""
        return self.lookup.close_matches(ref, limit)

    def near_duplicates(self, threshold: float, aliases: list[list[str]]) -> NearDuplicateIndex:
        """The near-duplicate index for these settings: built from the graph once (O(n)), then maintained by
        every node mutation. A change of settings rebuilds it."""
        near = self.near
        if near is None or near.threshold != threshold or near.aliases != aliases:
            near = NearDuplicateIndex(self.schema, threshold=threshold, aliases=aliases)
            for n, d in self.nodes.items():
                near.add(n, d["type"], d["properties"])
            self.near = near
        return near

    @property
    def identity_table(self) -> Mapping[tuple[str, tuple[Any, ...]], str]:
        """(node type, identity values) -> node id, for every node (read only: the fast path of
        ``igg.act.fastadds`` probes it directly, once per action, where ``find_identity`` would cost a call
        each)."""
        return self._by_identity

    def has_edge(self, edge_id: str) -> bool:
        """Whether an edge with this id exists."""
        return edge_id in self._edge_ends

    def edge_between(self, source: str, edge_type: str, target: str) -> str | None:
        """The id of the edge of this type from source to target, if any, found among the edges between the
        two (an index by ends and type cost a tuple key per edge: a tenth of a large graph's memory)."""
        keyed = self.succ[source].get(target) if source in self.succ else None
        for edge_id, data in (keyed or {}).items():
            if data["type"] == edge_type:
                return edge_id
        return None

    def nodes_of_type(self, node_type: str) -> Collection[str]:
        """Ids of the nodes of one type, in insertion order."""
        return self._by_type.get(node_type, {}).keys()

    def counts_by_type(self) -> tuple[dict[str, int], dict[str, int]]:
        """Node counts per node type and edge counts per edge type."""
        return {t: len(ids) for t, ids in self._by_type.items()}, dict(self._edge_type_counts)

    def nodes_with(self, key: str, value: Any) -> Collection[str]:
        """Ids of the nodes whose identity includes ``key`` with this value (O(1); empty for other keys)."""
        return self._by_prop.get((key, freeze(value)), {}).keys()

    def degree(self, node_id: str) -> int:
        """Number of distinct neighbours of a node (in or out; parallel edges count once)."""
        return len(self.succ[node_id]) + len(self.pred[node_id])

    def most_connected(self, limit: int) -> list[str]:
        """Up to ``limit`` hubs (HUB_DEGREE+ neighbours) of highest degree, highest first (``HubIndex``: the
        cost is bounded by ``limit``, not by the graph size)."""
        return self.hubs.most_connected(limit)

    def recently_touched(self, limit: int) -> list[str]:
        """Up to ``limit`` existing nodes most recently added, updated or connected, newest first."""
        out: dict[str, None] = {}
        nodes = self.nodes
        for n in reversed(self._recent):
            if n not in out and n in nodes:
                out[n] = None
                if len(out) >= limit:
                    break
        return list(out)

    def edge_rows(self) -> Iterator[tuple[str, tuple[str, str, dict[str, Any]]]]:
        """(edge id, (from id, to id, data)) for every edge, in the order they were added (read only)."""
        return ((k, (d["from"], d["to"], d)) for k, d in self._edge_ends.items())

    def edge_data(self) -> ItemsView[str, dict[str, Any]]:
        """Edge id -> data, ends (``from``, ``to``) in it, in the order added (read only; the fastest way)."""
        return self._edge_ends.items()

    def edge_ends(self, edge_id: str) -> tuple[str, str, dict[str, Any]]:
        """(from id, to id, data) of one edge (read only)."""
        d = self._edge_ends[edge_id]
        return d["from"], d["to"], d

    def edges(self) -> Iterator[tuple[str, str, str, dict[str, Any]]]:
        """(edge id, from id, to id, data) for every edge, in the order they were added."""
        return ((k, d["from"], d["to"], d) for k, d in self._edge_ends.items())

    # ---- derived indexes -----------------------------------------------------------------------------
    def watch(self, watcher: GraphWatcher) -> None:
        """Tell ``watcher`` about every later change (replay and undo included), until ``unwatch``."""
        if watcher not in self.watchers:
            self.watchers.append(watcher)

    def unwatch(self, watcher: GraphWatcher) -> None:
        """Stop telling ``watcher`` about changes."""
        if watcher in self.watchers:
            self.watchers.remove(watcher)

    # ---- changing ------------------------------------------------------------------------------------
    def add_node(
        self,
        node_type: str,
        properties: dict[str, Any],
        node_id: str | None = None,
        provenance: dict[str, Any] | None = None,
        *,
        adopt: bool = False,
    ) -> str:
        """Add a validated node; returns its id. ``adopt``: keep ``properties`` (handed over), no copy."""
        nodes = self.nodes
        if provenance is None:
            provenance = self._provenance()
        props = properties if adopt else dict(properties)
        if node_id is None:
            node_id = f"n{self._next_node}"
            self._next_node += 1
            while node_id in nodes:
                node_id = f"n{self._next_node}"
                self._next_node += 1
        data = {"type": node_type, "properties": props, "provenance": provenance}
        if node_id in nodes:  # (never, for a validated node) what networkx does: update its data
            self.graph.add_node(node_id, **data)
        else:
            insert_node(self.graph, node_id, data)
        keys = self.schema.identity_keys[node_type]
        if len(keys) == 1:  # the identity and the property index in one go (the common case)
            value = props[keys[0]]
            if value.__class__ is list:
                value = tuple(value)
            self._by_identity[(node_type, (value,))] = node_id
            bucket = self._by_prop.get((keys[0], value))
            if bucket is None:
                self._by_prop[(keys[0], value)] = {node_id: None}
            else:
                bucket[node_id] = None
        else:
            self._by_identity[(node_type, self.lookup.identity_of(node_type, props))] = node_id
            self.lookup.index(node_id, node_type, props)
        self._by_type[node_type][node_id] = None
        if self.near is not None:
            self.near.add(node_id, node_type, props)
        self._recent.append(node_id)
        if self.watchers:
            for w in self.watchers:
                w.node_added(node_id, node_type, props)
        self.journal.append(NodeAdded(node_id, node_type, props, provenance))
        return node_id

    def load(self, nodes: Sequence[dict[str, Any]], edges: Sequence[dict[str, Any]]) -> None:
        """Add stored elements to an empty state in one pass (a snapshot being loaded): the same graph and
        indexes as ``add_node``/``add_edge`` of each in order, in about half the time, and nothing journaled
        (what was stored is not a change). ``nodes`` are ``{"id", "type", "properties", "provenance"?}``,
        ``edges`` ``{"id", "type", "from", "to", "properties", "provenance"?}``, as a snapshot holds them:
        valid and with unique ids. Their dicts are taken over: each loses its ``id`` and becomes the element's
        data (a snapshot's dicts are the graph's, not copied)."""
        assert not self.nodes and not self._edge_ends, "load() fills an empty state"
        if self.near is not None or self.watchers:  # derived indexes must see each element: the slow way
            for n in nodes:
                self.add_node(n["type"], n["properties"], n["id"], n.get("provenance") or {})
            for e in edges:
                self.add_edge(
                    e["from"], e["type"], e["to"], e["properties"], e["id"], e.get("provenance") or {}
                )
            self.journal.clear()
            return
        graph, table, succ, pred = self.graph, self.nodes, self.succ, self.pred
        by_identity, by_type, recent = self._by_identity, self._by_type, self._recent
        identity_of, index = self.lookup.identity_of, self.lookup.index
        for n in nodes:
            node_id, node_type, props = n.pop("id"), n["type"], n["properties"]
            succ[node_id] = {}
            pred[node_id] = {}
            if not n.get("provenance"):
                n["provenance"] = {}
            table[node_id] = n
            by_identity[(node_type, identity_of(node_type, props))] = node_id
            index(node_id, node_type, props)
            by_type[node_type][node_id] = None
        ends, type_counts = self._edge_ends, self._edge_type_counts
        # the degree buckets: a node sits in the bucket of its final degree, in the order the nodes entered
        # their buckets (what add_edge's rebucketing leaves): when its degree last reached a new power of two
        entered: dict[str, int] = {}
        tick = 0
        for e in edges:
            edge_id, edge_type, source, target = e.pop("id"), e["type"], e["from"], e["to"]
            if not e.get("provenance"):
                e["provenance"] = {}
            out = succ[source]
            keyed = out.get(target)
            if keyed is None:  # a new neighbour: the degrees grow
                keyed = out[target] = {}
                pred[target][source] = keyed
                tick += 2
                d = len(out) + len(pred[source])
                if d >= HUB_DEGREE and d.bit_length() != (d - 1 - (source == target)).bit_length():
                    entered[source] = tick
                if source != target:
                    d = len(succ[target]) + len(pred[target])
                    if d >= HUB_DEGREE and not d & (d - 1):
                        entered[target] = tick + 1
            keyed[edge_id] = e
            ends[edge_id] = e
            type_counts[edge_type] = type_counts.get(edge_type, 0) + 1
        # what add_node/add_edge would have left in the ring of touched nodes: its last entries
        cap = recent.maxlen or 0
        recent.extend(reversed(list(islice(reversed(table), cap))))
        recent.extend(end for e in edges[-cap:] for end in (e["from"], e["to"]))
        self.hubs.enter(node_id for node_id, _ in sorted(entered.items(), key=lambda item: item[1]))
        if graph.__dict__.get("__networkx_cache__"):
            graph.__dict__["__networkx_cache__"].clear()

    def update_node(
        self,
        node_id: str,
        set_properties: dict[str, Any],
        remove: Iterable[str] = (),
        evidence: list[dict[str, Any]] | None = None,
        provenance: dict[str, Any] | None = None,
    ) -> None:
        """Set and remove properties of a node, keeping the identity index right; ``evidence`` (located by
        ``igg.act.evidence``) joins the node's provenance, the newest ``EVIDENCE_KEPT`` items kept
        (``igg.graph.grounding.kept_evidence``); ``provenance`` keys are recorded over the node's own (a
        document update's sources)."""
        data = self.nodes[node_id]
        t = data["type"]
        before = data["properties"]
        after = dict(before)
        after.update(set_properties)
        for k in remove:
            after.pop(k, None)
        before_prov = data["provenance"]
        after_prov = {**before_prov, "updated": self.iteration, **(provenance or {})}
        if evidence is not None:
            after_prov["evidence"] = kept_evidence(before_prov.get("evidence"), evidence)
        self._set_node(node_id, t, before, after, after_prov)
        self._recent.append(node_id)
        self.journal.append(
            NodeUpdated(
                id=node_id, before=before, after=after, before_prov=before_prov, after_prov=after_prov
            )
        )

    def _set_node(
        self,
        node_id: str,
        node_type: str,
        before: dict[str, Any],
        after: dict[str, Any],
        provenance: dict[str, Any],
    ) -> None:
        old_key = (node_type, self.lookup.identity_of(node_type, before))
        new_key = (node_type, self.lookup.identity_of(node_type, after))
        if old_key != new_key:
            del self._by_identity[old_key]
            self._by_identity[new_key] = node_id
            self.lookup.unindex(node_id, node_type, before)
            self.lookup.index(node_id, node_type, after)
            if self.near is not None:
                self.near.remove(node_id)
                self.near.add(node_id, node_type, after)
        data = self.nodes[node_id]
        data["properties"] = after
        data["provenance"] = provenance
        if self.watchers:
            for w in self.watchers:
                w.node_changed(node_id, node_type, before, after)

    def delete_node(self, node_id: str) -> list[str]:
        """Delete a node and its edges; returns the ids of the deleted edges."""
        edge_ids = [k for _, _, k in self.graph.in_edges(node_id, keys=True)]
        edge_ids += [k for _, v, k in self.graph.out_edges(node_id, keys=True) if v != node_id]
        for eid in edge_ids:
            self.delete_edge(eid)
        data = self.nodes[node_id]
        t = data["type"]
        del self._by_identity[(t, self.lookup.identity_of(t, data["properties"]))]
        del self._by_type[t][node_id]
        self.lookup.unindex(node_id, t, data["properties"])
        if self.near is not None:
            self.near.remove(node_id)
        self.protected.discard(node_id)
        self.graph.remove_node(node_id)
        if self.watchers:
            for w in self.watchers:
                w.node_removed(node_id, t, data["properties"])
        self.journal.append(
            NodeDeleted(id=node_id, type=t, properties=data["properties"], provenance=data["provenance"])
        )
        return edge_ids

    def add_edge(
        self,
        source: str,
        edge_type: str,
        target: str,
        properties: dict[str, Any],
        edge_id: str | None = None,
        provenance: dict[str, Any] | None = None,
        *,
        adopt: bool = False,
    ) -> str:
        """Add a validated edge; returns its id. ``adopt``: as ``add_node``'s."""
        if edge_id is None:
            edge_id = f"e{self._next_edge}"
            self._next_edge += 1
            while edge_id in self._edge_ends:
                edge_id = f"e{self._next_edge}"
                self._next_edge += 1
        if provenance is None:
            provenance = self._provenance()
        props = properties if adopt else dict(properties)
        data = {
            "type": edge_type,
            "from": source,
            "to": target,
            "properties": props,
            "provenance": provenance,
        }
        insert_edge(self.graph, source, target, edge_id, data)
        self._edge_ends[edge_id] = data
        self._edge_type_counts[edge_type] = self._edge_type_counts.get(edge_type, 0) + 1
        recent = self._recent
        recent.append(source)
        recent.append(target)
        # a node changes degree bucket only when its neighbour count reaches a power of two (a self-loop
        # adds two at once), and only hubs (HUB_DEGREE+) are bucketed: that keeps this index off the hot path
        succ, pred = self.succ, self.pred
        d = len(succ[source]) + len(pred[source])
        if d >= HUB_DEGREE and (not d & (d - 1) or source == target):
            self.hubs.rebucket(source)
        d = len(succ[target]) + len(pred[target])
        if d >= HUB_DEGREE and not d & (d - 1):
            self.hubs.rebucket(target)
        if self.watchers:
            for w in self.watchers:
                w.edge_added(edge_id, source, edge_type, target)
        self.journal.append(EdgeAdded(edge_id, edge_type, source, target, props, provenance))
        return edge_id

    def delete_edge(self, edge_id: str) -> None:
        """Delete one edge by id."""
        data = self._edge_ends.pop(edge_id)
        source, target = data["from"], data["to"]
        t = data["type"]
        self._edge_type_counts[t] -= 1
        self.graph.remove_edge(source, target, key=edge_id)
        succ, pred = self.succ, self.pred
        if len(succ[source]) + len(pred[source]) >= HUB_DEGREE - 2:
            self.hubs.rebucket(source)
        if len(succ[target]) + len(pred[target]) >= HUB_DEGREE - 2:
            self.hubs.rebucket(target)
        if self.watchers:
            for w in self.watchers:
                w.edge_removed(edge_id, source, t, target)
        self.journal.append(
            EdgeDeleted(
                id=edge_id,
                type=t,
                source=source,
                target=target,
                properties=data["properties"],
                provenance=data["provenance"],
            )
        )

    def stamp(self) -> dict[str, Any]:
        """The provenance of elements created now (``created``: the iteration, ``chunk``); do not mutate it.
        One dict per (iteration, chunk), shared by the elements created then: provenance dicts are never
        mutated in place (updates build a new one), and sharing spares an allocation per element."""
        return self._provenance()

    def _provenance(self) -> dict[str, Any]:
        # (see ``stamp``)
        key = (self.iteration, self.chunk)
        if self._prov_key != key:
            self._prov_key = key
            self._prov = (
                {"created": self.iteration}
                if self.chunk is None
                else {"created": self.iteration, "chunk": self.chunk}
            )
        return self._prov

    # ---- journal: replay and undo --------------------------------------------------------------------
    @property
    def id_counters(self) -> tuple[int, int]:
        """The next generated node and edge id numbers (``n<N>``, ``e<N>``): part of a checkpoint, because
        replaying mutations with explicit ids does not advance them."""
        return self._next_node, self._next_edge

    def restore_id_counters(self, next_node: int, next_edge: int) -> None:
        """Set the id counters from a checkpoint, so a resumed run names new elements as the original
        would."""
        self._next_node, self._next_edge = next_node, next_edge

    def take_journal(self) -> list[Mutation]:
        """The mutations since the last call; clears the journal."""
        out, self.journal = self.journal, []
        return out

    def apply_mutation(self, m: Mutation) -> None:
        """Apply a recorded mutation (replay; also how a merge applies), journaling it again."""
        match m:
            case NodeAdded():
                self.add_node(m.type, m.properties, m.id, m.provenance)
            case NodeDeleted():
                self.delete_node(m.id)
            case NodeUpdated():
                self._update_exact(m.id, m.before, m.after, m.before_prov, m.after_prov)
            case EdgeAdded():
                self.add_edge(m.source, m.type, m.target, m.properties, m.id, m.provenance)
            case EdgeDeleted():
                self.delete_edge(m.id)
            case NodesMerged():
                mark = len(self.journal)
                for e in m.edges:
                    self.delete_edge(e.id)
                    if e.kept:
                        new_u, new_v = e.moved_ends(m.id, m.into)
                        self.add_edge(new_u, e.type, new_v, e.properties, e.id, e.provenance)
                self._update_exact(m.into, m.before, m.after, m.before_prov, m.after_prov)
                self.delete_node(m.id)
                self._recent.append(m.into)
                del self.journal[mark:]
                self.journal.append(m)

    def revert_mutation(self, m: Mutation) -> None:
        """Apply the inverse of a recorded mutation (undo); revert a list in reverse order. The journal gets
        the inverse (a merge's inverse is journaled as the primitive mutations that restore it)."""
        match m:
            case NodeAdded():
                self.delete_node(m.id)
            case NodeDeleted():
                self.add_node(m.type, m.properties, m.id, m.provenance)
            case NodeUpdated():
                self._update_exact(m.id, m.after, m.before, m.after_prov, m.before_prov)
            case EdgeAdded():
                self.delete_edge(m.id)
            case EdgeDeleted():
                self.add_edge(m.source, m.type, m.target, m.properties, m.id, m.provenance)
            case NodesMerged():
                self.add_node(m.type, m.properties, m.id, m.provenance)
                self._update_exact(m.into, m.after, m.before, m.after_prov, m.before_prov)
                for e in reversed(m.edges):
                    if e.kept:
                        self.delete_edge(e.id)
                    self.add_edge(e.source, e.type, e.target, e.properties, e.id, e.provenance)

    def _update_exact(
        self,
        node_id: str,
        before: dict[str, Any],
        after: dict[str, Any],
        before_prov: dict[str, Any] | None,
        after_prov: dict[str, Any] | None,
    ) -> None:
        t = self.node_type(node_id)
        prov = after_prov if after_prov is not None else self.nodes[node_id]["provenance"]
        old_prov = before_prov if before_prov is not None else self.nodes[node_id]["provenance"]
        self._set_node(node_id, t, self.nodes[node_id]["properties"], dict(after), prov)
        self.journal.append(
            NodeUpdated(id=node_id, before=before, after=after, before_prov=old_prov, after_prov=prov)
        )

    # ---- documents -----------------------------------------------------------------------------------
    def to_document(
        self, schema: Schema | None = None, metadata: dict[str, Any] | None = None, provenance: bool = False
    ) -> GraphDocument:
        """The graph as an IGG document (``schema`` is the request's ``Schema`` model, if any)."""
        document = document_dict(self, metadata=metadata or {}, provenance=provenance)
        return GraphDocument.model_validate({**document, "schema": schema})
