"""The agent response and its actions: a discriminated union on ``type``.

A node reference is a set of properties that must match exactly one node, e.g. ``{"name": "AuthController"}``;
it may carry ``"label"`` to name the node type when several types share a name.

``read_response`` turns a decoded JSON value into a ``ParsedResponse`` *per action*: one malformed action
becomes an ``UnreadableAction`` in its slot (and later a rejected verdict); it never sinks its neighbours.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Literal, TypeVar, cast

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    model_validator,
)

from igg.errors import ResponseInvalid
from igg.io.encodable import escape_value as _escaped
from igg.io.encodable import find_unencodable
from igg.models.common import Properties, PropertyValue
from igg.models.verdicts import ErrorCode

NodeRef = Annotated[
    dict[str, PropertyValue],
    Field(
        min_length=1,
        description=(
            'Properties that match exactly one node, e.g. {"name": "AuthService"}; add "label" '
            "(the node type) to disambiguate."
        ),
    ),
]


class _Action(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


MAX_QUOTE_CHARS = 500
"""The longest evidence quote (characters) an action may carry; a longer one is INVALID_PROPERTY."""
MAX_EVIDENCE_ITEMS = 4
"""Most evidence items (quotes or spans) one action may carry."""


class EvidenceSpan(BaseModel):
    """Characters start..end (end excluded) of context chunk ``chunk`` (1-based)."""

    model_config = ConfigDict(extra="forbid")

    chunk: int = Field(
        ge=1, strict=True, description="The context chunk, 1-based as the observation shows it."
    )
    start: int = Field(
        ge=0, strict=True, description="First character of the span in that chunk's text (0-based)."
    )
    end: int = Field(ge=1, strict=True, description="One past the span's last character.")

    @model_validator(mode="after")
    def _ordered(self) -> EvidenceSpan:
        if self.end <= self.start:
            raise ValueError(f"end ({self.end}) must be greater than start ({self.start})")
        if self.end - self.start > MAX_QUOTE_CHARS:
            raise ValueError(
                f"a span may cover at most {MAX_QUOTE_CHARS} characters; got {self.end - self.start}"
            )
        return self


Quote = Annotated[str, Field(min_length=1, max_length=MAX_QUOTE_CHARS)]
"""A short verbatim passage of the context."""


def _listed(value: Any) -> Any:
    return [value] if isinstance(value, str | dict) else value


def _evidence_item(value: Any) -> Any:
    """One evidence item checked with a plain message (a quote, or a span), before the union reads it."""
    if isinstance(value, str):
        if not value.strip():
            raise ValueError("an evidence quote must not be empty")
        if len(value) > MAX_QUOTE_CHARS:
            raise ValueError(
                f"an evidence quote may be at most {MAX_QUOTE_CHARS} characters; got {len(value):,}: "
                "quote the few words that state it"
            )
        return value
    if isinstance(value, dict):
        try:
            return EvidenceSpan.model_validate(value)
        except ValidationError as exc:
            raise ValueError(
                'a span is {"chunk": N, "start": S, "end": E}: '
                + "; ".join(
                    f"{'.'.join(map(str, e['loc'])) or 'span'}: {e['msg']}"
                    for e in exc.errors(include_url=False)
                )
            ) from None
    if isinstance(value, EvidenceSpan):
        return value
    raise ValueError(
        'an evidence item is a quote (a string) or a span {"chunk", "start", "end"}; '
        f"got {type(value).__name__}"
    )


EvidenceItem = Annotated[Quote | EvidenceSpan, BeforeValidator(_evidence_item)]
"""A quote of the context or an explicit span of it."""

Evidence = Annotated[
    list[EvidenceItem],
    BeforeValidator(_listed),
    Field(
        max_length=MAX_EVIDENCE_ITEMS,
        description=(
            "Verbatim quotes of the context stating this (at most "
            f"{MAX_QUOTE_CHARS} chars each) or spans {{chunk, start, end}}."
        ),
    ),
]
"""An action's evidence: one quote, or a list of quotes and spans (``igg.act.evidence`` locates them)."""


def _time_text(value: Any) -> Any:
    """A year given as a number (2024) reads as its text; anything else is checked by the act step's time
    rule."""
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else value


TimeText = Annotated[str | None, BeforeValidator(_time_text)]
"""A valid-time bound as the agent wrote it (``igg.models.validtime`` reads it)."""
_FROM = "When it began to hold (ISO 8601, e.g. 2024-03); types in valid_time only."
_TO = "When it stopped holding (exclusive)."


