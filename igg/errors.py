"""IGG's exception tree. Every error IGG raises on purpose is an ``IGGError``::

    IGGError
    ├── RequestInvalid        a request payload, seed graph or document breaks the contract
    ├── ResponseInvalid       an agent turn could not be parsed (INVALID_JSON/INVALID_RESPONSE)
    ├── AgentFailed           the agent could not produce a turn after its retries (stop reason agent_error)
    ├── AgentUnavailable      the agent cannot be built here (module missing, nothing fits --agent auto)
    │   ├── EndpointNotConfigured  (igg.agents.llm_settings) an LLM agent without its endpoint/model settings
    │   └── LocalModelUnavailable  (igg.agents.local) no usable local model file or llama.cpp runtime
    ├── BudgetExhausted       the next agent call would overspend the token/cost budget (budget_exhausted)
    ├── SessionError          a session store problem (carries ``session_id`` when one is concerned)
    │   ├── SessionRefused    asked for something the store cannot do as asked (exit 2)
    │   │   ├── SessionNotFound   no such session
    │   │   ├── SessionExists     the session id is taken
    │   │   └── HistoryUnavailable  undo, fork, explain or diff where sessions are kept without history
    │   └── SessionBusy       another live process writes the session
    │       └── SessionConflict  another process stored a step since this one loaded the session (retry)
    ├── ExportError           an export could not be written (bad target, unreachable server, bad credentials)
    │   ├── ExportsFailed     some exports of a set failed: ``failures`` (format, reason), ``summaries``
    │   ├── PathRefused       (igg.io.files) IGG will not write this path (outside its folder, a special file)
    │   ├── StaleMarker       (igg.export.neo4j.sync) another exporter wrote the scope between plan and write
    │   └── WriteFailed       (igg.io.files) the operating system failed the write; carries ``errno``
    ├── WorkspaceError        a tool call (MCP, HTTP, Python) cannot be served; carries a stable ``code``
    └── SessionFailed         (igg.batch.tasks) a batch session could not run on its worker (picklable)

Raised and caught inside one module, never reaching a caller (drawn here so the tree is whole; private
control-flow exceptions such as ``igg.agents.parsing._Cut`` are left out):

    ValueError
    ├── QueryError            (igg.observe.query) a QUERY cannot be answered; ``code`` becomes the verdict's
    └── TimeError             (igg.models.validtime) a text that is no ISO 8601 time; the act step makes it
                              INVALID_TIME, the commands a one-line refusal naming the option
    Exception
    ├── CallTimedOut          (igg.agents.retry) an LLM call missed its whole-call deadline (retried)
    ├── AnswerUnreadable      (igg.agents.retry) a 200 answer that is not a JSON object (retried)
    ├── OntologyError         (igg.ontology.model) an ontology that cannot be imported; the commands that read
    │                         one say why in one line (exit 2)
    └── BoundReached          (igg.rules.bounds) a check reached a bound of its work; ``igg.rules.check``
                              stops there and reports ``truncated``

Rejected *actions* are not exceptions: they are verdicts (``igg.models.verdicts.Verdict``); an action that
could not be read is an ``igg.models.actions.UnreadableAction`` in its slot, which becomes such a verdict.
HTTP statuses and exit codes are not attributes of these errors: ``igg.interfaces.codes`` maps them, one
table each.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class IGGError(Exception):
    """Root of every error IGG raises on purpose; its message is fit to show a person."""


@dataclass(frozen=True, slots=True)
class Problem:
    """One problem found in an input, located by a JSON path such as ``config.constraints.max_nodes``."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path or '(root)'}: {self.message}"


class RequestInvalid(IGGError):
    """A request (or seed graph, or saved document) breaks the contract; ``problems`` lists every problem."""

    def __init__(self, problems: list[Problem], *, source: str = "request") -> None:
        self.problems = problems
        self.source = source
        lines = "\n".join(f"  - {p}" for p in problems)
        super().__init__(
            f"{source} is invalid ({len(problems)} problem{'s' * (len(problems) != 1)}):\n{lines}"
        )


class ResponseInvalid(IGGError):
    """An agent turn could not be read as a response; ``code`` is INVALID_JSON or INVALID_RESPONSE."""

    def __init__(self, code: str, message: str) -> None:
        self.code = code
        self.message = message
        super().__init__(f"{code}: {message}")


class AgentFailed(IGGError):
    """The agent failed to produce a turn after its retries; the run stops with ``agent_error``."""

    usage: dict[str, Any] | None = None
    """What its failed calls spent (``prompt_tokens``, ``completion_tokens``, ``estimated``, ``cost``), when
    they may have spent anything: the run counts it although no turn came of it."""
    attempts: list[dict[str, Any]] | None = None
    """The failed calls of an LLM agent, in order: each one's ``error``, ``status`` and ``at_ms`` (when it
    failed, in ms since the turn's first call began, by the agent's clock)."""


class AgentUnavailable(IGGError):
    """The chosen agent cannot be built in this installation or environment; the message says what to do."""


