"""The difference between a graph and what its export scope holds in the database: the export plan.

An export makes its scope mirror the graph: nodes and relationships the graph has but the scope lacks are
created, those whose properties differ are updated, and those the scope holds but the graph no longer has
are deleted. ``read_scope`` reads the scope once (two queries) and ``diff_scope`` compares it with the
export's ``Plan`` rows: the export then writes only what changed (a re-export of an unchanged graph writes
nothing), and ``igg export --plan`` prints the same diff without writing.

Elements the export cannot address by identity (a label outside the graph's schema, a missing identity
key, a second node with the same identity left by an earlier writer) are deleted by element id.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal

from igg.export import cypher
from igg.export.plan import Plan
from igg.graph.state import GraphState
from igg.models.common import freeze, is_identifier

Action = Literal["create", "update", "delete"]
NodeKey = tuple[str, tuple[Any, ...]]
EdgeKey = tuple[NodeKey, str, NodeKey]


@dataclass(kw_only=True)
class ScopeChange:
    """One element the export would create, update or delete in its scope (a session's net change of an
    element between two points is ``igg.store.history.Change``)."""

    action: Action
    element: Literal["node", "edge"]
    what: str
    """``Class {name: "A"}`` or ``Class {name: "A"} -[CALLS]-> Method {name: "b"}``."""
    properties: dict[str, list[Any]] = field(default_factory=dict)
    """Updates: property -> [before, after] (None where absent)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        out: dict[str, Any] = {"action": self.action, "element": self.element, "what": self.what}
        if self.properties:
            out["properties"] = self.properties
        return out


@dataclass(kw_only=True)
class ScopeContents:
    """What one scope holds: nodes by identity, relationships by (source, type, target), and the ids of
    elements that cannot be addressed by identity."""

    nodes: dict[NodeKey, dict[str, Any]] = field(default_factory=dict)
    edges: dict[EdgeKey, dict[str, Any]] = field(default_factory=dict)
    stray_nodes: list[tuple[str, str]] = field(default_factory=list)
    """(element id, description) of nodes outside the graph's schema or identity."""
    stray_edges: list[tuple[str, str]] = field(default_factory=list)


@dataclass(kw_only=True)
class ScopeDiff:
    """What an export would change in its scope."""

    writes: list[tuple[Plan, list[Any]]] = field(default_factory=list)
    """Per plan, the rows to merge (created or updated)."""
    node_deletes: dict[str, list[list[Any]]] = field(default_factory=dict)
    """Node type -> identity values of nodes to delete."""
    edge_deletes: dict[tuple[Any, ...], list[list[Any]]] = field(default_factory=dict)
    """(edge type, source type, source keys, target type, target keys) -> [source ids..., target ids...]."""
    stray_node_ids: list[str] = field(default_factory=list)
    stray_edge_ids: list[str] = field(default_factory=list)
    counts: dict[str, dict[str, int]] = field(
        default_factory=lambda: {
            kind: {"create": 0, "update": 0, "delete": 0, "unchanged": 0} for kind in ("nodes", "edges")
        }
    )
    changes: list[ScopeChange] = field(default_factory=list)
    """The first ``detail`` changes of each action (counts cover all)."""

    def delete_statements(self, id_function: str = "elementId") -> list[tuple[str, dict[str, Any]]]:
        """Queries (with ``rows``/``ids``) that delete the stale elements: relationships first."""
        out: list[tuple[str, dict[str, Any]]] = []
        for edge, rows in self.edge_deletes.items():
            out.append((cypher.delete_edges(*edge), {"rows": rows}))
        if self.stray_edge_ids:
            out.append((cypher.delete_by_id("edges", id_function), {"ids": self.stray_edge_ids}))
        for label, idents in self.node_deletes.items():
            out.append((cypher.delete_nodes(label, self.identity_keys[label]), {"rows": idents}))
        if self.stray_node_ids:
            out.append((cypher.delete_by_id("nodes", id_function), {"ids": self.stray_node_ids}))
        return out

    identity_keys: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Node type -> its identity keys (to address the nodes to delete)."""

    def to_dict(self) -> dict[str, Any]:
        """Counts and the listed changes, as JSON."""
        return {
            "counts": self.counts,
            "changes": [c.to_dict() for c in self.changes],
            "listed": len(self.changes),
        }


def read_scope(
    run: Callable[..., list[dict[str, Any]]], state: GraphState, scope: str, id_function: str = "elementId"
) -> ScopeContents:
    """Read every node and relationship of ``scope`` (``run(query, **params)`` returns records as dicts)."""
    ident = state.schema.identity_keys
    out = ScopeContents()
    by_id: dict[Any, NodeKey] = {}
    for rec in run(cypher.scope_nodes(id_function), scope=scope):
        props = dict(rec["props"])
        props.pop(cypher.SCOPE_KEY, None)
        labels = rec["labels"]
        keys = ident.get(labels[0]) if len(labels) == 1 else None
        if keys is None or any(k not in props for k in keys):
            out.stray_nodes.append((rec["id"], f"{':'.join(labels) or '(no label)'} {_show(props)}"))
            continue
        key = (labels[0], tuple(freeze(props[k]) for k in keys))
        if key in out.nodes:  # a duplicate left by an earlier writer without a constraint
            out.stray_nodes.append((rec["id"], f"duplicate {node_text(key, keys)}"))
            continue
        out.nodes[key] = props
        by_id[rec["id"]] = key
    for rec in run(cypher.scope_edges(id_function), scope=scope):
        a, b = by_id.get(rec["a"]), by_id.get(rec["b"])
        props = dict(rec["props"])
        props.pop(cypher.SCOPE_KEY, None)
        if a is None or b is None or not is_identifier(rec["type"]) or (a, rec["type"], b) in out.edges:
            out.stray_edges.append(
                (rec["id"], f"-[{rec['type']}]-> between nodes outside the graph's identity")
            )
            continue
        out.edges[(a, rec["type"], b)] = props
    return out


def diff_scope(plans: list[Plan], state: GraphState, held: ScopeContents, detail: int = 50) -> ScopeDiff:
    """Compare the rows the export would write with what the scope holds."""
    ident = state.schema.identity_keys
    diff = ScopeDiff(identity_keys={t: tuple(k) for t, k in ident.items()})
    listed = {"create": 0, "update": 0, "delete": 0}

    def note(
        action: Action,
        element: Literal["node", "edge"],
        what: Callable[[], str],
        properties: Callable[[], dict[str, list[Any]]] | None = None,
    ) -> None:
        diff.counts[element + "s"][action] += 1
        if listed[action] < detail:
            listed[action] += 1
            diff.changes.append(
                ScopeChange(
                    action=action, element=element, what=what(), properties=properties() if properties else {}
                )
            )

    seen_nodes: set[NodeKey] = set()
    seen_edges: set[EdgeKey] = set()
    for plan in plans:
        element: Literal["node", "edge"] = "edge" if plan.edge else "node"
        read = _edge_row(plan, ident) if plan.edge else _node_row(plan)
        seen: set[Any] = seen_edges if plan.edge else seen_nodes
        held_rows: Mapping[Any, dict[str, Any]] = held.edges if plan.edge else held.nodes
        rows: list[Any] = []
        for row in plan.rows:
            key, props, describe = read(row)
            seen.add(key)
            before = held_rows.get(key)
            if before is None:
                note("create", element, describe)
            elif not same(before, props):
                note("update", element, describe, partial(changed_properties, before, props))
            else:
                diff.counts[element + "s"]["unchanged"] += 1
                continue
            rows.append(row)
        if rows:
            diff.writes.append((plan, rows))
    for nkey in held.nodes.keys() - seen_nodes:
        diff.node_deletes.setdefault(nkey[0], []).append(list(nkey[1]))
        note("delete", "node", partial(node_text, nkey, ident[nkey[0]]))
    for ekey in held.edges.keys() - seen_edges:
        (tu, s), et, (tv, t) = ekey
        note("delete", "edge", partial(edge_text, ekey, ident))
        if ekey[0] in seen_nodes and ekey[2] in seen_nodes:  # else it goes with its endpoint (DETACH DELETE)
            diff.edge_deletes.setdefault((et, tu, ident[tu], tv, ident[tv]), []).append([*s, *t])
    for eid, text in held.stray_edges:
        diff.stray_edge_ids.append(eid)
        note("delete", "edge", partial(str, text))
    for nid, text in held.stray_nodes:
        diff.stray_node_ids.append(nid)
        note("delete", "node", partial(str, text))
    return diff


RowReader = Callable[[Any], tuple[Any, dict[str, Any], Callable[[], str]]]


def _node_row(plan: Plan) -> RowReader:
    """A node row's key, the properties to compare and its description."""
    keys = plan.keys

    def read(row: Any) -> tuple[Any, dict[str, Any], Callable[[], str]]:
        key: NodeKey = (plan.label, tuple(freeze(row[k]) for k in keys))
        return key, row, partial(node_text, key, keys)

    return read


