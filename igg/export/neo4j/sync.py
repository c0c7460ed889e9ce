"""Keep a Neo4j scope in step with a stored session: delta exports from the journal, with a fallback.

The store records, per session, Bolt target (URI + database) and scope, the last step exported and a digest of
what was written (``igg.store.export_targets``); the scope holds a marker node (``cypher.MARKER_LABEL``) with
the same digest, the session, the step and the counts. The next export of that session:

1. checks, cheaply, that the target still holds what IGG last wrote: the marker is there with the recorded
   digest, and the scope holds the recorded numbers of nodes and relationships;
2. if so, writes only the journal's mutations since that step (``igg.export.neo4j.delta``) in batched
   ``UNWIND`` statements, all in ONE transaction that first locks the marker, checks its digest again and
   ends by writing the new digest: two exporters of one scope never interleave their deltas, and the one that
   finds the marker changed under it (stale) plans again from what the store now records;
3. otherwise (no record, a missing or foreign marker, counts that differ, other export options, a server
   without Neo4j 5 syntax, or ``full``) it falls back to the read-and-diff export (``export_neo4j``), says why
   (``fallback`` in the summary, a log event), and leaves a marker for the next delta.

What the check cannot see: a property changed behind IGG's back with the counts unchanged. ``full=True``
(``igg export --full``) reads and diffs the whole scope whatever the marker says.

The digest chains: the new digest hashes the previous one with the session, the step and the rows written, so
it names exactly one history of writes.
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from igg.errors import ExportError
from igg.export import cypher
from igg.export.neo4j.bolt import BoltSession, export_neo4j, plan_neo4j
from igg.export.neo4j.delta import journal_delta
from igg.export.neo4j.diff import ScopeDiff
from igg.export.neo4j.settings import Neo4jSettings
from igg.graph.state import GraphState
from igg.record.logs import get_logger
from igg.store.export_targets import ExportTarget
from igg.store.store import SessionStore

log = get_logger("igg.export.neo4j.sync")

REPLANS = 3
"""How many times a delta whose marker went stale is planned again before the full export takes over."""


class StaleMarker(ExportError):
    """The scope's marker changed between the plan and the write: another exporter wrote first."""


@dataclass(kw_only=True)
class SyncPoint:
    """What is being exported: a session's graph after one step."""

    store: SessionStore
    session_id: str
    state: GraphState
    step: int
    iteration: int


def session_point(store: SessionStore, session_id: str) -> SyncPoint:
    """The session's graph as it stands (its last step)."""
    info = store.session(session_id)
    _, state, step = store.load_state(session_id, info=info)
    return SyncPoint(
        store=store,
        session_id=session_id,
        state=state,
        step=step,
        iteration=store.iteration_at(session_id, step),
    )


def sync_neo4j(
    point: SyncPoint,
    *,
    settings: Neo4jSettings,
    scope: str | None = None,
    batch_size: int = 5000,
    provenance: bool = False,
    full: bool = False,
) -> dict[str, Any]:
    """Make ``scope`` (default: the session id) mirror the session's graph at ``point``: a delta from the
    journal when the target holds what IGG last wrote, else the read-and-diff export. Returns the export
    summary with ``mode`` (``delta`` or ``full``), ``fallback`` (why not a delta; None for a delta),
    ``since_step``/``step`` and ``replans``; records the export in the store."""
    if batch_size < 1:
        raise ExportError(f"batch_size must be at least 1, got {batch_size}")
    run = _Sync(
        point=point,
        settings=settings,
        scope=scope or point.session_id,
        batch_size=batch_size,
        options={"provenance": provenance},
        prov=point.session_id if provenance else None,
        started=time.perf_counter(),
    )
    targets = point.store.export_targets
    record = targets.get(point.session_id, *run.key)
    reason = _static_reason(record, point, run.options, full)
    with BoltSession(settings) as bolt:
        run.timings["connect"] = round(time.perf_counter() - run.started, 3)
        if reason is None and bolt.dialect != "neo4j":
            reason = f"a delta export needs Neo4j 5 Cypher; {bolt.server} gets the read-and-diff export"
        while reason is None:
            assert record is not None
            checked = time.perf_counter()
            reason = check_target(bolt, run.scope, record)
            run.timings["check"] = round(run.timings.get("check", 0.0) + time.perf_counter() - checked, 3)
            if reason is not None:
                break
            try:
                summary = _write_delta(bolt, point, record, run.scope, run.prov, batch_size)
            except StaleMarker as exc:
                run.replans += 1
                log.info("neo4j_delta_replan", scope=run.scope, attempt=run.replans, reason=str(exc))
                record = targets.get(point.session_id, *run.key)
                reason = _static_reason(record, point, run.options, False)
                if reason is None and run.replans >= REPLANS:
                    reason = f"the scope's marker kept changing under this export ({run.replans} plans)"
                continue
            return run.delta_written(bolt, summary)
    return run.full(reason, record)