class BudgetExhausted(IGGError):
    """The token or cost budget does not allow another agent call; the run stops with ``budget_exhausted``."""

    usage: dict[str, Any] | None = None
    """What the turn's failed attempts spent before the budget stopped its retries (as
    ``AgentFailed.usage``)."""


class SessionError(IGGError):
    """A session store problem: an unknown session, a session that already exists, a damaged store."""

    def __init__(self, message: str, *, session_id: str | None = None) -> None:
        self.session_id = session_id
        super().__init__(message)


class SessionRefused(SessionError):
    """A session request that cannot be honoured as asked: an unknown session or iteration, an id that is
    already taken, a finished session to resume, a file that is not a store (the command line exits 2)."""


class SessionNotFound(SessionRefused):
    """There is no session with this id (``session_id``) in the store."""


class SessionExists(SessionRefused):
    """A new session's id (``session_id``) is already taken."""


class HistoryUnavailable(SessionRefused):
    """Asked for a session's history (undo, fork, explain, diff) where sessions are kept without it
    (memory)."""


class SessionBusy(SessionError):
    """Another live process is writing the session (``session_id``)."""


class SessionConflict(SessionBusy):
    """Another process stored a step of the session (``session_id``) after this one loaded it: load it again
    and retry (the workspace does so once by itself)."""


class ExportError(IGGError):
    """An export could not be completed; the message says what to fix (target, server, credentials)."""


class ExportsFailed(ExportError):
    """Some exports of a set failed (every export is attempted): ``failures`` pairs each failed format with
    its reason, ``summaries`` holds the summary of every export of the set (``ok`` true/false)."""

    def __init__(self, failures: list[tuple[str, str]], summaries: list[dict[str, Any]]) -> None:
        self.failures = failures
        self.summaries = summaries
        super().__init__("; ".join(f"{fmt}: {reason}" for fmt, reason in failures))

    @property
    def reasons(self) -> str:
        """The failures' reasons without their formats (for a command that exported one format)."""
        return "; ".join(reason for _, reason in self.failures)


class WorkspaceCode(StrEnum):
    """Every code a workspace refusal carries (beside the verdict codes of ``igg.models.verdicts.ErrorCode``,
    such as ``INVALID_RESPONSE``); each has one HTTP status in ``igg.interfaces.codes.HTTP_STATUS``."""

    INVALID_REQUEST = "INVALID_REQUEST"
    INVALID_ARGUMENTS = "INVALID_ARGUMENTS"
    INVALID_RULES = "INVALID_RULES"
    SESSION_NOT_FOUND = "SESSION_NOT_FOUND"
    NOT_FOUND = "NOT_FOUND"
    NO_SUCH_ITERATION = "NO_SUCH_ITERATION"
    SESSION_EXISTS = "SESSION_EXISTS"
    SESSION_BUSY = "SESSION_BUSY"
    SESSION_FINISHED = "SESSION_FINISHED"
    MAX_ITERATIONS_REACHED = "MAX_ITERATIONS_REACHED"
    TOO_MANY_ACTIONS = "TOO_MANY_ACTIONS"
    REVIEW_PENDING = "REVIEW_PENDING"
    REVIEW_STALE = "REVIEW_STALE"
    NO_PENDING_REVIEW = "NO_PENDING_REVIEW"
    HISTORY_UNAVAILABLE = "HISTORY_UNAVAILABLE"
    STORE_ERROR = "STORE_ERROR"
    PATH_FORBIDDEN = "PATH_FORBIDDEN"
    INSECURE_BIND = "INSECURE_BIND"
    EXPORT_FAILED = "EXPORT_FAILED"
    AGENT_UNAVAILABLE = "AGENT_UNAVAILABLE"


class WorkspaceError(IGGError):
    """A workspace operation (start, observe, apply, finish, export, run, ...) cannot be served.

    ``code`` is a ``WorkspaceCode`` (or a verdict code such as ``INVALID_RESPONSE``): stable, and the only
    thing an interface reads to answer (its HTTP status is ``igg.interfaces.codes.HTTP_STATUS[code]``).
    ``message`` is fit for a remote client: it names no server path and no command to run on the server.
    """

    def __init__(
        self, code: str, message: str, *, disk_full: bool = False, tools: tuple[str, ...] = ()
    ) -> None:
        self.code = code
        self.template = message if tools else message.replace("{", "{{").replace("}", "}}")
        """The message with a ``{}`` where each of ``tools`` is named (every other brace doubled)."""
        self.tools = tools
        """The operations the message points at (``list_sessions`` ...), named by each interface its own
        way."""
        self.message = self.render(lambda tool: tool)
        self.disk_full = disk_full
        """An ``EXPORT_FAILED`` because the server's disk is full (HTTP answers 507 Insufficient Storage)."""
        super().__init__(f"{code}: {self.message}")

    def render(self, name: Callable[[str], str]) -> str:
        """The message with each operation it points at named by ``name`` (MCP: the tool; HTTP: the route)."""
        return self.template.format(*(name(tool) for tool in self.tools))
