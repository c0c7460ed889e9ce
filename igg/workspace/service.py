"""The workspace service: the operations the CLI, the MCP server and the HTTP API share.

A session in the workspace is a ``igg.session.Session`` (which owns it and is the only thing that changes it)
held in a ``LiveSession`` with its listing and lock. ``start`` opens one, ``observe`` shows it within a token
budget, ``apply`` hands actions to ``Session.apply`` (one iteration through the act step, or a plan when
review is on), ``review`` shows or decides the plan, ``finish`` closes it, ``export`` returns or writes the
graph, ``query_graph``/``explain``/``diff``/``check``/``undo`` answer from it and its history
(``history_ops``), ``list_sessions`` lists, and ``run`` lets the server's own agent build a graph
(``igg.workspace.runs``, the loop driving the same ``Session``). ``execute`` runs any operation from its input
model (dispatched on the model's type), off the event loop. Every result is a JSON-ready dict; every refusal a
``WorkspaceError`` with a ``WorkspaceCode``.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from igg.act.step import iteration_events
from igg.errors import RequestInvalid, SessionConflict, SessionError, WorkspaceCode, WorkspaceError
from igg.models.request import Request
from igg.persistence import TOOL_AGENT, SessionInfo, SessionRepo, SessionStatus
from igg.persistence.memory import MemorySessions
from igg.record.logs import get_logger
from igg.record.records import Event, IterationRecord
from igg.record.steps import PlanPending, UpdateStep
from igg.request.load import build_state, load_request
from igg.session import Session
from igg.workspace import history_ops, render
from igg.workspace.events import EventHub
from igg.workspace.inputs import (
    AddDocumentsInput,
    ApplyInput,
    CheckInput,
    DiffInput,
    ExplainInput,
    ExportInput,
    FinishInput,
    ListInput,
    ObserveInput,
    QueryInput,
    RetractDocumentInput,
    ReviewInput,
    RunInput,
    UndoInput,
)
from igg.workspace.live import LiveSession, summary, workspace_error
from igg.workspace.ops import OPERATIONS, Handler, Operation
from igg.workspace.outputs import (
    ApplyOutput,
    CheckOutput,
    DiffOutput,
    DocumentsOutput,
    ExplainOutput,
    ExportOutput,
    FinishOutput,
    ListOutput,
    ObserveOutput,
    QueryOutput,
    ReviewOutput,
    SessionSummary,
    UndoOutput,
)
from igg.workspace.paths import write_inside
from igg.workspace.rules_ops import check
from igg.workspace.runs import Runs

log = get_logger("igg.workspace")
T = TypeVar("T")


class Workspace:
    """The service behind every adapter. Thread-safe: each session is changed under its own lock."""

    def __init__(
        self,
        repo: SessionRepo | None = None,
        *,
        output_dir: Path | None = None,
        clock: Callable[[], float] = time.time,
        hub: EventHub | None = None,
        max_actions: int | None = None,
        operations: tuple[Operation, ...] = OPERATIONS,
    ) -> None:
        self.repo: SessionRepo = repo if repo is not None else MemorySessions()
        self.output_dir = output_dir
        """Exports with a ``path`` are written under this directory only (None: inline exports only)."""
        self.clock = clock
        self.hub = hub or EventHub()
        self._published: dict[str, set[int]] = {}
        """Per session, the steps this process stored and published itself (``relay_store`` skips them)."""
        self._live: dict[str, LiveSession] = {}
        self._lock = threading.Lock()
        self.runs = Runs(self)
        self.max_actions = max_actions
        """The most actions one apply may carry, whatever its request's config says (None: no ceiling)."""
        self.operations = operations
        """What this workspace serves (``igg.workspace.ops.OPERATIONS``); every adapter is built from it."""
        self._by_input = {op.input: op for op in operations}

    # ---- operations ----------------------------------------------------------------------------------
    def start(self, request: Request | dict[str, Any]) -> SessionSummary:
        """Open a session for a request (checked whole, seed graph included); returns its summary."""
        live = self.open_session(request, "open")
        log.info("session_started", session_id=live.info.session_id, nodes=live.state.node_count)
        with live.lock:
            return SessionSummary.model_validate(summary(live))

    def observe(self, inp: ObserveInput) -> ObserveOutput:
        """The session as budgeted markdown, optionally focused on named nodes."""
        live = self.get(inp.session_id)
        with live.lock:
            text, tokens = render.observation(live, focus=inp.focus, token_budget=inp.token_budget)
            live.observed = (len(text), tokens)
            return ObserveOutput.model_validate({**summary(live), "markdown": text, "tokens": tokens})

    def apply(self, inp: ApplyInput) -> ApplyOutput:
        """Validate and apply actions in order; every action gets a verdict. ``dry_run`` changes nothing; with
        ``config.review`` the actions wait as a plan for a reviewer."""
        if self.max_actions is not None and len(inp.actions) > self.max_actions:
            raise WorkspaceError(
                WorkspaceCode.TOO_MANY_ACTIONS,
                f"{len(inp.actions)} actions in one request; this "
                f"server takes at most {self.max_actions} per request: send them in several",
            )
        return self._changing(inp.session_id, lambda live: self._apply(live, inp))

    def _apply(self, live: LiveSession, inp: ApplyInput) -> ApplyOutput:
        with live.lock:
            _not_running(live)
            outcome = _served(
                lambda: live.session.apply(
                    list(inp.actions),
                    reasoning=inp.reasoning,
                    dry_run=inp.dry_run,
                    observed=live.observed or (0, 0),
                )
            )
            if isinstance(outcome, PlanPending):
                return ApplyOutput.model_validate({**summary(live), "review": outcome.plan.shown()})
            if not inp.dry_run:
                live.observed = None
                self._publish(live, outcome)
            log.info(
                "actions_applied",
                session_id=inp.session_id,
                dry_run=inp.dry_run,
                proposed=len(outcome.verdicts),
                accepted=outcome.accepted,
                rejected=outcome.rejected,
            )
            repaired = sum(1 for n in outcome.notes if "unencodable" in n)
            return ApplyOutput.model_validate(
                {
                    **summary(live),
                    "dry_run": inp.dry_run,
                    **_repaired(inp.reasoning, repaired),
                    **_verdicts(outcome),
                }
            )

    def review(self, inp: ReviewInput) -> ReviewOutput:
        """Show the plan waiting for review (no decision), approve it (all or chosen actions) or reject it."""
        return self._changing(inp.session_id, lambda live: self._review(live, inp))

    def _review(self, live: LiveSession, inp: ReviewInput) -> ReviewOutput:
        with live.lock:
            plan = live.session.pending
            if inp.decision is None:
                return ReviewOutput.model_validate(
                    {**summary(live), "review": plan.shown() if plan is not None else None}
                )
            outcome = _served(
                lambda: live.session.decide(
                    inp.decision or "", inp.plan_id, actions=inp.actions, note=inp.note
                )
            )
            if isinstance(outcome, UpdateStep) and plan is not None:  # a planned update: applied whole
                live.observed = None
                return ReviewOutput.model_validate(
                    {
                        **summary(live),
                        "approved": list(range(len(plan.actions))),
                        "verdicts": plan.verdicts,
                        "accepted": plan.accepted,
                        "rejected": plan.rejected,
                    }
                )
            if not isinstance(outcome, IterationRecord):
                return ReviewOutput.model_validate(
                    {**summary(live), "rejected": getattr(outcome, "plan_id", None), "note": inp.note}
                )
            self._publish(live, outcome)
            chosen = sorted(
                range(len(plan.actions))
                if plan is not None and inp.actions is None
                else set(inp.actions or ())
            )
            return ReviewOutput.model_validate(
                {**summary(live), "approved": chosen, **_verdicts(outcome, by_code=False)}
            )

    def finish(self, inp: FinishInput) -> FinishOutput:
        """Close the session with stop reason ``finished``, pruning isolated nodes when asked."""
        return self._changing(inp.session_id, lambda live: self._finish(live, inp))

    def _finish(self, live: LiveSession, inp: FinishInput) -> FinishOutput:
        with live.lock:
            _not_running(live)
            result = _served(lambda: live.session.finish("finished", prune=inp.prune_isolated))
            log.info("session_finished", session_id=inp.session_id, pruned=len(result.pruned))
            return FinishOutput.model_validate(
                {**summary(live), "pruned": result.pruned, "open_todos": result.open_todos}
            )

    def export(self, inp: ExportInput) -> ExportOutput:
        """The graph as JSON/node-link/GraphML/...: inline, or written under the output directory."""
        live = self.get(inp.session_id)
        if inp.format == "neo4j_plan":
            return ExportOutput.model_validate(render.neo4j_plan(live, inp.session_id, inp.path))
        with live.lock:
            text = render.export_text(live, inp.format)
        data = text.encode("utf-8")
        out: dict[str, Any] = {"session_id": inp.session_id, "format": inp.format, "bytes": len(data)}
        if inp.path is None:
            return ExportOutput.model_validate({**out, "content": text})
        write_inside(self.output_dir, inp.path, data)
        log.info("graph_exported", session_id=inp.session_id, format=inp.format, bytes=len(data))
        return ExportOutput.model_validate({**out, "path": inp.path})

    def list_sessions(self, inp: ListInput | None = None) -> ListOutput:
        """Sessions, most recently updated first (live sessions of this process as they stand here)."""
        inp = inp or ListInput()
        live = {sid: s.session.shown_status for sid, s in list(self._live.items())}
        infos = self.repo.sessions(None, inp.limit if inp.status is None else 1_000_000)
        out = [{**i.to_dict(), "status": live.get(i.session_id, i.status)} for i in infos]
        if inp.status is not None:
            out = [s for s in out if s["status"] == inp.status][: inp.limit]
        return ListOutput(sessions=out)

    def query_graph(self, inp: QueryInput) -> QueryOutput:
        """One budgeted query over the session's current graph."""
        return QueryOutput.model_validate(history_ops.query_graph(self.get(inp.session_id), inp))

    def explain(self, inp: ExplainInput) -> ExplainOutput:
        """Every step that touched an element, with reasoning, verdict and chunk."""
        return ExplainOutput.model_validate(history_ops.explain(self.get(inp.session_id), self.repo, inp))

    def diff(self, inp: DiffInput) -> DiffOutput:
        """The net changes between two iterations."""
        return DiffOutput.model_validate(history_ops.diff(self.get(inp.session_id), self.repo, inp))

    def check(self, inp: CheckInput) -> CheckOutput:
        """The rules' report on the session's current graph."""
        return CheckOutput.model_validate(check(self.get(inp.session_id), inp))

    def undo(self, inp: UndoInput) -> UndoOutput:
        """Roll back to after ``to_iteration`` as a step of its own; the session is then loaded again."""
        live = self.get(inp.session_id)
        with live.lock:
            _not_running(live)
            undone = history_ops.undo(live, inp)
            self.forget(inp.session_id)
        reloaded = self.get(inp.session_id)
        with reloaded.lock:
            return UndoOutput.model_validate(
                {
                    **summary(reloaded),
                    "undone_to": inp.to_iteration,
                    "step": undone.step,
                    "mutations": undone.mutations,
                }
            )

    def add_documents(self, inp: AddDocumentsInput) -> DocumentsOutput:
        """Add documents with the facts each states, as one step (``igg.documents.edit``)."""
        from igg.documents.edit import add_documents

        docs = [(d.id, d.text, list(d.actions)) for d in inp.documents]
        return self._changing(
            inp.session_id, lambda live: self._documents(live, lambda s: add_documents(s, docs))
        )

    def retract_document(self, inp: RetractDocumentInput) -> DocumentsOutput:
        """Retract what one document alone supported, as one step (``igg.documents.retract``)."""
        from igg.documents.retract import retract_document

        return self._changing(
            inp.session_id, lambda live: self._documents(live, lambda s: retract_document(s, inp.document_id))
        )

    def _documents(self, live: LiveSession, change: Callable[[Session], dict[str, Any]]) -> DocumentsOutput:
        with live.lock:
            _not_running(live)
            sid = live.session.session_id
            if getattr(live.session.repo, "store", None) is None:
                raise WorkspaceError(
                    WorkspaceCode.HISTORY_UNAVAILABLE,
                    f"session {sid!r} is kept nowhere that holds its history; documents need a session store",
                )
            if live.session.pending is not None:
                raise WorkspaceError(
                    WorkspaceCode.REVIEW_PENDING,
                    f"session {sid!r} has a plan waiting for review; decide it first (review)",
                )
            out = _served(lambda: change(live.session))
            live.observed = None
            log.info("documents_changed", session_id=sid, iteration=out["iteration_applied"], **out["facts"])
            return DocumentsOutput.model_validate({**summary(live), **out})

    async def execute(self, inp: Any) -> dict[str, Any]:
        """Run the operation ``inp`` is the input of (``self.operations``: one per input model; a ``dict`` is
        a request to start a session).

        Sync work runs in a worker thread (store reads and writes never block the event loop), except on a
        session an autonomous run is changing: that run applies its actions on this event loop, so reading the
        graph here, between its steps, is safe.
        """
        return await self.serve(self.operation_of(inp), inp)

    def operation_of(self, inp: Any) -> Operation:
        """The operation whose input model ``inp`` is."""
        op = self._by_input.get(Request if isinstance(inp, dict) else type(inp))
        if op is None:
            raise TypeError(f"no workspace operation takes a {type(inp).__name__}")
        return op

    async def serve(self, op: Operation, inp: Any, handler: Handler | None = None) -> dict[str, Any]:
        """``inp`` served by ``handler`` (default: the operation's own), as the answer's JSON."""
        handler = handler or op.handler
        sid = getattr(inp, "session_id", None)
        live = self._live.get(sid) if isinstance(sid, str) else None
        if asyncio.iscoroutinefunction(handler):
            answer = await handler(self, inp)
        elif live is not None and live.session.status == "running":
            answer = handler(self, inp)
        else:
            answer = await asyncio.to_thread(handler, self, inp)
        out: dict[str, Any] = (
            op.output.model_validate(answer).dump() if isinstance(answer, dict) else answer.dump()
        )
        if isinstance(inp, ReviewInput) and inp.decision is not None and sid in self.runs.held:
            # the plan of an autonomous run was decided: its agent takes the next turn (held for review again)
            resumed = await self.runs.resume(sid)
            if resumed is not None:
                out["run"] = resumed
                out.update(summary(await asyncio.to_thread(self.get, sid)))
        return out

    async def start_run(self, inp: RunInput) -> dict[str, Any]:
        """Start an autonomous run in the background (see ``igg.workspace.runs``); returns the session
        summary."""
        return await self.runs.start(inp)

    async def run(self, inp: RunInput) -> dict[str, Any]:
        """An autonomous run to its stop reason; returns the run summary."""
        started = await self.runs.start(inp)
        return await self.runs.wait(started["session_id"])

    # ---- sessions ------------------------------------------------------------------------------------
    def get(self, session_id: str) -> LiveSession:
        """The live session, loaded from the repository (replaying its steps) when not in memory. Reads the
        store: call it off the event loop (``asyncio.to_thread``)."""
        with self._lock:
            live = self._live.get(session_id)
            if live is not None and not self._stale(live):
                return live
            repo = self.repo
            try:
                session = Session.load(
                    repo,
                    session_id,
                    lambda info: repo.recorder(
                        agent=info.agent, resume=True, shared=True, last_step=info.last_step
                    ),
                    status=_driven,
                )
            except SessionError as exc:
                raise workspace_error(exc) from None
            assert session.loaded is not None
            live = LiveSession(session=session, listed=session.loaded)
            self._live[session_id] = live
            return live

    def _changing(self, session_id: str, change: Callable[[LiveSession], T]) -> T:
        """``change`` of the live session; when another process stored a step of it meanwhile (several servers
        on one store: ``SessionConflict``, nothing was kept), the session is loaded again and ``change`` runs
        on it, up to ``CHANGE_ATTEMPTS`` times in all; then the caller gets SESSION_BUSY, to retry."""
        import tenacity  # here: a command that never changes a session does not pay its import

        def reload(state: tenacity.RetryCallState) -> None:
            log.info(
                "session_reloaded",
                session_id=session_id,
                attempt=state.attempt_number,
                reason="changed elsewhere",
            )
            self.forget(session_id)

        retrying = tenacity.Retrying(
            retry=tenacity.retry_if_exception_type(SessionConflict),
            stop=tenacity.stop_after_attempt(CHANGE_ATTEMPTS),
            # writers racing again at once race less: a random wait of up to N times CHANGE_BACKOFF
            wait=tenacity.wait_random_exponential(multiplier=CHANGE_BACKOFF),
            before_sleep=reload,
            reraise=True,
        )
        try:
            return retrying(lambda: change(self.get(session_id)))
        except SessionConflict as exc:
            self.forget(session_id)
            raise WorkspaceError(
                WorkspaceCode.SESSION_BUSY,
                f"session {session_id!r} kept changing in other "
                "processes while this one applied the change; nothing was kept here: send it "
                "again",
            ) from exc

    def _stale(self, live: LiveSession) -> bool:
        """Whether another process has stored a step of the session since this one loaded or wrote it (several
        servers on one store): then it is loaded again before it answers. A session this process is changing
        (a run, a tool call holding its lock) is its own latest."""
        if live.session.session_id in self.runs.tasks or live.lock.locked():
            return False
        version = self.repo.version(live.session.session_id)
        return version is not None and version != live.session.steps

    def held(self, session_id: str) -> LiveSession | None:
        """The session when this process holds it in memory (without loading it); None otherwise."""
        return self._live.get(session_id)

    def forget(self, session_id: str) -> None:
        """Drop a session from memory (its next use reloads it from the repository, e.g. after an undo)."""
        with self._lock:
            self._live.pop(session_id, None)

    def open_session(
        self, request: Request | dict[str, Any], status: SessionStatus, agent: str = TOOL_AGENT
    ) -> LiveSession:
        """Check the request, build its graph and record the new session (``start`` and runs use this)."""
        try:
            raw = (
                request.model_dump(by_alias=True, mode="json", exclude_none=True)
                if isinstance(request, Request)
                else request
            )
            checked = load_request(raw, ontologies=False)
        except RequestInvalid as exc:
            raise WorkspaceError(WorkspaceCode.INVALID_REQUEST, str(exc)) from None
        state, _ = build_state(checked)
        now = self.clock()
        sid = checked.session_id
        assert sid is not None
        info = SessionInfo(
            session_id=sid,
            goal=checked.goal_prompt,
            status=status,
            agent=agent,
            created_at=now,
            updated_at=now,
        )
        recorder = self.repo.recorder(agent=agent, options={"workspace": True}, shared=True)
        session = Session.open(checked, state=state, recorders=[recorder], repo=self.repo, status=status)
        live = LiveSession(session=session, listed=info)
        with self._lock:
            if sid in self._live:
                raise WorkspaceError(
                    WorkspaceCode.SESSION_EXISTS,
                    f"a session {sid!r} already exists; omit "
                    "session_id to get a fresh one, or continue that session",
                )
            _served(session.begin)
            self._live[sid] = live
        return live

    def summary(self, live: LiveSession) -> dict[str, Any]:
        """The summary every operation answers with (``igg.workspace.live.summary``)."""
        return summary(live)

    async def relay_store(self, session_id: str) -> None:
        """While a client follows the session's events here, publish those of the iterations other processes
        store (several servers on one store: a run on another server), read from the store every
        ``RELAY_SECONDS``, and ``run_finished`` once the session is no longer running; this process's own
        iterations are published as they happen. Runs until cancelled; nothing to do without a shared
        store."""
        try:
            seen = await asyncio.to_thread(self.repo.version, session_id)
        except SessionError:
            return
        while seen is not None:
            await asyncio.sleep(RELAY_SECONDS)
            live = self._live.get(session_id)
            if session_id in self.runs.tasks and live is not None:  # this process's run: its own events
                seen = live.session.steps
                continue
            try:
                now = await asyncio.to_thread(self.repo.version, session_id)
                if now is None or now == seen:
                    continue
                stored = await asyncio.to_thread(self.repo.events_since, session_id, seen)
            except SessionError as exc:
                log.warning("relay_failed", session_id=session_id, error=str(exc))
                continue
            mine = self._published.get(session_id, set())
            for step, events in stored:
                if step not in mine:
                    for event in events:
                        self.hub.publish(event)
            seen = now
            info = (await asyncio.to_thread(self.get, session_id)).info
            if info.status != "running" and session_id not in self.runs.tasks:
                self.hub.publish(
                    Event(
                        kind="run_finished",
                        session_id=session_id,
                        iteration=info.iteration,
                        data={"stop_reason": info.stop_reason, "stored": True},
                    )
                )
                return

    def _publish(self, live: LiveSession, record: IterationRecord) -> None:
        sid = live.session.session_id
        mine = self._published.setdefault(sid, set())
        mine.add(live.session.steps)
        if len(mine) > 4096:
            mine.difference_update(sorted(mine)[:2048])
        for event in iteration_events(sid, record, nodes=live.state.node_count, edges=live.state.edge_count):
            self.hub.publish(event)


