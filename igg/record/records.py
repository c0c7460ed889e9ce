"""What a run produces: stop reasons, iteration records, events, and the run result."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from igg.errors import ExportError
from igg.graph.grounding import grounding_counts
from igg.graph.journal import Mutation, read_mutation
from igg.models.verdicts import ErrorCode, Verdict

if TYPE_CHECKING:
    from igg.graph.state import GraphState
    from igg.record.steps import UpdateStep

StopReason = Literal[
    "finished",
    "max_iterations",
    "limits_reached",
    "stuck",
    "budget_exhausted",
    "agent_error",
    "awaiting_review",
]
"""Why a run ended; every run ends with exactly one.

- ``finished``: the agent said ``"finished": true`` (or every completeness rule is met with
  stop_when_complete)
- ``max_iterations``: the hard iteration guard
- ``limits_reached``: max_nodes and max_edges are both used up (nothing more can be added)
- ``stuck``: ``stuck_after`` iterations in a row accepted no action
- ``budget_exhausted``: the token/cost budget does not allow another agent call
- ``agent_error``: the agent failed after its retries
- ``awaiting_review``: ``config.review`` is on and the turn's actions wait as a pending plan
  (``RunResult.review``); the session stays open: ``igg review`` decides the plan, ``igg resume`` continues
  after the decision
"""

STOP_REASONS: tuple[str, ...] = (
    "finished",
    "max_iterations",
    "limits_reached",
    "stuck",
    "budget_exhausted",
    "agent_error",
    "awaiting_review",
)

EventKind = Literal[
    "run_started", "iteration_started", "action_verdict", "iteration_finished", "run_finished"
]
"""Events of a run, in this order: ``run_started``; per iteration ``iteration_started``, one
``action_verdict`` per action, ``iteration_finished``; finally ``run_finished`` (with the summary).
An iteration whose agent call fails has ``iteration_started`` and then ``run_finished``."""


@dataclass(kw_only=True)
class Event:
    """Something that happened in a run; progress views, logs and server streams all consume these."""

    kind: EventKind
    session_id: str
    iteration: int = 0
    data: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "session_id": self.session_id, "iteration": self.iteration, **self.data}


@dataclass(kw_only=True)
class Usage:
    """Tokens one agent call spent (``estimated`` when the server did not report them)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    estimated: bool = False
    cost: float | None = None

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def to_dict(self) -> dict[str, Any]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
            "estimated": self.estimated,
            "cost": self.cost,
        }


