"""The /ui routes over an in-memory workspace (``igg serve --memory``): what they answer without a store."""

from __future__ import annotations

from fastapi.testclient import TestClient

from igg.interfaces.http.app import build_app
from igg.workspace import Workspace
from tests.conftest import edge, node
from tests.unit.test_workspace import request_dict


def test_an_in_memory_server_shows_the_current_graph_and_its_iterations_but_no_history():
    with TestClient(build_app(Workspace())) as http:
        assert http.post("/sessions", json=request_dict(session_id="m1")).status_code == 201
        http.post(
            "/sessions/m1/actions",
            json={
                "actions": [
                    node("Class", name="A", package="p"),
                    node("Class", name="B", package="p"),
                    edge("CALLS", {"name": "A"}, {"name": "B"}),
                    node("Gadget", name="x"),
                ]
            },
        )
        http.post(
            "/sessions/m1/actions",
            json={
                "actions": [{"type": "UPDATE_NODE", "node": {"name": "A"}, "properties": {"package": "q"}}]
            },
        )

        page = http.get("/ui/")
        assert page.status_code == 200 and '"mode":"server"' in page.text
        assert page.headers["x-content-type-options"] == "nosniff"
        assert (
            http.get("/ui/static/vendor/sigma.min.js").headers["content-type"].startswith("text/javascript")
        )
        assert http.get("/ui/static/viewer.py").status_code == 404

        listed = http.get("/ui/api/sessions").json()["sessions"]
        assert [(s["session_id"], s["status"]) for s in listed] == [("m1", "open")]
        graph = http.get("/ui/api/sessions/m1/graph").json()
        assert sorted(n["label"] for n in graph["nodes"]) == ["A", "B"]
        a = next(n for n in graph["nodes"] if n["label"] == "A")
        assert a["properties"]["package"] == "q" and a["provenance"] == {"created": 1, "updated": 2}
        assert graph["edges"][0]["type"] == "CALLS" and graph["meta"]["status"] == "open"

        its = http.get("/ui/api/sessions/m1/iterations").json()
        assert its["from_store"] is False and its["last_iteration"] == 2
        first = its["iterations"][0]
        assert (first["accepted"], first["rejected"], first["rejected_by_code"]) == (
            3,
            1,
            {"UNKNOWN_NODE_TYPE": 1},
        )
        assert (
            first["rejections"][0]["action"] == "ADD_NODE" and "Gadget" in first["rejections"][0]["message"]
        )

        for refused in (
            http.get("/ui/api/sessions/m1/graph", params={"iteration": 1}),
            http.get("/ui/api/sessions/m1/history", params={"element": "n1"}),
        ):
            assert refused.status_code == 409 and refused.json()["error"]["code"] == "HISTORY_UNAVAILABLE"
        assert http.get("/ui/api/sessions/nope/graph").json()["error"]["code"] == "SESSION_NOT_FOUND"
        assert http.get("/ui/api/sessions/m1/graph", params={"iteration": -1}).status_code == 422

        assert http.post("/sessions/m1/finish", json={}).status_code == 200
        events = http.get("/ui/api/sessions/m1/events")
        kinds = [
            line.removeprefix("event: ") for line in events.text.splitlines() if line.startswith("event: ")
        ]
        assert kinds[-1] == "end" and kinds.count("iteration_finished") == 2


def test_the_page_asks_the_sessions_own_budgeted_query():
    """``/ui/api/.../query`` is the workspace's ``query_graph`` operation (what the agents' tool runs),
    read-only."""
    with TestClient(build_app(Workspace())) as http:
        http.post("/sessions", json=request_dict(session_id="q1"))
        http.post(
            "/sessions/q1/actions",
            json={
                "actions": [
                    node("Class", name="A", package="p"),
                    node("Class", name="B", package="p"),
                    node("Class", name="C", package="p"),
                    edge("CALLS", {"name": "A"}, {"name": "B"}),
                    edge("CALLS", {"name": "B"}, {"name": "C"}),
                ]
            },
        )
        q = (
            '{"query": "neighbours", "node": {"label": "Class", "name": "C", "package": "p"}, "depth": 2,'
            ' "direction": "in"}'
        )
        answer = http.get("/ui/api/sessions/q1/query", params={"q": q}).json()
        assert (
            sorted(n["properties"]["name"] for n in answer["nodes"]) == ["A", "B"]
            and answer["complete"] is True
        )
        path = http.get(
            "/ui/api/sessions/q1/query",
            params={"q": '{"query": "path", "from": {"name": "A"}, "to": {"name": "C"}}'},
        ).json()
        assert [e["type"] for e in path["edges"]] == ["CALLS", "CALLS"]
        bad = http.get("/ui/api/sessions/q1/query", params={"q": "{not json"})
        assert bad.status_code == 422 and bad.json()["error"]["code"] == "INVALID_ARGUMENTS"
        assert "not JSON" in bad.json()["error"]["message"]
        unknown = http.get(
            "/ui/api/sessions/q1/query", params={"q": '{"query": "neighbours", "node": {"name": "Z"}}'}
        )
        assert unknown.status_code == 422 and unknown.json()["error"]["code"] == "NODE_NOT_FOUND"
        assert http.post("/ui/api/sessions/q1/query", params={"q": q}).status_code == 405  # reads only


def test_without_a_token_the_ui_needs_no_login():
    from igg.interfaces.http.ui_auth import with_ui_login

    app = build_app(Workspace())
    assert with_ui_login(app, None) is app  # nothing wrapped: loopback-only servers have no login
    with TestClient(with_ui_login(app, "t0k"), follow_redirects=False) as http:
        assert http.get("/ui/").status_code == 303 and http.get("/ui/login").status_code == 200


def test_ui_logins_are_throttled_per_client_and_the_cookie_expires():
    """Five wrong tokens from one client in a minute, then 429 with Retry-After (even for the right token); a
    login cookie carries its expiry (Max-Age) and is refused once it has passed."""
    from igg.interfaces.http.security import DEFAULT_MAX_BODY, bearer_guard
    from igg.interfaces.http.ui_auth import COOKIE, COOKIE_LIFETIME, LOGIN_ATTEMPTS, with_ui_login

    now = [1_000_000.0]
    app = with_ui_login(
        bearer_guard(build_app(Workspace()), "t0k", DEFAULT_MAX_BODY), "t0k", clock=lambda: now[0]
    )
    with TestClient(app, follow_redirects=False) as http:
        for _ in range(LOGIN_ATTEMPTS):
            assert http.post("/ui/login", data={"token": "wrong"}).status_code == 401
        throttled = http.post("/ui/login", data={"token": "t0k"})
        assert throttled.status_code == 429 and int(throttled.headers["retry-after"]) > 0
        now[0] += 61  # the window has passed
        login = http.post("/ui/login", data={"token": "t0k"})
        assert login.status_code == 303 and f"Max-Age={COOKIE_LIFETIME}" in login.headers["set-cookie"]
        cookie = login.cookies[COOKIE]
        assert http.get("/ui/api/sessions", cookies={COOKIE: cookie}).status_code == 200
        now[0] += COOKIE_LIFETIME + 1
        assert http.get("/ui/api/sessions", cookies={COOKIE: cookie}).status_code == 401  # expired
        forged = str(int(now[0]) + 3600) + cookie[cookie.index(".") :]  # a later expiry with the old MAC
        assert http.get("/ui/api/sessions", cookies={COOKIE: forged}).status_code == 401
