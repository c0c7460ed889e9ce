"""The protocol that enforces an HTTP listener's deadlines, so slow or half-open clients cannot hold the
server.

uvicorn closes an idle keep-alive connection (its public ``timeout_keep_alive``), but has no setting that
bounds how long a client may take to send a request's headers and body, or to read its response. ``serve``
hands uvicorn (through its public ``Config(http=...)``, which takes any ``asyncio.Protocol`` class) a
protocol of ours that wraps uvicorn's own h11 protocol: it passes every byte and callback through
unchanged, follows the requests with a parser of its own (``h11``'s public ``Connection``, fed the same
bytes) and enforces four more bounds (``Timeouts``):

* ``header``: a connection must deliver a request's line and headers within this many seconds of opening
  (or of the first byte of the next request): then 408 and close. 300 connections that open and say
  nothing are gone after it.
* ``body``: the whole body must arrive within this many seconds after its headers: then 408 and close.
* a body sent in tiny pieces (a chunked body in 1-byte chunks costs the event loop ~4 µs per piece, every
  other request waits): after ``min_pieces`` pieces averaging under ``min_piece_bytes`` bytes, 400 and close.
* ``write``: a client that stops reading a response is dropped when its buffer stays full this long.

Refusals use the API's error envelope (``REQUEST_TIMEOUT``, ``BODY_TOO_FRAGMENTED``). The wrapper relies on
nothing of uvicorn but the ``asyncio.Protocol`` contract, so a uvicorn upgrade cannot break it.

A client that goes away in the middle of a response (an event stream closed early) makes no noise: writes to
a connection that is already closing are dropped here, where asyncio would log "socket.send() raised
exception." for each one.
"""

from __future__ import annotations

import asyncio
from typing import Any

from igg.interfaces.http.security import error_body
from igg.interfaces.http.timeouts import Timeouts
from igg.record.logs import get_logger

log = get_logger("igg.http")

SHADOW_MAX_HEAD = 65_536
"""Head bytes the wrapper's parser buffers; above uvicorn's own limit (h11's 16 KiB), which refuses first."""


