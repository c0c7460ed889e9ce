"""What guards IGG's HTTP listeners (``igg serve`` and ``igg mcp --transport http``).

* The ``Host`` header (DNS rebinding): a web page the user opens can make the browser send requests to
  ``127.0.0.1`` under the page's own host name. Without a token only loopback names are answered
  (``localhost``, ``127.0.0.1``, ``[::1]``); more names come from ``--allowed-host`` or
  ``IGG_ALLOWED_HOSTS`` (comma-separated; ``*`` for any). With a token and no list every name is answered:
  a browser cannot attach the token. Other names get 421 ``HOST_FORBIDDEN``.
* Cross-site requests (no state change without intent): without a token, an ``Origin`` header must be the
  server's own origin (the page it serves, ``/ui``) or name a host given with ``--allowed-host``; ``null``
  (sandboxed frames, ``data:`` pages) and loopback pages on other ports are refused (403
  ``ORIGIN_FORBIDDEN``). Every ``POST`` must carry ``Content-Type: application/json`` (403 ``JSON_REQUIRED``):
  a browser sends that type cross-site only after a preflight IGG never grants, so no form post,
  ``text/plain`` beacon or bodyless ``fetch`` from another site can change a session. (``/ui/login``'s form,
  with a token only, is the exception.)
* A bearer token, when one is configured (``IGG_API_TOKEN``): every request but ``/healthz`` must carry
  ``Authorization: Bearer <token>`` (the scheme in any case, RFC 7235; the token compared in constant
  time). The token is never logged or echoed.
* No token, no network: without a token a listener binds loopback addresses only.
* A request body limit: a larger body is refused with 413 before the application reads it.

Timeouts against slow and half-open clients live in ``igg.interfaces.http.server``.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import os
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from igg.errors import WorkspaceError

TOKEN_ENV = "IGG_API_TOKEN"
"""Environment variable holding the bearer token."""

HOSTS_ENV = "IGG_ALLOWED_HOSTS"
"""Environment variable with more host names the listeners answer to (comma-separated; ``*``: any)."""

DEFAULT_MAX_BODY = 8 * 1024 * 1024
"""Largest request body accepted by default (bytes); context_data of a few source files fits."""

OPEN_PATHS = frozenset({"/healthz"})

FORM_PATHS = frozenset({"/ui/login"})
"""POST paths that take a form (the /ui login, which exists only with a token)."""
"""Paths served without a token (liveness only: they reveal nothing)."""

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
"""Host names answered without configuration."""

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def token_from_env() -> str | None:
    """The configured token, or None when ``IGG_API_TOKEN`` is unset or empty."""
    token = os.environ.get(TOKEN_ENV, "").strip()
    return token or None


def hosts_from_env() -> list[str]:
    """The host names listed in ``IGG_ALLOWED_HOSTS``."""
    return [h.strip() for h in os.environ.get(HOSTS_ENV, "").split(",") if h.strip()]


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
        raise WorkspaceError(
            "INSECURE_BIND",
            f"refusing to listen on {host} without a token: anyone who can "
            f"reach it could read and change every session. Set {TOKEN_ENV} (clients then "
            f"send 'Authorization: Bearer <token>') or bind 127.0.0.1",
        )


def host_name(header: str) -> str:
    """The host of a ``Host`` header value, lower case, without its port (``[::1]:8080`` -> ``[::1]``)."""
    value = header.strip().lower()
    if value.startswith("["):
        return value[: value.find("]") + 1] if "]" in value else value
    name, sep, port = value.rpartition(":")
    return name if sep and port.isdigit() else value


@dataclass(frozen=True, kw_only=True)
class HostPolicy:
    """Which ``Host`` (and ``Origin``) names a listener answers."""

    names: frozenset[str]
    """Allowed host names (lower case, no port); loopback names are always allowed."""
    origins: frozenset[str] = frozenset()
    """Configured ``host:port`` values, whose pages may send requests (``Origin``)."""
    any_host: bool = False
    """Every name is allowed (a token is set and no list was given, or ``*`` was listed)."""

    @classmethod
    def build(cls, configured: Iterable[str], *, token: str | None) -> HostPolicy:
        """Loopback names plus ``configured`` (``--allowed-host``/``IGG_ALLOWED_HOSTS``); any name when a
        token is set and nothing is configured."""
        listed = [h for h in configured if h]
        names = {host_name(h) for h in listed if h != "*"}
        origins = {h.strip().lower() for h in listed if h != "*" and host_name(h) != h.strip().lower()}
        return cls(
            names=frozenset(names),
            origins=frozenset(origins),
            any_host="*" in listed or (token is not None and not listed),
        )

    def permits(self, host: str) -> bool:
        """Whether a request for ``host`` (a ``Host`` header value or a bare name) is answered."""
        if self.any_host:
            return True
        name = host_name(host)
        return name in self.names or name in LOOPBACK_NAMES or is_loopback(name.strip("[]"))

    def permits_origin(self, origin: str, host: str) -> bool:
        """Whether a page at ``origin`` may send requests here: the server's own origin (``host``: the
        request's Host header), or an origin whose host was given (``--allowed-host``, with its port when
        given). Never ``null``, never a loopback page on another port."""
        if self.any_host:
            return True
        parts = urlsplit(origin.strip())
        if parts.scheme not in ("http", "https") or not parts.netloc:
            return False  # "null", file:, data: ...
        netloc = parts.netloc.lower()
        if netloc == host.strip().lower():
            return True
        return netloc in self.origins or host_name(netloc) in self.names and host_name(netloc) == netloc

    def describe(self) -> str:
        """The allowed names, for messages."""
        if self.any_host:
            return "any host"
        return ", ".join(sorted({*LOOPBACK_NAMES, *self.names}))


def is_json(content_type: bytes) -> bool:
    """Whether a ``Content-Type`` value is ``application/json`` (parameters such as ``charset`` allowed)."""
    return content_type.split(b";")[0].strip().lower() == b"application/json"


def error_body(code: str, message: str) -> bytes:
    """The JSON error envelope every refusal uses: ``{"error": {"code": ..., "message": ...}}``."""
    return json.dumps({"error": {"code": code, "message": message}}).encode()


async def refuse(
    send: Send, status: int, code: str, message: str, headers: Iterable[tuple[bytes, bytes]] = ()
) -> None:
    """Answer with the error envelope (used before the application runs)."""
    body = error_body(code, message)
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _bearer(header: bytes) -> bytes | None:
    """The token of an ``Authorization: Bearer <token>`` header (scheme in any case), else None."""
    scheme, _, credentials = header.strip().partition(b" ")
    if scheme.lower() != b"bearer":
        return None
    return credentials.strip()


def bearer_guard(
    app: ASGIApp, token: str | None, max_body: int, *, hosts: HostPolicy | None = None
) -> ASGIApp:
    """ASGI middleware: the Host/Origin check, the token check (when ``token`` is set) and the body limit.

    ``hosts`` defaults to ``HostPolicy.build(hosts_from_env(), token=token)``.
    """
    expected = token.encode() if token else None
    policy = hosts if hosts is not None else HostPolicy.build(hosts_from_env(), token=token)

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        refusal = _refusal(policy, expected, scope, headers)
        if refusal is not None:
            await refuse(send, *refusal)
            return
        length = headers.get(b"content-length")
        too_large = f"this server accepts request bodies of at most {max_body} bytes (--max-body)"
        if length is not None and length.isdigit():
            if int(length) > max_body:
                await refuse(
                    send, 413, "PAYLOAD_TOO_LARGE", f"the request body has {int(length)} bytes; {too_large}"
                )
                return
            await app(scope, receive, send)  # the HTTP server holds the body to its Content-Length
            return
        # no Content-Length (a chunked body): read it here, within the limit, then hand it on
        body, more = bytearray(), True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > max_body:
                await refuse(
                    send,
                    413,
                    "PAYLOAD_TOO_LARGE",
                    f"the streamed request body passed {max_body} bytes; {too_large}",
                )
                return
        await app(scope, _replay(bytes(body), receive), send)

    return guarded


_Refusal = tuple[int, str, str, list[tuple[bytes, bytes]]]
"""(status, code, message, extra headers) of a request refused before the application runs."""


def _refusal(
    policy: HostPolicy, expected: bytes | None, scope: Scope, headers: dict[bytes, bytes]
) -> _Refusal | None:
    """Why the request is refused, in the order the checks run: its Host, its Origin, a POST's content type,
    its bearer token (when ``expected``); None when it passes them all."""
    host = headers.get(b"host", b"").decode("latin-1")
    if not policy.permits(host):
        shown = host if host else "(none)"
        return (
            421,
            "HOST_FORBIDDEN",
            f"this server does not answer for the Host {shown!r}; it "
            f"answers {policy.describe()}. Add a name with --allowed-host NAME or {HOSTS_ENV} "
            "(a protection against DNS rebinding: web pages cannot reach it under their own names)",
            [],
        )
    origin = headers.get(b"origin")
    if (
        origin is not None
        and not policy.any_host
        and not policy.permits_origin(origin.decode("latin-1"), host)
    ):
        return (
            403,
            "ORIGIN_FORBIDDEN",
            f"requests from pages at {origin.decode('latin-1')!r} "
            f"are refused: this server takes requests from its own pages and from "
            f"{policy.describe()} on the ports given (--allowed-host)",
            [],
        )
    if (
        scope.get("method") == "POST"
        and scope.get("path") not in FORM_PATHS
        and not is_json(headers.get(b"content-type", b""))
    ):
        return (
            403,
            "JSON_REQUIRED",
            "a POST must carry a JSON body with 'Content-Type: "
            "application/json' (send {} when there is nothing to say); other types are what cross-site "
            "forms send, and are refused",
            [],
        )
    if expected is not None and scope.get("path") not in OPEN_PATHS:
        return _token_refusal(expected, headers)
    return None


def _token_refusal(expected: bytes, headers: dict[bytes, bytes]) -> _Refusal | None:
    """Why the request's bearer token is refused (missing, wrong, not a Bearer token), or None."""
    given = headers.get(b"authorization", b"")
    presented = _bearer(given)
    if presented is not None and hmac.compare_digest(presented, expected):
        return None
    what = "is missing" if not given else "is wrong" if presented is not None else "is not a Bearer token"
    return (
        401,
        "UNAUTHORIZED",
        f"the bearer token {what}: send 'Authorization: Bearer "
        f"<token>' with the token the server was started with ({TOKEN_ENV})",
        [(b"www-authenticate", b"Bearer")],
    )


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
