"""The contracts: request payload, agent response and actions, verdicts, and the graph document."""

from igg.models.actions import (
    Action,
    ActionError,
    AddEdge,
    AddNode,
    AgentResponse,
    DeleteEdge,
    DeleteNode,
    ParsedResponse,
    UnreadableAction,
    UpdateNode,
    read_action,
    read_response,
)
from igg.models.document import DocEdge, DocNode, GraphDocument
from igg.models.request import Config, Constraints, Request
from igg.models.schema import CompiledSchema, EdgePattern, Schema
from igg.models.verdicts import ErrorCode, Verdict

__all__ = [
    "Action",
    "ActionError",
    "AddEdge",
    "AddNode",
    "AgentResponse",
    "CompiledSchema",
    "Config",
    "Constraints",
    "DeleteEdge",
    "DeleteNode",
    "DocEdge",
    "DocNode",
    "EdgePattern",
    "ErrorCode",
    "GraphDocument",
    "ParsedResponse",
    "Request",
    "Schema",
    "UnreadableAction",
    "UpdateNode",
    "Verdict",
    "read_action",
    "read_response",
]
