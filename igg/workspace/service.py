"""The workspace service: the operations the CLI, the MCP server and the HTTP API share.

A session is a request, its graph state and its history. ``start`` opens one, ``observe`` shows it within a
token budget, ``apply`` validates actions and applies the valid ones (``dry_run`` leaves the graph untouched),
``finish`` closes it (optionally pruning isolated nodes), ``export`` returns or writes the graph, ``list``
shows the sessions and ``run`` lets the server's own agent build a graph (see ``igg.workspace.runs``).
Every result is a JSON-ready dict; every refusal is a ``WorkspaceError`` with a stable code.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import structlog

from igg.act.apply import Actor
from igg.compile import build_state, load_request
from igg.errors import RequestInvalid, WorkspaceError
from igg.graph.state import GraphState
from igg.models.actions import read_response
from igg.models.request import Request
from igg.models.verdicts import Verdict
from igg.records import Event
from igg.workspace import render
from igg.workspace.events import EventHub
from igg.workspace.ops import ApplyInput, ExportInput, FinishInput, ListInput, ObserveInput, RunInput
from igg.workspace.paths import write_inside
from igg.workspace.runs import Runs
from igg.workspace.sessions import MemorySessions, SessionInfo, SessionRepo, Step

log = structlog.get_logger("igg.workspace")


@dataclass(kw_only=True)
class LiveSession:
    """A session loaded in memory: its request, graph, actor and summary."""

    request: Request
    state: GraphState
    actor: Actor
    info: SessionInfo
    last_verdicts: list[Verdict] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


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
            parsed = read_response({"reasoning": inp.reasoning, "actions": inp.actions})
            state = session.state
            iteration = session.info.iteration + 1
            state.iteration, state.chunk = iteration, None
            state.take_journal()
            started = time.perf_counter()
            verdicts = session.actor.apply(state, parsed.items)
            act_ms = round((time.perf_counter() - started) * 1000, 3)
            if inp.dry_run:
                for mutation in reversed(state.take_journal()):
                    state.revert_mutation(mutation)
                state.take_journal()
            else:
                mutations = state.take_journal()
                step = Step(iteration=iteration, reasoning=inp.reasoning, actions=list(inp.actions),
                            verdicts=[v.to_dict() for v in verdicts], mutations=mutations,
                            timings_ms={"act": act_ms, "total": act_ms})
                self._commit(session, step, iteration=iteration)
                session.last_verdicts = verdicts
                self._publish_apply(session, verdicts)
            rejected = Counter(str(v.code) for v in verdicts if not v.accepted)
            log.info("actions_applied", session_id=inp.session_id, dry_run=inp.dry_run, proposed=len(verdicts),
                     accepted=len(verdicts) - sum(rejected.values()), rejected=sum(rejected.values()))
            return {**self.summary(session), "dry_run": inp.dry_run,
                    "verdicts": [v.to_dict() for v in verdicts],
                    "accepted": len(verdicts) - sum(rejected.values()), "rejected": sum(rejected.values()),
                    "rejected_by_code": dict(sorted(rejected.items()))}

    def finish(self, inp: FinishInput) -> dict[str, Any]:
        """Close the session with stop reason ``finished``, pruning isolated nodes when asked."""
        session = self.get(inp.session_id)
        with session.lock:
            self._require_open(session)
            prune = session.request.config.finalize.prune_isolated if inp.prune_isolated is None \
                else inp.prune_isolated
            pruned = prune_isolated(session) if prune else []
            step = Step(iteration=session.info.iteration, kind="finalize", mutations=session.state.take_journal())
            self._commit(session, step, status="finished", stop_reason="finished")
            log.info("session_finished", session_id=inp.session_id, pruned=len(pruned))
            return {**self.summary(session), "pruned": pruned, "open_todos": render.todos(session)}

    def export(self, inp: ExportInput) -> dict[str, Any]:
        """The graph as JSON/node-link/GraphML: inline, or written under the output directory."""
        session = self.get(inp.session_id)
        with session.lock:
            text = render.export_text(session, inp.format)
        data = text.encode("utf-8")
        out: dict[str, Any] = {"session_id": inp.session_id, "format": inp.format, "bytes": len(data)}
        if inp.path is None:
            return {**out, "content": text}
        write_inside(self.output_dir, inp.path, data)
        log.info("graph_exported", session_id=inp.session_id, format=inp.format, bytes=len(data))
        return {**out, "path": inp.path}

    def list(self, inp: ListInput | None = None) -> dict[str, Any]:
        """Sessions, most recently updated first."""
        inp = inp or ListInput()
        running = {sid for sid, s in list(self._live.items()) if s.info.status == "running"}
        infos = self.repo.list(None if inp.status == "running" else inp.status, inp.limit)
        out = [{**i.to_dict(), "status": "running"} if i.session_id in running else i.to_dict() for i in infos]
        if inp.status is not None:
            out = [s for s in out if s["status"] == inp.status]
        return {"sessions": out}

    async def execute(self, name: str, inp: Any) -> dict[str, Any]:
        """Run operation ``name`` (see ``igg.workspace.ops``) with its input model.

        Sync work runs in a worker thread, except on a session an autonomous run is changing: that run
        applies its actions on this event loop, so reading the graph here, between its steps, is safe.
        """
        if name == "run_session":
            return await self.run(inp)
        method = {"start_session": self.start, "observe": self.observe, "apply_actions": self.apply,
                  "finish_session": self.finish, "export_graph": self.export, "list_sessions": self.list}[name]
        sid = getattr(inp, "session_id", None)
        live = self._live.get(sid) if isinstance(sid, str) else None
        if live is not None and live.info.status == "running":
            return method(inp)
        return await asyncio.to_thread(method, inp)

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
            loaded = self.repo.load(session_id)
            info = replace(loaded.info, nodes=loaded.state.node_count, edges=loaded.state.edge_count)
            session = LiveSession(request=loaded.request, state=loaded.state, actor=_actor(loaded.request),
                                  info=info, last_verdicts=[_verdict(v) for v in loaded.last_verdicts])
            self._live[session_id] = session
            return session

    def open_session(self, request: Request | dict[str, Any], status: str, agent: str = "tool") -> LiveSession:
        """Check the request, build its graph and record the new session (``start`` and runs use this)."""
        try:
            raw = request.model_dump(by_alias=True, mode="json", exclude_none=True) \
                if isinstance(request, Request) else request
            checked = load_request(raw)
        except RequestInvalid as exc:
            raise WorkspaceError("INVALID_REQUEST", str(exc), status=422) from None
        state, _ = build_state(checked)
        state.take_journal()
        now = self.clock()
        sid = checked.session_id
        assert sid is not None
        info = SessionInfo(session_id=sid, goal=checked.goal_prompt, status=status,  # type: ignore[arg-type]
                           iteration=0, nodes=state.node_count, edges=state.edge_count, stop_reason=None,
                           created=now, updated=now)
        session = LiveSession(request=checked, state=state, actor=_actor(checked), info=info)
        with self._lock:
            if sid in self._live:
                raise WorkspaceError("SESSION_EXISTS", f"a session {sid!r} already exists; omit session_id to "
                                     "get a fresh one, or continue that session", status=409)
            self.repo.create(checked, info, state, agent=agent)
            self._live[sid] = session
        return session

    def _commit(self, session: LiveSession, step: Step, **changes: Any) -> None:
        """Persist a step whose mutations are applied; when the repository fails, undo them (memory and
        store never disagree) and let the error through."""
        before = session.info
        session.info = self.refresh_info(session, **changes)
        try:
            self.repo.append(step, session.info, session.state)
        except BaseException:
            for mutation in reversed(step.mutations):
                session.state.revert_mutation(mutation)
            session.state.take_journal()
            session.info = before
            raise

    def _require_open(self, session: LiveSession) -> None:
        sid = session.info.session_id
        if session.info.status == "finished":
            raise WorkspaceError("SESSION_FINISHED", f"session {sid!r} is finished "
                                 f"({session.info.stop_reason}); observe or export it, or start a new one",
                                 status=409)
        if session.info.status == "running":
            raise WorkspaceError("SESSION_BUSY", f"session {sid!r} is being built by an autonomous run; "
                                 "wait for it to finish (its events stream shows progress)", status=409)

    def refresh_info(self, session: LiveSession, **changes: Any) -> SessionInfo:
        info = session.info
        values = {**info.__dict__, "nodes": session.state.node_count, "edges": session.state.edge_count,
                  "updated": self.clock(), **changes}
        return SessionInfo(**values)

    def summary(self, session: LiveSession) -> dict[str, Any]:
        info, limits = session.info, session.request.config.constraints
        return {"session_id": info.session_id, "status": info.status, "iteration": info.iteration,
                "max_iterations": session.request.config.max_iterations,
                "nodes": info.nodes, "max_nodes": limits.max_nodes, "edges": info.edges,
                "max_edges": limits.max_edges, "stop_reason": info.stop_reason}

    def _publish_apply(self, session: LiveSession, verdicts: list[Verdict]) -> None:
        sid, iteration = session.info.session_id, session.info.iteration
        for v in verdicts:
            self.hub.publish(Event(kind="action_verdict", session_id=sid, iteration=iteration, data=v.to_dict()))
        self.hub.publish(Event(kind="iteration_finished", session_id=sid, iteration=iteration,
                               data={"accepted": sum(v.accepted for v in verdicts),
                                     "rejected": sum(not v.accepted for v in verdicts),
                                     "nodes": session.info.nodes, "edges": session.info.edges}))


def prune_isolated(session: LiveSession) -> list[dict[str, Any]]:
    """Delete nodes without edges (seed nodes stay when protected); returns them as the loop reports them:
    ``{"id", "type", "properties"}``."""
    state = session.state
    keep_seed = session.request.config.constraints.protect_seed_nodes
    isolated = [n for n in list(state.graph.nodes) if state.graph.degree(n) == 0
                and not (keep_seed and n in state.protected)]
    pruned = []
    for n in isolated:
        pruned.append({"id": n, "type": state.node_type(n), "properties": dict(state.node_properties(n))})
        state.delete_node(n)
    return pruned


def _actor(request: Request) -> Actor:
    config = request.config
    return Actor(config.schema_.compile(), config.constraints, config.apply_mode)


def _verdict(data: dict[str, Any]) -> Verdict:
    from igg.models.verdicts import ErrorCode

    code = data.get("code")
    return Verdict(data["index"], data["action"], data["accepted"], ErrorCode(code) if code else None,
                   data["message"], data.get("element"))
