"""Loading a saved graph back: an IGG document or networkx node-link JSON (what ``igg.export.document``
writes) read from a file, and turned into a graph state.

``load_document`` reads either format; ``document_to_state`` loads a document through ``Actor.load_seed``,
so a hand-edited file is checked like any seed graph, and a document without a schema gets one inferred
from its content.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from igg.errors import Problem, RequestInvalid
from igg.export.document import EDGE_FIELDS, NODE_FIELDS, RENAMED, TYPE_KEY
from igg.graph.state import GraphState
from igg.io.inputs import parse_json, read_text
from igg.models.document import DocEdge, DocNode, GraphDocument
from igg.models.request import Constraints, DuplicateGuard
from igg.models.schema import Schema


def node_link_to_document(data: dict[str, Any]) -> dict[str, Any]:
    """An IGG document dict from node-link data written by ``write_node_link``."""
    links = data.get("edges", data.get("links", []))
    nodes = [
        {"id": str(n["id"]), "type": n.get(TYPE_KEY), "properties": _unflat(n, NODE_FIELDS)}
        for n in data["nodes"]
    ]
    edges = []
    for i, e in enumerate(links):
        edges.append(
            {
                "id": str(e.get("key", f"e{i + 1}")),
                "type": e.get(TYPE_KEY),
                "from": str(e["source"]),
                "to": str(e["target"]),
                "properties": _unflat(e, EDGE_FIELDS),
            }
        )
    graph = dict(data.get("graph") or {})
    schema = graph.pop("igg_schema", None)
    return {
        **({"schema": schema} if schema is not None else {}),
        "nodes": nodes,
        "edges": edges,
        "metadata": graph,
    }


def load_document(path: str | Path) -> GraphDocument:
    """Read an IGG document (or node-link JSON) from a file. Raises ``RequestInvalid`` naming each problem."""
    from igg.request.load import pydantic_problems

    path = Path(path)
    name = "standard input" if str(path) == "-" else str(path)
    raw = parse_json(read_text(path, source=name), source=name)
    if isinstance(raw, dict) and "directed" in raw and "format" not in raw:
        raw = node_link_to_document(raw)
    if not isinstance(raw, dict):
        raise RequestInvalid(
            [Problem("", "a graph document must be a JSON object with 'nodes' and 'edges'")], source=name
        )
    try:
        return GraphDocument.model_validate(raw)
    except ValidationError as exc:
        raise RequestInvalid(pydantic_problems(exc, GraphDocument), source=name) from None


def infer_schema(doc: GraphDocument, *, source: str = "document") -> Schema:
    """A schema that admits the document: its node and edge types, identity ``name`` where every node has one.

    A node type whose nodes lack ``name`` is identified by ``id`` if they all have it, else by the first key
    all its nodes share; types in first-seen order.
    """
    node_types: dict[str, list[set[str]]] = {}
    for n in doc.nodes:
        node_types.setdefault(n.type, []).append(set(n.properties))
    edge_types = list(dict.fromkeys(e.type for e in doc.edges))
    identity: dict[str, list[str]] = {}
    for t, key_sets in node_types.items():
        common = set.intersection(*key_sets) if key_sets else set()
        if "name" in common:
            continue
        pick = "id" if "id" in common else next(iter(sorted(common)), None)
        if pick is None:
            raise RequestInvalid(
                [
                    Problem(
                        "schema",
                        f"the document has no schema and the {t} nodes share no "
                        "property to identify them by; add a schema with identity_keys",
                    )
                ],
                source=source,
            )
        identity[t] = [pick]
    return Schema(node_types=list(node_types) or ["Node"], edge_types=edge_types, identity_keys=identity)


def document_to_state(
    doc: GraphDocument, *, constraints: Constraints | None = None, source: str = "document"
) -> GraphState:
    """A graph state holding the document, checked by ``Actor.load_seed``; raises ``RequestInvalid``.

    Limits default to the document's own size (a saved graph is never too big to reload).
    """
    from igg.act import Actor
    from igg.request.load import check_schema

    schema = doc.schema_ if doc.schema_ is not None else infer_schema(doc, source=source)
    problems = check_schema(schema, "schema")
    if problems:
        raise RequestInvalid(problems, source=source)
    if constraints is None:
        elements: list[DocNode | DocEdge] = [*doc.nodes, *doc.edges]
        longest = max([1, *(_longest(p) for x in elements for p in x.properties.values())])
        widest = max([1, *(len(x.properties) for x in elements)])
        # a saved graph is reloaded as it is: its near-duplicates were already judged when they were added
        # (static maps skip the guard; "distinct": true overrides it), so the guard is off here
        constraints = Constraints(
            max_nodes=max(1, len(doc.nodes)),
            max_edges=len(doc.edges),
            allow_self_loops=True,
            max_property_length=max(16384, longest),
            max_properties=max(64, widest),
            duplicates=DuplicateGuard(policy="off"),
        )
    state = GraphState(schema.compile())
    problems = Actor(state.schema, constraints).load_seed(state, doc, path="document")
    if problems:
        raise RequestInvalid(problems, source=source)
    return state


def _longest(value: Any) -> int:
    return len(value) if isinstance(value, str | list) else 0


def _unflat(item: dict[str, Any], reserved: tuple[str, ...]) -> dict[str, Any]:
    return {
        (k[len(RENAMED) :] if k.startswith(RENAMED) else k): v for k, v in item.items() if k not in reserved
    }


__all__ = ["document_to_state", "infer_schema", "load_document", "node_link_to_document"]
