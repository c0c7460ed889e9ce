"""The session store: sessions, their committed steps and mutations, snapshots, and loading a graph back.

A *step* is one committed unit of a session: an ``iteration`` (its record and the mutations it applied), an
``undo`` (the inverse mutations that rolled the graph back), or ``finalize`` (what the end of the run
changed, e.g. pruning). Each step is written in one transaction together with the session row, so after a
crash the store holds whole steps only: a resumed run starts after the last one, and no iteration is applied
twice (a unique index forbids a second row for the same iteration) or lost.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from igg.errors import SessionBusy, SessionError, SessionExists, SessionRefused
from igg.graph.collector import collector_paused
from igg.graph.journal import Mutation, NodesMerged, read_mutation
from igg.graph.partial import PartialState
from igg.graph.state import GraphState
from igg.io.files import protect
from igg.models.request import Request
from igg.persistence import SessionInfo, rfc3339
from igg.request.load import build_state, load_request
from igg.store import catalog, codec
from igg.store.backends import open_database
from igg.store.catalog import owner_alive
from igg.store.commit import prepare_step
from igg.store.export_targets import ExportTargets
from igg.store.location import StoreArg, StoreLocation, store_file
from igg.store.sql import Connection


@dataclass(kw_only=True)
class StepInfo:
    """One committed step: its counts, and the iteration record (``record``) as stored."""

    step: int
    kind: str
    """``iteration``, ``undo`` or ``finalize``."""
    iteration: int | None
    chunk: str | None
    chunk_cursor: int | None
    proposed: int
    accepted: int
    rejected: int
    rejected_by_code: dict[str, int]
    tokens: int
    ms: float
    nodes: int
    edges: int
    next_node: int
    next_edge: int
    mutation_count: int
    record: dict[str, Any] = field(default_factory=dict)
    created_at: float = 0.0


_WITHOUT_CONTEXT = {
    "sqlite": "json_remove(request, '$.context_data')",
    "postgresql": "(request::jsonb - 'context_data')::text",
}
"""A stored request without its ``context_data``, as each database writes it (``SessionStore.request``)."""
_MOST_ELEMENTS = 30_000
"""Most elements ``SessionStore.load_elements`` reads (by one statement: SQLite takes 32,766 parameters)."""


class SessionStore:
    """Sessions in one SQLite file (``igg.store.db``) or one PostgreSQL database (``igg.store.postgres``), as
    ``path`` names it (``igg.store.location.resolve_store_path``); safe to share between threads."""

    def __init__(self, path: StoreArg | None = None, *, synchronous: str = "FULL") -> None:
        self.db = open_database(path, synchronous=synchronous)
        self.export_targets = ExportTargets(self.db)
        """Where each session was exported to (``igg.store.export_targets``)."""
        file = store_file(self.db.location)
        if file is not None:
            protect(file)  # no export of this process may overwrite the store (igg.io.files)

    @property
    def location(self) -> StoreLocation:
        """Where the store is: its SQLite file, or its PostgreSQL URL (whose text hides the password)."""
        return self.db.location

    @property
    def path(self) -> StoreLocation:
        """The store's location (``location``): a file path, or a ``PostgresURL``."""
        return self.db.location

    @property
    def file(self) -> Path | None:
        """The store's SQLite file (None for a PostgreSQL store)."""
        return store_file(self.db.location)

    def close(self) -> None:
        """Close the store's connections."""
        self.db.close()

    # ---- writing -------------------------------------------------------------------------------------
    def create_session(
        self,
        request: Request,
        *,
        agent: str | None = None,
        options: dict[str, Any] | None = None,
        owner: str | None = None,
        force: bool = False,
    ) -> SessionInfo:
        """Register a new session. An existing session of the same id is an error unless ``force``."""
        session_id = request.session_id
        if not session_id:
            raise SessionError("the request has no session_id; load it with load_request, which assigns one")
        self.db.write(
            lambda conn: self.insert_session(
                conn, request, agent=agent, options=options, owner=owner, force=force
            )
        )
        return self.session(session_id)

    def insert_session(
        self,
        conn: Connection,
        request: Request,
        *,
        agent: str | None = None,
        options: dict[str, Any] | None = None,
        owner: str | None = None,
        force: bool = False,
    ) -> None:
        """``create_session``'s write, inside the caller's transaction ``conn`` (a fork writes a session and
        its steps in one)."""
        session_id = request.session_id or ""
        row = conn.execute(
            "SELECT status, last_iteration, owner, agent FROM sessions WHERE session_id = ?", (session_id,)
        ).fetchone()
        if row is not None:
            if not force:
                status = catalog.status_of(row[0], row[2], row[3])
                what = (
                    f"inspect it with `igg show {session_id}`"
                    if status == "finished"
                    else f"continue it with `igg resume {session_id}`"
                )
                raise SessionExists(
                    f"session {session_id!r} already exists in {self.path} ({status}, {row[1]} iterations); "
                    f"{what}, replace it with --force, or give the request another session_id",
                    session_id=session_id,
                )
            if row[0] == "running" and owner_alive(row[2]):
                raise SessionBusy(
                    f"session {session_id!r} is being written by a live process ({row[2]}); "
                    "stop it before replacing the session",
                    session_id=session_id,
                )
            _delete(conn, session_id)
        now = time.time()
        conn.execute(
            "INSERT INTO sessions (session_id, status, goal, request, agent, options, created_at, updated_at,"
            " owner, nodes, edges) VALUES (?, 'running', ?, '', ?, ?, ?, ?, ?, 0, 0)",
            (
                session_id,
                request.goal_prompt,
                agent,
                codec.dumps(options or {}),
                now,
                now,
                owner,
            ),
        )
        request_json = codec.request_to_json(request)  # in a table of its own: see igg.store.schema
        conn.execute("INSERT INTO requests (session_id, request) VALUES (?, ?)", (session_id, request_json))

    def claim(self, session_id: str, owner: str, *, force: bool = False) -> SessionInfo:
        """Make ``owner`` the writer of an unfinished session (resume). Refuses a finished session, and one
        whose writer is still alive unless ``force``."""

        def work(conn: Connection) -> None:
            row = conn.execute(
                "SELECT status, owner, stop_reason FROM sessions WHERE session_id = ?", (session_id,)
            ).fetchone()
            if row is None:
                raise self._unknown(conn, session_id)
            if row[0] == "finished":
                raise SessionRefused(
                    f"session {session_id!r} already finished ({row[2]}); nothing to resume "
                    f"(inspect it with `igg show {session_id}`)",
                    session_id=session_id,
                )
            if owner_alive(row[1]) and row[1] != owner and not force:
                raise SessionBusy(
                    f"session {session_id!r} is still being run by a live process ({row[1]}); "
                    "resume it after that process ends, or pass --force",
                    session_id=session_id,
                )
            conn.execute(
                "UPDATE sessions SET owner = ?, updated_at = ? WHERE session_id = ?",
                (owner, time.time(), session_id),
            )

        self.db.write(work)
        return self.session(session_id)

    def release(self, session_id: str, owner: str) -> None:
        """Stop being the writer of an unfinished session (a run waiting for review), so another process (the
        reviewer, a resume) may claim it at once; does nothing when ``owner`` no longer writes it."""
        self.db.write(
            lambda conn: conn.execute(
                "UPDATE sessions SET owner = NULL WHERE session_id = ? AND owner = ?", (session_id, owner)
            )
        )

    def commit_step(
        self,
        session_id: str,
        *,
        kind: str,
        record: dict[str, Any],
        mutations: Sequence[Mutation],
        state: GraphState,
        owner: str | None = None,
        chunk_cursor: int | None = None,
        snapshot: bool = False,
        finish: dict[str, Any] | None = None,
        record_json: str | None = None,
        conn: Connection | None = None,
        after: int | None = None,
    ) -> int:
        """Append one step (record + mutations, optionally a snapshot, optionally finishing the session) in
        ONE transaction; returns its step number. ``owner``, when given, must still own the session.
        ``after``: a shared writer's check instead (several servers on one store): the session's last step
        must still be ``after`` (else ``SessionConflict``: load it again and retry), and no live process other
        than ``owner`` may be running it (else ``SessionBusy``). ``record_json``: ``codec.dumps(record)`` when
        the caller has it already; ``conn``: write inside the caller's transaction (a fork) instead of one of
        its own."""
        step = prepare_step(
            session_id,
            kind=kind,
            record=record,
            mutations=mutations,
            state=state,
            owner=owner,
            chunk_cursor=chunk_cursor,
            snapshot=snapshot,
            finish=finish,
            record_json=record_json,
            after=after,
            where=self.path,
        )
        return step.write(conn) if conn is not None else self.db.write(step.write)

    def delete_session(self, session_id: str) -> None:
        """Remove a session and everything stored for it."""
        self.db.write(lambda conn: _delete(conn, session_id))

    # ---- reading -------------------------------------------------------------------------------------
    def sessions(self) -> list[SessionInfo]:
        """Every session, most recently updated first."""
        return catalog.sessions(self.db)

    def session(self, session_id: str) -> SessionInfo:
        """One session; ``SessionError`` naming the known sessions when it is not in the store."""
        return catalog.session(self.db, session_id)

    def request(self, session_id: str, *, context: bool = True) -> Request:
        """The request the session was started with. ``context=False``: without its ``context_data`` when its
        grounding is off (nothing then reads the context to change the graph): what an update of a code map
        reads, whose request holds every file of the tree (68 MB at 50,000 files: 0.25 s to read)."""
        column = "request" if context else _WITHOUT_CONTEXT[self.db.dialect]
        text = self.db.read(
            lambda c: c.execute(
                f"SELECT {column} FROM requests WHERE session_id = ?", (session_id,)
            ).fetchone()
        )
        if text is None:
            self.session(session_id)  # raises the helpful error
        data = codec.loads(text[0])
        if not context and (data.get("config") or {}).get("grounding", "off") != "off":
            return self.request(session_id)
        name = f"stored request of session {session_id!r}"  # checked when it began (documents or not)
        return load_request(data, source_name=name, documents=True)

    def steps(self, session_id: str, *, with_records: bool = True, after_step: int = 0) -> list[StepInfo]:
        """The committed steps of a session (after ``after_step``), in order."""
        self.session(session_id)
        cols = _STEP_COLS + (", record" if with_records else "")
        rows = self.db.read(
            lambda c: c.execute(
                f"SELECT {cols} FROM steps WHERE session_id = ? AND step > ? ORDER BY step",
                (session_id, after_step),
            ).fetchall()
        )
        return [_step_info(r) for r in rows]

    def last_step(self, session_id: str) -> int | None:
        """The number of the session's last stored step (None: no such session): one small read, which changes
        whenever any process commits a step of the session."""
        row = self.db.read(
            lambda c: c.execute(
                "SELECT last_step FROM sessions WHERE session_id = ?", (session_id,)
            ).fetchone(),
            statement=True,
        )
        return int(row[0]) if row is not None else None

    def review_state(self, session_id: str) -> tuple[dict[str, Any] | None, int]:
        """The session's last step's record when it is a ``review`` step (a plan waiting, or a rejection), and
        how many plans the session has had (two small reads)."""

        def work(c: Connection) -> tuple[dict[str, Any] | None, int]:
            last = c.execute(
                "SELECT kind, record FROM steps WHERE session_id = ? ORDER BY step DESC LIMIT 1",
                (session_id,),
            ).fetchone()
            plans = c.execute(PENDING_PLANS, (session_id,)).fetchone()[0]
            record = codec.loads(last[1]) if last is not None and last[0] == "review" else None
            return record, int(plans)

        return self.db.read(work)

    def mutations(
        self, session_id: str, *, after_step: int = 0, upto_step: int | None = None
    ) -> Iterator[tuple[int, Mutation]]:
        """(step, mutation) of the steps in (after_step, upto_step], in the order they were applied."""
        upto = upto_step if upto_step is not None else 1 << 62
        rows = self.db.read(
            lambda c: c.execute(
                "SELECT step, data FROM mutations WHERE session_id = ? AND step > ? AND step <= ? ORDER BY"
                " step, seq",
                (session_id, after_step, upto),
            ).fetchall()
        )
        for step, data in rows:
            yield step, _mutation(session_id, step, data)

    def element_history(self, session_id: str, elements: list[str]) -> list[tuple[int, Mutation]]:
        """(step, mutation) of every mutation that touched one of these node/edge ids, in order (a merge is
        filed under the node merged away, and also found by the node it went into and the edges it moved)."""
        marks = ",".join("?" * len(elements))
        wanted = set(elements)

        def work(c: Connection) -> list[tuple[int, int, str]]:
            rows = c.execute(
                f"SELECT step, seq, data FROM mutations WHERE session_id = ? AND element IN ({marks})",
                (session_id, *elements),
            ).fetchall()
            merges = c.execute(
                "SELECT step, seq, data FROM mutations WHERE session_id = ? AND op = 'merge_nodes'"
                " AND element NOT IN (" + marks + ")",
                (session_id, *elements),
            ).fetchall()
            return rows + merges

        found = []
        for step, seq, data in self.db.read(work):
            m = _mutation(session_id, step, data)
            if m.id in wanted or not wanted.isdisjoint(m.touches()):
                found.append((step, seq, m))
        found.sort(key=lambda row: (row[0], row[1]))
        return [(step, m) for step, _, m in found]

    def added_nodes(self, session_id: str) -> Iterator[tuple[str, Mutation]]:
        """(node id, mutation) of every node ever added, updated or merged into in the session (to find nodes
        by name): the node id is the one whose properties the mutation set (``into`` for a merge)."""
        rows = self.db.read(
            lambda c: c.execute(
                "SELECT element, data FROM mutations WHERE session_id = ? AND op IN ('add_node',"
                " 'update_node', 'merge_nodes') ORDER BY step, seq",
                (session_id,),
            ).fetchall()
        )
        for element, data in rows:
            m = _mutation(session_id, None, data)
            yield (m.into if isinstance(m, NodesMerged) else element), m

    def snapshot(self, session_id: str, *, upto_step: int | None = None) -> tuple[int, dict[str, Any]] | None:
        """The latest snapshot at or before ``upto_step``: (step, snapshot), or None."""
        upto = upto_step if upto_step is not None else 1 << 62
        row = self.db.read(
            lambda c: c.execute(
                "SELECT step, document FROM snapshots WHERE session_id = ? AND step <= ? ORDER BY step DESC"
                " LIMIT 1",
                (session_id, upto),
            ).fetchone()
        )
        return (row[0], codec.read_snapshot(row[1])) if row else None

    def last_record(self, session_id: str, kind: str = "iteration") -> dict[str, Any] | None:
        """The record of the last step of this kind (one row, not every step), or None."""
        row = self.db.read(
            lambda c: c.execute(
                "SELECT record FROM steps WHERE session_id = ? AND kind = ? ORDER BY step DESC LIMIT 1",
                (session_id, kind),
            ).fetchone()
        )
        return json.loads(row[0]) if row else None

    def snapshot_steps(self, session_id: str) -> list[int]:
        """The steps that have a snapshot."""
        rows = self.db.read(
            lambda c: c.execute(
                "SELECT step FROM snapshots WHERE session_id = ? ORDER BY step", (session_id,)
            ).fetchall()
        )
        return [r[0] for r in rows]

    @collector_paused()  # a loaded graph makes no cycles: the collector's passes over it doubled the load
    def load_state(
        self,
        session_id: str,
        *,
        upto_step: int | None = None,
        use_snapshot: bool = True,
        request: Request | None = None,
        info: SessionInfo | None = None,
    ) -> tuple[Request, GraphState, int]:
        """The graph after step ``upto_step`` (default: the last): (request, state, step).

        Starts from the seed (or the latest snapshot at or before that step, with ``use_snapshot``) and
        re-applies the stored mutations after it; the id counters are those of the step. ``request`` and
        ``info``, when the caller has them already, spare reading (and validating) them again; the seed graph
        is built only when no snapshot is used.
        """
        request = request or self.request(session_id)
        info = info or self.session(session_id)
        step = info.last_step if upto_step is None else min(upto_step, info.last_step)
        if step < 0:
            raise SessionRefused(f"step {upto_step} does not exist; steps are numbered from 0")
        start = 0
        snap = self.snapshot(session_id, upto_step=step) if use_snapshot else None
        if snap is not None:
            start = snap[0]
            state, _ = build_state(request.model_copy(update={"seed_data": None}))
            codec.state_from_snapshot(state, snap[1])
        else:
            state, problems = build_state(request)
            if problems:
                raise SessionError(
                    f"the stored request of session {session_id!r} no longer builds: {problems[0]}"
                )
        for _, m in self.mutations(session_id, after_step=start, upto_step=step):
            state.apply_mutation(m)
        state.take_journal()
        if step > 0:
            counters = self.db.read(
                lambda c: c.execute(
                    "SELECT next_node, next_edge FROM steps WHERE session_id = ? AND step = ?",
                    (session_id, step),
                ).fetchone()
            )
            state.restore_id_counters(*counters)
        return request, state, step

    def load_elements(
        self, session_id: str, elements: Collection[str], *, request: Request, info: SessionInfo
    ) -> PartialState | None:
        """The nodes and edges ``elements`` of the session's graph after its last step (``info.last_step``),
        counted with the rest of the graph (``igg.graph.partial``), read from their own mutations alone (one
        indexed read) with the step's id counters; None when one of them is not in the graph, a mutation is
        not a node's or an edge's own (added, updated, deleted), or the request has a seed graph (whose nodes
        have no mutations), or past ``_MOST_ELEMENTS``. An edge's ends must be among ``elements``."""
        if request.seed_data is not None or not elements:
            return None
        wanted = sorted(set(elements))
        if len(wanted) > _MOST_ELEMENTS:
            return None
        marks = ",".join("?" * len(wanted))
        step = info.last_step

        # without statistics, SQLite reads a list of elements by scanning the session's steps, every row of a
        # large graph (0.6 s at 50,000 files); PostgreSQL's planner has its statistics
        by_element = " INDEXED BY mutations_by_element" if self.db.dialect == "sqlite" else ""

        def work(c: Connection) -> tuple[list[tuple[int, str]], Any]:
            rows = c.execute(
                f"SELECT step, data FROM mutations{by_element} WHERE session_id = ? AND step <= ?"
                f" AND element IN ({marks}) ORDER BY step, seq",
                (session_id, step, *wanted),
            ).fetchall()
            counters = c.execute(
                "SELECT next_node, next_edge FROM steps WHERE session_id = ? AND step = ?", (session_id, step)
            ).fetchone()
            return rows, counters

        rows, counters = self.db.read(work)
        if counters is None:
            return None
        mutations = (_mutation(session_id, at, data) for at, data in rows)
        schema = request.config.schema_.compile()
        return PartialState.of(schema, mutations, wanted, counters=counters, whole=(info.nodes, info.edges))

    def iteration_at(self, session_id: str, step: int) -> int:
        """The iteration the session had reached at ``step`` (0 before the first)."""
        row = self.db.read(
            lambda c: c.execute(
                "SELECT max(iteration) FROM steps WHERE session_id = ? AND step <= ?", (session_id, step)
            ).fetchone()
        )
        return int(row[0] or 0) if row else 0

    def step_known_at(self, session_id: str, at: float) -> int:
        """The last step committed at or before ``at`` (seconds since the epoch), to the millisecond (as ``igg
        explain`` prints when IGG was told): what the journal held then."""
        info = self.session(session_id)
        before = (math.floor(at * 1000) + 1) / 1000  # anything committed within at's millisecond counts
        row = self.db.read(
            lambda c: c.execute(
                "SELECT max(step) FROM steps WHERE session_id = ? AND created_at < ?", (session_id, before)
            ).fetchone()
        )
        if row is None or row[0] is None:
            if before > info.created_at:
                return 0
            raise SessionRefused(
                f"session {session_id!r} did not exist yet at that time: it started at "
                f"{rfc3339(info.created_at)}"
            )
        return int(row[0])

    def step_of_iteration(self, session_id: str, iteration: int) -> int:
        """The step that committed ``iteration`` (0 for iteration 0: the start)."""
        if iteration == 0:
            return 0
        row = self.db.read(
            lambda c: c.execute(
                "SELECT step FROM steps WHERE session_id = ? AND kind IN ('iteration', 'update') AND"
                " iteration = ?",
                (session_id, iteration),
            ).fetchone()
        )
        if row is None:
            done = self.session(session_id).last_iteration
            raise SessionRefused(
                f"session {session_id!r} has no iteration {iteration}; its iterations are 1..{done} "
                "(0 is the start)"
            )
        return int(row[0])

    def _unknown(self, conn: Connection, session_id: str) -> SessionError:
        return catalog.unknown(conn, self.path, session_id)


