"""The ``/ui`` routes of IGG's HTTP app: the viewer page, its static files and the read-only JSON it draws.

Routes (all ``GET``, behind the same token and bind rules as the rest of the app)::

    /ui/                                        the viewer page (sessions list; ``#session=ID`` shows one)
    /ui/static/{file}                           the page's script, style and vendored libraries (a fixed list)
    /ui/api/sessions                            the sessions, as ``GET /sessions`` lists them
    /ui/api/sessions/{id}/graph?iteration=N     the graph (``igg.view.data``), now or after iteration N;
                                                ``&communities=false``: without computing communities (a
                                                refreshing page keeps its own)
    /ui/api/sessions/{id}/iterations            per iteration: chunk, counts, every rejection with its code
    /ui/api/sessions/{id}/history?element=ID    every stored change of one node or edge
    /ui/api/sessions/{id}/query?q=JSON          one budgeted query (neighbours, path, find): the workspace's
                                                ``query_graph`` operation, the same one the agents' tool calls
    /ui/api/sessions/{id}/events                server-sent events while the session grows, ``end`` when done

A graph after iteration N is read from the session store (its stored mutations up to that iteration), never
recomputed; with an in-memory workspace (``--memory``) only the current graph and a run's own events exist.
The event stream relays the session's events when this server runs it, and otherwise watches the store, so
a run in another process (``igg run --store``) grows on the page too.
"""

from __future__ import annotations

import asyncio
import functools
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from pydantic import ValidationError

from igg.errors import SessionError, SessionNotFound, WorkspaceCode, WorkspaceError
from igg.graph.asof import as_of as as_of_state
from igg.graph.journal import (
    EdgeAdded,
    EdgeDeleted,
    Mutation,
    NodeAdded,
    NodeDeleted,
    NodesMerged,
    NodeUpdated,
)
from igg.models.validtime import TimeError, parse_time
from igg.store.store import SessionStore
from igg.view.data import context_chunks, graph_payload, iteration_summaries, iteration_summary
from igg.view.page import STATIC_FILES, asset, render_page
from igg.workspace import Workspace
from igg.workspace.inputs import ListInput, QueryInput
from igg.workspace.service import workspace_error

POLL_SECONDS = 0.5
"""How often the event stream looks at the store for new steps (runs in other processes)."""

HEARTBEAT_SECONDS = 15.0
"""A comment line this often keeps proxies and the browser from closing an idle stream."""

PAGE_HEADERS = {
    "content-security-policy": "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; worker-src blob:; frame-ancestors 'none'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}
"""The page runs only its own scripts, talks only to this server, and is never framed."""

_TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".md": "text/markdown; charset=utf-8",
}


