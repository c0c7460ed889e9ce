"""IGG's HTTP JSON API (``igg serve``): the workspace operations as routes, plus an event stream.

Routes (bodies are the operation models of ``igg.workspace.ops``; the OpenAPI document is at
``/openapi.json``, an explorer at ``/docs``)::

    GET  /healthz                              liveness (no token needed)
    POST /sessions                             start a session (body: the request payload)      201
    GET  /sessions?status=&limit=              list sessions
    GET  /sessions/{id}/observation?focus=&token_budget=   the budgeted markdown observation
    POST /sessions/{id}/actions                apply actions (body: actions, reasoning, dry_run)
    POST /sessions/{id}/finish                 finish (body: prune_isolated)
    POST /sessions/{id}/export                 export inline or to a file under the output directory
    POST /runs                                 an autonomous run with the server's agent            202
    GET  /sessions/{id}/events                 server-sent events of the session's iterations
    POST /sessions/{id}/query                  a budgeted query (body: {"query": {"query": "neighbours", ...}})
    GET  /sessions/{id}/explain?ref=&edges=    the history of a node or edge (needs the store)
    GET  /sessions/{id}/diff?a=&b=             what changed between two iterations (needs the store)
    POST /sessions/{id}/undo                   roll back to an iteration (body: {"to_iteration": N})
    GET  /sessions/{id}/review                 the plan waiting for review (config.review)
    POST /sessions/{id}/review                 approve/reject it (body: plan_id, decision, actions, note)
    GET  /ui/                                  the graph viewer page (see ``igg.view.routes``)

Every refusal is ``{"error": {"code": ..., "message": ...}}`` with a 4xx status; the codes are the
workspace's (``SESSION_NOT_FOUND``, ``PATH_FORBIDDEN``, ...) and the verdicts' (``INVALID_JSON``,
``INVALID_RESPONSE``) where they mean the same thing.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import Body, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, StreamingResponse

from igg.errors import WorkspaceError
from igg.models.request import Request as GraphRequest
from igg.workspace import Workspace
from igg.workspace.ops import (
    ApplyBody,
    ApplyInput,
    DiffInput,
    ExplainInput,
    ExportBody,
    ExportInput,
    FinishBody,
    FinishInput,
    ListInput,
    ObserveInput,
    QueryInput,
    ReviewInput,
    RunInput,
    UndoInput,
)

_BODY_CODES = {"/sessions": "INVALID_REQUEST", "/runs": "INVALID_REQUEST"}


def error(status: int, code: str, message: str) -> JSONResponse:
    """The JSON error envelope."""
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


def build_app(workspace: Workspace) -> FastAPI:
    """The FastAPI application over ``workspace``."""
    app = FastAPI(title="IGG", summary="A validated, bounded graph workspace for agents.",
                  description=__doc__, version="1")

    @app.exception_handler(WorkspaceError)
    async def _workspace_error(_: Request, exc: WorkspaceError) -> JSONResponse:
        return error(exc.status, exc.code, exc.message)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = []
        code = None
        for e in exc.errors():
            if e.get("type") == "json_invalid":
                code = "INVALID_JSON"
            loc = ".".join(str(p) for p in e.get("loc", ()) if p != "body")
            problems.append(f"{loc or '(body)'}: {e.get('msg')}")
        path = request.url.path
        if code is None:
            code = _BODY_CODES.get(path) or ("INVALID_RESPONSE" if path.endswith("/actions") else "INVALID_ARGUMENTS")
        return error(422, code, "; ".join(problems))

    @app.get("/healthz", summary="Liveness")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.post("/sessions", status_code=201, summary="Start a session")
    async def start_session(request: GraphRequest) -> dict[str, Any]:
        return await workspace.execute("start_session", request)

    @app.get("/sessions", summary="List sessions")
    async def list_sessions(status: Annotated[str | None, Query()] = None,
                            limit: Annotated[int, Query(ge=1, le=1000)] = 100) -> dict[str, Any]:
        return await workspace.execute("list_sessions", _validate(ListInput, status=status, limit=limit))

    @app.get("/sessions/{session_id}/observation", summary="Observe a session")
    async def observe(session_id: str, focus: Annotated[list[str] | None, Query()] = None,
                      token_budget: Annotated[int | None, Query()] = None) -> dict[str, Any]:
        inp = _validate(ObserveInput, session_id=session_id, focus=focus or [], token_budget=token_budget)
        return await workspace.execute("observe", inp)

    @app.post("/sessions/{session_id}/actions", summary="Apply actions")
    async def apply_actions(session_id: str, body: ApplyBody) -> dict[str, Any]:
        inp = _validate(ApplyInput, session_id=session_id, **body.model_dump())
        return await workspace.execute("apply_actions", inp)

    @app.post("/sessions/{session_id}/finish", summary="Finish a session")
    async def finish(session_id: str, body: Annotated[FinishBody | None, Body()] = None) -> dict[str, Any]:
        inp = _validate(FinishInput, session_id=session_id, **(body or FinishBody()).model_dump())
        return await workspace.execute("finish_session", inp)

    @app.post("/sessions/{session_id}/export", summary="Export a session's graph")
    async def export(session_id: str, body: Annotated[ExportBody | None, Body()] = None) -> dict[str, Any]:
        inp = _validate(ExportInput, session_id=session_id, **(body or ExportBody()).model_dump())
        return await workspace.execute("export_graph", inp)

    @app.post("/runs", status_code=202, summary="Start an autonomous run")
    async def start_run(body: RunInput) -> dict[str, Any]:
        started = await workspace.start_run(body)
        return {**started, "events": f"/sessions/{started['session_id']}/events"}

    @app.get("/sessions/{session_id}/events", summary="Stream a session's events (server-sent events)",
             response_class=StreamingResponse)
    async def events(session_id: str) -> StreamingResponse:
        session = workspace.get(session_id)
        follow = session.info.status == "running"
        return StreamingResponse(_sse(workspace, session_id, follow), media_type="text/event-stream",
                                 headers={"cache-control": "no-cache"})

    @app.post("/sessions/{session_id}/query", summary="Ask a budgeted query about the graph")
    async def query(session_id: str, body: Annotated[dict[str, Any], Body()]) -> dict[str, Any]:
        return await workspace.execute("query_graph", _validate(QueryInput, **{**body, "session_id": session_id}))

    @app.get("/sessions/{session_id}/explain", summary="The history of a node or edge")
    async def explain(session_id: str, ref: Annotated[str, Query()],
                      edges: Annotated[bool, Query()] = True) -> dict[str, Any]:
        return await workspace.execute("explain", _validate(ExplainInput, session_id=session_id, ref=ref, edges=edges))

    @app.get("/sessions/{session_id}/diff", summary="What changed between two iterations")
    async def diff(session_id: str, a: Annotated[int, Query()], b: Annotated[int, Query()]) -> dict[str, Any]:
        return await workspace.execute("diff", _validate(DiffInput, session_id=session_id, a=a, b=b))

    @app.post("/sessions/{session_id}/undo", summary="Roll a session back to an iteration")
    async def undo(session_id: str, body: Annotated[dict[str, Any], Body()]) -> dict[str, Any]:
        return await workspace.execute("undo", _validate(UndoInput, **{**body, "session_id": session_id}))

    @app.get("/sessions/{session_id}/review", summary="The plan waiting for review")
    async def review_show(session_id: str) -> dict[str, Any]:
        return await workspace.execute("review", _validate(ReviewInput, session_id=session_id))

    @app.post("/sessions/{session_id}/review", summary="Approve or reject the plan waiting for review")
    async def review_decide(session_id: str, body: Annotated[dict[str, Any], Body()]) -> dict[str, Any]:
        return await workspace.execute("review", _validate(ReviewInput, **{**body, "session_id": session_id}))

    from igg.view.routes import ui_router

    app.include_router(ui_router(workspace))
    return app


async def _sse(workspace: Workspace, session_id: str, follow: bool) -> AsyncIterator[bytes]:
    index = 0
    async for event in workspace.hub.listen(session_id, follow=follow):
        index += 1
        yield f"id: {index}\nevent: {event['kind']}\ndata: {json.dumps(event, ensure_ascii=False)}\n\n".encode()


def _validate(model: Any, **values: Any) -> Any:
    """The operation model from path, query and body values; problems become 422 INVALID_ARGUMENTS."""
    from pydantic import ValidationError

    try:
        return model.model_validate(values)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or '(value)'}: {e['msg']}" for e in exc.errors())
        raise WorkspaceError("INVALID_ARGUMENTS", problems, status=422) from None
