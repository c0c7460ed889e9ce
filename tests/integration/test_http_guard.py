"""`igg serve` under attack, over real sockets: DNS rebinding, slow and half-open clients, tiny chunks,
planted files in the output directory, a full disk, and requests the API does not know. One server for the
module.

The server runs with short deadlines (header 1 s, body 2 s, idle 1 s), an extra allowed host name, an output
directory, and a file-size limit (RLIMIT_FSIZE) that makes large writes fail the way a full disk does.
"""

from __future__ import annotations

import json
import os
import resource
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from igg.interfaces.http.security import HostPolicy
from tests.conftest import ROOT, node
from tests.integration.test_http import error_of
from tests.support.server import clean_env, free_port, igg_serve, stop, wait_until
from tests.unit.test_workspace import request_dict

FILE_LIMIT = 200_000
"""Bytes any one file of the server may reach (larger writes fail with EFBIG, like ENOSPC)."""


def _limit_files() -> None:  # runs in the child before exec; Python ignores SIGXFSZ itself
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_LIMIT, FILE_LIMIT))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("guard")
    out = tmp / "out"
    out.mkdir()
    args = [
        "--memory",
        "--output-dir",
        str(out),
        "--header-timeout",
        "1",
        "--body-timeout",
        "2",
        "--idle-timeout",
        "1",
    ]
    with (
        igg_serve(
            args,
            env=clean_env({"IGG_ALLOWED_HOSTS": "graphs.internal"}),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            preexec_fn=_limit_files,
        ) as (proc, base),
        httpx.Client(base_url=base, timeout=30) as client,
    ):
        yield {"http": client, "port": int(base.rsplit(":", 1)[1]), "out": out, "proc": proc}
    assert proc.stderr is not None
    assert "Traceback" not in proc.stderr.read().decode()


def connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=15)
    return sock