def ui_router(workspace: Workspace) -> APIRouter:
    """The ``/ui`` routes over ``workspace`` (include them in the app: ``app.include_router(...)``)."""
    router = APIRouter(prefix="/ui", include_in_schema=False)
    _page_routes(router)

    @router.get("/api/sessions")
    async def sessions() -> dict[str, Any]:
        return await workspace.execute(ListInput(limit=1000))

    @router.get("/api/sessions/{session_id}/graph")
    async def graph(
        session_id: str,
        iteration: Annotated[int | None, Query(ge=0)] = None,
        communities: bool = True,
        as_of: Annotated[str | None, Query(max_length=40)] = None,
    ) -> dict[str, Any]:
        at = _valid_at(as_of)
        store = store_of(workspace)
        if store is not None:
            return await asyncio.to_thread(
                stored_graph, workspace, store, session_id, iteration, communities, at
            )
        if iteration is not None:
            raise _no_history()
        return await _live_graph(workspace, session_id, communities, at, as_of)

    @router.get("/api/sessions/{session_id}/iterations")
    async def iterations(session_id: str) -> dict[str, Any]:
        store = store_of(workspace)
        if store is not None:
            return await asyncio.to_thread(stored_iterations, store, session_id)
        session = await asyncio.to_thread(workspace.get, session_id)
        return {
            "session_id": session_id,
            "from_store": False,
            "last_iteration": session.session.last_iteration,
            "iterations": [iteration_summary(r.to_dict()) for r in session.session.records],
        }

    @router.get("/api/sessions/{session_id}/history")
    async def history(
        session_id: str, element: Annotated[str, Query(min_length=1, max_length=200)]
    ) -> dict[str, Any]:
        store = store_of(workspace)
        if store is None:
            raise _no_history()
        return await asyncio.to_thread(element_history, store, session_id, element)

    @router.get("/api/sessions/{session_id}/query")
    async def query(
        session_id: str, q: Annotated[str, Query(min_length=2, max_length=20_000)]
    ) -> dict[str, Any]:
        return await workspace.execute(query_input(session_id, q))

    @router.get("/api/sessions/{session_id}/events", response_class=StreamingResponse)
    async def events(session_id: str) -> StreamingResponse:
        first = await asyncio.to_thread(
            probe, workspace, session_id
        )  # unknown sessions: 404 before streaming
        return StreamingResponse(
            event_stream(workspace, session_id, first),
            media_type="text/event-stream",
            headers={"cache-control": "no-cache", "x-accel-buffering": "no"},
        )

    return router


def _page_routes(router: APIRouter) -> None:
    """Add the page's routes to ``router``: the page, and its static files."""

    @router.get("")
    async def ui_root() -> RedirectResponse:
        return RedirectResponse("/ui/", status_code=307)

    @router.get("/")
    async def page() -> HTMLResponse:
        return HTMLResponse(render_page("server"), headers=PAGE_HEADERS)

    @router.get("/static/{name:path}")
    async def static(name: str) -> Response:
        if name not in STATIC_FILES:
            raise WorkspaceError("NOT_FOUND", f"no static file {name!r} here")
        suffix = name[name.rfind(".") :]
        return Response(
            asset(name),
            media_type=_TYPES.get(suffix, "text/plain; charset=utf-8"),
            headers={"cache-control": "max-age=3600", "x-content-type-options": "nosniff"},
        )


async def _live_graph(
    workspace: Workspace, session_id: str, communities: bool, at: datetime | None, as_of: str | None
) -> dict[str, Any]:
    """The payload of a session of an in-memory workspace, now (``at``: only the facts valid then)."""
    session = await asyncio.to_thread(workspace.get, session_id)
    if at is not None:  # the facts valid then: a new state, read here like the running one
        meta = {
            "session_id": session_id,
            "goal": session.info.goal,
            "status": session.info.status,
            "stop_reason": session.info.stop_reason,
            "iteration": session.info.iteration,
            "last_iteration": session.info.iteration,
            "as_of": as_of,
        }
        return graph_payload(
            as_of_state(session.state, at),
            metadata=meta,
            communities=communities,
            context=context_chunks(session.session.request),
        )
    info = session.info
    meta = {
        "session_id": session_id,
        "goal": info.goal,
        "status": info.status,
        "stop_reason": info.stop_reason,
        "iteration": info.iteration,
        "last_iteration": info.iteration,
    }
    context = context_chunks(session.session.request)
    if (
        info.status == "running"
    ):  # a run changes the graph on this event loop, between its steps: read it here
        return graph_payload(session.state, metadata=meta, communities=communities, context=context)
    return await asyncio.to_thread(
        functools.partial(
            graph_payload, session.state, metadata=meta, communities=communities, context=context
        )
    )


def store_of(workspace: Workspace) -> SessionStore | None:
    """The session store behind the workspace, or None for an in-memory workspace."""
    store = getattr(workspace.repo, "store", None)
    return store if isinstance(store, SessionStore) else None


