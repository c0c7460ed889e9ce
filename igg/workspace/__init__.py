"""The workspace: IGG as a tool. Sessions an outside agent opens, observes, changes and exports, shared by
the CLI, the MCP server and the HTTP API (``igg.workspace.service.Workspace``)."""

from igg.persistence import SessionInfo, SessionRepo
from igg.persistence.memory import MemorySessions
from igg.workspace.events import EventHub
from igg.workspace.ops import OPERATIONS, OPERATIONS_BY_NAME, Operation, input_schema
from igg.workspace.service import LiveSession, Workspace

__all__ = [
    "OPERATIONS",
    "OPERATIONS_BY_NAME",
    "EventHub",
    "LiveSession",
    "MemorySessions",
    "Operation",
    "SessionInfo",
    "SessionRepo",
    "Workspace",
    "input_schema",
]
