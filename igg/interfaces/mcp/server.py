"""IGG's MCP server: one tool per workspace operation, over stdio or streamable HTTP.

This is the only module that imports the ``mcp`` SDK (2.x, ``MCPServer``). Each tool's input is the
operation's pydantic input model (``igg.workspace.ops``): the tool function gets a signature built from the
model's fields, from which the SDK builds its argument model; ``tools/list`` publishes the compact schema of
``igg.workspace.toolschema`` instead of the SDK's (``Tool.parameters``, pydantic's full JSON Schema with its
titles and every description), the same one ``igg tools`` prints. Tool annotations
carry the operation's read-only / destructive / idempotent / open-world hints. Results are JSON (structured
content and its text); ``observe`` answers with the markdown itself. A refused call is a tool error whose
text starts with its stable code (``SESSION_NOT_FOUND: ...``), and so is every other failure: arguments
that break the tool's input model (unknown keys included, as over HTTP) are ``INVALID_REQUEST`` (the
request of start_session and run_session), ``INVALID_RESPONSE`` (the actions of apply_actions) or
``INVALID_ARGUMENTS``; an unknown tool ``UNKNOWN_TOOL``; a fault of the server ``INTERNAL_ERROR``.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from mcp.types import Tool as MCPTool
from pydantic import Field, ValidationError

from igg.errors import WorkspaceError
from igg.interfaces.logs import route_stdlib_logging
from igg.interfaces.mcp.handshake import INSTRUCTIONS, EarlyAnswer
from igg.interfaces.version import package_version
from igg.io.encodable import escape_unencodable, find_unencodable, first_unencodable
from igg.io.encodable import escape_value as _escaped
from igg.record.logs import get_logger
from igg.workspace.ops import OPERATIONS_BY_NAME, Operation
from igg.workspace.service import Workspace
from igg.workspace.toolschema import hints, mcp_tools

log = get_logger("igg.mcp")


def tool_error(code: str, message: str) -> CallToolResult:
    """A refused call: text ``CODE: message`` and the same as ``{"error": {"code", "message"}}``."""
    return CallToolResult(
        content=[TextContent(type="text", text=f"{code}: {message}")],
        structured_content={"error": {"code": code, "message": message}},
        is_error=True,
    )


def argument_code(op: Operation, exc: ValidationError) -> str:
    """The stable code for arguments that break ``op``'s input model (the HTTP API's codes)."""
    return op.invalid_code([tuple(e["loc"]) for e in exc.errors()])


def argument_problems(exc: ValidationError) -> str:
    """The problems of a ``ValidationError`` on one line, located by argument path."""
    return "; ".join(f"{'.'.join(map(str, e['loc'])) or '(arguments)'}: {e['msg']}" for e in exc.errors())


class IGGServer(MCPServer):
    """``MCPServer`` whose every failed tool call starts with a stable code.

    Arguments are checked once, against the operation's own input model (the SDK's argument model would ignore
    unknown keys; the operation models refuse them, as the HTTP API does), and the workspace is called with
    that model; only ``run_session`` goes through the SDK's call path, for its progress notifications.
    """

    workspace: Workspace
    operations: dict[str, Operation]
    published: dict[str, dict[str, Any]]
    """Each tool's compact input and output schema (``inputSchema``, ``outputSchema``), built once."""

    async def list_tools(self) -> list[MCPTool]:
        """The SDK's tool list with each operation's compact input schema (``igg.workspace.toolschema``) and
        its output model's schema."""
        tools = await super().list_tools()
        return [
            t.model_copy(
                update={
                    "input_schema": self.published[t.name]["inputSchema"],
                    "output_schema": self.published[t.name]["outputSchema"],
                }
            )
            if t.name in self.published
            else t
            for t in tools
        ]

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        op = self.operations.get(name)
        if op is None:
            return tool_error(
                "UNKNOWN_TOOL", f"there is no tool {name!r}; the tools are {', '.join(self.operations)}"
            )
        try:
            inp = op.input.model_validate(arguments)  # the one validation of a call's arguments
        except ValidationError as exc:
            return tool_error(argument_code(op, exc), argument_problems(exc))
        try:
            if not op.progress:
                return _answer(op, await self.workspace.serve(op, inp))
            # a run reports progress through the SDK's Context, which the SDK's own call path passes
            return await super().call_tool(name, arguments, context)
        except WorkspaceError as exc:
            return tool_error(exc.code, exc.message)
        except MCPError:
            raise
        except Exception as exc:  # the SDK wraps failures in ToolError; anything else is a fault too
            cause = exc.__cause__ if isinstance(exc, ToolError) else exc
            if isinstance(cause, ValidationError) and not isinstance(exc, UnexpectedToolError):
                return tool_error(argument_code(op, cause), argument_problems(cause))
            log.error("mcp_tool_failed", tool=name, error=type(cause or exc).__name__, exc_info=cause or exc)
            return tool_error("INTERNAL_ERROR", f"{name} failed on the server; its log has the details")