@dataclass(kw_only=True)
class IterationRecord:
    """Everything about one iteration: enough to explain, replay and resume it."""

    iteration: int
    observation_chars: int
    observation_tokens: int
    chunk: str | None = None
    """Label of the context chunk shown (a file path, or ``chunk i/n``); None without context."""
    chunk_cursor: int = 0
    """Position in the walk over the chunks: chunk ``chunk_cursor % count``, pass ``chunk_cursor // count +
    1``."""
    raw_output: str | None = None
    """The agent's raw text (or the JSON of the response object it returned)."""
    output_kind: Literal["text", "object"] = "text"
    """Whether ``raw_output`` is the agent's text or the JSON of a response object it returned."""
    truncated: bool = False
    """The output was cut off: only the actions received whole were applied."""
    reasoning: str = ""
    finished: bool = False
    parse_error: dict[str, str] | None = None
    """{"code": INVALID_JSON|INVALID_RESPONSE, "message": ...} when the turn did not parse."""
    actions: list[Any] = field(default_factory=list)
    """The actions as received (decoded JSON), whole ones only."""
    verdicts: list[Verdict] = field(default_factory=list)
    """One per action."""
    mutations: list[Mutation] = field(default_factory=list)
    """The graph mutations this iteration applied (see ``igg.graph.journal``)."""
    usage: dict[str, Any] | None = None
    timings_ms: dict[str, float] = field(default_factory=dict)
    """observe, reason, act, total."""
    exchange: dict[str, Any] | None = None
    """The raw LLM exchange, when there was one."""

    notes: list[str] = field(default_factory=list)
    """Notes the agent attached to its turn (e.g. a refusal); shown in the next observation."""

    @property
    def accepted(self) -> int:
        """Actions accepted."""
        return sum(1 for v in self.verdicts if v.accepted)

    @property
    def rejected(self) -> int:
        """Actions rejected."""
        return sum(1 for v in self.verdicts if not v.accepted)

    @property
    def advances(self) -> bool:
        """Whether the walk moves to the next chunk after this iteration (the turn parsed and was whole)."""
        return self.parse_error is None and not self.truncated

    def rejected_by_code(self) -> dict[str, int]:
        """Rejected actions counted by error code."""
        return dict(Counter(str(v.code) for v in self.verdicts if not v.accepted))

    def to_dict(self, *, mutations: bool = True) -> dict[str, Any]:
        """JSON-ready form (one line of ``records.jsonl``; what the session store keeps, which files the
        mutations apart: ``mutations=False`` leaves them out)."""
        data = {
            "iteration": self.iteration,
            "observation_chars": self.observation_chars,
            "observation_tokens": self.observation_tokens,
            "chunk": self.chunk,
            "chunk_cursor": self.chunk_cursor,
            "raw_output": self.raw_output,
            "output_kind": self.output_kind,
            "truncated": self.truncated,
            "reasoning": self.reasoning,
            "finished": self.finished,
            "parse_error": self.parse_error,
            "actions": self.actions,
            "verdicts": [v.to_dict() for v in self.verdicts],
            "mutations": [m.to_dict() for m in self.mutations] if mutations else None,
            "usage": self.usage,
            "timings_ms": self.timings_ms,
            "exchange": self.exchange,
            "notes": self.notes,
        }
        if not mutations:
            del data["mutations"]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> IterationRecord:
        """The inverse of ``to_dict``."""
        fields = dict(data)
        fields["verdicts"] = [verdict_from_dict(v) for v in data.get("verdicts", [])]
        fields["mutations"] = [read_mutation(m) for m in data.get("mutations", [])]
        return cls(**fields)


def verdict_from_dict(data: dict[str, Any]) -> Verdict:
    """A ``Verdict`` from its ``to_dict`` form."""
    code = data.get("code")
    warning = data.get("warning")
    return Verdict(
        data["index"],
        data["action"],
        data["accepted"],
        ErrorCode(code) if code else None,
        data["message"],
        data.get("element"),
        ErrorCode(warning) if warning else None,
    )


