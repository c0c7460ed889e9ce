"""DESIGN.md's invariants, recomputed from scratch (not from the indexes) so tests and replays can check
them."""

from __future__ import annotations

from igg.graph.state import GraphState
from igg.models.common import freeze
from igg.models.request import Constraints


def invariant_violations(state: GraphState, limits: Constraints) -> list[str]:
    """Every broken invariant: types, required attributes, endpoints, limits, self-loops, unique
    identities."""
    out: list[str] = []
    schema = state.schema
    g = state.graph
    seen: dict[tuple[object, ...], str] = {}
    for n, d in g.nodes(data=True):
        t = d["type"]
        if t not in schema.node_types:
            out.append(f"node {n} has unknown type {t!r}")
            continue
        props = d["properties"]
        missing = [k for k in schema.required[t] if k not in props or props[k] == ""]
        if missing:
            out.append(f"node {n} misses {missing}")
            continue
        ident = (t, *(freeze(props[k]) for k in schema.identity_keys[t]))
        if ident in seen:
            out.append(f"nodes {seen[ident]} and {n} share identity {ident}")
        seen[ident] = n
        if state.find_identity(t, ident[1:]) != n:
            out.append(f"identity index is stale for {n}")
    triples: set[tuple[str, str, str]] = set()
    count = 0
    for u, v, k, d in g.edges(keys=True, data=True):
        count += 1
        t = str(d["type"])
        if t not in schema.edge_types:
            out.append(f"edge {k} has unknown type {t!r}")
        if u not in g or v not in g:
            out.append(f"edge {k} lacks an endpoint")
        if u == v and not limits.self_loop_allowed(t):
            out.append(f"edge {k} is a forbidden self-loop")
        if (u, t, v) in triples:
            out.append(f"edge {k} duplicates {(u, t, v)}")
        triples.add((u, t, v))
        missing = [x for x in schema.required.get(t, ()) if x not in d["properties"]]
        if missing:
            out.append(f"edge {k} misses {missing}")
    if count != state.edge_count:
        out.append(f"edge count index {state.edge_count} != {count}")
    if g.number_of_nodes() > limits.max_nodes:
        out.append(f"{g.number_of_nodes()} nodes exceed max_nodes={limits.max_nodes}")
    if count > limits.max_edges:
        out.append(f"{count} edges exceed max_edges={limits.max_edges}")
    return out
