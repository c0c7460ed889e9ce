"""What a client of `igg serve` meets besides the operations: one session's info, messages that name HTTP
routes, RFC 3339 times, the package version in OpenAPI, an API explorer that works offline, and a server
that stays quiet when an event-stream client hangs up early. One live server for the module."""

from __future__ import annotations

import json
import re
import socket
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from importlib.metadata import version
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import FIXTURES
from tests.support.browser import ARTIFACTS, chromium_path
from tests.support.server import clean_env, igg_serve
from tests.unit.test_workspace import request_dict

RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")


class Live:
    def __init__(self, client: httpx.Client, log: Path) -> None:
        self.http = client
        self.log = log


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    tmp = tmp_path_factory.mktemp("surface")
    log = tmp / "serve.log"
    args = ["--store", str(tmp / "sessions.sqlite"), "--output-dir", str(tmp / "out")]
    with (
        igg_serve(args, env=clean_env(), log_path=log) as (_, base),
        httpx.Client(base_url=base, timeout=60) as c,
    ):
        yield Live(c, log)


def test_get_one_session_shows_its_state_limits_and_times(live: Live) -> None:
    before = datetime.now(UTC) - timedelta(seconds=5)
    started = live.http.post("/sessions", json=request_dict(session_id="info-1"))
    assert started.status_code == 201, started.text
    live.http.post(
        "/sessions/info-1/actions",
        json={
            "actions": [{"type": "ADD_NODE", "label": "Class", "properties": {"name": "A", "package": "p"}}]
        },
    )
    got = live.http.get("/sessions/info-1")
    assert got.status_code == 200, got.text
    info = got.json()
    assert {
        k: info[k] for k in ("session_id", "status", "iteration", "nodes", "edges", "stop_reason", "agent")
    } == {
        "session_id": "info-1",
        "status": "open",
        "iteration": 1,
        "nodes": 1,
        "edges": 0,
        "stop_reason": None,
        "agent": "tool",
    }
    assert (
        info["max_nodes"] == request_dict()["config"]["constraints"]["max_nodes"]
        and info["max_iterations"] > 0
    )
    assert info["goal"] == request_dict()["goal_prompt"]
    for key in ("created", "updated"):  # RFC 3339 strings, not epoch floats
        assert RFC3339.match(info[key]), info[key]
        assert before <= datetime.fromisoformat(info[key]) <= datetime.now(UTC) + timedelta(seconds=5)
    assert info["created"] <= info["updated"]
    listed = {s["session_id"]: s for s in live.http.get("/sessions").json()["sessions"]}
    assert RFC3339.match(listed["info-1"]["created"]) and RFC3339.match(listed["info-1"]["updated"])


def test_an_unknown_session_is_404_naming_http_routes_not_tools(live: Live) -> None:
    for method, path in [
        ("GET", "/sessions/ghost"),
        ("GET", "/sessions/ghost/observation"),
        ("POST", "/sessions/ghost/finish"),
    ]:
        answer = live.http.request(method, path, json={} if method == "POST" else None)
        assert answer.status_code == 404, (path, answer.text)
        problem = answer.json()["error"]
        assert problem["code"] == "SESSION_NOT_FOUND"
        assert problem["message"] == (
            "no session 'ghost'; GET /sessions shows the sessions there are, POST /sessions opens a new one"
        )
        assert "list_sessions" not in problem["message"] and "start_session" not in problem["message"]


def test_openapi_carries_the_package_version_and_the_session_route(live: Live) -> None:
    spec = live.http.get("/openapi.json").json()
    assert spec["info"]["version"] == version("igg")
    assert "get" in spec["paths"]["/sessions/{session_id}"]


def test_the_api_explorer_references_no_other_host_and_its_assets_are_served(live: Live) -> None:
    page = live.http.get("/docs")
    assert page.status_code == 200 and "SwaggerUIBundle" in page.text
    hosts = re.findall(r"""(?:src|href|url)\s*[=:]\s*["']?(https?://[^"' >]+)""", page.text)
    assert hosts == [], hosts  # FastAPI's default page loads Swagger UI from cdn.jsdelivr.net
    assets = re.findall(r"""(?:src|href)="(/[^"]+)\"""", page.text)
    assert {"/docs/static/swagger-ui-bundle.js", "/docs/static/swagger-ui.css"} <= set(assets)
    for asset in assets:
        fetched = live.http.get(asset)
        assert fetched.status_code == 200 and len(fetched.content) > 100, asset
    assert '"validatorUrl": null' in page.text  # the validator badge would call validator.swagger.io


def test_the_explorer_renders_in_a_browser_with_the_network_cut_off(live: Live) -> None:
    """Headless Chromium may reach only this server: the page still lists the API's operations. The browser is
    this test's own (not the session's shared one, whose event loop would outlive the test in this worker)."""
    from playwright.sync_api import sync_playwright

    base = str(live.http.base_url).rstrip("/")
    outside: list[str] = []

    def route(r: Any) -> None:
        if r.request.url.startswith(base):
            r.continue_()
        else:
            outside.append(r.request.url)
            r.abort()

    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=chromium_path(),
            headless=True,
            args=["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu-sandbox"],
        )
        try:
            page = browser.new_page()
            page.route("**/*", route)
            page.goto(f"{base}/docs")
            page.wait_for_selector(".opblock", timeout=60_000)
            summaries = page.locator(".opblock-summary-path").all_inner_texts()
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "http-docs-offline.png"))
        finally:
            browser.close()
    assert "/sessions/{session_id}" in [s.replace("\u200b", "") for s in summaries]
    assert outside == []


def test_an_event_stream_client_that_hangs_up_early_makes_no_noise(live: Live) -> None:
    payload = json.loads((FIXTURES / "auth" / "request.json").read_text()) | {"session_id": "sse-drop"}
    started = live.http.post("/runs", json={**payload, "agent": "code"})
    assert started.status_code == 202, started.text
    host, port = live.http.base_url.host, live.http.base_url.port
    for _ in range(5):  # read the start of the stream, then drop the connection
        with socket.create_connection((host, port)) as sock:
            sock.sendall(b"GET /sessions/sse-drop/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            assert sock.recv(64).startswith(b"HTTP/1.1 200")
    deadline = time.monotonic() + 120
    while live.http.get("/sessions/sse-drop").json()["status"] == "running" and time.monotonic() < deadline:
        time.sleep(0.2)
    with live.http.stream("GET", "/sessions/sse-drop/events") as stream:  # a patient client gets everything
        kinds = [line.split(": ", 1)[1] for line in stream.iter_lines() if line.startswith("event: ")]
    assert kinds[0] == "run_started" and kinds[-1] == "run_finished"
    log = live.log.read_text()
    assert "socket.send() raised exception" not in log, log[-2000:]
    assert "Traceback" not in log, log[-2000:]