@dataclass(kw_only=True)
class RunResult:
    """How a run ended: the stop reason, the final graph, every iteration's record, and the counts."""

    session_id: str
    stop_reason: StopReason
    state: GraphState
    """The final graph (after finalization)."""
    records: list[IterationRecord] = field(default_factory=list)
    """Every iteration of the session, prior ones of a resumed run included."""
    error: str | None = None
    """Why the agent failed (agent_error, budget_exhausted)."""
    open_todos: list[str] = field(default_factory=list)
    """Completeness rules still unmet at the end."""
    pruned: list[dict[str, Any]] = field(default_factory=list)
    """Isolated nodes removed by finalization: ``{"id", "type", "properties"}``."""
    final_mutations: list[Mutation] = field(default_factory=list)
    """The mutations finalization applied (pruning), for the session store."""
    exports: list[dict[str, Any]] = field(default_factory=list)
    """What was exported after the run (filled by whoever exports)."""
    export_error: ExportError | None = None
    """Why an export failed, when one did (``exports`` still holds every export's summary)."""
    review: dict[str, Any] | None = None
    """The plan waiting for review when the run stopped with ``awaiting_review``: ``iteration``,
    ``reasoning``, ``actions``, ``verdicts`` (as if applied), ``accepted``, ``rejected``, ``finished`` (the
    agent's word, which an approval keeps) (the store adds ``plan_id``)."""
    max_nodes: int = 0
    max_edges: int = 0
    elapsed_ms: float = 0.0
    """Wall time of this run call."""
    lost_usage: dict[str, Any] | None = None
    """What the agent's calls spent in a turn that never came (it failed after its retries): no iteration
    records it, and ``tokens`` counts it."""

    steps: list[UpdateStep] = field(default_factory=list)
    """The planned steps this run applied beside its iterations (a fresh static code map is one:
    ``igg.mapping.static``); their changes count as actions accepted."""

    @property
    def iterations(self) -> int:
        """The number of the last iteration or planned step that ran (0 when none did)."""
        return max(
            self.records[-1].iteration if self.records else 0, self.steps[-1].iteration if self.steps else 0
        )

    def action_counts(self) -> dict[str, Any]:
        """proposed, accepted, rejected, rejected_by_code over every iteration."""
        by_code: Counter[str] = Counter()
        accepted = rejected = 0
        for r in self.records:
            for v in r.verdicts:
                if v.accepted:
                    accepted += 1
                else:
                    rejected += 1
                    by_code[str(v.code)] += 1
        accepted += sum(sum(step.changes.values()) for step in self.steps)
        return {
            "proposed": accepted + rejected,
            "accepted": accepted,
            "rejected": rejected,
            "rejected_by_code": dict(sorted(by_code.items())),
        }

    def token_counts(self) -> dict[str, Any]:
        """Tokens the agent spent (from its usage reports, the turn held for review included) and the
        estimated tokens of the observations."""
        prompt = completion = 0
        estimated = False
        cost = None
        usages = [r.usage for r in self.records] + [
            self.review.get("usage") if self.review else None,
            self.lost_usage,
        ]
        for usage in usages:
            u = usage or {}
            prompt += u.get("prompt_tokens", 0)
            completion += u.get("completion_tokens", 0)
            estimated = estimated or bool(u.get("estimated"))
            if u.get("cost") is not None:
                cost = (cost or 0.0) + u["cost"]
        out: dict[str, Any] = {
            "prompt": prompt,
            "completion": completion,
            "total": prompt + completion,
            "estimated": estimated,
            "observations": sum(r.observation_tokens for r in self.records),
        }
        if cost is not None:
            out["cost"] = round(cost, 6)
        return out

    def to_dict(self) -> dict[str, Any]:
        """Same as ``summary()``."""
        return self.summary()

    def summary(self) -> dict[str, Any]:
        """The ``igg run --json`` object (see DESIGN.md)."""
        invalid = Counter(r.parse_error["code"] for r in self.records if r.parse_error)
        out: dict[str, Any] = {
            "session_id": self.session_id,
            "stop_reason": self.stop_reason,
            "iterations": self.iterations,
            "nodes": self.state.node_count,
            "edges": self.state.edge_count,
            "actions": self.action_counts(),
            "invalid_turns": dict(sorted(invalid.items())),
            "truncated_turns": sum(1 for r in self.records if r.truncated),
            "tokens": self.token_counts(),
            "open_todos": list(self.open_todos),
            "pruned": list(self.pruned),
            "grounding": grounding_counts(self.state),
            "exports": list(self.exports),
            "elapsed_ms": round(self.elapsed_ms, 1),
        }
        if self.error:
            out["error"] = self.error
        if self.review is not None:
            out["review"] = self.review
        return out


def transcript_line(record: IterationRecord) -> dict[str, Any] | None:
    """The transcript turn that replays an ``IterationRecord`` exactly (None when it has no output)."""
    if record.raw_output is None:
        return None
    if record.output_kind == "object" and not record.truncated and not record.usage:
        try:
            value = json.loads(record.raw_output)
        except ValueError:
            value = None
        if isinstance(value, dict) and "raw" not in value:
            return value
    line: dict[str, Any] = {"raw": record.raw_output}
    if record.truncated:
        line["truncated"] = True
    if record.usage:
        line["usage"] = {
            k: record.usage[k]
            for k in ("prompt_tokens", "completion_tokens", "estimated", "cost")
            if record.usage.get(k) is not None
        }
    return line
