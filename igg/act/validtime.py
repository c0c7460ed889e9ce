"""Valid time in the act step: the time rule, and supersession decided by the schema, never by a guess.

The rule (``time_checked``): ``valid_from``/``valid_to`` only on types the schema's ``valid_time`` names
(TIME_NOT_SCOPED), each an ISO 8601 time and ``valid_to`` after ``valid_from`` (INVALID_TIME; see
``igg.models.validtime`` for partial dates and time zones).

Supersession touches only facts of the **same source and the same one-at-a-time type** (an edge type declared
``one_at_a_time``, or a node property listed in ``properties``); every such fact is ordered by its
``valid_from`` (a fact without one counts as the earliest), and:

- the fact just before the new one (its predecessor) ends where the new one starts, unless it already ended
  by then: it is *superseded* (its ``valid_to`` becomes the new ``valid_from``);
- a fact that arrives late (a later one is already known) ends where the next one starts, and the later
  fact is not touched;
- a new fact starting exactly when another of the same source and type starts, with another target or value,
  is refused (TIME_CONFLICT).

So the history comes out the same whatever order the facts arrive in. Each change is journaled like any other
(``undo`` reverses it, ``review`` shows it before it applies), and the accepted verdict carries the
SUPERSEDED warning naming both facts.

A one-at-a-time node property keeps its values in ``igg_history`` (``igg.models.validtime``); the property
itself holds the value with the latest ``valid_from`` (what a query without ``as_of`` sees).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from igg.act.context import CheckContext, EdgeAt, Ends, Rejection
from igg.graph.state import GraphState
from igg.models.actions import AddEdge, AddNode, UpdateEdge, UpdateNode
from igg.models.validtime import (
    HISTORY,
    TIME_KEYS,
    TIME_RULE,
    VALID_FROM,
    VALID_TO,
    TimeError,
    history,
    history_entry,
    history_text,
    instant,
    parse_time,
)
from igg.models.verdicts import ErrorCode as C

Timed = AddNode | AddEdge | UpdateNode | UpdateEdge
_EARLIEST = datetime.min.replace(tzinfo=UTC)


def timed(a: Timed) -> bool:
    """Whether the action carries a valid time."""
    return a.valid_from is not None or a.valid_to is not None


def time_problem(
    ctx: CheckContext, element_type: str, a: Timed, current: dict[str, Any] | None = None
) -> Rejection | None:
    """Why the action's times cannot apply to an element of ``element_type`` (``current``: the properties of
    the element an update changes, whose stored bounds the new ones must agree with), or None."""
    if not timed(a):
        return None
    if element_type not in ctx.schema.time_scoped:
        scoped = ", ".join(sorted(ctx.schema.time_scoped)) or "none"
        return (
            C.TIME_NOT_SCOPED,
            (
                f"{element_type} facts carry no time: the schema's valid_time does not name "
                f"{element_type} (types with time: {scoped}). Send the action without valid_from/valid_to."
            ),
        )
    bounds: dict[str, datetime] = {}
    for field, text in (("valid_from", a.valid_from), ("valid_to", a.valid_to)):
        if text is not None:
            try:
                bounds[field] = parse_time(text)[1]
            except TimeError as exc:
                return C.INVALID_TIME, f"{field}: {exc}."
    if current is not None and not _sets_timed_property(ctx, element_type, a):
        for field, key in (("valid_from", VALID_FROM), ("valid_to", VALID_TO)):
            if field not in bounds and current.get(key) is not None:
                bounds[field] = instant(current[key])
    start, end = bounds.get("valid_from"), bounds.get("valid_to")
    if start is not None and end is not None and end <= start:
        return (
            C.INVALID_TIME,
            (
                f"valid_to ({a.valid_to or current and current.get(VALID_TO)}) is not after "
                f"valid_from ({a.valid_from or current and current.get(VALID_FROM)}): {TIME_RULE}."
            ),
        )
    return None


def node_time_valid(ctx: CheckContext, a: AddNode) -> Rejection | None:
    """ADD_NODE: the time rule for its type."""
    return time_problem(ctx, a.label, a) if timed(a) else None


def edge_time_valid(ctx: CheckContext, a: AddEdge) -> Rejection | None:
    """ADD_EDGE: the time rule for its type."""
    return time_problem(ctx, a.label, a) if timed(a) else None


def node_update_time_valid(ctx: CheckContext, a: UpdateNode, node: str) -> Rejection | None:
    """UPDATE_NODE: the time rule for the node's type and its stored bounds."""
    if not timed(a):
        return None
    return time_problem(ctx, ctx.state.node_type(node), a, ctx.state.node_properties(node))