def query_input(session_id: str, text: str) -> QueryInput:
    """The ``query_graph`` operation's input from the page's ``q`` (the query as JSON); problems are a 422
    naming them."""
    try:
        return QueryInput.model_validate({"session_id": session_id, "query": json.loads(text)})
    except json.JSONDecodeError as exc:
        raise WorkspaceError(
            "INVALID_ARGUMENTS",
            f"q: not JSON ({exc.msg} at character {exc.pos}); send the "
            'query as JSON, e.g. {"query": "neighbours", "node": {"name": "A"}}',
        ) from None
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or '(value)'}: {e['msg']}" for e in exc.errors())
        raise WorkspaceError("INVALID_ARGUMENTS", problems) from None


def _no_history() -> WorkspaceError:
    return WorkspaceError(
        "HISTORY_UNAVAILABLE",
        "this server keeps sessions in memory only: earlier iterations "
        "and element histories need a session store (start it without --memory)",
    )


def _status(workspace: Workspace, session_id: str, stored_status: str) -> str:
    # a session this server holds knows its own status best (as list_sessions shows it)
    live = workspace.held(session_id)
    return str(live.info.status) if live is not None else stored_status


def _valid_at(as_of: str | None) -> datetime | None:
    """The ``as_of`` query parameter as an instant (refused with the time rule when unreadable)."""
    if as_of is None:
        return None
    try:
        return parse_time(as_of)[1]
    except TimeError as exc:
        raise WorkspaceError(WorkspaceCode.INVALID_ARGUMENTS, f"as_of: {exc}") from None


def stored_graph(
    workspace: Workspace,
    store: SessionStore,
    session_id: str,
    iteration: int | None,
    communities: bool = True,
    at: datetime | None = None,
) -> dict[str, Any]:
    """The payload of a stored session, now or after ``iteration`` (``communities``: see ``graph_payload``);
    ``at``: only the facts valid then (``igg.graph.asof``)."""
    try:
        info = store.session(session_id)
        step = store.step_of_iteration(session_id, iteration) if iteration is not None else None
        request, state, _ = store.load_state(session_id, upto_step=step)
    except SessionNotFound as exc:
        raise workspace_error(exc) from None
    except SessionError as exc:  # an iteration the session does not have
        raise WorkspaceError("NO_SUCH_ITERATION", str(exc)) from None
    meta = {
        "session_id": session_id,
        "goal": info.goal,
        "status": _status(workspace, session_id, info.status),
        "stop_reason": info.stop_reason,
        "iteration": iteration if iteration is not None else info.last_iteration,
        "last_iteration": info.last_iteration,
    }
    if at is not None:
        state = as_of_state(state, at)
        meta["as_of"] = at.isoformat()
    return graph_payload(state, metadata=meta, communities=communities, context=context_chunks(request))


def stored_iterations(store: SessionStore, session_id: str) -> dict[str, Any]:
    """Every stored iteration of a session, summarized (see ``iteration_summary``)."""
    try:
        info = store.session(session_id)
        steps = store.steps(session_id)
    except SessionError as exc:
        raise workspace_error(exc) from None
    summaries = iteration_summaries(steps)
    return {
        "session_id": session_id,
        "from_store": True,
        "last_iteration": info.last_iteration,
        "iterations": summaries,
    }


def element_history(store: SessionStore, session_id: str, element: str) -> dict[str, Any]:
    """Every stored mutation of one node or edge, oldest first, with the iteration that made it."""
    try:
        steps = {s.step: s for s in store.steps(session_id, with_records=False)}
    except SessionError as exc:
        raise workspace_error(exc) from None
    changes = []
    for step, m in store.element_history(session_id, [element]):
        info = steps.get(step)
        changes.append(
            {
                "step": step,
                "kind": info.kind if info else None,
                "iteration": info.iteration if info else None,
                "op": m.op,
                "detail": _detail(m),
            }
        )
    return {"session_id": session_id, "element": element, "changes": changes}


