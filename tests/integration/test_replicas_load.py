"""Three `igg serve` replicas on one PostgreSQL store under load (issue 35): 20 clients spread their applies
over the replicas; one replica is killed with SIGKILL at 30% and the database restarts at 60%. No applied
action is lost or kept twice, every session's steps are numbered without a gap, each replays to its graph, and
every surviving replica shows the same graphs.

A client retries a request that failed in transit or got 409 (SESSION_BUSY, STORE_ERROR: nothing was kept) on
the next replica; an action that comes back DUPLICATE_NODE was kept by an attempt whose answer was lost.
``IGG_LOAD_APPLIES`` sets the applies per client (default 200: 4,000 applies, about 20 s here)."""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from igg.store import SessionStore, replay
from tests.conftest import node
from tests.integration.test_replicas import roomy
from tests.support.server import clean_env, igg_serve

pytest_plugins = ["tests.support.postgres"]

CLIENTS = 20
SESSIONS = 5
APPLIES = int(os.environ.get("IGG_LOAD_APPLIES", "200"))
RETRYABLE = {409, 502, 503}


class Load:
    """The clients' shared view: which replicas answer, what was applied, what went wrong."""

    def __init__(self, bases: list[str]) -> None:
        self.bases = bases
        self.dead: set[int] = set()
        self.done = 0
        self.retries = 0
        self.problems: list[str] = []
        self.lock = threading.Lock()

    def client(self, k: int) -> None:
        sid = f"load-{k % SESSIONS}"
        with httpx.Client(timeout=60) as http:
            for i in range(APPLIES):
                self.apply(http, k, sid, f"c{k}x{i}")

    def apply(self, http: httpx.Client, k: int, sid: str, name: str) -> None:
        body = {"reasoning": "", "actions": [node("Class", name=name, package="p")]}
        for attempt in range(60):
            replica = (k + attempt) % len(self.bases)
            if replica in self.dead:
                continue
            try:
                answer = http.post(f"{self.bases[replica]}/sessions/{sid}/actions", json=body)
            except httpx.TransportError:
                self.retried()
                continue
            if answer.status_code in RETRYABLE:
                self.retried()
                time.sleep(0.05)
                continue
            verdict = answer.json()["verdicts"][0] if answer.status_code == 200 else answer.json()
            if verdict.get("accepted") or verdict.get("code") == "DUPLICATE_NODE":
                with self.lock:
                    self.done += 1
                return
            self.problems.append(f"{name}: {answer.status_code} {verdict}")
            return
        self.problems.append(f"{name}: no replica applied it in 60 attempts")

    def retried(self) -> None:
        with self.lock:
            self.retries += 1


def test_three_replicas_on_postgresql_lose_and_repeat_nothing_through_a_kill_and_a_restart(
    postgres_server: Any, postgres_url: str, tmp_path: Path
) -> None:
    env = clean_env()
    with contextlib.ExitStack() as stack:
        replicas = [
            stack.enter_context(
                igg_serve(["--store", postgres_url], env=env, log_path=tmp_path / f"replica{i}.log")
            )
            for i in range(3)
        ]
        bases = [base for _, base in replicas]
        for s in range(SESSIONS):
            created = httpx.post(f"{bases[s % 3]}/sessions", json=roomy(f"load-{s}"), timeout=60)
            assert created.status_code == 201, created.text
        load = Load(bases)
        clients = [threading.Thread(target=load.client, args=(k,)) for k in range(CLIENTS)]
        for t in clients:
            t.start()
        total = CLIENTS * APPLIES
        while load.done < 0.3 * total and any(t.is_alive() for t in clients):
            time.sleep(0.05)
        replicas[1][0].kill()  # SIGKILL, mid-load
        load.dead.add(1)
        while load.done < 0.6 * total and any(t.is_alive() for t in clients):
            time.sleep(0.05)
        postgres_server.restart()
        for t in clients:
            t.join(timeout=600)
        assert load.problems == [] and load.done == total, (load.problems[:5], load.done)
        store = SessionStore(postgres_url)
        try:
            for s in range(SESSIONS):
                sid = f"load-{s}"
                expected = sorted(f"c{k}x{i}" for k in range(s, CLIENTS, SESSIONS) for i in range(APPLIES))
                _, state, last = store.load_state(sid)
                assert sorted(d["properties"]["name"] for d in state.nodes.values()) == expected
                assert [step.step for step in store.steps(sid, with_records=False)] == list(
                    range(1, last + 1)
                )
                assert replay(store, sid).ok
                for replica in (0, 2):  # every surviving replica shows that graph
                    shown = httpx.post(f"{bases[replica]}/sessions/{sid}/export", json={}, timeout=60)
                    names = sorted(
                        n["properties"]["name"] for n in json.loads(shown.json()["content"])["nodes"]
                    )
                    assert names == expected
        finally:
            store.close()
        assert load.retries > 0  # the kill and the restart were felt, and weathered
