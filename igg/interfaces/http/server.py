"""Running an ASGI app on uvicorn with deadlines, so slow or half-open clients cannot hold the server.

uvicorn closes an idle keep-alive connection, but waits forever for a request's headers and body, and for a
client to read its response. ``serve`` runs uvicorn's h11 protocol with four more bounds (``Timeouts``):

* ``header``: a connection must deliver a request's line and headers within this many seconds of opening
  (or of starting the next request): then 408 and close. 300 connections that open and say nothing are
  gone after it.
* ``body``: the whole body must arrive within this many seconds after its headers: then 408 and close.
* a body sent in tiny pieces (a chunked body in 1-byte chunks costs the event loop ~4 µs per piece, every
  other request waits): after ``min_pieces`` pieces averaging under ``min_piece_bytes`` bytes, 400 and close.
* ``write``: a client that stops reading a response is dropped when its buffer stays full this long.

Refusals use the API's error envelope (``REQUEST_TIMEOUT``, ``BODY_TOO_FRAGMENTED``).

A client that goes away in the middle of a response (an event stream closed early) makes no noise: writes to
a connection that is already closing are dropped here, where asyncio would log "socket.send() raised
exception." for each one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from igg.interfaces.http.security import error_body
from igg.record.logs import get_logger

if TYPE_CHECKING:  # asyncio and uvicorn load when a server starts: the command line imports this module
    import asyncio

    from uvicorn.protocols.http.h11_impl import H11Protocol

log = get_logger("igg.http")


@dataclass(frozen=True, kw_only=True)
class Timeouts:
    """Deadlines of one HTTP listener (seconds) and the smallest body pieces it accepts in bulk."""

    header: float = 10.0
    """From connection (or the start of the next request) to the end of the request's headers."""
    body: float = 30.0
    """From the end of the headers to the end of the body."""
    idle: float = 5.0
    """A keep-alive connection without a request is closed after this long (uvicorn's keep-alive)."""
    write: float = 30.0
    """A response whose client reads nothing for this long is dropped."""
    min_pieces: int = 1024
    """Body pieces accepted before their average size is checked."""
    min_piece_bytes: int = 256
    """Smallest average size of a body's pieces once ``min_pieces`` have arrived."""


