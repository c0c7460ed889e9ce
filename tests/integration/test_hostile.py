"""The hostile-input suite: generated input against the real servers, and what must hold afterwards.

* HTTP: schemathesis generates requests (valid and invalid) for every operation of ``igg serve``'s own
  OpenAPI document; half of the session ids are pointed at a live session so actions, observations and
  exports are exercised, not only 404s.
* MCP: hypothesis draws tool calls from the input schemas the server lists (schemathesis' JSON Schema
  generation, valid and invalid, over a document that wraps each tool's schema), plus hostile variants
  (unknown keys, wrong types, odd text), through the official MCP SDK client over stdio.

Every answer must be a 4xx with the error envelope or a success: never a 5xx, a hang or a crash; MCP errors
start with a stable code. Afterwards each server's store passes ``PRAGMA integrity_check``, every stored
graph keeps the invariants, and files were written inside the output directory only.
Bounded: a fixed number of examples per operation (about 20 s in all on 2 cores).

Then each attack class of issue 47, on the same servers and the session-scoped PostgreSQL and ArcadeDB ones:
work a client decides (a transitive rule's chain explosion, over-long selector lists, a rule nested 3,000
deep, a 1 MB one-line context with evidence, thousands of near-miss quotes, loose spans) is bounded, refused
or answered, and the server goes on; a store URL's ``?password=`` reaches no log or listing and NUL in
``goal_prompt`` is refused up front on PostgreSQL; hostile names reach a Bolt server as values. The CLI's
classes (``--since`` on hostile trees, CI output) are in ``tests/unit/test_rules_since.py`` and
``tests/unit/test_rules_ci_output.py``; ``scripts/bench_hostile.py`` measures what each class costs.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import ROOT
from tests.support.server import clean_env, igg_serve
from tests.unit.test_workspace import request_dict

EXAMPLES_PER_OPERATION = 25
MCP_EXAMPLES = 100
CODE_FIRST = re.compile(r"^[A-Z][A-Z_]+: ")


def live_request(session_id: str) -> dict[str, Any]:
    payload = request_dict(session_id=session_id)
    payload["config"]["max_iterations"] = 100_000
    payload["config"]["constraints"] = {"max_nodes": 500, "max_edges": 1000}
    return payload


def files_outside(root: Path, allowed: set[Path]) -> set[str]:
    return {
        str(p.relative_to(root)) for p in root.rglob("*") if not any(p.is_relative_to(a) for a in allowed)
    }


def check_store_and_files(root: Path, store: Path, out: Path, before: set[str]) -> None:
    """The store is intact and its graphs keep the invariants; nothing was written outside ``out``."""
    from igg.graph.invariants import invariant_violations
    from igg.store import SessionStore

    with sqlite3.connect(store) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    opened = SessionStore(store)
    try:
        sessions = opened.sessions()
        assert sessions, "the fuzzing created no session at all"
        for info in sessions:
            request, state, _ = opened.load_state(info.session_id)
            assert invariant_violations(state, request.config.constraints) == [], info.session_id
    finally:
        opened.close()
    # the store and its journal files (the document answer cache is a table of the store: igg.documents.cache)
    store_files = {store.name + suffix for suffix in ("", "-wal", "-shm", "-journal")}
    assert files_outside(root, {out}) - before - store_files == set()
    for path in out.rglob("*"):
        assert not path.is_symlink() and (path.is_dir() or path.is_file()), path
        assert not any(part.startswith(".") for part in path.relative_to(out).parts), path


# ---- HTTP ------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("hostile-http")
    out, store = root / "out", root / "sessions.sqlite"
    with igg_serve(
        ["--store", str(store), "--output-dir", str(out)],
        env=clean_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    ) as (proc, base):
        assert httpx.post(f"{base}/sessions", json=live_request("fuzz-open")).status_code == 201
        before = files_outside(root, {out})
        yield {"base": base, "root": root, "out": out, "store": store}
        assert proc.poll() is None, "igg serve died under generated input"
    assert proc.stderr is not None
    log = proc.stderr.read().decode()
    assert "Traceback" not in log, log[-3000:]
    check_store_and_files(root, store, out, before)


def _openapi_document() -> dict[str, Any]:
    """``igg serve``'s own OpenAPI document (what /openapi.json serves), built without a server."""
    from igg.interfaces.http.app import build_app
    from igg.workspace import Workspace

    return build_app(Workspace()).openapi()


