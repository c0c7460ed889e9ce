"""Export a graph into Neo4j (or any Bolt server speaking Cypher) through the official ``neo4j`` driver.

An export makes its scope (``igg_scope`` on everything it writes, part of every node's identity) mirror
the graph. In order:

1. plan (``igg.export.plan``), before any connection: every label, type and key validated and escaped,
   every value checked (integers beyond 64 bits and NaN are refused, naming the element and property);
2. connect (``igg.export.neo4j.settings``) and identify the server once (Neo4j, ArcadeDB, Memgraph, or
   FalkorDB's Bolt listener);
3. identity constraints, or indexes where the server has none (``igg.export.neo4j.schema``);
4. read the scope and diff it with the graph (``igg.export.neo4j.diff``);
5. delete what the graph no longer has, then merge what is new or changed: ``UNWIND $rows ... MERGE`` in
   batches of thousands of rows. Up to ``SINGLE_TRANSACTION_ROWS`` rows, every statement of the export (the
   marker's removal, the deletes, the merges, the new marker) runs in one transaction: an export that fails
   leaves the scope as it was. A larger export runs a transaction per batch; one that fails part-way has
   removed the scope's marker first, so the next export (delta or full) does not trust the scope: it reads it
   back and repairs what the failure left. The driver retries transient errors; a constraint conflict (a
   concurrent exporter created the same node first) is retried here, ``CONSTRAINT_RETRIES`` times: a race is
   over by then, and a conflict that repeats is no race (an earlier export's constraint, say: step 3 looks
   for those before anything is written, ``igg.export.neo4j.schema.constraint_conflicts``).

``plan_neo4j`` runs steps 1, 2 and 4 only: what an export would create, update and delete, writing nothing.
FalkorDB (``igg.export.falkordb``) takes its own path: small messages, escaped strings, merges only.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

from igg.errors import ExportError
from igg.export import cypher, falkordb
from igg.export.neo4j.diff import ScopeDiff, diff_scope, read_scope
from igg.export.neo4j.schema import (
    Constraint,
    SchemaReport,
    constraint_conflicts,
    ensure_identity_memgraph,
    ensure_identity_neo4j,
    existing_constraints,
)
from igg.export.neo4j.settings import Neo4jSettings, check_uri
from igg.export.plan import Plan, plan_export
from igg.graph.state import GraphState
from igg.record.logs import get_logger

if TYPE_CHECKING:
    from tenacity import RetryCallState

log = get_logger("igg.export.neo4j.bolt")
T = TypeVar("T")

CONNECT_BACKOFF_MAX = 5.0
"""No wait between attempts to reach the server is longer than this many seconds."""
SINGLE_TRANSACTION_ROWS = 50_000
"""Exports that write (and delete) at most this many rows do it in one transaction: all or nothing."""
CONSTRAINT_RETRIES = 4
"""Times a batch refused by a uniqueness constraint is tried again (a concurrent exporter's node is found by
then: each retry may meet another of several exporters racing on one scope, so a few, with growing waits of
0.1 to 0.8 s); a refusal that repeats is reported, never retried until a deadline."""


def _settings(
    uri: str | None,
    auth: tuple[str, str] | None,
    database: str | None,
    env: Mapping[str, str] | None,
    settings: Neo4jSettings | None,
    scope: str,
    batch_size: int,
) -> Neo4jSettings:
    if batch_size < 1:
        raise ExportError(f"batch_size must be at least 1, got {batch_size}")
    if not isinstance(scope, str) or not scope:
        raise ExportError("the export scope must be a non-empty string")
    if settings is None:
        user, password = auth if auth is not None else (None, None)
        settings = Neo4jSettings.from_env(env, uri=uri, username=user, password=password, database=database)
    check_uri(settings.uri)
    return settings


def export_neo4j(
    state: GraphState,
    *,
    uri: str | None = None,
    auth: tuple[str, str] | None = None,
    database: str | None = None,
    batch_size: int = 5000,
    scope: str = "igg",
    env: Mapping[str, str] | None = None,
    settings: Neo4jSettings | None = None,
    create_indexes: bool = True,
    provenance: str | None = None,
    marker: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Make ``scope`` in a Bolt server mirror the graph; returns a summary (server, what was created,
    updated, deleted and left unchanged, the constraints, batches, seconds, warnings).

    Missing ``uri``/``auth``/``database`` come from ``NEO4J_URI``, ``NEO4J_USERNAME``/``NEO4J_PASSWORD``
    and ``NEO4J_DATABASE`` (``env`` defaults to ``os.environ``). ``provenance`` (a session id) stores
    ``igg_session``, ``igg_created``, ``igg_updated`` and ``igg_chunk`` on every node and relationship.
    Raises ``ExportError`` with a one-line message for a bad URI, refused credentials, an unreachable server,
    an unsafe name or a value the driver cannot carry (the last two before connecting).

    The scope's marker (``igg.export.neo4j.sync``) is deleted before the first write, so a delta export never
    trusts a scope this export changed; ``marker`` (digest, session, step, iteration, nodes, edges, at) writes
    a new one once everything else is written.
    """
    settings = _settings(uri, auth, database, env, settings, scope, batch_size)
    started = time.perf_counter()
    timings: dict[str, float] = {}
    clock = [started]

    def lap(phase: str) -> None:
        now = time.perf_counter()
        timings[phase] = round(timings.get(phase, 0.0) + now - clock[0], 3)
        clock[0] = now

    plans = plan_export(state, provenance=provenance, check=True)  # names and values, before any connection
    lap("plan")
    with BoltSession(settings) as bolt:
        lap("connect")
        warnings = bolt.check_constraints(state)  # an earlier export's conflicting constraint stops it here
        report = bolt.ensure_schema(state) if create_indexes else SchemaReport()
        warnings += report.warnings
        plans = [bolt.prepare(plan, warnings) for plan in plans]
        lap("constraints")
        batches, statements, counts = _write(bolt, state, plans, scope, batch_size, marker, lap)
        summary = {
            "format": "neo4j",
            "target": settings.display_uri(),
            "database": settings.database,
            "server": bolt.server,
            "agent": bolt.agent,
            "scope": scope,
            "nodes": state.node_count,
            "edges": state.edge_count,
            "changes": counts,
            "constraints": report.to_dict(),
            "provenance": provenance is not None,
            "batches": batches,
            "statements": statements,
            "seconds": round(time.perf_counter() - started, 3),
            "timings": timings,
            "warnings": warnings,
        }
    log.info(
        "neo4j_exported",
        **{k: v for k, v in summary.items() if k not in ("warnings", "changes", "timings")},
        warnings=len(warnings),
    )
    return summary