@dataclass(kw_only=True)
class _Sync:
    """One ``sync_neo4j``: its target, and what it has timed and re-planned so far."""

    point: SyncPoint
    settings: Neo4jSettings
    scope: str
    batch_size: int
    options: dict[str, Any]
    prov: str | None
    """The session id written as provenance, or None without provenance."""
    started: float
    timings: dict[str, float] = field(default_factory=dict)
    replans: int = 0

    @property
    def key(self) -> tuple[str, str, str]:
        """The export target: (URI as displayed, database, scope)."""
        return (self.settings.display_uri(), self.settings.database or "", self.scope)

    def delta_written(self, bolt: BoltSession, summary: dict[str, Any]) -> dict[str, Any]:
        """The summary of a delta written: the export recorded in the store, its timings and target added."""
        point = self.point
        recorded = time.perf_counter()
        point.store.export_targets.record(_record(point, self.key, summary["digest"], self.options))
        self.timings.update(summary["timings"], record=round(time.perf_counter() - recorded, 3))
        summary.update(
            target=self.settings.display_uri(),
            database=self.settings.database,
            server=bolt.server,
            agent=bolt.agent,
            scope=self.scope,
            replans=self.replans,
            timings=self.timings,
            seconds=round(time.perf_counter() - self.started, 3),
        )
        log.info(
            "neo4j_synced",
            mode="delta",
            scope=self.scope,
            step=point.step,
            since_step=summary["since_step"],
            replans=self.replans,
            seconds=summary["seconds"],
        )
        return summary

    def full(self, reason: str, record: ExportTarget | None) -> dict[str, Any]:
        """The read-and-diff export, when a delta cannot be written (``reason``), recorded in the store."""
        point, scope = self.point, self.scope
        log.info("neo4j_delta_fallback", scope=scope, reason=reason)
        digest = _full_digest(point, scope, self.options)
        marker = _marker(point, digest)
        summary = export_neo4j(
            point.state,
            settings=self.settings,
            scope=scope,
            batch_size=self.batch_size,
            provenance=self.prov,
            marker=marker,
        )
        point.store.export_targets.record(_record(point, self.key, digest, self.options))
        summary["timings"] = {
            **{f"{k}_before_fallback": v for k, v in self.timings.items()},
            **summary["timings"],
        }
        summary.update(
            mode="full",
            fallback=reason,
            since_step=record.step if record else None,
            step=point.step,
            iteration=point.iteration,
            replans=self.replans,
            digest=digest,
            seconds=round(time.perf_counter() - self.started, 3),
        )
        return summary


