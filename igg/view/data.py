"""What the viewer draws, as JSON: a graph payload (nodes, edges, types, provenance) and iteration summaries.

The same payload feeds the live page (``/ui/api/...``) and the self-contained HTML export, so both show the
same thing. Nodes carry a display ``label`` (their identity values, e.g. the ``name``), their properties and
their provenance (``created`` iteration, context ``chunk``, last ``updated`` iteration, and ``evidence``: each
located quote with ``before``/``text``/``after``, the passage of the context around it, when the caller gives
the context, so the page shows it highlighted in its chunk). Iteration summaries come from iteration records
as they were kept, never from recomputing anything: for each iteration its chunk, counts and every rejection
with its code and message.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from igg.graph.state import GraphState
from igg.models.request import Request
from igg.observe.chunks import ContextChunks, split_context
from igg.view.aggregate import grouping


def context_chunks(request: Request | None) -> ContextChunks | None:
    """A request's context as the loop chunked it (None without a request or context)."""
    if request is None or not request.context_data:
        return None
    return split_context(request.context_data, request.config.context.chunk_tokens)


class _Passages:
    """Evidence items with the context passage around them (a provenance without evidence passes as is)."""

    def __init__(self, chunks: ContextChunks | None) -> None:
        self.chunks = chunks

    def of(self, provenance: dict[str, Any]) -> dict[str, Any]:
        items = provenance.get("evidence")
        if not items or self.chunks is None:
            return provenance
        return {**provenance, "evidence": [self._passage(i) for i in items]}

    def _passage(self, item: dict[str, Any]) -> dict[str, Any]:
        chunks = self.chunks
        assert chunks is not None
        if not isinstance(item.get("chunk"), int) or item["chunk"] < 1:
            return item
        try:
            start, end = chunks.bounds(item["chunk"] - 1)
        except IndexError:  # a context that is not the one the evidence was located in
            return item
        text = chunks.text
        a, b = start + item["start"], start + item["end"]
        return {
            **item,
            "before": text[max(start, a - PASSAGE_CHARS) : a],
            "text": text[a:b],
            "after": text[b : min(max(end, b), b + PASSAGE_CHARS)],
        }


PAYLOAD_VERSION = 2
"""Bumped when the payload's shape changes (the page checks it). 2: ``grouping`` and each node's
``parent``."""

LABEL_LIMIT = 80
"""Longest label drawn (characters); the details panel shows the whole value."""


def node_label(state: GraphState, node_id: str) -> str:
    """The node's identity values joined by spaces (what a person calls it), shortened to ``LABEL_LIMIT``."""
    props = state.node_properties(node_id)
    keys = state.schema.identity_keys.get(state.node_type(node_id), ("name",))
    text = " ".join(str(props[k]) for k in keys if props.get(k) is not None) or node_id
    text = " ".join(text.split())
    return text if len(text) <= LABEL_LIMIT else text[: LABEL_LIMIT - 1] + "…"


PASSAGE_CHARS = 160
"""Characters of context shown before and after a piece of evidence (to the chunk's edges)."""


