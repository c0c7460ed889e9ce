"""No state change without intent: the shapes a browser sends cross-site (a form post, ``text/plain``, a
bodyless ``fetch``, ``Origin: null`` from a sandboxed frame or a ``data:`` page, a page on another loopback
port) are refused with 403 and the error envelope, by ``igg serve`` and by ``igg mcp --transport http``; the
server's own pages and JSON clients go on working."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import httpx
import pytest

from tests.conftest import ROOT
from tests.integration.test_http import error_of, serve
from tests.unit.test_workspace import request_dict


def test_a_token_less_server_refuses_every_cross_site_shape(tmp_path):
    with serve(tmp_path) as http:
        assert http.post("/sessions", json=request_dict(session_id="cs")).status_code == 201
        base = str(http.base_url).rstrip("/")
        other_port = base.rsplit(":", 1)[0] + ":1"
        # the shapes a page on another site can send without a preflight
        shapes = {
            "form post": dict(data={"prune_isolated": "true"}),
            "text/plain": dict(content=b'{"prune_isolated": true}', headers={"content-type": "text/plain"}),
            "multipart": dict(files={"f": ("x", b"{}")}),
            "no body, no type": dict(),
        }
        for name, shape in shapes.items():
            refused = http.post("/sessions/cs/finish", **shape)
            assert error_of(refused) == (403, "JSON_REQUIRED"), name
        for origin in ("null", other_port, "http://localhost:9", "http://evil.example", "file://", "data:"):
            refused = http.post("/sessions/cs/finish", json={}, headers={"origin": origin})
            assert error_of(refused) == (403, "ORIGIN_FORBIDDEN"), origin
            assert "error" in refused.json() and refused.json()["error"]["message"]
        assert http.get("/sessions/cs").json()["status"] == "open"  # nothing of that changed the session
        # the server's own pages (its origin) and clients that send no Origin are served
        same = http.post(
            "/sessions/cs/actions", json={"reasoning": "", "actions": []}, headers={"origin": base}
        )
        assert same.status_code == 200, same.text
        assert http.post("/sessions/cs/finish", json={}).status_code == 200


def test_an_allowed_host_with_its_port_may_send_requests(tmp_path):
    with serve(tmp_path, "--allowed-host", "tools.example:8443") as http:
        assert http.post("/sessions", json=request_dict(session_id="ah")).status_code == 201
        ok = http.post(
            "/sessions/ah/actions",
            json={"reasoning": "", "actions": []},
            headers={"origin": "https://tools.example:8443"},
        )
        assert ok.status_code == 200, ok.text
        other = http.post(
            "/sessions/ah/actions",
            json={"reasoning": "", "actions": []},
            headers={"origin": "https://tools.example:9999"},
        )
        assert error_of(other) == (403, "ORIGIN_FORBIDDEN")


@pytest.fixture(scope="module")
def mcp_http():
    from tests.support.server import free_port

    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "IGG_API_TOKEN"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "igg", "mcp", "--transport", "http", "--port", str(port), "--memory"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 90
    while True:
        try:
            httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2)
            break
        except httpx.TransportError:
            assert time.monotonic() < deadline and proc.poll() is None, (
                "igg mcp --transport http did not start"
            )
            time.sleep(0.1)
    yield url
    proc.terminate()
    proc.wait(timeout=10)


def test_the_mcp_http_transport_refuses_cross_site_shapes_too(mcp_http):
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    accept = {"accept": "application/json, text/event-stream"}
    form = httpx.post(
        mcp_http, content=b"x=1", headers={**accept, "content-type": "application/x-www-form-urlencoded"}
    )
    assert error_of(form) == (403, "JSON_REQUIRED")
    plain = httpx.post(
        mcp_http, content=str(initialize).encode(), headers={**accept, "content-type": "text/plain"}
    )
    assert error_of(plain) == (403, "JSON_REQUIRED")
    for origin in ("null", "http://127.0.0.1:1"):
        refused = httpx.post(mcp_http, json=initialize, headers={**accept, "origin": origin})
        assert error_of(refused) == (403, "ORIGIN_FORBIDDEN"), origin
    served = httpx.post(mcp_http, json=initialize, headers=accept)
    assert served.status_code == 200, served.text
