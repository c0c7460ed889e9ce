"""The input models of the workspace operations (``igg.workspace.ops.OPERATIONS``): what each one takes.

Every input model derives from ``OperationInput``: unknown arguments are refused, ``null`` means the
default, and text UTF-8 cannot carry is refused where it enters. Their JSON Schemas are published as the MCP
tools' input schemas and the HTTP API's request bodies, self-contained (``inline_refs``). Actions are
advertised with the schema of the action union (``ACTION_SCHEMA``, from ``igg.models.Action``) but read one
by one by the shared response reader, so one malformed action becomes a rejected verdict in its slot instead
of sinking the whole call.
"""

from __future__ import annotations

import copy
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    TypeAdapter,
    WithJsonSchema,
    model_validator,
)

from igg.io.encodable import find_unencodable
from igg.models.actions import Action, NodeRef
from igg.models.request import Request
from igg.observe.query import Query
from igg.persistence import SessionStatus

SESSION_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$"


def _old_spelling(value: Any) -> Any:
    return "nodelink" if value == "node_link" else value


ToolExportFormat = Annotated[
    Literal[
        "json",
        "nodelink",
        "graphml",
        "cypher",
        "mermaid",
        "html",
        "gexf",
        "nt",
        "ttl",
        "jsonld",
        "neo4j_plan",
    ],
    BeforeValidator(_old_spelling),
]
"""What ``export_graph`` returns or writes, spelled as ``igg export --format`` and ``igg.export.ExportFormat``
spell them: ``json``: IGG's graph document (also the seed_data format); ``nodelink``: networkx node-link JSON
(``node_link``, the earlier spelling, is still accepted); ``graphml``: GraphML with typed keys; ``cypher``: an
idempotent Cypher script; ``mermaid``: a flowchart; ``html``: the self-contained page ``igg view --export``
writes; ``gexf``: GEXF 1.2 for Gephi; ``nt``, ``ttl``, ``jsonld``: RDF (N-Triples, Turtle and JSON-LD, the
last two through rdflib); ``neo4j_plan``: the Neo4j export plan, inline only. Every format of ``igg export``
but ``neo4j``: a tool call never writes into a database (the plan says what such an export would change)."""


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """A JSON Schema with every local ``$ref`` replaced by its definition (the models are not recursive).

    Tool-calling clients differ in how they treat ``$defs``; a self-contained schema works everywhere.
    """
    defs = schema.get("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                resolved = walk(copy.deepcopy(defs[ref.removeprefix("#/$defs/")]))
                extra = {k: walk(v) for k, v in node.items() if k != "$ref"}
                return {**resolved, **extra}
            # a discriminator's mapping points into $defs (an OpenAPI extension): the oneOf says the same
            return {k: walk(v) for k, v in node.items() if k not in ("$defs", "discriminator")}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    out: dict[str, Any] = walk(schema)
    return out


ACTION_SCHEMA: dict[str, Any] = inline_refs(TypeAdapter(Action).json_schema(by_alias=True))
"""JSON Schema of one action (ADD_NODE, ADD_EDGE, UPDATE_NODE, DELETE_NODE, DELETE_EDGE, UPDATE_EDGE,
MERGE_NODES, QUERY)."""

ActionInput = Annotated[Any, WithJsonSchema(ACTION_SCHEMA)]
"""One action: advertised with the action union's schema, checked by the shared reader (per-action
verdicts)."""

SessionId = Annotated[str, Field(pattern=SESSION_ID_PATTERN, description="The session's id.")]


class OperationInput(BaseModel):
    """The base of an operation's input model: unknown arguments are refused, ``null`` means the default, and
    text UTF-8 cannot carry is refused where it enters."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _null_is_default(cls, data: Any) -> Any:
        """``null`` for an optional argument means its default (strict OpenAI tool calls send every argument,
        the optional ones as null)."""
        if isinstance(data, dict) and None in data.values():
            fields = cls.model_fields
            data = {
                k: v
                for k, v in data.items()
                if not (
                    v is None
                    and k in fields
                    and not fields[k].is_required()
                    and fields[k].get_default(call_default_factory=True) is not None
                )
            }
        return data

    @model_validator(mode="before")
    @classmethod
    def _encodable(cls, data: Any) -> Any:
        """Text UTF-8 cannot encode (a lone surrogate) is refused here; in ``actions`` and ``reasoning`` (the
        agent's response) the response reader judges it instead, action by action."""
        if isinstance(data, dict):
            found = find_unencodable({k: v for k, v in data.items() if k not in ("actions", "reasoning")})
            if found is not None:
                raise ValueError(found.describe())
        return data


class SessionRef(OperationInput):
    """Names one session."""

    session_id: SessionId


class ObserveBody(OperationInput):
    """What to observe."""

    focus: list[str | NodeRef] = Field(
        default_factory=list,
        max_length=50,
        description=(
            "Nodes to show first when the graph does not fit the budget: names (['AuthService']) or "
            "node references ({'name': 'login', 'label': 'Method'})."
        ),
    )
    token_budget: int | None = Field(
        default=None,
        ge=300,
        le=1_000_000,
        description=(
            "Estimated tokens the observation may use; default: the session's observation.token_budget."
        ),
    )


class ApplyBody(OperationInput):
    """Actions to validate and (unless dry_run) apply, in order."""

    actions: list[ActionInput] = Field(description="Actions, applied in order; each gets a verdict.")
    reasoning: str = Field(
        default="", description="Why these actions; kept with the iteration for provenance."
    )
    dry_run: bool = Field(
        default=False,
        description="Validate every action as if applied in order, then leave the graph untouched.",
    )


class FinishBody(OperationInput):
    """How to finish a session."""

    prune_isolated: bool | None = Field(
        default=None,
        description="Remove nodes without edges; default: the session's finalize.prune_isolated.",
    )


class ExportBody(OperationInput):
    """What to export and where."""

    format: ToolExportFormat = Field(
        default="json",
        description=(
            "json (IGG document), nodelink, graphml, cypher, mermaid, html, gexf, nt, ttl or jsonld;"
            " neo4j_plan: what an export to the server's Neo4j (NEO4J_URI) would create, update and delete in"
            " the session's scope."
        ),
    )
    path: str | None = Field(
        default=None,
        max_length=255,
        description=(
            "Relative file path under the server's output directory; omitted: the export is returned inline."
        ),
    )


class ObserveInput(ObserveBody):
    """What to observe, in which session."""

    session_id: SessionId


class ApplyInput(ApplyBody):
    """Actions for one session."""

    session_id: SessionId


class FinishInput(FinishBody):
    """Which session to finish, and how."""

    session_id: SessionId


class ExportInput(ExportBody):
    """Which session to export, in what format, and where."""

    session_id: SessionId


class ListInput(OperationInput):
    """Which sessions to list."""

    status: SessionStatus | None = Field(
        default=None, description="Only this status: open, running, interrupted or finished."
    )
    limit: int = Field(
        default=100, ge=1, le=1000, description="At most this many, most recently updated first."
    )


class RunInput(Request):
    """An autonomous run: the server's own agent (an LLM by default) builds the graph for a request.

    The arguments are exactly ``start_session``'s (the request's fields at the top level), plus ``agent``,
    ``exports`` and ``provenance``. The earlier shape, the request under a ``request`` key, is refused with
    a message saying how to send it now.
    """

    agent: Literal["llm", "code", "auto"] = Field(
        default="llm",
        description="llm: the server's configured model; code: the offline code analyser; auto.",
    )
    exports: list[str] = Field(
        default_factory=list,
        max_length=8,
        description=(
            "Exports written when the run ends, as `igg run --export` takes them: FORMAT[:PATH] with "
            "FORMAT graphml, json, nodelink, cypher, mermaid or neo4j; PATH is relative to the server's "
            "output directory (default SESSION/graph.EXT); neo4j goes to the server's NEO4J_URI."
        ),
    )
    provenance: bool = Field(default=False, description="Carry provenance into JSON and GraphML exports.")

    @model_validator(mode="before")
    @classmethod
    def _request_at_the_top(cls, data: Any) -> Any:
        if isinstance(data, dict) and "request" in data:
            raise ValueError(
                "run_session takes the request's fields at the top level, exactly as start_session "
                "does (goal_prompt, config, and optionally session_id, context_data, seed_data), beside "
                "agent, exports and provenance: move the fields of 'request' up one level"
            )
        return data

    def as_request(self) -> Request:
        """The request part (every field but ``agent``, ``exports`` and ``provenance``)."""
        return Request.model_validate(
            self.model_dump(by_alias=True, exclude_unset=True, exclude={"agent", "exports", "provenance"})
        )


class QueryInput(OperationInput):
    """A budgeted read-only question about one session's graph."""

    session_id: SessionId
    query: Query = Field(
        description=(
            'neighbours: {"query": "neighbours", "node": {"name": "AuthService"}, "depth": 2, "edge_types":'
            ' [...], "direction": "out"|"in"|"both"}; path: {"query": "path", "from": <ref>, "to": <ref>};'
            ' find: {"query": "find", "label": "Class", "where": {"key": value or'
            ' {"contains"|"in"|"gt"|"ge"|"lt"|"le"|"exists": ...}}, "grounded":'
            ' "grounded"|"ungrounded"|"unverified"}. Each takes token_budget (default 1000) and as_of (the'
            " facts valid at that ISO 8601 time)."
        )
    )


class ExplainInput(OperationInput):
    """Which element's history to tell."""

    session_id: SessionId
    ref: str = Field(
        min_length=1,
        max_length=500,
        description="A node id (n3), an edge id (e5) or a node's identity value such as its name.",
    )
    edges: bool = Field(default=True, description="Include the history of the node's edges.")


class DiffInput(OperationInput):
    """Two points of a session's history."""

    session_id: SessionId
    a: int = Field(ge=0, description="The first iteration (0: the start).")
    b: int = Field(ge=0, description="The second iteration.")


class CheckInput(OperationInput):
    """Dependency rules to judge on a session's graph."""

    session_id: SessionId
    rules: list[dict[str, Any]] = Field(
        min_length=1,
        max_length=200,
        description=(
            "The rules, as the [[rules]] tables of igg.toml in JSON: each with a name, a kind (forbidden, "
            "layers, independence, acyclic, allowed_only) and its fields (see schemas/rules.schema.json), "
            'e.g. {"name": "api-not-db", "kind": "forbidden", "from": "shop.api", "to": "shop.db"}.'
        ),
    )


class UndoInput(OperationInput):
    """Where to roll a session back to."""

    session_id: SessionId
    to_iteration: int = Field(
        ge=0, description="The iteration to return to (0: the start); kept as a step of its own."
    )


class ReviewInput(OperationInput):
    """Show, approve or reject the plan a session with config.review keeps waiting."""

    session_id: SessionId
    decision: Literal["approve", "reject"] | None = Field(
        default=None, description="approve or reject the pending plan; omitted: show it."
    )
    plan_id: int | None = Field(
        default=None, description="The plan decided on (as shown); required with a decision."
    )
    actions: list[int] | None = Field(
        default=None, description="approve: only these action indices of the plan (default all)."
    )
    note: str = Field(
        default="",
        max_length=2000,
        description="reject: why (the agent sees it next turn); approve: kept with the iteration.",
    )


class DocumentIn(OperationInput):
    """One document with what it states."""

    id: str = Field(min_length=1, max_length=500)
    text: str = Field(max_length=2_000_000)
    actions: list[dict[str, Any]] = Field(
        default_factory=list, max_length=1000, description="As apply_actions."
    )


class AddDocumentsInput(OperationInput):
    """Documents to add to a session (an id given again replaces that document)."""

    session_id: SessionId
    documents: list[DocumentIn] = Field(min_length=1, max_length=100)


class RetractDocumentInput(OperationInput):
    """The document to retract."""

    session_id: SessionId
    document_id: str = Field(min_length=1, max_length=500)