def _answer(op: Operation, result: dict[str, Any]) -> CallToolResult:
    """A tool's answer: its structured content (checked by clients against the output schema) and its text
    (the JSON; or the output field the operation answers with as text: ``observe``'s markdown)."""
    text = result[op.text] if op.text is not None else json.dumps(result, ensure_ascii=False)
    if first_unencodable(text) is not None:  # never fail the answer on text UTF-8 cannot carry
        result, text = _escaped(result), escape_unencodable(text)[0]
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=result)


def build_server(workspace: Workspace, *, name: str = "igg") -> MCPServer:
    """An ``MCPServer`` exposing every workspace operation of ``workspace`` as a tool."""
    server = IGGServer(name, instructions=INSTRUCTIONS, version=package_version())
    server.workspace = workspace
    server.operations = {op.name: op for op in workspace.operations}
    server.published = {tool["name"]: tool for tool in mcp_tools(workspace.operations)}
    route_stdlib_logging()  # after the SDK's constructor, which installs its own (rich) logging handler
    for op in workspace.operations:
        server.add_tool(
            _tool_function(workspace, op),
            name=op.name,
            description=op.description,
            annotations=ToolAnnotations.model_validate(hints(op)),
        )
    return server


def _tool_function(workspace: Workspace, op: Operation) -> Callable[..., Any]:
    """A function whose signature is the operation's input model, calling the workspace with that model."""

    async def call(**arguments: Any) -> CallToolResult:
        ctx = arguments.pop("ctx", None)
        try:
            # only run_session comes here (IGGServer.call_tool serves the others); the SDK's argument model
            # ignores unknown keys, so the operation's model reads what the client sent
            result = await _run_with_progress(workspace, op, op.input.model_validate(arguments), ctx)
        except WorkspaceError as exc:
            return tool_error(exc.code, exc.message)
        return _answer(op, result)

    parameters = []
    fields = sorted(op.input.model_fields.items(), key=lambda item: item[0] != "session_id")  # id first
    for field_name, field in fields:
        default = (
            inspect.Parameter.empty if field.is_required() else field.get_default(call_default_factory=True)
        )
        parameters.append(
            inspect.Parameter(
                field.alias or field_name,
                inspect.Parameter.KEYWORD_ONLY,
                annotation=Annotated[
                    (field.annotation, *field.metadata, Field(description=field.description))
                ],
                default=default,
            )
        )
    if op.progress:  # the SDK passes its Context: progress notifications per iteration
        parameters.append(inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context))
        call.__annotations__ = {"ctx": Context, "return": CallToolResult}
    call.__signature__ = inspect.Signature(parameters, return_annotation=CallToolResult)  # type: ignore[attr-defined]
    call.__name__ = op.name
    call.__doc__ = op.description
    return call


async def _run_with_progress(
    workspace: Workspace, op: Operation, inp: Any, ctx: Context | None
) -> dict[str, Any]:
    """An autonomous run, reporting each finished iteration as MCP progress (when the client asked for it)."""
    started = await workspace.start_run(inp)
    task = workspace.runs.tasks[started["session_id"]]  # no await since start: the run cannot have ended
    if ctx is not None:
        total = inp.config.max_iterations
        async for event in workspace.hub.listen(started["session_id"]):
            if event["kind"] == "iteration_finished":
                await ctx.report_progress(
                    event["iteration"],
                    total,
                    f"iteration {event['iteration']}: "
                    f"{event.get('accepted', 0)} accepted, {event.get('rejected', 0)} rejected; "
                    f"{event.get('nodes', 0)} nodes, {event.get('edges', 0)} edges",
                )
    return op.output.model_validate(await task).dump()


