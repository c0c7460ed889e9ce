"""Fitting the code model to whatever schema a request declares.

The code agent knows symbols in the built-in code schema (``schemas/code-graph.json``); a request may
declare a smaller one, like the specification's own (Class, Interface, Method, DatabaseTable; CALLS,
IMPLEMENTS, READS_FROM, WRITES_TO; identity ``name``). ``SchemaFit`` decides, once per run, what each symbol
and relation becomes there:

- a node type the schema lacks falls back (Enum -> Class, Function -> Method, Interface -> Class) or the
  symbol is left out, and so are its relations (INSTANTIATES falls back to CALLS);
- a relation is proposed only when its type exists and the schema's edge patterns allow its endpoints;
- identities are computed with the schema's own identity keys; when two symbols would share one (two
  ``login`` methods under identity ``name``), their ``name`` is qualified (``AuthService.login``, then
  ``AuthService.login(String)``) so that no edge ever lands on the wrong node; a symbol that still collides
  is left out; a schema whose identity has no ``owner`` gets every method named ``Owner.name``;
- a schema without CONTAINS cannot attach methods to their types, so member-level relations are also
  proposed between the types (``AuthController CALLS AuthService``, as in the specification's example);
- every edge but CONTAINS carries the sites of the relations it stands for (``edge_properties``): the sites
  of every relation that becomes that edge, in every file (a type-level CALLS gathers its methods' calls).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import orjson

from igg.codemap.link import CodeModel, Relation
from igg.codemap.model import Site, site_properties
from igg.models.schema import CompiledSchema

NODE_FALLBACKS: dict[str, tuple[str, ...]] = {
    "Enum": ("Class",),
    "Function": ("Method",),
    "Interface": ("Class",),
}
EDGE_FALLBACKS: dict[str, tuple[str, ...]] = {"INSTANTIATES": ("CALLS",), "IMPORTS_SYMBOL": ("IMPORTS",)}


@dataclass(frozen=True, slots=True)
class Placed:
    """A symbol as the request's schema sees it."""

    label: str
    properties: dict[str, Any]
    identity: tuple[Any, ...]

    def ref(self, keys: tuple[str, ...]) -> dict[str, Any]:
        """A node reference that matches exactly this node."""
        return {"label": self.label, **{k: self.properties[k] for k in keys}}


