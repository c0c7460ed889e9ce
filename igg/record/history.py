"""What a session's history answers with: the net ``Change`` of an element between two iterations (``diff``),
and each ``Touch`` of an element by a step (``explain``). Built by ``igg.store.history``; read by every
interface."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(kw_only=True)
class Change:
    """The net change of one node or edge between two points of a session."""

    kind: str
    """``node`` or ``edge``."""
    element: str
    change: str
    """``added``, ``deleted`` or ``changed``."""
    type: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    ends: tuple[str, str] | None = None
    """(from, to) for an edge."""

    def to_dict(self) -> dict[str, Any]:
        out = {
            "kind": self.kind,
            "element": self.element,
            "change": self.change,
            "type": self.type,
            "before": self.before,
            "after": self.after,
        }
        if self.ends:
            out["from"], out["to"] = self.ends
        return out


@dataclass(kw_only=True)
class Touch:
    """One mutation of an element with the step that made it and why (the agent's reasoning, the verdict)."""

    step: int
    kind: str
    iteration: int | None
    op: str
    element: str
    detail: str
    chunk: str | None
    reasoning: str
    verdict: str | None
    evidence: list[dict[str, Any]] | None = None
    """The evidence this change brought (``igg.act.evidence``: quote, chunk, offsets, line, match), if any."""
    known_at: str | None = None
    """When IGG was told (the step's commit time, RFC 3339): the journal's axis."""
    valid: dict[str, str | None] | None = None
    """The element's valid time after this change (``{"from", "to"}``, ``igg.models.validtime``), when it has
    one."""

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def describe_evidence(item: dict[str, Any]) -> str:
    """One evidence item as a line: the quote and where it was found (or that it was not)."""
    quote = " ".join(str(item.get("quote", "")).split())
    quote = quote if len(quote) <= 100 else quote[:97] + "..."
    if item.get("match") == "none":
        return f"{quote!r} (not found in the context)"
    where = [f"chunk {item['chunk']}"] if "chunk" in item else []
    if item.get("file"):
        where.append(f"{item['file']}:{item.get('line')}:{item.get('column')}")
    elif "line" in item:
        where.append(f"line {item['line']}, column {item.get('column')}")
    match = str(item.get("match", ""))
    if match == "fuzzy":
        match += f" {item.get('score')}%"
    return f"{quote!r} ({', '.join(where)}; {match})"


__all__ = ["Change", "Touch", "describe_evidence"]