def edge_update_time_valid(ctx: CheckContext, a: UpdateEdge, at: EdgeAt) -> Rejection | None:
    """UPDATE_EDGE: the time rule for its type and the edge's stored bounds."""
    if not timed(a):
        return None
    return time_problem(ctx, a.label, a, ctx.state.edge_ends(at.edge)[2]["properties"])


def node_update_conflict(ctx: CheckContext, a: UpdateNode, node: str) -> Rejection | None:
    """TIME_CONFLICT: a one-at-a-time property given a value starting when another value of it starts (a value
    without a time replaces the one without a time, as any property update does)."""
    keys = ctx.schema.timed_properties.get(ctx.state.node_type(node))
    if not keys or a.valid_from is None or not any(k in keys for k in a.properties):
        return None
    start = instant(a.valid_from)
    for e in map(history_entry, ctx.state.node_properties(node).get(HISTORY, ())):
        key = e["key"]
        if (
            key in a.properties
            and key in keys
            and e["from"] is not None
            and instant(e["from"]) == start
            and e["value"] != a.properties[key]
        ):
            return (
                C.TIME_CONFLICT,
                (
                    f"{ctx.state.describe(node)} already has {key} = {e['value']!r} from {e['from']}; "
                    f"{key} holds one value at a time. Give this value its own valid_from."
                ),
            )
    return None


def _sets_timed_property(ctx: CheckContext, element_type: str, a: Timed) -> bool:
    keys = ctx.schema.timed_properties.get(element_type, frozenset())
    return isinstance(a, UpdateNode) and any(k in keys for k in a.properties)


def _key(stored: str | None) -> datetime:
    return _EARLIEST if stored is None else parse_time(stored)[1]


def _bounds(a: Timed) -> dict[str, str]:
    out = {}
    if a.valid_from is not None:
        out[VALID_FROM] = parse_time(a.valid_from)[0]
    if a.valid_to is not None:
        out[VALID_TO] = parse_time(a.valid_to)[0]
    return out


