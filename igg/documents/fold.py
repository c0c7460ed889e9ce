"""The graph a corpus's answers make: every fact with the documents that support it.

``fold`` reads every document's answer (its chunks' actions) and gives the nodes and edges they make, a pure
function of the corpus and its answers: a fresh build and an update of the same corpus give the same graph,
whatever happened before. Its rules:

- a node is made by the ``ADD_NODE`` actions naming its type and identity; the documents whose actions add it
  support it, and it goes when none is left;
- references (``UPDATE_NODE``'s node, the ends of ``ADD_EDGE``/``UPDATE_EDGE``) resolve as the act step
  resolves them (``GraphState.find_nodes``) against the nodes every document adds, with the properties their
  ``ADD_NODE`` actions give; a reference that matches no node, or several, is dropped with its reason;
- an edge is made by the ``ADD_EDGE`` actions between two resolved nodes (type and pattern allowed by the
  schema); the documents adding it support it;
- ``UPDATE_NODE`` and ``UPDATE_EDGE`` claim property values of a fact without supporting it (their ``remove``
  says nothing a document supports: a property goes when no document claims it);
- **when documents disagree on a property value, the document with the smallest id (code-point order) wins**;
  within one document the last claim (in chunk and action order) wins. The value's supporters are the
  documents claiming that value. A node or edge lacking a required property after this is dropped;
- other actions (``DELETE_*``, ``MERGE_NODES``, ``QUERY``) say nothing about a source and are dropped.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from igg.documents.times import Entry, bound_edges, claimed_bounds, entries_of, fold_history
from igg.graph.grounding import EVIDENCE_KEPT
from igg.graph.state import GraphState
from igg.models.actions import AddEdge, AddNode, UnreadableAction, UpdateEdge, UpdateNode, read_action
from igg.models.schema import CompiledSchema

SelfLoops = bool | Callable[[str], bool]
"""Whether an edge may join a node to itself: for every edge type, or per edge type
(``Constraints.self_loop_allowed``)."""

NodeKey = tuple[str, tuple[Any, ...]]
"""A node by (type, identity)."""
EdgeKey = tuple[str, NodeKey, NodeKey]
"""An edge by (type, source, target)."""
Claims = dict[str, dict[str, Any]]
"""Document id -> the properties it claims (its last value of each)."""


@dataclass(kw_only=True)
class Fact:
    """A node or an edge as the documents make it."""

    properties: dict[str, Any]
    documents: list[str]
    """The documents supporting it, sorted."""
    property_documents: dict[str, list[str]]
    """Each property's value, by the documents claiming that value (sorted)."""
    claimants: list[str] = field(default_factory=list)
    """The documents claiming a property of it without supporting it (``UPDATE_NODE``/``UPDATE_EDGE``),
    sorted."""
    chunks: dict[str, list[int]] = field(default_factory=dict)
    """Each supporting document's chunks (from 1) whose actions add it."""
    evidence: list[dict[str, Any]] = field(default_factory=list)
    """Where its documents state it: the evidence of the actions making or claiming it, located in their
    chunks (``igg.documents.grounding``), in document order, at most ``EVIDENCE_KEPT``."""

    def provenance(self) -> dict[str, Any]:
        """What the fact's provenance records of its sources."""
        return {
            "documents": self.documents,
            "property_documents": self.property_documents,
            "claimants": self.claimants,
            "chunks": self.chunks,
            "evidence": self.evidence or None,
        }


@dataclass(kw_only=True)
class Desired:
    """The nodes and edges of a corpus, and the claims dropped (document, chunk, reason)."""

    nodes: dict[NodeKey, Fact] = field(default_factory=dict)
    edges: dict[EdgeKey, Fact] = field(default_factory=dict)
    dropped: list[tuple[str, int, str]] = field(default_factory=list)
    displaced: list[EdgeKey] = field(default_factory=list)
    """One-at-a-time edges dropped for a time conflict (``igg.documents.times``)."""


