"""The filters of a ``find`` query: each ``where`` entry as a test of a node's properties
(``property_filter``), as the answer shows it (``show_filter``), and the nodes an index gives for them
(``find_candidates``: the identity index, else a property index, ``igg.graph.properties``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from igg.graph.properties import property_index
from igg.graph.state import GraphState
from igg.observe.escape import quote
from igg.observe.query_models import FindQuery, QueryError


def find_candidates(state: GraphState, q: FindQuery) -> list[str] | None:
    """Nodes that may match, in graph order, from an index: the identity index for an identity key with a
    plain value, else a property index (``igg.graph.properties``) for the first filter it can narrow; None
    when no filter can be answered from an index (the caller scans)."""
    keyed = state.schema.types_by_identity_key
    for k, v in q.where.items():
        if k in keyed and not isinstance(v, dict) and (q.label is None or q.label in keyed[k]):
            ids = state.nodes_with(k, v)
            return [n for n in ids if q.label is None or state.node_type(n) == q.label]
    op: str = ""
    arg: Any = None
    for k, v in q.where.items():
        if isinstance(v, dict):
            op, arg = next(iter(v.items())) if len(v) == 1 else ("", None)
            if (
                op not in _INDEXED_OPERATORS
                or (op == "in" and not isinstance(arg, list))
                or (op in _COMPARISONS and (not isinstance(arg, int | float) or isinstance(arg, bool)))
            ):
                continue  # exists, or a malformed filter: property_filter has said what is wrong with it
        index = property_index(state, k)
        if index is None:
            return None
        if not isinstance(v, dict):
            ids = index.equal(v)
        elif op == "in":
            ids = index.one_of(arg)
        elif op == "contains":
            ids = index.containing(str(arg).casefold())
        else:
            ids = index.compare(op, arg)
        if q.label is None:
            return ids
        nodes = state.nodes
        return [n for n in ids if nodes[n]["type"] == q.label]
    return None


_OPERATORS = ("contains", "in", "gt", "ge", "lt", "le", "exists")
"""The operators of a filter object."""
_COMPARISONS = ("gt", "ge", "lt", "le")
_INDEXED_OPERATORS = ("contains", "in", *_COMPARISONS)


def property_filter(key: str, spec: Any) -> Callable[[dict[str, Any]], bool]:
    if not isinstance(spec, dict):
        kind = spec.__class__
        return lambda props: (v := props.get(key, _MISSING)) == spec and v.__class__ is kind
    if len(spec) != 1 or next(iter(spec)) not in _OPERATORS:
        raise QueryError(
            "INVALID_QUERY",
            f"filter on {key!r} must be a value or one operator object "
            f"({', '.join(_OPERATORS)}); got {spec!r}.",
        )
    op, arg = next(iter(spec.items()))
    if op == "exists":
        wanted = bool(arg)
        return lambda props: (key in props) is wanted
    if op == "contains":
        needle = str(arg).casefold()

        def contains(props: dict[str, Any]) -> bool:
            v = props.get(key)
            if v.__class__ is str:
                return needle in v.casefold()
            return isinstance(v, list) and any(needle in str(x).casefold() for x in v)

        return contains
    if op == "in":
        if not isinstance(arg, list):
            raise QueryError("INVALID_QUERY", f"filter on {key!r}: 'in' takes a list of values; got {arg!r}.")
        return lambda props: props.get(key, _MISSING) in arg
    if not isinstance(arg, int | float) or isinstance(arg, bool):
        raise QueryError("INVALID_QUERY", f"filter on {key!r}: {op!r} takes a number; got {arg!r}.")
    numbers = (int, float)
    if op == "gt":
        return lambda props: (v := props.get(key)).__class__ in numbers and v > arg
    if op == "ge":
        return lambda props: (v := props.get(key)).__class__ in numbers and v >= arg
    if op == "lt":
        return lambda props: (v := props.get(key)).__class__ in numbers and v < arg
    return lambda props: (v := props.get(key)).__class__ in numbers and v <= arg


_MISSING = object()


def show_filter(spec: Any) -> str:
    if isinstance(spec, dict):
        op, arg = next(iter(spec.items())) if spec else ("?", None)
        return f"{op} {quote(arg, 60)}"
    return f"= {quote(spec, 60)}"
