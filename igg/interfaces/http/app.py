"""IGG's HTTP JSON API (``igg serve``): the workspace operations as routes, plus an event stream.

Routes (bodies are the operation models of ``igg.workspace.ops``; the OpenAPI document is at
``/openapi.json``, Swagger UI at ``/docs``, served from the ``swagger-ui-bundle-v2`` package: it works
offline)::

    GET  /healthz                              liveness (no token needed)
    POST /sessions                             start a session (body: the request payload)      201
    GET  /sessions?status=&limit=              list sessions
    GET  /sessions/{id}                        one session: status, counts and limits, goal, created/updated
    GET  /sessions/{id}/observation?focus=&token_budget=   the budgeted markdown observation
    POST /sessions/{id}/actions                apply actions (body: actions, reasoning, dry_run)
    POST /sessions/{id}/finish                 finish (body: prune_isolated)
    POST /sessions/{id}/export                 export inline or to a file under the output directory
    POST /runs                                 an autonomous run with the server's agent            202
    GET  /sessions/{id}/events                 server-sent events of the session's iterations
    POST /sessions/{id}/query                  a budgeted query (body: {"query": {"query": "neighbours"...}})
    GET  /sessions/{id}/explain?ref=&edges=    the history of a node or edge (needs the store)
    GET  /sessions/{id}/diff?a=&b=             what changed between two iterations (needs the store)
    POST /sessions/{id}/check                  judge dependency rules ({"rules": [...]}) on the graph
    POST /sessions/{id}/undo                   roll back to an iteration (body: {"to_iteration": N})
    POST /sessions/{id}/documents              add documents with their facts (body: {"documents": [...]})
    DELETE /sessions/{id}/documents/{doc}      retract what one document alone supported
    GET  /sessions/{id}/review                 the plan waiting for review (config.review)
    POST /sessions/{id}/review                 approve/reject it (body: plan_id, decision, actions, note)
    GET  /ui/                                  the graph viewer page (see ``igg.interfaces.http.ui``)

Every refusal is ``{"error": {"code": ..., "message": ...}}`` with a 4xx status (a 5xx for a fault of the
server: ``INTERNAL_ERROR`` 500, ``EXPORT_FAILED`` 507 on a full disk); the codes are the workspace's
(``SESSION_NOT_FOUND``, ``PATH_FORBIDDEN``, ...) and the verdicts' (``INVALID_JSON``, ``INVALID_RESPONSE``)
where they mean the same thing. A body that is not JSON (a syntax error, invalid UTF-8, nesting deeper than
the parser goes) is ``INVALID_JSON``; a bad request payload ``INVALID_REQUEST``; bad path or query values and
other bodies ``INVALID_ARGUMENTS``; an unknown route ``NOT_FOUND``; a known route with another method
``METHOD_NOT_ALLOWED``. Messages name HTTP routes (``GET /sessions``), where the MCP tools' messages name
tools (``list_sessions``). ``created`` and ``updated`` are RFC 3339 UTC timestamps
(``2026-11-23T18:02:51.123Z``).
"""

from __future__ import annotations

import asyncio
import json
import typing
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse, StreamingResponse
from fastapi.staticfiles import StaticFiles
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect

from igg.errors import WorkspaceError
from igg.interfaces.codes import http_status
from igg.interfaces.version import package_version
from igg.io.encodable import first_unencodable
from igg.record.logs import get_logger
from igg.workspace import Workspace
from igg.workspace.inputs import SessionRef, inline_refs
from igg.workspace.ops import Operation, Route
from igg.workspace.outputs import HealthOutput, SessionOutput

log = get_logger("igg.http")

_STATUS_CODES = {
    400: "BAD_REQUEST",
    401: "UNAUTHORIZED",
    403: "FORBIDDEN",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    406: "NOT_ACCEPTABLE",
    413: "PAYLOAD_TOO_LARGE",
    415: "UNSUPPORTED_MEDIA_TYPE",
}