RELAY_SECONDS = 0.5
"""How often a followed session's store is read for iterations other processes stored (``relay_store``)."""
CHANGE_ATTEMPTS = 10
"""How many times a change is tried on a session other processes keep changing (``Workspace._changing``)."""
CHANGE_BACKOFF = 0.01
"""Seconds: before attempt N+1, a random wait of up to 2**N times this (tenacity's
wait_random_exponential)."""


def _served(call: Callable[[], T]) -> T:
    """``call()``, a session store's refusal turned into the workspace's (a ``SessionConflict`` goes on as it
    is: ``Workspace._changing`` loads the session again and retries)."""
    try:
        return call()
    except SessionConflict:
        raise
    except SessionError as exc:
        raise workspace_error(exc) from None


def _not_running(live: LiveSession) -> None:
    if live.session.status == "running":
        raise WorkspaceError(
            WorkspaceCode.SESSION_BUSY,
            f"session {live.session.session_id!r} is being built by "
            "an autonomous run; wait for it to finish (its events stream shows progress)",
        )


def _verdicts(record: IterationRecord, *, by_code: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {
        "verdicts": [v.to_dict() for v in record.verdicts],
        "accepted": record.accepted,
        "rejected": record.rejected,
    }
    if by_code:
        out["rejected_by_code"] = dict(sorted(record.rejected_by_code().items()))
    return out


def _repaired(reasoning: str, noted: int) -> dict[str, Any]:
    if not noted:
        return {}
    from igg.io.encodable import replace_unencodable

    return {"repaired": replace_unencodable(reasoning)[1]}


__all__ = ["LiveSession", "Workspace", "workspace_error"]


def _driven(info: SessionInfo) -> SessionStatus:
    """The status a loaded session is served with: a plan waiting for review waits in the ``Session`` (its own
    status is open for a tool-driven session, interrupted for a run's)."""
    if info.status != "awaiting_review":
        return info.status
    return "open" if info.agent == TOOL_AGENT else "interrupted"
