"""Mermaid flowchart export: small graphs in full, large ones summarized by type.

Full form: one box per node (``Type: identity``) and one arrow per edge labelled with its type. Beyond
``max_nodes`` nodes or ``max_edges`` edges the picture would be unreadable, so the summary form draws one
box per node type (with its count) and one arrow per (source type, edge type, target type) with its count.
Mermaid ids are generated (``n0``, ``n1``, ...), never taken from the graph; labels are quoted and every
character that could end a label or start markup is written as a Mermaid entity (``#quot;``, ``#35;``...).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import IO, Any

from igg.files import write_file
from igg.graph.state import GraphState

_ENTITIES = {'"': "#quot;", "#": "#35;", "<": "#lt;", ">": "#gt;", "`": "#96;", "|": "#124;", "[": "#91;",
             "]": "#93;", "{": "#123;", "}": "#125;", "&": "#38;", ";": "#59;", "\\": "#92;"}


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


def mermaid_text(state: GraphState, *, max_nodes: int = 60, max_edges: int = 120, direction: str = "LR") -> str:
    """The flowchart as text (full when the graph is within the limits, else summarized by type)."""
    lines = [f"flowchart {direction if direction in ('LR', 'RL', 'TB', 'BT', 'TD') else 'LR'}"]
    if state.node_count <= max_nodes and state.edge_count <= max_edges:
        mid: dict[str, str] = {}
        for i, n in enumerate(state.graph._node):
            mid[n] = f"n{i}"
            t = state.node_type(n)
            lines.append(f'    n{i}["{label(t)}: {label(_identity(state, n))}"]')
        for _, u, v, d in state.edges():
            lines.append(f'    {mid[u]} -->|"{label(d["type"])}"| {mid[v]}')
        return "\n".join(lines) + "\n"
    node_counts, _ = state.counts_by_type()
    tid = {t: f"t{i}" for i, t in enumerate(node_counts)}
    lines.insert(1, f"    %% summary: {state.node_count} nodes, {state.edge_count} edges (by type)")
    for t, count in node_counts.items():
        if count:
            lines.append(f'    {tid[t]}["{label(t)} ×{count}"]')
    flows: Counter[tuple[str, str, str]] = Counter()
    nodes = state.graph._node
    for _, u, v, d in state.edges():
        flows[(nodes[u]["type"], d["type"], nodes[v]["type"])] += 1
    for (tu, et, tv), count in flows.most_common():
        lines.append(f'    {tid[tu]} -->|"{label(et)} ×{count}"| {tid[tv]}')
    return "\n".join(lines) + "\n"


def _identity(state: GraphState, node_id: str) -> str:
    props = state.node_properties(node_id)
    keys = state.schema.identity_keys[state.node_type(node_id)]
    return " ".join(str(props.get(k)) for k in keys)


def write_mermaid(state: GraphState, path_or_file: str | Path | IO[str], *, max_nodes: int = 60,
                  max_edges: int = 120) -> dict[str, Any]:
    """Write the Mermaid flowchart; returns ``{"nodes", "edges", "summarized", "bytes"}``."""
    text = mermaid_text(state, max_nodes=max_nodes, max_edges=max_edges)
    if isinstance(path_or_file, str | Path):
        write_file(path_or_file, text.encode("utf-8"))
    else:
        path_or_file.write(text)
    summarized = not (state.node_count <= max_nodes and state.edge_count <= max_edges)
    return {"nodes": state.node_count, "edges": state.edge_count, "summarized": summarized,
            "bytes": len(text.encode("utf-8"))}
