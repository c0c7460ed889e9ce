"""The workspace operations and their input models: one table the MCP server, the HTTP API and the OpenAI
tool definitions are all generated from, so the three can never disagree.

Start takes the request payload itself (``igg.models.Request``: goal, schema, constraints, context, seed).
Actions are advertised with the schema of the action union (``igg.models.Action``) but read one by one by
the shared response reader, so one malformed action becomes a rejected verdict in its slot instead of
sinking the whole call.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
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


ToolExportFormat = Annotated[Literal["json", "nodelink", "graphml", "cypher", "mermaid", "neo4j_plan"],
                             BeforeValidator(_old_spelling)]
"""What ``export_graph`` returns or writes, spelled as ``igg export --format`` and ``igg.export.ExportFormat``
spell them: ``json``: IGG's graph document (also the seed_data format); ``nodelink``: networkx node-link JSON
(``node_link``, the earlier spelling, is still accepted); ``graphml``: GraphML with typed keys; ``cypher``: an
idempotent Cypher script; ``mermaid``: a flowchart; ``neo4j_plan``: the Neo4j export plan, inline only."""


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
"""JSON Schema of one action (ADD_NODE, ADD_EDGE, UPDATE_NODE, DELETE_NODE, DELETE_EDGE)."""

ActionInput = Annotated[Any, WithJsonSchema(ACTION_SCHEMA)]
"""One action: advertised with the action union's schema, checked by the shared reader (per-action verdicts)."""

SessionId = Annotated[str, Field(pattern=SESSION_ID_PATTERN, description="The session's id.")]


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _null_is_default(cls, data: Any) -> Any:
        """``null`` for an optional argument means its default (strict OpenAI tool calls send every argument,
        the optional ones as null)."""
        if isinstance(data, dict) and None in data.values():
            fields = cls.model_fields
            data = {k: v for k, v in data.items()
                    if not (v is None and k in fields and not fields[k].is_required()
                            and fields[k].get_default(call_default_factory=True) is not None)}
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


class SessionRef(_Input):
    """Names one session."""

    session_id: SessionId


class ObserveBody(_Input):
    """What to observe."""

    focus: list[str | NodeRef] = Field(
        default_factory=list, max_length=50,
        description=("Nodes to show first when the graph does not fit the budget: names (['AuthService']) or "
                     "node references ({'name': 'login', 'label': 'Method'})."),
    )
    token_budget: int | None = Field(
        default=None, ge=300, le=1_000_000,
        description="Estimated tokens the observation may use; default: the session's observation.token_budget.",
    )


class ApplyBody(_Input):
    """Actions to validate and (unless dry_run) apply, in order."""

    actions: list[ActionInput] = Field(description="Actions, applied in order; each gets a verdict.")
    reasoning: str = Field(default="", description="Why these actions; kept with the iteration for provenance.")
    dry_run: bool = Field(
        default=False,
        description="Validate every action as if applied in order, then leave the graph untouched.",
    )


class FinishBody(_Input):
    """How to finish a session."""

    prune_isolated: bool | None = Field(
        default=None, description="Remove nodes without edges; default: the session's finalize.prune_isolated.",
    )


