"""A real OpenAI-compatible HTTP server on loopback, answering ``/v1/chat/completions`` from a script.

Tests start it, point the product at ``server.base_url`` and talk to it through the real ``openai``
client. Each request takes the next reply of the script; a reply is either the model's text (a ``str``)
or a ``Reply`` that injects a fault:

* ``Reply(status=429, headers={"Retry-After": "1"})``: an HTTP error with an OpenAI-style error body
* ``Reply(hang=5.0)``: wait longer than the client's timeout, then answer (or not: the client is gone)
* ``Reply(drop=True)``: close the connection without answering
* ``Reply(text, finish_reason="length")``: truncated output
* ``Reply(text, usage=None)``: no ``usage`` in the response
* ``Reply(refusal="I can't help with that")``, ``Reply(no_choices=True)``
* ``Reply(text, trickle=0.2)``: a 200 whose body arrives one byte every 0.2 s (each read is quick, the call is
  not)
* ``Reply(body=b"<html>...", content_type="text/html")``: a 200 with a raw body that is not a completion
* ``Reply(status=401, echo=True)``: an error whose message echoes the request's Authorization header, as
  some proxies do

``reject`` lists ``response_format`` types the server refuses with a 400 (without consuming a reply),
like servers that know only JSON mode or plain text. Every request is recorded in ``requests`` (the
decoded JSON body with its headers) so tests can assert what IGG sent.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(kw_only=True)
class Reply:
    """One scripted answer: the model's text, or a fault to inject."""

    content: str | None = None
    finish_reason: str = "stop"
    usage: dict[str, int] | None | bool = True
    """True: computed from the request and the content; None/False: omitted; a dict: sent as is."""
    status: int = 200
    """Non-200: an HTTP error with an OpenAI-style error body (``message``)."""
    message: str = "injected fault"
    headers: dict[str, str] = field(default_factory=dict)
    hang: float = 0.0
    """Seconds to wait before answering (a hang longer than the client timeout)."""
    drop: bool = False
    """Close the connection without sending a response."""
    refusal: str | None = None
    no_choices: bool = False
    trickle: float = 0.0
    """Seconds between the body's bytes (headers come at once)."""
    body: bytes | None = None
    """A raw 200 body sent instead of a completion."""
    content_type: str = "application/json"
    echo: bool = False
    """Put the request's Authorization header into the error message."""


@dataclass(kw_only=True)
class Received:
    """A request the server received."""

    path: str
    body: dict[str, Any]
    headers: dict[str, str]
    answered: str
    """What the server did: 'reply', 'rejected_response_format', an HTTP status, 'hang', 'drop'."""