Answer = tuple[str, int, list[Any]]
"""(document id, chunk number from 1, the actions its answer holds)."""

LOCATED = "igg_evidence"
"""The key under which an answer's action carries its evidence located in its chunk
(``igg.documents.grounding``); not part of the action."""


Known = Callable[[dict[str, Any]], list[NodeKey]]
"""Nodes beyond the answers' own a reference may match (``igg.documents.local``: a graph's facts left as they
are)."""


def fold(
    schema: CompiledSchema,
    answers: Iterable[Answer],
    *,
    self_loops: SelfLoops = False,
    known: Known | None = None,
) -> Desired:
    """The graph ``answers`` make (see the module doc); ``answers`` in any order. ``known``: the other nodes a
    reference matches (they are not made, but references and edges may name them)."""
    desired = Desired()
    scratch = GraphState(schema)
    entries: dict[NodeKey, list[Entry]] = {}
    evidence: dict[Any, list[dict[str, Any]]] = {}
    node_claims, node_chunks, updates, edge_actions = _read(
        schema, scratch, answers, desired, entries, evidence
    )
    keys = list(node_claims)
    scratch.load(
        [
            {"id": str(i), "type": key[0], "properties": _winners(node_claims[key])[0]}
            for i, key in enumerate(keys)
        ],
        [],
    )
    by_id = {str(i): key for i, key in enumerate(keys)}
    outside: set[NodeKey] = set()

    def resolve(ref: dict[str, Any], doc: str, chunk: int) -> NodeKey | None:
        found = {by_id[n] for n in scratch.find_nodes(ref)}
        if known is not None:
            more = set(known(ref)) - found
            outside.update(more)
            found |= more
        if len(found) == 1:
            return next(iter(found))
        desired.dropped.append(
            (doc, chunk, f"reference {ref!r} matches {'several nodes' if found else 'no node'}")
        )
        return None

    supporters = {key: sorted(claims) for key, claims in node_claims.items()}
    for order, (doc, chunk, update, located) in enumerate(updates):
        found = resolve(update.node, doc, chunk)
        if found in node_claims:  # a known node's claims are its own (it is left as it is)
            evidence.setdefault(found, []).extend(located)
            _update(
                schema,
                node_claims[found],
                entries.setdefault(found, []),
                found[0],
                doc,
                chunk,
                order,
                update,
                desired,
            )
    for key in keys:
        props, by_value = _winners(node_claims[key])
        missing = [k for k in schema.required.get(key[0], ()) if k not in props]
        if missing:
            desired.dropped.append((supporters[key][0], 0, f"{key[0]} {key[1]!r} lacks {', '.join(missing)}"))
        else:
            if entries.get(key):
                fold_history(props, by_value, entries[key])
            desired.nodes[key] = Fact(
                properties=props,
                documents=supporters[key],
                property_documents=by_value,
                claimants=sorted(set(node_claims[key]) - set(supporters[key])),
                chunks=node_chunks[key],
                evidence=_sorted_evidence(evidence.get(key)),
            )
    _edges(schema, resolve, outside, edge_actions, desired, evidence, self_loops=self_loops)
    for key, reason in bound_edges(schema.one_at_a_time, desired.edges):
        desired.dropped.append((desired.edges.pop(key).documents[0], 0, reason))
        desired.displaced.append(key)
    return desired


def _update(
    schema: CompiledSchema,
    claims: Claims,
    entries: list[Entry],
    label: str,
    doc: str,
    chunk: int,
    order: int,
    update: UpdateNode,
    desired: Desired,
) -> None:
    """An ``UPDATE_NODE``'s claims of a node: its properties, and its bounds, or its one-at-a-time values over
    them (``igg.documents.times``)."""
    bounds = claimed_bounds(schema, label, update)
    if isinstance(bounds, str):
        desired.dropped.append((doc, chunk, bounds))
        return
    values = entries_of(schema, label, doc, 1_000_000 + order, update.properties, bounds)
    entries.extend(values)
    mine = claims.setdefault(doc, {})
    mine.update({k: v for k, v in update.properties.items() if not any(k == e[2] for e in values)})
    if not values:
        mine.update(bounds)


