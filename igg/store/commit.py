"""Committing one step, and the writers a commit is checked against.

A step's row is derived from its iteration record and the graph after it (``prepare_step``: the verdict
counts, the tokens and time spent, the graph's counts and id counters), all before the transaction opens;
``PendingStep.write`` is the transaction's work: it locks the session's row, refuses a commit the row rules
out (another writer, a stale version, a finished session, an iteration stored twice), appends the step with
its mutations (and snapshot), and moves the session on. A writer is named by an owner token
(``owner_token``); ``igg.store.catalog.owner_alive`` tells whether its process still runs.
"""

from __future__ import annotations

import os
import socket
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from igg.errors import SessionBusy, SessionConflict, SessionNotFound, SessionRefused
from igg.graph.journal import Mutation
from igg.graph.partial import PartialState
from igg.graph.state import GraphState
from igg.store import codec
from igg.store.catalog import owner_alive
from igg.store.location import StoreLocation
from igg.store.schema import review_state_of
from igg.store.sql import Connection


def owner_token() -> str:
    """``host:pid:nonce`` naming the writer of a session (the nonce tells writers of one process apart)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


@dataclass(frozen=True, kw_only=True)
class PendingStep:
    """One step ready to be written: its row's columns, its mutations and snapshot, and the checks its commit
    must pass (see ``SessionStore.commit_step``)."""

    session_id: str
    kind: str
    iteration: int | None
    chunk: str | None
    chunk_cursor: int | None
    proposed: int
    accepted: int
    rejected_by_code: dict[str, int]
    tokens: int
    ms: float
    nodes: int
    edges: int
    next_node: int
    next_edge: int
    record_json: str
    mutations: Sequence[Mutation]
    """Encoded as they are written (``codec.mutation_row``), not before: a fresh map's one step holds every
    element's mutation, and their rows held at once took as much memory as a tenth of the graph."""
    snapshot: str | bytes | None
    """As the store keeps it (``codec.kept_snapshot``)."""
    review: str | None
    now: float
    finish: dict[str, Any] | None
    owner: str | None
    after: int | None
    where: StoreLocation
    """The store's location, named when the session is gone."""

    def write(self, conn: Connection) -> int:
        """Append the step in the transaction ``conn``; returns its step number."""
        # touching the session's row first locks it (PostgreSQL; an SQLite write holds the whole file): a
        # concurrent commit of the session waits here and then numbers its step after this one
        touched = conn.execute(
            "UPDATE sessions SET updated_at = ? WHERE session_id = ? RETURNING last_step,"
            " owner, status, last_iteration",
            (self.now, self.session_id),
        ).fetchall()
        row = touched[0] if touched else None
        if row is None:
            raise SessionNotFound(
                f"session {self.session_id!r} is not in {self.where} (was it deleted or replaced?)",
                session_id=self.session_id,
            )
        _may_commit(self.session_id, row, kind=self.kind, owner=self.owner, after=self.after)
        step = row[0] + 1
        self._refuse_a_second_iteration(conn)
        self._insert(conn, step)
        conn.execute(
            "UPDATE sessions SET last_step = ?, last_iteration = ?, nodes = ?, edges = ?, updated_at = ?"
            " WHERE session_id = ?",
            (step, max(row[3], self.iteration or 0), self.nodes, self.edges, self.now, self.session_id),
        )
        if self.finish is not None:
            conn.execute(
                "UPDATE sessions SET status = 'finished', stop_reason = ?, result = ? WHERE session_id = ?",
                (self.finish.get("stop_reason"), codec.dumps(self.finish), self.session_id),
            )
        return int(step)

    def _refuse_a_second_iteration(self, conn: Connection) -> None:
        # (a shared writer's version check already rules out an iteration stored twice)
        if (
            self.iteration is not None
            and self.after is None
            and conn.execute(
                "SELECT 1 FROM steps WHERE session_id = ? AND kind = 'iteration' AND iteration = ?",
                (self.session_id, self.iteration),
            ).fetchone()
            is not None
        ):
            raise SessionRefused(
                f"iteration {self.iteration} of session {self.session_id!r} is already stored; "
                "it is never applied twice",
                session_id=self.session_id,
            )

    def _insert(self, conn: Connection, step: int) -> None:
        """The step's row, its mutations and its snapshot."""
        conn.execute(
            "INSERT INTO steps (session_id, step, kind, iteration, chunk, chunk_cursor, proposed, accepted,"
            " rejected, rejected_by_code, tokens, ms, nodes, edges, next_node, next_edge, mutation_count,"
            " record, created_at, review_state) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
            " ?, ?)",
            (
                self.session_id,
                step,
                self.kind,
                self.iteration,
                self.chunk,
                self.chunk_cursor,
                self.proposed,
                self.accepted,
                self.proposed - self.accepted,
                codec.dumps(self.rejected_by_code) if self.rejected_by_code else "{}",
                self.tokens,
                self.ms,
                self.nodes,
                self.edges,
                self.next_node,
                self.next_edge,
                len(self.mutations),
                self.record_json,
                self.now,
                self.review,
            ),
        )
        conn.executemany(
            "INSERT INTO mutations (session_id, step, seq, op, element, data) VALUES (?, ?, ?, ?, ?, ?)",
            # a generator, not a list: a fresh static map's one step holds every element's mutation
            ((self.session_id, step, i, *codec.mutation_row(m)) for i, m in enumerate(self.mutations)),
        )
        if self.snapshot is not None:
            conn.execute(
                "INSERT INTO snapshots (session_id, step, document) VALUES (?, ?, ?) ON CONFLICT"
                " (session_id, step) DO UPDATE SET document = excluded.document",
                (self.session_id, step, self.snapshot),
            )


