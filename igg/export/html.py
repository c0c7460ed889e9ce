"""HTML export: one self-contained page that draws the graph (the same viewer as ``igg view``).

The file holds the viewer (sigma.js WebGL drawing, graphology, the page's script and style) and the graph as
JSON, with every node's and edge's provenance and the groups a big graph opens as (computed here, at export
time, by ``igg.view.aggregate``). It opens offline, by double-click, from ``file://``: nothing is fetched.
Search, type filters with a colour legend, groups, focus views, details and the node list work as in the live
view; the iteration slider and live growth need the server (``igg view``).
"""

from __future__ import annotations

from pathlib import Path
from typing import IO, Any

from igg.graph.state import GraphState
from igg.io.files import write_file
from igg.observe.chunks import ContextChunks
from igg.view.data import graph_payload
from igg.view.page import render_page


def html_text(
    state: GraphState,
    *,
    metadata: dict[str, Any] | None = None,
    iterations: list[dict[str, Any]] | None = None,
    context: ContextChunks | None = None,
) -> str:
    """The page as text (``iterations``: summaries from ``igg.view.data.iteration_summary``, optional;
    ``context``: the session's context chunks, to show each piece of evidence in its passage)."""
    payload = graph_payload(state, metadata=metadata, iterations=iterations, context=context)
    return render_page("static", payload=payload, title=page_title(payload["meta"], state))


TITLE_GOAL = 60
"""Characters of a session's goal a page's title shows."""


def page_title(meta: dict[str, Any], state: GraphState) -> str:
    """What a browser tab says: the session's goal (cut short), else its id, and the graph's size; a person
    with several graphs open tells them apart by it (a bare session id says little)."""
    goal = " ".join(str(meta.get("goal") or "").split())
    what = goal if len(goal) <= TITLE_GOAL else goal[: TITLE_GOAL - 1].rstrip() + "…"
    what = what or str(meta.get("session_id") or "graph")
    return f"{what} · {state.node_count:,} nodes, {state.edge_count:,} edges · IGG"


def write_html(
    state: GraphState,
    path_or_file: str | Path | IO[str],
    *,
    metadata: dict[str, Any] | None = None,
    iterations: list[dict[str, Any]] | None = None,
    context: ContextChunks | None = None,
) -> dict[str, Any]:
    """Write the page; returns ``{"nodes", "edges", "bytes"}``."""
    text = html_text(state, metadata=metadata, iterations=iterations, context=context)
    if isinstance(path_or_file, str | Path):
        write_file(path_or_file, text.encode("utf-8"))
    else:
        path_or_file.write(text)
    return {"nodes": state.node_count, "edges": state.edge_count, "bytes": len(text.encode("utf-8"))}
