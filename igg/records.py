"""What a run produces: stop reasons, iteration records, events, and the run result."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

StopReason = Literal["finished", "max_iterations", "limits_reached", "stuck", "budget_exhausted", "agent_error"]
"""Why a run ended; every run ends with exactly one.

- ``finished``: the agent said ``"finished": true`` (or every completeness rule is met with stop_when_complete)
- ``max_iterations``: the hard iteration guard
- ``limits_reached``: max_nodes and max_edges are both used up (nothing more can be added)
- ``stuck``: ``stuck_after`` iterations in a row accepted no action
- ``budget_exhausted``: the token/cost budget does not allow another agent call
- ``agent_error``: the agent failed after its retries
"""

STOP_REASONS: tuple[str, ...] = ("finished", "max_iterations", "limits_reached", "stuck", "budget_exhausted",
                                 "agent_error")

EventKind = Literal["run_started", "iteration_started", "action_verdict", "iteration_finished", "run_finished"]


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
class IterationRecord:
    """Everything about one iteration: enough to explain, replay and resume it."""

    iteration: int
    observation_chars: int
    observation_tokens: int
    chunk: str | None = None
    raw_output: str | None = None
    """The agent's raw text (or the JSON of the response object it returned)."""
    reasoning: str = ""
    finished: bool = False
    parse_error: dict[str, str] | None = None
    """{"code": INVALID_JSON|INVALID_RESPONSE, "message": ...} when the turn did not parse."""
    actions: list[Any] = field(default_factory=list)
    """The actions as received (decoded JSON), whole ones only."""
    verdicts: list[Any] = field(default_factory=list)
    """``Verdict`` objects, one per action."""
    mutations: list[dict[str, Any]] = field(default_factory=list)
    """The graph mutations this iteration applied (see ``igg.graph.state``)."""
    usage: dict[str, Any] | None = None
    timings_ms: dict[str, float] = field(default_factory=dict)
    """observe, reason, act, total."""
    exchange: dict[str, Any] | None = None
    """The raw LLM exchange, when there was one."""

    @property
    def accepted(self) -> int:
        return sum(1 for v in self.verdicts if v.accepted)

    @property
    def rejected(self) -> int:
        return sum(1 for v in self.verdicts if not v.accepted)
