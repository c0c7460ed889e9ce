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


def _describe(kind: str, label: str, keys: tuple[str, ...] | list[str], name: str | None = None,
              scoped: bool = True) -> str:
    named = f" {name}" if name else ""
    props = (cypher.SCOPE_KEY, *keys) if scoped else tuple(keys)
    return f"{kind}{named} ON :{label}({', '.join(props)})"


def _code(exc: BaseException) -> str:
    return str(getattr(exc, "code", "") or "")


def _unsupported(exc: BaseException) -> bool:
    """A refusal that says the server lacks the feature (rather than that this label's data conflicts)."""
    code = _code(exc)
    return not code.startswith("Neo.ClientError.Schema.") and not code.startswith("Neo.ClientError.Security.")


def ensure_identity_neo4j(run: Callable[[str], Any], state: GraphState, labels: list[str],
                          first_line: Callable[[BaseException], str]) -> SchemaReport:
    """Neo4j 5 syntax: a uniqueness constraint per label, else an index (see the module docstring).

    ``run(query)`` runs one auto-commit statement and returns its ``ResultSummary``."""
    from neo4j.exceptions import Neo4jError

    report = SchemaReport()
    constraints: bool | None = None  # None: not tried yet
    for label in labels:
        keys = state.schema.identity_keys[label]
        if constraints is not False:
            try:
                counters = run(cypher.identity_constraint(label, keys)).counters
            except Neo4jError as exc:
                if constraints is None and _unsupported(exc):
                    constraints = False
                    report.warnings.append(
                        f"the server refused a composite uniqueness constraint ({first_line(exc)}): identity "
                        "indexes instead; two exporters writing the same scope at once could duplicate nodes")
                else:
                    report.warnings.append(f"no uniqueness constraint on {label} ({first_line(exc)}); "
                                           "an identity index instead")
            else:
                constraints = True
                text = _describe("constraint", label, keys, cypher.constraint_name(label))
                (report.created if counters.constraints_added else report.existing).append(text)
                continue
        try:
            counters = run(cypher.identity_index(label, keys)).counters
        except Neo4jError as exc:
            report.warnings.append(f"could not index {label} either ({first_line(exc)}): MERGE will scan the label")
            continue
        text = _describe("index", label, keys, cypher.index_name(label))
        (report.created if counters.indexes_added else report.existing).append(text)
    if labels:
        report.capability = ("uniqueness constraints" if constraints else
                             "indexes only" if report.created or report.existing else "none")
    return report


def ensure_identity_memgraph(run: Callable[[str], Any], state: GraphState, labels: list[str],
                             first_line: Callable[[BaseException], str]) -> SchemaReport:
    """Memgraph: a uniqueness constraint and a label-property index per label."""
    from neo4j.exceptions import Neo4jError

    report = SchemaReport()
    constrained = 0
    for label in labels:
        keys = state.schema.identity_keys[label]
        for kind, query in (("constraint", cypher.memgraph_constraint(label, keys)),
                            ("index", cypher.memgraph_index(label, keys[0]))):
            text = _describe(kind, label, keys if kind == "constraint" else [keys[0]], scoped=kind == "constraint")
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
        report.capability = ("uniqueness constraints" if constrained == len(labels) else
                             "indexes only" if report.created or report.existing else "none")
    return report