class EncodableJSONResponse(JSONResponse):
    """JSON whose text can always be sent: a lone surrogate that reached an answer goes out as its ``\\u``
    escape (a JSON reader gets the same string) instead of failing the response with a 500."""

    def render(self, content: Any) -> bytes:
        text = json.dumps(content, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        if first_unencodable(text) is not None:
            text = json.dumps(content, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
        return text.encode("utf-8")


def error(status: int, code: str, message: str) -> JSONResponse:
    """The JSON error envelope."""
    return EncodableJSONResponse({"error": {"code": code, "message": message}}, status_code=status)


def build_app(workspace: Workspace) -> FastAPI:
    """The FastAPI application over ``workspace``."""
    app = FastAPI(
        title="IGG",
        summary="A validated, bounded graph workspace for agents.",
        description=__doc__,
        version=package_version(),
        default_response_class=EncodableJSONResponse,
        docs_url=None,
        redoc_url=None,
    )
    _offline_docs(app)
    _error_handlers(app, {op.name: str(op.routes[0]) for op in workspace.operations if op.routes})
    _session_routes(app, workspace)
    _operation_routes(app, workspace)
    from igg.interfaces.http.ui import ui_router

    app.include_router(ui_router(workspace))
    return app


def _error_handlers(app: FastAPI, routes: dict[str, str]) -> None:
    """Every refusal in the one JSON envelope: workspace errors, invalid arguments, unknown routes, crashes.
    ``routes``: the route of each operation a refusal can point at (``WorkspaceError.tools``)."""

    @app.exception_handler(WorkspaceError)
    async def _workspace_error(_: Request, exc: WorkspaceError) -> JSONResponse:
        return error(http_status(exc), exc.code, exc.render(lambda tool: routes.get(tool, tool)))

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = []
        code = None
        for e in exc.errors():
            if e.get("type") == "json_invalid":
                code = "INVALID_JSON"
                problems.append(
                    f"the body is not JSON: {e.get('ctx', {}).get('error', e.get('msg'))} at "
                    f"character {e.get('loc', ('body', '?'))[-1]}"
                )
                continue
            where = tuple(e.get("loc", ()))
            loc = (
                ".".join(str(p) for p in where[1:] if p != "body")
                if where[:1] in (("body",), ("query",), ("path",))
                else ".".join(map(str, where))
            )
            problems.append(f"{loc or '(body)'}: {e.get('msg')}")
        return error(422, code or "INVALID_ARGUMENTS", "; ".join(problems))

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        cause = exc.__cause__
        if exc.status_code == 400 and cause is not None:  # FastAPI could not parse the body
            if isinstance(cause, UnicodeDecodeError):
                reason = f"it is not valid UTF-8 (byte {cause.start})"
            elif isinstance(cause, RecursionError):
                reason = "its JSON nests deeper than the server reads"
            else:
                reason = f"{type(cause).__name__}"
            return error(422, "INVALID_JSON", f"the body is not JSON IGG can read: {reason}; send UTF-8 JSON")
        if exc.status_code == 404:
            message = (
                f"no route {request.method} {request.url.path}; see /openapi.json for the routes "
                "(e.g. POST /sessions, GET /sessions/{id}/observation)"
            )
        elif exc.status_code == 405:
            allowed = (exc.headers or {}).get("allow") or (exc.headers or {}).get("Allow") or ""
            message = f"{request.method} is not allowed on {request.url.path}" + (
                f"; use {allowed}" if allowed else ""
            )
        else:
            message = str(exc.detail)
        code = _STATUS_CODES.get(exc.status_code, f"HTTP_{exc.status_code}")
        response = error(exc.status_code, code, message)
        for key, value in (exc.headers or {}).items():
            response.headers[key] = value
        return response

    @app.exception_handler(Exception)
    async def _crash(request: Request, exc: Exception) -> JSONResponse:
        log.error(
            "http_request_failed",
            method=request.method,
            path=request.url.path,
            error=type(exc).__name__,
            exc_info=exc,
        )
        return error(500, "INTERNAL_ERROR", "the server failed on this request; its log has the details")


def _session_routes(app: FastAPI, workspace: Workspace) -> None:
    """Liveness, sessions, observation, actions, finish, export, runs and the event stream."""

    @app.get("/healthz", summary="Liveness", response_model=HealthOutput)
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get(
        "/sessions/{session_id}",
        summary="A session: status, counts, limits, goal, times",
        response_model=SessionOutput,
    )
    async def session_info(session_id: str) -> JSONResponse:
        inp = _validate(SessionRef, session_id=session_id)
        session = await asyncio.to_thread(workspace.get, inp.session_id)  # may load it from the store
        info = session.info
        out = {
            **info.to_dict(),
            **workspace.summary(session),
            "agent": info.agent,
            "max_iterations": session.request.config.max_iterations,
        }
        SessionOutput.model_validate(out)  # what the OpenAPI says it answers, checked
        return EncodableJSONResponse(out)

    @app.get(
        "/sessions/{session_id}/events",
        summary="Stream a session's events (server-sent events)",
        response_class=StreamingResponse,
        responses={
            200: {
                "description": (
                    "`event: KIND` and `data: {JSON}` per event (run_started, iteration_finished, ...)"
                ),
                "content": {"text/event-stream": {"schema": {"type": "string"}}},
            }
        },
    )
    async def events(session_id: str, request: Request) -> StreamingResponse:
        session = await asyncio.to_thread(workspace.get, session_id)  # may load it from the store
        # a run of this process stores its end before it publishes run_finished: follow it until it has
        follow = session.info.status == "running" or session_id in workspace.runs.tasks
        return StreamingResponse(
            _sse(workspace, session_id, follow, request),
            media_type="text/event-stream",
            headers={"cache-control": "no-cache"},
        )


def _operation_routes(app: FastAPI, workspace: Workspace) -> None:
    """Each route of each operation (``Operation.routes``), its request and response models in the OpenAPI."""
    for op in workspace.operations:
        for i, route in enumerate(op.routes):
            app.add_api_route(
                route.path,
                _endpoint(workspace, op, route),
                methods=[route.method],
                status_code=route.status,
                summary=route.summary or op.name,
                description=op.description,
                response_model=op.output,
                operation_id=op.name if i == 0 else f"{op.name}_{route.method.lower()}",
                openapi_extra=_openapi(op, route),
            )


def _endpoint(
    workspace: Workspace, op: Operation, route: Route
) -> Callable[[Request], Awaitable[JSONResponse]]:
    """The route's endpoint: the input model from the path, and the query string or the JSON body, validated
    once; then the operation (or the route's own handler)."""
    fields = op.input.model_fields
    lists = {name for name, f in fields.items() if typing.get_origin(f.annotation) is list}

    async def endpoint(request: Request) -> JSONResponse:
        values: dict[str, Any] = {}
        if route.arguments == "query":
            for key in request.query_params:
                if key in fields:  # as a route with declared query parameters, others are ignored
                    given = request.query_params.getlist(key)
                    values[key] = given if key in lists else given[-1]
        elif route.arguments == "body":
            try:
                values = await _body(request, op)
            except (
                ClientDisconnect
            ):  # the client went away (or the guard cut it off and answered): no one reads
                return error(
                    400, "CLIENT_DISCONNECTED", "the client closed the connection before its body arrived"
                )
        values.update(request.path_params)
        try:
            inp = op.input.model_validate(values)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or '(body)'}: {e['msg']}" for e in exc.errors()
            )
            return error(422, op.invalid_code([tuple(e["loc"]) for e in exc.errors()]), problems)
        return EncodableJSONResponse(await workspace.serve(op, inp, route.handler), status_code=route.status)

    return endpoint


