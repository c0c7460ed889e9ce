"""Autonomous runs inside the workspace: the server's own agent builds a graph through ``igg.service``.

``start`` opens the session (status ``running``), builds the agent from the registry and runs it with
``igg.service.arun_request`` (the same function ``igg run`` calls) on the server's event loop, in a task of
its own; its events go to the workspace's event hub (the HTTP event stream), every iteration is kept through
the session's recorder (the workspace's repository) as it happens, and the requested exports are written
under the server's output directory when it ends, as ``igg run --export`` writes them. While it runs, apply
and finish are refused (``SESSION_BUSY``); observe and export work.

With ``config.review`` the run stops at the first turn with actions, ``awaiting_review``: the plan waits on
the live session (in memory, and in the store when there is one) and its agent is held. A ``review`` decision
over the same interface applies the plan (or rejects it, the note shown to the agent) and the held agent takes
the next turn, which waits in its turn: the decision answers once the run stops again (``run``: its summary).
A server restarted meanwhile has no agent to hold: the decision is applied, and ``igg resume`` continues a
stored session.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from igg.agents.base import capabilities
from igg.errors import AgentUnavailable, IGGError, RequestInvalid, WorkspaceError
from igg.export.spec import DEFAULT_FILES, ExportSpec, parse_export_spec
from igg.models.request import Request
from igg.persistence import SessionRepo, SessionStatus
from igg.record.logs import get_logger
from igg.record.records import Event
from igg.workspace.events import EventHub
from igg.workspace.live import LiveSession, summary
from igg.workspace.paths import check_output

if TYPE_CHECKING:
    from igg.workspace.inputs import RunInput

log = get_logger("igg.workspace")


@dataclass(kw_only=True)
class Held:
    """A run stopped with its turn waiting for review: what continues it after the decision."""

    agent: Any
    specs: list[ExportSpec]
    provenance: bool
    watcher: asyncio.Task[None] | None = None
    """Watches the store for the decision taken by another server (several servers on one store)."""


class RunHost(Protocol):
    """What runs need of the workspace that starts them."""

    hub: EventHub
    output_dir: Path | None
    repo: SessionRepo

    def open_session(self, request: Request, status: SessionStatus, agent: str = ...) -> LiveSession: ...

    def get(self, session_id: str) -> LiveSession: ...


WATCH_SECONDS = 0.5
"""How often a run held for review looks at the store for a decision taken through another server."""


class Runs:
    """Starts autonomous runs and keeps their tasks until they end (and their agents while they wait for a
    review decision)."""

    def __init__(self, workspace: RunHost) -> None:
        self.workspace = workspace
        self.tasks: dict[str, asyncio.Task[dict[str, Any]]] = {}
        self.held: dict[str, Held] = {}

    async def start(self, inp: RunInput) -> dict[str, Any]:
        """Open the session and start its run in the background; returns the session summary."""
        from igg.agents.registry import make_agent

        try:
            request = await asyncio.to_thread(_checked, inp.as_request())
            specs = export_specs(inp.exports, self.workspace.output_dir, request.session_id or "run")
            agent = make_agent(inp.agent, request)
        except RequestInvalid as exc:
            raise WorkspaceError("INVALID_REQUEST", str(exc)) from None
        except AgentUnavailable as exc:
            raise WorkspaceError("AGENT_UNAVAILABLE", str(exc)) from None
        session = await asyncio.to_thread(self.workspace.open_session, request, "running", inp.agent)
        sid = session.info.session_id
        task = asyncio.create_task(self._drive(session, agent, specs, inp.provenance), name=f"igg-run-{sid}")
        self.tasks[sid] = task
        task.add_done_callback(lambda _: self.tasks.pop(sid, None))
        log.info("run_started", session_id=sid, agent=inp.agent)
        return summary(session)

    async def wait(self, session_id: str) -> dict[str, Any]:
        """The run's summary once it has ended (call it right after ``start``: ended runs are forgotten)."""
        return await asyncio.shield(self.tasks[session_id])

    async def resume(self, session_id: str) -> dict[str, Any] | None:
        """Continue a run held for review once its plan is decided; its summary when it stops again (None: it
        is not held here, or another caller resumed it first)."""
        held = self.held.pop(session_id, None)
        if held is None:
            return None
        if held.watcher is not None and held.watcher is not asyncio.current_task():
            held.watcher.cancel()
        live = await asyncio.to_thread(self.workspace.get, session_id)
        with live.lock:
            owner = live.session
            note = owner.take_review_note()
            notes = [f"A reviewer rejected your last plan: {note}"] if note else []
            await asyncio.to_thread(lambda: owner.records)  # read here, off the event loop, when not yet read
        task = asyncio.create_task(
            self._drive(live, held.agent, held.specs, held.provenance, notes=notes),
            name=f"igg-run-{session_id}",
        )
        self.tasks[session_id] = task
        task.add_done_callback(lambda _: self.tasks.pop(session_id, None))
        log.info("run_resumed", session_id=session_id)
        return await asyncio.shield(task)

    async def _watch(self, session_id: str, version: int) -> None:
        """Resume a held run once the store shows its plan decided by another server (polled every
        ``WATCH_SECONDS``)."""
        while session_id in self.held:
            await asyncio.sleep(WATCH_SECONDS)
            try:
                now = await asyncio.to_thread(self.workspace.repo.version, session_id)
                if now == version:
                    continue
                version = now or version
                live = await asyncio.to_thread(self.workspace.get, session_id)  # loads what the other stored
            except IGGError as exc:
                log.warning("review_watch_failed", session_id=session_id, error=str(exc))
                continue
            if live.session.pending is None:
                log.info("review_decided_elsewhere", session_id=session_id)
                await self.resume(session_id)
                return

    async def _drive(
        self,
        live: LiveSession,
        agent: Any,
        specs: list[ExportSpec],
        provenance: bool,
        *,
        notes: list[str] | None = None,
    ) -> dict[str, Any]:
        from igg.service import arun_request

        owner = live.session
        sid = owner.session_id
        held = False
        repo = self.workspace.repo
        try:
            await asyncio.to_thread(repo.claim, sid)  # other servers' writers wait until the run stops
            result = await arun_request(
                owner.request,
                agent,
                session=owner,
                notes=notes or [],
                exports=specs,
                provenance=provenance,
                plans=owner.plans,
                on_event=self.workspace.hub.publish,
            )
            if (
                result.review is not None
            ):  # waits for a decision (Session.decide); the agent takes the next turn
                held = True
                version = await asyncio.to_thread(repo.version, sid)
                self.held[sid] = Held(agent=agent, specs=specs, provenance=provenance)
                if version is not None:  # a decision may come through another server on the store
                    self.held[sid].watcher = asyncio.create_task(
                        self._watch(sid, version), name=f"igg-review-watch-{sid}"
                    )
        except Exception as exc:  # the store failed (or a bug): the session stays, open for the tool agent
            owner.let_go()
            message = str(exc) if isinstance(exc, IGGError) else f"{type(exc).__name__}: {exc}"
            log.error("run_failed", session_id=sid, error=message, exc_info=not isinstance(exc, IGGError))
            self.workspace.hub.publish(
                Event(kind="run_finished", session_id=sid, data={"stop_reason": None, "error": message})
            )  # ends listeners
            return {**summary(live), "error": message}
        finally:
            with contextlib.suppress(IGGError):
                await asyncio.to_thread(repo.release, sid)
            if not held:
                await capabilities(agent).aclose()
        out = {**summary(live), **result.summary()}
        if result.export_error is not None:
            out["export_error"] = str(result.export_error)
        return out


