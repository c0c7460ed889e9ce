"""The difference between two steps of a session, from its mutation journal: a delta export's plan.

``journal_delta`` nets out the journaled mutations of the steps since the last export (each node and edge:
its data before the first of them, after the last) and returns the same ``ScopeDiff`` that reading the scope
gives (``igg.export.neo4j.diff``), so both paths write through the same statements:

- a node that did not exist and does: created (merged); that existed and does not: deleted by its old
  identity (``DETACH DELETE``); whose properties changed: updated (merged, ``SET n = row``); whose identity
  changed: deleted under the old identity and created under the new one, with every relationship it has now
  merged again (the delete took them);
- an edge likewise, keyed by (source identity, type, target identity): a merge that moved an edge onto
  another node deletes it between the old ends and merges it between the new ones;
- an element changed and changed back nets out to nothing (unless provenance is exported: its
  ``igg_updated`` moved).

Nothing is read from the database. The result is pinned to the read-and-diff path by a property test.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from igg.export.neo4j.diff import ScopeChange, ScopeDiff, changed_properties, edge_text, node_text, same
from igg.export.plan import plan_selection
from igg.graph.journal import Mutation
from igg.graph.state import GraphState
from igg.models.common import freeze

Props = dict[str, Any]


def journal_delta(
    state: GraphState, mutations: Iterable[Mutation], *, provenance: str | None = None, detail: int = 0
) -> ScopeDiff:
    """What to write so that a scope holding the graph as it was before ``mutations`` holds ``state`` (the
    graph after them). Lists the first ``detail`` changes of each kind (for ``--plan``); counts all."""
    delta = _Delta(state, mutations, provenance=provenance, detail=detail)
    merge_nodes = delta.nodes()
    merge_edges = delta.edges()
    delta.reattach(merge_edges)
    diff = delta.diff
    plans = plan_selection(state, merge_nodes, list(merge_edges), provenance=provenance)
    diff.writes = [(plan, plan.rows) for plan in plans if plan.rows]
    for kind, total in (("nodes", state.node_count), ("edges", state.edge_count)):
        c = diff.counts[kind]
        c["unchanged"] = max(0, total - c["create"] - c["update"])
    return diff


class _Delta:
    """The net changes of one window of mutations (each element: its data before the first, after the last)
    and the ``ScopeDiff`` being filled from them, one method per kind of element."""

    def __init__(
        self, state: GraphState, mutations: Iterable[Mutation], *, provenance: str | None, detail: int
    ) -> None:
        self.state, self.provenance, self.detail = state, provenance, detail
        self.ident = ident = state.schema.identity_keys
        self.nodes_data = state.nodes
        self.first: dict[str, Props | None] = {}
        self.last: dict[str, Props | None] = {}
        self.types: dict[str, str] = {}
        self.e_first: dict[str, tuple[Props | None, tuple[str, str] | None, str]] = {}
        self.e_last: dict[str, Props | None] = {}
        self.reidentified: set[str] = set()
        """Nodes whose identity changed: deleted under the old one (``DETACH DELETE``), created under the
        new."""
        self.diff = ScopeDiff(identity_keys={t: tuple(k) for t, k in ident.items()})
        self.listed = {"create": 0, "update": 0, "delete": 0}
        for m in mutations:
            for e in m.effects():
                if e.kind == "node":
                    if e.element not in self.first:
                        self.first[e.element] = e.before
                    self.last[e.element] = e.after
                    if e.type is not None:
                        self.types[e.element] = e.type
                else:
                    if e.element not in self.e_first:
                        self.e_first[e.element] = (e.before, e.ends_before, e.type or "")
                    self.e_last[e.element] = e.after

    def old_identity(self, n: str) -> tuple[str, tuple[Any, ...]] | None:
        """A node's identity as the scope holds it (before the window)."""
        ident, nodes = self.ident, self.nodes_data
        if n in self.first:
            before = self.first[n]
            if before is None:
                return None
            t = self.types.get(n) or nodes[n]["type"]
            return t, tuple(freeze(before.get(k)) for k in ident[t])
        d = nodes[n]
        return d["type"], tuple(freeze(d["properties"].get(k)) for k in ident[d["type"]])

    def new_identity(self, n: str) -> tuple[str, tuple[Any, ...]]:
        """A node's identity in the graph now."""
        d = self.nodes_data[n]
        return d["type"], tuple(freeze(d["properties"].get(k)) for k in self.ident[d["type"]])

    def note(self, action: str, element: str, what: Any, properties: Any = None) -> None:
        """Count a change; list it (its text built only then) while fewer than ``detail`` are listed."""
        self.diff.counts[element + "s"][action] += 1
        if self.listed[action] < self.detail:
            self.listed[action] += 1
            self.diff.changes.append(
                ScopeChange(
                    action=action,  # type: ignore[arg-type]
                    element=element,  # type: ignore[arg-type]
                    what=what(),
                    properties=properties() if properties else {},
                )
            )

    def nodes(self) -> list[str]:
        """Note each node's change (deletes into the diff); returns the nodes to merge."""
        diff, ident, nodes, note = self.diff, self.ident, self.nodes_data, self.note
        merge_nodes: list[str] = []
        for n, before in self.first.items():
            after = self.last[n]
            if before is None and after is None:
                continue
            if after is None:
                key = self.old_identity(n)
                assert key is not None
                diff.node_deletes.setdefault(key[0], []).append(list(key[1]))
                note("delete", "node", lambda key=key: node_text(key, ident[key[0]]))
                continue
            if before is None:
                merge_nodes.append(n)
                note("create", "node", lambda n=n: node_text(self.new_identity(n), ident[nodes[n]["type"]]))
                continue
            old, new = self.old_identity(n), self.new_identity(n)
            if old != new:
                assert old is not None
                diff.node_deletes.setdefault(old[0], []).append(list(old[1]))
                self.reidentified.add(n)
                note("delete", "node", lambda old=old: node_text(old, ident[old[0]]))
                note("create", "node", lambda new=new: node_text(new, ident[new[0]]))
            elif same(before, after) and self.provenance is None:
                continue
            else:
                note(
                    "update",
                    "node",
                    lambda new=new: node_text(new, ident[new[0]]),
                    lambda before=before, n=n: changed_properties(before, nodes[n]["properties"]),
                )
            merge_nodes.append(n)
        return merge_nodes

    def edges(self) -> dict[str, None]:
        """Note each edge's change (deletes into the diff); returns the edges to merge (run ``nodes``
        first)."""
        diff, ident, note = self.diff, self.ident, self.note
        merge_edges: dict[str, None] = {}
        for eid, (before, ends, etype) in self.e_first.items():
            after = self.e_last[eid]
            if before is None and after is None:
                continue
            old_key = None
            if before is not None and ends is not None:
                a, b = self.old_identity(ends[0]), self.old_identity(ends[1])
                if a is not None and b is not None:
                    old_key = (a, etype, b)
            if after is None:
                if old_key is not None:
                    _delete_edge(diff, old_key, ident)
                    note("delete", "edge", lambda k=old_key: edge_text(k, ident))
                continue
            u, v, _ = self.state.edge_ends(eid)
            new_key = (self.new_identity(u), etype, self.new_identity(v))
            if old_key is None:
                note("create", "edge", lambda k=new_key: edge_text(k, ident))
            elif old_key != new_key:
                if ends is not None and not (
                    {ends[0], ends[1]} & self.reidentified
                ):  # else DETACH DELETE takes it
                    _delete_edge(diff, old_key, ident)
                note("delete", "edge", lambda k=old_key: edge_text(k, ident))
                note("create", "edge", lambda k=new_key: edge_text(k, ident))
            elif same(before, after) and self.provenance is None:
                continue
            else:
                note("update", "edge", lambda k=new_key: edge_text(k, ident))
            merge_edges[eid] = None
        return merge_edges

    def reattach(self, merge_edges: dict[str, None]) -> None:
        """The relationships of the re-identified nodes, which their old node's DETACH DELETE took: merged
        again (added to ``merge_edges``)."""
        state, ident = self.state, self.ident
        for n in self.reidentified:
            for eid in _incident(state, n):
                if eid not in merge_edges:
                    merge_edges[eid] = None
                    u, v, d = state.edge_ends(eid)
                    ekey = (self.new_identity(u), d["type"], self.new_identity(v))
                    self.note("update", "edge", lambda k=ekey: edge_text(k, ident))


def _delete_edge(diff: ScopeDiff, key: tuple[Any, ...], ident: dict[str, tuple[str, ...]]) -> None:
    (tu, s), et, (tv, t) = key
    diff.edge_deletes.setdefault((et, tu, ident[tu], tv, ident[tv]), []).append([*s, *t])


def _incident(state: GraphState, n: str) -> list[str]:
    """Ids of every edge from or to node ``n``."""
    out = [eid for kd in state.succ.get(n, {}).values() for eid in kd]
    out += [eid for kd in state.pred.get(n, {}).values() for eid in kd]
    return out
