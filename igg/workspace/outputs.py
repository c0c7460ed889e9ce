"""What each workspace operation answers: one pydantic model per operation, which is also the MCP tool's
output schema (the SDK's structured output: a client checks each answer against it) and the HTTP route's
response.

Every answer about one session starts with the ``SessionSummary`` fields. An answer holds only the fields its
outcome has (``apply_actions`` answers with verdicts, or with the plan under review), so adapters dump them
with ``exclude_unset``; ``extra`` fields are refused at build time (``forbid``) so a model cannot drift from
what the operation returns.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from igg.persistence import SessionStatus


class Output(BaseModel):
    model_config = ConfigDict(extra="forbid")

    def dump(self) -> dict[str, Any]:
        """The JSON form an adapter sends (only the fields this answer has)."""
        out: dict[str, Any] = self.model_dump(mode="json", exclude_unset=True, by_alias=True)
        return out

    # read like the JSON it is (``out["accepted"]``), for callers of the Python API
    def __getitem__(self, key: str) -> Any:
        return self.dump()[key]

    def __contains__(self, key: object) -> bool:
        return key in self.dump()

    def get(self, key: str, default: Any = None) -> Any:
        """The field ``key`` of the JSON form, or ``default``."""
        return self.dump().get(key, default)

    def keys(self) -> Any:
        """The fields this answer has."""
        return self.dump().keys()


class SessionSummary(Output):
    """Where a session stands; every answer about one session starts with these."""

    session_id: str
    status: SessionStatus
    iteration: int = Field(description="The last iteration committed (0 before the first).")
    max_iterations: int
    nodes: int
    max_nodes: int
    edges: int
    max_edges: int
    stop_reason: str | None = None


class SessionOutput(SessionSummary):
    """One session as ``GET /sessions/{session_id}`` shows it: its summary, goal, agent and times."""

    goal: str
    agent: str | None = None
    created: str = Field(description="RFC 3339 UTC.")
    updated: str = Field(description="RFC 3339 UTC.")


class HealthOutput(Output):
    """``GET /healthz``."""

    status: str


class ObserveOutput(SessionSummary):
    markdown: str = Field(description="The observation, within its token budget.")
    tokens: int


class ApplyOutput(SessionSummary):
    """Verdicts of the actions (applied, or checked with dry_run), or the plan they became under review."""

    dry_run: bool | None = None
    repaired: int | None = Field(default=None, description="Lone surrogates replaced in the reasoning.")
    verdicts: list[dict[str, Any]] | None = None
    accepted: int | None = None
    rejected: int | None = None
    rejected_by_code: dict[str, int] | None = None
    review: dict[str, Any] | None = Field(
        default=None, description="The plan waiting for review (config.review)."
    )


class ReviewOutput(SessionSummary):
    """The plan (shown), the decision's outcome (approved: its verdicts; rejected: the note), and for a run
    held for review, how it went on."""

    review: dict[str, Any] | None = None
    approved: list[int] | None = None
    verdicts: list[dict[str, Any]] | None = None
    accepted: int | None = None
    rejected: int | None = Field(default=None, description="approve: actions rejected; reject: the plan id.")
    note: str | None = None
    run: dict[str, Any] | None = None


class FinishOutput(SessionSummary):
    pruned: list[dict[str, Any]]
    open_todos: list[str]


class UndoOutput(SessionSummary):
    undone_to: int
    step: int
    mutations: int


class DocumentsOutput(SessionSummary):
    """What add_documents or retract_document did, as one step (with review on: the plan waiting)."""

    iteration_applied: int | None = Field(default=None, description="None: kept as a plan (review).")
    review: dict[str, Any] | None = Field(default=None, description="The plan waiting for review.")
    dropped: list[dict[str, Any]] | None = Field(
        default=None, description="Actions that made nothing: document, chunk, reason (code first)."
    )
    documents: dict[str, Any] | None = None
    document: str | None = None
    facts: dict[str, int]
    changes: dict[str, int]


class ExportOutput(Output):
    session_id: str
    format: str
    bytes: int | None = None
    content: str | None = Field(default=None, description="The export, when no path was given.")
    path: str | None = Field(default=None, description="Where it was written, under the output directory.")
    plan: dict[str, Any] | None = Field(default=None, description="neo4j_plan: what an export would change.")


class ListOutput(Output):
    sessions: list[dict[str, Any]]


class QueryOutput(Output):
    session_id: str
    query: Any
    text: str
    tokens: int
    token_budget: int
    complete: bool
    matched_nodes: int
    omitted_nodes: int
    omitted_edges: int
    nodes: list[dict[str, Any]]
    edges: list[dict[str, Any]]
    truncated: bool = Field(
        default=False, description="The walk stopped at its visit cap; counts are lower bounds."
    )


class ExplainOutput(Output):
    session_id: str
    ref: str
    events: list[dict[str, Any]]


class DiffOutput(Output):
    session_id: str
    a: int
    b: int
    changes: list[dict[str, Any]]


class CheckOutput(Output):
    model_config = ConfigDict(extra="allow")  # the check report's fields (igg.rules.report.CheckReport)
    session_id: str


class RunOutput(SessionSummary):
    model_config = ConfigDict(
        extra="allow"
    )  # the run summary's fields (igg.record.records.RunResult.summary)
    error: str | None = None
    export_error: str | None = None


__all__ = [
    "ApplyOutput",
    "HealthOutput",
    "SessionOutput",
    "Output",
    "CheckOutput",
    "DiffOutput",
    "DocumentsOutput",
    "ExplainOutput",
    "ExportOutput",
    "FinishOutput",
    "ListOutput",
    "ObserveOutput",
    "QueryOutput",
    "ReviewOutput",
    "RunOutput",
    "SessionSummary",
    "UndoOutput",
]