class FakeOpenAI:
    """The server; use as a context manager (``with FakeOpenAI(script) as server: ...``)."""

    def __init__(
        self, script: Iterable[str | Reply] = (), *, reject: Iterable[str] = (), model: str = "fake-model"
    ) -> None:
        self.script: list[Reply] = [r if isinstance(r, Reply) else Reply(content=r) for r in script]
        self.reject = set(reject)
        self.model = model
        self.requests: list[Received] = []
        self._lock = threading.Lock()
        self._released = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-openai", daemon=True
        )

    @property
    def base_url(self) -> str:
        """The ``OPENAI_BASE_URL`` of this server."""
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def remaining(self) -> int:
        """Replies not yet used."""
        return len(self.script)

    def add(self, *replies: str | Reply) -> None:
        """Append replies to the script."""
        with self._lock:
            self.script += [r if isinstance(r, Reply) else Reply(content=r) for r in replies]

    def start(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._released.set()  # wake hanging handlers
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- request handling (runs on the server's threads) --

    def _next(self, body: dict[str, Any], path: str, headers: dict[str, str]) -> tuple[str, Reply | None]:
        with self._lock:
            fmt = (body.get("response_format") or {}).get("type")
            if fmt in self.reject:
                self.requests.append(
                    Received(path=path, body=body, headers=headers, answered="rejected_response_format")
                )
                return "rejected_response_format", None
            reply = self.script.pop(0) if self.script else None
            answered = (
                "exhausted"
                if reply is None
                else "drop"
                if reply.drop
                else "hang"
                if reply.hang
                else str(reply.status)
                if reply.status != 200
                else "reply"
            )
            self.requests.append(Received(path=path, body=body, headers=headers, answered=answered))
            return answered, reply

    def completion(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        """The chat completion object for a scripted reply."""
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.refusal is not None:
            message = {"role": "assistant", "content": None, "refusal": reply.refusal}
        out: dict[str, Any] = {
            "id": f"chatcmpl-fake-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model") or self.model,
            "choices": []
            if reply.no_choices
            else [{"index": 0, "message": message, "finish_reason": reply.finish_reason, "logprobs": None}],
        }
        if reply.usage is True:
            prompt = sum(len(str(m.get("content") or "")) for m in body.get("messages", [])) // 4 + 1
            completion = len(reply.content or reply.refusal or "") // 4 + 1
            out["usage"] = {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            }
        elif isinstance(reply.usage, dict):
            out["usage"] = reply.usage
        return out


class _Handler(BaseHTTPRequestHandler):
    """The requests of one fake server (``fake``, set on the class ``_handler_for`` makes)."""

    fake: FakeOpenAI
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()
        # headers and body go out in two writes: without this, Nagle + delayed ACK add ~40 ms per call
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, *args: Any) -> None:  # keep test output clean
        pass

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except json.JSONDecodeError:
            self._json(400, _error("request body is not JSON", "invalid_request_error"))
            return
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._json(404, _error(f"no route {self.path}", "not_found"))
            return
        answered, reply = self.fake._next(body, self.path, {k.lower(): v for k, v in self.headers.items()})
        if reply is None:
            self._unanswered(answered, body)
        else:
            self._answer(body, reply)

    def _unanswered(self, answered: str, body: dict[str, Any]) -> None:
        """Answer a request the script has no reply for: a refused response format, or none left."""
        if answered == "rejected_response_format":
            fmt = body["response_format"]["type"]
            self._json(
                400,
                _error(
                    f"response_format type '{fmt}' is not supported by this server",
                    "invalid_request_error",
                    param="response_format",
                ),
            )
        else:
            self._json(500, _error("fake_openai: the script has no reply left", "server_error"))

    def _answer(self, body: dict[str, Any], reply: Any) -> None:
        """Answer with the script's ``reply``: after a hang, by dropping the connection, as a fault, or
        with its body (else a completion)."""
        if reply.hang:
            self.fake._released.wait(reply.hang)
        if reply.drop:
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        if reply.status != 200:
            message = reply.message
            if reply.echo:
                message += f" (received Authorization: {self.headers.get('Authorization')}, url {self.path})"
            self._json(reply.status, _error(message, "fault"), reply.headers)
            return
        try:
            if reply.body is not None:
                self._send(200, reply.body, reply.content_type, reply.headers, reply.trickle)
            else:
                self._json(200, self.fake.completion(body, reply), reply.headers, reply.trickle)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
            self.close_connection = True

    def _json(
        self,
        status: int,
        payload: dict[str, Any],
        headers: dict[str, str] | None = None,
        trickle: float = 0.0,
    ) -> None:
        self._send(status, json.dumps(payload).encode(), "application/json", headers, trickle)

    def _send(
        self, status: int, data: bytes, content_type: str, headers: dict[str, str] | None, trickle: float
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if not trickle:
            self.wfile.write(data)
            return
        self.wfile.flush()
        for i in range(len(data)):
            if self.fake._released.wait(trickle):
                return
            self.wfile.write(data[i : i + 1])
            self.wfile.flush()


def _handler_for(server: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    return type("Handler", (_Handler,), {"fake": server})


def _error(message: str, kind: str, param: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": param, "code": None}}
