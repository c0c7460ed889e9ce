"""IGG, the Iterative Graph Generator: a validated, bounded graph workspace that agents build step by step.

The public API; everything here is documented in README.md.
"""

from igg.act import Actor
from igg.compile import build_state, check_request, load_request
from igg.errors import (
    AgentFailed,
    ExportError,
    IGGError,
    Problem,
    RequestInvalid,
    ResponseInvalid,
    SessionError,
)
from igg.export import ExportSpec, document_to_state, load_document, parse_export_spec, perform_exports
from igg.graph import GraphState
from igg.models import (
    AgentResponse,
    ErrorCode,
    GraphDocument,
    Request,
    Schema,
    Verdict,
    read_response,
)

__all__ = [
    "Actor",
    "AgentFailed",
    "AgentResponse",
    "ErrorCode",
    "ExportError",
    "ExportSpec",
    "GraphDocument",
    "GraphState",
    "IGGError",
    "Problem",
    "Request",
    "RequestInvalid",
    "ResponseInvalid",
    "Schema",
    "SessionError",
    "Verdict",
    "build_state",
    "check_request",
    "document_to_state",
    "load_document",
    "load_request",
    "parse_export_spec",
    "perform_exports",
    "read_response",
]