async def _body(request: Request, op: Operation) -> dict[str, Any]:
    """The JSON object a body holds (an empty body: no arguments); INVALID_JSON when it is not JSON IGG can
    read."""
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        parsed = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise _invalid_json(f"it is not valid UTF-8 (byte {exc.start})") from None
    except RecursionError:
        raise _invalid_json("its JSON nests deeper than the server reads") from None
    except json.JSONDecodeError as exc:
        raise WorkspaceError(
            "INVALID_JSON", f"the body is not JSON: {exc.msg} at character {exc.pos}"
        ) from None
    if not isinstance(parsed, dict):
        code = op.invalid_code([("(body)",)])
        raise WorkspaceError(code, f"(body): the body must be a JSON object, not {type(parsed).__name__}")
    return parsed


def _invalid_json(reason: str) -> WorkspaceError:
    return WorkspaceError("INVALID_JSON", f"the body is not JSON IGG can read: {reason}; send UTF-8 JSON")


def _openapi(op: Operation, route: Route) -> dict[str, Any]:
    """The route's request in the OpenAPI: path parameters, and the query parameters or the JSON body, from
    the operation's input model."""
    schema = inline_refs(op.input.model_json_schema(by_alias=True))
    properties, required = schema.get("properties", {}), set(schema.get("required", []))
    parameters = [
        {"name": name, "in": "path", "required": True, "schema": properties.get(name, {"type": "string"})}
        for name in route.parameters
    ]
    extra: dict[str, Any] = {}
    if route.arguments == "query":
        parameters += [
            {"name": name, "in": "query", "required": name in required, "schema": prop}
            for name, prop in properties.items()
            if name not in route.parameters
        ]
    elif route.arguments == "body":
        body = {
            **schema,
            "properties": {k: v for k, v in properties.items() if k not in route.parameters},
            "required": sorted(required - set(route.parameters)),
        }
        extra["requestBody"] = {
            "required": bool(body["required"]),
            "content": {"application/json": {"schema": body}},
        }
    if parameters:
        extra["parameters"] = parameters
    return extra


