"""Identity constraints before writing: what the server supports is found out once per export.

Every node IGG writes is identified by (label, ``igg_scope``, identity keys). Before the first batch the
export asks the server to guarantee that identity:

- **Neo4j 5 / Aura / ArcadeDB** (Neo4j 5 syntax): ``CREATE CONSTRAINT igg_<Label>_unique IF NOT EXISTS FOR
  (n:Label) REQUIRE (n.igg_scope, n.k...) IS UNIQUE``. The constraint is backed by an index, so MERGE finds
  nodes by index, and two exporters racing to create the same node cannot both succeed (the loser's MERGE
  fails with a constraint error, which the export retries: the retry finds the node).
- If the server refuses composite uniqueness constraints (a syntax or capability error on the first one),
  the export creates ``CREATE INDEX igg_<Label>_identity IF NOT EXISTS ... ON (n.igg_scope, n.k...)`` for
  every label instead, and says so: MERGE stays fast, but concurrent exporters of one scope could then
  duplicate a node. A constraint refused for one label only (existing duplicates, a conflicting index) falls
  back to the index for that label, with a warning.
- **Memgraph**: ``CREATE CONSTRAINT ON (n:Label) ASSERT n.igg_scope, n.k IS UNIQUE`` plus a label-property
  index on the first identity key (Memgraph's constraints create no index).
- **FalkorDB**: see ``igg.export.falkordb.ensure_indexes``.

``SchemaReport`` says what was created, what already existed and what could not be done.

**Constraints an earlier export left** are read first (``SHOW CONSTRAINTS``, ``existing_constraints``): a
uniqueness constraint on a label this export writes that this graph's identity does not imply (its
properties are not all of ``igg_scope`` and the identity keys: ``igg_Class_unique`` on ``(igg_scope, name)``
left by an export whose classes were identified by name, when this graph identifies them by ``(package,
name)``, or a code map's methods, identified by ``(owner, signature)``, sharing names) refuses nodes this
graph holds apart.
``constraint_conflicts`` finds it before anything is written (``--plan`` too): when the graph holds nodes it
would refuse, the export stops with the constraint's name and the fix; when it holds none yet, a warning says
the same. A constraint of exactly this identity is reused whatever its name; IGG's own name taken by a
constraint of other properties makes IGG name its constraint after the identity keys
(``igg_Class_package_name_unique``), since ``IF NOT EXISTS`` would otherwise keep the other one silently.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from igg.export import cypher
from igg.graph.state import GraphState

Capability = Literal["uniqueness constraints", "indexes only", "none", "not needed"]


@dataclass(kw_only=True)
class SchemaReport:
    """What the export did to the database schema before writing."""

    capability: Capability = "not needed"
    """What the server accepted: composite uniqueness constraints, indexes only (no uniqueness guarantee),
    none (neither), or not needed (an empty graph)."""
    created: list[str] = field(default_factory=list)
    """Constraints and indexes created by this export, e.g. ``constraint igg_Class_unique ON :Class(igg_scope,
    name)``."""
    existing: list[str] = field(default_factory=list)
    """Constraints and indexes that were already there."""
    warnings: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON form (part of the export summary)."""
        return {"capability": self.capability, "created": self.created, "existing": self.existing}


@dataclass(frozen=True, kw_only=True)
class Constraint:
    """A uniqueness constraint the database holds (a row of ``SHOW CONSTRAINTS``)."""

    name: str
    label: str
    properties: tuple[str, ...]

    def describe(self) -> str:
        return f"constraint {self.name} ON :{self.label}({', '.join(self.properties)})"


def existing_constraints(rows: list[dict[str, Any]]) -> list[Constraint]:
    """The node uniqueness constraints among ``SHOW CONSTRAINTS`` rows (others, and malformed rows, left
    out)."""
    out = []
    for row in rows:
        labels, props = row.get("labelsOrTypes"), row.get("properties")
        kind = str(row.get("type") or "")
        if "UNIQUE" not in kind.upper() or str(row.get("entityType") or "NODE").upper() != "NODE":
            continue
        if not isinstance(labels, list) or len(labels) != 1 or not isinstance(props, list) or not props:
            continue
        out.append(
            Constraint(
                name=str(row.get("name") or ""), label=str(labels[0]), properties=tuple(str(p) for p in props)
            )
        )
    return out


def constraint_conflicts(
    constraints: list[Constraint], state: GraphState, labels: list[str]
) -> tuple[list[str], list[str]]:
    """(errors, warnings): the constraints on ``labels`` that the graph's identity (``igg_scope`` and the
    identity keys) does not imply. An error when the graph holds two nodes such a constraint would refuse (the
    export could only fail half-way), a warning when it holds none yet."""
    errors, warnings = [], []
    for c in constraints:
        if c.label not in labels:
            continue
        keys = state.schema.identity_keys[c.label]
        identity = (cypher.SCOPE_KEY, *keys)
        if set(identity) <= set(c.properties):
            continue  # implied: two nodes it refuses would share an identity
        clashing = _clashes(state, c.label, [p for p in c.properties if p != cypher.SCOPE_KEY])
        fix = (
            f"drop it if no other export relies on it (DROP CONSTRAINT {c.name}), export into another"
            f" database (NEO4J_DATABASE, --database), or identify {c.label} by ({', '.join(c.properties)}) as"
            " the export that made it did"
        )
        what = (
            f"{c.describe()} conflicts with this graph's identity of {c.label} ({', '.join(identity)}): it "
            f"refuses two {c.label} nodes that share {', '.join(c.properties)}"
        )
        if clashing:
            errors.append(f"{what}, and this graph has {clashing} such node(s); {fix}")
        else:
            warnings.append(f"{what} (this graph has none yet); {fix}")
    return errors, warnings