def _write(
    bolt: BoltSession,
    state: GraphState,
    plans: list[Plan],
    scope: str,
    batch_size: int,
    marker: Mapping[str, Any] | None,
    lap: Callable[[str], None],
) -> tuple[int, int, dict[str, dict[str, int]] | None]:
    """``export_neo4j``'s writes: (batches, statements, the changes counted by the scope's diff; None where
    the server only merges)."""
    batches = statements = 0
    counts: dict[str, dict[str, int]] | None = None
    if bolt.dialect == "falkordb":  # merges only: reading a whole scope back is not safe there
        for plan in plans:
            for start in range(0, len(plan.rows), batch_size):
                statements += bolt.write_batch(plan, plan.rows[start : start + batch_size], scope)
                batches += 1
            lap("write_edges" if plan.edge else "write_nodes")
    else:
        diff = bolt.diff(plans, state, scope, detail=0)
        counts = diff.counts
        lap("read_scope")
        groups = _statement_groups(diff, bolt.id_function, scope, batch_size)
        if marker is not None:
            bolt.ensure_marker_constraint()  # a schema change: never inside the data's transaction
            groups.append([(cypher.MARKER_SET, {**marker, "scope": scope})])
        batches = sum(len(g) for g in groups[1 : len(groups) - (marker is not None)])
        rows = sum(len(p.get("rows", p.get("ids", ()))) for g in groups for _, p in g)
        if rows <= SINGLE_TRANSACTION_ROWS:  # all or nothing
            statements += bolt.write(
                [step for group in groups for step in group], plan=None, what="the export"
            )
        else:
            for group in groups:
                for step in group:
                    statements += bolt.write([step], plan=None, what="a batch of the export")
        lap("write")
    return batches, statements, counts


def _statement_groups(
    diff: ScopeDiff, id_function: str, scope: str, batch_size: int
) -> list[list[tuple[str, dict[str, Any]]]]:
    """The export's statements in order, grouped: the marker's removal, the deletes, the merges (each batch of
    ``batch_size`` rows one statement)."""
    groups: list[list[tuple[str, dict[str, Any]]]] = [[(cypher.MARKER_DELETE, {"scope": scope})]]
    deletes: list[tuple[str, dict[str, Any]]] = []
    for query, params in diff.delete_statements(id_function):
        key = "rows" if "rows" in params else "ids"
        for start in range(0, len(params[key]), batch_size):
            deletes.append((query, {key: params[key][start : start + batch_size], "scope": scope}))
    groups.append(deletes)
    for plan, rows in diff.writes:
        groups.append(
            [
                (plan.query, {"rows": rows[start : start + batch_size], "scope": scope})
                for start in range(0, len(rows), batch_size)
            ]
        )
    return groups


