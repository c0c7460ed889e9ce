"""What an export writes, planned before any connection: one ``Plan`` per node type and per (source type,
edge type, target type), each with its Cypher (from ``igg.export.cypher``, so every name is checked) and its
rows. A node row is the node's property map; an edge row is ``[source identity..., target identity...,
properties]`` (lists keep parameters small). Used by the Neo4j export and the Cypher script.

``check_values`` refuses, before anything is written, the values a Bolt driver cannot carry: integers beyond
64 bits (the driver raises ``OverflowError`` half-way through an export) and NaN (never equal to itself, so a
re-export could never match it).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

from igg.errors import ExportError
from igg.export import cypher
from igg.graph.state import GraphState

INT64 = (-(2**63), 2**63 - 1)
"""The integers Bolt can carry (PackStream INT_64)."""

PROVENANCE_KEYS = (
    "igg_session",
    "igg_created",
    "igg_updated",
    "igg_chunk",
    "igg_evidence",
    "igg_evidence_at",
    "igg_grounded",
)
"""Properties ``provenance`` adds to every node and relationship: the session id, the iteration that created
the element, the last iteration that updated it, and the context chunk it came from (when known); for an
element with evidence (``igg.act.evidence``), its quotes (``igg_evidence``, a list of strings), where each was
found (``igg_evidence_at``: ``chunk 2 [41:80] src/a.py:2:5``, or ``not found``) and whether any was
(``igg_grounded``)."""


@dataclass
class Plan:
    """Queries and rows for one node type or one (source type, edge type, target type), built before
    connecting. A node row is the node's property map; an edge row is ``[source identity..., target
    identity..., properties]``."""

    query: str
    rows: list[Any]
    scan_query: str
    """The same merge without index lookups, for FalkorDB rows whose identity holds U+0001."""
    label: str = ""
    """Node plans: the node type."""
    keys: tuple[str, ...] = ()
    """Node plans: the identity keys."""
    ends: tuple[int, int] = (0, 0)
    """Edge plans: how many identity values the source and the target have."""
    edge: tuple[Any, ...] = ()
    """Edge plans: (edge type, source type, source keys, target type, target keys)."""

    def props(self, row: Any) -> dict[str, Any]:
        """The property map of a row."""
        props: dict[str, Any] = row[-1] if self.edge else row
        return props

    def identity(self, row: Any) -> dict[str, list[Any]]:
        """The identity parameters of a row: ``{"k": [...]}`` or ``{"s": [...], "t": [...]}``."""
        if not self.edge:
            return {"k": [row[k] for k in self.keys]}
        ns, nt = self.ends
        return {"s": list(row[:ns]), "t": list(row[ns : ns + nt])}

    def with_props(self, row: Any, props: dict[str, Any]) -> Any:
        """The row with another property map."""
        return [*row[:-1], props] if self.edge else props

    def append(self, key: str, first: bool, scan: bool = False) -> str:
        """A query that sets (``first``) or extends one property of one element, piece by piece."""
        if self.edge:
            et, source, skeys, target, tkeys = self.edge
            return cypher.append_edge_value(et, source, skeys, target, tkeys, key, first, scan)
        return cypher.append_node_value(self.label, self.keys, key, first, scan)

    def describe(self) -> str:
        """``Class`` or ``(:Class)-[:CALLS]->(:Method)``."""
        if not self.edge:
            return self.label
        return f"(:{self.edge[1]})-[:{self.edge[0]}]->(:{self.edge[3]})"


def plan_export(state: GraphState, *, provenance: str | None = None, check: bool = False) -> list[Plan]:
    """Every batch query with its rows; raises ``ExportError`` for any unsafe label, type or key.

    ``provenance`` (a session id) adds ``PROVENANCE_KEYS`` to every row; ``check`` runs ``check_values``.
    """
    if check:
        check_values(state)
    schema = state.schema
    ident = schema.identity_keys
    reserved = (cypher.SCOPE_KEY, *PROVENANCE_KEYS) if provenance is not None else (cypher.SCOPE_KEY,)
    nodes = state.nodes
    plans = _node_plans(
        state,
        {label: list(state.nodes_of_type(label)) for label in schema.node_type_list},
        reserved,
        provenance,
    )
    groups: dict[tuple[str, str, str], list[list[Any]]] = {}
    raw: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for u, nbrs in state.succ.items():
        su = nodes[u]
        tu, pu = su["type"], su["properties"]
        source = [pu[k] for k in ident[tu]]
        for v, kd in nbrs.items():
            sv = nodes[v]
            tv, pv = sv["type"], sv["properties"]
            target = [pv[k] for k in ident[tv]]
            for d in kd.values():
                props = d["properties"]
                group = (tu, d["type"], tv)
                if provenance is not None:
                    raw.setdefault(group, []).append(props)
                    props = {**props, **_stamp(provenance, d["provenance"])}
                groups.setdefault(group, []).append([*source, *target, props])
    for (tu, et, tv), rows in groups.items():
        _check_keys(raw.get((tu, et, tv)) or [r[-1] for r in rows], f"edge type {et}", reserved)
        edge = (et, tu, ident[tu], tv, ident[tv])
        plans.append(
            Plan(
                cypher.merge_edges(*edge),
                rows,
                cypher.merge_edges_scan(*edge),
                ends=(len(ident[tu]), len(ident[tv])),
                edge=edge,
            )
        )
    return plans


def plan_selection(
    state: GraphState, node_ids: Collection[str], edge_ids: Collection[str], *, provenance: str | None = None
) -> list[Plan]:
    """``plan_export`` of some nodes and edges only (a delta export's creates and updates), checked the same
    way (names, reserved keys, values); rows are exactly those ``plan_export`` makes for these elements."""
    check_values(state, nodes_only=node_ids, edges_only=edge_ids)
    schema = state.schema
    ident = schema.identity_keys
    reserved = (cypher.SCOPE_KEY, *PROVENANCE_KEYS) if provenance is not None else (cypher.SCOPE_KEY,)
    nodes = state.nodes
    by_type: dict[str, list[str]] = {}
    for n in node_ids:
        by_type.setdefault(nodes[n]["type"], []).append(n)
    plans = _node_plans(state, by_type, reserved, provenance)
    groups: dict[tuple[str, str, str], list[list[Any]]] = {}
    raw: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for eid in edge_ids:
        u, v, d = state.edge_ends(eid)
        su, sv = nodes[u], nodes[v]
        tu, tv = su["type"], sv["type"]
        props = d["properties"]
        group = (tu, d["type"], tv)
        raw.setdefault(group, []).append(props)
        if provenance is not None:
            props = {**props, **_stamp(provenance, d["provenance"])}
        groups.setdefault(group, []).append(
            [*(su["properties"][k] for k in ident[tu]), *(sv["properties"][k] for k in ident[tv]), props]
        )
    for (tu, et, tv), rows in groups.items():
        _check_keys(raw[(tu, et, tv)], f"edge type {et}", reserved)
        edge = (et, tu, ident[tu], tv, ident[tv])
        plans.append(
            Plan(
                cypher.merge_edges(*edge),
                rows,
                cypher.merge_edges_scan(*edge),
                ends=(len(ident[tu]), len(ident[tv])),
                edge=edge,
            )
        )
    return plans


def _node_plans(
    state: GraphState, ids_by_type: dict[str, list[str]], reserved: tuple[str, ...], provenance: str | None
) -> list[Plan]:
    """One ``MERGE`` plan per node type (in the schema's order) for the nodes ``ids_by_type`` names, checked
    the same way whether a whole graph or a delta's nodes are planned."""
    nodes, ident = state.nodes, state.schema.identity_keys
    plans: list[Plan] = []
    for label in state.schema.node_type_list:
        ids = ids_by_type.get(label)
        if not ids:
            continue
        keys = ident[label]
        rows = [nodes[n]["properties"] for n in ids]
        _check_keys(rows, f"node type {label}", reserved)
        if provenance is not None:
            rows = [{**nodes[n]["properties"], **_stamp(provenance, nodes[n]["provenance"])} for n in ids]
        plans.append(
            Plan(
                cypher.merge_nodes(label, keys),
                rows,
                cypher.merge_nodes_scan(label, keys),
                label=label,
                keys=keys,
            )
        )
    return plans


def _stamp(session: str, prov: dict[str, Any] | None) -> dict[str, Any]:
    prov = prov or {}
    out: dict[str, Any] = {"igg_session": session}
    for key, prop in (("created", "igg_created"), ("updated", "igg_updated"), ("chunk", "igg_chunk")):
        value = prov.get(key)
        if value is not None:
            out[prop] = value
    evidence = prov.get("evidence")
    if evidence:
        out["igg_evidence"] = [str(e.get("quote", "")) for e in evidence]
        out["igg_evidence_at"] = [evidence_at(e) for e in evidence]
        out["igg_grounded"] = any(e.get("match") != "none" for e in evidence)
    return out


def evidence_at(item: dict[str, Any]) -> str:
    """Where an evidence item was found, as one string: ``chunk 2 [41:80] src/a.py:2:5`` (or ``not
    found``)."""
    if item.get("match") == "none":
        return "not found"
    where = f"chunk {item.get('chunk')} [{item.get('start')}:{item.get('end')}]"
    if item.get("file"):
        return f"{where} {item['file']}:{item.get('line')}:{item.get('column')}"
    return f"{where} line {item.get('line')}:{item.get('column')}"


def _check_keys(prop_maps: list[dict[str, Any]], where: str, reserved: tuple[str, ...]) -> None:
    seen: set[str] = set()
    for props in prop_maps:
        seen.update(props)
    for key in sorted(seen):
        cypher.name(key, f"property key of {where}")
        if key == cypher.SCOPE_KEY:
            raise ExportError(f"property key {key!r} of {where} is reserved for the export scope")
        if key in reserved:
            raise ExportError(
                f"property key {key!r} of {where} is reserved for provenance (--provenance); "
                "rename it or export without provenance"
            )


def check_values(
    state: GraphState,
    limit: int = 5,
    *,
    nodes_only: Collection[str] | None = None,
    edges_only: Collection[str] | None = None,
) -> None:
    """Raise ``ExportError`` naming each element, property and value a Bolt driver cannot carry (up to
    ``limit`` of them, then how many more): integers beyond 64 bits and NaN. ``nodes_only``/``edges_only``
    (both or neither) check only those node and edge ids."""
    problems: list[str] = []
    count = 0
    lo, hi = INT64
    for props, where in _property_sets(state, nodes_only, edges_only):
        for key, value in props.items():
            cls = value.__class__
            if (
                cls is str
                or cls is bool
                or (cls is int and lo <= value <= hi)
                or (cls is float and value == value)
            ):
                continue
            reason = _unsendable(value)
            if reason is not None:
                count += 1
                if len(problems) < limit:
                    shown = str(value) if len(str(value)) <= 60 else str(value)[:57] + "..."
                    problems.append(f"{where()} property {key!r} = {shown}: {reason}")
    if problems:
        more = f"; and {count - len(problems)} more" if count > len(problems) else ""
        raise ExportError(
            "cannot export to a Bolt server, nothing was written: " + "; ".join(problems) + more
        )


def _unsendable(value: Any) -> str | None:
    """Why a Bolt driver cannot carry ``value`` (an integer beyond 64 bits, NaN, a list holding one), or
    None."""
    lo, hi = INT64
    cls = value.__class__
    if cls is int:
        return None if lo <= value <= hi else "an integer beyond 64 bits (store it as a string)"
    if cls is float:
        return "NaN (not a number)" if value != value else None
    if cls is list:
        return next((r for r in map(_unsendable, value) if r is not None), None)
    return None


def _property_sets(
    state: GraphState, nodes_only: Collection[str] | None, edges_only: Collection[str] | None
) -> Iterator[tuple[dict[str, Any], Callable[[], str]]]:
    """The properties of each node and edge ``check_values`` checks, each with what names its element."""
    nodes = state.nodes
    ident = state.schema.identity_keys

    def node_name(n: str) -> str:
        d = nodes[n]
        shown = ", ".join(
            f"{k}: {json.dumps(d['properties'].get(k), ensure_ascii=False)[:60]}" for k in ident[d["type"]]
        )
        return f"node {d['type']} {{{shown}}}"

    def edge_name(u: str, v: str, d: dict[str, Any]) -> str:
        return f"edge {node_name(u)} -[{d['type']}]-> {node_name(v)}"

    if nodes_only is not None and edges_only is not None:
        for n in nodes_only:
            yield nodes[n]["properties"], partial(node_name, n)
        for eid in edges_only:
            u, v, d = state.edge_ends(eid)
            yield d["properties"], partial(edge_name, u, v, d)
        return
    for n, d in nodes.items():
        yield d["properties"], partial(node_name, n)
    for u, nbrs in state.succ.items():
        for v, kd in nbrs.items():
            for d in kd.values():
                yield d["properties"], partial(edge_name, u, v, d)
