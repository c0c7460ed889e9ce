"""Mermaid flowchart export: small graphs in full; larger ones as a summary that stays readable.

Full form: one box per node (``Type: identity``) and one arrow per edge labelled with its type.

Beyond ``max_nodes`` nodes or ``max_edges`` edges one box per node would be unreadable, so the summary draws
two parts: *by type*, one box per node type (with its count) and one arrow per (source type, edge type,
target type) with its count; and *most connected*, the ``top`` nodes with the most edges (each with its
count) and the edges among them. A visible note says how many nodes and edges were left out and how to see
them. ``node_types`` keeps only some types (e.g. only ``Module``): then the chart, full or summarized, is
about those nodes and the edges between them.

Mermaid ids are generated (``n0``, ``t0``, ``h0``...), never taken from the graph; labels are quoted and every
character that could end a label or start markup is written as a Mermaid entity (``#quot;``, ``#35;``...).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from igg.errors import ExportError
from igg.graph.state import GraphState
from igg.io.files import write_file

_ENTITIES = {
    '"': "#quot;",
    "#": "#35;",
    "<": "#lt;",
    ">": "#gt;",
    "`": "#96;",
    "|": "#124;",
    "[": "#91;",
    "]": "#93;",
    "{": "#123;",
    "}": "#125;",
    "&": "#38;",
    ";": "#59;",
    "\\": "#92;",
}

DEFAULT_TOP = 20
"""Most connected nodes a summary draws."""

_DIRECTIONS = ("LR", "RL", "TB", "BT", "TD")


def label(text: str, limit: int = 60) -> str:
    """``text`` as the inside of a quoted Mermaid label: one line, entities for markup characters."""
    text = " ".join(text.split())  # newlines and other whitespace runs become one space
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    out = []
    for ch in text:
        ent = _ENTITIES.get(ch)
        if ent is not None:
            out.append(ent)
        elif ch < " " or ch == "\x7f" or "\ud800" <= ch <= "\udfff":
            out.append("\ufffd")
        else:
            out.append(ch)
    return "".join(out)


def _selection(state: GraphState, node_types: Iterable[str] | None) -> tuple[list[str], list[str] | None]:
    """The node ids to draw (all, or those of ``node_types``) and the chosen types (None: all)."""
    if node_types is None:
        return list(state.nodes), None
    chosen = list(dict.fromkeys(node_types))
    known = set(state.schema.node_type_list) | {d["type"] for d in state.nodes.values()}
    unknown = [t for t in chosen if t not in known]
    if unknown or not chosen:
        raise ExportError(
            f"unknown node type(s) {', '.join(map(repr, unknown)) or '(none given)'} for the Mermaid "
            f"chart; the graph's node types are: {', '.join(sorted(known)) or '(none)'}"
        )
    wanted = set(chosen)
    nodes = state.nodes
    return [n for n in nodes if nodes[n]["type"] in wanted], chosen


def mermaid_text(
    state: GraphState,
    *,
    max_nodes: int = 60,
    max_edges: int = 120,
    direction: str = "LR",
    node_types: Iterable[str] | None = None,
    top: int = DEFAULT_TOP,
) -> str:
    """The flowchart as text: full when the (selected) graph is within the limits, else a summary."""
    text, _ = _chart(
        state, max_nodes=max_nodes, max_edges=max_edges, direction=direction, node_types=node_types, top=top
    )
    return text


def _chart(
    state: GraphState,
    *,
    max_nodes: int,
    max_edges: int,
    direction: str,
    node_types: Iterable[str] | None,
    top: int,
) -> tuple[str, dict[str, Any]]:
    selected, chosen = _selection(state, node_types)
    keep = set(selected)
    edges = [(k, u, v, d) for k, u, v, d in state.edges() if u in keep and v in keep]
    lines = [f"flowchart {direction if direction in _DIRECTIONS else 'LR'}"]
    if chosen is not None:
        lines.append(
            f"    %% only node types {', '.join(chosen)}: {len(selected)} of {state.node_count} nodes, "
            f"{len(edges)} of {state.edge_count} edges"
        )
    stats: dict[str, Any] = {"drawn_nodes": len(selected), "drawn_edges": len(edges), "summarized": False}
    if len(selected) <= max_nodes and len(edges) <= max_edges:
        mid = {n: f"n{i}" for i, n in enumerate(selected)}
        for n in selected:
            lines.append(f'    {mid[n]}["{label(state.node_type(n))}: {label(_identity(state, n))}"]')
        for _, u, v, d in edges:
            lines.append(f'    {mid[u]} -->|"{label(d["type"])}"| {mid[v]}')
        return "\n".join(lines) + "\n", stats
    return _summary(state, lines, selected, edges, max_edges=max_edges, top=top)


def _summary(
    state: GraphState,
    lines: list[str],
    selected: list[str],
    edges: list[tuple[str, str, str, dict[str, Any]]],
    *,
    max_edges: int,
    top: int,
) -> tuple[str, dict[str, Any]]:
    nodes = state.nodes
    type_counts = Counter(nodes[n]["type"] for n in selected)
    flows: Counter[tuple[str, str, str]] = Counter()
    degree: Counter[str] = Counter()
    for _, u, v, d in edges:
        flows[(nodes[u]["type"], d["type"], nodes[v]["type"])] += 1
        degree[u] += 1
        degree[v] += 1
    lines.insert(
        1,
        f"    %% summary: {len(selected)} nodes, {len(edges)} edges (by type, and the most connected nodes)",
    )
    lines.append('    subgraph by_type["By type"]')
    tid = {t: f"t{i}" for i, t in enumerate(type_counts)}
    for t, count in type_counts.items():
        lines.append(f'        {tid[t]}["{label(t)} ×{count}"]')
    for (tu, et, tv), count in flows.most_common():
        lines.append(f'        {tid[tu]} -->|"{label(et)} ×{count}"| {tid[tv]}')
    lines.append("    end")
    hubs = [n for n, deg in sorted(degree.items(), key=lambda item: (-item[1], item[0])) if deg >= 2][
        : max(top, 0)
    ]
    hub_edges: list[tuple[str, str, str]] = []
    if hubs:
        hid = {n: f"h{i}" for i, n in enumerate(hubs)}
        lines.append(f'    subgraph hubs["Most connected: {len(hubs)} of {len(selected)} nodes"]')
        for n in hubs:
            lines.append(
                f'        {hid[n]}["{label(nodes[n]["type"])}: {label(_identity(state, n))} '
                f'({degree[n]} edges)"]'
            )
        hub_edges = [(hid[u], d["type"], hid[v]) for _, u, v, d in edges if u in hid and v in hid][:max_edges]
        for a, et, b in hub_edges:
            lines.append(f'        {a} -->|"{label(et)}"| {b}')
        lines.append("    end")
    left_nodes, left_edges = len(selected) - len(hubs), len(edges) - len(hub_edges)
    note = (
        f"Not drawn one by one: {left_nodes} nodes and {left_edges} edges (counted by type above). "
        "Pick node types with igg export --types, or see every node with igg view or --format html."
    )
    lines.append(f'    omitted["{label(note, limit=400)}"]')
    stats = {
        "drawn_nodes": len(hubs),
        "drawn_edges": len(hub_edges),
        "summarized": True,
        "omitted_nodes": left_nodes,
        "omitted_edges": left_edges,
    }
    return "\n".join(lines) + "\n", stats


def _identity(state: GraphState, node_id: str) -> str:
    props = state.node_properties(node_id)
    keys = state.schema.identity_keys.get(state.node_type(node_id), ("name",))
    return " ".join(str(props.get(k)) for k in keys)


def write_mermaid(
    state: GraphState,
    path_or_file: str | Path | IO[str],
    *,
    max_nodes: int = 60,
    max_edges: int = 120,
    node_types: Iterable[str] | None = None,
    top: int = DEFAULT_TOP,
) -> dict[str, Any]:
    """Write the Mermaid flowchart; returns ``{"nodes", "edges", "summarized", "drawn_nodes", "drawn_edges",
    "bytes"}`` (and ``omitted_nodes``/``omitted_edges`` for a summary)."""
    text, stats = _chart(
        state, max_nodes=max_nodes, max_edges=max_edges, direction="LR", node_types=node_types, top=top
    )
    if isinstance(path_or_file, str | Path):
        write_file(path_or_file, text.encode("utf-8"))
    else:
        path_or_file.write(text)
    return {"nodes": state.node_count, "edges": state.edge_count, **stats, "bytes": len(text.encode("utf-8"))}