api_schema = schemathesis.openapi.from_dict(_openapi_document())
api_schema.config.generation.update(max_examples=EXAMPLES_PER_OPERATION)
api_schema.config.phases.update(phases=["examples", "fuzzing"])  # the coverage phase sends ~1,000 per body


@api_schema.parametrize()
@settings(
    max_examples=EXAMPLES_PER_OPERATION,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)
def test_the_http_api_answers_generated_requests_with_the_envelope(case: Any, api: dict[str, Any]) -> None:
    session_id = (case.path_parameters or {}).get("session_id")
    if isinstance(session_id, str) and len(session_id) % 2 == 0 and not case.path.endswith("/finish"):
        case.path_parameters["session_id"] = "fuzz-open"  # reach the operations on a live session too
    response = case.call(base_url=api["base"], timeout=60)
    where = f"{case.method} {case.formatted_path} -> {response.status_code}: {response.text[:500]}"
    assert response.status_code < 500, where
    if response.status_code >= 400:
        body = response.json()
        assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}, where
        assert re.fullmatch(r"[A-Z][A-Z0-9_]+", body["error"]["code"]), where


# ---- MCP -------------------------------------------------------------------------------------------------


class McpClient:
    """The MCP SDK's client over stdio, held open on an event loop in a thread (hypothesis runs sync)."""

    def __init__(self, root: Path) -> None:
        from mcp import Client
        from mcp.client.stdio import StdioServerParameters

        self.root, self.out, self.store = root, root / "out", root / "sessions.sqlite"
        params = StdioServerParameters(
            command=sys.executable,
            cwd=str(ROOT),
            env={
                k: v
                for k, v in os.environ.items()
                if not k.startswith(("OPENAI_", "IGG_")) or k == "IGG_HOME"
            },
            args=["-m", "igg", "mcp", "--store", str(self.store), "--output-dir", str(self.out)],
        )
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.ready: Future[Any] = Future()
        self.stop = asyncio.Event()

        async def hold() -> None:
            try:
                async with Client(params) as client:
                    self.ready.set_result(client)
                    await self.stop.wait()
            except BaseException as exc:  # noqa: BLE001 - reported to the test thread
                if not self.ready.done():
                    self.ready.set_exception(exc)
                raise

        self.holder = asyncio.run_coroutine_threadsafe(hold(), self.loop)
        self.client = self.ready.result(timeout=60)

    def call(self, name: str, arguments: dict[str, Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(self.client.call_tool(name, arguments), self.loop).result(60)

    def tools(self) -> dict[str, dict[str, Any]]:
        listed = asyncio.run_coroutine_threadsafe(self.client.list_tools(), self.loop).result(60)
        return {t.name: t.input_schema for t in listed.tools}

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.stop.set)
        self.holder.result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@pytest.fixture(scope="module")
def mcp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpClient]:
    root = tmp_path_factory.mktemp("hostile-mcp")
    client = McpClient(root)
    started = client.call("start_session", live_request("fuzz-open"))
    assert not started.is_error, started.content
    before = files_outside(root, {client.out})
    yield client
    alive = client.call("list_sessions", {})
    assert not alive.is_error  # the server still answers after everything it was sent
    client.close()
    check_store_and_files(root, client.store, client.out, before)


ODD_TEXT = st.one_of(
    st.text(max_size=30),
    st.sampled_from(
        [
            "",
            " ",
            "\x00",
            "\x01",
            "a\nb",
            "\u202eevil",
            "../../etc/passwd",
            ".ssh/authorized_keys",
            "sessions.sqlite",
            "fuzz-open",
            "😀" * 40,
            "x" * 300,
        ]
    ),
)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | ODD_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(ODD_TEXT, inner, max_size=4),
    max_leaves=12,
)