def read_all(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (the socket timeout bounds the wait)."""
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def envelope(raw: bytes) -> tuple[int, str]:
    head, _, body = raw.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    return status, json.loads(body)["error"]["code"]


# ---- DNS rebinding ---------------------------------------------------------------------------------------


def test_a_foreign_host_header_is_refused_without_a_token(server):
    http: httpx.Client = server["http"]
    refused = http.post(
        "/sessions", json=request_dict(session_id="rebound"), headers={"Host": "attacker.example"}
    )
    assert error_of(refused) == (421, "HOST_FORBIDDEN")
    assert "attacker.example" in refused.json()["error"]["message"]
    assert error_of(http.get("/sessions", headers={"Host": "attacker.example:8080"})) == (
        421,
        "HOST_FORBIDDEN",
    )
    assert error_of(http.get("/sessions/rebound/observation")) == (
        404,
        "SESSION_NOT_FOUND",
    )  # nothing was made
    page = http.get("/sessions", headers={"Origin": "http://attacker.example"})
    assert error_of(page) == (403, "ORIGIN_FORBIDDEN")


@pytest.mark.parametrize(
    "host", ["localhost", "127.0.0.1", "[::1]", "LOCALHOST:1234", "graphs.internal", "graphs.internal:443"]
)
def test_loopback_names_and_configured_hosts_are_answered(server, host):
    http: httpx.Client = server["http"]
    assert http.get("/sessions", headers={"Host": host}).status_code == 200


def test_with_a_token_and_no_list_any_host_is_answered():
    assert HostPolicy.build([], token="t").permits("graphs.example.org")
    assert not HostPolicy.build([], token=None).permits("graphs.example.org")
    assert not HostPolicy.build(["a.example"], token="t").permits("b.example")
    assert HostPolicy.build(["*"], token=None).permits("anything")


# ---- slow, half-open and fragmenting clients -----------------------------------------------------------


def test_half_open_connections_are_closed_after_the_header_deadline(server):
    """Fifty connections that never send a byte are answered 408 and closed; the server keeps serving."""
    sockets = [connect(server["port"]) for _ in range(50)]
    try:
        assert server["http"].get("/healthz").status_code == 200  # not starved meanwhile
        for sock in sockets:
            assert envelope(read_all(sock)) == (408, "REQUEST_TIMEOUT")
    finally:
        for sock in sockets:
            sock.close()


def test_headers_sent_slowly_are_cut_off(server):
    with connect(server["port"]) as sock:
        sock.sendall(b"POST /sessions HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        assert envelope(read_all(sock)) == (408, "REQUEST_TIMEOUT")


def test_a_body_that_never_arrives_is_cut_off(server):
    with connect(server["port"]) as sock:
        sock.sendall(
            b"POST /sessions HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n"
            b'content-length: 1000\r\n\r\n{"goal'
        )
        raw = read_all(sock)
    assert envelope(raw) == (408, "REQUEST_TIMEOUT") and b"body" in raw


def test_a_body_in_one_byte_chunks_is_refused(server):
    body = json.dumps(request_dict(session_id="tiny-chunks", context_data="x" * 30_000)).encode()
    chunked = b"".join(b"1\r\n%c\r\n" % byte for byte in body) + b"0\r\n\r\n"
    with connect(server["port"]) as sock:
        sock.sendall(
            b"POST /sessions HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n"
            b"transfer-encoding: chunked\r\n\r\n"
        )
        try:
            sock.sendall(chunked)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server hung up before the last chunks
        raw = read_all(sock)
    assert envelope(raw) == (400, "BODY_TOO_FRAGMENTED")
    assert server["http"].get("/sessions/tiny-chunks/observation").status_code == 404


def test_the_deadlines_wrap_uvicorn_without_subclassing_it():
    """The guarded protocol is an asyncio.Protocol of IGG's wrapping uvicorn's: no uvicorn class in its
    ancestry, so a change of uvicorn's private protocol internals cannot break the deadlines."""
    from igg.interfaces.http.deadlines import protocol_class
    from igg.interfaces.http.timeouts import Timeouts

    guarded = protocol_class(Timeouts())
    assert not [c for c in guarded.__mro__ if c.__module__.startswith("uvicorn")]
    assert guarded.inner_class.__module__.startswith("uvicorn")  # type: ignore[attr-defined]


def test_an_idle_keep_alive_connection_is_closed(server):
    with connect(server["port"]) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        raw = read_all(sock)  # the response, then the close after the idle deadline
    assert raw.startswith(b"HTTP/1.1 200") and raw.count(b"HTTP/1.1") == 1


# ---- the error envelope ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "content", "expected"),
    [
        ("GET", "/no/such/route", None, (404, "NOT_FOUND")),
        ("DELETE", "/sessions", None, (405, "METHOD_NOT_ALLOWED")),
        ("POST", "/sessions", b"{not json", (422, "INVALID_JSON")),
        ("POST", "/sessions", b'{"goal_prompt": "\xff\xfe"}', (422, "INVALID_JSON")),
        ("POST", "/sessions", b"[" * 50_000 + b"]" * 50_000, (422, "INVALID_JSON")),
        ("POST", "/sessions", json.dumps(request_dict(surprise=1)).encode(), (422, "INVALID_REQUEST")),
        ("GET", "/sessions?limit=0", None, (422, "INVALID_ARGUMENTS")),
        ("GET", "/sessions?limit=many", None, (422, "INVALID_ARGUMENTS")),
        ("GET", "/sessions/nope/observation?token_budget=5", None, (422, "INVALID_ARGUMENTS")),
        ("POST", "/sessions/bad%20id/finish", b"{}", (422, "INVALID_ARGUMENTS")),
    ],
)
def test_every_refusal_is_the_error_envelope(server, method, path, content, expected):
    http: httpx.Client = server["http"]
    response = http.request(method, path, content=content, headers={"content-type": "application/json"})
    assert error_of(response) == expected, response.text
    assert set(response.json()) == {"error"} and response.json()["error"]["message"]


# ---- files in the output directory -----------------------------------------------------------------------


