"""Loading a request and checking it whole, like a graph engine's compile step.

``load_request`` parses JSON into a ``Request`` and runs ``check_request``: type names must be safe
identifiers, every rule must name known types, limits must make sense, and seed_data must obey the request's
own schema and limits. Every problem is reported at once, each with its JSON path; ``RequestInvalid`` is
raised when there is any.
"""

from __future__ import annotations

import typing
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from igg.act.apply import Actor
from igg.errors import Problem, RequestInvalid
from igg.graph.state import GraphState
from igg.io.encodable import find_unencodable
from igg.io.inputs import parse_json, read_text
from igg.models.common import IDENTIFIER_HINT, is_identifier, property_key_problem
from igg.models.request import Request
from igg.models.schema import DEFAULT_IDENTITY_KEYS, Schema
from igg.ontology.model import OntologyError
from igg.ontology.read import load_ontology


def load_request(
    source: str | Path | dict[str, Any],
    *,
    source_name: str | None = None,
    ontologies: bool = True,
    documents: bool = False,
) -> Request:
    """Parse and check a request from a path, a JSON string or a dict. Raises ``RequestInvalid``.

    ``documents``: the context comes from documents (``igg run --documents``), so a grounding policy that
    quotes evidence needs no ``context_data``: each answer's evidence is quoted from its own document.

    ``config.schema`` may name an ontology file (``{"ontology": PATH}``, relative to the request file's
    folder, else to the working directory), imported by ``igg.ontology``; ``ontologies=False`` refuses that (a
    server reads no file a remote client names).

    A string is JSON text when it starts with ``{``; otherwise it is the name of a request file, read when it
    exists (``load_request("request.json")`` reads the file, as ``load_request(Path("request.json"))`` does).
    """
    if isinstance(source, str) and not source.lstrip().startswith("{"):
        if not Path(source).is_file():
            shown = source if len(source) <= 60 else source[:57] + "..."
            raise RequestInvalid(
                [
                    Problem(
                        "",
                        f"{shown!r} is neither a JSON object nor an existing file; pass the "
                        "request as JSON text, a dict, or the path of a request file",
                    )
                ],
                source=source_name or "request",
            )
        source = Path(source)
    name = source_name or (
        ("standard input" if str(source) == "-" else str(source)) if isinstance(source, Path) else "request"
    )
    folder = source.parent if isinstance(source, Path) and str(source) != "-" else None
    if isinstance(source, Path):
        source = read_text(source, source=name)
    if isinstance(source, str):
        source = parse_json(source, source=name)
    if not isinstance(source, dict):
        raise RequestInvalid(
            [Problem("", f"a request must be a JSON object, got {type(source).__name__}")], source=name
        )
    source = _with_ontology(source, folder, name, ontologies)
    unencodable = find_unencodable(source)
    if unencodable is not None:  # a lone surrogate could reach the graph, the store and every export
        raise RequestInvalid(
            [Problem(unencodable.path, unencodable.describe().partition(": ")[2])], source=name
        )
    try:
        request = Request.model_validate(source)
    except ValidationError as exc:
        raise RequestInvalid(pydantic_problems(exc, Request), source=name) from None
    problems = check_request(request, documents=documents)
    if problems:
        raise RequestInvalid(problems, source=name)
    if request.session_id is None:
        request = request.model_copy(update={"session_id": f"igg-{uuid.uuid4().hex[:12]}"})
    return request