def _detail(m: Mutation) -> str:
    match m:
        case NodeAdded():
            return f"added as {m.type} with {_keys(m.properties)}"
        case NodeUpdated():
            return "updated: " + _changed(m.before, m.after)
        case NodeDeleted():
            return "deleted"
        case EdgeAdded():
            return f"added {m.type} edge {m.source} -> {m.target}"
        case EdgeDeleted():
            return f"deleted {m.type} edge {m.source} -> {m.target}"
        case NodesMerged():
            return f"merged {m.id} into {m.into} ({m.moved} of its {len(m.edges)} edges moved); " + _changed(
                m.before, m.after
            )


def _changed(before: dict[str, Any], after: dict[str, Any]) -> str:
    changed = sorted(k for k in after if before.get(k) != after[k])
    removed = sorted(k for k in before if k not in after)
    parts = [f"set {', '.join(changed)}"] if changed else []
    parts += [f"removed {', '.join(removed)}"] if removed else []
    return "; ".join(parts) or "no property changed"


def _keys(props: Any) -> str:
    return ", ".join(sorted(props)) if isinstance(props, dict) and props else "no properties"


@dataclass(frozen=True)
class Probe:
    """What the event stream watches: whether the session is finished and how far it got."""

    finished: bool
    step: int
    iteration: int
    nodes: int
    edges: int


def probe(workspace: Workspace, session_id: str) -> Probe:
    """The session's progress now (from the store when there is one); 404 for an unknown session."""
    store = store_of(workspace)
    if store is not None:
        try:
            info = store.session(session_id)
        except SessionError as exc:
            raise workspace_error(exc) from None
        finished = _status(workspace, session_id, info.status) == "finished"
        return Probe(finished, info.last_step, info.last_iteration, info.nodes, info.edges)
    live = workspace.get(session_id).info
    return Probe(live.status == "finished", live.last_step, live.iteration, live.nodes, live.edges)


def _sse(kind: str, data: dict[str, Any]) -> bytes:
    return f"event: {kind}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


async def event_stream(workspace: Workspace, session_id: str, first: Probe) -> AsyncIterator[bytes]:
    """Server-sent events: the session's own events when this server publishes them, and one
    ``iteration_finished`` per step stored beyond them (by another server on the store, or when this one
    publishes nothing); ``end`` once the session is finished."""
    queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    pump: asyncio.Task[None] | None = None
    if workspace.hub.has(session_id):

        async def relay() -> None:
            async for event in workspace.hub.listen(session_id, follow=not first.finished):
                await queue.put(event)

        pump = asyncio.create_task(relay())
    seen, beat = first, time.monotonic()
    shown = first.iteration  # the last iteration an event was sent for
    try:
        yield b"retry: 2000\n\n"
        while True:
            try:
                event = await asyncio.wait_for(queue.get(), timeout=POLL_SECONDS)
                if event.get("kind") == "iteration_finished":
                    shown = max(shown, int(event.get("iteration") or 0))
                yield _sse(str(event.get("kind")), event)
                continue
            except TimeoutError:
                pass
            now = await asyncio.to_thread(probe, workspace, session_id)
            moved = (now.step, now.nodes, now.edges) != (seen.step, seen.nodes, seen.edges)
            if moved and (pump is None or now.iteration > shown):
                shown = max(shown, now.iteration)
                yield _sse(
                    "iteration_finished",
                    {
                        "kind": "iteration_finished",
                        "session_id": session_id,
                        "iteration": now.iteration,
                        "nodes": now.nodes,
                        "edges": now.edges,
                    },
                )
            seen = now
            if now.finished and queue.empty():
                yield _sse("end", {"kind": "end", "session_id": session_id, "iteration": now.iteration})
                return
            if time.monotonic() - beat > HEARTBEAT_SECONDS:
                beat = time.monotonic()
                yield b": keep-alive\n\n"
    finally:
        if pump is not None:
            pump.cancel()