def plan_neo4j(
    state: GraphState,
    *,
    uri: str | None = None,
    auth: tuple[str, str] | None = None,
    database: str | None = None,
    scope: str = "igg",
    env: Mapping[str, str] | None = None,
    settings: Neo4jSettings | None = None,
    provenance: str | None = None,
    detail: int = 50,
) -> dict[str, Any]:
    """What ``export_neo4j`` with the same arguments would create, update and delete in ``scope``, without
    writing anything (no constraints either). Lists the first ``detail`` changes of each kind; counts all.
    ``conflicts``: the database's constraints that would stop the export (each with its name and the fix)."""
    settings = _settings(uri, auth, database, env, settings, scope, 1)
    started = time.perf_counter()
    plans = plan_export(state, provenance=provenance, check=True)
    with BoltSession(settings) as bolt:
        if bolt.dialect == "falkordb":
            raise ExportError(
                "an export plan needs a Neo4j-compatible server (Neo4j, Aura, ArcadeDB, Memgraph); "
                "FalkorDB's Bolt listener cannot read a scope back safely"
            )
        conflicts, warnings = bolt.constraint_problems(state)
        plans = [bolt.prepare(plan, warnings) for plan in plans]
        diff = bolt.diff(plans, state, scope, detail=detail)
    result = {
        "format": "neo4j",
        "plan": True,
        "target": settings.display_uri(),
        "database": settings.database,
        "server": bolt.server,
        "scope": scope,
        "nodes": state.node_count,
        "edges": state.edge_count,
        **diff.to_dict(),
        "conflicts": conflicts,
        "warnings": warnings,
        "seconds": round(time.perf_counter() - started, 3),
    }
    log.info(
        "neo4j_planned",
        scope=scope,
        server=bolt.server,
        **{f"{k}_{a}": n for k, c in diff.counts.items() for a, n in c.items()},
    )
    return result


