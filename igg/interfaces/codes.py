"""How the interfaces answer an error: one table for HTTP statuses, one for command-line exit codes.

Domain errors (``igg.errors``) carry what went wrong and its context; which status or exit code that means
is the interface's business, decided here and nowhere else.
"""

from __future__ import annotations

from igg.errors import IGGError, RequestInvalid, SessionRefused, WorkspaceCode, WorkspaceError

HTTP_STATUS: dict[str, int] = {
    WorkspaceCode.INVALID_REQUEST: 422,
    WorkspaceCode.INVALID_ARGUMENTS: 422,
    WorkspaceCode.INVALID_RULES: 422,
    WorkspaceCode.SESSION_NOT_FOUND: 404,
    WorkspaceCode.NOT_FOUND: 404,
    WorkspaceCode.NO_SUCH_ITERATION: 404,
    WorkspaceCode.SESSION_EXISTS: 409,
    WorkspaceCode.SESSION_BUSY: 409,
    WorkspaceCode.SESSION_FINISHED: 409,
    WorkspaceCode.MAX_ITERATIONS_REACHED: 409,
    WorkspaceCode.REVIEW_PENDING: 409,
    WorkspaceCode.REVIEW_STALE: 409,
    WorkspaceCode.NO_PENDING_REVIEW: 409,
    WorkspaceCode.HISTORY_UNAVAILABLE: 409,
    WorkspaceCode.STORE_ERROR: 409,
    WorkspaceCode.EXPORT_FAILED: 502,
    WorkspaceCode.TOO_MANY_ACTIONS: 413,
    WorkspaceCode.PATH_FORBIDDEN: 403,
    WorkspaceCode.INSECURE_BIND: 403,
    WorkspaceCode.AGENT_UNAVAILABLE: 503,
}
"""The HTTP status of each workspace error code (MCP tools report the code itself); a verdict code (a QUERY or
an action that cannot be read: ``igg.models.verdicts.ErrorCode``) is 422."""


def http_status(error: WorkspaceError) -> int:
    """The HTTP status for ``error``: the table's (507 for an export that found the disk full); 422 for a
    verdict code."""
    if error.disk_full:
        return 507
    return HTTP_STATUS.get(error.code, 422)


EXIT_OK, EXIT_FAILURE, EXIT_INVALID, EXIT_BROKEN_PIPE, EXIT_INTERRUPTED = 0, 1, 2, 141, 130

EXIT_CODES: tuple[tuple[int, str], ...] = (
    (
        EXIT_OK,
        "the command did its work; a run reached a graceful stop (finished, max_iterations, "
        "limits_reached, stuck, budget_exhausted)",
    ),
    (
        EXIT_FAILURE,
        "a run stopped with agent_error (e.g. an unreachable LLM), an export failed, or another "
        "failure after the work began",
    ),
    (
        EXIT_INVALID,
        "invalid input found before any work: a bad request, option, transcript or --export target, "
        "an agent without its endpoint, a session that cannot be served as asked, a busy port",
    ),
    (
        EXIT_INTERRUPTED,
        "interrupted (Ctrl-C / SIGINT); what the run had is kept, and the message says how to resume it",
    ),
    (EXIT_BROKEN_PIPE, "the reader of standard output went away (`igg show ... | head`)"),
)
"""Every exit code of ``igg`` and what it means (the README's table says the same)."""

GRACEFUL_STOPS = frozenset(
    {"finished", "max_iterations", "limits_reached", "stuck", "budget_exhausted", "awaiting_review"}
)
"""Stop reasons of a run that exits 0 (every other one, ``agent_error``, exits 1)."""


def run_exit_code(stop_reason: str, *, export_failed: bool = False) -> int:
    """The exit code of a run that ended with ``stop_reason``: 0 for a graceful stop, 1 for ``agent_error``
    or when an export failed."""
    if export_failed or stop_reason not in GRACEFUL_STOPS:
        return EXIT_FAILURE
    return EXIT_OK


def _exit_codes() -> tuple[tuple[type[BaseException], int], ...]:
    from igg.agents.llm_settings import EndpointNotConfigured
    from igg.agents.local import LocalModelUnavailable

    return (
        (RequestInvalid, EXIT_INVALID),  # invalid input found before any work
        (SessionRefused, EXIT_INVALID),  # a session asked for that cannot be served as asked
        (EndpointNotConfigured, EXIT_INVALID),  # a setting the user must supply
        (LocalModelUnavailable, EXIT_INVALID),  # no usable local model file or runtime
        (IGGError, EXIT_FAILURE),
    )


def exit_code(error: BaseException) -> int:
    """The command line's exit code for an error that ended a command (first matching row of the table)."""
    for kind, code in _exit_codes():
        if isinstance(error, kind):
            return code
    return EXIT_FAILURE


__all__ = [
    "EXIT_BROKEN_PIPE",
    "EXIT_CODES",
    "EXIT_FAILURE",
    "EXIT_INTERRUPTED",
    "EXIT_INVALID",
    "EXIT_OK",
    "GRACEFUL_STOPS",
    "HTTP_STATUS",
    "exit_code",
    "http_status",
    "run_exit_code",
]
