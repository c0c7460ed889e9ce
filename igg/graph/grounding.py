"""Whether an element is grounded: the one reading of its evidence (``igg.act.evidence``) that the find query,
the grounding report and the exports share."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Literal, TypeAlias

Grounding: TypeAlias = Literal["grounded", "ungrounded", "unverified"]
GROUNDINGS: tuple[Grounding, ...] = ("grounded", "ungrounded", "unverified")


def grounding_of(provenance: dict[str, Any] | None, properties: dict[str, Any] | None = None) -> Grounding:
    """``grounded``: some of its evidence was located in the context, or it is a code map's element with a
    source site (``file`` and ``line`` properties); ``ungrounded``: it carries evidence and none was located;
    ``unverified``: no evidence."""
    items = (provenance or {}).get("evidence")
    if items:
        return "grounded" if any(i.get("match") != "none" for i in items) else "ungrounded"
    if properties and "file" in properties and "line" in properties:
        return "grounded"
    return "unverified"


EVIDENCE_KEPT = 8
"""Evidence items an element's provenance keeps: updates add theirs, the oldest go."""


def kept_evidence(before: list[dict[str, Any]] | None, added: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """An element's evidence after an update adds ``added``: the newest ``EVIDENCE_KEPT`` items."""
    return [*(before or ()), *added][-EVIDENCE_KEPT:]


def elements(graph: Any) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """Every node and edge of a ``GraphState`` as ``(kind, id, data)``; data holds type, properties,
    provenance."""
    for node_id, data in graph.nodes.items():
        yield "node", node_id, data
    for nbrs in graph.succ.values():
        for kd in nbrs.values():
            for edge_id, data in kd.items():
                yield "edge", edge_id, data


def grounding_counts(graph: Any) -> dict[str, int]:
    """How many facts (nodes and edges) of a ``GraphState`` are grounded, ungrounded and unverified."""
    counts: dict[str, int] = dict.fromkeys(GROUNDINGS, 0)
    for _, _, data in elements(graph):
        counts[grounding_of(data["provenance"], data["properties"])] += 1
    return counts


__all__ = [
    "EVIDENCE_KEPT",
    "GROUNDINGS",
    "Grounding",
    "elements",
    "grounding_counts",
    "grounding_of",
    "kept_evidence",
]
