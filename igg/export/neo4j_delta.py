"""The difference between two steps of a session, from its mutation journal: a delta export's plan.

``journal_delta`` nets out the journaled mutations of the steps since the last export (each node and edge:
its data before the first of them, after the last) and returns the same ``ScopeDiff`` that reading the scope
gives (``igg.export.neo4j_diff``), so both paths write through the same statements:

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

from igg.export.neo4j_diff import ScopeChange, ScopeDiff, changed_properties, edge_text, node_text, same
from igg.export.plan import plan_selection
from igg.graph.journal import Mutation
from igg.graph.state import GraphState
from igg.models.common import freeze

Props = dict[str, Any]


def journal_delta(state: GraphState, mutations: Iterable[Mutation], *, provenance: str | None = None,
                  detail: int = 0) -> ScopeDiff:
    """What to write so that a scope holding the graph as it was before ``mutations`` holds ``state`` (the
    graph after them). Lists the first ``detail`` changes of each kind (for ``--plan``); counts all."""
    ident = state.schema.identity_keys
    first: dict[str, Props | None] = {}
    last: dict[str, Props | None] = {}
    types: dict[str, str] = {}
    e_first: dict[str, tuple[Props | None, tuple[str, str] | None, str]] = {}
    e_last: dict[str, Props | None] = {}
    for m in mutations:
        for e in m.effects():
            if e.kind == "node":
                if e.element not in first:
                    first[e.element] = e.before
                last[e.element] = e.after
                if e.type is not None:
                    types[e.element] = e.type
            else:
                if e.element not in e_first:
                    e_first[e.element] = (e.before, e.ends_before, e.type or "")
                e_last[e.element] = e.after
    nodes = state.nodes

    def old_identity(n: str) -> tuple[str, tuple[Any, ...]] | None:
        """A node's identity as the scope holds it (before the window)."""
        if n in first:
            before = first[n]
            if before is None:
                return None
            t = types.get(n) or nodes[n]["type"]
            return t, tuple(freeze(before.get(k)) for k in ident[t])
        d = nodes[n]
        return d["type"], tuple(freeze(d["properties"].get(k)) for k in ident[d["type"]])

    def new_identity(n: str) -> tuple[str, tuple[Any, ...]]:
        d = nodes[n]
        return d["type"], tuple(freeze(d["properties"].get(k)) for k in ident[d["type"]])

    diff = ScopeDiff(identity_keys={t: tuple(k) for t, k in ident.items()})
    listed = {"create": 0, "update": 0, "delete": 0}

    def note(action: str, element: str, what: Any, properties: Any = None) -> None:
        diff.counts[element + "s"][action] += 1
        if listed[action] < detail:
            listed[action] += 1
            diff.changes.append(ScopeChange(action=action, element=element, what=what(),  # type: ignore[arg-type]
                                       properties=properties() if properties else {}))

    merge_nodes: list[str] = []
    reidentified: set[str] = set()
    for n, before in first.items():
        after = last[n]
        if before is None and after is None:
            continue
        if after is None:
            key = old_identity(n)
            assert key is not None
            diff.node_deletes.setdefault(key[0], []).append(list(key[1]))
            note("delete", "node", lambda key=key: node_text(key, ident[key[0]]))
            continue
        if before is None:
            merge_nodes.append(n)
            note("create", "node", lambda n=n: node_text(new_identity(n), ident[nodes[n]["type"]]))
            continue
        old, new = old_identity(n), new_identity(n)
        if old != new:
            assert old is not None
            diff.node_deletes.setdefault(old[0], []).append(list(old[1]))
            reidentified.add(n)
            note("delete", "node", lambda old=old: node_text(old, ident[old[0]]))
            note("create", "node", lambda new=new: node_text(new, ident[new[0]]))
        elif same(before, after) and provenance is None:
            continue
        else:
            note("update", "node", lambda new=new: node_text(new, ident[new[0]]),
                 lambda before=before, n=n: changed_properties(before, nodes[n]["properties"]))
        merge_nodes.append(n)

    merge_edges: dict[str, None] = {}
    for eid, (before, ends, etype) in e_first.items():
        after = e_last[eid]
        if before is None and after is None:
            continue
        old_key = None
        if before is not None and ends is not None:
            a, b = old_identity(ends[0]), old_identity(ends[1])
            if a is not None and b is not None:
                old_key = (a, etype, b)
        if after is None:
            if old_key is not None:
                _delete_edge(diff, old_key, ident)
                note("delete", "edge", lambda k=old_key: edge_text(k, ident))
            continue
        u, v, _ = state.edge_ends(eid)
        new_key = (new_identity(u), etype, new_identity(v))
        if old_key is None:
            note("create", "edge", lambda k=new_key: edge_text(k, ident))
        elif old_key != new_key:
            if ends is not None and not ({ends[0], ends[1]} & reidentified):  # else DETACH DELETE takes it
                _delete_edge(diff, old_key, ident)
            note("delete", "edge", lambda k=old_key: edge_text(k, ident))
            note("create", "edge", lambda k=new_key: edge_text(k, ident))
        elif same(before, after) and provenance is None:
            continue
        else:
            note("update", "edge", lambda k=new_key: edge_text(k, ident))
        merge_edges[eid] = None
    for n in reidentified:  # the old node's DETACH DELETE took its relationships: merge them again
        for eid in _incident(state, n):
            if eid not in merge_edges:
                merge_edges[eid] = None
                u, v, d = state.edge_ends(eid)
                ekey = (new_identity(u), d["type"], new_identity(v))
                note("update", "edge", lambda k=ekey: edge_text(k, ident))
    plans = plan_selection(state, merge_nodes, list(merge_edges), provenance=provenance)
    diff.writes = [(plan, plan.rows) for plan in plans if plan.rows]
    for kind, total in (("nodes", state.node_count), ("edges", state.edge_count)):
        c = diff.counts[kind]
        c["unchanged"] = max(0, total - c["create"] - c["update"])
    return diff


def _delete_edge(diff: ScopeDiff, key: tuple[Any, ...], ident: dict[str, tuple[str, ...]]) -> None:
    (tu, s), et, (tv, t) = key
    diff.edge_deletes.setdefault((et, tu, ident[tu], tv, ident[tv]), []).append([*s, *t])


def _incident(state: GraphState, n: str) -> list[str]:
    """Ids of every edge from or to node ``n``."""
    out = [eid for kd in state.succ.get(n, {}).values() for eid in kd]
    out += [eid for kd in state.pred.get(n, {}).values() for eid in kd]
    return out
