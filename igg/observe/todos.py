"""Completeness rules (``schema.completeness``) evaluated into open to-dos the agent can act on.

Rules are soft: unlike required attributes they never reject an action; they tell the agent what is still
missing, appear in the final summary, and with ``stop_when_complete`` end the run once all are met. Each
unmet rule gives one to-do per offending node for its first ``EXAMPLES`` nodes and one line counting the
rest, so the list stays short on any graph. Node names are JSON-quoted (see ``igg.observe.escape``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import islice
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
    """The unmet completeness rules of ``schema`` as readable to-dos ([] when all are met).

    Answered from the state's ``TodoIndex`` (built on the first call, then kept up to date by every change):
    the cost follows the number of rules, not the graph's size.
    """
    rules = schema.completeness
    if not rules:
        return []
    index = todo_index(state, rules)
    todos: list[str] = []
    for i, rule in enumerate(rules):
        rule_text = describe_rule(rule)
        offenders = index.offenders(i)
        for node_id in islice(offenders, EXAMPLES):
            todos.append(f"{_name(state, node_id)} {_problem(state, rule, node_id)} (rule: {rule_text})")
        if len(offenders) > EXAMPLES:
            todos.append(f"... and {len(offenders) - EXAMPLES:,} more nodes break the rule: {rule_text}")
    return todos


def todo_index(state: GraphState, rules: Sequence[Any]) -> TodoIndex:
    """The state's to-do index for these rules (built now when it has none for them)."""
    index: TodoIndex | None = state.indexes.get("todos")
    if index is None or (index.source is not rules and index.rules != list(rules)):
        if index is not None:
            state.unwatch(index)
        index = TodoIndex(state, rules)
        state.indexes["todos"] = index
        state.watch(index)
    return index