def export_specs(texts: list[str], output_dir: Path | None, session_id: str) -> list[ExportSpec]:
    """The exports a run asked for (``FORMAT[:PATH]``), their files resolved under the server's output
    directory (default ``SESSION/graph.EXT``); ``neo4j`` goes to the server's configured ``NEO4J_URI``
    only."""
    from igg.errors import Problem

    specs: list[ExportSpec] = []
    for i, text in enumerate(texts):
        try:
            spec = parse_export_spec(text)
        except IGGError as exc:
            raise RequestInvalid([Problem(f"exports[{i}]", str(exc))], source="run") from None
        if spec.format == "neo4j":
            if spec.target:
                raise WorkspaceError(
                    "PATH_FORBIDDEN",
                    f"exports[{i}]: {text!r} names a server; a run's neo4j "
                    "export goes to the server's configured NEO4J_URI: give just 'neo4j'",
                )
            specs.append(spec)
            continue
        relative = spec.target or f"{session_id}/{DEFAULT_FILES[spec.format]}"
        check_output(output_dir, relative)
        assert output_dir is not None
        specs.append(ExportSpec(spec.format, relative, base=output_dir))
    return specs


def _checked(request: Request) -> Request:
    from igg.request.load import load_request

    return load_request(request.model_dump(by_alias=True, mode="json", exclude_none=True), ontologies=False)