def plan_sync(
    point: SyncPoint,
    *,
    settings: Neo4jSettings,
    scope: str | None = None,
    provenance: bool = False,
    full: bool = False,
    detail: int = 50,
) -> dict[str, Any]:
    """What ``sync_neo4j`` would write, without writing: the journal delta when the check passes (``mode``
    ``delta``), else the read-and-diff plan (``mode`` ``full`` and the ``fallback`` reason)."""
    scope = scope or point.session_id
    started = time.perf_counter()
    key = (settings.display_uri(), settings.database or "", scope)
    options = {"provenance": provenance}
    prov = point.session_id if provenance else None
    record = point.store.export_targets.get(point.session_id, *key)
    reason = _static_reason(record, point, options, full)
    with BoltSession(settings) as bolt:
        if reason is None and bolt.dialect != "neo4j":
            reason = f"a delta export needs Neo4j 5 Cypher; {bolt.server} gets the read-and-diff export"
        if reason is None:
            assert record is not None
            reason = check_target(bolt, scope, record)
        if reason is None:
            assert record is not None
            diff = journal_delta(point.state, _mutations(point, record.step), provenance=prov, detail=detail)
            return {
                "format": "neo4j",
                "plan": True,
                "mode": "delta",
                "fallback": None,
                "since_step": record.step,
                "step": point.step,
                "target": settings.display_uri(),
                "database": settings.database,
                "server": bolt.server,
                "scope": scope,
                "nodes": point.state.node_count,
                "edges": point.state.edge_count,
                **diff.to_dict(),
                "warnings": [],
                "seconds": round(time.perf_counter() - started, 3),
            }
    plan = plan_neo4j(point.state, settings=settings, scope=scope, provenance=prov, detail=detail)
    plan.update(mode="full", fallback=reason, since_step=record.step if record else None, step=point.step)
    return plan


def check_target(bolt: BoltSession, scope: str, record: ExportTarget) -> str | None:
    """None when the scope still holds what IGG last wrote (marker digest and counts), else why not."""
    markers = bolt.run(cypher.MARKER_READ, scope=scope)
    if not markers:
        return (
            "the scope has no IGG marker: it was emptied, or its last export did not finish, or an export "
            "of a saved document rewrote it"
        )
    if len(markers) > 1:
        return f"the scope has {len(markers)} IGG markers"
    m = markers[0]
    if m["digest"] != record.digest:
        return (
            f"the scope's marker names another export (session {m['session']!r}, step {m['step']}): another "
            "session or exporter wrote this scope since"
        )
    nodes = bolt.run(cypher.COUNT_NODES, scope=scope)[0]["n"]
    edges = bolt.run(cypher.COUNT_EDGES, scope=scope)[0]["n"]
    if (nodes, edges) != (record.nodes, record.edges):
        return (
            f"the scope holds {nodes} nodes and {edges} relationships where IGG left {record.nodes} and "
            f"{record.edges}: it was changed behind IGG's back"
        )
    return None


def write_delta(
    bolt: BoltSession, diff: ScopeDiff, scope: str, *, expected: str, marker: dict[str, Any], batch_size: int
) -> int:
    """Write a delta and the new marker in ONE transaction that starts by locking the marker and checking it
    still holds ``expected``; raises ``StaleMarker`` (nothing written) when it does not. Returns the number of
    statements."""
    token = uuid.uuid4().hex
    statements: list[tuple[str, dict[str, Any]]] = [(cypher.MARKER_LOCK, {"scope": scope, "token": token})]
    for query, params in diff.delete_statements(bolt.id_function):
        name = "rows" if "rows" in params else "ids"
        for start in range(0, len(params[name]), batch_size):
            statements.append((query, {name: params[name][start : start + batch_size], "scope": scope}))
    for plan, rows in diff.writes:
        for start in range(0, len(rows), batch_size):
            statements.append((plan.query, {"rows": rows[start : start + batch_size], "scope": scope}))
    statements.append((cypher.MARKER_SET, {**marker, "scope": scope}))

    def work(tx: Any) -> int:
        tx.run(*statements[0]).consume()
        found = [r["digest"] for r in tx.run(cypher.MARKER_READ, scope=scope)]
        if found != [expected]:
            raise StaleMarker(
                f"the scope's marker holds {found[0][:12] if found else 'nothing'}, not the "
                f"{expected[:12]} this delta was planned against"
            )
        for query, params in statements[1:]:
            tx.run(query, params).consume()
        return len(statements)

    return bolt.transaction(work, "delta")


