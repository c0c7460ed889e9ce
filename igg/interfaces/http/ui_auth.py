"""Logging a browser in to ``/ui`` when the server has a token (``IGG_API_TOKEN``).

A browser cannot add ``Authorization: Bearer`` to a page load or an ``EventSource``, so ``/ui/login`` asks
for the token once (a form, POST) and sets a cookie holding an HMAC of it (never the token itself):
``HttpOnly``, ``SameSite=Strict``, ``Path=/ui``. This ASGI wrapper sits outside the bearer guard; for
``GET``/``HEAD`` requests under ``/ui`` carrying a valid cookie it adds the bearer header, so the guard
(``igg.interfaces.http.security``) still makes every decision. The cookie opens nothing but the read-only
``/ui`` routes: every other path, and every request that is not a GET, needs the header as before.
"""

from __future__ import annotations

import hashlib
import hmac
import html
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

COOKIE = "igg_ui"
"""The session cookie's name."""

_FORM_LIMIT = 4096


def cookie_value(token: str) -> str:
    """What the cookie holds: an HMAC-SHA256 of a fixed label keyed by the token (the token stays secret)."""
    return hmac.new(token.encode(), b"igg-ui-login", hashlib.sha256).hexdigest()


def with_ui_login(app: ASGIApp, token: str | None) -> ASGIApp:
    """``app`` with the ``/ui`` login (no change without a token: then the UI needs no login)."""
    if token is None:
        return app
    expected_cookie = cookie_value(token)
    bearer = f"Bearer {token}".encode()

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or not (path == "/ui" or path.startswith("/ui/")):
            await app(scope, receive, send)
            return
        method = scope.get("method", "GET")
        if path == "/ui/login":
            if method == "POST":
                await _login(receive, send, token, expected_cookie)
            else:
                await _page(send, 200, _form(""))
            return
        headers = list(scope.get("headers") or [])
        if method in ("GET", "HEAD") and not any(k == b"authorization" for k, _ in headers):
            if hmac.compare_digest(_cookie(headers).encode(), expected_cookie.encode()):
                scope = {**scope, "headers": [*headers, (b"authorization", bearer)]}
            elif path in ("/ui", "/ui/"):
                await _redirect(send, "/ui/login")
                return
        await app(scope, receive, send)

    return wrapped


def _cookie(headers: list[tuple[bytes, bytes]]) -> str:
    for key, value in headers:
        if key == b"cookie":
            jar: SimpleCookie = SimpleCookie()
            try:
                jar.load(value.decode("latin-1"))
            except Exception:  # a malformed Cookie header is no login
                continue
            morsel = jar.get(COOKIE)
            if morsel is not None:
                return morsel.value
    return ""


async def _login(receive: Receive, send: Send, token: str, expected_cookie: str) -> None:
    body, more = b"", True
    while more:
        message = await receive()
        if message["type"] != "http.request":
            return
        body += message.get("body", b"")
        more = message.get("more_body", False)
        if len(body) > _FORM_LIMIT:
            await _page(send, 413, _form("That form was too large."))
            return
    given = parse_qs(body.decode("utf-8", "replace")).get("token", [""])[0].strip()
    if not hmac.compare_digest(given.encode(), token.encode()):
        await _page(send, 401, _form("That is not the server's token (IGG_API_TOKEN)."))
        return
    cookie = f"{COOKIE}={expected_cookie}; HttpOnly; SameSite=Strict; Path=/ui"
    await _redirect(send, "/ui/", [(b"set-cookie", cookie.encode())])


async def _redirect(send: Send, location: str, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    await send({"type": "http.response.start", "status": 303,
                "headers": [(b"location", location.encode()), (b"content-length", b"0"), *(headers or [])]})
    await send({"type": "http.response.body", "body": b""})


async def _page(send: Send, status: int, text: str) -> None:
    body = text.encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/html; charset=utf-8"), (b"content-length", str(len(body)).encode()),
                            (b"cache-control", b"no-store"), (b"x-frame-options", b"DENY"),
                            (b"content-security-policy", b"default-src 'none'; style-src 'unsafe-inline'; "
                                                         b"form-action 'self'; frame-ancestors 'none'")]})
    await send({"type": "http.response.body", "body": body})


def _form(problem: str) -> str:
    note = f'<p role="alert" style="color:#b3261e">{html.escape(problem)}</p>' if problem else ""
    return ("<!doctype html><html lang=en><meta charset=utf-8><title>IGG viewer: log in</title>"
            "<body style='font-family:system-ui,sans-serif;max-width:30rem;margin:3rem auto'>"
            "<h1>IGG viewer</h1><p>This server needs its token (the value of <code>IGG_API_TOKEN</code> it was "
            f"started with).</p>{note}<form method=post action=/ui/login><label for=token>Token</label> "
            "<input id=token name=token type=password autocomplete=current-password required autofocus> "
            "<button type=submit>Log in</button></form></body></html>")
