"""IGG, the Iterative Graph Generator: a validated, bounded graph workspace that agents build step by step.

The public API; everything here is documented in README.md.
"""

from igg.act import Actor
from igg.agents import AgentTurn, Observation, Usage
from igg.agents.parsing import parse_turn
from igg.agents.registry import make_agent
from igg.agents.scripted import ScriptedAgent
from igg.compile import build_state, check_request, load_request
from igg.errors import (
    AgentFailed,
    AgentUnavailable,
    BudgetExhausted,
    ExportError,
    IGGError,
    Problem,
    RequestInvalid,
    ResponseInvalid,
    SessionError,
)
from igg.export import ExportSpec, document_to_state, load_document, parse_export_spec, perform_exports
from igg.graph import GraphState
from igg.loop import Loop, RunStream, arun, astream, run, stream
from igg.models import (
    AgentResponse,
    ErrorCode,
    GraphDocument,
    Request,
    Schema,
    Verdict,
    read_response,
)
from igg.persistence import Recorder
from igg.records import STOP_REASONS, Event, IterationRecord, RunResult, StopReason
from igg.store import SessionRecorder, SessionStore, resume_point

__all__ = [
    "STOP_REASONS",
    "Actor",
    "AgentFailed",
    "AgentResponse",
    "AgentTurn",
    "AgentUnavailable",
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
    "SessionError",
    "SessionRecorder",
    "SessionStore",
    "StopReason",
    "Usage",
    "Verdict",
    "arun",
    "astream",
    "build_state",
    "check_request",
    "document_to_state",
    "load_document",
    "load_request",
    "make_agent",
    "parse_export_spec",
    "parse_turn",
    "perform_exports",
    "read_response",
    "resume_point",
    "run",
    "stream",
]
