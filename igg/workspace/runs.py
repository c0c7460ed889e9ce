"""Autonomous runs inside the workspace: the server's own agent builds a graph with the loop (``igg.loop``).

``start`` opens the session (status ``running``), builds the agent from the registry and drives the loop on
the server's event loop in a task of its own; its events go to the workspace's event hub (the HTTP event
stream) and every iteration is written to the session repository as it happens, like a tool session's
applies. While it runs, apply and finish are refused (``SESSION_BUSY``); observe and export work.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import structlog

from igg.errors import IGGError, RequestInvalid, WorkspaceError
from igg.graph.state import GraphState
from igg.models.request import Request
from igg.records import Event
from igg.workspace.sessions import Step

if TYPE_CHECKING:
    from igg.records import IterationRecord, RunResult
    from igg.workspace.ops import RunInput
    from igg.workspace.service import LiveSession, Workspace

log = structlog.get_logger("igg.workspace")


class RepoRecorder:
    """The loop's ``Recorder`` writing a run's iterations into the workspace's session repository."""

    def __init__(self, workspace: Workspace, session: LiveSession) -> None:
        self.workspace = workspace
        self.session = session

    def begin(self, request: Request, state: GraphState, records: list[IterationRecord]) -> None:
        """The session row exists already (``Runs.start`` created it)."""

    def record(self, record: IterationRecord) -> None:
        from igg.store.codec import record_to_dict

        session = self.session
        verdicts = [v.to_dict() for v in record.verdicts]
        session.last_verdicts = list(record.verdicts)
        session.info = self.workspace.refresh_info(session, iteration=record.iteration)
        step = Step(iteration=record.iteration, reasoning=record.reasoning, actions=list(record.actions),
                    verdicts=verdicts, mutations=list(record.mutations), record=record_to_dict(record))
        self.workspace.repo.append(step, session.info, session.state)

    def finish(self, result: RunResult) -> None:
        session = self.session
        session.info = self.workspace.refresh_info(session, status="finished", stop_reason=result.stop_reason)
        step = Step(iteration=session.info.iteration, kind="finalize", mutations=list(result.final_mutations),
                    summary=result.summary())
        self.workspace.repo.append(step, session.info, session.state)


class Runs:
    """Starts autonomous runs and keeps their tasks until they end."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self.tasks: dict[str, asyncio.Task[dict[str, Any]]] = {}

    async def start(self, inp: RunInput) -> dict[str, Any]:
        """Open the session and start its run in the background; returns the session summary."""
        from igg.agents.registry import make_agent
        from igg.errors import AgentUnavailable

        try:
            request = await asyncio.to_thread(_checked, inp.request)
            agent = make_agent(inp.agent, request)
        except RequestInvalid as exc:
            raise WorkspaceError("INVALID_REQUEST", str(exc), status=422) from None
        except AgentUnavailable as exc:
            raise WorkspaceError("AGENT_UNAVAILABLE", str(exc), status=503) from None
        session = await asyncio.to_thread(self.workspace.open_session, request, "running", inp.agent)
        sid = session.info.session_id
        task = asyncio.create_task(self._drive(session, agent), name=f"igg-run-{sid}")
        self.tasks[sid] = task
        task.add_done_callback(lambda _: self.tasks.pop(sid, None))
        log.info("run_started", session_id=sid, agent=inp.agent)
        return self.workspace.summary(session)

    async def wait(self, session_id: str) -> dict[str, Any]:
        """The run's summary once it has ended (call it right after ``start``: ended runs are forgotten)."""
        return await asyncio.shield(self.tasks[session_id])

    async def _drive(self, session: LiveSession, agent: Any) -> dict[str, Any]:
        from igg.loop import arun

        recorder = RepoRecorder(self.workspace, session)
        try:
            result = await arun(session.request, agent, state=session.state, recorder=recorder,
                                on_event=self.workspace.hub.publish)
        except Exception as exc:  # the store failed (or a bug): the session stays, open for the tool agent
            session.info = self.workspace.refresh_info(session, status="open")
            message = str(exc) if isinstance(exc, IGGError) else f"{type(exc).__name__}: {exc}"
            log.error("run_failed", session_id=session.info.session_id, error=message,
                      exc_info=not isinstance(exc, IGGError))
            self.workspace.hub.publish(Event(kind="run_finished", session_id=session.info.session_id,
                                             data={"stop_reason": None, "error": message}))  # ends listeners
            return {**self.workspace.summary(session), "error": message}
        finally:
            close = getattr(agent, "aclose", None)
            if close is not None:
                await close()
        return {**self.workspace.summary(session), **result.summary()}


def _checked(request: Request) -> Request:
    from igg.compile import load_request

    return load_request(request.model_dump(by_alias=True, mode="json", exclude_none=True))
