"""Running an ASGI app on uvicorn with deadlines (``Timeouts``), so slow or half-open clients cannot hold the
server: uvicorn's own keep-alive bound, and a protocol of IGG's (``deadlines.GuardedProtocol``, handed to
uvicorn through its public ``Config(http=...)``) for the request head, the body, fragmented bodies and stalled
reads. This module loads nothing heavy: the command line imports it for ``Timeouts``' defaults."""

from __future__ import annotations

from typing import Any

from igg.interfaces.http.timeouts import Timeouts


def uvicorn_config(app: Any, *, timeouts: Timeouts | None = None, **options: Any) -> Any:
    """A ``uvicorn.Config`` for ``app`` with ``timeouts`` enforced (``options``: host, port, ...)."""
    import uvicorn

    from igg.interfaces.logs import route_stdlib_logging

    limits = timeouts or Timeouts()
    route_stdlib_logging()  # uvicorn's records in IGG's log format (log_config=None: uvicorn installs none)
    return uvicorn.Config(
        app,
        log_level="warning",
        log_config=None,
        http=_protocol_class(limits),
        timeout_keep_alive=max(1, round(limits.idle)),
        server_header=False,
        **options,
    )


def serve(app: Any, *, host: str, port: int, timeouts: Timeouts | None = None, sock: Any = None) -> None:
    """Run ``app`` on ``host:port`` until interrupted, with ``timeouts`` (defaults: ``Timeouts()``); ``sock``:
    a socket already listening there (the command line binds first, so a busy port is told before serving)."""
    import uvicorn

    server = uvicorn.Server(uvicorn_config(app, timeouts=timeouts, host=host, port=port))
    server.run(sockets=[sock] if sock is not None else None)


def _protocol_class(timeouts: Timeouts) -> Any:
    from igg.interfaces.http.deadlines import protocol_class  # asyncio and uvicorn: when a server starts

    return protocol_class(timeouts)


__all__ = ["Timeouts", "serve", "uvicorn_config"]