def protocol_class(timeouts: Timeouts) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol wrapped with ``timeouts`` enforced (pass it as ``uvicorn.Config(http=...)``)."""
    import uvicorn.config  # imported here: the command line loads this module for every command
    import uvicorn.importer

    inner: type[asyncio.Protocol] = uvicorn.importer.import_from_string(uvicorn.config.HTTP_PROTOCOLS["h11"])
    return type("GuardedProtocol", (GuardedProtocol,), {"inner_class": inner, "timeouts": timeouts})


class GuardedProtocol(asyncio.Protocol):
    """An HTTP/1.1 server protocol (``inner_class``) with deadlines: see the module docstring.

    It owns the transport; the inner protocol gets a ``_GuardedTransport`` that stops passing its writes and
    closes on once the connection is refused or closing.
    """

    inner_class: type[asyncio.Protocol]
    timeouts: Timeouts

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        import h11  # imported here with uvicorn: the command line loads this module for every command

        self._h11 = h11
        self.inner = self.inner_class(*args, **kwargs)
        self.loop = asyncio.get_event_loop()
        self.parser: Any = h11.Connection(h11.SERVER, max_incomplete_event_size=SHADOW_MAX_HEAD)
        """Follows the client's requests (None once it cannot: the inner protocol decides alone then)."""
        self.transport: asyncio.Transport | None = None
        self.guarded: _GuardedTransport | None = None
        self.client = "?"
        self.pieces = self.piece_bytes = 0
        self._deadline: asyncio.TimerHandle | None = None
        self._phase = ""
        self._write_deadline: asyncio.TimerHandle | None = None
        self._lingering = False
        self._inner_lost = False

    # ---- asyncio.Protocol: everything passes through ------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        peer = transport.get_extra_info("peername")
        self.client = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) and len(peer) >= 2 else "?"
        self.guarded = _GuardedTransport(transport)
        self.inner.connection_made(self.guarded)  # type: ignore[arg-type]
        self._arm("header")

    def data_received(self, data: bytes) -> None:
        if self._lingering:
            return  # a refused request's remaining bytes: read and dropped (see _refuse)
        self.inner.data_received(data)
        self._track(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._write_deadline is not None:
            self._write_deadline.cancel()
            self._write_deadline = None
        if not self._inner_lost:
            self._inner_lost = True
            self.inner.connection_lost(exc)

    def pause_writing(self) -> None:
        self.inner.pause_writing()
        if self._write_deadline is None:
            self._write_deadline = self.loop.call_later(self.timeouts.write, self._stalled)

    def resume_writing(self) -> None:
        self.inner.resume_writing()
        if self._write_deadline is not None:
            self._write_deadline.cancel()
            self._write_deadline = None

    # ---- following the requests --------------------------------------------------------------------------

    def _track(self, data: bytes) -> None:
        """Feed the bytes to the parser and arm the deadline of the client's phase: head, body, or none."""
        h11 = self._h11
        if self.transport is None or self.transport.is_closing() or self.parser is None:
            self._disarm()
            return
        parser = self.parser
        if parser.their_state is h11.IDLE and self._phase != "header":
            self._arm("header")  # part of the next request's head has arrived
        try:
            parser.receive_data(data)
            while (event := parser.next_event()) not in (h11.NEED_DATA, h11.PAUSED):
                self._event(event)
                if self.parser is None:
                    return
        except h11.ProtocolError:
            self._stop_following()  # the inner protocol answers a malformed request itself
            return
        if parser.their_state is h11.SEND_BODY:
            self._check_pieces()

    def _event(self, event: Any) -> None:
        h11 = self._h11
        if isinstance(event, h11.Request):
            self.pieces = self.piece_bytes = 0
            self._arm("body")
        elif isinstance(event, h11.Data):
            self.pieces += 1
            self.piece_bytes += len(event.data)
        elif isinstance(event, h11.EndOfMessage):
            self._disarm()  # a whole request: the app has it; the next head is timed from its first byte
            self._answered()
        elif isinstance(event, h11.ConnectionClosed):
            self._stop_following()

    def _answered(self) -> None:
        """Let the parser read the next request: it waits for our side's response, which the inner protocol
        sends; an empty one stands in for it (the parser only needs the cycle to end)."""
        h11 = self._h11
        parser = self.parser
        parser.send(h11.Response(status_code=204, headers=[]))
        parser.send(h11.EndOfMessage())
        if parser.our_state is h11.DONE and parser.their_state is h11.DONE:
            parser.start_next_cycle()
        else:
            self._stop_following()  # the connection closes after this request (Connection: close, HTTP/1.0)

    def _stop_following(self) -> None:
        self._disarm()
        self.parser = None

    def _check_pieces(self) -> None:
        t = self.timeouts
        if self.pieces >= t.min_pieces and self.piece_bytes < self.pieces * t.min_piece_bytes:
            log.warning(
                "http_body_too_fragmented", client=self.client, pieces=self.pieces, bytes=self.piece_bytes
            )
            self._refuse(
                400,
                "BODY_TOO_FRAGMENTED",
                f"the request body came in {self.pieces} pieces of "
                f"{self.piece_bytes // self.pieces} bytes on average; send it in pieces of at least "
                f"{t.min_piece_bytes} bytes, or with a Content-Length",
            )

    # ---- deadlines and refusals --------------------------------------------------------------------------

    def _arm(self, phase: str) -> None:
        self._disarm()
        self._phase = phase
        if self.guarded is not None and phase != "body":
            self.guarded.responded = False  # a new request begins: nothing answered it yet
        seconds = self.timeouts.header if phase == "header" else self.timeouts.body
        self._deadline = self.loop.call_later(seconds, self._expired, phase, seconds)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline, self._phase = None, ""

    def _expired(self, phase: str, seconds: float) -> None:
        self._deadline, self._phase = None, ""
        if self.transport is None or self.transport.is_closing():
            return
        log.info("http_client_too_slow", client=self.client, phase=phase, seconds=seconds)
        what = "its headers" if phase == "header" else "its body"
        self._refuse(
            408,
            "REQUEST_TIMEOUT",
            f"the request did not send {what} within {seconds:g} s; "
            "this server closes connections that stall",
        )

    def _stalled(self) -> None:
        self._write_deadline = None
        if self.transport is not None and not self.transport.is_closing():
            log.info("http_client_stopped_reading", client=self.client, seconds=self.timeouts.write)
            self.transport.abort()

    def _refuse(self, status: int, code: str, message: str) -> None:
        """Answer with the error envelope (unless the app already began a response) and close; the inner
        protocol is told the connection is lost, so the app's ``receive`` sees a disconnect."""
        self._stop_following()
        transport, guarded = self.transport, self.guarded
        assert transport is not None and guarded is not None
        guarded.detached = True  # from now on the inner protocol's writes and closes are dropped
        if not guarded.responded:
            body = error_body(code, message)
            reason = {400: b"Bad Request", 408: b"Request Timeout"}[status]
            transport.write(
                b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
                b"connection: close\r\n\r\n%s" % (status, reason, len(body), body)
            )
        if not self._inner_lost:
            self._inner_lost = True
            self.inner.connection_lost(None)
        # Closing with unread bytes would send a reset, and the client could lose the answer: send it, end our
        # side, drop what still arrives for a moment, then close.
        self._lingering = True
        transport.resume_reading()
        if transport.can_write_eof():
            transport.write_eof()
        self.loop.call_later(min(2.0, self.timeouts.header), self._close)

    def _close(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()


class _GuardedTransport:
    """The transport the inner protocol sees: it notes that a response began, drops writes once the connection
    is closing (the peer is gone: the app may still be producing a response it has not yet been told is
    unwanted), and once ``detached`` (the wrapper refused the request) drops the inner protocol's writes,
    closes and reading switches too."""

    def __init__(self, transport: asyncio.Transport) -> None:
        self._transport = transport
        self.responded = False
        """The inner protocol wrote something for the current request (its response began)."""
        self.detached = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not self.detached and not self._transport.is_closing():
            self.responded = True
            self._transport.write(data)

    def writelines(self, lines: Any) -> None:
        for data in lines:
            self.write(data)

    def close(self) -> None:
        if not self.detached:
            self._transport.close()

    def abort(self) -> None:
        if not self.detached:
            self._transport.abort()

    def write_eof(self) -> None:
        if not self.detached:
            self._transport.write_eof()

    def pause_reading(self) -> None:
        if not self.detached:
            self._transport.pause_reading()

    def resume_reading(self) -> None:
        if not self.detached:
            self._transport.resume_reading()

    def is_closing(self) -> bool:
        return self.detached or self._transport.is_closing()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)