def _offline_docs(app: FastAPI) -> None:
    """``/docs``: Swagger UI from the files of the ``swagger_ui_bundle`` package, so the page works without
    a network (FastAPI's default loads it from a CDN); its validator badge, which calls swagger.io, is off."""
    from swagger_ui_bundle import swagger_ui_path  # type: ignore[import-untyped]

    app.mount("/docs/static", StaticFiles(directory=swagger_ui_path), name="swagger-ui")

    @app.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url="/openapi.json",
            title="IGG API",
            swagger_js_url="/docs/static/swagger-ui-bundle.js",
            swagger_css_url="/docs/static/swagger-ui.css",
            swagger_favicon_url="/docs/static/favicon-32x32.png",
            swagger_ui_parameters={"validatorUrl": None},
        )


async def _sse(workspace: Workspace, session_id: str, follow: bool, request: Request) -> AsyncIterator[bytes]:
    """The session's events as server-sent events; stops when the client has gone."""
    index = 0
    relay = asyncio.create_task(workspace.relay_store(session_id)) if follow else None
    try:
        async for event in workspace.hub.listen(session_id, follow=follow):
            index += 1
            data = json.dumps(event, ensure_ascii=False)
            if first_unencodable(data) is not None:
                data = json.dumps(event, ensure_ascii=True)
            yield f"id: {index}\nevent: {event['kind']}\ndata: {data}\n\n".encode()
            await asyncio.sleep(0)  # let a closed connection be noticed before the next event
            if await request.is_disconnected():
                log.debug("sse_client_gone", session_id=session_id, sent=index)
                return
    finally:
        if relay is not None:
            relay.cancel()


def _validate(model: Any, **values: Any) -> Any:
    """The operation model from path, query and body values; problems become 422 INVALID_ARGUMENTS."""
    from pydantic import ValidationError

    try:
        return model.model_validate(values)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or '(value)'}: {e['msg']}" for e in exc.errors())
        raise WorkspaceError("INVALID_ARGUMENTS", problems) from None
