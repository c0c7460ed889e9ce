"""The graph payload as the self-contained page embeds it: nodes and edges in columns (issue 49).

A 100,000-node code map's payload is 46 MB of JSON as a list of objects, and the browser reads the whole of it
before it draws anything: the HTML parser scans every byte of the ``<script>`` holding it, ``JSON.parse``
makes an object of every node, edge, property map and provenance. In columns the same payload is 27% of
that (12.4 MB): each node and edge is a row across parallel lists, ids that go up by one as runs, its type
an index into ``node_types`` or ``edge_types``, an edge's ends and a node's parent the index of that node, a
node's property names written once for all the nodes with the same names (``shapes``), an edge's empty
property map left out, and each distinct provenance written once (``provenance``: the table the rows point
into).

``columns(payload)`` gives the embedded form; ``rows(embedded)`` gives the payload back, equal to the one put
in, and the page's ``iggModel.fromColumns`` (``static/viewer-model.js``) does the same before drawing (a
browser test pins the two to each other). Only the embedding changes: the live page's JSON routes send the
payload as ``igg.view.data.graph_payload`` makes it. A payload whose nodes or edges are not all well formed
(the page draws those too, passing over the bad entries) is embedded as it is, without columns.

The embedded form is ``payload`` without ``nodes`` and ``edges``, plus ``columns``::

    {"provenance": [<each distinct provenance once>], "shapes": [[<property name>, ...], ...],
     "nodes": {"id": [<id, or [prefix, first number, count] for count ids in a row>, ...],
               "type": [<index into node_types>], "label": [<label, or null: its identity values>, ...],
               "properties": [[<index into shapes>, <value of its first name>, ...], ...],
               "provenance": [<index into provenance>], "parent": [<node index, or the id, or null>]},
     "edges": {"id": [...], "type": [<index into edge_types>], "source": [<node index, or the id>],
               "target": [...], "provenance": [...], "properties": [[<edge index>, {...}], ...]}}

An id column writes ids that go up by one as a run: ``["n", 1, 3]`` stands for ``n1``, ``n2``, ``n3`` (IGG
numbers its nodes and edges that way). A label that is the node's identity values joined by spaces (as
``igg.view.data.node_label`` makes it, when all of them are strings) is left out (``null``): the page joins
them again. ``edges.properties`` lists only the edges whose property map is not empty; every other edge has
``{}``.
"""

from __future__ import annotations

import json
import re
from typing import Any

NODE_KEYS = frozenset({"id", "type", "label", "properties", "provenance"})
"""What every node row has (``parent`` may be there too)."""
EDGE_KEYS = frozenset({"id", "type", "source", "target", "properties", "provenance"})
"""What every edge row has."""
_NODE_KEYS_PARENT = NODE_KEYS | {"parent"}


_NUMBERED = re.compile(r"(.*?)(0|[1-9][0-9]{0,14})")
"""An id that ends in a number (written without leading zeros, small enough for a JavaScript number)."""


def id_runs(ids: list[str]) -> list[str | list[Any]]:
    """``ids`` with each run of two or more ids that go up by one (``n7``, ``n8``, ...) as ``[prefix, first,
    count]``."""
    out: list[str | list[Any]] = []
    run: list[Any] | None = None  # [prefix, first, count] of the run being extended
    for item in ids:
        found = _NUMBERED.fullmatch(item)
        if found and run is not None and found[1] == run[0] and int(found[2]) == run[1] + run[2]:
            run[2] += 1
            continue
        _close(out, run)
        run = [found[1], int(found[2]), 1] if found else None
        if run is None:
            out.append(item)
    _close(out, run)
    return out


def _close(out: list[str | list[Any]], run: list[Any] | None) -> None:
    if run is not None:
        out.append(run if run[2] > 1 else f"{run[0]}{run[1]}")


def expand_ids(column: list[str | list[Any]]) -> list[str]:
    """The ids an id column stands for (``id_runs`` undone; the page's ``expandIds``)."""
    out: list[str] = []
    for item in column:
        if isinstance(item, str):
            out.append(item)
        else:
            prefix, first, count = item
            out.extend(f"{prefix}{first + k}" for k in range(count))
    return out


class _Shapes:
    """Property maps as their keys' shape (an index into ``shapes``, each key list written once) then their
    values in that order."""

    def __init__(self) -> None:
        self.keys: list[list[str]] = []
        self._index: dict[tuple[str, ...], int] = {}

    def row(self, properties: dict[str, Any]) -> list[Any]:
        keys = tuple(properties)
        found = self._index.get(keys)
        if found is None:
            found = self._index[keys] = len(self.keys)
            self.keys.append(list(keys))
        return [found, *properties.values()]


class _Table:
    """Each distinct provenance once, by value, in first-seen order."""

    def __init__(self) -> None:
        self.values: list[dict[str, Any]] = []
        self._index: dict[Any, int] = {}

    def index(self, value: dict[str, Any]) -> int:
        try:
            key: Any = tuple(value.items())
            hash(key)
        except TypeError:  # lists inside (evidence): the JSON text stands for the value
            key = json.dumps(value, ensure_ascii=False)
        found = self._index.get(key)
        if found is None:
            found = self._index[key] = len(self.values)
            self.values.append(value)
        return found


