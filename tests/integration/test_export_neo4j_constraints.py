"""A database an earlier export wrote with other identity keys for a label (issue 46): the conflicting
constraint is found by ``--plan`` and before anything is written, named with its fix; a refusal that repeats
is not retried for half a minute; an export that fails leaves its scope as it was. Against the suite's real
Bolt server (ArcadeDB, or the Neo4j at NEO4J_URI), each test on labels of its own (constraints are
database-wide)."""

from __future__ import annotations

import uuid

import pytest
from structlog.testing import capture_logs

from igg.errors import ExportError
from igg.export import export_neo4j
from igg.export.neo4j.bolt import CONSTRAINT_RETRIES, BoltSession, plan_neo4j
from igg.graph.state import GraphState
from igg.models.schema import Schema
from tests.support.bolt import BoltServer


def graph(label: str, identity: list[str], *nodes: dict[str, str]) -> GraphState:
    schema = Schema.model_validate(
        {"node_types": [label], "edge_types": ["USES"], "identity_keys": {label: identity}}
    )
    state = GraphState(schema.compile())
    for i, props in enumerate(nodes):
        state.add_node(label, props, f"n{i}")
    return state


@pytest.fixture
def label(bolt_server: BoltServer):
    """A label no other test writes, and the constraints made on it dropped afterwards."""
    name = f"Part{uuid.uuid4().hex[:8]}"
    yield name
    with BoltSession(bolt_server.settings()) as bolt:
        for row in bolt.run("SHOW CONSTRAINTS"):
            if name in (row.get("labelsOrTypes") or []):
                bolt.run(f"DROP CONSTRAINT {row['name']}")
        bolt.run(f"MATCH (n:{name}) DETACH DELETE n")


def count(server: BoltServer, label: str, scope: str) -> int:
    with BoltSession(server.settings()) as bolt:
        return int(
            bolt.run(f"MATCH (n:{label}) WHERE n.igg_scope = $s RETURN count(n) AS c", s=scope)[0]["c"]
        )


def test_a_constraint_of_another_identity_is_found_before_anything_is_written(
    bolt_server: BoltServer, label: str
) -> None:
    settings = bolt_server.settings()
    export_neo4j(graph(label, ["name"], {"name": "Arion"}), settings=settings, scope="by-name")
    twins = graph(label, ["package", "name"], {"package": "a", "name": "X"}, {"package": "b", "name": "X"})
    plan = plan_neo4j(twins, settings=settings, scope="by-package")
    (conflict,) = plan["conflicts"]
    assert f"constraint igg_{label}_unique ON :{label}(igg_scope, name)" in conflict
    assert f"DROP CONSTRAINT igg_{label}_unique" in conflict and "2 such node(s)" in conflict
    with capture_logs() as logs, pytest.raises(ExportError) as failed:
        export_neo4j(twins, settings=settings, scope="by-package")
    # found before writing: no batch was sent, so none was refused and retried
    assert [e for e in logs if e["event"] == "neo4j_batch_retry"] == []
    assert "nothing exported" in str(failed.value) and f"igg_{label}_unique" in str(failed.value)
    assert count(bolt_server, label, "by-package") == 0
    # the same identity without twins goes through, warned; its own constraint gets a name of its own
    single = graph(label, ["package", "name"], {"package": "a", "name": "Y"})
    summary = export_neo4j(single, settings=settings, scope="by-package")
    assert any(f"igg_{label}_unique" in w and "has none yet" in w for w in summary["warnings"])
    made = summary["constraints"]["created"] + summary["constraints"]["existing"]
    assert made == [f"constraint igg_{label}_package_name_unique ON :{label}(igg_scope, package, name)"]
    again = export_neo4j(single, settings=settings, scope="by-package")
    assert again["constraints"]["existing"] == made  # found again under its name, not made twice


def test_a_constraint_on_other_properties_is_found_before_anything_is_written(
    bolt_server: BoltServer, label: str
) -> None:
    """A constraint the identity does not imply (a code map's methods, identified by owner and signature,
    sharing a name that an earlier export's identity made unique) is found in planning when the graph holds
    nodes it refuses."""
    settings = bolt_server.settings()
    export_neo4j(graph(label, ["name"], {"name": "run"}), settings=settings, scope="by-name")
    methods = graph(
        label,
        ["owner", "signature"],
        {"owner": "A", "signature": "run()", "name": "run"},
        {"owner": "B", "signature": "run()", "name": "run"},
    )
    with capture_logs() as logs, pytest.raises(ExportError) as failed:
        export_neo4j(methods, settings=settings, scope="methods")
    assert [e for e in logs if e["event"] == "neo4j_batch_retry"] == []
    assert f"igg_{label}_unique ON :{label}(igg_scope, name)" in str(failed.value)
    assert "2 such node(s)" in str(failed.value) and count(bolt_server, label, "methods") == 0


def test_a_failed_export_leaves_the_scope_as_it_was(bolt_server: BoltServer, label: str) -> None:
    settings = bolt_server.settings()
    before = graph(label, ["name"], {"name": "A", "code": "1"}, {"name": "B", "code": "2"})
    export_neo4j(before, settings=settings, scope="kept")
    with BoltSession(settings) as bolt:  # a refusal IGG cannot foresee: by a node of another scope
        bolt.run(f"CREATE CONSTRAINT {label}_code IF NOT EXISTS FOR (n:{label}) REQUIRE n.code IS UNIQUE")
    export_neo4j(graph(label, ["name"], {"name": "Z", "code": "3"}), settings=settings, scope="elsewhere")
    after = graph(label, ["name"], {"name": "A", "code": "1"}, {"name": "C", "code": "3"})
    # no deadline stops the retries here: a refusal that repeats is reported after CONSTRAINT_RETRIES retries
    patient = bolt_server.settings(max_retry_time=3600.0)
    with capture_logs() as logs, pytest.raises(ExportError) as failed:
        export_neo4j(after, settings=patient, scope="kept", batch_size=1)
    retries = [e for e in logs if e["event"] == "neo4j_batch_retry"]
    assert len(retries) == CONSTRAINT_RETRIES, retries
    assert f"{CONSTRAINT_RETRIES + 1} time(s) on a uniqueness constraint" in str(failed.value)
    assert "uniqueness constraint" in str(failed.value) and "nothing of it was kept" in str(failed.value)
    with BoltSession(settings) as bolt:  # B not deleted, C not created: the scope as it was
        names = sorted(
            r["n"] for r in bolt.run(f"MATCH (n:{label}) WHERE n.igg_scope = 'kept' RETURN n.name AS n")
        )
    assert names == ["A", "B"]