def split_times(properties: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A stored element's properties (a graph document's, a seed's) without its time keys, and its bounds as
    an action's ``valid_from``/``valid_to`` (so the time rule checks them as it checks an agent's); a history
    that is not one (not a list of ``{key, value, from, to}`` texts with readable times) comes back among the
    properties, where the reserved key is refused."""
    if not any(k in properties for k in TIME_KEYS):
        return properties, {}
    plain = {k: v for k, v in properties.items() if k not in TIME_KEYS}
    times = {"valid_from": properties.get(VALID_FROM), "valid_to": properties.get(VALID_TO)}
    if HISTORY in properties and not _readable_history(properties[HISTORY]):
        plain[HISTORY] = properties[HISTORY]
    return plain, times


def _readable_history(value: Any) -> bool:
    try:
        entries = history({HISTORY: value})
        return all(
            set(e) == {"key", "value", "from", "to"}
            and all(e[b] is None or parse_time(e[b]) for b in ("from", "to"))
            for e in entries
        )
    except (TypeError, ValueError, AttributeError):
        return False


# ---- nodes ------------------------------------------------------------------------------------------
def new_node_properties(ctx: CheckContext, a: AddNode) -> dict[str, Any]:
    """The properties an ADD_NODE stores: its own, its bounds, and the history of its one-at-a-time
    properties (each value holding from the node's ``valid_from``)."""
    if not timed(a) and a.label not in ctx.schema.timed_properties:
        return a.properties
    props: dict[str, Any] = {**a.properties, **_bounds(a)}
    keys = ctx.schema.timed_properties.get(a.label, frozenset())
    start = props.get(VALID_FROM)
    entries = [
        history_text({"key": k, "value": v, "from": start, "to": None})
        for k, v in a.properties.items()
        if k in keys
    ]
    if entries:
        props[HISTORY] = entries
    return props


def updated_node_properties(ctx: CheckContext, a: UpdateNode, node: str) -> tuple[dict[str, Any], list[str]]:
    """(properties to set, notes) of an UPDATE_NODE in time: one-at-a-time properties go into
    the node's history (superseding as the module docstring says) and the property takes the latest value;
    with no such property among them, the bounds are the node's own."""
    state = ctx.state
    node_type = state.node_type(node)
    keys = ctx.schema.timed_properties.get(node_type, frozenset())
    current = state.node_properties(node)
    timed_keys = [k for k in a.properties if k in keys]
    if not timed_keys:
        return ({**a.properties, **_bounds(a)}, []) if timed(a) else (a.properties, [])
    texts = list(current.get(HISTORY, ()))
    entries = [dict(history_entry(t)) for t in texts]
    kept = {id(e): t for e, t in zip(entries, texts, strict=True)}  # unchanged entries keep their text
    plain = {k: v for k, v in a.properties.items() if k not in keys}
    start = parse_time(a.valid_from)[0] if a.valid_from is not None else None
    end = parse_time(a.valid_to)[0] if a.valid_to is not None else None
    start_key = _key(start)
    notes: list[str] = []
    for key in timed_keys:
        same = [e for e in entries if e["key"] == key]
        if not same and key in current:
            # a value set before the property had a history: it held from the node's start (or always)
            same.append({"key": key, "value": current[key], "from": current.get(VALID_FROM), "to": None})
        new = {"key": key, "value": a.properties[key], "from": start, "to": end}
        known = next((e for e in same if _key(e["from"]) == start_key), None)
        if known is not None:  # a value stated again (same start), or an untimed value corrected
            if known["value"] != new["value"] or (end is not None and known["to"] != end):
                kept.pop(id(known), None)
                known["value"] = new["value"]
                known["to"] = end if end is not None else known["to"]
        else:
            changed = _insert(same, new, _property_name)
            notes += [note for note, _ in changed]
            for _, fact in changed:
                kept.pop(id(fact), None)
            same.append(new)
        same.sort(key=lambda e: _key(e["from"]))
        entries = [e for e in entries if e["key"] != key] + same
        plain[key] = same[-1]["value"]  # the latest start's value
    plain[HISTORY] = [kept.get(id(e)) or history_text(e) for e in entries]
    return plain, notes


def _property_name(entry: dict[str, Any]) -> str:
    return f"{entry['key']} = {entry['value']!r}"


# ---- edges ------------------------------------------------------------------------------------------
def edge_properties(a: AddEdge | UpdateEdge) -> dict[str, Any]:
    """The properties an ADD_EDGE stores (an UPDATE_EDGE sets): its own and its bounds."""
    return {**a.properties, **_bounds(a)} if timed(a) else a.properties


def edge_conflict(ctx: CheckContext, a: AddEdge, ends: Ends) -> Rejection | None:
    """TIME_CONFLICT: a one-at-a-time edge starting when another of the same source and type starts."""
    if a.label not in ctx.schema.one_at_a_time or ctx.planned:  # a plan resolved its conflicts itself
        return None
    start = _key(parse_time(a.valid_from)[0] if a.valid_from is not None else None)
    source = ends.source
    for eid, other, props in _siblings(ctx.state, source, a.label):
        if other != ends.target and _key(props.get(VALID_FROM)) == start:
            return (
                C.TIME_CONFLICT,
                (
                    f"{ctx.state.describe(source)} -{a.label}-> {ctx.state.describe(other)} ({eid}) already"
                    f" starts at {props.get(VALID_FROM) or 'an unknown time'}; {a.label} holds one target at"
                    " a time. Give this fact its own valid_from, or correct the other one with UPDATE_EDGE."
                ),
            )
    return None


def supersede_edges(state: GraphState, source: str, edge_type: str, new_edge: str) -> list[str]:
    """After a one-at-a-time edge was added: close its predecessor and bound it by its successor (see the
    module docstring); returns a note per fact changed."""
    facts = [
        {"id": eid, "target": other, "from": props.get(VALID_FROM), "to": props.get(VALID_TO)}
        for eid, other, props in _siblings(state, source, edge_type)
    ]
    new = next(f for f in facts if f["id"] == new_edge)
    others = [f for f in facts if f["id"] != new_edge]
    before = {f["id"]: f["to"] for f in others}
    new_to = new["to"]
    notes = [
        note
        for note, _ in _insert(
            others,
            new,
            lambda f: f"{state.describe(source)} -{edge_type}-> {state.describe(f['target'])} ({f['id']})",
        )
    ]
    for f in others:
        if f["to"] != before[f["id"]]:
            _set_edge_bound(state, str(f["id"]), f["to"])
    if new["to"] != new_to:
        _set_edge_bound(state, new_edge, new["to"])  # a late fact: bounded by the one after it
    return notes


def _siblings(state: GraphState, source: str, edge_type: str) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (eid, target, data["properties"])
        for target, keyed in state.succ[source].items()
        for eid, data in keyed.items()
        if data["type"] == edge_type
    ]


