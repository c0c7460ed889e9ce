"""`igg view` as a person uses it: a real server (with a token) and a real headless Chromium.

One `igg view` process serves the whole module over one session store; the bundled auth example is stored
in it first. Sessions that grow during a test are driven step by step, over the HTTP API (the server's own
event stream) or by a writer in this process (another writer of the same store, watched by the server).
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from igg.interfaces.http.ui_auth import COOKIE, cookie_value
from tests.conftest import FIXTURES, ROOT, edge, node
from tests.support.cli import igg
from tests.support.server import clean_env, stop
from tests.unit.test_workspace import request_dict

pytest_plugins = ["tests.support.browser"]

TOKEN = "view-test-token-not-logged"
AUTH = FIXTURES / "auth"


@pytest.fixture(scope="module")
def viewer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A live `igg view --port 0` over a store holding the auth example; its base URL and store path."""
    tmp = tmp_path_factory.mktemp("view")
    store = tmp / "sessions.sqlite"
    env = clean_env()
    ran = igg(
        "run",
        str(AUTH / "request.json"),
        "--agent",
        f"script:{AUTH / 'transcript.jsonl'}",
        "--store",
        str(store),
        "--json",
    )
    assert ran.returncode == 0, ran.stderr
    log = (tmp / "view.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "igg", "view", "--store", str(store), "--port", "0"],
        cwd=ROOT,
        env={**env, "IGG_API_TOKEN": TOKEN},
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and url.endswith("/ui/"), url
        base = url.removesuffix("/ui/")
        deadline = time.monotonic() + 30
        while httpx.get(f"{base}/healthz", timeout=2).status_code != 200:
            assert time.monotonic() < deadline, "igg view did not answer"
            time.sleep(0.1)
        yield {"base": base, "store": store, "log": tmp / "view.log"}
    finally:
        stop(proc)
        log.close()
    assert TOKEN not in (tmp / "view.log").read_text()


def api(viewer: dict[str, Any]) -> httpx.Client:
    return httpx.Client(base_url=viewer["base"], timeout=30, headers={"Authorization": f"Bearer {TOKEN}"})


def logged_in(page: Any, viewer: dict[str, Any]) -> None:
    page.context.add_cookies(
        [
            {
                "name": COOKIE,
                "value": cookie_value(TOKEN, int(time.time()) + 3600),
                "url": viewer["base"] + "/ui/",
            }
        ]
    )


def wait_for_names(page: Any, names: set[str], timeout_ms: int = 60_000) -> None:
    # generous: on a loaded CI machine a store written by another process reaches the page by polling
    page.page.wait_for_function(
        "names => { const have = new Set([...document.querySelectorAll('#node-list button .label')]"
        ".map(e => e.textContent)); return names.every(n => have.has(n)); }",
        arg=sorted(names),
        timeout=timeout_ms,
    )


def test_the_page_asks_for_the_token_lists_sessions_and_shows_one(page, viewer):
    p = page.page
    p.goto(viewer["base"] + "/ui/")
    assert p.url.endswith("/ui/login")
    p.fill("#token", "wrong")
    p.click("button[type=submit]")
    assert "not the server's token" in p.locator("[role=alert]").inner_text()
    p.fill("#token", TOKEN)
    p.click("button[type=submit]")
    p.wait_for_selector("#sessions-table tbody a")
    row = p.locator("#sessions-table tbody tr", has_text="uuid-1234")
    assert "finished" in row.inner_text() and "27" in row.inner_text()
    page.shot("live-sessions-list")
    errors_at_login = [e for e in page.errors if "401" not in e]  # the wrong token's answer is a 401 page
    assert errors_at_login == []

    p.click("text=uuid-1234")
    page.wait_ready()
    assert len(page.node_names()) == 27 and "AuthServiceImpl" in page.node_names()
    iterations = p.locator("#iterations > li")
    assert iterations.count() == 12
    text = p.locator("#iterations").inner_text()
    assert "UNKNOWN_NODE_TYPE" in text and "PROTECTED_NODE" in text and "MISSING_REQUIRED_ATTRIBUTE" in text
    p.click("#node-list button[title='AuthServiceImpl']")
    p.click("text=Show every change")
    p.wait_for_selector("#element-history ol li")
    history = p.locator("#element-history").inner_text()
    assert "added as Class" in history and "updated: set" in history
    p.wait_for_timeout(1000)
    page.shot("live-session-auth")
    assert [e for e in page.errors if "401" not in e] == []


def test_the_slider_shows_the_graph_after_an_earlier_iteration_from_the_store(page, viewer):
    from igg.store import SessionStore

    store = SessionStore(viewer["store"])
    try:
        _, state, _ = store.load_state("uuid-1234", upto_step=store.step_of_iteration("uuid-1234", 3))
        keys = state.schema.identity_keys  # a node's label is its identity: name (and signature for methods)
        expected = sorted(
            " ".join(str(state.node_properties(n)[k]) for k in keys[state.node_type(n)])
            for n in state.graph.nodes
        )
    finally:
        store.close()
    logged_in(page, viewer)
    page.page.goto(viewer["base"] + "/ui/#session=uuid-1234")
    page.wait_ready()
    page.page.fill("#iteration-slider", "3")
    page.page.wait_for_function(
        f"() => document.querySelector('#node-count').textContent === '{len(expected)} nodes'"
    )
    assert sorted(page.node_names()) == expected and len(expected) < 27
    assert page.page.locator("#iteration-value").inner_text() == "3 of 12"
    page.shot("live-slider-iteration-3")
    page.page.fill("#iteration-slider", "12")
    page.page.wait_for_function("() => document.querySelector('#node-count').textContent === '27 nodes'")
    assert page.errors == []


def test_focus_views_on_the_live_page_ask_the_sessions_budgeted_query(page, viewer):
    """Neighbourhood and dependents come from ``query_graph`` (the agents' query), through
    ``/ui/api/.../query``."""
    logged_in(page, viewer)
    p = page.page
    p.goto(viewer["base"] + "/ui/#session=uuid-1234")
    page.wait_ready()
    p.click("#node-list button[title='AuthServiceImpl']")
    p.select_option("#focus-depth", "2")
    p.click("#focus-neighbours")
    p.wait_for_selector("#focus-bar:not([hidden])")
    shown = set(p.evaluate("() => window.iggView.focus.items"))
    with api(viewer) as http:
        answer = http.post(
            "/sessions/uuid-1234/query",
            json={
                "query": {
                    "query": "neighbours",
                    "node": {"name": "AuthServiceImpl"},
                    "depth": 2,
                    "direction": "both",
                    "token_budget": 6000,
                }
            },
        ).json()
    start = next(
        n for n in p.evaluate("() => window.iggView.payload.nodes") if n["label"] == "AuthServiceImpl"
    )["id"]
    assert answer["complete"] and shown == {start, *(n["id"] for n in answer["nodes"])} and len(shown) > 3
    assert any("/ui/api/sessions/uuid-1234/query?q=" in u for u in page.requests)
    page.shot("live-neighbourhood-authserviceimpl")
    p.click("#focus-back")
    p.wait_for_selector("#focus-bar", state="hidden")
    assert len(page.node_names()) == 27
    assert [e for e in page.errors if "401" not in e] == []


STEPS = [
    [node("Class", name="LiveController", package="com.app.web")],
    [
        node("Class", name="LiveService", package="com.app.auth"),
        edge("CALLS", {"name": "LiveController"}, {"name": "LiveService"}),
        node("Gadget", name="nope"),
    ],
    [
        node("Interface", name="LiveRepository"),
        edge("IMPLEMENTS", {"name": "LiveService"}, {"name": "LiveRepository"}),
    ],
]


def test_the_view_grows_live_as_a_session_is_built_over_the_api(page, viewer):
    with api(viewer) as http:
        started = http.post("/sessions", json=request_dict(session_id="live-api"))
        assert started.status_code == 201, started.text
        logged_in(page, viewer)
        page.page.goto(viewer["base"] + "/ui/#session=live-api")
        page.wait_ready()
        assert page.node_names() == []
        seen: list[str] = []
        for i, actions in enumerate(STEPS):
            assert http.post("/sessions/live-api/actions", json={"actions": actions}).status_code == 200
            added = {
                a["properties"]["name"] for a in actions if a["type"] == "ADD_NODE" and a["label"] != "Gadget"
            }
            wait_for_names(page, added)
            seen = page.node_names()
            assert len(seen) == len(
                {
                    n
                    for s in STEPS[: i + 1]
                    for n in (
                        a["properties"]["name"]
                        for a in s
                        if a["type"] == "ADD_NODE" and a["label"] != "Gadget"
                    )
                }
            )
            page.shot(f"live-api-step-{i + 1}")
        page.page.wait_for_selector("#iterations li[data-iteration='3']")
        assert "UNKNOWN_NODE_TYPE" in page.page.locator("#iterations li[data-iteration='2']").inner_text()
        assert sorted(seen) == ["LiveController", "LiveRepository", "LiveService"]
        assert http.post("/sessions/live-api/finish", json={}).status_code == 200
    assert page.errors == []


def test_the_view_grows_live_while_another_process_writes_the_store(page, viewer):
    from igg.store import SessionStore, StoreSessions
    from igg.workspace import Workspace
    from igg.workspace.ops import ApplyInput, FinishInput

    writer = Workspace(StoreSessions(SessionStore(viewer["store"])))  # another writer of the same store
    writer.start(request_dict(session_id="live-store"))
    logged_in(page, viewer)
    page.page.goto(viewer["base"] + "/ui/#session=live-store")
    page.wait_ready()
    for i, actions in enumerate(STEPS):
        writer.apply(ApplyInput(session_id="live-store", actions=actions))
        wait_for_names(
            page,
            {a["properties"]["name"] for a in actions if a["type"] == "ADD_NODE" and a["label"] != "Gadget"},
        )
        # the graph and its iterations are two reads; a step stored between them is read again at once
        page.page.wait_for_function(
            "n => document.querySelector('#iteration-slider').max === n", arg=str(i + 1), timeout=10_000
        )
    writer.finish(FinishInput(session_id="live-store"))
    page.page.wait_for_function(
        "() => document.querySelector('#summary').textContent.includes('finished')", timeout=60_000
    )
    page.shot("live-store-finished")
    assert sorted(page.node_names()) == ["LiveController", "LiveRepository", "LiveService"]
    assert page.errors == []


def test_the_ui_routes_are_behind_the_token(viewer):
    base = viewer["base"]
    with httpx.Client(base_url=base, timeout=10) as anon:
        assert anon.get("/ui/").status_code == 303 and anon.get("/ui/").headers["location"] == "/ui/login"
        refused = anon.get("/ui/api/sessions")
        assert refused.status_code == 401 and refused.json()["error"]["code"] == "UNAUTHORIZED"
        assert anon.post("/ui/login", data={"token": "nope"}).status_code == 401
        login = anon.post("/ui/login", data={"token": TOKEN})
        assert login.status_code == 303
        cookie = login.headers["set-cookie"]
        assert (
            TOKEN not in cookie
            and "HttpOnly" in cookie
            and "SameSite=Strict" in cookie
            and "Path=/ui" in cookie
        )
    with httpx.Client(
        base_url=base, timeout=10, cookies={COOKIE: cookie_value(TOKEN, int(time.time()) + 3600)}
    ) as browser_like:
        assert browser_like.get("/ui/api/sessions").status_code == 200
        assert browser_like.get("/sessions").status_code == 401  # the cookie opens the viewer's reads only
        assert browser_like.post("/ui/api/sessions").status_code in (401, 403)  # and never a write
    with api(viewer) as http:
        assert http.get("/ui/static/viewer.js").status_code == 200
        missing = http.get("/ui/static/../../igg/interfaces/http/ui.py")
        assert missing.status_code == 404
        assert http.get("/ui/api/sessions/nope/graph").json()["error"]["code"] == "SESSION_NOT_FOUND"
        bad = http.get("/ui/api/sessions/uuid-1234/graph", params={"iteration": 99}).json()["error"]
        assert bad["code"] == "NO_SUCH_ITERATION" and "1..12" in bad["message"]
        page = http.get("/ui/")
        assert "script-src 'self'" in page.headers["content-security-policy"]
        events = http.get("/ui/api/sessions/uuid-1234/events")  # a finished session: the stream just ends
        assert events.headers["content-type"].startswith("text/event-stream")
        assert "event: end" in events.text


def test_igg_view_refuses_an_unknown_session_a_busy_port_and_a_wide_bind_without_token(
    tmp_path, viewer, monkeypatch
):
    monkeypatch.delenv("IGG_API_TOKEN", raising=False)
    unknown = igg("view", "nope", "--store", str(viewer["store"]), "--port", "0")
    assert (
        unknown.returncode == 2
        and "no session 'nope'" in unknown.stderr
        and "Traceback" not in unknown.stderr
    )
    port = viewer["base"].rsplit(":", 1)[1]
    busy = igg("view", "--store", str(tmp_path / "s.sqlite"), "--port", port)
    assert busy.returncode == 2 and f"cannot listen on 127.0.0.1:{port}" in busy.stderr
    wide = igg("view", "--host", "0.0.0.0", "--port", "0", "--store", str(tmp_path / "s.sqlite"))
    assert wide.returncode == 2 and "without a token" in wide.stderr