def _clashes(state: GraphState, label: str, props: list[str]) -> int:
    """How many nodes of ``label`` share the values of ``props`` with another (all of one scope)."""
    seen: dict[tuple[Any, ...], int] = {}
    for node_id in state.nodes_of_type(label):
        values = state.node_properties(node_id)
        if any(p not in values for p in props):
            continue  # a missing property is never refused by a uniqueness constraint
        key = tuple(repr(values[p]) for p in props)
        seen[key] = seen.get(key, 0) + 1
    return sum(n for n in seen.values() if n > 1)


def _describe(
    kind: str, label: str, keys: tuple[str, ...] | list[str], name: str | None = None, scoped: bool = True
) -> str:
    named = f" {name}" if name else ""
    props = (cypher.SCOPE_KEY, *keys) if scoped else tuple(keys)
    return f"{kind}{named} ON :{label}({', '.join(props)})"


def _code(exc: BaseException) -> str:
    return str(getattr(exc, "code", "") or "")


def _unsupported(exc: BaseException) -> bool:
    """A refusal that says the server lacks the feature (rather than that this label's data conflicts)."""
    code = _code(exc)
    return not code.startswith("Neo.ClientError.Schema.") and not code.startswith("Neo.ClientError.Security.")


def ensure_identity_neo4j(
    run: Callable[[str], Any],
    state: GraphState,
    labels: list[str],
    first_line: Callable[[BaseException], str],
    existing: list[Constraint] | None = None,
) -> SchemaReport:
    """Neo4j 5 syntax: a uniqueness constraint per label, else an index (see the module docstring).

    ``run(query)`` runs one auto-commit statement and returns its ``ResultSummary``; ``existing``: the
    database's constraints (``existing_constraints``)."""
    from neo4j.exceptions import Neo4jError

    report = SchemaReport()
    constraints: bool | None = None  # None: not tried yet
    held = existing or []
    for label in labels:
        keys = state.schema.identity_keys[label]
        identity = (cypher.SCOPE_KEY, *keys)
        same = next((c for c in held if c.label == label and c.properties == identity), None)
        if same is not None:  # this identity is guaranteed already, under whatever name
            constraints = True
            report.existing.append(same.describe())
            continue
        name = cypher.constraint_name(label)
        if any(c.name == name for c in held):  # IF NOT EXISTS would keep that other constraint silently
            name = cypher.constraint_name(label, keys)
        if constraints is not False:
            try:
                counters = run(cypher.identity_constraint(label, keys, name)).counters
            except Neo4jError as exc:
                if constraints is None and _unsupported(exc):
                    constraints = False
                    report.warnings.append(
                        f"the server refused a composite uniqueness constraint ({first_line(exc)}): identity "
                        "indexes instead; two exporters writing the same scope at once could duplicate nodes"
                    )
                else:
                    report.warnings.append(
                        f"no uniqueness constraint on {label} ({first_line(exc)}); an identity index instead"
                    )
            else:
                constraints = True
                text = _describe("constraint", label, keys, name)
                (report.created if counters.constraints_added else report.existing).append(text)
                continue
        try:
            counters = run(cypher.identity_index(label, keys)).counters
        except Neo4jError as exc:
            report.warnings.append(
                f"could not index {label} either ({first_line(exc)}): MERGE will scan the label"
            )
            continue
        text = _describe("index", label, keys, cypher.index_name(label))
        (report.created if counters.indexes_added else report.existing).append(text)
    if labels:
        report.capability = (
            "uniqueness constraints"
            if constraints
            else "indexes only"
            if report.created or report.existing
            else "none"
        )
    return report


def ensure_identity_memgraph(
    run: Callable[[str], Any],
    state: GraphState,
    labels: list[str],
    first_line: Callable[[BaseException], str],
) -> SchemaReport:
    """Memgraph: a uniqueness constraint and a label-property index per label."""
    from neo4j.exceptions import Neo4jError

    report = SchemaReport()
    constrained = 0
    for label in labels:
        keys = state.schema.identity_keys[label]
        for kind, query in (
            ("constraint", cypher.memgraph_constraint(label, keys)),
            ("index", cypher.memgraph_index(label, keys[0])),
        ):
            text = _describe(
                kind, label, keys if kind == "constraint" else [keys[0]], scoped=kind == "constraint"
            )
            try:
                run(query)
            except Neo4jError as exc:
                if "exist" in first_line(exc).lower():
                    report.existing.append(text)
                    constrained += kind == "constraint"
                else:
                    report.warnings.append(f"could not create the {kind} on {label}: {first_line(exc)}")
                continue
            report.created.append(text)
            constrained += kind == "constraint"
    if labels:
        report.capability = (
            "uniqueness constraints"
            if constrained == len(labels)
            else "indexes only"
            if report.created or report.existing
            else "none"
        )
    return report