class SchemaFit:
    """Symbols and relations of one ``CodeModel`` placed in one request schema."""

    def __init__(self, model: CodeModel, schema: CompiledSchema, only: Collection[str] | None = None) -> None:
        """``only``: the symbols to place (every symbol's identity still decides which names collide, and when
        a schema's names collide every symbol is placed): an update that plans the edges of some files
        (``igg.mapping.bodies``) places those files' symbols and the ends of their relations, not a whole
        tree's."""
        self.model = model
        self.schema = schema
        self.placed: dict[str, Placed] = {}
        self.left_out: dict[str, str] = {}
        """Symbol key -> why it has no place in this schema."""
        self.lift = "CONTAINS" not in schema.edge_types
        """Whether member-level relations are also proposed between their types (see ``lifted``)."""
        self._refs: dict[str, dict[str, Any]] = {}
        self._edge_labels: dict[tuple[str, str, str], str | None] = {}
        """The edge type of (relation label, source type, target type): decided once per combination."""
        self._edge_properties: dict[tuple[str, str, str], dict[str, Any]] | None = None
        self.colliding: set[str] = set()
        """Symbol keys whose identity another symbol's shares (their names are qualified, or they are left
        out): a symbol added beside one changes how the other is placed."""
        self._grouped: list[tuple[str, tuple[Any, ...]]] = []
        """Every identity (node type, identity values) a symbol has before names are qualified
        (``census``)."""
        self._place_all(only)

    def let_go(self) -> None:
        """Empty the placements and the tables built from them (the static pass, once its graph is planned:
        ``igg.mapping.prepare.CodeMap.let_go``); what was left out and why is kept."""
        self.placed.clear()
        self._refs.clear()
        self._edge_labels.clear()
        self._edge_properties = None
        self._grouped = []

    def _label(self, label: str) -> str | None:
        for candidate in (label, *NODE_FALLBACKS.get(label, ())):
            if candidate in self.schema.node_types:
                return candidate
        return None

    def _rule(self, kind: str) -> tuple[str, tuple[str, ...], tuple[str, ...], bool, bool] | None:
        """How a symbol of ``kind`` is placed: its node type, that type's identity keys and required
        attributes, whether a symbol with an owner is named ``Owner.name`` (the identity has a ``name`` and no
        ``owner``), and whether it must have a signature (a Method standing for a Function); None when the
        schema has no node type for it."""
        label = self._label(kind)
        if label is None:
            return None
        keys = tuple(self.schema.identity_keys[label])
        by_owner = "owner" not in keys and "name" in keys
        return label, keys, tuple(self.schema.required.get(label, ())), by_owner, label == "Method" != kind

    def _group(
        self, only: Collection[str] | None
    ) -> tuple[dict[tuple[str, tuple[Any, ...]], list[str]], dict[str, tuple[str, dict[str, Any]]], int]:
        """Every symbol the schema can hold, grouped by its node type and identity; the type and properties of
        each to place (``only``: of those; every one's identity is found); how many were grouped."""
        groups: dict[tuple[str, tuple[Any, ...]], list[str]] = {}
        staged: dict[str, tuple[str, dict[str, Any]]] = {}
        rules: dict[str, tuple[str, tuple[str, ...], tuple[str, ...], bool, bool] | None] = {}
        grouped = 0
        for key, s in self.model.symbols.items():  # the hot loop: a big tree has hundreds of thousands
            kind = s.label
            rule = rules[kind] if kind in rules else rules.setdefault(kind, self._rule(kind))
            if rule is None:
                self.left_out[key] = f"the schema has no node type for {kind}"
                continue
            label, keys, required, by_owner, signed = rule
            found = s.properties  # the properties here: these, and a member's package (its owner's)
            pack = found["owner"].rpartition(".")[0] if "package" not in found and "owner" in found else None
            lacks = signed and "signature" not in found
            for k in required:
                lacks = lacks or (pack if k == "package" and pack is not None else found.get(k)) in (None, "")
            if lacks:
                missing = ", ".join(k for k in required if k not in found) or "a signature"
                self.left_out[key] = f"{label} requires {missing}, which a {kind} lacks"
                continue
            grouped += 1
            if only is None or key in only or (by_owner and found.get("owner")):
                props = dict(found)
                if pack is not None:
                    props["package"] = pack
                if by_owner and props.get("owner"):
                    props = self._qualified(key, props, level=1)  # Owner.name: the schema cannot say whose
                staged[key] = (label, props)
                groups.setdefault((label, tuple([props.get(k) for k in keys])), []).append(key)
            else:  # not placed: its identity alone, as its properties would give it
                values = [pack if k == "package" and pack is not None else found.get(k) for k in keys]
                groups.setdefault((label, tuple(values)), []).append(key)
        return groups, staged, grouped

    def _place_all(self, only: Collection[str] | None = None) -> None:
        groups, staged, grouped = self._group(only)
        self._grouped = list(groups)
        if len(groups) != grouped:
            self.colliding = {k for members in groups.values() if len(members) > 1 for k in members}
        regrouped_any = False
        for level in (1, 2):  # qualify every member of a colliding group, then those still colliding
            if len(groups) == grouped or not any(
                len(members) > 1 and "name" in self.schema.identity_keys[label]
                for (label, _), members in groups.items()
            ):
                break  # nothing to qualify: regrouping would give the same groups in the same order
            if only is not None:  # names collide: every symbol is placed, as in a whole tree's map
                self.left_out.clear()
                self._place_all()
                return
            regrouped_any = True
            regrouped: dict[tuple[str, tuple[Any, ...]], list[str]] = {}
            for group, members in groups.items():
                label = group[0]
                if len(members) > 1 and "name" in self.schema.identity_keys[label]:
                    for key in members:
                        staged[key] = (label, self._qualified(key, staged[key][1], level=level))
                        regrouped.setdefault((label, self._identity(label, staged[key][1])), []).append(key)
                else:  # as it was (the same identity): most groups are one symbol
                    regrouped.setdefault(group, []).extend(members)
            groups = regrouped
        for (label, identity), members in groups.items():
            for key in members[1:]:
                self.left_out[key] = f"its identity {identity!r} under this schema's keys is already taken"
            if members[0] in staged:
                self.placed[members[0]] = Placed(label, staged[members[0]][1], identity)
        if regrouped_any:  # else the groups came in the symbols' order, and so did their first members
            self.placed = {k: self.placed[k] for k in self.model.symbols if k in self.placed}

    def census(self) -> bytes | None:
        """What a symbol added later must not meet (``igg.mapping.bodies``): every symbol's key and every
        identity a symbol has before names are qualified, as JSON values (a key a string, an identity an
        array of its type and values) joined by commas, so that a census kept beside the store
        (``TreeIndexes.census``) compares with one made in another process; None when an identity has a value
        JSON cannot hold. Made of a model of every file of a map, it tells an update that links the files of
        one language whether a symbol it adds shares its key or its identity with one of another language
        (``colliding`` within the files linked). One ``orjson.dumps`` of each list: a call per value leaves
        each value's bytes a 4 KB buffer (1.2 GB for the 885,000 of 50,000 files)."""
        try:
            identities = orjson.dumps(self._grouped)
        except TypeError:
            return None
        return identities[1:-1] + b"," + orjson.dumps(list(self.model.symbols))[1:-1]

    def _identity(self, label: str, props: dict[str, Any]) -> tuple[Any, ...]:
        return tuple(props.get(k) for k in self.schema.identity_keys[label])

    def _qualified(self, key: str, props: dict[str, Any], level: int) -> dict[str, Any]:
        props = dict(props)
        owner = props.get("owner")
        if owner:
            owner_sym = self.model.symbols.get(f"type:{owner}")
            owner_name = owner_sym.properties["name"] if owner_sym else owner.rpartition(".")[2]
            member = props["signature"] if level > 1 else self.model.symbols[key].properties["name"]
            props["name"] = f"{owner_name}.{member}"
        elif "qualified_name" in props:
            props["name"] = props["qualified_name"]
        elif "package" in props and level == 1:
            props["name"] = f"{props['package']}.{self.model.symbols[key].properties['name']}"
        return props

    def lifted(self, r: Relation) -> Relation | None:
        """The type-level relation a member-level one implies, when the schema cannot attach members to
        their types (no CONTAINS): a method's CALLS/INSTANTIATES become CALLS between the types, its table
        reads and writes the type's. None when nothing is implied (or the schema has CONTAINS)."""
        if not self.lift:
            return None
        source = self._owner(r.source)
        if source is None:
            return None
        if r.label in ("READS_FROM", "WRITES_TO"):
            return Relation(r.label, source, r.target, r.line)
        if r.label in ("CALLS", "INSTANTIATES"):
            target = r.target if r.target.startswith("type:") else self._owner(r.target)
            if target is not None and target != source:
                return Relation("CALLS", source, target, r.line)
        return None

    def loops_back(self, r: Relation) -> bool:
        """Whether ``r`` joins a symbol to itself and so makes no edge: the one self-loop a code map draws is
        a callable calling itself (recursion), as a CALLS edge (``allow_self_loops: ["CALLS"]``)."""
        return r.source == r.target and (r.label != "CALLS" or self.edge_label(r) != "CALLS")

    def edge_properties(self) -> dict[tuple[str, str, str], dict[str, Any]]:
        """(edge type, source symbol key, target symbol key) -> the properties of that edge, for every edge
        the model's relations give a site (``igg.codemap.model.site_properties``): the sites of all the
        relations that become it, lifted ones included, in every file. Computed once; never mutate it."""
        if self._edge_properties is None:
            sites: dict[tuple[str, str, str], list[Site]] = {}
            typing_only: set[tuple[str, str, str]] = (
                set()
            )  # keys every relation of which is a type-only import
            runtime: set[tuple[str, str, str]] = set()
            edge_label, lift = self.edge_label, self.lift
            for plan in self.model.files:
                path, type_only = plan.path, plan.type_only
                for r, where in plan.sites.items():  # each relation of the file once, with its sites
                    for rel in (r, self.lifted(r)) if lift else (r,):
                        if rel is None or self.loops_back(rel):
                            continue
                        label = edge_label(rel)
                        if label is not None:
                            key = (label, rel.source, rel.target)
                            (typing_only if type_only and r in type_only else runtime).add(key)
                            found = sites.get(key)
                            if found is None:
                                sites[key] = [(path, line, column) for line, column in where]
                            else:
                                found.extend((path, line, column) for line, column in where)
            properties = {key: site_properties(found) for key, found in sites.items()}
            for key in typing_only - runtime:
                properties[key]["type_checking"] = True
            self._edge_properties = properties
        return self._edge_properties

    def _owner(self, key: str) -> str | None:
        owner = self.model.symbols[key].properties.get("owner") if key in self.model.symbols else None
        return f"type:{owner}" if owner else None

    def edge_label(self, r: Relation) -> str | None:
        """The edge type ``r`` becomes in this schema, or None when it has none."""
        placed = self.placed
        source, target = placed.get(r.source), placed.get(r.target)
        if source is None or target is None:
            return None
        combination = (r.label, source.label, target.label)
        try:
            return self._edge_labels[combination]
        except KeyError:
            pass
        found = None
        for candidate in (r.label, *EDGE_FALLBACKS.get(r.label, ())):
            if candidate not in self.schema.edge_types:
                continue
            allowed = self.schema.patterns.get(candidate)
            if allowed is None or (source.label, target.label) in allowed:
                found = candidate
                break
        self._edge_labels[combination] = found
        return found

    def ref(self, key: str) -> dict[str, Any]:
        """The node reference of symbol ``key`` (one dict per symbol, shared by its edges: never mutate
        it)."""
        ref = self._refs.get(key)
        if ref is None:
            placed = self.placed[key]
            ref = self._refs[key] = placed.ref(self.schema.identity_keys[placed.label])
        return ref
