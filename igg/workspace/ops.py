"""The workspace operations: one table (``OPERATIONS``) the MCP server, the HTTP API,
the OpenAI tool definitions and ``Workspace.execute`` are all built from, so they can never disagree.

Each ``Operation`` declares, once, its input model, its output model (``igg.workspace.outputs``), its handler
(``(workspace, input) -> output``), its HTTP routes (``Route``: method, path, where the arguments come from),
its MCP hints, and how its adapters treat it (``request``, ``response``, ``text``, ``progress``,
``described``) instead of any adapter branching on its name. Adding an operation is adding one entry here (a
workspace made with ``operations=`` serves extra ones; ``tests/unit/test_operation_table.py`` adds one and
calls it on both servers).

Start takes the request payload itself (``igg.models.Request``: goal, schema, constraints, context, seed);
the other operations' input models are in ``igg.workspace.inputs``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from igg.models.request import Request
from igg.workspace.inputs import (
    AddDocumentsInput,
    ApplyInput,
    CheckInput,
    DiffInput,
    ExplainInput,
    ExportInput,
    FinishInput,
    ListInput,
    ObserveInput,
    QueryInput,
    RetractDocumentInput,
    ReviewInput,
    RunInput,
    UndoInput,
    inline_refs,
)
from igg.workspace.outputs import (
    ApplyOutput,
    CheckOutput,
    DiffOutput,
    DocumentsOutput,
    ExplainOutput,
    ExportOutput,
    FinishOutput,
    ListOutput,
    ObserveOutput,
    Output,
    QueryOutput,
    ReviewOutput,
    RunOutput,
    SessionSummary,
    UndoOutput,
)


@dataclass(frozen=True)
class Route:
    """Where an operation is served over HTTP: ``method path`` (its ``{parameters}`` are input fields), where
    the other arguments come from (``body``: a JSON object, absent for an input whose fields all have
    defaults; ``query``: the query string), the status of an answer, and what answers (default: the
    operation's handler)."""

    method: Literal["GET", "POST", "DELETE"]
    path: str
    arguments: Literal["body", "query", "none"] = "body"
    status: int = 200
    handler: Handler | None = None
    summary: str = ""

    @property
    def parameters(self) -> tuple[str, ...]:
        """The input fields the path carries (``{session_id}``, ``{document_id:path}``)."""
        return tuple(re.findall(r"\{(\w+)(?::\w+)?\}", self.path))

    def __str__(self) -> str:
        path = re.sub(r"(?<=\{)(\w+):\w+(?=\})", r"\1", self.path)
        return f"{self.method} {path}"


Handler = Callable[[Any, Any], Any]
"""How an operation is served: ``(workspace, input model) -> output`` (an ``Output``, or an awaitable of the
answer's JSON for a run)."""


@dataclass(frozen=True, kw_only=True)
class Operation:
    """One workspace operation, declared once: its input and output models, its handler and its HTTP routes;
    the MCP server, the HTTP API, the OpenAI tool definitions and ``Workspace.execute`` are all built from
    it."""

    name: str
    input: type[BaseModel]
    output: type[Output]
    handler: Handler
    routes: tuple[Route, ...]
    description: str
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    open_world: bool = False
    request: bool = False
    """The input is a request payload (start_session, run_session): the client names the session's id (its
    pattern is published), the request's optional settings are published as one line each, and arguments that
    break it are INVALID_REQUEST."""
    response: bool = False
    """The input carries an agent's response (apply_actions): arguments that break it, outside the route's
    path, are INVALID_RESPONSE."""
    text: str | None = None
    """The output field a tool answers with as its text (observe: the markdown); else the answer's JSON."""
    progress: bool = False
    """A long run: over MCP it reports each iteration as progress, through the SDK's own call path."""
    described: tuple[tuple[str, str], ...] = ()
    """Arguments published as a description instead of a schema (run_session's ``config``:
    start_session's)."""

    def invalid_code(self, locations: list[tuple[Any, ...]]) -> str:
        """The stable code for arguments that break the input model, by where the problems are."""
        if self.request:
            return "INVALID_REQUEST"
        in_path = set(self.routes[0].parameters) if self.routes else set()
        if self.response and all(loc[:1] and loc[0] not in in_path for loc in locations):
            return "INVALID_RESPONSE"
        return "INVALID_ARGUMENTS"


async def _run_started(workspace: Any, inp: Any) -> dict[str, Any]:
    """``POST /runs``: the run starts in the background; the answer names its event stream."""
    started: dict[str, Any] = await workspace.start_run(inp)
    return {**started, "events": f"/sessions/{started['session_id']}/events"}


_SESSION = "/sessions/{session_id}"

OPERATIONS: tuple[Operation, ...] = (
    Operation(
        name="start_session",
        input=Request,
        output=SessionSummary,
        request=True,
        handler=lambda ws, inp: ws.start(inp),
        routes=(Route("POST", "/sessions", status=201, summary="Start a session"),),
        description=(
            "Open a graph-building session: goal_prompt, config.schema (node_types, edge_types, per-type"
            " required_attributes and identity_keys, default ['name']), config.constraints (limits),"
            " context_data (text to analyse), seed_data. Then observe, apply_actions, finish_session,"
            " export_graph."
        ),
    ),
    Operation(
        name="observe",
        input=ObserveInput,
        output=ObserveOutput,
        read_only=True,
        idempotent=True,
        text="markdown",
        handler=lambda ws, inp: ws.observe(inp),
        routes=(Route("GET", f"{_SESSION}/observation", "query", summary="Observe a session"),),
        description=(
            "The session as markdown within token_budget: goal, schema, limits, graph, to-dos, last verdicts."
            " focus: nodes to show first (names or refs)."
        ),
    ),
    Operation(
        name="apply_actions",
        input=ApplyInput,
        output=ApplyOutput,
        destructive=True,
        response=True,
        handler=lambda ws, inp: ws.apply(inp),
        routes=(Route("POST", f"{_SESSION}/actions", summary="Apply actions"),),
        description=(
            "Validate actions and apply the valid ones in order: ADD_NODE, ADD_EDGE, UPDATE_NODE,"
            " DELETE_NODE, DELETE_EDGE, UPDATE_EDGE, MERGE_NODES, QUERY. A ref is a node's identity"
            " properties ({'name': 'X'}), plus 'label' if ambiguous. Each action gets a verdict: accepted, or"
            " a code and what would pass (POSSIBLE_DUPLICATE: reuse the node, or distinct: true). dry_run:"
            " validate only."
        ),
    ),
    Operation(
        name="finish_session",
        input=FinishInput,
        output=FinishOutput,
        destructive=True,
        handler=lambda ws, inp: ws.finish(inp),
        routes=(Route("POST", f"{_SESSION}/finish", summary="Finish a session"),),
        description="Close the session (stop reason finished), optionally pruning nodes without edges.",
    ),
    Operation(
        name="export_graph",
        input=ExportInput,
        output=ExportOutput,
        idempotent=True,
        handler=lambda ws, inp: ws.export(inp),
        routes=(Route("POST", f"{_SESSION}/export", summary="Export a session's graph"),),
        description=(
            "Export the graph, inline or to path under the server's output directory; neo4j_plan: what a"
            " Neo4j export would change."
        ),
    ),
    Operation(
        name="list_sessions",
        input=ListInput,
        output=ListOutput,
        read_only=True,
        idempotent=True,
        handler=lambda ws, inp: ws.list_sessions(inp),
        routes=(Route("GET", "/sessions", "query", summary="List sessions"),),
        description="Sessions, most recently updated first.",
    ),
    Operation(
        name="query_graph",
        input=QueryInput,
        output=QueryOutput,
        read_only=True,
        idempotent=True,
        handler=lambda ws, inp: ws.query_graph(inp),
        routes=(Route("POST", f"{_SESSION}/query", summary="Ask a budgeted query about the graph"),),
        description=(
            "Ask about the graph within a token budget: a node's neighbours, a shortest path, or find nodes"
            " whose properties match where ({'k': v} or {'k': {'contains'|'in'|'gt'|'ge'|'lt'|'le'|'exists':"
            " ...}})."
        ),
    ),
    Operation(
        name="explain",
        input=ExplainInput,
        output=ExplainOutput,
        read_only=True,
        idempotent=True,
        handler=lambda ws, inp: ws.explain(inp),
        routes=(Route("GET", f"{_SESSION}/explain", "query", summary="The history of a node or edge"),),
        description=(
            "The history of a node or edge (ref: n3, e5 or a name), step by step. Needs the session store."
        ),
    ),
    Operation(
        name="diff",
        input=DiffInput,
        output=DiffOutput,
        read_only=True,
        idempotent=True,
        handler=lambda ws, inp: ws.diff(inp),
        routes=(Route("GET", f"{_SESSION}/diff", "query", summary="What changed between two iterations"),),
        description="What changed between iterations a and b. Needs the session store.",
    ),
    Operation(
        name="check",
        input=CheckInput,
        output=CheckOutput,
        read_only=True,
        idempotent=True,
        handler=lambda ws, inp: ws.check(inp),
        routes=(Route("POST", f"{_SESSION}/check", summary="Judge dependency rules on the session's graph"),),
        description=(
            "Judge dependency rules (igg.toml's [[rules]] as JSON: name, kind"
            " forbidden|layers|independence|acyclic|allowed_only, its fields, e.g. {'name': 'x', 'kind':"
            " 'forbidden', 'from': 'a.api', 'to': 'a.db'})."
        ),
    ),
    Operation(
        name="undo",
        input=UndoInput,
        output=UndoOutput,
        destructive=True,
        handler=lambda ws, inp: ws.undo(inp),
        routes=(Route("POST", f"{_SESSION}/undo", summary="Roll a session back to an iteration"),),
        description=(
            "Roll the graph back to iteration to_iteration (0: the start), as an undoable step. Needs the"
            " store."
        ),
    ),
    Operation(
        name="review",
        input=ReviewInput,
        output=ReviewOutput,
        handler=lambda ws, inp: ws.review(inp),
        routes=(
            Route("POST", f"{_SESSION}/review", summary="Approve or reject the plan waiting for review"),
            Route("GET", f"{_SESSION}/review", "none", summary="The plan waiting for review"),
        ),
        description=(
            "config.review sessions: no decision shows the waiting plan; approve it (all, or the indices in "
            "actions) or reject it with a note. plan_id: the plan shown."
        ),
    ),
    Operation(
        name="add_documents",
        input=AddDocumentsInput,
        output=DocumentsOutput,
        destructive=True,
        handler=lambda ws, inp: ws.add_documents(inp),
        routes=(Route("POST", f"{_SESSION}/documents", summary="Add documents with the facts each states"),),
        description="Add documents, each with the actions it states; facts record their documents. Undoable.",
    ),
    Operation(
        name="retract_document",
        input=RetractDocumentInput,
        output=DocumentsOutput,
        destructive=True,
        handler=lambda ws, inp: ws.retract_document(inp),
        routes=(
            Route(
                "DELETE", f"{_SESSION}/documents/{{document_id:path}}", "none", summary="Retract a document"
            ),
        ),
        description="Retract what a document alone supported; shared facts stay. Undoable.",
    ),
    Operation(
        name="run_session",
        input=RunInput,
        output=RunOutput,
        open_world=True,
        request=True,
        progress=True,
        handler=lambda ws, inp: ws.run(inp),
        routes=(
            Route(
                "POST",
                "/runs",
                status=202,
                handler=_run_started,
                summary="Start an autonomous run (answers at once; follow its events)",
            ),
        ),
        described=(("config", "As start_session's config."), ("seed_data", "As start_session's seed_data.")),
        description=(
            "Build a graph with the server's own agent (llm, code or auto) to a stop reason. Takes"
            " start_session's arguments, plus exports (FORMAT[:PATH], as igg run --export) and provenance."
        ),
    ),
)
"""Every workspace operation; adding one is adding it here."""
OPERATIONS_BY_NAME: dict[str, Operation] = {op.name: op for op in OPERATIONS}


def input_schema(op: Operation) -> dict[str, Any]:
    """The operation's input JSON Schema, self-contained (no ``$defs``)."""
    return inline_refs(op.input.model_json_schema(by_alias=True))
