"""The batch fast path of the act step: a response made only of ``ADD_NODE`` and ``ADD_EDGE`` actions (what a
static agent such as ``igg map-code``'s sends, tens of thousands per run) checked with the work shared across
the batch.

Every check of ``RULES[AddNode]`` and ``RULES[AddEdge]`` still holds for every action accepted here; what is
done once per batch is what does not depend on the action: whether each type is in the schema, whether it
declares property types or required properties, which near-duplicate index to probe, whether a property key
is valid. An ADD_NODE the near-duplicate guard finds no candidate for is accepted here under every policy
(as the general path accepts it); one with candidates takes the general path for its verdict. References that name their node type and exactly its identity keys (what static agents send)
resolve with one lookup in the identity index, and an edge pattern is looked up once per (type, source type,
target type).

The fast checks only ever *accept*: an action that any of them cannot accept outright (an unknown type, a
value to normalise or of another kind than a short string, an integer or a boolean, a reference that is not
exact, a missing node, a duplicate, a forbidden pattern, a limit reached) goes through the actor's general
path on its own, so its verdict, code and message are exactly those of ``Actor._apply``. The fast path is
taken only when the actor's checks for both action classes are the built-in ones it stands for (an extra rule
such as the code agent's grounding rule sends the batch down the general path), in ``per_action`` mode, and
when every action was read whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from igg.act.rules import RULES, idle_checks
from igg.graph.identity import normalize_identity_value
from igg.models.actions import AddEdge, AddNode
from igg.models.common import property_key_problem
from igg.models.verdicts import Verdict

if TYPE_CHECKING:
    from igg.act.apply import Actor
    from igg.graph.state import GraphState

COVERED = (AddNode, AddEdge)
"""The action classes whose built-in checks the fast checks stand for."""


def applies(actor: Actor, items: Sequence[Any]) -> bool:
    """Whether ``items`` can take the fast path under ``actor`` (see the module doc)."""
    if actor.mode != "per_action" or len(items) > actor.limits.max_actions_per_response or len(items) < 2:
        return False
    if not all(i.__class__ is AddNode or i.__class__ is AddEdge for i in items):
        return False
    idle = idle_checks(actor.schema, actor.limits)
    # the built-in checks and nothing else (an extra rule, e.g. the code agents' grounding rule, is not covered)
    return all(actor.steps[t].checks == RULES[t].without(idle) for t in COVERED)


def apply_adds(actor: Actor, state: GraphState, items: Sequence[Any]) -> list[Verdict]:
    """One verdict per action of ``items`` (all ``AddNode``/``AddEdge``, ``applies`` true), applied in order:
    the same verdicts and the same graph as ``Actor._apply`` (see the module doc)."""
    schema, limits = actor.schema, actor.limits
    node_types, edge_types = schema.node_types, schema.edge_types
    identity_keys, required, typed, patterns = schema.identity_keys, schema.required, schema.property_types, \
        schema.patterns
    guard = limits.duplicates
    # the near-duplicate guard: a node with no candidate is accepted here as the general path accepts it
    # (PLAIN_NODE under every policy); one with candidates goes through the general path for its verdict
    near = None if guard.policy == "off" else state.near_duplicates(guard.threshold, guard.aliases)
    max_length, max_properties = limits.max_property_length, limits.max_properties
    allow_loops, max_nodes, max_edges = limits.allow_self_loops, limits.max_nodes, limits.max_edges
    by_identity, nodes, edges = state.identity_table, state.nodes, state.edge_table
    pattern_ok: dict[tuple[str, str, str], bool] = {}
    good_keys: set[str] = set()
    normal: set[str] = set()

    def is_normal(v: Any) -> bool:
        """A string identity value that ``normalize_identity_value`` leaves as it is."""
        if v.__class__ is not str:
            return False
        if v in normal:
            return True
        if normalize_identity_value(v) is not v:
            return False
        normal.add(v)
        return True

    def plain(props: dict[str, Any]) -> bool:
        """Valid keys, and values every property rule accepts (short strings, integers, booleans)."""
        if len(props) > max_properties:
            return False
        for key, value in props.items():
            if key not in good_keys:
                if property_key_problem(key) is not None:
                    return False
                good_keys.add(key)
            cls = value.__class__
            if not (cls is str and len(value) <= max_length or cls is int or cls is bool):
                return False
        return True

    def exact(ref: dict[str, Any]) -> str | None:
        """The node an exact, already-normal reference names, else None (the general path then decides)."""
        label = ref.get("label")
        if label is None and len(ref) == 1:  # {"name": "X"}: resolved as the general path resolves it
            for value in ref.values():
                if value.__class__ is str and is_normal(value):
                    found_all = state.find_nodes(ref)
                    return found_all[0] if len(found_all) == 1 else None
            return None
        if label.__class__ is not str:
            return None
        keys = identity_keys.get(label)
        if keys is None or len(ref) != len(keys) + 1:
            return None
        try:
            values: tuple[Any, ...] = (ref[keys[0]],) if len(keys) == 1 else tuple([ref[k] for k in keys])
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

    verdicts: list[Verdict] = []
    append = verdicts.append
    for index, item in enumerate(items):
        if item.__class__ is AddNode:
            label, props = item.label, item.properties
            keys = identity_keys.get(label)
            if (label in node_types and keys is not None and label not in typed
                    and state.node_count < max_nodes and plain(props)
                    and all(is_normal(props.get(k)) for k in keys)
                    and all(props.get(k) not in (None, "") for k in required.get(label, ()))
                    and (label, tuple([props[k] for k in keys])) not in by_identity
                    and (near is None or not near.candidates(label, props))):
                nid = state.add_node(label, props)
                append(Verdict(index, "ADD_NODE", True, None, f"added {state.describe(nid)} as {nid}", nid))
                continue
        else:
            label = item.label
            if (label in edge_types and label not in typed and not required.get(label)
                    and state.edge_count < max_edges and (not item.properties or plain(item.properties))):
                source, target = exact(item.from_), exact(item.to)
                if source is not None and target is not None and (source != target or allow_loops) \
                        and (source, label, target) not in edges:
                    allowed = patterns.get(label)
                    ok = True
                    if allowed is not None:
                        key = (label, nodes[source]["type"], nodes[target]["type"])
                        ok = pattern_ok.get(key)  # type: ignore[assignment]
                        if ok is None:
                            ok = pattern_ok[key] = (key[1], key[2]) in allowed
                    if ok:
                        eid = state.add_edge(source, label, target, item.properties)
                        append(Verdict(index, "ADD_EDGE", True, None,
                                       f"added {label} edge {eid} ({source} -> {target})", eid))
                        continue
        # not accepted outright: the general path decides, exactly as for any other response
        (verdict,) = actor._apply(state, [item])
        verdict.index = index
        append(verdict)
    return verdicts


__all__ = ["COVERED", "applies", "apply_adds"]
