"""IGG, the Iterative Graph Generator: a validated, bounded graph workspace that agents build step by step.

The public API; everything here is documented in README.md.
"""

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