class AddNode(_Action):
    """Add a node of type ``label`` with ``properties`` (identity keys and required attributes included)."""

    type: Literal["ADD_NODE"]
    label: str = Field(description="The node type, one of the schema's node_types.")
    properties: Properties = Field(default_factory=dict, description="The node's properties.")
    distinct: bool = Field(
        default=False,
        description=(
            "true: add the node even though its identity is close to an existing node's (answers a "
            "POSSIBLE_DUPLICATE rejection); recorded in the node's provenance."
        ),
    )
    evidence: Evidence = Field(default_factory=list)
    valid_from: TimeText = Field(default=None, description=_FROM)
    valid_to: TimeText = Field(default=None, description=_TO)


class AddEdge(_Action):
    """Add an edge of type ``label`` from one existing node to another."""

    type: Literal["ADD_EDGE"]
    label: str = Field(description="The edge type, one of the schema's edge_types.")
    from_: NodeRef = Field(alias="from", description="Reference to the source node.")
    to: NodeRef = Field(description="Reference to the target node.")
    properties: Properties = Field(default_factory=dict, description="The edge's properties.")
    evidence: Evidence = Field(default_factory=list)
    valid_from: TimeText = Field(default=None, description=_FROM)
    valid_to: TimeText = Field(default=None, description=_TO)


class UpdateNode(_Action):
    """Set (and optionally remove) properties of one existing node."""

    type: Literal["UPDATE_NODE"]
    node: NodeRef = Field(description="Reference to the node to change.")
    properties: Properties = Field(default_factory=dict, description="Properties to set (added or replaced).")
    remove: list[str] = Field(default_factory=list, description="Property keys to remove.")
    evidence: Evidence = Field(default_factory=list)
    valid_from: TimeText = Field(default=None, description=_FROM)
    valid_to: TimeText = Field(default=None, description=_TO)


class DeleteNode(_Action):
    """Delete one node and every edge touching it."""

    type: Literal["DELETE_NODE"]
    node: NodeRef = Field(description="Reference to the node to delete.")


class DeleteEdge(_Action):
    """Delete the edge of type ``label`` between two nodes."""

    type: Literal["DELETE_EDGE"]
    label: str = Field(description="The edge type.")
    from_: NodeRef = Field(alias="from", description="Reference to the source node.")
    to: NodeRef = Field(description="Reference to the target node.")


class UpdateEdge(_Action):
    """Set (and optionally remove) properties of the edge of type ``label`` between two nodes."""

    type: Literal["UPDATE_EDGE"]
    label: str = Field(description="The edge type.")
    from_: NodeRef = Field(alias="from", description="Reference to the source node.")
    to: NodeRef = Field(description="Reference to the target node.")
    properties: Properties = Field(default_factory=dict, description="Properties to set (added or replaced).")
    remove: list[str] = Field(default_factory=list, description="Property keys to remove.")
    evidence: Evidence = Field(default_factory=list)
    valid_from: TimeText = Field(default=None, description=_FROM)
    valid_to: TimeText = Field(default=None, description=_TO)


class MergeNodes(_Action):
    """Merge ``node`` into ``into`` (same type): properties by ``prefer``, edges rewired, ``node`` deleted.

    ``prefer: "into"`` (default) keeps ``into``'s value where both have a property and copies the ones only
    ``node`` has; ``"node"`` takes ``node``'s values instead (identity keys always stay ``into``'s). Every
    edge of ``node`` moves to ``into``; one that would repeat an edge ``into`` already has (same type, same
    other end), or become a forbidden self-loop, is collapsed into it. Counts as a deletion.
    """

    type: Literal["MERGE_NODES"]
    node: NodeRef = Field(description="Reference to the node to merge away (the duplicate).")
    into: NodeRef = Field(description="Reference to the node that stays.")
    prefer: Literal["into", "node"] = Field(
        default="into",
        description="Whose value wins where both nodes have a property (identity keys: always into's).",
    )


class QueryAction(_Action):
    """Ask about the graph (read-only): the answer appears in the next observation, within its budget."""

    type: Literal["QUERY"]
    query: dict[str, Any] = Field(
        description=(
            '{"query": "neighbours", "node": <ref>, "depth": 1-5, "edge_types": [...], "direction":'
            ' "out"|"in"|"both"}, {"query": "path", "from": <ref>, "to": <ref>} or {"query": "find", "label":'
            ' T, "where": {"key": value | {"contains"|"in"|"gt"|"ge"|"lt"|"le"|"exists": ...}}, "grounded":'
            ' "grounded"|"ungrounded"|"unverified"}, each with optional "as_of" (a time)'
        )
    )