class TodoIndex:
    """The nodes breaking each completeness rule, in graph order, kept up to date by every change.

    A ``GraphWatcher``: node and edge mutations (replay and undo included) move nodes in and out of each
    rule's offender set, so reading the open to-dos never scans the graph. Offenders are listed in the
    order the graph holds its nodes (the order a scan would meet them): every node gets a sequence number
    when added, and an offender set that stopped being in that order is re-sorted on the next read.
    """

    def __init__(self, state: GraphState, rules: Sequence[Any]) -> None:
        self.state = state
        self.source = rules
        self.rules = list(rules)
        self._seq: dict[str, int] = {n: i for i, n in enumerate(state.nodes)}
        self._next = len(self._seq)
        self._sets: list[dict[str, None]] = []
        self._unordered: list[bool] = [False] * len(self.rules)
        self._attr: list[tuple[int, str, str]] = []
        self._isolated: list[tuple[int, str | None]] = []
        self._min: list[tuple[int, str, str, int, bool, bool, dict[str, int]]] = []
        for i, rule in enumerate(self.rules):
            self._sets.append(dict.fromkeys(n for n, _ in _offenders(state, rule)))
            if isinstance(rule, HasAttributeRule):
                self._attr.append((i, rule.node_type, rule.attribute))
            elif isinstance(rule, NoIsolatedNodesRule):
                self._isolated.append((i, rule.node_type))
            elif isinstance(rule, MinEdgesRule):
                counts = {n: _edge_count(state, rule, n) for n in state.nodes_of_type(rule.node_type)}
                self._min.append(
                    (
                        i,
                        rule.node_type,
                        rule.edge_type,
                        rule.min,
                        rule.direction != "in",
                        rule.direction != "out",
                        counts,
                    )
                )

    def offenders(self, i: int) -> dict[str, None]:
        """The nodes breaking rule ``i``, in graph order (read only)."""
        if self._unordered[i]:
            seq = self._seq
            self._sets[i] = dict.fromkeys(sorted(self._sets[i], key=seq.__getitem__))
            self._unordered[i] = False
        return self._sets[i]

    def _offend(self, i: int, node_id: str) -> None:
        offenders = self._sets[i]
        if node_id in offenders:
            return
        if offenders and not self._unordered[i] and self._seq[next(reversed(offenders))] > self._seq[node_id]:
            self._unordered[i] = True
        offenders[node_id] = None

    # ---- GraphWatcher --------------------------------------------------------------------------------
    def node_added(self, node_id: str, node_type: str, properties: dict[str, Any]) -> None:
        self._seq[node_id] = self._next
        self._next += 1
        for i, t, key in self._attr:
            if t == node_type and _empty(properties.get(key)):
                self._offend(i, node_id)
        state = self.state
        for i, only in self._isolated:
            if (only is None or only == node_type) and not state.succ[node_id] and not state.pred[node_id]:
                self._offend(i, node_id)
        for i, t, _, need, _, _, counts in self._min:
            if t == node_type:
                counts[node_id] = 0
                if need > 0:
                    self._offend(i, node_id)

    def node_changed(
        self, node_id: str, node_type: str, before: dict[str, Any], after: dict[str, Any]
    ) -> None:
        for i, t, key in self._attr:
            if t == node_type:
                if _empty(after.get(key)):
                    self._offend(i, node_id)
                else:
                    self._sets[i].pop(node_id, None)

    def node_removed(self, node_id: str, node_type: str, properties: dict[str, Any]) -> None:
        for offenders in self._sets:
            offenders.pop(node_id, None)
        for entry in self._min:
            entry[6].pop(node_id, None)
        del self._seq[node_id]

    def edge_added(self, edge_id: str, source: str, edge_type: str, target: str) -> None:
        for i, _ in self._isolated:
            offenders = self._sets[i]
            offenders.pop(source, None)
            offenders.pop(target, None)
        if self._min:
            nodes = self.state.nodes
            for i, t, et, need, out, in_, counts in self._min:
                if et != edge_type:
                    continue
                for end, counted in ((source, out), (target, in_)):
                    if counted and nodes[end]["type"] == t:
                        have = counts[end] = counts[end] + 1
                        if have >= need:
                            self._sets[i].pop(end, None)

    def edge_removed(self, edge_id: str, source: str, edge_type: str, target: str) -> None:
        state = self.state
        nodes = state.nodes
        for i, only in self._isolated:
            for end in (source, target):
                if (
                    (only is None or nodes[end]["type"] == only)
                    and not state.succ[end]
                    and not state.pred[end]
                ):
                    self._offend(i, end)
        for i, t, et, need, out, in_, counts in self._min:
            if et != edge_type:
                continue
            for end, counted in ((source, out), (target, in_)):
                if counted and nodes[end]["type"] == t:
                    have = counts[end] = counts[end] - 1
                    if have < need:
                        self._offend(i, end)


def _edge_count(state: GraphState, rule: MinEdgesRule, node_id: str) -> int:
    have = 0
    t = rule.edge_type
    sides = {"out": (state.succ,), "in": (state.pred,), "any": (state.succ, state.pred)}[rule.direction]
    for adjacency in sides:
        for keyed in adjacency[node_id].values():
            for data in keyed.values():
                if data["type"] == t:
                    have += 1
    return have


def _problem(state: GraphState, rule: Any, node_id: str) -> str:
    if isinstance(rule, HasAttributeRule):
        return f"has no {rule.attribute}"
    if isinstance(rule, NoIsolatedNodesRule):
        return "has no edges"
    have, t = _edge_count(state, rule, node_id), rule.edge_type
    if rule.min == 1:
        return f"has no {t} edge {rule.direction}"
    return f"has {have or 'no'} {t} edges {rule.direction} (needs {rule.min})"


def scan_todos(state: GraphState, schema: Schema) -> list[str]:
    """``open_todos`` by scanning the whole graph (no index): the reference the index is tested against."""
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
        yield from _too_few_edges(state, rule)


def _too_few_edges(state: GraphState, rule: MinEdgesRule) -> Iterator[tuple[str, str]]:
    """The nodes of ``rule``'s type with fewer edges of its type in its direction than it asks, and why."""
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
