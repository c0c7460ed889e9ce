"""The public surface: ``igg.__all__`` is exactly this list, and every name in it resolves."""

from __future__ import annotations

import igg

PUBLIC = [
    "STOP_REASONS", "Actor", "Agent", "AgentCapabilities", "AgentFailed", "AgentResponse", "AgentTurn",
    "AgentUnavailable", "AsyncAgent", "BudgetExhausted",
    "ErrorCode", "Event", "ExportError", "ExportSpec", "GraphDocument", "GraphState", "IGGError", "IterationRecord",
    "Loop", "MemorySessions", "Mutation", "Observation", "Problem", "Recorder", "Request", "RequestInvalid", "ResponseInvalid",
    "RunResult", "RunStream", "Schema", "ScriptedAgent", "SessionBusy", "SessionError", "SessionExists",
    "SessionInfo", "SessionNotFound", "SessionRecorder", "SessionRefused", "SessionRepo", "SessionStore",
    "StopReason", "StoreSessions", "Usage", "Verdict", "WorkspaceError", "acontinue_session", "arun",
    "arun_request", "astream", "build_state", "check_request", "continue_session", "document_to_state",
    "export_session", "load_document", "load_request", "make_agent", "parse_export_spec", "parse_turn",
    "perform_exports", "read_response", "resume_point", "run", "run_request", "stream",
]


def test_the_public_names_are_pinned():
    assert igg.__all__ == PUBLIC


def test_every_public_name_resolves_and_nothing_public_is_unlisted():
    assert all(getattr(igg, name) is not None for name in PUBLIC)
    exported = {n for n in vars(igg) if not n.startswith("_") and not isinstance(getattr(igg, n), type(igg))}
    assert exported == set(PUBLIC)