Action = Annotated[
    AddNode | AddEdge | UpdateNode | DeleteNode | DeleteEdge | UpdateEdge | MergeNodes | QueryAction,
    Field(discriminator="type"),
]
AnyAction = AddNode | AddEdge | UpdateNode | DeleteNode | DeleteEdge | UpdateEdge | MergeNodes | QueryAction
"""One action model (the members of ``Action``, without the discriminator annotation)."""

ACTION_TYPES: dict[str, type[_Action]] = {
    "ADD_NODE": AddNode,
    "ADD_EDGE": AddEdge,
    "UPDATE_NODE": UpdateNode,
    "DELETE_NODE": DeleteNode,
    "DELETE_EDGE": DeleteEdge,
    "UPDATE_EDGE": UpdateEdge,
    "MERGE_NODES": MergeNodes,
    "QUERY": QueryAction,
}


class AgentResponse(BaseModel):
    """One agent turn: its reasoning, the actions to apply in order, and whether it is finished."""

    model_config = ConfigDict(extra="forbid")

    reasoning: str = Field(default="", description="Why these actions; kept for provenance.")
    actions: list[Action] = Field(default_factory=list, description="Actions, applied in order.")
    finished: bool = Field(
        default=False, description="True when the graph is complete; its actions still apply."
    )


@dataclass(frozen=True, slots=True)
class UnreadableAction:
    """An action that could not be read (not an object, an unknown type, a bad field): it stands in the
    action's slot and becomes a rejected verdict with ``code`` and ``message``. Not an exception."""

    code: ErrorCode
    message: str
    raw: Any
    action_type: str = "?"


ActionError = UnreadableAction
"""Deprecated name of ``UnreadableAction`` (it is not an exception); kept because ``igg.models`` exported
it."""


@dataclass(frozen=True, slots=True)
class ParsedResponse:
    """A response read action by action."""

    reasoning: str
    finished: bool
    items: list[AnyAction | UnreadableAction]
    """Each item is an action model (AddNode, ...) or an UnreadableAction."""
    truncated: bool = False
    """The output was cut off: ``items`` holds only the actions received whole (see
    ``igg.agents.parsing``)."""
    repaired: int = 0
    """Unencodable characters (lone surrogates) replaced with U+FFFD in ``reasoning``."""

    @property
    def actions(self) -> list[AnyAction]:
        """The actions that were read whole."""
        return [a for a in self.items if not isinstance(a, UnreadableAction)]


_ACTION_ADAPTERS = {name: TypeAdapter(model) for name, model in ACTION_TYPES.items()}
_ACTION_LIST: TypeAdapter[list[AnyAction]] = TypeAdapter(list[Action])
_TOP_KEYS = ("reasoning", "actions", "finished")


def read_action(raw: Any) -> AnyAction | UnreadableAction:
    """One action from a decoded JSON value: an action model, or an ``UnreadableAction`` saying what is
    wrong."""
    if not isinstance(raw, dict):
        return UnreadableAction(
            ErrorCode.INVALID_ACTION,
            f"an action must be a JSON object with a 'type'; got {type(raw).__name__} {_short(raw)}",
            raw,
        )
    kind = raw.get("type")
    adapter = _ACTION_ADAPTERS.get(kind) if isinstance(kind, str) else None
    if adapter is None or not isinstance(kind, str):
        return UnreadableAction(
            ErrorCode.UNKNOWN_ACTION,
            f"unknown action type {kind!r}; allowed: {', '.join(ACTION_TYPES)}",
            raw,
        )
    try:
        return cast(AnyAction, adapter.validate_python(raw))  # ACTION_TYPES holds exactly AnyAction's classes
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        in_properties = all(e["loc"] and e["loc"][0] in ("properties", "evidence") for e in errors)
        code = ErrorCode.INVALID_PROPERTY if in_properties else ErrorCode.INVALID_ACTION
        return UnreadableAction(code, f"{kind}: {describe_errors(errors, ACTION_TYPES[kind])}", raw, kind)