def prepare_step(
    session_id: str,
    *,
    kind: str,
    record: dict[str, Any],
    mutations: Sequence[Mutation],
    state: GraphState,
    owner: str | None,
    chunk_cursor: int | None,
    snapshot: bool,
    finish: dict[str, Any] | None,
    record_json: str | None,
    after: int | None,
    where: StoreLocation,
) -> PendingStep:
    """The step ``SessionStore.commit_step`` writes, with everything computed outside the transaction."""
    # an "update" step (igg map-code --update) continues a finished session's iteration numbers
    iteration = record.get("iteration") if kind in ("iteration", "update") else None
    verdicts = record.get("verdicts") or []
    by_code: dict[str, int] = {}
    for v in verdicts:
        if not v.get("accepted"):
            by_code[str(v.get("code"))] = by_code.get(str(v.get("code")), 0) + 1
    accepted = sum(1 for v in verdicts if v.get("accepted"))
    proposed = len(verdicts)
    if kind == "update" and not verdicts:  # a difference applied whole: each change an accepted action
        proposed = accepted = sum((record.get("changes") or {}).values())
    usage = record.get("usage") or {}
    tokens = int(
        usage.get("total_tokens") or (usage.get("prompt_tokens") or 0) + (usage.get("completion_tokens") or 0)
    )
    ms = float((record.get("timings_ms") or {}).get("total") or 0.0)
    next_node, next_edge = state.id_counters
    nodes, edges = state.node_count, state.edge_count
    if record_json is None:
        record_json = codec.dumps(record)
    if snapshot and isinstance(state, PartialState):
        raise ValueError("part of a graph keeps no snapshot (igg.graph.partial)")
    snap = codec.kept_snapshot(state, where) if snapshot else None
    review = review_state_of(record) if kind == "review" else None
    return PendingStep(
        session_id=session_id,
        kind=kind,
        iteration=iteration,
        chunk=record.get("chunk"),
        chunk_cursor=chunk_cursor,
        proposed=proposed,
        accepted=accepted,
        rejected_by_code=by_code,
        tokens=tokens,
        ms=ms,
        nodes=nodes,
        edges=edges,
        next_node=next_node,
        next_edge=next_edge,
        record_json=record_json,
        mutations=mutations,
        snapshot=snap,
        review=review,
        now=time.time(),
        finish=finish,
        owner=owner,
        after=after,
        where=where,
    )


def _may_commit(session_id: str, row: Any, *, kind: str, owner: str | None, after: int | None) -> None:
    """Refuse a commit the session's row (last step, owner, status) rules out (see ``commit_step``)."""
    if after is not None:
        if row[2] != "finished" and row[1] is not None and row[1] != owner and owner_alive(row[1]):
            raise SessionBusy(
                f"session {session_id!r} is being run by a live process ({row[1]}); change it after "
                "that run ends",
                session_id=session_id,
            )
        if row[0] != after:
            raise SessionConflict(
                f"session {session_id!r} changed in another process (it is at step {row[0]}; this "
                f"process had step {after}): load it again and retry",
                session_id=session_id,
            )
    elif owner is not None and row[1] != owner:
        raise SessionBusy(
            f"session {session_id!r} is now written by another process ({row[1]}); this run stops "
            "writing to it",
            session_id=session_id,
        )
    if row[2] == "finished" and kind == "iteration":
        raise SessionRefused(
            f"session {session_id!r} already finished; it takes no more iterations", session_id=session_id
        )