def run_stdio(server: MCPServer, early: EarlyAnswer | None = None) -> None:
    """Serve MCP over stdin/stdout until the client disconnects (see ``serve_stdio``); ``early``: the first
    line, already read and perhaps answered (``igg.interfaces.mcp.handshake``)."""
    import anyio

    anyio.run(serve_stdio, server, early)


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
MAX_JSON_DEPTH = 200
"""Deepest nesting of arrays and objects the SDK's JSON reader takes (pydantic's): a deeper message is refused
by it without an answer, so IGG answers it (a rule nests 8 levels at most, an action 5)."""
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}:,]|[^\s"\[\]{}:,]+')


async def serve_stdio(server: MCPServer, early: EarlyAnswer | None = None) -> None:
    """The SDK's stdio transport, with one addition: a message holding text UTF-8 cannot encode (a JSON
    escape of a lone surrogate, such as ``\\ud800``) or nested deeper than ``MAX_JSON_DEPTH`` is answered at
    once with a stable code (``INVALID_ARGUMENTS: params.arguments.actions[0].properties.name: lone surrogate
    ...``). The SDK's JSON reader refuses such a line without knowing its id, and the client would wait for an
    answer forever."""
    import os
    import sys

    import anyio
    from mcp.server.stdio import stdio_server

    # duplicates of fd 0 and 1: closing them at the end leaves the process's own stdin and stdout open
    stdin = anyio.wrap_file(open(os.dup(sys.stdin.fileno()), encoding="utf-8", errors="replace"))  # noqa: SIM115
    stdout: Any = anyio.wrap_file(open(os.dup(sys.stdout.fileno()), "w", encoding="utf-8"))  # noqa: SIM115
    filtered = _SurrogateFilter(stdin, first=early.line if early is not None and early.line else None)
    if early is not None and early.answered is not None:
        stdout = _Answered(stdout, early)
    async with stdio_server(stdin=filtered, stdout=stdout) as (read_stream, write_stream):  # type: ignore[arg-type]
        filtered.answer = write_stream.send
        lowlevel = server._lowlevel_server  # what MCPServer.run_stdio_async runs, too
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())


class _Answered:
    """stdout, less the SDK's answer to the request ``igg.interfaces.mcp.handshake`` answered already."""

    def __init__(self, stdout: Any, early: EarlyAnswer) -> None:
        self.stdout, self.early = stdout, early

    async def write(self, text: str) -> None:
        if not self.early.drop(text):
            await self.stdout.write(text)

    async def flush(self) -> None:
        await self.stdout.flush()


class _SurrogateFilter:
    """Lines from stdin (after ``first``, a line read before the SDK started); a request holding a lone
    surrogate is answered here and not passed on."""

    def __init__(self, lines: Any, first: str | None = None) -> None:
        self.lines = lines
        self.first = first
        self.answer: Callable[[Any], Awaitable[None]] | None = None

    def __aiter__(self) -> AsyncIterator[str]:
        return self._filtered()

    async def _lines(self) -> AsyncIterator[str]:
        if self.first is not None:
            yield self.first
        async for line in self.lines:
            yield line

    async def _filtered(self) -> AsyncIterator[str]:
        async for line in self._lines():
            if self.answer is not None and _too_deep(line):
                reply = _deep_refusal(line)
                if reply is not False:
                    await self.answer(reply)
                continue
            if _SURROGATE_ESCAPE.search(line) is None or self.answer is None:
                yield line
                continue
            reply = _refusal(line)
            if reply is None:
                yield line  # no lone surrogate after all (an escaped backslash): the SDK reads it
            elif reply is not False:
                await self.answer(reply)


def _too_deep(line: str) -> bool:
    """Whether a line nests arrays and objects deeper than the SDK reads (counted first: most lines hold too
    few brackets to be)."""
    if line.count("[") + line.count("{") <= MAX_JSON_DEPTH:
        return False
    import pydantic_core

    try:
        pydantic_core.from_json(line)
    except ValueError as exc:
        return "recursion limit" in str(exc)
    return False


