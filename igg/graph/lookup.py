"""Finding nodes: the identity indexes of a ``GraphState`` and the lookups over them.

``NodeLookup`` holds three indexes, kept right by the state's mutation methods (which share its dicts):
(node type, identity values) -> node id; (identity key, value) -> ids of the nodes whose identity holds
that value; node type -> ids. Over them: ``find_nodes`` (what a node reference matches), ``describe`` (a
node's short name, as verdicts say it) and ``close_matches`` (what a reference that matched nothing may have
meant).
"""

from __future__ import annotations

import difflib
from typing import Any

from igg.graph.tables import NodeTable
from igg.models.common import freeze
from igg.models.schema import CompiledSchema


class NodeLookup:
    """The node indexes of one graph and the lookups over them (``GraphState`` delegates to it)."""

    def __init__(self, schema: CompiledSchema, nodes: NodeTable) -> None:
        self.schema = schema
        self.nodes = nodes
        """The graph's node table (live)."""
        self.by_identity: dict[tuple[str, tuple[Any, ...]], str] = {}
        """(node type, identity values) -> node id."""
        self.by_prop: dict[tuple[str, Any], dict[str, None]] = {}
        """(identity key, frozen value) -> ids of the nodes whose identity includes that key and value."""
        self.by_type: dict[str, dict[str, None]] = {t: {} for t in schema.node_type_list}
        """Node type -> ids, in insertion order."""

    def identity_of(self, node_type: str, props: dict[str, Any]) -> tuple[Any, ...]:
        """The identity tuple of a node of ``node_type`` with ``props`` (KeyError: an identity key is
        missing)."""
        keys = self.schema.identity_keys[node_type]
        if len(keys) == 1:
            v = props[keys[0]]
            return (v if v.__class__ is not list else tuple(v),)
        return tuple(freeze(props[k]) for k in keys)

    def index(self, node_id: str, node_type: str, props: dict[str, Any]) -> None:
        """File a node under each of its identity (key, value) pairs (``by_prop``)."""
        by_prop = self.by_prop
        for k in self.schema.identity_keys[node_type]:
            v = props[k]
            key = (k, v if v.__class__ is not list else tuple(v))
            bucket = by_prop.get(key)
            if bucket is None:
                by_prop[key] = {node_id: None}
            else:
                bucket[node_id] = None

    def unindex(self, node_id: str, node_type: str, props: dict[str, Any]) -> None:
        """Take a node out of ``by_prop`` (the properties it was filed under)."""
        for k in self.schema.identity_keys[node_type]:
            key = (k, freeze(props[k]))
            bucket = self.by_prop[key]
            del bucket[node_id]
            if not bucket:
                del self.by_prop[key]

    def find_nodes(self, ref: dict[str, Any]) -> list[str]:
        """Ids of the nodes matching a reference (properties, plus optional ``label`` = node type).

        A reference that names its type and exactly that type's identity keys (what static agents send) is
        one lookup in the identity index; otherwise the smallest index bucket of its identity values is
        filtered (never every node sharing one value, e.g. every method of an owner)."""
        label = ref.get("label")
        keyed = self.schema.types_by_identity_key
        without = self.schema.types_without_identity_key
        if label is None and len(ref) == 1:  # {"name": "X"}: the commonest reference, one bucket as it is
            for k, v in ref.items():
                if v.__class__ is str and k in keyed and not without[k]:
                    hit = self.by_prop.get((k, v))
                    return list(hit) if hit else []
        if label is not None:
            if label not in self.by_type:
                return []
            keys = self.schema.identity_keys[label]
            if len(ref) == len(keys) + 1:
                exact = self._find_exact(label, keys, ref)
                if exact is not None:
                    return exact
            props = {k: v for k, v in ref.items() if k != "label"}
        else:
            props = ref
        best = self._cheapest(props, label)
        if best is not None:
            return self._bucket_matches(props, label, *best)
        types = (label,) if label is not None else self.schema.node_type_list
        return [n for t in types for n in self.by_type[t] if self._matches(n, props)]

    def _cheapest(
        self, props: dict[str, Any], label: str | None
    ) -> tuple[str, Any, dict[str, None] | None] | None:
        """(key, value, index bucket) of the property of ``props`` whose lookup leaves the least work, or None
        when no property is an identity key."""
        keyed = self.schema.types_by_identity_key
        without = self.schema.types_without_identity_key
        best_key: str | None = None
        best_value: Any = None
        bucket: dict[str, None] | None = None
        best_cost = 0
        for k, v in props.items():
            if k in keyed:
                try:
                    candidate = self.by_prop.get((k, v if v.__class__ is not list else tuple(v)))
                except TypeError:
                    candidate = None
                # the work this key leaves: its bucket, plus every node of the types not indexed under it
                cost = len(candidate or ()) + sum(
                    len(self.by_type[t]) for t in without[k] if label is None or t == label
                )
                if best_key is None or cost < best_cost:
                    best_key, best_value, bucket, best_cost = k, v, candidate, cost
        return (best_key, best_value, bucket) if best_key is not None else None

    def _bucket_matches(
        self,
        props: dict[str, Any],
        label: str | None,
        best_key: str,
        best_value: Any,
        bucket: dict[str, None] | None,
    ) -> list[str]:
        """The nodes matching ``props`` among ``bucket`` (the index's nodes of ``best_key`` = ``best_value``)
        and the nodes of the types not indexed under ``best_key``."""
        found = []
        if bucket:
            # equal strings are the same value; 1, 1.0 and True are equal but different values
            single = len(props) == 1 and best_value.__class__ is str
            nodes = self.nodes
            for n in bucket:
                if (label is None or nodes[n]["type"] == label) and (single or self._matches(n, props)):
                    found.append(n)
        # types whose identity lacks the key are not in its index: scan them
        for t in self.schema.types_without_identity_key[best_key]:
            if label is None or t == label:
                found.extend(n for n in self.by_type[t] if self._matches(n, props))
        return found

    def _find_exact(self, label: str, keys: tuple[str, ...], ref: dict[str, Any]) -> list[str] | None:
        """The match of a reference holding ``label`` and exactly its identity keys (None: it does not)."""
        try:
            if len(keys) == 1:
                v = ref[keys[0]]
                identity: tuple[Any, ...] = (v if v.__class__ is not list else tuple(v),)
            else:  # freeze(), inline: lists become tuples
                identity = tuple([v if (v := ref[k]).__class__ is not list else tuple(v) for k in keys])
            found = self.by_identity.get((label, identity))
        except KeyError:  # another key than the identity's: the general path
            return None
        except TypeError:  # an unhashable value: no node has it as its identity
            return []
        if found is None:
            return []
        have = self.nodes[found]["properties"]
        for k in keys:  # equal is not enough: 1, 1.0 and True are different values
            value, stored = ref[k], have[k]
            if stored.__class__ is not value.__class__ or stored != value:
                return []
        return [found]

    def _matches(self, node_id: str, props: dict[str, Any]) -> bool:
        have = self.nodes[node_id]["properties"]
        return all(k in have and have[k] == v and type(have[k]) is type(v) for k, v in props.items())

    def describe(self, node_id: str) -> str:
        """A short human/agent-readable name: ``Class "AuthService"`` or ``Method name=.. signature=..``."""
        data = self.nodes[node_id]
        t: str = data["type"]
        props = data["properties"]
        keys = self.schema.identity_keys[t]
        if len(keys) == 1:
            value = props.get(keys[0])
            if value.__class__ is str and '"' not in value and "\\" not in value:
                return f'{t} "{value}"'
            return f"{t} {_quote(value)}"
        return t + " " + " ".join(f"{k}={_quote(props.get(k))}" for k in keys)

    def close_matches(self, ref: dict[str, Any], limit: int = 3) -> list[str]:
        """Descriptions of nodes whose identity is close to the reference's, best first."""
        label = ref.get("label")
        probe = next((v for k, v in ref.items() if k != "label" and isinstance(v, str)), None)
        if probe is None:
            return []
        types = [label] if label in self.by_type else list(self.schema.node_type_list)
        names: dict[str, str] = {}
        first = probe[:1].lower()
        for t in types:
            ids = self.by_type[t]
            big = len(ids) > 5000
            key = self.schema.identity_keys[t][0]
            for n in ids:
                value = self.nodes[n]["properties"].get(key)
                if isinstance(value, str) and (not big or value[:1].lower() == first):
                    names.setdefault(value, n)
                    if len(names) >= 20000:
                        break
        close = difflib.get_close_matches(probe, list(names), n=limit, cutoff=0.6)
        if not close:
            low = probe.lower()
            close = [v for v in names if low in v.lower() or v.lower() in low][:limit]
        return [self.describe(names[c]) for c in close]


def _quote(value: Any) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return repr(value)


__all__ = ["NodeLookup"]
