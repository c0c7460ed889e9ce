"""The batch fast path of the act step: a response made only of ``ADD_NODE`` and ``ADD_EDGE`` actions (what a
static agent such as ``igg map-code``'s sends, tens of thousands per run) checked with the work shared across
the batch.

Every check of ``RULES[AddNode]`` and ``RULES[AddEdge]`` still runs for every action; what is done once per
batch is what does not depend on the action: whether each type is in the schema, whether it declares
property types or required properties, whether the near-duplicate guard is on, whether the batch fits the
node and edge limits. References that name their node type and exactly its identity keys (what static
agents send) resolve with one lookup in the identity index, and an edge pattern is looked up once per
(type, source type, target type).

The fast checks only ever *accept*: an action that any of them cannot accept outright (an unknown type, a
value to normalise, a reference that is not exact, a missing node, a duplicate, a forbidden pattern, a limit
reached) goes through the actor's full rule chain, so its verdict, code and message are exactly those of
``Actor._apply``. The fast path is taken only when the actor's rules for both action types are the built-in
ones it was written against (an extra rule such as the code agent's grounding rule, or a changed rule tuple,
sends the batch down the general path), in ``per_action`` mode, and when every action was read whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from igg.act.rules import RULES, CheckContext, Plan, properties_valid
from igg.graph.identity import normalize_identity_value
from igg.models.actions import AddEdge, AddNode
from igg.models.verdicts import Verdict

if TYPE_CHECKING:
    from igg.act.apply import Actor
    from igg.graph.state import GraphState

COVERED = {AddNode: RULES[AddNode], AddEdge: RULES[AddEdge]}
"""The rule chains the fast checks stand for: the fast path is off for an actor with any other."""


def applies(actor: Actor, items: Sequence[Any]) -> bool:
    """Whether ``items`` can take the fast path under ``actor`` (see the module doc)."""
    if actor.mode != "per_action" or len(items) > actor.limits.max_actions_per_response or len(items) < 2:
        return False
    rules = actor.rules
    if rules.get(AddNode) != COVERED[AddNode] or rules.get(AddEdge) != COVERED[AddEdge]:
        return False
    return all(i.__class__ is AddNode or i.__class__ is AddEdge for i in items)


def apply_adds(actor: Actor, state: GraphState, items: list[Any]) -> list[Verdict]:
    """One verdict per action of ``items`` (all ``AddNode``/``AddEdge``, ``applies`` true), applied in order:
    the same verdicts and the same graph as ``Actor._apply`` (see the module doc)."""
    from igg.act.apply import _execute, _first_rejection

    schema, limits = actor.schema, actor.limits
    ctx = CheckContext(state=state, schema=schema, limits=limits)
    edge_types = schema.edge_types
    identity_keys, required, typed = schema.identity_keys, schema.required, schema.property_types
    patterns = schema.patterns
    guard_off = limits.duplicates.policy == "off"
    by_identity = state._by_identity
    nodes = state.nodes
    edges = state._edges
    allow_loops = limits.allow_self_loops
    max_nodes, max_edges = limits.max_nodes, limits.max_edges
    pattern_ok: dict[tuple[str, str, str], bool] = {}
    verdicts: list[Verdict] = []
    append = verdicts.append

    normal: set[str] = set()
    """Identity strings seen to be in normal form (``normalize_identity_value`` leaves them as they are)."""

    def is_normal(v: Any) -> bool:
        if v.__class__ is not str:
            return False
        if v in normal:
            return True
        if normalize_identity_value(v) is not v:
            return False
        normal.add(v)
        return True

    def exact(ref: dict[str, Any]) -> str | None:
        """The node an exact, already-normal reference names, else None (the rule chain then decides)."""
        label = ref.get("label")
        if label.__class__ is not str:
            return None
        keys = identity_keys.get(label)
        if keys is None or len(ref) != len(keys) + 1:
            return None
        try:
            if len(keys) == 1:
                values: tuple[Any, ...] = (ref[keys[0]],)
            else:
                values = tuple([ref[k] for k in keys])
        except KeyError:
            return None
        for v in values:
            if not is_normal(v):
                return None
        found: str | None = by_identity.get((label, values))
        if found is None:
            return None
        have = nodes[found]["properties"]
        for k in keys:  # the same value, not only an equal one
            if have[k].__class__ is not str:
                return None
        return found

    for index, item in enumerate(items):
        plan = Plan()
        if item.__class__ is AddNode:
            label, props = item.label, item.properties
            keys = identity_keys.get(label)  # a node type's, and only a node type has them
            fast = (keys is not None and guard_off and label not in typed and state.node_count < max_nodes
                    and properties_valid(ctx, item, plan) is None)
            if fast:
                for k in keys:  # type: ignore[union-attr]
                    if not is_normal(props.get(k)):
                        fast = False
                        break
                else:
                    for k in required.get(label, ()):
                        v = props.get(k)
                        if v is None or v == "":
                            fast = False
                            break
                    else:
                        fast = (label, tuple(props[k] for k in keys)) not in by_identity  # type: ignore[union-attr]
        else:
            label = item.label
            fast = (label in edge_types and label not in typed and not required.get(label)
                    and state.edge_count < max_edges
                    and (not item.properties or properties_valid(ctx, item, plan) is None))
            if fast:
                source, target = exact(item.from_), exact(item.to)
                if source is None or target is None or (source == target and not allow_loops):
                    fast = False
                else:
                    allowed = patterns.get(label)
                    if allowed is not None:
                        key = (label, nodes[source]["type"], nodes[target]["type"])
                        ok = pattern_ok.get(key)
                        if ok is None:
                            ok = pattern_ok[key] = (key[1], key[2]) in allowed
                        fast = ok
                    if fast and (source, label, target) in edges:
                        fast = False
                    plan.source, plan.target = source, target
        if not fast:
            plan = Plan()
            rejection = _first_rejection(ctx, item, plan, actor.rules[item.__class__])
            if rejection is not None:
                append(Verdict(index, item.type, False, rejection[0], rejection[1]))
                continue
        append(_execute(ctx, item, plan, index))
    return verdicts


__all__ = ["COVERED", "applies", "apply_adds"]
