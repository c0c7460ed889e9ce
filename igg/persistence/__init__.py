"""The one persistence seam: where a session's progress is kept as the engine makes it.

The engine (``igg.engine.loop.Loop`` and the workspace's tool calls, both through ``igg.act.step``) produces
one record type, ``IterationRecord``, and hands it to ``Recorder``s:

* ``begin(request, state, records)`` once before the first iteration of this process (``records``: the
  iterations a resumed session already has; calling ``begin`` again on the same recorder does nothing);
* ``record(record)`` after every iteration (its mutations are in ``record.mutations``: the graph after it
  equals the graph before plus those);
* ``keep(step, mutations, state)`` for every other step (``igg.record.steps``: a review plan or decision, a
  code map's update), with its mutations;
* ``finish(result)`` once at the end (finalization mutations in ``result.final_mutations``).

``igg.session.Session`` is what calls them: it owns a session in progress, and its methods are the only ways a
session changes.

A ``SessionRepo`` is a place that keeps many sessions and reads them back: it hands out ``Recorder``s,
``load``s and lists sessions, and answers from their history (``undo``, ``fork``, ``explain``, ``diff``; a
repository that keeps no history raises ``HistoryUnavailable``). Implementations: ``igg.store.StoreSessions``
(the durable SQLite store), ``igg.persistence.memory.MemorySessions`` (this process only).
``igg.persistence.rundir.RunDirectory`` (``--out DIR``) is a ``Recorder`` only: it writes files and reads
nothing back.

Every session is described by one ``SessionInfo`` whose ``status`` is one of ``SESSION_STATUSES``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, get_args

if TYPE_CHECKING:
    from igg.graph.journal import Mutation
    from igg.graph.state import GraphState
    from igg.models.request import Request
    from igg.record.history import Change, Touch
    from igg.record.records import Event, IterationRecord, RunResult
    from igg.record.steps import ReviewPlan, StepRecord, UndoStep

SessionStatus = Literal["open", "running", "interrupted", "awaiting_review", "finished"]
"""The one set of status words for a session, wherever it is kept:

- ``open``: a session an outside agent drives through tool calls (agent ``tool``), accepting actions;
- ``running``: a run whose writing process is alive;
- ``interrupted``: a run that stopped before finishing (its process is gone): ``igg resume`` continues it;
- ``awaiting_review``: ``config.review`` holds a plan of actions for a reviewer (``igg review``, the
  ``review`` tool); the session takes no other change until it is decided;
- ``finished``: ended with a stop reason; read-only.
"""

SESSION_STATUSES: tuple[str, ...] = get_args(SessionStatus)

TOOL_AGENT = "tool"
"""The agent name recorded for sessions an outside agent drives through the workspace (MCP, HTTP, Python)."""


@dataclass(kw_only=True)
class SessionInfo:
    """One session as listed (``igg sessions``, ``list_sessions``)."""

    session_id: str
    goal: str
    status: SessionStatus
    stop_reason: str | None = None
    agent: str | None = None
    """The agent spec the session runs with (``tool`` for workspace sessions; ``script:PATH``, ``llm``,
    ...)."""
    options: dict[str, Any] = field(default_factory=dict)
    created_at: float = 0.0
    updated_at: float = 0.0
    last_step: int = 0
    """Steps committed (iterations, undos, the finalize step)."""
    last_iteration: int = 0
    nodes: int = 0
    edges: int = 0
    owner: str | None = None
    """``host:pid:nonce`` of the process writing the session (durable stores)."""
    result: dict[str, Any] | None = None
    """The run summary of a finished session."""

    @property
    def iteration(self) -> int:
        """The last iteration committed (0 before the first)."""
        return self.last_iteration

    def to_dict(self) -> dict[str, Any]:
        """The listing form the workspace operations return (MCP ``list_sessions``, HTTP ``GET
        /sessions``)."""
        return {
            "session_id": self.session_id,
            "goal": self.goal,
            "status": self.status,
            "iteration": self.last_iteration,
            "nodes": self.nodes,
            "edges": self.edges,
            "stop_reason": self.stop_reason,
            "created": rfc3339(self.created_at),
            "updated": rfc3339(self.updated_at),
        }


def rfc3339(seconds: float) -> str:
    """Epoch seconds as an RFC 3339 UTC timestamp with milliseconds (``2026-11-23T18:02:51.123Z``)."""
    from datetime import UTC, datetime

    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(kw_only=True)
class LoadedSession:
    """A session read back: its request, its graph as the last committed step left it, its records."""

    request: Request
    info: SessionInfo
    state: GraphState
    last_record: IterationRecord | None = None
    """The last committed iteration (its verdicts are what the agent is shown next)."""
    read_records: Callable[[], list[IterationRecord]] = list
    """Every committed iteration, in order: read when called (a store reads every step then)."""
    pending: ReviewPlan | None = None
    """The plan waiting for review, when the last step is one."""
    review_note: str | None = None
    """The note of a rejection, when the last step is one."""
    plans: int = 0
    """Review plans proposed so far (the next is numbered ``plans + 1``)."""

    @property
    def records(self) -> list[IterationRecord]:
        """Every committed iteration, in order (``read_records()``)."""
        return self.read_records()


class Recorder(Protocol):
    """Where one session's progress is kept as it happens (see the module docstring)."""

    def begin(self, request: Request, state: GraphState, records: list[IterationRecord]) -> None:
        """Register the session (or take over the resumed one); idempotent per recorder."""

    def record(self, record: IterationRecord) -> None:
        """Keep one finished iteration."""

    def keep(
        self, step: StepRecord, mutations: Sequence[Mutation], state: GraphState, *, snapshot: bool = False
    ) -> None:
        """Keep a step other than an iteration (its mutations; ``snapshot``: a large change, worth a
        snapshot)."""

    def finish(self, result: RunResult) -> None:
        """Keep the end of the session: final mutations, stop reason, summary."""


