"""Completeness rules (``schema.completeness``) evaluated into open to-dos the agent can act on.

Rules are soft: unlike required attributes they never reject an action; they tell the agent what is still
missing, appear in the final summary, and with ``stop_when_complete`` end the run once all are met. Each
unmet rule gives one to-do per offending node for its first ``EXAMPLES`` nodes and one line counting the
rest, so the list stays short on any graph. Node names are JSON-quoted (see ``igg.observe.escape``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from igg.graph.state import GraphState
from igg.models.schema import HasAttributeRule, MinEdgesRule, NoIsolatedNodesRule, Schema
from igg.observe.escape import quote

EXAMPLES = 3
"""Offending nodes named per rule; the rest are counted."""


def describe_rule(rule: Any) -> str:
    """A rule in words, e.g. ``every Interface has >= 1 IMPLEMENTS in``."""
    if isinstance(rule, HasAttributeRule):
        return f"every {rule.node_type} has {rule.attribute}"
    if isinstance(rule, NoIsolatedNodesRule):
        return f"no isolated {rule.node_type} nodes" if rule.node_type else "no isolated nodes"
    if isinstance(rule, MinEdgesRule):
        return f"every {rule.node_type} has >= {rule.min} {rule.edge_type} {rule.direction}"
    raise TypeError(f"unknown completeness rule {rule!r}")


def open_todos(state: GraphState, schema: Schema) -> list[str]:
    """The unmet completeness rules of ``schema`` as readable to-dos ([] when all are met)."""
    todos: list[str] = []
    for rule in schema.completeness:
        rule_text = describe_rule(rule)
        offenders = 0
        for node_id, problem in _offenders(state, rule):
            offenders += 1
            if offenders <= EXAMPLES:
                todos.append(f"{_name(state, node_id)} {problem} (rule: {rule_text})")
        if offenders > EXAMPLES:
            todos.append(f"... and {offenders - EXAMPLES:,} more nodes break the rule: {rule_text}")
    return todos


def _offenders(state: GraphState, rule: Any) -> Iterator[tuple[str, str]]:
    if isinstance(rule, HasAttributeRule):
        key = rule.attribute
        for n in state.nodes_of_type(rule.node_type):
            if _empty(state.nodes[n]["properties"].get(key)):
                yield n, f"has no {key}"
    elif isinstance(rule, NoIsolatedNodesRule):
        ids = state.nodes_of_type(rule.node_type) if rule.node_type else state.nodes
        succ, pred = state.succ, state.pred
        for n in ids:
            if not succ[n] and not pred[n]:
                yield n, "has no edges"
    elif isinstance(rule, MinEdgesRule):
        t, need = rule.edge_type, rule.min
        sides = {"out": (state.succ,), "in": (state.pred,), "any": (state.succ, state.pred)}[rule.direction]
        for n in state.nodes_of_type(rule.node_type):
            have = 0
            for adjacency in sides:
                for keyed in adjacency[n].values():
                    for data in keyed.values():
                        if data["type"] == t:
                            have += 1
                if have >= need:
                    break
            if have < need:
                if need == 1:
                    yield n, f"has no {t} edge {rule.direction}"
                else:
                    yield n, f"has {have or 'no'} {t} edges {rule.direction} (needs {need})"


def _empty(value: Any) -> bool:
    return value is None or value == "" or value == []


def _name(state: GraphState, node_id: str) -> str:
    data = state.nodes[node_id]
    t: str = data["type"]
    keys = state.schema.identity_keys[t]
    props = data["properties"]
    if len(keys) == 1:
        return f"{t} {quote(props[keys[0]], 120)}"
    return t + " " + " ".join(f"{k}={quote(props[k], 120)}" for k in keys)