class BoltSession:
    """One driver and one session, with the server identified once; a context manager."""

    def __init__(self, settings: Neo4jSettings, *, sleep: Callable[[float], None] = time.sleep) -> None:
        self.settings = settings
        self._sleep = sleep
        """How the waits between attempts to reach the server pass (injectable: tests record them)."""
        self.server = "neo4j"
        """neo4j, arcadedb, memgraph or falkordb."""
        self.dialect = "neo4j"
        """Which Cypher the server takes: neo4j (Neo4j 5 syntax: Neo4j, Aura, ArcadeDB), memgraph,
        falkordb."""
        self.agent = ""
        self._driver: Any = None
        self._session: Any = None

    @property
    def id_function(self) -> str:
        """The Cypher function giving element ids (Memgraph has no ``elementId``)."""
        return "id" if self.dialect == "memgraph" else "elementId"

    def __enter__(self) -> BoltSession:
        import neo4j
        from neo4j import exceptions as nx

        s = self.settings
        auth = (s.username or "", s.password or "") if (s.username or s.password) else None
        try:
            self._driver = neo4j.GraphDatabase.driver(
                s.uri,
                auth=auth,
                connection_timeout=s.connection_timeout,
                connection_acquisition_timeout=s.acquisition_timeout,
                max_transaction_retry_time=s.max_retry_time,
            )
        except (nx.ConfigurationError, ValueError) as exc:
            raise ExportError(f"bad Neo4j URI {s.display_uri()!r}: {_first_line(exc)}") from None
        try:
            self._connect(nx)
            self._session = (
                self._driver.session(database=s.database) if s.database else self._driver.session()
            )
            self._identify(nx)
        except BaseException:
            self.close()
            raise
        log.info("neo4j_connected", uri=s.display_uri(), server=self.server, agent=self.agent)
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the session and the driver."""
        if self._session is not None:
            self._session.close()
            self._session = None
        if self._driver is not None:
            self._driver.close()
            self._driver = None

    def _connect(self, nx: Any) -> None:
        """Reach the server: an unreachable one (refused, reset, a hung handshake) is tried
        ``connect_attempts`` times with exponential backoff from ``connect_backoff`` (a server still starting
        gets a moment, and the retries are debug noise: the one error line says how many there were); refused
        credentials fail at once."""
        import tenacity  # imported here, like the driver: igg's start-up does not pay for it

        s = self.settings
        where = s.display_uri()

        def retry_note(state: RetryCallState) -> None:
            log.debug(
                "neo4j_connect_retry",
                uri=where,
                attempt=state.attempt_number,
                retry_in=round(state.upcoming_sleep, 3),
                error=_failure(state),
            )

        def give_up(state: RetryCallState) -> None:
            raise ExportError(
                f"cannot reach a Bolt server at {where} after {state.attempt_number} attempt(s): "
                f"{_failure(state)}; is it running?"
            )

        retrying = tenacity.Retrying(
            stop=tenacity.stop_after_attempt(max(1, s.connect_attempts)),
            wait=tenacity.wait_exponential(multiplier=s.connect_backoff, max=CONNECT_BACKOFF_MAX),
            retry=tenacity.retry_if_exception_type(
                (nx.ServiceUnavailable, nx.SessionExpired, nx.ConnectionAcquisitionTimeoutError, OSError)
            ),
            sleep=self._sleep,
            before_sleep=retry_note,
            retry_error_callback=give_up,
        )
        try:
            info = retrying(self._driver.get_server_info)
        except nx.AuthError:
            raise ExportError(
                f"the Bolt server at {where} refused the credentials of user "
                f"{s.username or '(none)'!r}; check NEO4J_USERNAME and NEO4J_PASSWORD"
            ) from None
        except nx.Neo4jError as exc:
            raise ExportError(
                f"the Bolt server at {where} rejected the connection (wrong credentials?): {_first_line(exc)}"
            ) from None
        self.agent = info.agent or ""

    def _identify(self, nx: Any) -> None:
        agent = self.agent.lower()
        if "memgraph" in agent:
            self.server = self.dialect = "memgraph"
            return
        try:
            self._session.run(cypher.SERVER_PROBE).consume()
        except nx.Neo4jError:
            self.server = self.dialect = "falkordb"
            return
        self.server = "arcadedb" if "arcadedb" in agent else "neo4j"

    def run(self, query: str, **params: Any) -> list[dict[str, Any]]:
        """Run one auto-commit query and return its records as dicts."""
        return [r.data() for r in self._session.run(query, params)]

    def _consume(self, query: str) -> Any:
        return self._session.run(query).consume()

    def ensure_schema(self, state: GraphState) -> SchemaReport:
        """Identity constraints (or indexes) for every node type that has nodes
        (``igg.export.neo4j.schema``)."""
        labels = [t for t in state.schema.node_type_list if next(iter(state.nodes_of_type(t)), None)]
        if self.dialect == "falkordb":
            report = SchemaReport(capability="indexes only" if labels else "not needed")
            report.warnings = falkordb.ensure_indexes(self.run, state, labels, _first_line)
            return report
        if self.dialect == "memgraph":
            report = ensure_identity_memgraph(self._consume, state, labels, _first_line)
        else:
            report = ensure_identity_neo4j(self._consume, state, labels, _first_line, self.constraints())
        log.info(
            "neo4j_identity_schema",
            capability=report.capability,
            created=len(report.created),
            existing=len(report.existing),
            warnings=len(report.warnings),
        )
        return report

    def constraints(self) -> list[Constraint]:
        """The database's uniqueness constraints (none where the server cannot list them)."""
        from neo4j.exceptions import Neo4jError

        if self.dialect != "neo4j":
            return []
        try:
            return existing_constraints(self.run(cypher.LIST_CONSTRAINTS))
        except Neo4jError as exc:
            log.info("neo4j_constraints_unlisted", error=_first_line(exc))
            return []

    def constraint_problems(self, state: GraphState) -> tuple[list[str], list[str]]:
        """(conflicts, warnings): the database's constraints that would refuse nodes of ``state``, and those
        that could later (``igg.export.neo4j.schema.constraint_conflicts``)."""
        labels = [t for t in state.schema.node_type_list if next(iter(state.nodes_of_type(t)), None)]
        return constraint_conflicts(self.constraints(), state, labels)

    def check_constraints(self, state: GraphState) -> list[str]:
        """Raise ``ExportError`` (nothing written yet) when a constraint of the database would refuse nodes of
        ``state``; returns the warnings about those that could later."""
        conflicts, warnings = self.constraint_problems(state)
        if conflicts:
            raise ExportError(f"nothing exported to {self.settings.display_uri()}: " + "; ".join(conflicts))
        return warnings

    def prepare(self, plan: Plan, warnings: list[str]) -> Plan:
        """The plan with values adapted to what the server stores; a warning per change."""
        if self.dialect == "falkordb":
            warnings += falkordb.nul_warnings(plan, plan.rows)
            return plan
        out = []
        changed = False
        for row in plan.rows:
            props = plan.props(row)
            if any(v.__class__ is list and len({type(x) for x in v}) > 1 for v in props.values()):
                props = {
                    k: (json.dumps(v) if v.__class__ is list and len({type(x) for x in v}) > 1 else v)
                    for k, v in props.items()
                }
                warnings.append(
                    "mixed-type list stored as a JSON string (Neo4j lists are homogeneous): "
                    f"{plan.identity(row)}"
                )
                row = plan.with_props(row, props)
                changed = True
            out.append(row)
        return replace(plan, rows=out) if changed else plan

    def diff(self, plans: list[Plan], state: GraphState, scope: str, detail: int) -> ScopeDiff:
        """Read the scope and compare it with the plans."""
        from neo4j.exceptions import Neo4jError

        try:
            held = read_scope(self.run, state, scope, self.id_function)
        except Neo4jError as exc:
            raise ExportError(
                f"the Bolt server at {self.settings.display_uri()} failed to read scope "
                f"{scope!r}: {_first_line(exc)}"
            ) from None
        return diff_scope(plans, state, held, detail)

    def write_batch(self, plan: Plan, rows: list[Any], scope: str) -> int:
        """Write one batch of merges in one managed transaction; returns the number of statements it took."""
        if self.dialect == "falkordb":
            return self.write(falkordb.statements(plan, rows, scope), plan)
        return self.write([(plan.query, {"rows": rows, "scope": scope})], plan)

    def ensure_marker_constraint(self) -> None:
        """At most one scope marker per scope, where the server takes the constraint (else nothing)."""
        from neo4j.exceptions import Neo4jError

        try:
            self._consume(cypher.MARKER_CONSTRAINT)
        except Neo4jError as exc:
            log.info("neo4j_marker_constraint_refused", error=_first_line(exc))

    def write(
        self, statements: list[tuple[str, dict[str, Any]]], plan: Plan | None, what: str | None = None
    ) -> int:
        """Run statements in one managed transaction (``transaction``)."""

        def work(tx: Any) -> None:
            for query, params in statements:
                tx.run(query, params).consume()

        self.transaction(work, what or (plan.describe() if plan else "deletes"))
        return len(statements)

    def transaction(self, work: Callable[[Any], T], what: str) -> T:
        """Run ``work(tx)`` in one managed transaction and return what it returns. Transient errors are
        retried by the driver; a constraint conflict (another exporter created the same node between this
        MERGE's lookup and its create) is retried here with backoff and jitter, ``CONSTRAINT_RETRIES`` times
        and within ``max_retry_time``: a race is over by then, and a refusal that repeats is reported at once.
        Exceptions ``work`` raises itself roll the transaction back and pass through."""
        import tenacity
        from neo4j.exceptions import ConstraintError, Neo4jError

        def conflict(state: RetryCallState) -> None:
            log.info(
                "neo4j_batch_retry",
                reason="constraint_conflict",
                attempt=state.attempt_number,
                delay=round(state.upcoming_sleep, 3),
                what=what,
            )

        retrying = tenacity.Retrying(
            retry=tenacity.retry_if_exception_type(ConstraintError),
            stop=tenacity.stop_after_attempt(CONSTRAINT_RETRIES + 1)
            | tenacity.stop_after_delay(self.settings.max_retry_time),
            wait=lambda state: min(2.0, 0.05 * 2**state.attempt_number) * (0.5 + random.random()),
            before_sleep=conflict,
            reraise=True,
        )
        try:
            result: T = retrying(self._session.execute_write, work)
            return result
        except ConstraintError as exc:
            attempts = retrying.statistics.get("attempt_number", CONSTRAINT_RETRIES + 1)
            raise ExportError(
                f"the Bolt server at {self.settings.display_uri()} refused {what} "
                f"{attempts} time(s) on a uniqueness constraint, so no concurrent export "
                f"explains it (nothing of it was kept): {_first_line(exc)}"
            ) from None
        except Neo4jError as exc:
            raise ExportError(
                f"the Bolt server at {self.settings.display_uri()} failed a batch: {_first_line(exc)}"
            ) from None


def _failure(state: RetryCallState) -> str:
    """The first line of the error of the attempt tenacity just saw fail."""
    error = state.outcome.exception() if state.outcome is not None else None
    return _first_line(error) if error is not None else "no error"


def _first_line(exc: BaseException) -> str:
    """The most telling line of a driver error (its last line names the cause: refused, timed out...)."""
    text = str(getattr(exc, "message", None) or exc) or type(exc).__name__
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return (lines[-1] if lines else type(exc).__name__)[:300]