StoreLike = SessionStore | StoreArg
"""A session store, or where it is (its file, or a PostgreSQL URL)."""


PENDING_PLANS = (
    "SELECT count(*) FROM steps WHERE session_id = ? AND kind = 'review' AND review_state = 'pending'"
)
"""How many review plans of a session still wait (read through the index ``steps_pending``, schema 6)."""
_STEP_COLS = (
    "step, kind, iteration, chunk, chunk_cursor, proposed, accepted, rejected, rejected_by_code, tokens, ms,"
    " nodes, edges, next_node, next_edge, mutation_count, created_at"
)


def _step_info(r: tuple[Any, ...]) -> StepInfo:
    return StepInfo(
        step=r[0],
        kind=r[1],
        iteration=r[2],
        chunk=r[3],
        chunk_cursor=r[4],
        proposed=r[5],
        accepted=r[6],
        rejected=r[7],
        rejected_by_code=json.loads(r[8]),
        tokens=r[9],
        ms=r[10],
        nodes=r[11],
        edges=r[12],
        next_node=r[13],
        next_edge=r[14],
        mutation_count=r[15],
        created_at=r[16],
        record=json.loads(r[17]) if len(r) > 17 else {},
    )


def _delete(conn: Connection, session_id: str) -> None:
    for table in ("mutations", "steps", "snapshots", "export_targets", "requests", "sessions"):
        conn.execute(f"DELETE FROM {table} WHERE session_id = ?", (session_id,))


def _mutation(session_id: str, step: int | None, data: str) -> Mutation:
    """A stored mutation row as its typed object; ``SessionError`` naming the step when the row is damaged."""
    try:
        return read_mutation(data)
    except ValidationError as exc:
        where = f" at step {step}" if step is not None else ""
        raise SessionError(
            f"a stored mutation of session {session_id!r}{where} cannot be read (a damaged or "
            f"newer store?): {exc.errors(include_url=False)[0]['msg']}",
            session_id=session_id,
        ) from None