def _read(
    schema: CompiledSchema,
    scratch: GraphState,
    answers: Iterable[Answer],
    desired: Desired,
    entries: dict[NodeKey, list[Entry]],
    evidence: dict[Any, list[dict[str, Any]]],
) -> tuple[
    dict[NodeKey, Claims],
    dict[Any, dict[str, list[int]]],
    list[tuple[str, int, UpdateNode, list[dict[str, Any]]]],
    list[tuple[str, int, AddEdge | UpdateEdge, list[dict[str, Any]]]],
]:
    """The answers' actions, by document then chunk, sorted by what they do: the properties each document
    claims of each node it adds, the chunks adding each node, the node updates and the edge actions (what
    makes nothing is dropped in ``desired``; ``entries``: the one-at-a-time property values, ``evidence``: the
    located evidence of each node added)."""
    node_claims: dict[NodeKey, Claims] = {}
    node_chunks: dict[Any, dict[str, list[int]]] = {}
    updates: list[tuple[str, int, UpdateNode, list[dict[str, Any]]]] = []
    edge_actions: list[tuple[str, int, AddEdge | UpdateEdge, list[dict[str, Any]]]] = []
    order = 0
    for doc, chunk, actions in sorted(answers, key=lambda a: (a[0], a[1])):
        for raw in actions:
            action, located = action_of(raw)
            order += 1
            if isinstance(action, UnreadableAction):
                desired.dropped.append((doc, chunk, f"unreadable action: {action.message}"))
            elif isinstance(action, AddNode):
                key = _added_node(schema, scratch, action, doc, chunk, desired)
                bounds = claimed_bounds(schema, action.label, action)
                if isinstance(bounds, str):
                    desired.dropped.append((doc, chunk, bounds))
                elif key is not None:
                    node_claims.setdefault(key, {}).setdefault(doc, {}).update(
                        {**action.properties, **bounds}
                    )
                    _chunk(node_chunks, key, doc, chunk)
                    entries.setdefault(key, []).extend(
                        entries_of(schema, key[0], doc, order, action.properties, bounds)
                    )
                    evidence.setdefault(key, []).extend(located or ())
            elif isinstance(action, UpdateNode):
                updates.append((doc, chunk, action, list(located or ())))
            elif isinstance(action, AddEdge | UpdateEdge):
                edge_actions.append((doc, chunk, action, list(located or ())))
            else:
                desired.dropped.append((doc, chunk, f"{action.type} says nothing a document supports"))
    return node_claims, node_chunks, updates, edge_actions


def _added_node(
    schema: CompiledSchema, scratch: GraphState, action: AddNode, doc: str, chunk: int, desired: Desired
) -> NodeKey | None:
    """The node ``action`` adds, or None (dropped in ``desired``) when its type is not in the schema or its
    properties lack its identity."""
    if action.label not in schema.node_types:
        desired.dropped.append((doc, chunk, f"node type {action.label!r} is not in the schema"))
        return None
    identity = scratch.identity(action.label, action.properties)
    if identity is None:
        desired.dropped.append(
            (
                doc,
                chunk,
                f"{action.label} lacks its identity ({', '.join(schema.identity_keys[action.label])})",
            )
        )
        return None
    return (action.label, identity)