def _top_level(line: str) -> dict[str, Any]:
    """``id``, ``method`` and ``params.name`` of a JSON-RPC line too deep to parse, read token by token."""
    found: dict[str, Any] = {}
    path: list[str | None] = []
    key: str | None = None
    expect_value = False
    for m in _TOKEN.finditer(line):
        token = m.group()
        if token in "[{":
            path.append(key if expect_value else None)
            key, expect_value = None, False
        elif token in "]}":
            if path:
                path.pop()
            key, expect_value = None, False
        elif token == ":":
            expect_value = True
        elif token == ",":
            key, expect_value = None, False
        elif expect_value:
            where = (*path[1:], key)
            if where in (("id",), ("method",), ("params", "name")):
                try:
                    found[".".join(w for w in where if w)] = json.loads(token)
                except ValueError:
                    pass
            expect_value = False
            if len(found) == 3:
                break
        elif token.startswith('"'):
            key = json.loads(token) if len(path) <= 2 else None
    return found


def _deep_refusal(line: str) -> Any:
    """The answer to a JSON-RPC line nested too deeply to read; False when it is a notification."""
    from mcp.shared.message import SessionMessage
    from mcp_types import ErrorData, JSONRPCError, JSONRPCResponse

    top = _top_level(line)
    ident = top.get("id")
    if not isinstance(ident, int | str) or isinstance(ident, bool):
        log.warning("mcp_message_dropped", reason=f"nested more than {MAX_JSON_DEPTH} levels deep, no id")
        return False
    text = f"the message nests arrays and objects more than {MAX_JSON_DEPTH} levels deep; send it flatter"
    code = _refusal_code(top.get("params.name"))
    log.info("mcp_call_refused", code=code, where="(nesting)")
    if top.get("method") == "tools/call":
        result = tool_error(code, text).model_dump(by_alias=True, exclude_none=True, mode="json")
        return SessionMessage(JSONRPCResponse(jsonrpc="2.0", id=ident, result=result))
    return SessionMessage(
        JSONRPCError(
            jsonrpc="2.0", id=ident, error=ErrorData(code=-32602, message=f"INVALID_ARGUMENTS: {text}")
        )
    )


def _refusal_code(tool: Any) -> str:
    """The code of a call refused before its arguments were read: a request's, or other arguments'."""
    op = OPERATIONS_BY_NAME.get(tool) if isinstance(tool, str) else None
    return "INVALID_REQUEST" if op is not None and op.request else "INVALID_ARGUMENTS"


def _refusal(line: str) -> Any:
    """The answer to a JSON-RPC line holding a lone surrogate; None when it holds none; False when it is a
    notification (nothing to answer)."""
    from mcp.shared.message import SessionMessage
    from mcp_types import ErrorData, JSONRPCError, JSONRPCResponse

    try:
        message = json.loads(line)
    except ValueError:
        return None  # not JSON: the SDK's own parse error applies
    found = find_unencodable(message)
    if found is None:
        return None
    if not isinstance(message, dict) or "id" not in message or not isinstance(message["id"], int | str):
        log.warning("mcp_message_dropped", reason="lone surrogate in a notification", where=found.path)
        return False
    text = found.describe()
    params = message.get("params")
    tool = params.get("name") if isinstance(params, dict) else None
    code = _refusal_code(tool)
    log.info("mcp_call_refused", code=code, where=found.path)
    if message.get("method") == "tools/call":
        result = tool_error(code, text).model_dump(by_alias=True, exclude_none=True, mode="json")
        return SessionMessage(JSONRPCResponse(jsonrpc="2.0", id=message["id"], result=result))
    return SessionMessage(
        JSONRPCError(
            jsonrpc="2.0",
            id=message["id"],
            error=ErrorData(code=-32602, message=f"INVALID_ARGUMENTS: {text}"),
        )
    )


def run_http(
    server: MCPServer,
    *,
    host: str,
    port: int,
    max_body: int,
    timeouts: Any = None,
    wrap: Callable[[Any], Any] | None = None,
    sock: Any = None,
) -> None:
    """Serve MCP over streamable HTTP at ``/mcp`` (``wrap`` adds ASGI middleware: IGG's Host check, bearer
    token and body limit, so the SDK's own Host check is off; ``timeouts``: ``igg.interfaces.http.server``;
    ``sock``: a socket already listening on ``host:port``)."""
    from mcp.server.transport_security import TransportSecuritySettings

    from igg.interfaces.http.server import serve

    app = server.streamable_http_app(
        host=host,
        max_request_body_size=max_body,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=wrap is None),
    )
    serve(wrap(app) if wrap else app, host=host, port=port, timeouts=timeouts, sock=sock)
