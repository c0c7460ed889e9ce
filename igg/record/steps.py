"""The typed steps of a session: what every change to a session leaves in its history.

A session's history is a sequence of steps, each one of these kinds (a discriminated union read and written
through one ``TypeAdapter``, ``STEPS``, as the mutations are through ``igg.graph.journal``):

==================  =========================================================================================
kind                what made it
==================  =========================================================================================
``iteration``       an agent turn or a tool call's actions, applied by the act step (``IterationRecord``)
``review``          ``PlanPending``: a turn's actions validated as if applied, waiting for a reviewer;
                    ``PlanRejected``: a reviewer discarded the plan (the note goes to the agent)
``update``          ``UpdateStep``: ``igg map-code --update`` applied a code map's difference (act step)
``undo``            ``UndoStep``: the graph rolled back to an earlier iteration
``finalize``        ``FinalizeStep``: the session ended (pruning, stop reason, summary)
==================  =========================================================================================

An approved plan becomes an ``iteration`` (its actions applied as shown). Iteration records keep their own
codec (``igg.store.codec``): they carry verdict objects and the agent's raw output; in ``STEPS`` their stored
form is read as ``IterationStep`` (its counters and anything else kept as it was).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, TypeAdapter


class _Step(BaseModel):
    model_config = ConfigDict(extra="ignore")


class ReviewPlan(_Step):
    """The one shape of a plan waiting for review (a tool call's actions or a run's turn)."""

    plan_id: int
    """Plans of a session count 1, 2, 3, ..."""
    iteration: int
    """The iteration an approval applies it as."""
    reasoning: str = ""
    actions: list[Any] = Field(default_factory=list)
    """The actions as received."""
    verdicts: list[dict[str, Any]] = Field(default_factory=list)
    """Their verdicts as if applied in order (nothing can change the graph while the plan waits)."""
    accepted: int = 0
    rejected: int = 0
    finished: bool = False
    """A run's turn said ``"finished": true``: approving it ends the run on resume."""
    usage: dict[str, Any] | None = None
    """What the turn cost (paid whatever the reviewer decides)."""
    chunk: str | None = None
    chunk_cursor: int = 0
    update: dict[str, Any] | None = None
    """A planned update kept whole (a document build or update, ``add_documents``, ``retract_document``):
    ``difference`` (``igg.act.difference.difference_to_json``), the ``files`` its step keeps and whether
    approving it ``finish``es the session. ``actions`` then shows each element as the action it stands for;
    it is approved whole or rejected."""

    def shown(self) -> dict[str, Any]:
        """The plan as a client is shown it: a planned update's difference and files stay in the store (the
        actions show it)."""
        return self.model_dump(mode="json", exclude={"update": {"difference", "files"}})


class PlanPending(_Step):
    """A plan kept for review."""

    kind: Literal["review"] = "review"
    state: Literal["pending"] = "pending"
    plan: ReviewPlan
    usage: dict[str, Any] | None = None


class PlanRejected(_Step):
    """A plan a reviewer rejected; ``note`` is shown to the agent in its next observation."""

    kind: Literal["review"] = "review"
    state: Literal["rejected"] = "rejected"
    plan_id: int
    note: str | None = ""


class UpdateStep(_Step):
    """A code map re-mapped (``igg map-code --update``), its difference applied by the act step."""

    kind: Literal["update"] = "update"
    iteration: int
    git_commit: str | None = None
    files: dict[str, Any] = Field(default_factory=dict)
    changes: dict[str, int] = Field(default_factory=dict)
    reasoning: str = ""
    verdicts: list[dict[str, Any]] = Field(default_factory=list)
    timings_ms: dict[str, float] = Field(default_factory=dict)


class UndoStep(_Step):
    """The graph rolled back to how it was after ``to_iteration`` (the step holds the inverse mutations)."""

    kind: Literal["undo"] = "undo"
    to_iteration: int
    to_step: int
    reasoning: str = ""
    step: int = Field(default=0, exclude=True)
    """The step number it was committed as (not stored: the store numbers its steps)."""
    mutations: int = Field(default=0, exclude=True)
    """How many mutations it holds (not stored)."""


class FinalizeStep(_Step):
    """The end of a session: its stop reason and summary (the pruning is in the step's mutations)."""

    model_config = ConfigDict(extra="allow")
    kind: Literal["finalize"] = "finalize"
    stop_reason: str | None = None


class IterationStep(_Step):
    """An iteration's stored record, as far as the step union reads it (``IterationRecord`` is the whole)."""

    model_config = ConfigDict(extra="allow")
    kind: Literal["iteration"] = "iteration"
    iteration: int


def _tag(value: Any) -> str:
    data = value if isinstance(value, dict) else value.__dict__
    kind = str(data.get("kind") or "iteration")
    return f"review:{data.get('state')}" if kind == "review" else kind


StepRecord = Annotated[
    Annotated[IterationStep, Tag("iteration")]
    | Annotated[PlanPending, Tag("review:pending")]
    | Annotated[PlanRejected, Tag("review:rejected")]
    | Annotated[UpdateStep, Tag("update")]
    | Annotated[UndoStep, Tag("undo")]
    | Annotated[FinalizeStep, Tag("finalize")],
    Discriminator(_tag),
]
"""Any step of a session's history."""

STEPS: TypeAdapter[StepRecord] = TypeAdapter(StepRecord)
"""Reads (``STEPS.validate_python({"kind": KIND, **record})``) and writes (``STEPS.dump_python(step,
mode="json")``) every kind of step."""


def read_step(kind: str, record: dict[str, Any]) -> StepRecord:
    """A stored step (its ``kind`` column and its record) as its typed form."""
    return STEPS.validate_python({**record, "kind": kind})


def step_data(step: StepRecord) -> dict[str, Any]:
    """A typed step as the JSON-ready dict a store keeps."""
    data: dict[str, Any] = STEPS.dump_python(step, mode="json", exclude_none=False)
    return data


__all__ = [
    "STEPS",
    "FinalizeStep",
    "IterationStep",
    "PlanPending",
    "PlanRejected",
    "ReviewPlan",
    "StepRecord",
    "UndoStep",
    "UpdateStep",
    "read_step",
    "step_data",
]