def graph_payload(
    state: GraphState,
    *,
    metadata: Mapping[str, Any] | None = None,
    iterations: list[dict[str, Any]] | None = None,
    communities: bool = True,
    context: ContextChunks | None = None,
) -> dict[str, Any]:
    """The graph as the viewer's JSON payload (never mutates ``state``).

    ``metadata`` (session id, goal, status, stop reason, iteration) is shown in the header; ``iterations``
    (see ``iteration_summaries``) fills the iterations panel. ``grouping`` (``igg.view.aggregate``) holds the
    groups a big graph is drawn as, and each node in a group names it as its ``parent``; ``communities=False``
    skips computing communities (``igg.view.aggregate.grouping``'s ``communities_too``). ``context``: the
    session's context chunks (``context_chunks(request)``), for the passage around each piece of evidence.
    """
    passages = _Passages(context)
    node_types = list(state.schema.node_type_list)
    edge_types = list(state.schema.edge_type_list)
    nodes: list[dict[str, Any]] = []
    for n, d in state.graph.nodes(data=True):
        if d["type"] not in node_types:  # a document read without its schema may carry types beyond it
            node_types.append(d["type"])
        nodes.append(
            {
                "id": n,
                "type": d["type"],
                "label": node_label(state, n),
                "properties": d["properties"],
                "provenance": passages.of(d.get("provenance") or {}),
            }
        )
    edges = []
    degrees: Counter[str] = Counter()
    for k, u, v, d in state.edges():
        if d["type"] not in edge_types:
            edge_types.append(d["type"])
        edges.append(
            {
                "id": k,
                "type": d["type"],
                "source": u,
                "target": v,
                "properties": d["properties"],
                "provenance": passages.of(d.get("provenance") or {}),
            }
        )
        degrees[u] += 1
        degrees[v] += 1
    groups = grouping(
        state, {item["id"]: item["label"] for item in nodes}, degrees, communities_too=communities
    )
    for item in nodes:
        if item["id"] in groups.parents:
            item["parent"] = groups.parents[item["id"]]
    meta = {k: v for k, v in dict(metadata or {}).items() if _plain(v)}
    meta.update(nodes=len(nodes), edges=len(edges))
    return {
        "version": PAYLOAD_VERSION,
        "meta": meta,
        "node_types": node_types,
        "edge_types": edge_types,
        "identity_keys": {t: list(state.schema.identity_keys.get(t, ("name",))) for t in node_types},
        "nodes": nodes,
        "edges": edges,
        "grouping": groups.to_payload(),
        "iterations": iterations or [],
    }


def _plain(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def iteration_summary(
    record: Mapping[str, Any], *, nodes: int | None = None, edges: int | None = None
) -> dict[str, Any]:
    """One iteration record (as stored) as the iterations panel shows it."""
    verdicts = record.get("verdicts") or []
    rejections = [
        {
            "index": v.get("index"),
            "action": _action_type(v.get("action")),
            "code": v.get("code"),
            "message": v.get("message", ""),
        }
        for v in verdicts
        if not v.get("accepted")
    ]
    parse_error = record.get("parse_error")
    out: dict[str, Any] = {
        "iteration": record.get("iteration"),
        "chunk": record.get("chunk"),
        "accepted": sum(1 for v in verdicts if v.get("accepted")),
        "rejected": len(rejections),
        "rejected_by_code": dict(sorted(Counter(str(r["code"]) for r in rejections).items())),
        "rejections": rejections,
        "reasoning": _short(record.get("reasoning") or "", 400),
        "truncated": bool(record.get("truncated")),
        "finished": bool(record.get("finished")),
    }
    if parse_error:
        out["parse_error"] = {"code": parse_error.get("code"), "message": parse_error.get("message", "")}
    if nodes is not None:
        out["nodes"], out["edges"] = nodes, edges
    return out


class StoredStep(Protocol):
    """What ``iteration_summaries`` reads of a stored step (``igg.store``'s steps have it)."""

    @property
    def kind(self) -> str: ...
    @property
    def iteration(self) -> int | None: ...
    @property
    def record(self) -> Mapping[str, Any]: ...
    @property
    def nodes(self) -> int: ...
    @property
    def edges(self) -> int: ...


def iteration_summaries(steps: Iterable[StoredStep], upto: int | None = None) -> list[dict[str, Any]]:
    """The iterations panel of a stored session: every iteration step (up to iteration ``upto``), summarized
    with the graph's counts after it. The live page, ``igg view --export`` and ``igg export --store`` all use
    it."""
    return [
        iteration_summary(s.record, nodes=s.nodes, edges=s.edges)
        for s in steps
        if s.kind == "iteration" and (upto is None or (s.iteration or 0) <= upto)
    ]


def _action_type(action: Any) -> str | None:
    if isinstance(action, Mapping):
        value = action.get("type")
        return value if isinstance(value, str) else None
    return action if isinstance(action, str) else None


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