def check_request(request: Request, *, documents: bool = False) -> list[Problem]:
    """Every cross-field problem of a parsed request (empty when it is sound; ``documents``: see
    ``load_request``)."""
    problems = check_schema(request.config.schema_, "config.schema")
    if problems:
        return problems  # the seed cannot be checked against a broken schema
    if "\x00" in request.goal_prompt:  # a store keeps the goal as text, and PostgreSQL text cannot hold NUL
        problems.append(
            Problem(
                "goal_prompt",
                f"the NUL character (U+0000) at character "
                f"{request.goal_prompt.index(chr(0))} cannot be stored; drop it",
            )
        )
    if (
        request.config.grounding in ("required", "required_edges", "values")
        and not request.context_data.strip()
        and not documents
    ):
        problems.append(
            Problem(
                "config.grounding",
                f"{request.config.grounding!r} needs context_data to quote evidence from; give "
                "context_data (or build from documents: igg run --documents), or use 'warn' or 'off'",
            )
        )
    loops = request.config.constraints.allow_self_loops
    edge_types = request.config.schema_.edge_types
    for i, name in enumerate(loops if isinstance(loops, list) else []):
        if name not in edge_types:
            problems.append(
                Problem(
                    f"config.constraints.allow_self_loops[{i}]",
                    f"{name!r} is not an edge type of the schema ({', '.join(edge_types)})",
                )
            )
    if request.seed_data is not None:
        _, seed_problems = build_state(request)
        problems += seed_problems
    return problems


def check_schema(schema: Schema, path: str) -> list[Problem]:
    """Problems of a schema: unsafe or repeated type names, rules that name unknown types or bad keys."""
    return [problem for check in _SCHEMA_CHECKS for problem in check(schema, path)]


def _name_problems(schema: Schema, path: str) -> list[Problem]:
    """Type names that are no safe identifier, listed twice, or both a node and an edge type."""
    problems: list[Problem] = []
    for field, names in (("node_types", schema.node_types), ("edge_types", schema.edge_types)):
        seen: set[str] = set()
        for i, name in enumerate(names):
            if not is_identifier(name):
                problems.append(
                    Problem(
                        f"{path}.{field}[{i}]",
                        f"{name!r} is not a safe identifier "
                        f"({IDENTIFIER_HINT}); type names become Neo4j labels",
                    )
                )
            if name in seen:
                problems.append(Problem(f"{path}.{field}[{i}]", f"{name!r} is listed twice"))
            seen.add(name)
    for name in sorted(set(schema.node_types) & set(schema.edge_types)):
        problems.append(Problem(f"{path}.edge_types", f"{name!r} is both a node type and an edge type"))
    return problems


def _key_problems_of_types(schema: Schema, path: str) -> list[Problem]:
    """``required_attributes`` and ``identity_keys``: of types the schema has, with valid keys (an identity
    has one at least)."""
    problems: list[Problem] = []
    nodes, edges = set(schema.node_types), set(schema.edge_types)
    known = ", ".join(schema.node_types)
    for t, keys in schema.required_attributes.items():
        if t not in nodes and t not in edges:
            problems.append(
                Problem(
                    f"{path}.required_attributes.{t}",
                    f"{t!r} is not a node or edge type; "
                    f"node types: {known}; edge types: {', '.join(schema.edge_types) or '(none)'}",
                )
            )
        problems += _key_problems(keys, f"{path}.required_attributes.{t}")
    for t, keys in schema.identity_keys.items():
        if t not in nodes:
            problems.append(
                Problem(f"{path}.identity_keys.{t}", f"{t!r} is not a node type; node types: {known}")
            )
        if not keys:
            problems.append(Problem(f"{path}.identity_keys.{t}", "an identity needs at least one key"))
        problems += _key_problems(keys, f"{path}.identity_keys.{t}")
    return problems


def _pattern_problems(schema: Schema, path: str) -> list[Problem]:
    """``edge_patterns`` naming a node or edge type the schema lacks."""
    problems: list[Problem] = []
    nodes, edges = set(schema.node_types), set(schema.edge_types)
    known = ", ".join(schema.node_types)
    for i, p in enumerate(schema.edge_patterns):
        for end, name in (("from", p.from_), ("to", p.to)):
            if name not in nodes:
                problems.append(
                    Problem(
                        f"{path}.edge_patterns[{i}].{end}",
                        f"{name!r} is not a node type; node types: {known}",
                    )
                )
        if p.type not in edges:
            problems.append(
                Problem(
                    f"{path}.edge_patterns[{i}].type",
                    f"{p.type!r} is not an edge type; edge types: {', '.join(schema.edge_types) or '(none)'}",
                )
            )
    return problems