def read_response(value: Any, *, encodable: bool = False) -> ParsedResponse:
    """Read a decoded JSON value as an agent response, action by action.

    Raises ``ResponseInvalid`` (INVALID_RESPONSE) when the value is not a response object at all.
    ``encodable``: the caller has checked that no text in the value holds a lone surrogate (e.g. its JSON
    text had none), so actions are not scanned for them again.
    """
    if not isinstance(value, dict):
        raise ResponseInvalid(
            ErrorCode.INVALID_RESPONSE,
            "the response must be a JSON object with 'reasoning', 'actions' and optionally 'finished'; "
            f"got {type(value).__name__}",
        )
    unknown = [k for k in value if k not in _TOP_KEYS]
    if unknown:
        raise ResponseInvalid(
            ErrorCode.INVALID_RESPONSE,
            f"unknown key{'s' * (len(unknown) > 1)} {', '.join(map(repr, unknown))} in the response; "
            f"allowed: {', '.join(_TOP_KEYS)}",
        )
    reasoning = value.get("reasoning", "")
    actions = value.get("actions", [])
    finished = value.get("finished", False)
    if not isinstance(reasoning, str):
        raise ResponseInvalid(ErrorCode.INVALID_RESPONSE, "'reasoning' must be a string")
    if not isinstance(actions, list):
        raise ResponseInvalid(
            ErrorCode.INVALID_RESPONSE,
            f"'actions' must be a list of action objects; got {type(actions).__name__}",
        )
    if not isinstance(finished, bool):
        raise ResponseInvalid(ErrorCode.INVALID_RESPONSE, "'finished' must be true or false")
    if encodable and len(actions) > 1:
        try:  # the whole list in one call (a static agent's hundreds of actions): the same models
            items: list[AnyAction | UnreadableAction] = list(_ACTION_LIST.validate_python(actions))
            return ParsedResponse(reasoning=reasoning, finished=finished, items=items)
        except ValidationError:
            pass  # one at a time: each action that is not right gets its own verdict
    read = read_action if encodable else _storable_action
    return ParsedResponse(reasoning=reasoning, finished=finished, items=[read(a) for a in actions])


def _storable_action(raw: Any) -> AnyAction | UnreadableAction:
    """``read_action``, except that an action holding text UTF-8 cannot encode (a lone surrogate, anywhere:
    label, key or value) is rejected with INVALID_PROPERTY naming where, so it never reaches the graph or a
    writer; the rejected action is kept with that text escaped (``\\ud800``), so its verdict is storable."""
    found = find_unencodable(raw)
    if found is None:
        return read_action(raw)
    kind = raw.get("type") if isinstance(raw, dict) else None
    kind = kind if isinstance(kind, str) and find_unencodable(kind) is None else "?"
    return UnreadableAction(ErrorCode.INVALID_PROPERTY, f"{kind}: {found.describe()}", _escaped(raw), kind)


def describe_errors(errors: list[Any], model: type[BaseModel] | None = None) -> str:
    """Pydantic errors as one readable sentence per problem, each with its path."""
    parts = []
    for e in errors:
        loc = ".".join(str(p) for p in e["loc"] if not _is_union_tag(p))
        if e["type"] == "extra_forbidden":
            allowed = ""
            if model is not None and len(e["loc"]) == 1:
                allowed = "; allowed: " + ", ".join((f.alias or n) for n, f in model.model_fields.items())
            parts.append(f"unknown key {loc!r}{allowed}")
        elif e["type"] == "missing":
            parts.append(f"missing {loc!r}")
        else:
            parts.append(f"{loc or '(value)'}: {e['msg']} (got {_short(e.get('input'))})")
    return "; ".join(dict.fromkeys(parts))


def _is_union_tag(part: Any) -> bool:
    return isinstance(part, str) and (part in _UNION_TAGS or part.startswith("list["))


_UNION_TAGS = frozenset({"str", "bool", "int", "float"})


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


M = TypeVar("M", bound=BaseModel)
"""A model class."""


def constructed(model: type[M], **given: Any) -> M:
    """``model.model_construct(**given)`` with every other field at its default, filled in here: pydantic's
    ``model_construct`` inspects a default factory's signature on every call (about 0.3 ms each: 15 of the 19
    s that loading a 45,000-element seed took). For actions the act step builds itself (a seed's, a planned
    difference's), never for what a client sent (that is validated)."""
    for name, info in model.model_fields.items():
        if name not in given:
            factory = cast(Callable[[], Any] | None, info.default_factory)
            given[name] = factory() if factory is not None else info.default
    return model.model_construct(**given)