class SessionRepo(Protocol):
    """A place that keeps many sessions. Implementations must be safe to call from several threads."""

    def recorder(
        self,
        *,
        agent: str | None = None,
        options: Mapping[str, Any] | None = None,
        force: bool = False,
        resume: bool = False,
        shared: bool = False,
        last_step: int = 0,
    ) -> Recorder:
        """A recorder for one session: ``begin`` creates it (``resume``: takes over an existing one;
        ``force``: replaces one of the same id, or takes over a session whose writer looks alive). ``shared``:
        a writer among several processes (servers on one store): it takes nothing over; each write checks that
        the session is still at ``last_step`` (its version when loaded) and raises ``SessionConflict`` when
        another process wrote it since."""

    def load(
        self, session_id: str, *, elements: Collection[str] | None = None, request: Request | None = None
    ) -> LoadedSession:
        """The whole session; ``SessionNotFound`` when there is none. ``elements``: the only nodes and edges
        the caller will read or change (a code map's update whose files kept their facts but for lines moved):
        a repository may load those alone, counted with the rest (``igg.graph.partial.PartialState``), or the
        whole graph. ``request``: the session's request, when the caller loaded it already (a repository need
        not read it again)."""

    def sessions(self, status: SessionStatus | None = None, limit: int = 100) -> list[SessionInfo]:
        """Sessions, most recently updated first."""

    def version(self, session_id: str) -> int | None:
        """A number that changes whenever a step of the session is stored, by any process (the last step's
        number); None when only this process can change the session (memory)."""

    def events_since(self, session_id: str, step: int) -> list[tuple[int, list[Event]]]:
        """The events of the iterations stored after ``step`` (by any process), per step: ``(step, events)``
        with each action's verdict and the ``iteration_finished`` counts; none where only this process writes
        (memory)."""

    def claim(self, session_id: str) -> None:
        """Mark the session as driven by this process (an autonomous run) until ``release``: other processes'
        shared writers are refused meanwhile (``SessionBusy``); refused itself when another live process
        drives it."""

    def release(self, session_id: str) -> None:
        """End this process's ``claim`` (the run stopped or waits for review)."""

    def undo(self, session_id: str, to_iteration: int) -> UndoStep:
        """Roll the session back to after ``to_iteration`` as an ``undo`` step (``HistoryUnavailable`` without
        history)."""

    def fork(self, session_id: str, at: int, new_id: str | None = None) -> tuple[str, int]:
        """A new session continuing from after iteration ``at``: (its id, the steps copied)."""

    def explain(self, session_id: str, ref: str, *, edges: bool = True) -> list[Touch]:
        """Every step that touched the element ``ref``."""

    def diff(self, session_id: str, a: int, b: int) -> list[Change]:
        """The net changes between two iterations."""


__all__ = [
    "SESSION_STATUSES",
    "TOOL_AGENT",
    "LoadedSession",
    "Recorder",
    "SessionInfo",
    "SessionRepo",
    "SessionStatus",
]