class ExportBody(_Input):
    """What to export and where."""

    format: ToolExportFormat = Field(default="json", description=(
        "json (IGG document), nodelink, graphml, cypher or mermaid; neo4j_plan: what an export to the "
        "server's Neo4j (NEO4J_URI) would create, update and delete in the session's scope, written nowhere."))
    path: str | None = Field(
        default=None, max_length=255,
        description="Relative file path under the server's output directory; omitted: the export is returned inline.",
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


class ListInput(_Input):
    """Which sessions to list."""

    status: SessionStatus | None = Field(
        default=None, description="Only this status: open, running, interrupted or finished.")
    limit: int = Field(default=100, ge=1, le=1000, description="At most this many, most recently updated first.")


class RunInput(_Input):
    """An autonomous run: the server's own agent (an LLM by default) builds the graph for a request."""

    request: Request = Field(description="The request payload, as for start_session.")
    agent: Literal["llm", "code", "auto"] = Field(
        default="llm", description="llm: the server's configured model; code: the offline code analyser; auto.",
    )
    exports: list[str] = Field(
        default_factory=list, max_length=8,
        description=("Exports written when the run ends, as `igg run --export` takes them: FORMAT[:PATH] with "
                     "FORMAT graphml, json, nodelink, cypher, mermaid or neo4j; PATH is relative to the server's "
                     "output directory (default SESSION/graph.EXT); neo4j goes to the server's NEO4J_URI."),
    )
    provenance: bool = Field(default=False, description="Carry provenance into JSON and GraphML exports.")


class QueryInput(_Input):
    """A budgeted read-only question about one session's graph."""

    session_id: SessionId
    query: Query = Field(description=(
        'neighbours: {"query": "neighbours", "node": {"name": "AuthService"}, "depth": 2, "edge_types": [...], '
        '"direction": "out"|"in"|"both"}; path: {"query": "path", "from": <ref>, "to": <ref>}; find: {"query": '
        '"find", "label": "Class", "where": {"key": value or {"contains"|"in"|"gt"|"ge"|"lt"|"le"|"exists": ...}}}. '
        "Each takes token_budget (default 1000)."))


class ExplainInput(_Input):
    """Which element's history to tell."""

    session_id: SessionId
    ref: str = Field(min_length=1, max_length=500,
                     description="A node id (n3), an edge id (e5) or a node's identity value such as its name.")
    edges: bool = Field(default=True, description="Include the history of the node's edges.")


class DiffInput(_Input):
    """Two points of a session's history."""

    session_id: SessionId
    a: int = Field(ge=0, description="The first iteration (0: the start).")
    b: int = Field(ge=0, description="The second iteration.")


class CheckInput(_Input):
    """Dependency rules to judge on a session's graph."""

    session_id: SessionId
    rules: list[dict[str, Any]] = Field(
        min_length=1, max_length=200,
        description="The rules, as the [[rules]] tables of igg.toml in JSON: each with a name, a kind (forbidden, "
                    "layers, independence, acyclic, allowed_only) and its fields (see schemas/rules.schema.json), "
                    "e.g. {\"name\": \"api-not-db\", \"kind\": \"forbidden\", \"from\": \"shop.api\", \"to\": \"shop.db\"}.")


class UndoInput(_Input):
    """Where to roll a session back to."""

    session_id: SessionId
    to_iteration: int = Field(ge=0, description="The iteration to return to (0: the start); kept as a step of its own.")


class ReviewInput(_Input):
    """Show, approve or reject the plan a session with config.review keeps waiting."""

    session_id: SessionId
    decision: Literal["approve", "reject"] | None = Field(
        default=None, description="approve or reject the pending plan; omitted: show it.")
    plan_id: int | None = Field(default=None, description="The plan decided on (as shown); required with a decision.")
    actions: list[int] | None = Field(
        default=None, description="approve: only these action indices of the plan (default all).")
    note: str = Field(default="", max_length=2000,
                      description="reject: why (the agent sees it next turn); approve: kept with the iteration.")


@dataclass(frozen=True, kw_only=True)
class Operation:
    """One workspace operation as every adapter exposes it."""

    name: str
    input: type[BaseModel]
    description: str
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    open_world: bool = False


OPERATIONS: tuple[Operation, ...] = (
    Operation(name="start_session", input=Request, description=(
        "Open a graph-building session: a goal, a schema (node/edge types, required attributes, identity keys, "
        "edge patterns), constraints (limits), optional context text and a seed graph. Returns the session id "
        "and its limits. Then call observe, apply_actions, finish_session and export_graph.")),
    Operation(name="observe", input=ObserveInput, read_only=True, idempotent=True, description=(
        "The session as markdown within a token budget: goal, schema, limits and usage, the graph (compact "
        "adjacency), open to-dos and the last verdicts. `focus` names nodes to show first when the graph does not fit.")),
    Operation(name="apply_actions", input=ApplyInput, destructive=True, description=(
        "Validate actions (ADD_NODE, ADD_EDGE, UPDATE_NODE, DELETE_NODE, DELETE_EDGE) against the schema and "
        "limits and apply the valid ones in order. Returns a verdict per action: accepted, or rejected with a "
        "stable code and a message saying what would pass. dry_run=true validates without changing the graph.")),
    Operation(name="finish_session", input=FinishInput, destructive=True, description=(
        "Close the session (stop reason 'finished'), optionally removing nodes without edges. Returns the final "
        "counts, pruned nodes and open to-dos. A finished session can still be observed and exported.")),
    Operation(name="export_graph", input=ExportInput, idempotent=True, description=(
        "Export the session's graph as IGG JSON, networkx node-link JSON, GraphML, a Cypher script or Mermaid: "
        "returned inline, or written "
        "to `path` under the server's output directory (absolute paths and '..' are refused). "
        "format=neo4j_plan returns the Neo4j export plan (creates, updates, deletes) without writing.")),
    Operation(name="list_sessions", input=ListInput, read_only=True, idempotent=True, description=(
        "Sessions in the store, most recently updated first: id, goal, status, iteration, counts, stop reason.")),
    Operation(name="query_graph", input=QueryInput, read_only=True, idempotent=True, description=(
        "Ask about the graph without reading all of it, within a token budget: neighbours of a node (depth, edge "
        "types, direction), the shortest path between two nodes, or the nodes of a type matching property "
        "filters. The answer says what it left out and how to narrow the question.")),
    Operation(name="explain", input=ExplainInput, read_only=True, idempotent=True, description=(
        "The history of a node or edge: every step that created, changed or deleted it, with the agent's "
        "reasoning, the verdict and the context chunk. Needs the session store.")),
    Operation(name="diff", input=DiffInput, read_only=True, idempotent=True, description=(
        "What changed between the graph after iteration a and after iteration b: nodes and edges added, deleted "
        "or changed, with their properties. Needs the session store.")),
    Operation(name="check", input=CheckInput, read_only=True, idempotent=True, description=(
        "Does this graph break our rules? Judge dependency rules (forbidden, layers, independence, acyclic, "
        "allowed_only; the form of igg.toml's [[rules]]) on the session's graph. Returns each violation with the "
        "rule, a message, the path of edges that breaks it (with source file and line where the session's files "
        "say), and whether the rules pass. A malformed rule is refused as INVALID_RULES naming the rule and field.")),
    Operation(name="undo", input=UndoInput, destructive=True, description=(
        "Roll the session's graph back to how it was after an iteration (0: the start). The undo is a step of "
        "its own, so a later undo can bring the work back. Needs the session store.")),
    Operation(name="review", input=ReviewInput, description=(
        "For a session with config.review: without a decision, show the plan waiting for review (its actions "
        "and their verdicts); approve it (all or chosen action indices, applied exactly as shown) or reject it "
        "with a note the agent sees in its next observation. plan_id must name the plan shown.")),
    Operation(name="run_session", input=RunInput, open_world=True, description=(
        "Build a graph autonomously with the server's own agent (its configured LLM by default) until a stop "
        "reason (finished, max_iterations, limits_reached, stuck, budget_exhausted, agent_error). Returns the "
        "run summary; the session can then be observed and exported.")),
)
OPERATIONS_BY_NAME: dict[str, Operation] = {op.name: op for op in OPERATIONS}


def input_schema(op: Operation) -> dict[str, Any]:
    """The operation's input JSON Schema, self-contained (no ``$defs``)."""
    return inline_refs(op.input.model_json_schema(by_alias=True))


def openai_tools() -> list[dict[str, Any]]:
    """The operations as OpenAI function-calling tool definitions (chat completions ``tools=``).

    Compact: no ``title`` keywords (pydantic's copies of the property names) and no ``"default": null``;
    ``run_session``'s request refers to ``start_session``'s arguments instead of repeating their schema.
    ``"strict": true`` (structured outputs: the model's arguments always match the schema) on every tool whose
    schema allows it: objects closed (``additionalProperties: false``) with every property required, optional
    ones made nullable (``null`` means the default); tools taking free-form objects (a request, actions,
    node references) are sent without it.
    """
    tools = []
    for op in OPERATIONS:
        schema = _compact(input_schema(op))
        if op.name == "run_session":
            schema["properties"]["request"] = {"type": "object", "description": (
                "The request payload: exactly the arguments start_session takes (goal_prompt, config with its "
                "schema and constraints, and optionally session_id, context_data, seed_data).")}
        function: dict[str, Any] = {"name": op.name, "description": op.description}
        strict = strict_schema(schema)
        if strict is None:
            schema = _dedupe(schema)
        function["parameters"] = strict if strict is not None else schema
        if strict is not None:
            function["strict"] = True
        tools.append({"type": "function", "function": function})
    return tools


_SCHEMA_MAPS = ("properties", "$defs", "patternProperties")
"""Keywords whose value maps names to schemas (the names are data, not keywords)."""


def _compact(node: Any) -> Any:
    """A JSON Schema without ``title`` keywords and ``"default": null``."""
    if isinstance(node, list):
        return [_compact(v) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title" and isinstance(value, str) or key == "default" and value is None:
            continue
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: _compact(sub) for name, sub in value.items()}
        elif key in ("const", "enum", "default", "examples"):
            out[key] = value
        else:
            out[key] = _compact(value)
    return out


def _dedupe(schema: dict[str, Any], smallest: int = 400) -> dict[str, Any]:
    """``schema`` with every repeat of a large subschema (a seed document's schema repeating ``config.schema``)
    replaced by a pointer to its first place, breadth first, so the shallower copy stays whole."""
    seen: dict[str, str] = {}

    def key(node: dict[str, Any]) -> str:
        return json.dumps({k: v for k, v in node.items() if k != "description"}, sort_keys=True)

    queue: list[tuple[dict[str, Any], str]] = [(schema, "")]
    while queue:
        node, path = queue.pop(0)
        for name, sub in list((node.get("properties") or {}).items()):
            if not isinstance(sub, dict):
                continue
            where = f"{path}.{name}" if path else name
            text = key(sub)
            if len(text) >= smallest and text in seen:
                note = f"The same shape as `{seen[text]}`."
                described = f"{sub['description']} {note}" if sub.get("description") else note
                node["properties"][name] = {"type": sub.get("type", "object"), "description": described}
                continue
            seen.setdefault(text, where)
            queue.append((sub, where))
            for variant in sub.get("anyOf", []):
                if isinstance(variant, dict):
                    queue.append((variant, where))
    return schema


_STRICT_KEYWORDS = frozenset({
    "type", "properties", "required", "additionalProperties", "items", "anyOf", "enum", "const", "description",
    "pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minItems",
    "maxItems"})
"""What OpenAI's strict mode (structured outputs) accepts in a schema; anything else makes a request fail."""
_DROPPED_IN_STRICT = frozenset({"default", "minLength", "maxLength", "examples"})
"""Keywords left out of a strict schema: the server checks them anyway (a default applies when null is sent)."""


def strict_schema(schema: dict[str, Any]) -> dict[str, Any] | None:
    """``schema`` in the form OpenAI's ``"strict": true`` requires, or None when it cannot take that form.

    Every object closed (``additionalProperties: false``) and every property required; an optional property
    becomes nullable. ``oneOf`` becomes ``anyOf`` (same meaning for these discriminated unions). Free-form
    objects (``additionalProperties`` other than false), a root that is not a plain object, or a keyword
    strict mode does not know make it impossible.
    """
    if schema.get("type") != "object" or "anyOf" in schema or "oneOf" in schema:
        return None
    try:
        strict: dict[str, Any] = _strict(schema)
    except _NotStrict:
        return None
    return strict


class _NotStrict(Exception):
    pass


def _strict(node: Any) -> Any:
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROPPED_IN_STRICT:
            continue
        if key == "oneOf":
            key = "anyOf"
        if key not in _STRICT_KEYWORDS:
            raise _NotStrict(key)
        if key == "properties":
            out[key] = {name: _strict(sub) for name, sub in value.items()}
        elif key in ("items",):
            out[key] = _strict(value)
        elif key == "anyOf":
            out[key] = [_strict(v) for v in value]
        else:
            out[key] = value
    is_object = out.get("type") == "object" or "properties" in out
    if is_object:
        if out.get("additionalProperties", False) is not False or "properties" not in out:
            raise _NotStrict("a free-form object")
        required = set(out.get("required", []))
        for name, sub in out["properties"].items():
            if name not in required:
                out["properties"][name] = _nullable(sub)
        out["required"] = list(out["properties"])
        out["additionalProperties"] = False
    return out


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` that also accepts null."""
    if any(v.get("type") == "null" for v in schema.get("anyOf", [])) or schema.get("type") == "null":
        return schema
    kind = schema.get("type")
    if isinstance(kind, str) and "enum" not in schema and "const" not in schema:
        return {**schema, "type": [kind, "null"]}
    if "anyOf" in schema:
        return {**schema, "anyOf": [*schema["anyOf"], {"type": "null"}]}
    description = {"description": schema["description"]} if "description" in schema else {}
    inner = {k: v for k, v in schema.items() if k != "description"}
    return {"anyOf": [inner, {"type": "null"}], **description}
