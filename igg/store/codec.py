"""How records, graphs and requests become the JSON the store keeps, and back.

Iteration records are stored whole except their mutations (which get their own rows); verdicts become their
``to_dict`` form and are read back as ``Verdict`` objects. A graph *snapshot* is the IGG document with
provenance plus what a document does not carry: the protected (seed) node ids and the id counters.
"""

from __future__ import annotations

import dataclasses
import json
import zlib
from collections.abc import Iterator
from typing import Any

import orjson

from igg.graph.document import document_dict, document_pieces
from igg.graph.journal import Mutation
from igg.graph.state import GraphState
from igg.io.encodable import first_unencodable
from igg.models.request import Request
from igg.models.verdicts import Verdict
from igg.record.records import IterationRecord, verdict_from_dict
from igg.store.location import PostgresURL, StoreLocation

_RECORD_FIELDS = {f.name for f in dataclasses.fields(IterationRecord)} - {"mutations"}


def dumps(value: Any) -> str:
    """Compact JSON; objects with ``to_dict`` (verdicts, usage) and dataclasses are converted.

    Text UTF-8 cannot encode (a lone surrogate) is written as its ``\\u`` escape: SQLite could not bind it,
    and the JSON reads back to the identical value, so the store holds any record the engine produces. A
    float that is not finite is written as null (no graph value is one: the act step refuses them).
    """
    try:  # orjson writes the same JSON values about ten times faster (a store keeps one per mutation)
        return orjson.dumps(value, default=_default, option=_ORJSON).decode("utf-8")
    except (TypeError, orjson.JSONEncodeError):  # a lone surrogate, an integer past 64 bits, a non-str key
        pass
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=_default)
    if first_unencodable(text) is not None:
        text = json.dumps(value, ensure_ascii=True, separators=(",", ":"), default=_default)
    return text


_ORJSON = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_SUBCLASS
"""What ``_default`` converts as the standard library's path does: dataclasses (``to_dict`` first), times and
subclasses of str, int, dict and list as ``json`` reads them."""


def loads(text: str | bytes) -> Any:
    """What ``dumps`` wrote, read back: orjson (about 2x faster on a snapshot), or the standard library for
    what orjson refuses and ``dumps`` may write (a lone surrogate's escape, NaN, an integer past 64 bits)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


def _default(value: Any) -> Any:
    if hasattr(value, "to_dict"):
        return value.to_dict()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", by_alias=True)
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    return str(value)


def request_to_json(request: Request) -> str:
    """The request as JSON that ``load_request`` reads back to an equal request."""
    return dumps(request.model_dump(mode="json", by_alias=True, exclude_none=True))


def record_to_dict(record: Any) -> dict[str, Any]:
    """An iteration record (``IterationRecord`` or a dict) as a JSON-ready dict, without its mutations."""
    out: dict[str, Any] = json.loads(dumps(record_data(record)))
    return out


def record_data(record: Any) -> dict[str, Any]:
    """What ``record_to_dict`` holds, before the round trip through JSON that makes every value plain: the
    record's own dict (``dumps`` of it is the stored text)."""
    if isinstance(record, dict):
        data = {k: v for k, v in record.items() if k != "mutations"}
    elif isinstance(record, IterationRecord):
        data = record.to_dict(mutations=False)
    elif hasattr(record, "to_dict"):
        data = record.to_dict()
        data.pop("mutations", None)
    else:
        data = {f.name: getattr(record, f.name) for f in dataclasses.fields(record) if f.name != "mutations"}
    data["verdicts"] = [v.to_dict() if isinstance(v, Verdict) else v for v in data.get("verdicts") or []]
    return data


def record_from_dict(data: dict[str, Any], mutations: list[Mutation] | None = None) -> IterationRecord:
    """An ``IterationRecord`` from its stored form (fields this IGG does not know are left out)."""
    kwargs = {k: v for k, v in data.items() if k in _RECORD_FIELDS}
    kwargs["verdicts"] = [verdict_from_dict(v) for v in data.get("verdicts") or []]
    return IterationRecord(**kwargs, mutations=list(mutations or []))


def mutation_row(m: Mutation) -> tuple[str, str, str]:
    """A mutation's stored row: (op, the node or edge it is filed under, its JSON)."""
    return m.op, m.id, dumps(m.to_dict())


def snapshot_of(state: GraphState) -> dict[str, Any]:
    """A whole-graph snapshot: the IGG document (with provenance, without metadata), the protected ids and the
    id counters.

    Built as plain dicts (``igg.graph.document``): going through the pydantic document models would cost ~25x
    more at 50,000 nodes.
    """
    next_node, next_edge = state.id_counters
    return {
        "document": document_dict(state, provenance=True),
        "protected": sorted(state.protected),
        "next_node": next_node,
        "next_edge": next_edge,
    }


def snapshot_json(state: GraphState) -> str:
    """``dumps(snapshot_of(state))``, the same text, encoded a chunk of elements at a time
    (``igg.graph.document.document_pieces``): the graph is never held as dicts beside its text. At 50,000
    files those dicts took as much memory as the text, when the finalize step of a map kept its snapshot."""
    try:
        return b"".join(_snapshot_pieces(state)).decode("utf-8")
    except (TypeError, orjson.JSONEncodeError):  # what dumps writes otherwise (see there)
        return dumps(snapshot_of(state))