def _completeness_problems(schema: Schema, path: str) -> list[Problem]:
    """Completeness rules naming a type the schema lacks, or an attribute that is no valid key."""
    problems: list[Problem] = []
    nodes, edges = set(schema.node_types), set(schema.edge_types)
    known = ", ".join(schema.node_types)
    for i, rule in enumerate(schema.completeness):
        node_type = getattr(rule, "node_type", None)
        if node_type is not None and node_type not in nodes:
            problems.append(
                Problem(
                    f"{path}.completeness[{i}].node_type",
                    f"{node_type!r} is not a node type; node types: {known}",
                )
            )
        edge_type = getattr(rule, "edge_type", None)
        if edge_type is not None and edge_type not in edges:
            problems.append(
                Problem(f"{path}.completeness[{i}].edge_type", f"{edge_type!r} is not an edge type")
            )
        attribute = getattr(rule, "attribute", None)
        if attribute is not None and (problem := property_key_problem(attribute)):
            problems.append(Problem(f"{path}.completeness[{i}].attribute", problem))
    return problems


def _hierarchy_problems(schema: Schema, path: str) -> list[Problem]:
    """``subclass_of`` and ``disjoint_with`` naming a node type the schema lacks."""
    nodes = set(schema.node_types)
    known = ", ".join(schema.node_types)
    return [
        Problem(f"{path}.subclass_of.{t}", f"{name!r} is not a node type; node types: {known}")
        for t, parents in (*schema.subclass_of.items(), *schema.disjoint_with.items())
        for name in (t, *parents)
        if name not in nodes
    ]


def _per_type_problems(schema: Schema, path: str) -> list[Problem]:
    """``descriptions`` and ``property_types`` of types the schema lacks; property types of invalid keys."""
    problems: list[Problem] = []
    nodes, edges = set(schema.node_types), set(schema.edge_types)
    known = ", ".join(schema.node_types)
    for field_name, per_type in (
        ("descriptions", schema.descriptions),
        ("property_types", schema.property_types),
    ):
        for t, value in per_type.items():
            if t not in nodes and t not in edges:
                problems.append(
                    Problem(
                        f"{path}.{field_name}.{t}",
                        f"{t!r} is not a node or edge type; node types: "
                        f"{known}; edge types: {', '.join(schema.edge_types) or '(none)'}",
                    )
                )
            if field_name == "property_types":
                assert isinstance(value, dict)
                problems += _key_problems(list(value), f"{path}.property_types.{t}")
    return problems


def _valid_time_problems(schema: Schema, path: str) -> list[Problem]:
    """``valid_time``: types the schema has; ``one_at_a_time`` on edge types only; ``properties`` on node
    types only, never an identity key (an identity does not change over time)."""
    problems = []
    nodes, edges = set(schema.node_types), set(schema.edge_types)
    for t, scope in schema.valid_time.items():
        where = f"{path}.valid_time.{t}"
        if t not in nodes and t not in edges:
            problems.append(Problem(where, f"{t!r} is not a node or edge type"))
        elif scope.one_at_a_time and t not in edges:
            problems.append(
                Problem(f"{where}.one_at_a_time", f"{t!r} is a node type; one_at_a_time is for edge types")
            )
        elif scope.properties and t not in nodes:
            problems.append(
                Problem(
                    f"{where}.properties",
                    f"{t!r} is an edge type; properties with one value at a time are for node types",
                )
            )
        identity = set(schema.identity_keys.get(t, DEFAULT_IDENTITY_KEYS))
        for key in scope.properties:
            if key in identity:
                problems.append(
                    Problem(
                        f"{where}.properties",
                        f"{key!r} is an identity key of {t}; an identity does not change over time",
                    )
                )
        problems += _key_problems(scope.properties, f"{where}.properties")
    return problems


