"""IGG, the Iterative Graph Generator: a validated, bounded graph workspace that agents build step by step.

The public API; everything here is documented in the docs (docs/reference.md).

The names are imported on first use (PEP 562's module ``__getattr__``): ``import igg`` costs no more than
the interpreter's own start-up, and ``from igg import run`` imports only what ``run`` needs. The type checker
reads the same names from the ``TYPE_CHECKING`` block below, and ``tests/unit/test_start.py`` pins what
``import igg`` may import.
"""

import typing

from igg.io.lazy import lazy_names as _lazy_names

if typing.TYPE_CHECKING:
    from igg.act import Actor
    from igg.agents import Agent, AgentCapabilities, AgentTurn, AsyncAgent, Observation, Usage
    from igg.agents.parsing import parse_turn
    from igg.agents.registry import make_agent
    from igg.agents.scripted import ScriptedAgent
    from igg.engine.loop import Loop, RunStream, arun, astream, run, stream
    from igg.errors import (
        AgentFailed,
        AgentUnavailable,
        BudgetExhausted,
        ExportError,
        IGGError,
        Problem,
        RequestInvalid,
        ResponseInvalid,
        SessionBusy,
        SessionError,
        SessionExists,
        SessionNotFound,
        SessionRefused,
        WorkspaceError,
    )
    from igg.export import ExportSpec, document_to_state, load_document, parse_export_spec, perform_exports
    from igg.graph import GraphState, Mutation
    from igg.models import (
        AgentResponse,
        ErrorCode,
        GraphDocument,
        Request,
        Schema,
        Verdict,
        read_response,
    )
    from igg.persistence import Recorder, SessionInfo, SessionRepo
    from igg.persistence.memory import MemorySessions
    from igg.record.records import STOP_REASONS, Event, IterationRecord, RunResult, StopReason
    from igg.request.load import build_state, check_request, load_request
    from igg.service import acontinue_session, arun_request, continue_session, export_session, run_request
    from igg.store import SessionRecorder, SessionStore, StoreSessions, resume_point

__all__ = [
    "STOP_REASONS",
    "Actor",
    "Agent",
    "AgentCapabilities",
    "AgentFailed",
    "AgentResponse",
    "AgentTurn",
    "AgentUnavailable",
    "AsyncAgent",
    "BudgetExhausted",
    "ErrorCode",
    "Event",
    "ExportError",
    "ExportSpec",
    "GraphDocument",
    "GraphState",
    "IGGError",
    "IterationRecord",
    "Loop",
    "MemorySessions",
    "Mutation",
    "Observation",
    "Problem",
    "Recorder",
    "Request",
    "RequestInvalid",
    "ResponseInvalid",
    "RunResult",
    "RunStream",
    "Schema",
    "ScriptedAgent",
    "SessionBusy",
    "SessionError",
    "SessionExists",
    "SessionInfo",
    "SessionNotFound",
    "SessionRecorder",
    "SessionRefused",
    "SessionRepo",
    "SessionStore",
    "StopReason",
    "StoreSessions",
    "Usage",
    "Verdict",
    "WorkspaceError",
    "acontinue_session",
    "arun",
    "arun_request",
    "astream",
    "build_state",
    "check_request",
    "continue_session",
    "document_to_state",
    "export_session",
    "load_document",
    "load_request",
    "make_agent",
    "parse_export_spec",
    "parse_turn",
    "perform_exports",
    "read_response",
    "resume_point",
    "run",
    "run_request",
    "stream",
]

_HOME: dict[str, str] = {
    "Actor": "igg.act",
    "Agent": "igg.agents",
    "AgentCapabilities": "igg.agents",
    "AgentTurn": "igg.agents",
    "AsyncAgent": "igg.agents",
    "Observation": "igg.agents",
    "Usage": "igg.agents",
    "parse_turn": "igg.agents.parsing",
    "make_agent": "igg.agents.registry",
    "ScriptedAgent": "igg.agents.scripted",
    "Loop": "igg.engine.loop",
    "RunStream": "igg.engine.loop",
    "arun": "igg.engine.loop",
    "astream": "igg.engine.loop",
    "run": "igg.engine.loop",
    "stream": "igg.engine.loop",
    "AgentFailed": "igg.errors",
    "AgentUnavailable": "igg.errors",
    "BudgetExhausted": "igg.errors",
    "ExportError": "igg.errors",
    "IGGError": "igg.errors",
    "Problem": "igg.errors",
    "RequestInvalid": "igg.errors",
    "ResponseInvalid": "igg.errors",
    "SessionBusy": "igg.errors",
    "SessionError": "igg.errors",
    "SessionExists": "igg.errors",
    "SessionNotFound": "igg.errors",
    "SessionRefused": "igg.errors",
    "WorkspaceError": "igg.errors",
    "ExportSpec": "igg.export",
    "document_to_state": "igg.export",
    "load_document": "igg.export",
    "parse_export_spec": "igg.export",
    "perform_exports": "igg.export",
    "GraphState": "igg.graph",
    "Mutation": "igg.graph",
    "AgentResponse": "igg.models",
    "ErrorCode": "igg.models",
    "GraphDocument": "igg.models",
    "Request": "igg.models",
    "Schema": "igg.models",
    "Verdict": "igg.models",
    "read_response": "igg.models",
    "Recorder": "igg.persistence",
    "SessionInfo": "igg.persistence",
    "SessionRepo": "igg.persistence",
    "MemorySessions": "igg.persistence.memory",
    "STOP_REASONS": "igg.record.records",
    "Event": "igg.record.records",
    "IterationRecord": "igg.record.records",
    "RunResult": "igg.record.records",
    "StopReason": "igg.record.records",
    "build_state": "igg.request.load",
    "check_request": "igg.request.load",
    "load_request": "igg.request.load",
    "acontinue_session": "igg.service",
    "arun_request": "igg.service",
    "continue_session": "igg.service",
    "export_session": "igg.service",
    "run_request": "igg.service",
    "SessionRecorder": "igg.store",
    "SessionStore": "igg.store",
    "StoreSessions": "igg.store",
    "resume_point": "igg.store",
}
"""The module each public name lives in."""


__getattr__ = _lazy_names(__name__, _HOME)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