def protocol_class(timeouts: Timeouts) -> type[H11Protocol]:
    """uvicorn's h11 protocol with ``timeouts`` enforced (pass it as ``uvicorn.Config(http=...)``)."""
    import h11  # imported here: the command line loads this module for every command
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class _CountingConnection(h11.Connection):
        """h11's connection, counting the body pieces (``Data`` events) of the current request."""

        pieces = 0
        piece_bytes = 0

        def next_event(self) -> Any:
            event = super().next_event()
            if isinstance(event, h11.Data):
                self.pieces += 1
                self.piece_bytes += len(event.data)
            elif isinstance(event, h11.Request):
                self.pieces = self.piece_bytes = 0
            return event

    class GuardedH11Protocol(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None
        _phase = ""
        _write_deadline: asyncio.TimerHandle | None = None
        _lingering = False

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            size = self.config.h11_max_incomplete_event_size
            self.conn = _CountingConnection(h11.SERVER, **({} if size is None else
                                                           {"max_incomplete_event_size": size}))

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(_QuietTransport(transport))  # type: ignore[arg-type]
            self._arm("header")

        def data_received(self, data: bytes) -> None:
            if self._lingering:
                return  # a refused request's remaining bytes: read and dropped (see _refuse)
            super().data_received(data)
            self._track()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            if self._write_deadline is not None:
                self._write_deadline.cancel()
                self._write_deadline = None
            super().connection_lost(exc)

        def pause_writing(self) -> None:
            super().pause_writing()
            if self._write_deadline is None:
                self._write_deadline = self.loop.call_later(timeouts.write, self._stalled)

        def resume_writing(self) -> None:
            super().resume_writing()
            if self._write_deadline is not None:
                self._write_deadline.cancel()
                self._write_deadline = None

        def _track(self) -> None:
            """Arm the deadline of the phase the client is in: headers, body, or none (a whole request)."""
            if self.transport.is_closing():
                self._disarm()
                return
            conn = self.conn
            state = conn.their_state
            if state is h11.IDLE:
                if self._phase != "header":
                    self._arm("header")  # part of the next request's head has arrived
            elif state is h11.SEND_BODY:
                if self._phase != "body":
                    self._arm("body")
                assert isinstance(conn, _CountingConnection)
                if conn.pieces >= timeouts.min_pieces and conn.piece_bytes < conn.pieces * timeouts.min_piece_bytes:
                    log.warning("http_body_too_fragmented", client=_client(self), pieces=conn.pieces,
                                bytes=conn.piece_bytes)
                    self._refuse(400, "BODY_TOO_FRAGMENTED", f"the request body came in {conn.pieces} pieces of "
                                 f"{conn.piece_bytes // conn.pieces} bytes on average; send it in pieces of at "
                                 f"least {timeouts.min_piece_bytes} bytes, or with a Content-Length")
            else:
                self._disarm()

        def _arm(self, phase: str) -> None:
            self._disarm()
            self._phase = phase
            seconds = timeouts.header if phase == "header" else timeouts.body
            self._deadline = self.loop.call_later(seconds, self._expired, phase, seconds)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
            self._deadline, self._phase = None, ""

        def _expired(self, phase: str, seconds: float) -> None:
            self._deadline, self._phase = None, ""
            if self.transport.is_closing():
                return
            log.info("http_client_too_slow", client=_client(self), phase=phase, seconds=seconds)
            what = "its headers" if phase == "header" else "its body"
            self._refuse(408, "REQUEST_TIMEOUT", f"the request did not send {what} within {seconds:g} s; "
                         "this server closes connections that stall")

        def _stalled(self) -> None:
            self._write_deadline = None
            if not self.transport.is_closing():
                log.info("http_client_stopped_reading", client=_client(self), seconds=timeouts.write)
                self.transport.abort()

        def _refuse(self, status: int, code: str, message: str) -> None:
            """Answer with the error envelope (unless the app already began a response) and close."""
            self._disarm()
            cycle = self.cycle
            if cycle is None or not cycle.response_started:
                body = error_body(code, message)
                reason = {400: b"Bad Request", 408: b"Request Timeout"}[status]
                self.transport.write(b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
                                     b"connection: close\r\n\r\n%s" % (status, reason, len(body), body))
            if cycle is not None:
                cycle.disconnected = True  # the app's receive sees a disconnect; its writes are dropped
                cycle.message_event.set()
            # Closing with unread bytes would send a reset, and the client could lose the answer: send it,
            # end our side, drop what still arrives for a moment, then close.
            self._lingering = True
            self.flow.resume_reading()
            if self.transport.can_write_eof():
                self.transport.write_eof()
            self.loop.call_later(min(2.0, timeouts.header), self._close)

        def _close(self) -> None:
            if not self.transport.is_closing():
                self.transport.close()

    return GuardedH11Protocol


class _QuietTransport:
    """A transport that drops writes once the connection is closing (the peer is gone): the app may still be
    producing a response it has not yet been told is unwanted."""

    def __init__(self, transport: asyncio.Transport) -> None:
        self._transport = transport

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not self._transport.is_closing():
            self._transport.write(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


def _client(protocol: H11Protocol) -> str:
    client = protocol.client
    return f"{client[0]}:{client[1]}" if client else "?"


def uvicorn_config(app: Any, *, timeouts: Timeouts | None = None, **options: Any) -> Any:
    """A ``uvicorn.Config`` for ``app`` with ``timeouts`` enforced (``options``: host, port, ...)."""
    import uvicorn

    from igg.interfaces.logs import route_stdlib_logging

    limits = timeouts or Timeouts()
    route_stdlib_logging()  # uvicorn's records in IGG's log format (log_config=None: uvicorn installs none)
    return uvicorn.Config(app, log_level="warning", log_config=None, http=protocol_class(limits),
                          timeout_keep_alive=max(1, round(limits.idle)), server_header=False, **options)


def serve(app: Any, *, host: str, port: int, timeouts: Timeouts | None = None, sock: Any = None) -> None:
    """Run ``app`` on ``host:port`` until interrupted, with ``timeouts`` (defaults: ``Timeouts()``); ``sock``:
    a socket already listening there (the command line binds first, so a busy port is told before serving)."""
    import uvicorn

    server = uvicorn.Server(uvicorn_config(app, timeouts=timeouts, host=host, port=port))
    server.run(sockets=[sock] if sock is not None else None)
