"""`igg serve` as a client sees it: httpx against a live server on loopback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import networkx as nx
import pytest

from tests.conftest import ROOT, edge, node
from tests.support.server import clean_env, igg_serve
from tests.unit.test_workspace import request_dict


@contextmanager
def serve(
    tmp_path: Path, *extra: str, token: str | None = None, env: dict[str, str] | None = None
) -> Iterator[httpx.Client]:
    """A live ``igg serve`` on a free loopback port, and an httpx client for it (no auth header)."""
    environ = clean_env(env)
    if token is not None:
        environ["IGG_API_TOKEN"] = token
    args = ["--store", str(tmp_path / "sessions.sqlite"), "--output-dir", str(tmp_path / "out"), *extra]
    with (
        igg_serve(
            args, env=environ, log_path=tmp_path / f"serve-{len(list(tmp_path.glob('serve-*')))}.log"
        ) as (_, base),
        httpx.Client(base_url=base, timeout=30) as client,
    ):
        yield client


def error_of(response: httpx.Response) -> tuple[int, str]:
    return response.status_code, response.json()["error"]["code"]


def test_a_whole_session_over_http(tmp_path):
    with serve(tmp_path) as http:
        started = http.post("/sessions", json=request_dict(session_id="web-1"))
        assert started.status_code == 201, started.text
        assert started.json()["session_id"] == "web-1"

        observed = http.get("/sessions/web-1/observation")
        assert observed.status_code == 200 and "Class" in observed.json()["markdown"]

        first = http.post(
            "/sessions/web-1/actions",
            json={
                "reasoning": "first",
                "actions": [
                    node("Class", name="AuthController", package="com.app.web"),
                    node("Class", name="AuthService"),
                    edge("CALLS", {"name": "AuthController"}, {"name": "AuthService"}),
                    {"type": "RENAME_NODE"},
                ],
            },
        ).json()
        assert [(v["accepted"], v.get("code")) for v in first["verdicts"]] == [
            (True, None),
            (False, "MISSING_REQUIRED_ATTRIBUTE"),
            (False, "NODE_NOT_FOUND"),
            (False, "UNKNOWN_ACTION"),
        ]

        fixed = http.post(
            "/sessions/web-1/actions",
            json={
                "actions": [
                    node("Class", name="AuthService", package="com.app.auth"),
                    edge("CALLS", {"name": "AuthController"}, {"name": "AuthService"}),
                ]
            },
        ).json()
        assert [v["accepted"] for v in fixed["verdicts"]] == [True, True] and fixed["iteration"] == 2

        focused = http.get(
            "/sessions/web-1/observation", params={"focus": ["AuthService"], "token_budget": 500}
        )
        assert focused.status_code == 200 and focused.json()["tokens"] <= 500

        done = http.post("/sessions/web-1/finish", json={"prune_isolated": True}).json()
        assert done["stop_reason"] == "finished" and done["pruned"] == []

        doc = json.loads(http.post("/sessions/web-1/export", json={"format": "json"}).json()["content"])
        names = {n["id"]: n["properties"]["name"] for n in doc["nodes"]}
        assert sorted(names.values()) == ["AuthController", "AuthService"]
        assert [(names[e["from"]], e["type"], names[e["to"]]) for e in doc["edges"]] == [
            ("AuthController", "CALLS", "AuthService")
        ]

        written = http.post("/sessions/web-1/export", json={"format": "json", "path": "web/g.json"})
        assert written.status_code == 200 and (tmp_path / "out" / "web" / "g.json").exists()
        graphml = http.post(
            "/sessions/web-1/export", json={"format": "graphml", "path": "web/g.graphml"}
        ).json()
        assert graphml["bytes"] == (tmp_path / "out" / "web" / "g.graphml").stat().st_size
        read = nx.read_graphml(tmp_path / "out" / "web" / "g.graphml")
        assert sorted(d["name"] for _, d in read.nodes(data=True)) == ["AuthController", "AuthService"]
        link = json.loads(http.post("/sessions/web-1/export", json={"format": "nodelink"}).json()["content"])
        assert len(nx.node_link_graph(link, edges="edges").edges) == 1
        # the earlier spelling still works and gives the same document
        old = json.loads(http.post("/sessions/web-1/export", json={"format": "node_link"}).json()["content"])
        assert old == link
        for fmt in ("cypher", "mermaid"):
            assert (
                "AuthService" in http.post("/sessions/web-1/export", json={"format": fmt}).json()["content"]
            )
        for bad in ("../x.json", "/tmp/x.json", "web/../../x.json"):
            assert error_of(http.post("/sessions/web-1/export", json={"path": bad})) == (
                403,
                "PATH_FORBIDDEN",
            )

        assert error_of(http.post("/sessions/web-1/actions", json={"actions": []})) == (
            409,
            "SESSION_FINISHED",
        )
        assert [s["session_id"] for s in http.get("/sessions").json()["sessions"]] == ["web-1"]


def test_errors_are_4xx_with_stable_codes(tmp_path):
    with serve(tmp_path) as http:
        assert error_of(http.get("/sessions/nope/observation")) == (404, "SESSION_NOT_FOUND")
        bad_request = http.post(
            "/sessions", json={"goal_prompt": "x", "config": {"schema": {"node_types": []}}}
        )
        assert error_of(bad_request) == (422, "INVALID_REQUEST")
        assert "node_types" in bad_request.json()["error"]["message"]
        http.post("/sessions", json=request_dict(session_id="e-1"))
        assert error_of(http.post("/sessions", json=request_dict(session_id="e-1"))) == (
            409,
            "SESSION_EXISTS",
        )
        not_json = http.post(
            "/sessions/e-1/actions", content=b"{actions: ", headers={"content-type": "application/json"}
        )
        assert error_of(not_json) == (422, "INVALID_JSON")
        assert error_of(http.post("/sessions/e-1/actions", json={"actions": "all"})) == (
            422,
            "INVALID_RESPONSE",
        )
        openapi = http.get("/openapi.json").json()
        assert {
            "/sessions",
            "/sessions/{session_id}/actions",
            "/sessions/{session_id}/observation",
            "/sessions/{session_id}/events",
            "/runs",
        } <= set(openapi["paths"])


def test_a_token_is_required_when_configured_and_never_echoed(tmp_path):
    secret = "s3cret-token-value"
    with serve(tmp_path, token=secret) as http:
        assert http.get("/healthz").status_code == 200
        missing = http.get("/sessions")
        assert error_of(missing) == (401, "UNAUTHORIZED") and missing.headers["www-authenticate"] == "Bearer"
        wrong = http.get("/sessions", headers={"Authorization": "Bearer nope"})
        assert error_of(wrong) == (401, "UNAUTHORIZED") and secret not in wrong.text
        assert http.get("/sessions", headers={"Authorization": f"Bearer {secret}"}).status_code == 200
        for scheme in ("bearer", "BEARER"):  # RFC 7235: the scheme is case-insensitive
            assert http.get("/sessions", headers={"Authorization": f"{scheme} {secret}"}).status_code == 200
        assert error_of(http.get("/sessions", headers={"Authorization": f"Basic {secret}"})) == (
            401,
            "UNAUTHORIZED",
        )
        # a browser cannot attach the token, so with one every Host name is answered
        assert (
            http.get(
                "/sessions", headers={"Authorization": f"Bearer {secret}", "Host": "graphs.example.org"}
            ).status_code
            == 200
        )
    assert secret not in "".join(p.read_text() for p in tmp_path.glob("serve-*.log"))


def test_oversized_requests_are_refused(tmp_path):
    with serve(tmp_path, "--max-body", "4096") as http:
        big = request_dict(context_data="x" * 10_000)
        assert error_of(http.post("/sessions", json=big)) == (413, "PAYLOAD_TOO_LARGE")

        def chunks() -> Iterator[bytes]:  # no Content-Length: the limit still holds
            yield json.dumps(big).encode()

        assert error_of(
            http.post("/sessions", content=chunks(), headers={"content-type": "application/json"})
        ) == (413, "PAYLOAD_TOO_LARGE")
        assert http.post("/sessions", json=request_dict()).status_code == 201


def test_a_session_survives_a_server_restart(tmp_path):
    with serve(tmp_path) as http:
        http.post("/sessions", json=request_dict(session_id="keep"))
        http.post(
            "/sessions/keep/actions",
            json={
                "actions": [
                    node("Class", name="A", package="p"),
                    node("Class", name="B", package="p"),
                    edge("CALLS", {"name": "A"}, {"name": "B"}),
                ]
            },
        )
        before = http.post("/sessions/keep/export", json={}).json()["content"]
    with serve(tmp_path) as http:
        assert http.post("/sessions/keep/export", json={}).json()["content"] == before
        again = http.post(
            "/sessions/keep/actions",
            json={
                "actions": [node("Class", name="A", package="p"), edge("CALLS", {"name": "B"}, {"name": "A"})]
            },
        ).json()
        assert [v.get("code") for v in again["verdicts"]] == ["DUPLICATE_NODE", None] and again[
            "iteration"
        ] == 2


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.1"])
def test_a_non_loopback_bind_without_a_token_is_refused(host):
    env = {k: v for k, v in os.environ.items() if k != "IGG_API_TOKEN"}
    for command in (["serve"], ["mcp", "--transport", "http"]):
        result = subprocess.run(
            [sys.executable, "-m", "igg", *command, "--host", host, "--memory"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 2, result.stderr
        assert f"refusing to listen on {host} without a token" in result.stderr
        assert "Traceback" not in result.stderr


def test_with_a_token_it_may_listen_beyond_loopback(tmp_path):
    with serve(tmp_path, "--host", "0.0.0.0", token="wide-open-token") as http:
        assert error_of(http.get("/sessions")) == (401, "UNAUTHORIZED")
        assert http.get("/sessions", headers={"Authorization": "Bearer wide-open-token"}).status_code == 200


def sse_events(http: httpx.Client, url: str) -> list[dict[str, Any]]:
    events = []
    with http.stream("GET", url) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        kind = None
        for line in response.iter_lines():
            if line.startswith("event: "):
                kind = line.removeprefix("event: ")
            elif line.startswith("data: "):
                data = json.loads(line.removeprefix("data: "))
                assert data["kind"] == kind
                events.append(data)
    return events


def run_script() -> list[str]:
    """What the scripted model answers: two nodes and an edge (one bad action), then finished."""
    return [
        json.dumps(
            {
                "reasoning": "start",
                "actions": [
                    node("Class", name="AuthController", package="com.app.web"),
                    node("Class", name="AuthService", package="com.app.auth"),
                    edge("CALLS", {"name": "AuthController"}, {"name": "AuthService"}),
                    node("Gadget", name="nope"),
                ],
            }
        ),
        json.dumps(
            {
                "reasoning": "done",
                "finished": True,
                "actions": [
                    node("Interface", name="UserRepository"),
                    edge("IMPLEMENTS", {"name": "AuthService"}, {"name": "UserRepository"}),
                ],
            }
        ),
    ]


def test_an_autonomous_run_streams_its_events_in_order(tmp_path):
    from tests.support.fake_openai import FakeOpenAI

    with (
        FakeOpenAI(run_script()) as llm,
        serve(
            tmp_path, env={"OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": "sk-test-key-not-logged"}
        ) as http,
    ):
        started = http.post("/runs", json={**request_dict(session_id="run-1"), "agent": "llm"})
        assert started.status_code == 202, started.text
        assert started.json()["events"] == "/sessions/run-1/events"
        events = sse_events(http, "/sessions/run-1/events")
        kinds = [e["kind"] for e in events]
        assert kinds == [
            "run_started",
            "iteration_started",
            *["action_verdict"] * 4,
            "iteration_finished",
            "iteration_started",
            *["action_verdict"] * 2,
            "iteration_finished",
            "run_finished",
        ]
        assert [e["iteration"] for e in events if e["kind"] == "iteration_finished"] == [1, 2]
        verdicts = [e for e in events if e["kind"] == "action_verdict"]
        assert [v.get("code") for v in verdicts] == [None, None, None, "UNKNOWN_NODE_TYPE", None, None]
        assert events[-1]["stop_reason"] == "finished"

        again = sse_events(http, "/sessions/run-1/events")  # a late listener gets the whole run
        assert [e["kind"] for e in again] == kinds
        listed = {s["session_id"]: s for s in http.get("/sessions").json()["sessions"]}
        assert listed["run-1"]["status"] == "finished" and listed["run-1"]["stop_reason"] == "finished"
        doc = json.loads(http.post("/sessions/run-1/export", json={}).json()["content"])
        assert sorted(n["properties"]["name"] for n in doc["nodes"]) == [
            "AuthController",
            "AuthService",
            "UserRepository",
        ]
        assert len(doc["edges"]) == 2
        assert error_of(http.post("/sessions/run-1/actions", json={"actions": []})) == (
            409,
            "SESSION_FINISHED",
        )
    assert "sk-test-key-not-logged" not in "".join(p.read_text() for p in tmp_path.glob("serve-*.log"))


def test_a_run_without_a_configured_model_is_a_clear_error(tmp_path):
    with serve(tmp_path, env={"OPENAI_BASE_URL": "", "OPENAI_API_KEY": ""}) as http:
        refused = http.post("/runs", json={**request_dict(), "agent": "llm"})
        assert error_of(refused) == (503, "AGENT_UNAVAILABLE")
        assert "OPENAI" in refused.json()["error"]["message"]