def _well_formed(payload: dict[str, Any]) -> bool:
    """Every node and edge a row of the usual keys, with string ids, ends and parents, a type from the lists,
    dicts for properties and provenance, no id twice (one pass per check: this runs on every export)."""
    nodes, edges = payload.get("nodes"), payload.get("edges")
    if not isinstance(nodes, list) or not isinstance(edges, list):
        return False
    if not all(type(n) is dict for n in nodes) or not all(type(e) is dict for e in edges):
        return False
    try:
        node_types = set(payload.get("node_types") or ())
        edge_types = set(payload.get("edge_types") or ())
        if not all(n.keys() == NODE_KEYS or n.keys() == _NODE_KEYS_PARENT for n in nodes):
            return False
        if not all(e.keys() == EDGE_KEYS for e in edges):
            return False
        ids = [n["id"] for n in nodes]
        strings = [*ids, *(n["parent"] for n in nodes if "parent" in n)]
        strings += [e["id"] for e in edges] + [e["source"] for e in edges] + [e["target"] for e in edges]
        return (
            all(type(x) is str for x in strings)
            and all(type(n["label"]) is str for n in nodes)
            and len(set(ids)) == len(ids)
            and {n["type"] for n in nodes} <= node_types
            and {e["type"] for e in edges} <= edge_types
            and all(type(r["properties"]) is dict and type(r["provenance"]) is dict for r in (*nodes, *edges))
        )
    except TypeError:  # an unhashable type or type list
        return False


def _identity_text(properties: dict[str, Any], keys: list[str] | None) -> str | None:
    """What ``igg.view.data.node_label`` writes when it shortens nothing: the identity values present joined
    by spaces, when every one is a string (the page joins them the same way); None otherwise."""
    if keys is None:
        return None
    values = [properties[k] for k in keys if properties.get(k) is not None]
    if not values or not all(type(v) is str for v in values):
        return None
    return " ".join(values)


def _identity_keys(payload: dict[str, Any]) -> dict[Any, list[str]]:
    """Each node type's identity keys, where the payload gives them as a list of strings."""
    given = payload.get("identity_keys")
    if not isinstance(given, dict):
        return {}
    return {
        t: keys
        for t, keys in given.items()
        if isinstance(keys, list) and all(isinstance(k, str) for k in keys)
    }


def columns(payload: dict[str, Any]) -> dict[str, Any]:
    """The payload as the page embeds it (``payload`` itself when its nodes or edges are not well formed;
    never mutated)."""
    if not _well_formed(payload):
        return payload
    table, shapes, keys = _Table(), _Shapes(), _identity_keys(payload)
    nodes: list[dict[str, Any]] = payload["nodes"]
    edges: list[dict[str, Any]] = payload["edges"]
    at = {n["id"]: i for i, n in enumerate(nodes)}
    node_type = {t: i for i, t in enumerate(payload["node_types"])}
    edge_type = {t: i for i, t in enumerate(payload["edge_types"])}
    out = {k: v for k, v in payload.items() if k not in ("nodes", "edges")}
    out["columns"] = {
        "nodes": {
            "id": id_runs([n["id"] for n in nodes]),
            "type": [node_type[n["type"]] for n in nodes],
            "label": [
                None if _identity_text(n["properties"], keys.get(n["type"])) == n["label"] else n["label"]
                for n in nodes
            ],
            "properties": [shapes.row(n["properties"]) for n in nodes],
            "provenance": [table.index(n["provenance"]) for n in nodes],
            "parent": [at.get(n["parent"], n["parent"]) if "parent" in n else None for n in nodes],
        },
        "edges": {
            "id": id_runs([e["id"] for e in edges]),
            "type": [edge_type[e["type"]] for e in edges],
            "source": [at.get(e["source"], e["source"]) for e in edges],
            "target": [at.get(e["target"], e["target"]) for e in edges],
            "provenance": [table.index(e["provenance"]) for e in edges],
            "properties": [[i, e["properties"]] for i, e in enumerate(edges) if e["properties"]],
        },
        "provenance": table.values,
        "shapes": shapes.keys,
    }
    return out


def rows(embedded: dict[str, Any]) -> dict[str, Any]:
    """The payload an embedded form stands for (what ``iggModel.fromColumns`` does in the page)."""
    cols = embedded.get("columns")
    if cols is None:
        return embedded
    table, shapes, nc, ec = cols["provenance"], cols["shapes"], cols["nodes"], cols["edges"]
    ids, keys = expand_ids(nc["id"]), _identity_keys(embedded)

    def node_id(ref: int | str) -> str:
        return ids[ref] if isinstance(ref, int) else ref

    nodes = []
    for i, n_id in enumerate(ids):
        node = {
            "id": n_id,
            "type": embedded["node_types"][nc["type"][i]],
            "label": nc["label"][i],  # None: derived below, once the properties are known
            "properties": dict(zip(shapes[nc["properties"][i][0]], nc["properties"][i][1:], strict=True)),
            "provenance": table[nc["provenance"][i]],
        }
        if node["label"] is None:
            node["label"] = _identity_text(node["properties"], keys[node["type"]])
        if nc["parent"][i] is not None:
            node["parent"] = node_id(nc["parent"][i])
        nodes.append(node)
    props = {i: p for i, p in ec["properties"]}
    edges = [
        {
            "id": e_id,
            "type": embedded["edge_types"][ec["type"][i]],
            "source": node_id(ec["source"][i]),
            "target": node_id(ec["target"][i]),
            "properties": props.get(i, {}),
            "provenance": table[ec["provenance"][i]],
        }
        for i, e_id in enumerate(expand_ids(ec["id"]))
    ]
    out = {k: v for k, v in embedded.items() if k != "columns"}
    out.update(nodes=nodes, edges=edges)
    return out
