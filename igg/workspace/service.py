"""The workspace service: the operations the CLI, the MCP server and the HTTP API share.

A session is a request, its graph state and its records. ``start`` opens one, ``observe`` shows it within a
token budget, ``apply`` validates actions and applies the valid ones (``dry_run`` leaves the graph untouched),
``finish`` closes it (optionally pruning isolated nodes), ``export`` returns or writes the graph,
``list_sessions`` shows the sessions and ``run`` lets the server's own agent build a graph (see
``igg.workspace.runs``). An apply is one iteration taken through the engine's one act step
(``igg.act.step.act``) and kept through the one persistence seam (``igg.persistence``), exactly like an
iteration of ``igg run``. Every result is a JSON-ready dict; every refusal is a ``WorkspaceError`` with a
stable code.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from igg.act.apply import Actor
from igg.act.step import act, iteration_finished, prune_isolated
from igg.errors import (
    RequestInvalid,
    SessionBusy,
    SessionError,
    SessionExists,
    SessionNotFound,
    WorkspaceError,
)
from igg.graph.state import GraphState
from igg.io.encodable import replace_unencodable
from igg.models.actions import read_response
from igg.models.request import Request
from igg.models.verdicts import Verdict
from igg.persistence import TOOL_AGENT, Recorder, SessionInfo, SessionRepo, SessionStatus
from igg.persistence.memory import MemorySessions
from igg.record.logs import get_logger
from igg.record.records import Event, IterationRecord, RunResult
from igg.request.load import build_state, load_request
from igg.workspace import render
from igg.workspace.events import EventHub
from igg.workspace.ops import ApplyInput, ExportInput, FinishInput, ListInput, ObserveInput, RunInput
from igg.workspace.paths import write_inside
from igg.workspace.runs import Runs

log = get_logger("igg.workspace")


@dataclass(kw_only=True)
class LiveSession:
    """A session loaded in memory: its request, graph, actor, summary and records."""

    request: Request
    state: GraphState
    actor: Actor
    info: SessionInfo
    last_record: IterationRecord | None = None
    """The last committed iteration (its verdicts are shown next)."""
    read_records: Callable[[], list[IterationRecord]] | None = None
    """Reads the records of a session loaded from the repository, when ``records`` is first used."""
    loaded_records: list[IterationRecord] | None = None
    """``records`` once read (None before)."""
    writer: Recorder | None = None
    """Where this session's steps are kept; created (and begun) on the first write of this process."""
    observed: tuple[int, int] | None = None
    """(characters, tokens) of the last observation since the last apply: kept in the next record."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    pending: dict[str, Any] | None = None
    """The plan waiting for review (``config.review``; see ``igg.workspace.review``)."""
    review_note: str | None = None
    """The note of the last rejected plan, shown in the next observation."""

    @property
    def last_verdicts(self) -> list[Verdict]:
        """The verdicts of the last iteration (without reading every record)."""
        return list(self.last_record.verdicts) if self.last_record is not None else []

    @property
    def records(self) -> list[IterationRecord]:
        """Every committed iteration (their verdicts; mutations only for iterations of this process), read from
        the repository on first use."""
        if self.loaded_records is None:
            self.loaded_records = self.read_records() if self.read_records is not None else []
            self.read_records = None
        return self.loaded_records

    def add_record(self, record: IterationRecord) -> None:
        """A newly committed iteration (kept in ``records`` unless those are still to be read)."""
        if self.read_records is None:
            records = self.records
            if not records or records[-1] is not record:
                records.append(record)
        self.last_record = record

    def drop_record(self, record: IterationRecord, previous: IterationRecord | None) -> None:
        """Forget an iteration whose commit failed (``previous``: the last record before it)."""
        if self.loaded_records and self.loaded_records[-1] is record:
            self.loaded_records.pop()
        self.last_record = previous


class LiveRecorder:
    """A ``Recorder`` that keeps a live session's summary and records current, then hands every step to the
    repository's recorder. The workspace's tool calls and autonomous runs both write through it."""

    def __init__(self, workspace: Workspace, session: LiveSession, inner: Recorder) -> None:
        self.workspace, self.session, self.inner = workspace, session, inner

    def begin(self, request: Request, state: GraphState, records: list[IterationRecord]) -> None:
        self.inner.begin(request, state, records)

    def record(self, record: IterationRecord) -> None:
        session = self.session
        self.inner.record(record)
        session.add_record(record)
        session.info = self.workspace.refresh_info(session, last_iteration=record.iteration,
                                                   last_step=session.info.last_step + 1)

    def finish(self, result: RunResult) -> None:
        self.inner.finish(result)
        session = self.session
        if result.review is not None:  # an autonomous run stopped with its turn waiting for review
            session.pending, session.review_note = result.review, None
            session.info = self.workspace.refresh_info(session, status="interrupted",
                                                       last_step=session.info.last_step + 1)
            session.writer = None  # the run's recorder let the session go: the decision claims it again
            return
        self.session.info = self.workspace.refresh_info(self.session, status="finished",
                                                        stop_reason=result.stop_reason,
                                                        last_step=self.session.info.last_step + 1)


class Workspace:
    """The service behind every adapter. Thread-safe: each session is changed under its own lock."""

    def __init__(self, repo: SessionRepo | None = None, *, output_dir: Path | None = None,
                 clock: Callable[[], float] = time.time, hub: EventHub | None = None) -> None:
        self.repo: SessionRepo = repo if repo is not None else MemorySessions()
        self.output_dir = output_dir
        """Exports with a ``path`` are written under this directory only (None: inline exports only)."""
        self.clock = clock
        self.hub = hub or EventHub()
        self._live: dict[str, LiveSession] = {}
        self._lock = threading.Lock()
        self.runs = Runs(self)

    # ---- operations ----------------------------------------------------------------------------------
    def start(self, request: Request | dict[str, Any]) -> dict[str, Any]:
        """Open a session for a request (checked whole, seed graph included); returns its summary."""
        session = self.open_session(request, "open")
        log.info("session_started", session_id=session.info.session_id, nodes=session.info.nodes)
        with session.lock:
            return self.summary(session)

    def observe(self, inp: ObserveInput) -> dict[str, Any]:
        """The session as budgeted markdown, optionally focused on named nodes."""
        session = self.get(inp.session_id)
        with session.lock:
            text, tokens = render.observation(session, focus=inp.focus, token_budget=inp.token_budget)
            session.observed = (len(text), tokens)
            return {**self.summary(session), "markdown": text, "tokens": tokens}

    def apply(self, inp: ApplyInput) -> dict[str, Any]:
        """Validate and apply actions in order; every action gets a verdict. ``dry_run`` changes nothing."""
        session = self.get(inp.session_id)
        with session.lock:
            self._require_open(session)
            config = session.request.config
            if not inp.dry_run and session.info.iteration >= config.max_iterations:
                raise WorkspaceError("MAX_ITERATIONS_REACHED", f"session {inp.session_id!r} has used all "
                                     f"{config.max_iterations} iterations (config.max_iterations); finish it, or "
                                     "use dry_run to check actions", status=409)
            if config.review and not inp.dry_run or session.pending is not None:
                from igg.workspace.review import propose

                return propose(self, session, inp)
            reasoning, repaired = replace_unencodable(inp.reasoning)  # free text: repaired and counted
            parsed = read_response({"reasoning": reasoning, "actions": inp.actions})
            chars, tokens = session.observed or (0, 0)
            notes = [f"{repaired} unencodable character(s) (lone surrogates) in the reasoning were replaced "
                     "with U+FFFD"] if repaired else None
            record = act(session.actor, session.state, parsed, iteration=session.info.iteration + 1,
                         actions=list(inp.actions), observation_chars=chars, observation_tokens=tokens,
                         dry_run=inp.dry_run, notes=notes)
            record.timings_ms["total"] = record.timings_ms["act"]
            if not inp.dry_run:
                self._commit(session, record)
                session.observed = None
                self._publish(session, record)
            log.info("actions_applied", session_id=inp.session_id, dry_run=inp.dry_run,
                     proposed=len(record.verdicts), accepted=record.accepted, rejected=record.rejected)
            return {**self.summary(session), "dry_run": inp.dry_run, **({"repaired": repaired} if repaired else {}),
                    "verdicts": [v.to_dict() for v in record.verdicts],
                    "accepted": record.accepted, "rejected": record.rejected,
                    "rejected_by_code": dict(sorted(record.rejected_by_code().items()))}

    def finish(self, inp: FinishInput) -> dict[str, Any]:
        """Close the session with stop reason ``finished``, pruning isolated nodes when asked."""
        session = self.get(inp.session_id)
        with session.lock:
            self._require_open(session)
            constraints = session.request.config.constraints
            prune = session.request.config.finalize.prune_isolated if inp.prune_isolated is None \
                else inp.prune_isolated
            state = session.state
            state.take_journal()
            pruned = prune_isolated(state, keep_protected=constraints.protect_seed_nodes) if prune else []
            result = RunResult(session_id=session.info.session_id, stop_reason="finished", state=state,
                               records=list(session.records), pruned=pruned, final_mutations=state.take_journal(),
                               open_todos=render.todos(session), max_nodes=constraints.max_nodes,
                               max_edges=constraints.max_edges)
            before = session.info
            try:
                self._writer(session).finish(result)
            except BaseException as exc:
                for mutation in reversed(result.final_mutations):
                    state.revert_mutation(mutation)
                state.take_journal()
                session.info = before
                if isinstance(exc, SessionError):
                    raise workspace_error(exc) from None
                raise
            log.info("session_finished", session_id=inp.session_id, pruned=len(pruned))
            return {**self.summary(session), "pruned": pruned, "open_todos": result.open_todos}

    def export(self, inp: ExportInput) -> dict[str, Any]:
        """The graph as JSON/node-link/GraphML: inline, or written under the output directory."""
        session = self.get(inp.session_id)
        if inp.format == "neo4j_plan":
            return self._neo4j_plan(inp, session)
        with session.lock:
            text = render.export_text(session, inp.format)
        data = text.encode("utf-8")
        out: dict[str, Any] = {"session_id": inp.session_id, "format": inp.format, "bytes": len(data)}
        if inp.path is None:
            return {**out, "content": text}
        write_inside(self.output_dir, inp.path, data)
        log.info("graph_exported", session_id=inp.session_id, format=inp.format, bytes=len(data))
        return {**out, "path": inp.path}

    def _neo4j_plan(self, inp: ExportInput, session: LiveSession) -> dict[str, Any]:
        """What exporting the session to the Neo4j at NEO4J_URI (scope: the session id) would change."""
        from igg.errors import ExportError
        from igg.export.neo4j import plan_neo4j

        if inp.path is not None:
            raise WorkspaceError("PATH_FORBIDDEN", "format neo4j_plan is returned inline; omit path")
        try:
            with session.lock:
                plan = plan_neo4j(session.state, scope=inp.session_id)
        except ExportError as exc:
            raise WorkspaceError("EXPORT_FAILED", str(exc), status=502) from None
        return {"session_id": inp.session_id, "format": inp.format, "plan": plan}

    def list_sessions(self, inp: ListInput | None = None) -> dict[str, Any]:
        """Sessions, most recently updated first (live sessions of this process as they stand here)."""
        inp = inp or ListInput()
        live = {sid: "awaiting_review" if s.pending is not None else s.info.status
                for sid, s in list(self._live.items())}
        infos = self.repo.sessions(None, inp.limit if inp.status is None else 1_000_000)
        out = [{**i.to_dict(), "status": live.get(i.session_id, i.status)} for i in infos]
        if inp.status is not None:
            out = [s for s in out if s["status"] == inp.status][:inp.limit]
        return {"sessions": out}

    async def execute(self, name: str, inp: Any) -> dict[str, Any]:
        """Run operation ``name`` (see ``igg.workspace.ops``) with its input model.

        Sync work runs in a worker thread, except on a session an autonomous run is changing: that run
        applies its actions on this event loop, so reading the graph here, between its steps, is safe.
        """
        if name == "run_session":
            return await self.run(inp)
        from igg.workspace import history_ops

        methods: dict[str, Callable[[Any], dict[str, Any]]] = {
            "start_session": self.start, "observe": self.observe, "apply_actions": self.apply,
            "finish_session": self.finish, "export_graph": self.export, "list_sessions": self.list_sessions}
        extra = history_ops.OPERATIONS.get(name)
        method = methods[name] if extra is None else (lambda inp: extra(self, inp))
        sid = getattr(inp, "session_id", None)
        live = self._live.get(sid) if isinstance(sid, str) else None
        if live is not None and live.info.status == "running":
            return method(inp)
        out = await asyncio.to_thread(method, inp)
        if name == "review" and inp.decision is not None and sid in self.runs.held:
            # the plan of an autonomous run was decided: its agent takes the next turn (held for review again)
            out["run"] = await self.runs.resume(sid)
            out.update(self.summary(self.get(sid)))
        return out

    async def start_run(self, inp: RunInput) -> dict[str, Any]:
        """Start an autonomous run in the background (see ``igg.workspace.runs``); returns the session summary."""
        return await self.runs.start(inp)

    async def run(self, inp: RunInput) -> dict[str, Any]:
        """An autonomous run to its stop reason; returns the run summary."""
        started = await self.runs.start(inp)
        return await self.runs.wait(started["session_id"])

    # ---- sessions ------------------------------------------------------------------------------------
    def get(self, session_id: str) -> LiveSession:
        """The live session, loaded from the repository (replaying its steps) when not in memory."""
        with self._lock:
            session = self._live.get(session_id)
            if session is not None:
                return session
            try:
                loaded = self.repo.load(session_id)
            except SessionError as exc:
                raise workspace_error(exc) from None
            info = replace(loaded.info, nodes=loaded.state.node_count, edges=loaded.state.edge_count)
            session = LiveSession(request=loaded.request, state=loaded.state, actor=_actor(loaded.request, loaded.state),
                                  info=info, last_record=loaded.last_record, read_records=loaded.read_records)
            from igg.workspace.review import restore

            restore(self, session)
            self._live[session_id] = session
            return session

    def forget(self, session_id: str) -> None:
        """Drop a session from memory (its next use reloads it from the repository, e.g. after an undo)."""
        with self._lock:
            self._live.pop(session_id, None)

    def open_session(self, request: Request | dict[str, Any], status: SessionStatus,
                     agent: str = TOOL_AGENT) -> LiveSession:
        """Check the request, build its graph and record the new session (``start`` and runs use this)."""
        try:
            raw = request.model_dump(by_alias=True, mode="json", exclude_none=True) \
                if isinstance(request, Request) else request
            checked = load_request(raw)
        except RequestInvalid as exc:
            raise WorkspaceError("INVALID_REQUEST", str(exc)) from None
        state, _ = build_state(checked)
        state.take_journal()
        now = self.clock()
        sid = checked.session_id
        assert sid is not None
        info = SessionInfo(session_id=sid, goal=checked.goal_prompt, status=status, agent=agent,
                           nodes=state.node_count, edges=state.edge_count, created_at=now, updated_at=now)
        session = LiveSession(request=checked, state=state, actor=_actor(checked, state), info=info)
        with self._lock:
            if sid in self._live:
                raise workspace_error(SessionExists("", session_id=sid))
            writer = LiveRecorder(self, session, self.repo.recorder(agent=agent, options={"workspace": True}))
            try:
                writer.begin(checked, state, [])
            except SessionError as exc:
                raise workspace_error(exc) from None
            session.writer = writer
            self._live[sid] = session
        return session

    def _writer(self, session: LiveSession) -> Recorder:
        """The session's recorder, claiming the stored session for this process on its first write here."""
        if session.writer is None:
            writer = LiveRecorder(self, session, self.repo.recorder(agent=session.info.agent, resume=True))
            try:
                writer.begin(session.request, session.state, [])
            except SessionError as exc:
                raise workspace_error(exc) from None
            session.writer = writer
        return session.writer

    def _commit(self, session: LiveSession, record: IterationRecord) -> None:
        """Keep an applied iteration; when the repository fails, undo it (memory and store never disagree)
        and let the error through."""
        before, previous = session.info, session.last_record
        try:
            self._writer(session).record(record)
        except BaseException as exc:
            for mutation in reversed(record.mutations):
                session.state.revert_mutation(mutation)
            session.state.take_journal()
            session.info = before
            session.drop_record(record, previous)
            if isinstance(exc, SessionError):
                raise workspace_error(exc) from None
            raise

    def _require_open(self, session: LiveSession) -> None:
        sid = session.info.session_id
        if session.info.status == "finished":
            raise WorkspaceError("SESSION_FINISHED", f"session {sid!r} is finished "
                                 f"({session.info.stop_reason}); observe or export it, or start a new one")
        if session.info.status == "running":
            raise WorkspaceError("SESSION_BUSY", f"session {sid!r} is being built by an autonomous run; "
                                 "wait for it to finish (its events stream shows progress)")

    def refresh_info(self, session: LiveSession, **changes: Any) -> SessionInfo:
        """The session's summary with its current counts and ``changes``."""
        return replace(session.info, nodes=session.state.node_count, edges=session.state.edge_count,
                       updated_at=self.clock(), **changes)

    def summary(self, session: LiveSession) -> dict[str, Any]:
        """The summary every operation answers with."""
        info, limits = session.info, session.request.config.constraints
        status = "awaiting_review" if session.pending is not None else info.status
        return {"session_id": info.session_id, "status": status, "iteration": info.iteration,
                "max_iterations": session.request.config.max_iterations,
                "nodes": info.nodes, "max_nodes": limits.max_nodes, "edges": info.edges,
                "max_edges": limits.max_edges, "stop_reason": info.stop_reason}

    def _publish(self, session: LiveSession, record: IterationRecord) -> None:
        sid = session.info.session_id
        for v in record.verdicts:
            self.hub.publish(Event(kind="action_verdict", session_id=sid, iteration=record.iteration,
                                   data=v.to_dict()))
        self.hub.publish(Event(kind="iteration_finished", session_id=sid, iteration=record.iteration,
                               data=iteration_finished(record, session.state)))


def workspace_error(exc: SessionError) -> WorkspaceError:
    """The workspace's refusal for a session store error (one table: the error's type decides the code)."""
    sid = exc.session_id
    if isinstance(exc, SessionNotFound):
        return WorkspaceError("SESSION_NOT_FOUND", f"no session {sid!r}; list_sessions shows the sessions there "
                              "are, start_session opens a new one")
    if isinstance(exc, SessionExists):
        return WorkspaceError("SESSION_EXISTS", f"a session {sid!r} already exists; omit session_id to get a "
                              "fresh one, or continue that session")
    if isinstance(exc, SessionBusy):
        return WorkspaceError("SESSION_BUSY", f"session {sid!r} cannot be changed here: {exc}")
    return WorkspaceError("STORE_ERROR", str(exc))


def _actor(request: Request, state: GraphState) -> Actor:
    config = request.config
    return Actor(state.schema, config.constraints, config.apply_mode)