def _write_delta(
    bolt: BoltSession, point: SyncPoint, record: ExportTarget, scope: str, prov: str | None, batch_size: int
) -> dict[str, Any]:
    started = time.perf_counter()
    if record.step == point.step:  # nothing committed since: nothing to write, the marker stays
        diff = ScopeDiff()
        diff.counts["nodes"]["unchanged"], diff.counts["edges"]["unchanged"] = record.nodes, record.edges
    else:
        diff = journal_delta(point.state, _mutations(point, record.step), provenance=prov)
    warnings: list[str] = []
    writes = []
    for plan, _ in diff.writes:
        ready = bolt.prepare(plan, warnings)
        writes.append((ready, ready.rows))
    diff.writes = writes
    planned = time.perf_counter()
    digest = record.digest if record.step == point.step else _chain(record.digest, point, diff)
    statements = 0
    if record.step != point.step:
        statements = write_delta(
            bolt, diff, scope, expected=record.digest, marker=_marker(point, digest), batch_size=batch_size
        )
    return {
        "format": "neo4j",
        "mode": "delta",
        "fallback": None,
        "since_step": record.step,
        "step": point.step,
        "iteration": point.iteration,
        "nodes": point.state.node_count,
        "edges": point.state.edge_count,
        "changes": diff.counts,
        "statements": statements,
        "batches": 1 if statements else 0,
        "digest": digest,
        "provenance": prov is not None,
        "constraints": {},
        "warnings": warnings,
        "timings": {"plan": round(planned - started, 3), "write": round(time.perf_counter() - planned, 3)},
    }


def _static_reason(
    record: ExportTarget | None, point: SyncPoint, options: dict[str, Any], full: bool
) -> str | None:
    """Why a delta is impossible before looking at the database (None: it may be possible)."""
    if full:
        return "a full export was asked for"
    if record is None:
        return "no export of this session to this scope is recorded (a first export)"
    if record.options != options:
        return f"the export options changed ({record.options} then, {options} now)"
    if record.step > point.step:
        return f"the scope holds step {record.step}, later than step {point.step} exported now"
    return None


def _mutations(point: SyncPoint, after_step: int) -> list[Any]:
    return [
        m for _, m in point.store.mutations(point.session_id, after_step=after_step, upto_step=point.step)
    ]


def _chain(previous: str, point: SyncPoint, diff: ScopeDiff) -> str:
    """The digest after a delta: the previous digest, the session and step, and the rows written."""
    h = hashlib.sha256(f"{previous}|{point.session_id}|{point.step}|".encode())
    for query, params in diff.delete_statements():
        h.update(query.encode())
        h.update(json.dumps(params, sort_keys=True, default=str).encode())
    for plan, rows in diff.writes:
        h.update(plan.query.encode())
        h.update(json.dumps(rows, sort_keys=True, default=str).encode())
    return h.hexdigest()


def _full_digest(point: SyncPoint, scope: str, options: dict[str, Any]) -> str:
    text = f"full|{point.session_id}|{point.step}|{scope}|{json.dumps(options, sort_keys=True)}"
    return hashlib.sha256(text.encode()).hexdigest()


def _marker(point: SyncPoint, digest: str) -> dict[str, Any]:
    return {
        "digest": digest,
        "session": point.session_id,
        "step": point.step,
        "iteration": point.iteration,
        "nodes": point.state.node_count,
        "edges": point.state.edge_count,
        "at": time.time(),
    }


def _record(
    point: SyncPoint, key: tuple[str, str, str], digest: str, options: dict[str, Any]
) -> ExportTarget:
    return ExportTarget(
        session_id=point.session_id,
        target=key[0],
        database=key[1],
        scope=key[2],
        step=point.step,
        iteration=point.iteration,
        digest=digest,
        nodes=point.state.node_count,
        edges=point.state.edge_count,
        options=options,
    )
