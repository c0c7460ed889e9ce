"""The tool surface as a model reads it: each operation's input schema, compact, for MCP's ``tools/list`` and
OpenAI's function definitions (``igg tools``).

The schemas come from the same pydantic input models the server validates every call with (``igg.workspace.
ops``), so nothing a client is told is looser than what the server enforces, and the server still checks
everything. What the published form leaves out is what a model does not need to read twice:

* the prose of each property and each type: names, types, bounds, defaults and enums remain, the tool's
  description says what its arguments mean, and the branches of a union (the action types, the query
  kinds, the completeness rules) keep their first sentence, which says which branch is which;
* pydantic's ``title`` keywords (copies of the property names), ``"default": null``, the OpenAPI
  ``discriminator`` (the ``oneOf`` branches say the same with their ``const``), and ``null`` as an
  alternative of an optional argument (omitting it means the same);
* repeats: a subschema met more than once in a tool (a node reference, a property value, the schema of a
  seed document) is one entry of ``$defs`` that every place refers to with ``$ref``; a definition used once is
  written in place;
* the class docstring of a definition whose every use already describes it;
* the request's optional settings a tool-driven session rarely sets (``SUMMARIZED``: the LLM's settings, the
  observation and context budgets, finalization, the near-duplicate guard, a seed graph) are one line each
  naming their keys; their full schema is ``igg schema request`` (``schemas/request.schema.json``);
* ``run_session``'s request: it takes exactly ``start_session``'s arguments (plus ``agent``, ``exports`` and
  ``provenance``); its ``config`` and ``seed_data`` are described as ``start_session``'s instead of repeating
  their schemas (a tool schema cannot refer to another tool's).

None of this loosens a call: the server validates every argument with the full input model, and refuses a
wrong value in a summarized setting as it refuses any other, naming the field (``config.llm.temperature``).
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel

from igg.workspace.inputs import inline_refs
from igg.workspace.ops import OPERATIONS, Operation

SUMMARIZED: dict[tuple[str, ...], str] = {
    ("config", "llm"): "model, temperature, max_output_tokens, token_budget, ...",
    ("config", "observation"): "{token_budget}",
    ("config", "context"): "{chunk_tokens}",
    ("config", "finalize"): "{prune_isolated}",
    ("config", "constraints", "duplicates"): "{policy: reject|warn|off, threshold, aliases}",
    ("config", "schema", "completeness"): "[{rule: has_attribute|no_isolated_nodes|min_edges, node_type, "
    "attribute | edge_type, direction, min}]",
    (
        "config",
        "schema",
        "property_types",
    ): "{NodeType: {property: string|integer|float|boolean|list|{enum: [...]}}}",
    ("config", "schema", "terms"): "{Name: {label, iri, datatype}}: an imported ontology's own names",
    (
        "config",
        "schema",
        "valid_time",
    ): "{Type: {one_at_a_time: bool, properties: [...]}}: types whose facts take valid_from/valid_to",
    ("seed_data",): "An IGG graph document: {nodes: [{id, type, properties}], edges: [{id, type, from, to}]}",
}
"""Optional request settings published as one line each (path from the request's top, and the line); the
server validates them with the full model."""

_SMALLEST_SHARED = 60
"""Subschemas shorter than this (compact JSON, bytes) are written in place even when repeated."""


def tool_schema(op: Operation) -> dict[str, Any]:
    """The compact input JSON Schema ``op`` publishes (see the module docstring)."""
    raw = op.input.model_json_schema(by_alias=True)
    schema, names = _inline(_compact(raw))
    session_id = schema.get("properties", {}).get("session_id")
    if not op.request and isinstance(session_id, dict):
        # where a client does not choose the id (it is one the server gave or listed), a wrong one is refused
        # naming the pattern: the schema need not carry it
        session_id.pop("pattern", None)
    if op.request:
        for path, description in SUMMARIZED.items():
            _summarize(schema, path, description)
    for name, description in op.described:
        schema["properties"][name] = {"type": "object", "description": description}
    schema = _share(schema, names)
    schema.pop("description", None)  # the model's docstring: the tool's description says it
    return schema


def output_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The output JSON Schema an MCP tool publishes for its answers: the operation's output model
    (``igg.workspace.outputs``), inlined, without what a client does not check: titles, descriptions, defaults
    (an answer carries its values), ``required`` and ``additionalProperties`` (answers are open: a field added
    or made optional in a later version breaks no client's check; the types of the fields an answer carries
    are checked) and the values of an ``enum`` (its type stays: a value added later breaks no client's check
    either; the docs list them); a nullable field's ``anyOf`` of one type and ``null`` is one ``"type": [T,
    "null"]`` (nulls stay allowed where an answer may carry them)."""

    def strip(node: Any) -> Any:
        if isinstance(node, list):
            return [strip(v) for v in node]
        if not isinstance(node, dict):
            return node
        out: dict[str, Any] = {}
        for k, v in node.items():
            if k in _SCHEMA_MAPS and isinstance(v, dict):  # names are data: a field may be called "default"
                out[k] = {name: strip(sub) for name, sub in v.items()}
            elif not (
                k in ("title", "description")
                and isinstance(v, str)
                or k in ("default", "required")
                or k == "additionalProperties"
                and isinstance(v, bool)
            ):
                out[k] = v if k in _VALUES else strip(v)
        if isinstance(out.get("enum"), list) and "type" in out:
            del out[
                "enum"
            ]  # open, as the fields are: a value added later (a status) breaks no client's check
        return _merged_null(out)

    out: dict[str, Any] = strip(inline_refs(model.model_json_schema(by_alias=True)))
    return out


def _merged_null(schema: dict[str, Any]) -> dict[str, Any]:
    """``{"anyOf": [S, {"type": "null"}]}`` as S with ``null`` added to its ``type`` (and to its ``enum``),
    when S names one type: the same values, in fewer bytes."""
    alternatives = schema.get("anyOf")
    if not isinstance(alternatives, list) or len(alternatives) != 2 or {"type": "null"} not in alternatives:
        return schema
    (one,) = [a for a in alternatives if a != {"type": "null"}]
    if not isinstance(one, dict) or not isinstance(one.get("type"), str) or "const" in one:
        return schema
    merged = {**{k: v for k, v in schema.items() if k != "anyOf"}, **one, "type": [one["type"], "null"]}
    if isinstance(one.get("enum"), list):
        merged["enum"] = [*one["enum"], None]
    return merged


HINT_DEFAULTS = {
    "readOnlyHint": False,
    "destructiveHint": True,
    "idempotentHint": False,
    "openWorldHint": True,
}
"""What the MCP specification assumes of a tool that gives no hint (a tool list leaves those out)."""


def hints(op: Operation) -> dict[str, bool]:
    """``op``'s MCP tool annotations that differ from the specification's defaults (``HINT_DEFAULTS``); a
    read-only tool's destructive and idempotent hints mean nothing (the specification) and are left out
    too."""
    given = {"readOnlyHint": op.read_only, "openWorldHint": op.open_world}
    if not op.read_only:
        given |= {"destructiveHint": op.destructive, "idempotentHint": op.idempotent}
    return {k: v for k, v in given.items() if v != HINT_DEFAULTS[k]}


def mcp_tools(operations: tuple[Operation, ...] = OPERATIONS) -> list[dict[str, Any]]:
    """The operations as MCP ``tools/list`` entries: name, description, input schema, annotations and output
    schema, as ``igg mcp`` publishes them."""
    return [
        {
            "name": op.name,
            "description": op.description,
            "inputSchema": tool_schema(op),
            "annotations": hints(op),
            "outputSchema": output_schema(op.output),
        }
        for op in operations
    ]


def openai_tools(operations: tuple[Operation, ...] = OPERATIONS) -> list[dict[str, Any]]:
    """The operations as OpenAI function-calling tool definitions (chat completions ``tools=``).

    The same compact schemas as MCP's. ``"strict": true`` (structured outputs: the model's arguments always
    match the schema) on every tool whose schema allows it: objects closed (``additionalProperties: false``)
    with every property required, optional ones made nullable (``null`` means the default); tools taking
    free-form objects (a request, actions, node references) are sent without it.
    """
    tools = []
    for op in operations:
        schema = tool_schema(op)
        function: dict[str, Any] = {"name": op.name, "description": op.description}
        strict = strict_schema(schema) if "$defs" not in schema else None
        function["parameters"] = strict if strict is not None else schema
        if strict is not None:
            function["strict"] = True
        tools.append({"type": "function", "function": function})
    return tools


def compact_size(value: Any) -> int:
    """Bytes of ``value`` as compact JSON (UTF-8): what a tool list costs on the wire and in a prompt."""
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


_SCHEMA_MAPS = ("properties", "$defs", "patternProperties")
"""Keywords whose value maps names to schemas (the names are data, not keywords)."""
_VALUES = ("const", "enum", "default", "examples", "required")
"""Keywords whose value is data, not a schema."""


def _compact(node: Any) -> Any:
    """A JSON Schema without ``title``, ``"default": null``, ``discriminator``, and ``null`` alternatives of
    optional properties."""
    if isinstance(node, list):
        return [_compact(v) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if (
            key in ("title", "discriminator")
            and isinstance(value, str | dict)
            or key == "default"
            and value is None
        ):
            continue
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: _compact(sub) for name, sub in value.items()}
        elif key in _VALUES:
            out[key] = value
        else:
            out[key] = _compact(value)
    if isinstance(out.get("description"), str):
        out["description"] = _first_sentence(out["description"])
    if isinstance(out.get("anyOf"), list):
        out = _type_list(out)
    if "const" in out:  # the constant says its type (and is its own default)
        out.pop("type", None)
        if out.get("default") == out["const"]:
            del out["default"]
    required = set(out.get("required", ()))
    if isinstance(
        out.get("properties"), dict
    ):  # the names, types and bounds say it; the tool's description the rest
        out["properties"] = {
            name: _unsaid(sub if name in required else _not_null(sub))
            for name, sub in out["properties"].items()
        }
    return out


def _type_list(schema: dict[str, Any]) -> dict[str, Any]:
    """``anyOf`` alternatives that are bare types (``{"type": "string"}``, ...) as one ``"type": [...]`` list:
    the same set of values, in a third of the bytes."""
    bare = [
        v["type"]
        for v in schema["anyOf"]
        if isinstance(v, dict) and set(v) == {"type"} and isinstance(v["type"], str)
    ]
    if len(bare) < 2:
        return schema
    rest = [
        v
        for v in schema["anyOf"]
        if not (isinstance(v, dict) and set(v) == {"type"} and isinstance(v["type"], str))
    ]
    merged = {"type": bare}
    other = {k: v for k, v in schema.items() if k != "anyOf"}
    return {**other, **merged} if not rest else {**other, "anyOf": [merged, *rest]}


def _first_sentence(text: str) -> str:
    """A description's first sentence (up to ``. `` or ``; ``), reST literals as Markdown's."""
    text = " ".join(text.split("\n\n", 1)[0].split()).replace("``", "`")
    cut = re.search(r"(?<=[\w)\]'\"`])(?<!e\.g)(?<!i\.e)(\. |; )", text)
    return text if cut is None else text[: cut.start()] + "."


def _unsaid(schema: Any) -> Any:
    """A property's schema without its prose."""
    return {k: v for k, v in schema.items() if k != "description"} if isinstance(schema, dict) else schema


def _not_null(schema: Any) -> Any:
    """An optional property's schema without its ``null`` alternative (omitting the property means the
    same)."""
    if isinstance(schema, dict) and isinstance(schema.get("type"), list) and "null" in schema["type"]:
        kinds = [k for k in schema["type"] if k != "null"]
        return {**schema, "type": kinds[0] if len(kinds) == 1 else kinds}
    if not isinstance(schema, dict) or "anyOf" not in schema:
        return schema
    kept = [v for v in schema["anyOf"] if v != {"type": "null"}]
    if len(kept) == len(schema["anyOf"]):
        return schema
    rest = {k: v for k, v in schema.items() if k != "anyOf"}
    return {**kept[0], **rest} if len(kept) == 1 else {**rest, "anyOf": kept}


def _summarize(schema: dict[str, Any], path: tuple[str, ...], description: str) -> None:
    """Replace the setting at ``path`` (property names from the root) by ``{"type": T, description}``, ``T``
    its own type (an object, or an array: a list of completeness rules stays a list)."""
    node = schema
    for name in path[:-1]:
        node = node["properties"][name]
    kind = node["properties"][path[-1]].get("type", "object")
    node["properties"][path[-1]] = {
        "type": kind if kind in ("object", "array") else "object",
        "description": description,
    }


def _inline(schema: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """``schema`` with every local ``$ref`` replaced by its definition (the models are not recursive), and
    the name of each definition by its identity (``_key``), to name it again should it be shared; a
    definition's own description goes when the place that uses it has one."""
    defs = schema.get("$defs", {})

    def walk(node: Any, branch: bool = False) -> Any:
        if isinstance(node, list):
            return [walk(v, branch) for v in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            resolved = walk(defs[ref.removeprefix("#/$defs/")])
            if not branch:  # a type's docstring; a branch of a union keeps it: it says which branch is which
                resolved = _unsaid(resolved)
            return {**resolved, **{k: walk(v) for k, v in node.items() if k != "$ref"}}
        return {
            k: (v if k in _VALUES else walk(v, branch=k in ("oneOf", "anyOf")))
            for k, v in node.items()
            if k != "$defs"
        }

    out: dict[str, Any] = walk(schema)
    names = {_key(_unsaid(walk(sub))): name for name, sub in defs.items()}
    return out, names


def _share(schema: dict[str, Any], known: dict[str, str]) -> dict[str, Any]:
    """``schema`` with every subschema met more than once (descriptions aside) moved into ``$defs`` once and
    referred to from each place: the largest repeat first, again until none is left, so a repeat inside
    a shared definition is shared too. A description every place gives alike moves into the definition."""
    defs: dict[str, Any] = {}
    while True:
        counts: dict[str, int] = {}
        for body in (schema, *defs.values()):
            for text in _subschemas(body):
                counts[text] = counts.get(text, 0) + 1
        repeated = [t for t, n in counts.items() if n > 1 and len(t) >= _SMALLEST_SHARED]
        if not repeated:
            break
        text = max(repeated, key=len)
        name = known.get(text) or _name(json.loads(text), _first_place(schema, text) or "Shared", defs)
        uses: list[dict[str, Any]] = []
        schema = _refer(schema, text, name, uses)
        defs = {n: _refer(body, text, name, uses) for n, body in defs.items()}
        defs[name] = json.loads(text)
        said = {u.get("description") for u in uses}
        if len(said) == 1 and None not in said:  # every place says the same: say it once
            defs[name] = {**defs[name], "description": said.pop()}
            for use in uses:
                del use["description"]
    if defs:
        schema["$defs"] = defs
    return schema


def _refer(node: Any, text: str, name: str, uses: list[dict[str, Any]], top: bool = True) -> Any:
    """``node`` with every subschema of identity ``text`` (below the root) replaced by a ``$ref`` to ``name``
    (keeping the place's description); the new references are appended to ``uses``."""
    if isinstance(node, list):
        return [_refer(v, text, name, uses, top=False) for v in node]
    if not isinstance(node, dict):
        return node
    if not top and _key(node) == text:
        ref: dict[str, Any] = {"$ref": f"#/$defs/{name}"}
        if "description" in node:
            ref["description"] = node["description"]
        uses.append(ref)
        return ref
    return {k: (v if k in _VALUES else _refer(v, text, name, uses, top=False)) for k, v in node.items()}


def _key(node: dict[str, Any]) -> str:
    """A subschema's identity: its compact JSON without its description (the place's own words)."""
    return json.dumps(
        {k: v for k, v in node.items() if k != "description"}, sort_keys=True, separators=(",", ":")
    )


def _subschemas(node: Any, top: bool = True) -> list[str]:
    """The identity of every subschema below the root."""
    found: list[str] = []
    if isinstance(node, list):
        for v in node:
            found += _subschemas(v, top=False)
    elif isinstance(node, dict):
        if not top:
            found.append(_key(node))
        for k, v in node.items():
            if k not in _VALUES:
                found += _subschemas(v, top=False)
    return found


def _first_place(node: Any, text: str) -> str | None:
    """The name of the first property (breadth first) whose schema has identity ``text``."""
    queue = [node]
    while queue:
        current = queue.pop(0)
        if isinstance(current, list):
            queue += current
        elif isinstance(current, dict):
            for name, sub in (current.get("properties") or {}).items():
                if isinstance(sub, dict) and _key(sub) == text:
                    return str(name)
            queue += [v for k, v in current.items() if k not in _VALUES]
    return None


def _name(schema: dict[str, Any], place: str, taken: dict[str, Any]) -> str:
    """A readable ``$defs`` name for a shared subschema: a node reference, a property value, the properties
    of a node or edge, else after the first property that has it (``token_budget``: ``TokenBudget``)."""
    value = schema.get("additionalProperties")
    if "minProperties" in schema and schema.get("type") == "object":
        base = "NodeRef"
    elif "anyOf" in schema or isinstance(schema.get("type"), list):
        base = "Value"
    elif schema.get("type") == "array":
        base = "List"
    elif isinstance(value, dict) and value.get("$ref") == "#/$defs/Value":
        base = "Properties"
    else:
        base = "".join(part.capitalize() for part in place.split("_"))
    name, n = base, 2
    while name in taken:
        name, n = f"{base}{n}", n + 1
    return name


_STRICT_KEYWORDS = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "anyOf",
        "enum",
        "const",
        "description",
        "pattern",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minItems",
        "maxItems",
    }
)
"""What OpenAI's strict mode (structured outputs) accepts in a schema; anything else makes a request fail."""
_DROPPED_IN_STRICT = frozenset({"default", "minLength", "maxLength", "examples"})
"""Keywords left out of a strict schema: the server checks them anyway (a default applies when null is
sent)."""


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