def tool_bodies(schemas: dict[str, dict[str, Any]]) -> dict[str, tuple[Any, Any]]:
    """For each tool, schemathesis strategies of (valid, invalid) argument objects from its input schema."""
    document = {
        "openapi": "3.1.0",
        "info": {"title": "igg mcp tools", "version": "1"},
        "paths": {
            f"/tools/{name}": {
                "post": {
                    "requestBody": {"required": True, "content": {"application/json": {"schema": schema}}},
                    "responses": {"200": {"description": "the tool's result"}},
                }
            }
            for name, schema in schemas.items()
        },
    }
    tools = schemathesis.openapi.from_dict(document)
    out = {}
    for name in schemas:
        operation = tools[f"/tools/{name}"]["POST"]
        out[name] = tuple(
            operation.as_strategy(generation_mode=mode).map(lambda case: as_arguments(case.body))
            for mode in (schemathesis.GenerationMode.POSITIVE, schemathesis.GenerationMode.NEGATIVE)
        )
    return out


def as_arguments(body: Any) -> dict[str, Any]:
    """Tool arguments are an object: anything else is wrapped in one (an unknown key: refused too)."""
    if isinstance(body, dict):
        return body
    if isinstance(body, bytes):
        return {"value": body.decode("latin-1")}
    return {"value": body} if isinstance(body, list | str | int | float | bool | None) else {}  # no body: {}


