"""What an export writes, planned before any connection: one ``Plan`` per node type and per (source type,
edge type, target type), each with its Cypher (from ``igg.export.cypher``, so every name is checked) and its
rows. A node row is the node's property map; an edge row is ``[source identity..., target identity...,
properties]`` (lists keep parameters small). Used by the Neo4j export and the Cypher script.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from igg.errors import ExportError
from igg.export import cypher
from igg.graph.state import GraphState


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
        return row[-1] if self.edge else row

    def identity(self, row: Any) -> dict[str, list[Any]]:
        """The identity parameters of a row: ``{"k": [...]}`` or ``{"s": [...], "t": [...]}``."""
        if not self.edge:
            return {"k": [row[k] for k in self.keys]}
        ns, nt = self.ends
        return {"s": list(row[:ns]), "t": list(row[ns:ns + nt])}

    def with_props(self, row: Any, props: dict[str, Any]) -> Any:
        """The row with another property map."""
        return [*row[:-1], props] if self.edge else props

    def append(self, key: str, first: bool) -> str:
        """A query that sets (``first``) or extends one property of one element, piece by piece."""
        if self.edge:
            return cypher.append_edge_value(*self.edge, key, first)
        return cypher.append_node_value(self.label, self.keys, key, first)


def plan_export(state: GraphState) -> list[Plan]:
    """Every batch query with its rows; raises ``ExportError`` for any unsafe label, type or key."""
    schema = state.schema
    ident = schema.identity_keys
    plans: list[Plan] = []
    nodes = state.graph._node
    for label in schema.node_type_list:
        ids = list(state.nodes_of_type(label))
        if not ids:
            continue
        keys = ident[label]
        rows = [nodes[n]["properties"] for n in ids]
        _check_keys(rows, f"node type {label}")
        plans.append(Plan(cypher.merge_nodes(label, keys), rows, cypher.merge_nodes_scan(label, keys),
                           label=label, keys=keys))
    groups: dict[tuple[str, str, str], list[list[Any]]] = {}
    for u, nbrs in state.graph._succ.items():
        su = nodes[u]
        tu, pu = su["type"], su["properties"]
        source = [pu[k] for k in ident[tu]]
        for v, kd in nbrs.items():
            sv = nodes[v]
            tv, pv = sv["type"], sv["properties"]
            target = [pv[k] for k in ident[tv]]
            for d in kd.values():
                groups.setdefault((tu, d["type"], tv), []).append([*source, *target, d["properties"]])
    for (tu, et, tv), rows in groups.items():
        _check_keys([r[-1] for r in rows], f"edge type {et}")
        edge = (et, tu, ident[tu], tv, ident[tv])
        plans.append(Plan(cypher.merge_edges(*edge), rows, cypher.merge_edges_scan(*edge),
                           ends=(len(ident[tu]), len(ident[tv])), edge=edge))
    return plans


def _check_keys(prop_maps: list[dict[str, Any]], where: str) -> None:
    seen: set[str] = set()
    for props in prop_maps:
        seen.update(props)
    for key in sorted(seen):
        cypher.name(key, f"property key of {where}")
        if key == cypher.SCOPE_KEY:
            raise ExportError(f"property key {key!r} of {where} is reserved for the export scope")