def _edges(
    schema: CompiledSchema,
    resolve: Callable[[dict[str, Any], str, int], NodeKey | None],
    outside: set[NodeKey],
    edge_actions: list[tuple[str, int, AddEdge | UpdateEdge, list[dict[str, Any]]]],
    desired: Desired,
    evidence: dict[Any, list[dict[str, Any]]],
    *,
    self_loops: SelfLoops,
) -> None:
    claims: dict[EdgeKey, Claims] = {}
    chunks: dict[Any, dict[str, list[int]]] = {}
    updates: list[tuple[str, EdgeKey, dict[str, Any]]] = []
    for doc, chunk, action, located in edge_actions:
        if action.label not in schema.edge_types:
            desired.dropped.append((doc, chunk, f"edge type {action.label!r} is not in the schema"))
            continue
        bounds = claimed_bounds(schema, action.label, action)
        if isinstance(bounds, str):
            desired.dropped.append((doc, chunk, bounds))
            continue
        source = resolve(action.from_, doc, chunk)
        target = resolve(action.to, doc, chunk)
        if source is None or target is None:
            continue
        key = (action.label, source, target)
        evidence.setdefault(key, []).extend(located)
        if isinstance(action, UpdateEdge):
            updates.append((doc, key, {**action.properties, **bounds}))
            continue
        allowed = schema.patterns.get(action.label)
        if allowed is not None and (source[0], target[0]) not in allowed:
            desired.dropped.append(
                (doc, chunk, f"{action.label} from {source[0]} to {target[0]} is not an allowed edge pattern")
            )
        elif source == target and not (self_loops(action.label) if callable(self_loops) else self_loops):
            desired.dropped.append(
                (doc, chunk, f"a {action.label} self-loop (allow_self_loops does not allow it)")
            )
        else:
            claims.setdefault(key, {}).setdefault(doc, {}).update({**action.properties, **bounds})
            _chunk(chunks, key, doc, chunk)
    supporters = {key: sorted(c) for key, c in claims.items()}
    for doc, key, props in updates:
        if key in claims:
            claims[key].setdefault(doc, {}).update(props)
    for key, edge_claims in claims.items():
        if any(end not in desired.nodes and end not in outside for end in key[1:]):
            continue  # an end was dropped
        props, by_value = _winners(edge_claims)
        missing = [k for k in schema.required.get(key[0], ()) if k not in props]
        if missing:
            desired.dropped.append((supporters[key][0], 0, f"{key[0]} edge lacks {', '.join(missing)}"))
            continue
        desired.edges[key] = Fact(
            properties=props,
            documents=supporters[key],
            property_documents=by_value,
            claimants=sorted(set(edge_claims) - set(supporters[key])),
            chunks=chunks[key],
            evidence=_sorted_evidence(evidence.get(key)),
        )


def action_of(raw: Any) -> tuple[Any, list[dict[str, Any]] | None]:
    """An answer's action (``read_action``'s model) and the evidence located for it (``LOCATED``), if any."""
    located = raw.get(LOCATED) if isinstance(raw, dict) else None
    if located is None:
        return read_action(raw), None
    return read_action({k: v for k, v in raw.items() if k != LOCATED}), list(located)


def _sorted_evidence(items: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """A fact's located evidence in document, chunk and offset order, each item once, the first
    ``EVIDENCE_KEPT``."""
    if not items:
        return []
    seen: dict[str, dict[str, Any]] = {}
    for item in items:
        seen.setdefault(json.dumps(item, sort_keys=True, default=str), item)
    ordered = sorted(
        seen.values(),
        key=lambda i: (str(i.get("document")), int(i.get("chunk") or 0), int(i.get("start") or -1)),
    )
    return ordered[:EVIDENCE_KEPT]


def _chunk(table: dict[Any, dict[str, list[int]]], key: Any, doc: str, chunk: int) -> None:
    found = table.setdefault(key, {}).setdefault(doc, [])
    if chunk not in found:
        found.append(chunk)


def _winners(claims: Claims) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """Each property's value from the smallest document id claiming it, and the documents claiming that
    value."""
    props: dict[str, Any] = {}
    by_value: dict[str, list[str]] = {}
    for doc in sorted(claims):
        for k, v in claims[doc].items():
            if k not in props:
                props[k] = v
                by_value[k] = [doc]
            elif props[k] == v:
                by_value[k].append(doc)
    return props, by_value


__all__ = ["LOCATED", "Desired", "EdgeKey", "Fact", "NodeKey", "action_of", "fold"]
