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
        out = {"kind": self.kind, "element": self.element, "change": self.change, "type": self.type,
               "before": self.before, "after": self.after}
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

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


__all__ = ["Change", "Touch"]
