"""Valid time in a fold of documents (``igg.documents.fold``): the same history whatever documents say it
and in whatever order they are read, so an update equals a fresh build with time too.

The rules, the act step's (``igg.act.validtime``) applied to the whole corpus at once:

- ``valid_from``/``valid_to`` on ``ADD_NODE``, ``ADD_EDGE``, ``UPDATE_EDGE`` and on an ``UPDATE_NODE`` that
  sets no one-at-a-time property are claims of the fact's bounds (``igg_valid_from``/``igg_valid_to``),
  decided as any property is: the smallest document id wins, and within one document the last claim. A time
  on a type the schema's ``valid_time`` does not name, or one that is not an ISO 8601 time, or a ``valid_to``
  not after its ``valid_from``, drops that action with its reason, as the act step refuses it.
- A one-at-a-time node property (``valid_time.T.properties``) keeps every value documents give it in
  ``igg_history``: an ``ADD_NODE``'s value holds from the node's ``valid_from``, an ``UPDATE_NODE``'s from its
  own. Values starting at one time: the smallest document id's (its last). Each value ends where the next
  one starts unless it ended before; the property holds the value with the latest start.
- One-at-a-time edges (``one_at_a_time``) of one source and type are ordered by ``valid_from`` (none: the
  earliest); each ends where the next starts unless it ended before (it is *superseded*). Two starting at
  one time with different targets: the one whose first supporting document (smallest id) is smaller stays,
  the other is dropped as the act step's TIME_CONFLICT would refuse it.

A planned difference carries these stored properties whole (``CheckContext.planned``): the act step stores
them as given.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from igg.models.actions import AddEdge, AddNode, UpdateEdge, UpdateNode
from igg.models.schema import CompiledSchema
from igg.models.validtime import HISTORY, TIME_RULE, VALID_FROM, VALID_TO, TimeError, history_text, parse_time

_EARLIEST = datetime.min.replace(tzinfo=UTC)

Entry = tuple[str, int, str, Any, str | None, str | None]
"""A one-at-a-time property's value as one document claims it: (document, order within the corpus's reading,
property, value, from, to)."""


def start(stored: str | None) -> datetime:
    """The instant a stored bound stands for (None: the earliest)."""
    return _EARLIEST if stored is None else parse_time(stored)[1]


def claimed_bounds(
    schema: CompiledSchema, label: str, action: AddNode | AddEdge | UpdateNode | UpdateEdge
) -> dict[str, str] | str:
    """The bounds an action claims of its fact, as stored (``igg_valid_from``/``igg_valid_to``), or why they
    cannot hold (the act step's TIME_NOT_SCOPED or INVALID_TIME)."""
    if action.valid_from is None and action.valid_to is None:
        return {}
    if label not in schema.time_scoped:
        return f"{label} facts carry no time (the schema's valid_time does not name {label})"
    out: dict[str, str] = {}
    for field, key, text in (
        ("valid_from", VALID_FROM, action.valid_from),
        ("valid_to", VALID_TO, action.valid_to),
    ):
        if text is not None:
            try:
                out[key] = parse_time(text)[0]
            except TimeError as exc:
                return f"{field}: {exc}"
    if VALID_FROM in out and VALID_TO in out and start(out[VALID_TO]) <= start(out[VALID_FROM]):
        return f"valid_to ({out[VALID_TO]}) is not after valid_from ({out[VALID_FROM]}): {TIME_RULE}"
    return out


def entries_of(
    schema: CompiledSchema,
    label: str,
    doc: str,
    order: int,
    properties: dict[str, Any],
    bounds: dict[str, str],
) -> list[Entry]:
    """The one-at-a-time property values among ``properties`` (of a node of type ``label``), each holding over
    ``bounds``."""
    keys = schema.timed_properties.get(label, frozenset())
    return [
        (doc, order, k, v, bounds.get(VALID_FROM), bounds.get(VALID_TO))
        for k, v in properties.items()
        if k in keys
    ]


def fold_history(
    properties: dict[str, Any], by_value: dict[str, list[str]], entries: Iterable[Entry]
) -> None:
    """A node's one-at-a-time properties from every document's ``entries`` (see the module doc): its
    ``igg_history`` and each property's latest value (``properties`` and ``by_value`` changed in place)."""
    chosen: dict[tuple[str, datetime], Entry] = {}
    claimers: dict[tuple[str, datetime, str], list[str]] = {}
    for entry in sorted(entries, key=lambda e: (e[0], e[1])):
        doc, _, key, value, begin, _ = entry
        at = (key, start(begin))
        kept = chosen.get(at)
        if kept is None or kept[0] == doc:  # the smallest document id's, its last claim
            chosen[at] = entry
        claimers.setdefault((key, at[1], repr(value)), [])
        if doc not in claimers[(key, at[1], repr(value))]:
            claimers[(key, at[1], repr(value))].append(doc)
    history: list[dict[str, Any]] = []
    for key in sorted({k for k, _ in chosen}):
        mine = sorted((at, e) for (k, at), e in chosen.items() if k == key)
        for i, (_, e) in enumerate(mine):
            end = e[5]
            if i + 1 < len(mine) and (end is None or start(end) > mine[i + 1][0]):
                end = mine[i + 1][1][4]
            history.append({"key": key, "value": e[3], "from": e[4], "to": end})
        latest_at, latest = mine[-1]
        properties[key] = latest[3]
        by_value[key] = sorted(claimers[(key, latest_at, repr(latest[3]))])
    if history:
        properties[HISTORY] = [history_text(h) for h in history]


def bound_edges(one_at_a_time: frozenset[str], edges: dict[Any, Any]) -> list[tuple[Any, str]]:
    """Supersession among the one-at-a-time ``edges`` (``(type, source, target)`` -> ``Fact``; see the module
    doc): each edge's ``igg_valid_to`` set in place; returns the edges dropped for a time conflict, each with
    its reason (the caller removes them)."""
    groups: dict[tuple[str, Any], list[Any]] = {}
    for key in edges:
        if key[0] in one_at_a_time:
            groups.setdefault((key[0], key[1]), []).append(key)
    dropped: list[tuple[Any, str]] = []
    for (label, _), keys in groups.items():
        by_start: dict[datetime, Any] = {}
        for key in sorted(keys, key=lambda k: (edges[k].documents[0], repr(k))):
            at = start(edges[key].properties.get(VALID_FROM))
            if at in by_start:  # the winner records the loser's documents: if it goes, they are read again
                winner = edges[by_start[at]]
                winner.claimants = sorted({*winner.claimants, *edges[key].documents} - set(winner.documents))
                dropped.append(
                    (
                        key,
                        f"{label} holds one target at a time: another starts at the same time "
                        f"({edges[key].properties.get(VALID_FROM) or 'an unknown time'})",
                    )
                )
                continue
            by_start[at] = key
        ordered = sorted(by_start.items())
        for i, (_, key) in enumerate(ordered):
            props = edges[key].properties
            if i + 1 < len(ordered):
                nxt_at, nxt = ordered[i + 1]
                end = props.get(VALID_TO)
                if end is None or start(end) > nxt_at:  # superseded: the next edge's sources decide its end
                    props[VALID_TO] = edges[nxt].properties[VALID_FROM]
                    edges[key].property_documents[VALID_TO] = list(edges[nxt].documents)
    return dropped


__all__ = ["Entry", "bound_edges", "claimed_bounds", "entries_of", "fold_history", "start"]