def _edge_row(plan: Plan, ident: Mapping[str, Any]) -> RowReader:
    """An edge row's key (both endpoints' keys and the type), its properties and its description."""
    assert plan.edge is not None
    et, tu, skeys, tv, _ = plan.edge
    ns = len(skeys)

    def read(row: Any) -> tuple[Any, dict[str, Any], Callable[[], str]]:
        key: EdgeKey = (
            (tu, tuple(freeze(v) for v in row[:ns])),
            et,
            (tv, tuple(freeze(v) for v in row[ns:-1])),
        )
        return key, row[-1], partial(edge_text, key, ident)

    return read


def same(a: Any, b: Any) -> bool:
    """Equal values of the same types (``True`` is not ``1``; ``1`` is not ``1.0``)."""
    cls = a.__class__
    if cls is not b.__class__:
        return False
    if cls is list:
        return len(a) == len(b) and all(map(same, a, b))
    if cls is dict:
        return bool(a.keys() == b.keys()) and all(same(v, b[k]) for k, v in a.items())
    return bool(a == b)


def changed_properties(before: dict[str, Any], after: dict[str, Any]) -> dict[str, list[Any]]:
    """property -> [before, after] for each property that differs (None where absent)."""
    return {
        k: [before.get(k), after.get(k)]
        for k in sorted(before.keys() | after.keys())
        if not (k in before and k in after and same(before[k], after[k]))
    }


def _show(props: dict[str, Any], limit: int = 3) -> str:
    return "{" + ", ".join(f"{k}: {short(v)}" for k, v in list(props.items())[:limit]) + "}"


def short(value: Any) -> str:
    """A value as JSON, long strings cut inside their quotes."""
    import json

    if isinstance(value, str) and len(value) > 40:
        return json.dumps(value[:37] + "...", ensure_ascii=False)
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 48 else text[:45] + "..."


def node_text(key: NodeKey, keys: tuple[str, ...] | list[str]) -> str:
    """``Class {name: "A"}``: a node by its type and identity."""
    label, values = key
    return (
        f"{label}"
        f" {_show(dict(zip(keys, [list(v) if isinstance(v, tuple) else v for v in values], strict=True)))}"
    )


def edge_text(key: EdgeKey, ident: Any) -> str:
    """``Class {name: "A"} -[CALLS]-> Method {name: "b"}``."""
    a, et, b = key
    return f"{node_text(a, ident[a[0]])} -[{et}]-> {node_text(b, ident[b[0]])}"