_SCHEMA_CHECKS: tuple[Callable[[Schema, str], list[Problem]], ...] = (
    _name_problems,
    _key_problems_of_types,
    _pattern_problems,
    _completeness_problems,
    _hierarchy_problems,
    _valid_time_problems,
    _per_type_problems,
)
"""The checks ``check_schema`` runs, in order."""


def _with_ontology(source: dict[str, Any], folder: Path | None, name: str, allowed: bool) -> dict[str, Any]:
    """The request with ``config.schema: {"ontology": PATH, ...}`` replaced by the schema imported from PATH
    (relative to the request's folder; other keys of that object override the imported ones)."""
    config = source.get("config")
    schema = config.get("schema") if isinstance(config, dict) else None
    if not (isinstance(schema, dict) and "ontology" in schema):
        return source
    assert isinstance(config, dict)
    if not allowed:
        raise RequestInvalid(
            [
                Problem(
                    "config.schema.ontology",
                    "this server reads no ontology file a client names: "
                    "send the schema itself (igg schema import FILE prints it)",
                )
            ],
            source=name,
        )
    given = schema["ontology"]
    if not isinstance(given, str) or not given:
        raise RequestInvalid(
            [Problem("config.schema.ontology", "give the path of an ontology file")], source=name
        )
    path = Path(given)
    if not path.is_absolute() and folder is not None:
        path = folder / path
    try:
        imported = load_ontology(path).schema().model_dump(by_alias=True, exclude_defaults=True)
    except OntologyError as exc:
        raise RequestInvalid([Problem("config.schema.ontology", str(exc))], source=name) from None
    imported.update({k: v for k, v in schema.items() if k != "ontology"})
    return {**source, "config": {**config, "schema": imported}}


def _key_problems(keys: list[str], path: str) -> list[Problem]:
    return [
        Problem(f"{path}[{i}]", problem) for i, k in enumerate(keys) if (problem := property_key_problem(k))
    ]


def build_state(request: Request) -> tuple[GraphState, list[Problem]]:
    """A fresh graph state for the request, with its seed graph loaded; returns the seed's problems too."""
    config = request.config
    state = GraphState(config.schema_.compile())
    problems: list[Problem] = []
    if request.seed_data is not None:
        actor = Actor(state.schema, config.constraints)
        problems = actor.load_seed(state, request.seed_data)
    return state, problems


def pydantic_problems(exc: ValidationError, model: type[BaseModel]) -> list[Problem]:
    """Pydantic errors as problems with JSON paths; unknown keys list the keys that are allowed there."""
    problems = []
    for e in exc.errors(include_url=False):
        loc = [p for p in e["loc"] if not (isinstance(p, str) and (p.startswith("function-") or "[" in p))]
        path = _json_path(loc)
        if e["type"] == "extra_forbidden":
            parent = _model_at(model, loc[:-1])
            allowed = ", ".join(f.alias or n for n, f in parent.model_fields.items()) if parent else ""
            problems.append(
                Problem(path, f"unknown key {loc[-1]!r}" + (f"; allowed here: {allowed}" if allowed else ""))
            )
        elif e["type"] == "missing":
            problems.append(Problem(path, "required but missing"))
        else:
            shown = repr(e.get("input"))
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            problems.append(Problem(path, f"{e['msg']} (got {shown})"))
    return problems


def _json_path(loc: list[Any]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _model_at(model: type[BaseModel], loc: list[Any]) -> type[BaseModel] | None:
    current: Any = model
    for part in loc:
        if isinstance(part, int):
            continue
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return None
        field = next((f for n, f in current.model_fields.items() if part in (n, f.alias)), None)
        if field is None:
            # a union member tag such as 'has_attribute' in a discriminated union
            return None
        current = _first_model(field.annotation)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _first_model(annotation: Any) -> Any:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _first_model(arg)
        if found is not None:
            return found
    return None