def snapshot_blob(state: GraphState) -> bytes:
    """``snapshot_json(state)`` as UTF-8, compressed with zlib (level 1) while it is encoded: neither the
    text nor the graph's dicts are ever held whole, and SQLite binds (and copies twice) a tenth of the bytes.
    What an SQLite store keeps; ``read_snapshot`` reads either form."""
    packer = zlib.compressobj(SNAPSHOT_LEVEL)
    try:
        packed = [packer.compress(piece) for piece in _snapshot_pieces(state)]
    except (TypeError, orjson.JSONEncodeError):
        packer = zlib.compressobj(SNAPSHOT_LEVEL)
        packed = [packer.compress(dumps(snapshot_of(state)).encode("utf-8"))]
    packed.append(packer.flush())
    return b"".join(packed)


SNAPSHOT_LEVEL = 1
"""zlib's level for snapshots: its fastest (a 584 MB snapshot of 50,051 files: 1.7 s, 55 MB)."""


def read_snapshot(stored: str | bytes) -> Any:
    """A stored snapshot read back: the text of ``snapshot_json`` or the bytes of ``snapshot_blob`` (parsed
    as the UTF-8 they hold, never decoded to a text first)."""
    return loads(zlib.decompress(stored) if isinstance(stored, bytes) else stored)


def snapshot_text(stored: str | bytes) -> str:
    """A stored snapshot's JSON text (what a store that keeps text, PostgreSQL, is given in a copy)."""
    return zlib.decompress(stored).decode("utf-8") if isinstance(stored, bytes) else stored


def kept_snapshot(state: GraphState, where: StoreLocation) -> str | bytes:
    """The graph's snapshot as the store at ``where`` keeps it: compressed in an SQLite file
    (``snapshot_blob``), text in PostgreSQL, whose column is text (``snapshot_json``)."""
    return snapshot_blob(state) if _compressed(where) else snapshot_json(state)


def snapshot_for(stored: str | bytes, where: StoreLocation) -> str | bytes:
    """A stored snapshot, in either form, as the store at ``where`` may keep it (a copy between stores)."""
    return stored if _compressed(where) else snapshot_text(stored)


def _compressed(where: StoreLocation) -> bool:
    return not isinstance(where, PostgresURL)


def _snapshot_pieces(state: GraphState) -> Iterator[bytes | memoryview]:
    """The pieces of ``dumps(snapshot_of(state))`` (raises what orjson raises for what it cannot write)."""
    yield b'{"document":'
    yield from document_pieces(state, **_SNAPSHOT_PIECES)
    next_node, next_edge = state.id_counters
    rest = orjson.dumps(
        {"protected": sorted(state.protected), "next_node": next_node, "next_edge": next_edge},
        option=_ORJSON,
    )
    yield b","
    yield memoryview(rest)[1:]


def _orjson(value: Any) -> bytes:
    return orjson.dumps(value, option=_ORJSON)


_SNAPSHOT_PIECES: dict[str, Any] = {
    "schema": None,
    "metadata": None,
    "provenance": True,
    "encode": _orjson,
    "encode_list": _orjson,
}
"""How a snapshot's document is written: with provenance, without schema or metadata, as ``dumps`` writes."""


def state_from_snapshot(state: GraphState, snapshot: dict[str, Any]) -> GraphState:
    """Load a snapshot into an empty ``GraphState`` (its schema comes from the request)."""
    document = snapshot["document"]
    state.load(document["nodes"], document["edges"])
    state.protected = set(snapshot.get("protected") or ()) & set(state.graph.nodes)
    state.restore_id_counters(int(snapshot["next_node"]), int(snapshot["next_edge"]))
    state.take_journal()
    return state


def canonical(state: GraphState) -> dict[str, Any]:
    """An order-free form of a graph (ids, types, properties, provenance) for equality checks."""
    nodes = {
        n: (d["type"], _frozen(d["properties"]), _frozen(d.get("provenance") or {}))
        for n, d in state.graph.nodes(data=True)
    }
    edges = {
        k: (d["type"], u, v, _frozen(d["properties"]), _frozen(d.get("provenance") or {}))
        for k, u, v, d in state.edges()
    }
    return {"nodes": nodes, "edges": edges}


def _frozen(mapping: dict[str, Any]) -> str:
    text = json.dumps(mapping, sort_keys=True, ensure_ascii=False)
    return text if first_unencodable(text) is None else json.dumps(mapping, sort_keys=True, ensure_ascii=True)


def differences(a: GraphState, b: GraphState, limit: int = 10) -> list[str]:
    """Human-readable differences between two graphs (empty when equal), at most ``limit``."""
    ca, cb = canonical(a), canonical(b)
    out: list[str] = []
    for kind in ("nodes", "edges"):
        left, right = ca[kind], cb[kind]
        for key in sorted(left.keys() - right.keys()):
            out.append(f"{kind[:-1]} {key} only in the first graph")
        for key in sorted(right.keys() - left.keys()):
            out.append(f"{kind[:-1]} {key} only in the second graph")
        for key in sorted(left.keys() & right.keys()):
            if left[key] != right[key]:
                out.append(f"{kind[:-1]} {key} differs: {left[key]} vs {right[key]}")
    return out[:limit] + ([f"... and {len(out) - limit} more"] if len(out) > limit else [])
