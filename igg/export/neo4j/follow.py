"""Follow a session into Neo4j: every committed step pushed as it lands (``igg.export.neo4j.sync``).

Two ways in:

- ``follow`` (``igg export SESSION --format neo4j --follow``) watches the store: it loads the session once,
  syncs, then for each step committed after that applies the step's mutations to its graph and syncs again
  (a delta of that step). It returns when the session has finished and its last step is in the target, or
  when ``stop()`` says so.
- ``SyncRecorder`` (``igg run ... --export neo4j --sync-each-iteration``) is a ``Recorder`` placed after the
  store's: each iteration it syncs the live graph just committed, and at the end the finished graph.

Either may be killed at any moment: the store records an export only after the target committed it, and a
target whose marker is ahead of the store (a kill between the two) fails the check, so the next sync falls
back to read-and-diff. A run killed and resumed therefore ends with the target equal to the final graph.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from igg.errors import ExportError
from igg.export.neo4j.settings import Neo4jSettings
from igg.export.neo4j.sync import SyncPoint, session_point, sync_neo4j
from igg.graph.journal import Mutation
from igg.graph.state import GraphState
from igg.models.request import Request
from igg.record.logs import get_logger
from igg.record.records import IterationRecord, RunResult
from igg.record.steps import StepRecord
from igg.store.store import SessionStore

log = get_logger("igg.export.neo4j.follow")


def follow(
    store: SessionStore,
    session_id: str,
    *,
    settings: Neo4jSettings,
    scope: str | None = None,
    batch_size: int = 5000,
    provenance: bool = False,
    interval: float = 1.0,
    on_sync: Callable[[dict[str, Any]], None] | None = None,
    stop: Callable[[], bool] = lambda: False,
    sleep: Callable[[float], None] = time.sleep,
) -> int:
    """Sync the session now and after every step committed from now on; returns how many syncs ran. Ends once
    the session is finished and synced, or when ``stop()`` is true (checked every ``interval`` seconds)."""
    point = session_point(store, session_id)
    syncs = 0

    def push() -> None:
        nonlocal syncs
        summary = sync_neo4j(
            point, settings=settings, scope=scope, batch_size=batch_size, provenance=provenance
        )
        syncs += 1
        if on_sync is not None:
            on_sync(summary)

    push()
    while True:
        info = store.session(session_id)
        if info.last_step > point.step:
            for step in range(point.step + 1, info.last_step + 1):
                advance(store, point, step)
                push()
            continue
        if info.status == "finished" or stop():
            return syncs
        sleep(interval)


def advance(store: SessionStore, point: SyncPoint, step: int) -> None:
    """Apply the mutations of the steps after ``point.step`` up to ``step`` to ``point.state``."""
    for _, m in store.mutations(point.session_id, after_step=point.step, upto_step=step):
        point.state.apply_mutation(m)
    point.state.take_journal()
    point.step = step
    point.iteration = store.iteration_at(point.session_id, step)


class SyncRecorder:
    """A ``Recorder`` that syncs a Neo4j scope after every committed iteration and at the end of the run.

    Put it after the store's recorder (``igg.service`` chains the store first). A failed sync during the run
    is logged and counted (``failures``) and the run goes on: the next sync repairs the target
    (read-and-diff); a failed final sync is the run's export error."""

    def __init__(
        self,
        store: SessionStore,
        *,
        settings: Neo4jSettings,
        scope: str | None = None,
        batch_size: int = 5000,
        provenance: bool = False,
    ) -> None:
        self.store = store
        self.settings = settings
        self.scope = scope
        self.batch_size = batch_size
        self.provenance = provenance
        self.summaries: list[dict[str, Any]] = []
        """One summary per sync, in order."""
        self.failures = 0
        self._state: GraphState | None = None
        self._session = ""

    def begin(self, request: Request, state: GraphState, records: list[IterationRecord]) -> None:
        """Remember the live graph and the session."""
        self._state = state
        self._session = request.session_id or ""

    def _sync(self) -> dict[str, Any]:
        assert self._state is not None
        info = self.store.session(self._session)
        point = SyncPoint(
            store=self.store,
            session_id=self._session,
            state=self._state,
            step=info.last_step,
            iteration=self.store.iteration_at(self._session, info.last_step),
        )
        summary = sync_neo4j(
            point,
            settings=self.settings,
            scope=self.scope,
            batch_size=self.batch_size,
            provenance=self.provenance,
        )
        self.summaries.append(summary)
        return summary

    def record(self, record: IterationRecord) -> None:
        """Sync the iteration just committed (a failure is logged; the run goes on)."""
        try:
            self._sync()
        except ExportError as exc:
            self.failures += 1
            log.warning("neo4j_sync_failed", session_id=self._session, error=str(exc))

    def keep(
        self, step: StepRecord, mutations: Sequence[Mutation], state: GraphState, *, snapshot: bool = False
    ) -> None:
        """A review step changes no graph: nothing to sync."""

    def finish(self, result: RunResult) -> None:
        """Sync the finished graph; its summary joins the run's exports (a failure is its export error)."""
        try:
            summary = self._sync()
        except ExportError as exc:
            result.export_error = exc
            result.exports = [*result.exports, {"format": "neo4j", "ok": False, "error": str(exc)}]
            return
        result.exports = [
            *result.exports,
            {**summary, "ok": True, "syncs": len(self.summaries), "failed_syncs": self.failures},
        ]