def test_planted_files_in_the_output_directory_are_refused(server, tmp_path):
    http: httpx.Client = server["http"]
    out: Path = server["out"]
    sid = http.post("/sessions", json=request_dict()).json()["session_id"]
    outside = tmp_path / "authorized_keys"
    outside.write_text("ssh-ed25519 AAAA owner\n")
    os.link(outside, out / "linked.graphml")
    os.mkfifo(out / "fifo.json")
    for name in (
        "linked.graphml",
        "fifo.json",
        ".ssh/authorized_keys",
        "a\nb.json",
        "x\x01.json",
        "evil\u202egpj.json",
    ):
        refused = http.post(f"/sessions/{sid}/export", json={"format": "graphml", "path": name})
        assert error_of(refused) == (403, "PATH_FORBIDDEN"), (name, refused.text)
    assert outside.read_text() == "ssh-ed25519 AAAA owner\n"
    written = http.post(f"/sessions/{sid}/export", json={"format": "graphml", "path": "ok.graphml"})
    assert written.status_code == 200 and (out / "ok.graphml").read_bytes().startswith(b"<?xml")


def test_a_full_disk_answers_507_and_leaves_nothing(server):
    http: httpx.Client = server["http"]
    out: Path = server["out"]
    payload = request_dict()
    payload["config"]["schema"]["node_types"].append("Blob")
    sid = http.post("/sessions", json=payload).json()["session_id"]
    big = {f"p{i}": "x" * 16_000 for i in range(20)}  # ~320 kB of JSON, over the server's file limit
    applied = http.post(
        f"/sessions/{sid}/actions", json={"actions": [node("Blob", name="big", **big)]}
    ).json()
    assert applied["accepted"] == 1, applied
    before = sorted(p.name for p in out.rglob("*"))
    failed = http.post(f"/sessions/{sid}/export", json={"format": "json", "path": "big.json"})
    assert error_of(failed) == (507, "EXPORT_FAILED"), failed.text
    assert sorted(p.name for p in out.rglob("*")) == before  # no 0-byte file, no temporary file
    assert (
        http.post(f"/sessions/{sid}/export", json={"format": "json"}).status_code == 200
    )  # inline still works


def test_the_mcp_http_transport_checks_the_host_too(tmp_path):
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "igg",
            "mcp",
            "--transport",
            "http",
            "--port",
            str(port),
            "--memory",
            "--allowed-host",
            "graphs.internal",
        ],
        cwd=ROOT,
        env=clean_env(drop=("IGG_API_TOKEN", "IGG_ALLOWED_HOSTS")),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        answers: list[httpx.Response] = []

        def answered() -> bool:
            answers.append(httpx.post(url, json={}, headers={"Host": "attacker.example"}, timeout=2))
            return True

        wait_until(answered, proc, "igg mcp --transport http")
        assert error_of(answers[0]) == (421, "HOST_FORBIDDEN")
        for host in ("graphs.internal", "localhost"):  # past the Host check: the SDK answers the empty call
            assert httpx.post(url, json={}, headers={"Host": host}, timeout=10).status_code != 421
    finally:
        stop(proc)


def test_served_connections_send_without_waiting_for_acks():
    """The listening socket the CLI hands to uvicorn gives accepted connections TCP_NODELAY (asyncio sets it
    only when the socket's proto says TCP): with Nagle's algorithm on, a response written as headers then body
    waited for the client's delayed ACK, 40 ms on every keep-alive request after the first."""
    import asyncio

    from igg.interfaces.cli.listen import bind

    async def scenario() -> int:
        sock = bind("127.0.0.1", 0)
        accepted: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        class Probe(asyncio.Protocol):
            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                peer = transport.get_extra_info("socket")
                accepted.set_result(peer.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
                transport.close()

        server = await asyncio.get_running_loop().create_server(Probe, sock=sock)
        async with server:
            _, writer = await asyncio.open_connection(*sock.getsockname()[:2])
            nodelay = await asyncio.wait_for(accepted, 10)
            writer.close()
            return nodelay

    assert asyncio.run(scenario()) != 0
