"""The fast path of the act step for a response made only of ``ADD_NODE`` and ``ADD_EDGE`` actions (what a
static agent such as ``igg map-code``'s sends, tens of thousands per run), checked with the work shared across
the response.

Every check of ``RULES[AddNode]`` and ``RULES[AddEdge]`` still holds for every action accepted here; what is
done once per response is what does not depend on the action: whether each type is in the schema, whether it
declares property types or required properties, which near-duplicate index to probe, whether a property key
is valid. An ADD_NODE the near-duplicate guard finds no candidate for is accepted here under every policy
(as the general path accepts it); one with candidates takes the general path for its verdict. References that
name their node type and exactly its identity keys (what static agents send) resolve with one lookup in the
identity index, and an edge pattern is looked up once per (type, source type, target type).

The fast checks only ever *accept*: an action that any of them cannot accept outright (an unknown type, a
value to normalise or of another kind than a short string, an integer, a boolean or a short list of short
strings (a code map's edge ``sites``), a reference that is not
exact, a missing node, a duplicate, a forbidden pattern, a limit reached) goes through the general path (the
``general`` function the actor hands in: its rule chain) on its own, so its verdict, code and message are
exactly the rule chain's. The actor takes the fast path only when its checks for both action classes are the
built-in ones the fast checks stand for (``stands_for``: an extra rule such as the code agent's grounding
rule sends the response down the general path) and every action was read whole (``applies``); in ``atomic``
mode the actor rolls the response back afterwards as it does for the general path.

``tests/unit/test_fast_adds_property.py`` pins this module to the general path: random responses give equal
verdicts, graphs and journals both ways, under every duplicate policy and both apply modes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from igg.act.context import Rejection
from igg.act.evidence import Grounded, Grounder, warned
from igg.act.rules import RULES, Checks, idle_checks
from igg.graph.identity import normalize_identity_value
from igg.graph.state import GraphState
from igg.models.actions import AddEdge, AddNode
from igg.models.common import property_key_problem
from igg.models.request import Constraints
from igg.models.schema import CompiledSchema
from igg.models.verdicts import Verdict

COVERED = (AddNode, AddEdge)
"""The action classes whose built-in checks the fast checks stand for."""

General = Callable[[GraphState, Sequence[Any]], list[Verdict]]
"""The general path: the actor's rule chain over some actions, one verdict each (called here with one)."""


def stands_for(checks: Mapping[type, Checks[Any, Any]], schema: CompiledSchema, limits: Constraints) -> bool:
    """Whether an actor's ``checks`` for ADD_NODE and ADD_EDGE are the built-in ones (less the idle ones) that
    the fast checks stand for; an extra rule (e.g. the code agents' grounding rule) is not covered."""
    idle = idle_checks(schema, limits)
    return all(checks[t] == RULES[t].without(idle) for t in COVERED)


def applies(items: Sequence[Any], limits: Constraints) -> bool:
    """Whether ``items`` can take the fast path: two or more actions, no more than a response may hold, every
    one an ``AddNode`` or ``AddEdge`` read whole."""
    if len(items) > limits.max_actions_per_response or len(items) < 2:
        return False
    return all(i.__class__ is AddNode or i.__class__ is AddEdge for i in items)


def apply_adds(
    state: GraphState,
    items: Sequence[Any],
    schema: CompiledSchema,
    limits: Constraints,
    general: General,
    grounder: Grounder | None = None,
    cursor: int | None = None,
) -> list[Verdict]:
    """One verdict per action of ``items`` (all ``AddNode``/``AddEdge``: ``applies`` true), applied in order:
    the same verdicts, graph and journal as ``general`` over the same items (see the module doc). An action
    the fast checks accept has its evidence located by ``grounder`` (``cursor``: the loop's place in the
    context) as the general path does after its rules."""
    adds = Adds(state, schema, limits, grounder, cursor)
    node, edge = adds.node, adds.edge
    verdicts: list[Verdict] = []
    append = verdicts.append
    for index, item in enumerate(items):
        verdict = node(item, index) if item.__class__ is AddNode else edge(item, index)
        if verdict is None:  # not accepted outright: the general path decides, as for any other response
            (verdict,) = general(state, [item])
            verdict.index = index
        append(verdict)
    return verdicts


def planned_adds(state: GraphState, schema: CompiledSchema, limits: Constraints) -> Adds:
    """The fast checks of a planned difference's added nodes and edges (``Adds.planned_node``,
    ``Adds.planned_edge``: no near-duplicate guard, as a planned difference has none)."""
    return Adds(state, schema, limits, guard=False)


