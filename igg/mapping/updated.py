"""What one ``igg map-code --update`` did (``UpdateResult``), as the update's start (``igg.mapping.update``)
and its general path (``igg.mapping.remap``) both report it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from igg.record.logs import get_logger

log = get_logger("igg.code")


@dataclass(kw_only=True)
class UpdateResult:
    """What one update did."""

    session_id: str
    step: int
    iteration: int
    files: dict[str, Any]
    graph: dict[str, int]
    git_commit: str | None
    seconds: dict[str, float] = field(default_factory=dict)
    exports: list[dict[str, Any]] = field(default_factory=list)
    """One summary per export made after the update (``igg.service.update_code_map``)."""
    export_error: Exception | None = None
    """Set when an export failed (the update itself is committed)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "step": self.step,
            "iteration": self.iteration,
            "files": self.files,
            "graph": self.graph,
            "git_commit": self.git_commit,
            "seconds": {k: round(v, 3) for k, v in self.seconds.items()},
            "exports": self.exports,
        }


def update_result(
    sid: str,
    step: int,
    iteration: int,
    changes: dict[str, int],
    files: dict[str, Any],
    size: tuple[int, int],
    commit: str | None,
    seconds: dict[str, float],
) -> UpdateResult:
    """The update's result (session ``sid`` at step ``step``, iteration ``iteration``, after ``changes``;
    ``size``: its nodes and edges now), logged."""
    log.info(
        "map_code_updated",
        session_id=sid,
        step=step,
        iteration=iteration,
        reparsed=files["reparsed"],
        unchanged=files["unchanged"],
        mutations=sum(changes.values()),
        git_commit=commit,
    )
    graph = {**changes, "nodes": size[0], "edges": size[1]}
    return UpdateResult(
        session_id=sid,
        step=step,
        iteration=iteration,
        files=files,
        graph=graph,
        git_commit=commit,
        seconds=seconds,
    )


__all__ = ["UpdateResult", "update_result"]