def arguments_for(schema: dict[str, Any], generated: tuple[Any, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Valid or invalid arguments from the tool's schema, or hostile ones: unknown keys, wrong types, odd
    text."""
    valid, invalid = generated
    with_extra = st.tuples(
        valid, ODD_TEXT.filter(lambda k: k not in schema.get("properties", {})), JSON_VALUES
    ).map(lambda t: {**t[0], t[1]: t[2]})
    retyped = st.tuples(
        valid, st.sampled_from(sorted(schema.get("properties", {})) or ["x"]), JSON_VALUES
    ).map(lambda t: {**t[0], t[1]: t[2]})
    anything = st.dictionaries(ODD_TEXT, JSON_VALUES, max_size=5)
    return st.one_of(valid, valid, valid, invalid, with_extra, retyped, anything)  # valid ones weigh 3/7


def live_session(arguments: dict[str, Any]) -> dict[str, Any]:
    if isinstance(arguments.get("session_id"), str) and len(arguments["session_id"]) % 2 == 0:
        return {**arguments, "session_id": "fuzz-open"}
    return arguments


TOOLS_FUZZED = (
    "observe",
    "apply_actions",
    "export_graph",
    "list_sessions",
    "finish_session",
    "start_session",
)


def test_mcp_tools_answer_generated_calls_with_a_stable_code(mcp: McpClient) -> None:
    schemas = mcp.tools()
    generated = tool_bodies({name: schemas[name] for name in TOOLS_FUZZED})
    calls = st.sampled_from(TOOLS_FUZZED).flatmap(
        lambda name: st.tuples(st.just(name), arguments_for(schemas[name], generated[name]).map(live_session))
    )

    @given(calls)
    @settings(
        max_examples=MCP_EXAMPLES, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck)
    )
    def check(call: tuple[str, dict[str, Any]]) -> None:
        name, arguments = call
        if name == "finish_session" and arguments.get("session_id") == "fuzz-open":
            arguments = {**arguments, "session_id": "fuzz-other"}
        result = mcp.call(name, arguments)
        if result.is_error:
            text = result.content[0].text
            assert CODE_FIRST.match(text), (name, arguments, text)
            assert not text.startswith("INTERNAL_ERROR"), (name, arguments, text)
        else:
            json.dumps(result.structured_content)  # a JSON answer

    check()


def test_mcp_start_session_refuses_unknown_keys_like_http(mcp: McpClient) -> None:
    refused = mcp.call("start_session", {**request_dict(), "surprise": 1})
    assert refused.is_error and refused.content[0].text.startswith("INVALID_REQUEST: ")
    assert "surprise" in refused.content[0].text
    typo = mcp.call("observe", {"session_id": "fuzz-open", "token_budgett": 500})
    assert typo.is_error and typo.content[0].text.startswith("INVALID_ARGUMENTS: ")
    bad = mcp.call("apply_actions", {"session_id": "fuzz-open", "actions": "all"})
    assert bad.is_error and bad.content[0].text.startswith("INVALID_RESPONSE: ")
    unknown = mcp.call("drop_database", {})
    assert unknown.is_error and unknown.content[0].text.startswith("UNKNOWN_TOOL: ")


# ---- text that cannot be stored (lone surrogates) ----------------------------------------------------------

SURROGATE_NODE = b'{"type": "ADD_NODE", "label": "Class", "properties": {"name": "B\\ud800", "package": "p"}}'


def post_raw(api: dict[str, Any], path: str, body: bytes) -> httpx.Response:
    """A JSON body as bytes: ``\\ud800`` stays a JSON escape, which decodes to a lone surrogate."""
    return httpx.post(
        f"{api['base']}{path}", content=body, headers={"content-type": "application/json"}, timeout=30
    )


def test_a_lone_surrogate_in_an_action_is_a_verdict_not_a_crash(api):
    assert httpx.post(f"{api['base']}/sessions", json=live_request("text-1")).status_code == 201
    for dry_run in (b"true", b"false"):
        answer = post_raw(
            api,
            "/sessions/text-1/actions",
            b'{"dry_run": '
            + dry_run
            + b', "actions": ['
            + SURROGATE_NODE
            + b', {"type": "ADD_NODE", "label": "Class", "properties": '
            b'{"name": "Fine", "package": "p"}}]}',
        )
        assert answer.status_code == 200, answer.text
        verdicts = answer.json()["verdicts"]
        assert (verdicts[0]["accepted"], verdicts[0]["code"]) == (False, "INVALID_PROPERTY")
        assert "surrogate" in verdicts[0]["message"] and verdicts[1]["accepted"]
    keyed = post_raw(
        api,
        "/sessions/text-1/actions",
        b'{"actions": [{"type": "ADD_NODE", "label": "Class", '
        b'"properties": {"name": "K", "package": "p", "k\\udfff": 1}}]}',
    )
    assert keyed.json()["verdicts"][0]["code"] == "INVALID_PROPERTY"
    graph = httpx.post(f"{api['base']}/sessions/text-1/export", json={}, timeout=30).json()["content"]
    assert sorted(n["properties"]["name"] for n in json.loads(graph)["nodes"]) == ["Fine"]


def test_a_lone_surrogate_elsewhere_in_a_request_is_refused_with_the_envelope(api):
    started = post_raw(
        api,
        "/sessions",
        json.dumps(live_request("text-2")).replace('"goal_prompt": "', '"goal_prompt": "\\ud800').encode(),
    )
    assert (started.status_code, started.json()["error"]["code"]) == (422, "INVALID_REQUEST")
    assert "goal_prompt" in started.json()["error"]["message"]
    assert httpx.post(f"{api['base']}/sessions", json=live_request("text-2")).status_code == 201
    focused = httpx.get(f"{api['base']}/sessions/text-2/observation?focus=A%ED%A0%80", timeout=30)
    assert focused.status_code == 200 or focused.json()["error"]["code"] == "INVALID_ARGUMENTS", focused.text
    path = post_raw(api, "/sessions/text-2/export", b'{"path": "g\\ud800.json"}')
    assert (path.status_code, path.json()["error"]["code"]) == (422, "INVALID_ARGUMENTS")
    reasoning = post_raw(api, "/sessions/text-2/actions", b'{"reasoning": "why\\ud800", "actions": []}')
    assert reasoning.status_code == 200, reasoning.text  # free text is repaired (U+FFFD) and counted


# ---- issue 47: work a client decides is bounded; secrets and NUL on PostgreSQL; names in a Bolt export ----


def attack_ladder(ends: int = 60, middle: int = 200) -> dict[str, Any]:
    """A seed of ``ends`` modules d.* importing a chain of ``middle`` modules importing ``ends`` modules u.*:
    a transitive rule d -> u has ends x ends chains of middle + 1 hops (the 320-node graph that took 870
    MB)."""
    names = (
        [f"d.{i:03}" for i in range(ends)]
        + [f"m.{i:03}" for i in range(middle)]
        + [f"u.{i:03}" for i in range(ends)]
    )
    pairs = (
        [(f"d.{i:03}", "m.000") for i in range(ends)]
        + [(f"m.{i:03}", f"m.{i + 1:03}") for i in range(middle - 1)]
        + [(f"m.{middle - 1:03}", f"u.{i:03}") for i in range(ends)]
    )
    ids = {n: f"n{i}" for i, n in enumerate(names)}
    return {
        "nodes": [{"id": ids[n], "type": "Module", "properties": {"name": n}} for n in names],
        "edges": [
            {"id": f"e{k}", "type": "IMPORTS", "from": ids[a], "to": ids[b], "properties": {}}
            for k, (a, b) in enumerate(pairs)
        ],
    }


def attack_session(session_id: str, **extra: Any) -> dict[str, Any]:
    """A session request whose schema has a Module type without ``path`` (any knowledge graph may)."""
    config = {
        "max_iterations": 1000,
        "constraints": {"max_nodes": 5000, "max_edges": 5000, "max_actions_per_response": 500},
        "schema": {"node_types": ["Module", "Class"], "edge_types": ["IMPORTS", "CALLS"]},
    }
    config.update(extra.pop("config", {}))
    return {"session_id": session_id, "goal_prompt": "attack", **extra, "config": config}


TRANSITIVE = {"name": "d-not-u", "kind": "forbidden", "from": "d", "to": "u", "transitive": True}
WIDE = {
    "name": "wide",
    "kind": "forbidden",
    "from": [f"x{i}*" for i in range(300)],
    "to": [f"y{i}*" for i in range(300)],
}
DEEP = (
    '{"rules": [{"name": "deep", "kind": "forbidden", "to": "u", "from": '
    + "[" * 3000
    + '"d"'
    + "]" * 3000
    + "}]}"
)
"""A rule nested 3,000 lists deep, as the body text (Python's own JSON writer would refuse to write it)."""
LINE = "let a=1;" * 125_000  # one 1 MB line (minified code)
NEAR = "the quick brown cow jumps over a lazy pig. " * 11  # 85% similar to the context below: a near miss


def quote_actions(n: int, quote: str) -> list[dict[str, Any]]:
    return [
        {
            "type": "ADD_NODE",
            "label": "Class",
            "properties": {"name": f"C{i}"},
            "evidence": [f"{quote}{i}.{k}" for k in range(4)],
        }
        for i in range(n)
    ]


def test_check_attacks_over_http_are_bounded_refused_or_answered(api: dict[str, Any]) -> None:
    """Issue 47 over HTTP: the chain explosion is truncated within the bounds, over-long selector lists and a
    3,000-deep rule are refused with INVALID_RULES (or the envelope), a Module type without path is judged."""
    from igg.rules.bounds import MAX_HOPS, MAX_VIOLATIONS

    with httpx.Client(base_url=api["base"], timeout=120) as http:
        assert (
            http.post("/sessions", json=attack_session("ladder", seed_data=attack_ladder())).status_code
            == 201
        )
        report = http.post("/sessions/ladder/check", json={"rules": [TRANSITIVE]})
        assert report.status_code == 200, report.text
        body = report.json()
        assert body["truncated"] is True and 0 < len(body["violations"]) <= MAX_VIOLATIONS
        assert sum(len(v["path"]) for v in body["violations"]) <= MAX_HOPS
        wide = http.post("/sessions/ladder/check", json={"rules": [WIDE]})
        assert wide.status_code == 422 and wide.json()["error"]["code"] == "INVALID_RULES", wide.text
        assert "at most 64 items, got 300" in wide.json()["error"]["message"]
        deep = http.post("/sessions/ladder/check", content=DEEP, headers={"content-type": "application/json"})
        assert 400 <= deep.status_code < 500 and set(deep.json()) == {"error"}, deep.text
        small = http.post(
            "/sessions/ladder/check", json={"rules": [{**TRANSITIVE, "to": "u.000", "from": "d.000"}]}
        )
        assert small.json()["truncated"] is False and len(small.json()["violations"]) == 1
        assert http.get("/healthz").status_code == 200


def test_check_attacks_over_mcp_are_bounded_and_refused(mcp: McpClient) -> None:
    from igg.rules.bounds import MAX_VIOLATIONS

    started = mcp.call("start_session", attack_session("ladder", seed_data=attack_ladder()))
    assert not started.is_error, started.content
    report = mcp.call("check", {"session_id": "ladder", "rules": [TRANSITIVE]})
    assert not report.is_error, report.content
    assert report.structured_content["truncated"] is True
    assert 0 < len(report.structured_content["violations"]) <= MAX_VIOLATIONS
    wide = mcp.call("check", {"session_id": "ladder", "rules": [WIDE]})
    assert wide.is_error and wide.content[0].text.startswith("INVALID_RULES")


def test_evidence_attacks_over_http_stay_bounded(api: dict[str, Any]) -> None:
    """Issue 47: a 1 MB one-line context with evidence (quadratic chunking: 15 s), 2,000 near-miss quotes
    (unbounded fuzzy matching: minutes, the session locked), and spans of booleans and numeric strings."""
    with httpx.Client(base_url=api["base"], timeout=300) as http:
        line = attack_session("line", context_data=LINE, config={"grounding": "warn"})
        assert http.post("/sessions", json=line).status_code == 201
        applied = http.post(
            "/sessions/line/actions",
            json={
                "reasoning": "",
                "actions": [
                    {
                        "type": "ADD_NODE",
                        "label": "Class",
                        "properties": {"name": "A"},
                        "evidence": ["let a=1;let a=1;"],
                    },
                    {
                        "type": "ADD_NODE",
                        "label": "Class",
                        "properties": {"name": "B"},
                        "evidence": [{"chunk": True, "start": False, "end": "3"}],
                    },
                ],
            },
        )
        assert applied.status_code == 200, applied.text
        first, second = applied.json()["verdicts"]
        assert first["accepted"] and second["code"] == "INVALID_PROPERTY"
        context = "the quick brown fox jumps over the lazy dog. " * 300
        near = attack_session("near", context_data=context, config={"grounding": "required"})
        assert http.post("/sessions", json=near).status_code == 201
        answer = http.post(
            "/sessions/near/actions", json={"reasoning": "", "actions": quote_actions(500, NEAR)}
        )
        assert answer.status_code == 200, answer.text
        verdicts = answer.json()["verdicts"]
        assert all(v["code"] == "UNGROUNDED_EVIDENCE" for v in verdicts)
        assert "budget for approximate matching is spent" in verdicts[-1]["message"]
        assert http.get("/healthz").status_code == 200


def test_postgresql_store_masks_query_passwords_and_refuses_nul_up_front(
    postgres_url: str, tmp_path: Path
) -> None:
    """Issue 47 on a real PostgreSQL: ``?password=`` of the store URL appears in no log, listing or error; NUL
    in goal_prompt is INVALID_REQUEST before anything is stored (it was STORE_ERROR "session None"); a
    malformed IPv6 host is one line, exit 2, the password masked."""
    secret = "hunter2-query-secret"
    url = f"{postgres_url}{'&' if '?' in postgres_url else '?'}password={secret}&application_name=igg"
    log = tmp_path / "serve.log"
    with (
        igg_serve(["--store", url, "--output-dir", str(tmp_path / "out")], env=clean_env(), log_path=log) as (
            _,
            base,
        ),
        httpx.Client(base_url=base, timeout=60) as http,
    ):
        refused = http.post("/sessions", json=attack_session("nul", goal_prompt="find\x00classes"))
        assert refused.status_code == 422 and refused.json()["error"]["code"] == "INVALID_REQUEST", (
            refused.text
        )
        assert "goal_prompt" in refused.json()["error"]["message"]
        assert http.post("/sessions", json=attack_session("kept")).status_code == 201
        assert http.get("/sessions/nul").status_code == 404
    listing = subprocess.run(
        [sys.executable, "-m", "igg", "sessions", "--store", url],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=120,
    )
    assert listing.returncode == 0 and "kept" in listing.stdout, listing.stderr
    assert secret not in log.read_text() + listing.stdout + listing.stderr
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "igg",
            "sessions",
            "--store",
            f"postgresql://igg:{secret}@[::1/igg?password={secret}",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=120,
    )
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1, bad.stderr
    assert secret not in bad.stdout + bad.stderr and "Traceback" not in bad.stderr


def test_hostile_names_reach_a_bolt_server_as_values_and_its_password_no_output(
    bolt_server: Any, tmp_path: Path
) -> None:
    """A graph whose names would forge CI log lines and Cypher exports to ArcadeDB (values are parameters, so
    they arrive exactly); the URI's password, given in its user information and its query, is never shown."""
    from igg.export.neo4j.bolt import BoltSession

    hostile = [
        "evil\n::error file=x.py::forged",
        "a`b) DETACH DELETE n //",
        "rtl\u202egpj",
        "%0A::warning::x",
    ]
    doc = {
        "nodes": [
            {"id": f"n{i}", "type": "Class", "properties": {"name": name}} for i, name in enumerate(hostile)
        ],
        "edges": [],
    }
    request = attack_session("bolt", seed_data=doc)
    (tmp_path / "request.json").write_text(json.dumps(request))
    (tmp_path / "t.jsonl").write_text('{"reasoning": "done", "actions": [], "finished": true}\n')
    secret = "bolt-query-secret"
    env = {
        **{k: v for k, v in clean_env().items() if not k.startswith("NEO4J_")},
        **bolt_server.env,
        "NEO4J_URI": bolt_server.uri,
    }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "igg",
            "run",
            str(tmp_path / "request.json"),
            "--agent",
            f"script:{tmp_path / 't.jsonl'}",
            "--no-store",
            "--quiet",
            "--export",
            "neo4j",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    if not bolt_server.external:
        with BoltSession(bolt_server.settings()) as session:
            names = {
                r["name"]
                for r in session.run("MATCH (n:Class) WHERE n.igg_scope = $s RETURN n.name AS name", s="bolt")
            }
        assert set(hostile) <= names, names
    port = bolt_server.uri.rsplit(":", 1)[1]
    wrong = {**env, "NEO4J_URI": f"bolt://igg:{secret}@127.0.0.1:{port}?password={secret}"}
    failed = subprocess.run(
        [
            sys.executable,
            "-m",
            "igg",
            "run",
            str(tmp_path / "request.json"),
            "--agent",
            f"script:{tmp_path / 't.jsonl'}",
            "--no-store",
            "--quiet",
            "--export",
            "neo4j",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=wrong,
        timeout=300,
    )
    assert secret not in failed.stdout + failed.stderr, failed.stdout + failed.stderr


def test_evidence_attacks_over_mcp_stay_bounded(mcp: McpClient) -> None:
    """The same over MCP stdio: near-miss quotes share one fuzzy budget per call; loose spans are refused."""
    context = "the quick brown fox jumps over the lazy dog. " * 300
    started = mcp.call(
        "start_session", attack_session("near", context_data=context, config={"grounding": "required"})
    )
    assert not started.is_error, started.content
    actions = quote_actions(100, NEAR) + [
        {
            "type": "ADD_NODE",
            "label": "Class",
            "properties": {"name": "S"},
            "evidence": [{"chunk": 1, "start": 0, "end": "3"}],
        }
    ]
    applied = mcp.call("apply_actions", {"session_id": "near", "reasoning": "", "actions": actions})
    assert not applied.is_error, applied.content
    verdicts = applied.structured_content["verdicts"]
    assert "budget for approximate matching is spent" in verdicts[99]["message"]
    assert verdicts[100]["code"] == "INVALID_PROPERTY"
