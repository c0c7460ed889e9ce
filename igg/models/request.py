"""The request payload: goal, context, configuration (limits, schema, loop, observation, LLM, finalize).

The seed payload of the specification validates verbatim; every other key is an optional extension with
the default documented on its field. Unknown keys are an error. Secrets never live here: API keys and
database passwords come from the environment.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from igg.models.document import GraphDocument
from igg.models.schema import Schema


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class DuplicateGuard(_Strict):
    """The near-duplicate guard on ADD_NODE (rules in ``igg.graph.duplicates``)."""

    policy: Literal["reject", "warn", "off"] = Field(
        default="reject",
        description=(
            "reject: an ADD_NODE whose identity is close to an existing node of its type is rejected "
            '(POSSIBLE_DUPLICATE) unless the action says "distinct": true; warn: it is added and its verdict '
            "carries the warning; off: no check."
        ),
    )
    threshold: float = Field(
        default=0.9,
        ge=0.5,
        le=1.0,
        description=(
            "Least Levenshtein similarity (1 - distance / longer length) of folded identities that counts."
        ),
    )
    aliases: list[list[str]] = Field(
        default_factory=list,
        description=(
            'Groups of names that mean the same thing, e.g. [["AuthService", "AuthenticationService"]].'
        ),
    )


class Constraints(_Strict):
    """Hard limits: an action that would break one is rejected with its error code."""

    max_nodes: int = Field(
        default=500, ge=1, description="Most nodes the graph may hold (MAX_NODES_EXCEEDED)."
    )
    max_edges: int = Field(
        default=2000, ge=0, description="Most edges the graph may hold (MAX_EDGES_EXCEEDED)."
    )
    allow_self_loops: bool | list[str] = Field(
        default=False,
        description=(
            'Whether an edge may join a node to itself: true, false, or the edge types that may (["CALLS"]).'
        ),
    )
    max_actions_per_response: int = Field(
        default=50,
        ge=1,
        description="Actions beyond this many in one response are rejected (TOO_MANY_ACTIONS).",
    )
    allow_deletions: bool = Field(
        default=True, description="False rejects every delete (DELETION_FORBIDDEN)."
    )
    max_deletions_per_iteration: int = Field(
        default=10, ge=0, description="Delete actions accepted per response (DELETION_LIMIT_EXCEEDED)."
    )
    protect_seed_nodes: bool = Field(
        default=True, description="Nodes from seed_data cannot be deleted (PROTECTED_NODE)."
    )
    max_property_length: int = Field(
        default=16384, ge=1, description="Longest string value (characters) and longest list (items)."
    )
    max_properties: int = Field(default=64, ge=1, description="Most properties one node or edge may carry.")
    duplicates: DuplicateGuard = Field(
        default_factory=DuplicateGuard, description="The near-duplicate guard (POSSIBLE_DUPLICATE)."
    )

    def self_loop_allowed(self, edge_type: str) -> bool:
        """Whether an edge of ``edge_type`` may join a node to itself (``allow_self_loops``)."""
        allowed = self.allow_self_loops
        return allowed if isinstance(allowed, bool) else edge_type in allowed


class ObservationConfig(_Strict):
    """How the graph is shown to the agent."""

    token_budget: int = Field(
        default=6000, ge=300, le=1_000_000, description="Estimated tokens the observation may never exceed."
    )


class ContextConfig(_Strict):
    """How context_data is walked."""

    chunk_tokens: int = Field(
        default=3000, ge=50, description="Context larger than this (estimated tokens) is split into chunks."
    )


class Prices(_Strict):
    """Price table for cost accounting, in currency units per million tokens."""

    input_per_million: float = Field(ge=0, description="Price of one million prompt tokens.")
    output_per_million: float = Field(ge=0, description="Price of one million completion tokens.")


class LLMConfig(_Strict):
    """LLM agent settings. The endpoint and key come from OPENAI_BASE_URL / OPENAI_API_KEY."""

    model: str | None = Field(default=None, description="Model name; default IGG_MODEL, else 'gpt-4o-mini'.")
    temperature: float = Field(default=0.0, ge=0, le=2, description="Sampling temperature.")
    seed: int | None = Field(default=None, description="Sampling seed, where the server supports it.")
    max_output_tokens: int = Field(default=4096, ge=16, description="Completion token cap per call.")
    token_budget: int | None = Field(
        default=None,
        ge=1,
        description="Total tokens (prompt + completion) the run may spend (budget_exhausted).",
    )
    cost_budget: float | None = Field(
        default=None, ge=0, description="Total cost the run may spend, with `prices` (budget_exhausted)."
    )
    prices: Prices | None = Field(default=None, description="Price table used for cost accounting.")
    timeout_seconds: float = Field(
        default=60.0,
        gt=0,
        le=3600,
        description=(
            "Deadline of one HTTP call, however slowly the server sends (plus a 1 s grace to cancel it)."
        ),
    )
    max_answer_bytes: int | None = Field(
        default=None,
        ge=1024,
        description=(
            "Longer answers are cut here (reported, kept once); default 8 bytes per max_output_tokens, "
            "at least 16384."
        ),
    )
    max_retries: int = Field(
        default=4, ge=0, le=20, description="Retries of a failed call before agent_error."
    )


class FinalizeConfig(_Strict):
    """What happens after the loop stops."""

    prune_isolated: bool = Field(default=False, description="Remove nodes without edges (reported).")


class Config(_Strict):
    """Run configuration: the seed's max_iterations, constraints and schema, plus optional extensions."""

    max_iterations: int = Field(default=20, ge=1, le=100_000, description="Hard iteration guard.")
    constraints: Constraints = Field(default_factory=Constraints, description="Hard limits.")
    schema_: Schema = Field(alias="schema", description="Allowed node and edge types and their rules.")
    stuck_after: int = Field(
        default=3, ge=1, description="Stop with 'stuck' after this many iterations in a row accept nothing."
    )
    apply_mode: Literal["per_action", "atomic"] = Field(
        default="per_action",
        description="per_action: each valid action applies; atomic: a response applies whole or not at all.",
    )
    stop_when_complete: bool = Field(
        default=False, description="End the run ('finished') once every completeness rule is met."
    )
    observation: ObservationConfig = Field(default_factory=ObservationConfig, description="Observation.")
    context: ContextConfig = Field(default_factory=ContextConfig, description="Context chunking.")
    llm: LLMConfig = Field(default_factory=LLMConfig, description="LLM agent settings.")
    finalize: FinalizeConfig = Field(default_factory=FinalizeConfig, description="Finalization.")
    grounding: Literal["off", "warn", "required_edges", "required", "values"] = Field(
        default="off",
        description=(
            "Evidence checks (igg.act.evidence): off; warn (quotes not found warned); required_edges or "
            "required (edges, or all facts, need evidence; quotes not found are refused); values (every "
            "node identity and property value must be stated in the context, igg.act.values)."
        ),
    )
    entity_typing: Literal["off", "schema"] = Field(
        default="off",
        description=(
            "schema: an ADD_EDGE end whose reference gives no label and names no node of a type the edge "
            "allows adds that node, typed by the edge type's patterns (an ontology's domain and range); a "
            "node of a disjoint type is TYPE_CONFLICT (igg.act.entities). off: such a reference is "
            "NODE_NOT_FOUND."
        ),
    )
    review: bool = Field(
        default=False,
        description=(
            "Workspace sessions (MCP, HTTP, tool calls): each apply's validated actions wait as a pending "
            "plan until a reviewer approves (all or chosen actions) or rejects it with a note."
        ),
    )


class Request(_Strict):
    """A request to build a graph: the specification's input payload."""

    session_id: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$",
        description="Session id (letters, digits, . _ : -); generated when omitted.",
    )
    goal_prompt: str = Field(min_length=1, description="What the graph should capture.")
    context_data: str = Field(default="", description="The raw text/code/data the agent is analysing.")
    config: Config = Field(description="Limits, schema and run settings.")
    seed_data: GraphDocument | None = Field(
        default=None,
        description="A graph (IGG document format) to start from; it must obey schema and limits.",
    )