def _set_edge_bound(state: GraphState, edge: str, end: str | None) -> None:
    """Re-add the edge under its id with ``igg_valid_to`` set to ``end`` (as UPDATE_EDGE does)."""
    source, target, data = state.edge_ends(edge)
    after = {k: v for k, v in data["properties"].items() if k != VALID_TO}
    if end is not None:
        after[VALID_TO] = end
    prov = {**data["provenance"], "updated": state.iteration}
    state.delete_edge(edge)
    state.add_edge(source, data["type"], target, after, edge, prov)


# ---- the one ordering rule, for edges and properties alike ----------------------------------------------
def _insert(
    facts: list[dict[str, Any]], new: dict[str, Any], name: Callable[[dict[str, Any]], str]
) -> list[tuple[str, dict[str, Any]]]:
    """Put ``new`` among ``facts`` (same source, same one-at-a-time type; ``from``/``to`` stored texts or
    None) by its start: its predecessor ends at its start unless it ended before; it ends at its successor's
    start unless it ends before. Changes ``facts``' and ``new``'s ``to`` in place; returns a note and the fact
    changed, per change."""
    start = _key(new["from"])
    before = after = None
    before_key = after_key = start
    for f in facts:
        k = _key(f["from"])
        if k < start and (before is None or k > before_key):
            before, before_key = f, k
        elif k > start and (after is None or k < after_key):
            after, after_key = f, k
    out = []
    if before is not None and (before["to"] is None or _key(before["to"]) > start):
        before["to"] = new["from"]
        out.append((f"supersedes {name(before)}: it held until {new['from']}", before))
    if after is not None and (new["to"] is None or _key(new["to"]) > after_key):
        new["to"] = after["from"]
        out.append(
            (f"arrived after {name(after)}, which starts at {after['from']}: it holds until then", new)
        )
    return out


__all__ = [
    "edge_conflict",
    "node_update_conflict",
    "split_times",
    "edge_properties",
    "edge_time_valid",
    "edge_update_time_valid",
    "new_node_properties",
    "node_time_valid",
    "node_update_time_valid",
    "supersede_edges",
    "time_problem",
    "timed",
    "updated_node_properties",
]
