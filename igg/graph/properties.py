"""Property indexes: which nodes hold a value of one property, for ``find`` filters on keys that are not
identity keys (the identity index answers those already).

An index covers one property key over every node. It is built on the first question about that key (one
pass over the node table) and then kept up to date by every change, replay and undo included (it is a
``GraphWatcher``). It answers with a *superset* of the matching nodes, which the caller filters with the
exact test, in the order the graph holds its nodes (the order a scan meets them):

- equality and ``in``: hash buckets by (value class, value);
- ``gt``/``ge``/``lt``/``le``: a sorted list of the distinct numbers held, cut with ``bisect``;
- ``contains``: a pass over the distinct strings (and lists) held, not over the nodes.

At most ``MAX_INDEXED_KEYS`` keys are indexed per graph; a question about another key scans.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterable
from typing import Any

from igg.graph.state import GraphState

MAX_INDEXED_KEYS = 32
"""Property keys indexed per graph at most (each costs a bucket entry per node holding the key)."""

_NUMBERS = (int, float)
_NUMBER_CLASSES = (int, float, bool)


def _bucket_key(value: Any) -> tuple[type, Any]:
    cls = value.__class__
    if cls is list:
        return cls, _freeze(value)
    return cls, value


def _freeze(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    return value


class PropertyIndex:
    """Nodes by the value they hold under one property key (see the module docstring)."""

    def __init__(self, state: GraphState, key: str) -> None:
        self.state = state
        self.key = key
        self._seq: dict[str, int] = {}
        self._next = 0
        self._buckets: dict[tuple[type, Any], dict[str, None]] = {}
        self._numbers: dict[Any, dict[str, None]] = {}
        """Number -> ids (1 and 1.0 share an entry: ranges compare values, the caller checks classes)."""
        self._sorted: list[Any] = []
        """The distinct numbers of ``_numbers``, ascending."""
        self._odd: dict[str, None] = {}
        """Nodes whose value cannot be hashed: part of every answer (the caller's exact test sorts them
        out)."""
        numbers = self._numbers
        for n, d in state.nodes.items():
            self._seq[n] = self._next
            self._next += 1
            props = d["properties"]
            if key in props:
                self._file(n, props[key], build=True)
        self._sorted = sorted(numbers)

    # ---- maintenance -----------------------------------------------------------------------------------
    def _file(self, node_id: str, value: Any, build: bool = False) -> None:
        try:
            bk = _bucket_key(value)
            bucket = self._buckets.get(bk)
        except TypeError:  # an unhashable value (a nested structure): always a candidate
            self._odd[node_id] = None
            return
        if bucket is None:
            self._buckets[bk] = {node_id: None}
        else:
            bucket[node_id] = None
        if bk[0] in _NUMBERS and not (bk[0] is float and math.isnan(value)):
            numbers = self._numbers.get(value)
            if numbers is None:
                self._numbers[value] = {node_id: None}
                if not build:
                    bisect.insort(self._sorted, value)
            else:
                numbers[node_id] = None

    def _unfile(self, node_id: str, value: Any) -> None:
        try:
            bk = _bucket_key(value)
            bucket = self._buckets.get(bk)
        except TypeError:
            self._odd.pop(node_id, None)
            return
        if bucket is not None:
            bucket.pop(node_id, None)
            if not bucket:
                del self._buckets[bk]
        if bk[0] in _NUMBERS:
            numbers = self._numbers.get(value)
            if numbers is not None:
                numbers.pop(node_id, None)
                if not numbers:
                    del self._numbers[value]
                    i = bisect.bisect_left(self._sorted, value)
                    if i < len(self._sorted) and self._sorted[i] == value:
                        del self._sorted[i]

    def node_added(self, node_id: str, node_type: str, properties: dict[str, Any]) -> None:
        self._seq[node_id] = self._next
        self._next += 1
        if self.key in properties:
            self._file(node_id, properties[self.key])

    def node_changed(
        self, node_id: str, node_type: str, before: dict[str, Any], after: dict[str, Any]
    ) -> None:
        key = self.key
        old, new = before.get(key, _MISSING), after.get(key, _MISSING)
        if old is new or (old.__class__ is new.__class__ and old == new):
            return
        if old is not _MISSING:
            self._unfile(node_id, old)
        if new is not _MISSING:
            self._file(node_id, new)

    def node_removed(self, node_id: str, node_type: str, properties: dict[str, Any]) -> None:
        if self.key in properties:
            self._unfile(node_id, properties[self.key])
        del self._seq[node_id]

    def edge_added(self, edge_id: str, source: str, edge_type: str, target: str) -> None:
        return None

    def edge_removed(self, edge_id: str, source: str, edge_type: str, target: str) -> None:
        return None

    # ---- reading ---------------------------------------------------------------------------------------
    def equal(self, value: Any) -> list[str]:
        """Nodes whose value may equal ``value`` (``==``, any class), in graph order."""
        return self._ordered(self._equal_sets([value]))

    def one_of(self, values: Iterable[Any]) -> list[str]:
        """Nodes whose value may equal one of ``values``, in graph order."""
        return self._ordered(self._equal_sets(values))

    def compare(self, op: str, bound: float) -> list[str]:
        """Nodes holding a number ``op`` (gt, ge, lt, le) ``bound``, in graph order."""
        values = self._sorted
        if op == "gt":
            picked = values[bisect.bisect_right(values, bound) :]
        elif op == "ge":
            picked = values[bisect.bisect_left(values, bound) :]
        elif op == "lt":
            picked = values[: bisect.bisect_left(values, bound)]
        else:
            picked = values[: bisect.bisect_right(values, bound)]
        numbers = self._numbers
        return self._ordered([numbers[v] for v in picked])

    def containing(self, needle: str) -> list[str]:
        """Nodes whose string (or a list item's text) contains ``needle`` case-insensitively, in graph
        order."""
        sets = []
        for (cls, value), ids in self._buckets.items():
            if cls is str:
                if needle in value.casefold():
                    sets.append(ids)
            elif cls is list and any(needle in str(x).casefold() for x in _thaw(value)):
                sets.append(ids)
        return self._ordered(sets)

    def _equal_sets(self, values: Iterable[Any]) -> list[dict[str, None]]:
        buckets = self._buckets
        sets = []
        for value in values:
            cls = value.__class__
            # 1 == 1.0 == True: a number may equal a number of another class; other values only their own
            classes = _NUMBER_CLASSES if cls in _NUMBER_CLASSES else (cls,)
            try:
                frozen = _freeze(value)
                for c in classes:
                    bucket = buckets.get((c, frozen))
                    if bucket is not None:
                        sets.append(bucket)
            except TypeError:
                continue
        return sets

    def _ordered(self, sets: list[dict[str, None]]) -> list[str]:
        if self._odd:
            sets = [*sets, self._odd]
        if not sets:
            return []
        if len(sets) == 1:
            ids: Iterable[str] = sets[0]
        else:
            merged: dict[str, None] = {}
            for s in sets:
                merged.update(s)
            ids = merged
        return sorted(ids, key=self._seq.__getitem__)


def _thaw(value: Any) -> list[Any]:
    return list(value) if isinstance(value, tuple) else [value]


_MISSING: Any = object()


def property_index(state: GraphState, key: str) -> PropertyIndex | None:
    """The state's index of ``key`` (built now on first use), or None when ``MAX_INDEXED_KEYS`` keys are
    indexed already."""
    indexes: dict[str, PropertyIndex] = state.indexes.setdefault("properties", {})
    index = indexes.get(key)
    if index is None:
        if len(indexes) >= MAX_INDEXED_KEYS:
            return None
        index = indexes[key] = PropertyIndex(state, key)
        state.watch(index)
    return index


__all__ = ["MAX_INDEXED_KEYS", "PropertyIndex", "property_index"]
