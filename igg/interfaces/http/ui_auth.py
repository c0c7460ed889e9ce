"""Logging a browser in to ``/ui`` when the server has a token (``IGG_API_TOKEN``).

A browser cannot add ``Authorization: Bearer`` to a page load or an ``EventSource``, so ``/ui/login`` asks for
the token once (a form, POST) and sets a cookie holding its expiry and an HMAC of it keyed by the token (never
the token itself): ``HttpOnly``, ``SameSite=Strict``, ``Path=/ui``, ``Max-Age`` of ``COOKIE_LIFETIME`` (12
hours); after that the cookie is refused and the browser logs in again. Failed logins are throttled per client
address (``LOGIN_ATTEMPTS`` per ``LOGIN_WINDOW`` seconds; then 429 with ``Retry-After``). This ASGI wrapper
sits outside the bearer guard; for ``GET``/``HEAD`` requests under ``/ui`` carrying a valid cookie it adds the
bearer header, so the guard (``igg.interfaces.http.security``) still makes every decision. The cookie opens
nothing but the read-only ``/ui`` routes: every other path, and every request that is not a GET, needs the
header as before.
"""

from __future__ import annotations

import hashlib
import hmac
import html
import time
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

COOKIE_LIFETIME = 12 * 3600
"""Seconds a login lasts (the cookie's ``Max-Age``, and the expiry its value carries)."""

LOGIN_ATTEMPTS, LOGIN_WINDOW = 5, 60.0
"""Failed logins a client address may make per window (seconds) before it is answered 429."""


def cookie_value(token: str, expires: int) -> str:
    """What the cookie holds: its expiry (epoch seconds) and an HMAC-SHA256 of it keyed by the token."""
    mac = hmac.new(token.encode(), f"igg-ui-login|{expires}".encode(), hashlib.sha256).hexdigest()
    return f"{expires}.{mac}"


def cookie_valid(token: str, value: str, now: float) -> bool:
    """Whether a cookie value is one this token made and has not expired."""
    expires, _, _ = value.partition(".")
    if not expires.isdigit() or int(expires) <= now:
        return False
    return hmac.compare_digest(value.encode(), cookie_value(token, int(expires)).encode())


class _Throttle:
    """Failed logins per client address in a sliding window (at most ``LOGIN_ATTEMPTS``)."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        self.failures: dict[str, list[float]] = {}

    def wait(self, client: str) -> int:
        """Seconds ``client`` must wait before its next attempt (0: it may try now)."""
        now = self.clock()
        recent = [t for t in self.failures.get(client, []) if now - t < LOGIN_WINDOW]
        self.failures[client] = recent
        return 0 if len(recent) < LOGIN_ATTEMPTS else int(LOGIN_WINDOW - (now - recent[0])) + 1

    def failed(self, client: str) -> None:
        if len(self.failures) > 10_000:  # bounded memory: forget the oldest clients
            for key in list(self.failures)[:5_000]:
                del self.failures[key]
        self.failures.setdefault(client, []).append(self.clock())


def with_ui_login(app: ASGIApp, token: str | None, *, clock: Callable[[], float] = time.time) -> ASGIApp:
    """``app`` with the ``/ui`` login (no change without a token: then the UI needs no login)."""
    if token is None:
        return app
    bearer = f"Bearer {token}".encode()
    throttle = _Throttle(clock)

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or not (path == "/ui" or path.startswith("/ui/")):
            await app(scope, receive, send)
            return
        method = scope.get("method", "GET")
        if path == "/ui/login":
            if method == "POST":
                client = str((scope.get("client") or ("?",))[0])
                wait = throttle.wait(client)
                if wait:
                    await _page(
                        send,
                        429,
                        _form(f"Too many failed logins; try again in {wait} s."),
                        [(b"retry-after", str(wait).encode())],
                    )
                    return
                if not await _login(receive, send, token, int(clock()) + COOKIE_LIFETIME):
                    throttle.failed(client)
            else:
                await _page(send, 200, _form(""))
            return
        headers = list(scope.get("headers") or [])
        if method in ("GET", "HEAD") and not any(k == b"authorization" for k, _ in headers):
            if cookie_valid(token, _cookie(headers), clock()):
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


async def _login(receive: Receive, send: Send, token: str, expires: int) -> bool:
    """Read the form; log in (the cookie, a redirect) or answer why not; whether the token was right."""
    body, more = b"", True
    while more:
        message = await receive()
        if message["type"] != "http.request":
            return True  # the client went away: no attempt
        body += message.get("body", b"")
        more = message.get("more_body", False)
        if len(body) > _FORM_LIMIT:
            await _page(send, 413, _form("That form was too large."))
            return False
    given = parse_qs(body.decode("utf-8", "replace")).get("token", [""])[0].strip()
    if not hmac.compare_digest(given.encode(), token.encode()):
        await _page(send, 401, _form("That is not the server's token (IGG_API_TOKEN)."))
        return False
    cookie = (
        f"{COOKIE}={cookie_value(token, expires)}; HttpOnly; SameSite=Strict; Path=/ui; "
        f"Max-Age={COOKIE_LIFETIME}"
    )
    await _redirect(send, "/ui/", [(b"set-cookie", cookie.encode())])
    return True


async def _redirect(send: Send, location: str, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": 303,
            "headers": [(b"location", location.encode()), (b"content-length", b"0"), *(headers or [])],
        }
    )
    await send({"type": "http.response.body", "body": b""})


async def _page(send: Send, status: int, text: str, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    body = text.encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                *(extra or []),
                (b"content-type", b"text/html; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                (b"cache-control", b"no-store"),
                (b"x-frame-options", b"DENY"),
                (
                    b"content-security-policy",
                    b"default-src 'none'; style-src 'unsafe-inline'; "
                    b"form-action 'self'; frame-ancestors 'none'",
                ),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _form(problem: str) -> str:
    note = f'<p role="alert" style="color:#b3261e">{html.escape(problem)}</p>' if problem else ""
    return (
        "<!doctype html><html lang=en><meta charset=utf-8><title>IGG viewer: log in</title>"
        "<body style='font-family:system-ui,sans-serif;max-width:30rem;margin:3rem auto'>"
        "<h1>IGG viewer</h1><p>This server needs its token (the value of <code>IGG_API_TOKEN</code> it was "
        f"started with).</p>{note}<form method=post action=/ui/login><label for=token>Token</label> "
        "<input id=token name=token type=password autocomplete=current-password required autofocus> "
        "<button type=submit>Log in</button></form></body></html>"
    )