class Adds:
    """The fast checks of one response: what they share (the schema's tables, the limits, the keys and values
    already found valid) and one method per check, each returning None where the general path must decide."""

    __slots__ = (
        "loops",
        "by_identity",
        "cursor",
        "describe",
        "edge_types",
        "edge_between",
        "find_nodes",
        "good_keys",
        "grounder",
        "identity_keys",
        "max_edges",
        "max_length",
        "max_nodes",
        "max_properties",
        "near",
        "node_types",
        "nodes",
        "normal",
        "pattern_ok",
        "patterns",
        "required",
        "state",
        "timed",
        "typed",
    )

    def __init__(
        self,
        state: GraphState,
        schema: CompiledSchema,
        limits: Constraints,
        grounder: Grounder | None = None,
        cursor: int | None = None,
        *,
        guard: bool = True,
    ) -> None:
        self.state = state
        self.grounder, self.cursor = grounder, cursor
        self.find_nodes, self.describe = state.lookup.find_nodes, state.lookup.describe  # one call, not two
        self.node_types, self.edge_types = schema.node_types, schema.edge_types
        self.identity_keys, self.required = schema.identity_keys, schema.required
        self.typed, self.patterns = schema.property_types, schema.patterns
        # valid time (igg.act.validtime) is the general path's: types with a history or one target at a time
        self.timed = frozenset(schema.timed_properties) | schema.one_at_a_time
        # the near-duplicate guard: a node with no candidate is accepted here as the general path accepts it
        # (PLAIN_NODE under every policy); one with candidates goes through the general path for its verdict
        duplicates = limits.duplicates
        self.near = (
            None
            if duplicates.policy == "off" or not guard
            else state.near_duplicates(duplicates.threshold, duplicates.aliases)
        )
        self.max_length, self.max_properties = limits.max_property_length, limits.max_properties
        self.max_nodes, self.max_edges = limits.max_nodes, limits.max_edges
        self.loops = {t: limits.self_loop_allowed(t) for t in schema.edge_type_list}
        self.by_identity, self.nodes = state.identity_table, state.nodes
        self.edge_between = state.edge_between
        self.pattern_ok: dict[tuple[str, str, str], bool] = {}
        self.good_keys: set[str] = set()
        self.normal: set[str] = set()

    def is_normal(self, v: Any) -> bool:
        """A string identity value that ``normalize_identity_value`` leaves as it is."""
        if v.__class__ is not str:
            return False
        if v in self.normal:
            return True
        if normalize_identity_value(v) is not v:
            return False
        self.normal.add(v)
        return True

    def plain(self, props: dict[str, Any]) -> bool:
        """Valid keys, and values every property rule accepts (short strings, integers, booleans, and short
        lists of short strings)."""
        if len(props) > self.max_properties:
            return False
        good_keys, max_length = self.good_keys, self.max_length
        for key, value in props.items():
            if key not in good_keys:
                if property_key_problem(key) is not None:
                    return False
                good_keys.add(key)
            cls = value.__class__
            if cls is list and len(value) <= max_length:
                for item in value:
                    if item.__class__ is not str or len(item) > max_length:
                        return False
            elif not (cls is str and len(value) <= max_length or cls is int or cls is bool):
                return False
        return True

    def exact(self, ref: dict[str, Any]) -> str | None:
        """The node an exact, already-normal reference names, else None (the general path then decides)."""
        label = ref.get("label")
        if label is None and len(ref) == 1:  # {"name": "X"}: resolved as the general path resolves it
            for value in ref.values():
                if value.__class__ is str and self.is_normal(value):
                    found_all = self.find_nodes(ref)
                    return found_all[0] if len(found_all) == 1 else None
            return None
        if label.__class__ is not str:
            return None
        keys = self.identity_keys.get(label)
        if keys is None or len(ref) != len(keys) + 1:
            return None
        try:
            values: tuple[Any, ...] = (ref[keys[0]],) if len(keys) == 1 else tuple([ref[k] for k in keys])
        except KeyError:
            return None
        for v in values:
            if not self.is_normal(v):
                return None
        found: str | None = self.by_identity.get((label, values))
        if found is None:
            return None
        have = self.nodes[found]["properties"]
        for k in keys:  # the same value, not only an equal one
            if have[k].__class__ is not str:
                return None
        return found

    def node_fits(self, label: str, props: dict[str, Any]) -> bool:
        """Whether an ADD_NODE of ``label`` with ``props`` (no valid time given) passes every check but the
        near-duplicate guard's."""
        keys = self.identity_keys.get(label)
        return (
            label in self.node_types
            and keys is not None
            and label not in self.timed
            and label not in self.typed
            and self.state.node_count < self.max_nodes
            and self.plain(props)
            and all(self.is_normal(props.get(k)) for k in keys)
            and all(props.get(k) not in (None, "") for k in self.required.get(label, ()))
            and (label, tuple([props[k] for k in keys])) not in self.by_identity
        )

    def node(self, item: AddNode, index: int) -> Verdict | None:
        """ADD_NODE accepted and applied, or None."""
        label, props, near = item.label, item.properties, self.near
        if item.valid_from is not None or item.valid_to is not None:
            return None
        if self.node_fits(label, props) and (near is None or not near.candidates(label, props)):
            grounded = self.grounded(item)
            if isinstance(grounded, tuple):
                return Verdict(index, "ADD_NODE", False, grounded[0], grounded[1])
            evidence = grounded.items if grounded is not None else None
            state = self.state
            nid = state.add_node(
                label, props, provenance=None if evidence is None else {**state.stamp(), "evidence": evidence}
            )
            verdict = Verdict(index, "ADD_NODE", True, None, f"added {self.describe(nid)} as {nid}", nid)
            return verdict if grounded is None else warned(verdict, grounded)
        return None

    def planned_node(self, label: str, props: dict[str, Any], index: int | None) -> Verdict | str | None:
        """A planned difference's added node (``igg.act.difference``: no guard, no evidence, no provenance of
        its own) accepted and applied, or None. The graph keeps ``props`` itself (the difference's own: a map
        of 50,000 files would hold each element's properties twice while it applies). ``index`` None: the
        node's id instead of its verdict (a caller that keeps no accepted verdict)."""
        if not self.node_fits(label, props):
            return None
        nid = self.state.add_node(label, props, adopt=True)
        if index is None:
            return nid
        return Verdict(index, "ADD_NODE", True, None, f"added {self.describe(nid)} as {nid}", nid)

    def grounded(self, item: AddNode | AddEdge) -> Grounded | Rejection | None:
        """The action's evidence located (None: no grounder, or nothing to locate)."""
        grounder = self.grounder
        if grounder is None or not grounder.active(item):
            return None
        return grounder.ground(item, self.cursor)

    def edge_type_fits(self, label: str, props: dict[str, Any]) -> bool:
        """Whether an ADD_EDGE of ``label`` with ``props`` (no valid time given) passes every check that does
        not look at its ends."""
        return (
            label in self.edge_types
            and label not in self.timed
            and label not in self.typed
            and not self.required.get(label)
            and self.state.edge_count < self.max_edges
            and (not props or self.plain(props))
        )

    def ends_fit(self, label: str, source: str, target: str) -> bool:
        """Whether an edge of ``label`` may join these two existing nodes: a self-loop allowed, no such edge
        yet, a pattern that allows it."""
        return (
            (source != target or self.loops.get(label, False))
            and self.edge_between(source, label, target) is None
            and self.pattern_allows(label, source, target)
        )

    def edge(self, item: AddEdge, index: int) -> Verdict | None:
        """ADD_EDGE accepted and applied, or None."""
        label, state = item.label, self.state
        if item.valid_from is not None or item.valid_to is not None:
            return None
        if not self.edge_type_fits(label, item.properties):
            return None
        source, target = self.exact(item.from_), self.exact(item.to)
        if source is None or target is None or not self.ends_fit(label, source, target):
            return None
        grounded = self.grounded(item)
        if isinstance(grounded, tuple):
            return Verdict(index, "ADD_EDGE", False, grounded[0], grounded[1])
        evidence = grounded.items if grounded is not None else None
        eid = state.add_edge(
            source,
            label,
            target,
            item.properties,
            provenance=None if evidence is None else {**state.stamp(), "evidence": evidence},
        )
        verdict = Verdict(
            index, "ADD_EDGE", True, None, f"added {label} edge {eid} ({source} -> {target})", eid
        )
        return verdict if grounded is None else warned(verdict, grounded)

    def planned_edge(
        self, label: str, props: dict[str, Any], source: str, target: str, index: int | None
    ) -> Verdict | str | None:
        """A planned difference's added edge between existing nodes (no evidence, no provenance of its own)
        accepted and applied, or None; the graph keeps ``props`` itself, and ``index`` None asks for the
        edge's id, as ``planned_node``'s."""
        if not self.edge_type_fits(label, props) or not self.ends_fit(label, source, target):
            return None
        eid = self.state.add_edge(source, label, target, props, adopt=True)
        if index is None:
            return eid
        return Verdict(index, "ADD_EDGE", True, None, f"added {label} edge {eid} ({source} -> {target})", eid)

    def pattern_allows(self, label: str, source: str, target: str) -> bool:
        """Whether the schema's edge patterns allow ``label`` between these two nodes' types (memoised)."""
        allowed = self.patterns.get(label)
        if allowed is None:
            return True
        key = (label, self.nodes[source]["type"], self.nodes[target]["type"])
        ok = self.pattern_ok.get(key)
        if ok is None:
            ok = self.pattern_ok[key] = (key[1], key[2]) in allowed
        return ok


__all__ = ["COVERED", "Adds", "General", "applies", "apply_adds", "planned_adds", "stands_for"]
