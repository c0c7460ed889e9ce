"""What guards IGG's HTTP listeners (``igg serve`` and ``igg mcp --transport http``).

* A bearer token, when one is configured (``IGG_API_TOKEN``): every request but ``/healthz`` must carry
  ``Authorization: Bearer <token>`` (compared in constant time). The token is never logged or echoed.
* No token, no network: without a token a listener binds loopback addresses only.
* A request body limit: a larger body is refused with 413 before the application reads it.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import os
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from igg.errors import WorkspaceError

TOKEN_ENV = "IGG_API_TOKEN"
"""Environment variable holding the bearer token."""

DEFAULT_MAX_BODY = 8 * 1024 * 1024
"""Largest request body accepted by default (bytes); context_data of a few source files fits."""

OPEN_PATHS = frozenset({"/healthz"})
"""Paths served without a token (liveness only: they reveal nothing)."""

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def token_from_env() -> str | None:
    """The configured token, or None when ``IGG_API_TOKEN`` is unset or empty."""
    token = os.environ.get(TOKEN_ENV, "").strip()
    return token or None


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (``localhost``, 127.0.0.0/8, ::1)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, token: str | None) -> None:
    """Refuse (``INSECURE_BIND``) to listen beyond loopback without a token."""
    if token is None and not is_loopback(host):
        raise WorkspaceError("INSECURE_BIND", f"refusing to listen on {host} without a token: anyone who can "
                             f"reach it could read and change every session. Set {TOKEN_ENV} (clients then "
                             f"send 'Authorization: Bearer <token>') or bind 127.0.0.1", status=400)


def error_body(code: str, message: str) -> bytes:
    """The JSON error envelope every refusal uses: ``{"error": {"code": ..., "message": ...}}``."""
    return json.dumps({"error": {"code": code, "message": message}}).encode()


async def _refuse(send: Send, status: int, code: str, message: str, headers: list[tuple[bytes, bytes]] = ()) -> None:  # type: ignore[assignment]
    body = error_body(code, message)
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            *headers]})
    await send({"type": "http.response.body", "body": body})


def bearer_guard(app: ASGIApp, token: str | None, max_body: int) -> ASGIApp:
    """ASGI middleware: the token check (when ``token`` is set) and the body size limit."""
    expected = f"Bearer {token}".encode() if token else None

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        if expected is not None and scope.get("path") not in OPEN_PATHS:
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, expected):
                what = "is missing" if not given else "is wrong"
                await _refuse(send, 401, "UNAUTHORIZED", f"the bearer token {what}: send 'Authorization: Bearer "
                              f"<token>' with the token the server was started with ({TOKEN_ENV})",
                              [(b"www-authenticate", b"Bearer")])
                return
        length = dict(scope.get("headers") or []).get(b"content-length")
        too_large = f"this server accepts request bodies of at most {max_body} bytes (--max-body)"
        if length is not None and length.isdigit():
            if int(length) > max_body:
                await _refuse(send, 413, "PAYLOAD_TOO_LARGE", f"the request body has {int(length)} bytes; {too_large}")
                return
            await app(scope, receive, send)  # the HTTP server holds the body to its Content-Length
            return
        # no Content-Length (a chunked body): read it here, within the limit, then hand it on
        body, more = b"", True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > max_body:
                await _refuse(send, 413, "PAYLOAD_TOO_LARGE", f"the streamed request body passed {max_body} bytes; "
                              f"{too_large}")
                return
        await app(scope, _replay(body, receive), send)

    return guarded


def _replay(body: bytes, receive: Receive) -> Receive:
    """``receive`` that first returns the already-read body, then defers to the real one (disconnects)."""
    pending = True

    async def replayed() -> Message:
        nonlocal pending
        if pending:
            pending = False
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed
