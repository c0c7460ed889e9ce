"""An adapter never blocks the event loop: while a stored 100,000-node session loads (seconds of work), the
same ``igg serve`` keeps answering ``/healthz`` and other clients (every store read from async code runs off
the loop: the session route, the operations, the event stream)."""

from __future__ import annotations

import statistics
import threading
import time
from pathlib import Path

import httpx

from igg.models.request import Request
from igg.record.records import IterationRecord
from igg.request.load import build_state, load_request
from igg.store import SessionStore, codec
from tests.support.server import clean_env, igg_serve

NODES = 100_000


def big_store(path: Path) -> None:
    """A store holding session ``big``: 100,000 nodes and 50,000 edges, one snapshot."""
    request: Request = load_request(
        {
            "session_id": "big",
            "goal_prompt": "a big graph",
            "context_data": "",
            "config": {
                "max_iterations": 5,
                "constraints": {"max_nodes": NODES, "max_edges": NODES},
                "schema": {"node_types": ["Module"], "edge_types": ["IMPORTS"]},
            },
        }
    )
    state, _ = build_state(request)
    ids = [state.add_node("Module", {"name": f"m{i}"}) for i in range(NODES)]
    for i in range(0, NODES - 1, 2):
        state.add_edge(ids[i], "IMPORTS", ids[i + 1], {})
    mutations = state.take_journal()
    store = SessionStore(path)
    store.create_session(request, agent="tool")
    record = codec.record_data(IterationRecord(iteration=1, observation_chars=0, observation_tokens=0))
    store.commit_step("big", kind="iteration", record=record, mutations=mutations, state=state, snapshot=True)
    store.close()


def test_healthz_answers_while_a_100k_node_session_loads(tmp_path: Path):
    path = tmp_path / "sessions.sqlite"
    big_store(path)
    with (
        igg_serve(["--store", str(path)], env=clean_env(), log_path=tmp_path / "serve.log") as (_, base),
        httpx.Client(base_url=base, timeout=120) as loader,
        httpx.Client(base_url=base, timeout=30) as probe,
    ):
        loaded: dict[str, float | int] = {}

        def load() -> None:  # the event stream is the route that once loaded a session on the event loop
            t0 = time.perf_counter()
            response = loader.get("/sessions/big/events")
            loaded.update(
                status=response.status_code,
                seconds=time.perf_counter() - t0,
                nodes=loader.get("/sessions/big").json()["nodes"],
            )

        thread = threading.Thread(target=load)
        thread.start()
        latencies = []
        while thread.is_alive():
            t0 = time.perf_counter()
            assert probe.get("/healthz").status_code == 200
            latencies.append(time.perf_counter() - t0)
            time.sleep(0.02)
        thread.join()
    assert loaded["status"] == 200 and loaded["nodes"] == NODES
    # the load takes about 0.5 s since a stored graph loads with the collector paused (1.5 s before): long
    # enough for the probes below to run while it does
    assert float(loaded["seconds"]) > 0.25, "the load was too quick to show anything"
    assert len(latencies) >= 5, latencies
    # answered all along: typically a few ms; the median bounds it against a loaded machine's odd pause
    assert statistics.median(latencies) < 0.1, sorted(latencies)[-5:]


def test_healthz_answers_while_a_thousand_query_request_is_served(tmp_path: Path):
    """Issue 31: a request of 1,000 QUERY actions on a 40,000-edge graph is served within its bounded work
    (the server's --max-actions raised to take it) while /healthz keeps answering; with the default ceiling
    it is refused up front."""
    from tests.unit.test_query_bounds import QUERY, dense_seed, payload

    args = ["--store", str(tmp_path / "s.sqlite"), "--max-actions", "1000"]
    with (
        igg_serve(args, env=clean_env(), log_path=tmp_path / "serve.log") as (_, base),
        httpx.Client(base_url=base, timeout=120) as client,
        httpx.Client(base_url=base, timeout=30) as probe,
    ):
        assert client.post("/sessions", json={**payload(), "seed_data": dense_seed()}).status_code == 201
        answer: dict[str, object] = {}

        def ask() -> None:
            answer["response"] = client.post(
                "/sessions/bounds/actions", json={"reasoning": "", "actions": [QUERY] * 1000}
            )

        thread = threading.Thread(target=ask)
        thread.start()
        latencies = []
        while thread.is_alive():
            t0 = time.perf_counter()
            assert probe.get("/healthz").status_code == 200
            latencies.append(time.perf_counter() - t0)
            time.sleep(0.01)
        thread.join()
        served = answer["response"]
        assert isinstance(served, httpx.Response) and served.status_code == 200, served
        codes = [v.get("code") for v in served.json()["verdicts"]]
        assert codes.count("QUERY_BUDGET_EXHAUSTED") == 990
    assert latencies and statistics.median(latencies) < 0.1, sorted(latencies)[-5:]
    with (
        igg_serve(["--memory"], env=clean_env(), log_path=tmp_path / "serve2.log") as (_, base),
        httpx.Client(base_url=base, timeout=60) as client,
    ):
        assert client.post("/sessions", json=payload()).status_code == 201
        refused = client.post("/sessions/bounds/actions", json={"reasoning": "", "actions": [QUERY] * 1000})
        assert refused.status_code == 413 and refused.json()["error"]["code"] == "TOO_MANY_ACTIONS"


def test_healthz_answers_while_each_attack_class_of_issue_47_is_served(tmp_path: Path):
    """Issue 47: each attack on bounded work (a transitive rule's chain explosion, 64 x 64 globs, a 1 MB
    one-line context with evidence, 2,000 near-miss quotes) is answered within its bounds while /healthz keeps
    answering."""
    from tests.integration.test_hostile import NEAR, TRANSITIVE, attack_ladder, attack_session, quote_actions

    # 64 globs a side, each picking a node (one picking none is refused before any work)
    wide = {
        "name": "wide",
        "kind": "forbidden",
        "from": [f"d.{i % 60:03}{'*' * (1 + i // 60)}" for i in range(64)],
        "to": [f"u.{i % 60:03}{'*' * (1 + i // 60)}" for i in range(64)],
        "transitive": True,
    }
    line = "let a=1;" * 125_000  # one 1 MB line
    near_context = "the quick brown fox jumps over the lazy dog. " * 300
    attacks = [
        ("/sessions/ladder/check", {"rules": [TRANSITIVE]}),
        ("/sessions/ladder/check", {"rules": [wide]}),
        ("/sessions", attack_session("line", context_data=line, config={"grounding": "warn"})),
        (
            "/sessions/line/actions",
            {
                "reasoning": "",
                "actions": [
                    {
                        "type": "ADD_NODE",
                        "label": "Class",
                        "properties": {"name": "A"},
                        "evidence": ["let a=1;let b=2;"],
                    }
                ],
            },
        ),
        ("/sessions/near/actions", {"reasoning": "", "actions": quote_actions(500, NEAR)}),
    ]
    with (
        igg_serve(
            ["--store", str(tmp_path / "s.sqlite")], env=clean_env(), log_path=tmp_path / "serve.log"
        ) as (_, base),
        httpx.Client(base_url=base, timeout=300) as client,
        httpx.Client(base_url=base, timeout=30) as probe,
    ):
        assert (
            client.post("/sessions", json=attack_session("ladder", seed_data=attack_ladder())).status_code
            == 201
        )
        near = attack_session("near", context_data=near_context, config={"grounding": "required"})
        assert client.post("/sessions", json=near).status_code == 201
        latencies: list[float] = []
        for path, body in attacks:
            answer: dict[str, httpx.Response] = {}
            thread = threading.Thread(
                target=lambda p=path, b=body, a=answer: a.update(r=client.post(p, json=b))
            )
            thread.start()
            while thread.is_alive():
                t0 = time.perf_counter()
                assert probe.get("/healthz").status_code == 200
                latencies.append(time.perf_counter() - t0)
                time.sleep(0.01)
            thread.join()
            assert answer["r"].status_code in (200, 201), (path, answer["r"].text[:300])
            if path.endswith("/check"):
                assert answer["r"].json()["truncated"] is True
    assert latencies and statistics.median(latencies) < 0.1, sorted(latencies)[-5:]
