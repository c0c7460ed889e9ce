"""The session store as a ``SessionRepo`` (``igg.persistence``): workspace and run sessions in one store.

A workspace session is a store session with agent ``tool``: each apply commits one ``iteration`` step (its
actions, verdicts and mutations), finishing commits the ``finalize`` step with the stop reason; autonomous
runs commit the same steps. ``igg sessions``, ``igg show``, ``replay`` and ``undo`` therefore work on tool
sessions too. A writer claims a session (as the store's owner) before its first write, so two live processes
never write one session.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping
from typing import Any

from igg.act.step import iteration_events
from igg.models.request import Request
from igg.persistence import LoadedSession, SessionInfo, SessionStatus
from igg.record.history import Change, Touch
from igg.record.records import Event, IterationRecord
from igg.record.steps import PlanPending, PlanRejected, UndoStep, read_step
from igg.store import codec, history
from igg.store.commit import owner_token
from igg.store.recorder import SessionRecorder
from igg.store.store import SessionStore


class StoreSessions:
    """A ``SessionRepo`` over a ``SessionStore``; every recorder it hands out writes as this ``owner``."""

    def __init__(self, store: SessionStore, *, owner: str | None = None) -> None:
        self.store = store
        self.owner = owner or owner_token()
        """This process's writer token in the store (``host:pid:nonce``)."""

    def recorder(
        self,
        *,
        agent: str | None = None,
        options: Mapping[str, Any] | None = None,
        force: bool = False,
        resume: bool = False,
        shared: bool = False,
        last_step: int = 0,
    ) -> SessionRecorder:
        """A recorder writing one session into the store (``resume``: claims an existing session; ``shared``:
        claims nothing, and each commit checks the session is still at ``last_step``, see
        ``SessionRecorder``)."""
        return SessionRecorder(
            self.store,
            agent=agent,
            options=options,
            force=force,
            resume=resume,
            owner=self.owner,
            shared=shared,
            last_step=last_step,
        )

    def events_since(self, session_id: str, step: int) -> list[tuple[int, list[Event]]]:
        """The events of the iterations stored after ``step``, rebuilt from their stored records."""
        out = []
        for s in self.store.steps(session_id, after_step=step):
            if s.kind != "iteration" or s.iteration is None:
                continue
            known = {
                k: v for k, v in s.record.items() if k in _RECORD_FIELDS
            }  # a store written by another version
            record = IterationRecord.from_dict({**known, "iteration": s.iteration})
            out.append((s.step, iteration_events(session_id, record, nodes=s.nodes, edges=s.edges)))
        return out

    def claim(self, session_id: str) -> None:
        """This process drives the session (its owner in the store) until ``release``."""
        self.store.claim(session_id, self.owner)

    def release(self, session_id: str) -> None:
        """This process no longer drives the session."""
        self.store.release(session_id, self.owner)

    def load(
        self, session_id: str, *, elements: Collection[str] | None = None, request: Request | None = None
    ) -> LoadedSession:
        """The session's request, graph (from its latest snapshot and the mutations after it), its last
        iteration's record (one row) and its records when asked for (read then, without their mutations,
        which stay in the store); ``SessionNotFound`` when unknown. ``elements``: only those nodes and edges
        of the graph, read from their own mutations (``SessionStore.load_elements``), when they can be; else
        the whole graph; ``request``: the session's, when the caller loaded it (a code map's request holds
        its sources: reading and checking it took 0.2 s at 50,000 files)."""
        store = self.store
        info = store.session(session_id)
        if request is None:
            request = store.request(session_id)  # read and validated once
        part = store.load_elements(session_id, elements, request=request, info=info) if elements else None
        state = part if part is not None else store.load_state(session_id, info=info, request=request)[1]
        last = store.last_record(session_id)

        def read_records() -> list[IterationRecord]:
            return [
                codec.record_from_dict(s.record) for s in store.steps(session_id) if s.kind == "iteration"
            ]

        review, plans = store.review_state(session_id)
        step = read_step("review", review) if review is not None else None
        return LoadedSession(
            request=request,
            info=info,
            state=state,
            last_record=codec.record_from_dict(last) if last is not None else None,
            read_records=read_records,
            plans=plans,
            pending=step.plan if isinstance(step, PlanPending) else None,
            review_note=(step.note or "(no note)") if isinstance(step, PlanRejected) else None,
        )

    def sessions(self, status: SessionStatus | None = None, limit: int = 100) -> list[SessionInfo]:
        """Sessions, most recently updated first."""
        infos = self.store.sessions()
        return [i for i in infos if status is None or i.status == status][:limit]

    def version(self, session_id: str) -> int | None:
        """The session's last stored step: another process's commit changes it."""
        return self.store.last_step(session_id)

    def undo(self, session_id: str, to_iteration: int) -> UndoStep:
        """Roll back to after ``to_iteration`` as an ``undo`` step (``igg.store.history.undo``), as this
        owner."""
        return history.undo(self.store, session_id, to_iteration, owner=self.owner)

    def fork(self, session_id: str, at: int, new_id: str | None = None) -> tuple[str, int]:
        """A new session from after iteration ``at`` (``igg.store.fork.fork``)."""
        from igg.store.fork import fork

        return fork(self.store, session_id, at, new_id)

    def explain(self, session_id: str, ref: str, *, edges: bool = True) -> list[Touch]:
        """Every step that touched ``ref`` (``igg.store.history.explain``)."""
        return list(history.explain(self.store, session_id, ref, edges=edges))

    def diff(self, session_id: str, a: int, b: int) -> list[Change]:
        """The net changes between iterations ``a`` and ``b`` (``igg.store.history.diff``)."""
        return list(history.diff(self.store, session_id, a, b))


__all__ = ["StoreSessions"]


_RECORD_FIELDS = frozenset(f.name for f in dataclasses.fields(IterationRecord))
