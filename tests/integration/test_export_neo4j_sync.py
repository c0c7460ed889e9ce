"""Delta exports of a stored session from its journal, the fallback, concurrency and follow mode, against a
real Bolt server (ArcadeDB started by the suite, or the Neo4j at NEO4J_URI); the delta is pinned to the
read-and-diff path by a property test that needs no server."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from igg.export import cypher
from igg.export.neo4j.bolt import BoltSession
from igg.export.neo4j.delta import journal_delta
from igg.export.neo4j.diff import ScopeContents, ScopeDiff, diff_scope
from igg.export.neo4j.sync import StaleMarker, SyncPoint, plan_sync, session_point, sync_neo4j, write_delta
from igg.export.plan import plan_export
from igg.graph.node_merge import merge_nodes
from igg.graph.state import GraphState
from igg.models.common import freeze
from igg.store.store import SessionStore
from tests.conftest import FIXTURES, ROOT, Workspace
from tests.store_driver import responses
from tests.support.bolt import BoltServer
from tests.support.fake_openai import FakeOpenAI, Reply


class Session:
    """A session committed step by step into a store, changed through the graph's own methods."""

    def __init__(self, store: Path, size: int = 0, seed: int = 1) -> None:
        self.id = f"sync-{uuid.uuid4().hex[:10]}"
        self.w = Workspace(session_id=self.id, constraints={"max_nodes": 100_000, "max_edges": 100_000})
        self.state = self.w.state
        self.store = SessionStore(store)
        self.store.create_session(self.w.request)
        self.rng = random.Random(seed)
        self.iteration = 0
        self.names = 0
        for _ in range(size):
            self.add()
        for _ in range(size * 2):
            self.link()
        self.commit()

    def add(self) -> str:
        self.names += 1
        props: dict[str, Any] = {
            "name": f"C{self.names}",
            "package": f"p{self.names % 7}",
            "lines": self.names,
        }
        if self.names % 5 == 0:
            props["tags"] = ["a", f"t{self.names % 3}"]
        return self.state.add_node("Class", props)

    def link(self) -> None:
        ids = list(self.state.nodes)
        for _ in range(20):
            u, v = self.rng.choice(ids), self.rng.choice(ids)
            t = self.rng.choice(["CALLS", "IMPLEMENTS"])
            if u != v and not self.state.edge_between(u, t, v):
                self.state.add_edge(u, t, v, {"weight": self.rng.randint(1, 9)} if t == "CALLS" else {})
                return

    def change(self, n: int) -> None:
        """``n`` changes of every kind: adds, property updates, identity changes, deletes, merges."""
        for i in range(n):
            ids = list(self.state.nodes)
            pick = self.rng.choice(ids)
            kind = i % 7 if len(ids) > 3 else 0
            if kind == 0:
                self.add()
            elif kind == 1:
                self.link()
            elif kind == 2:
                self.state.update_node(pick, {"lines": -i, "note": f"changed {i}"})
            elif kind == 3:
                self.state.update_node(
                    pick,
                    {},
                    remove=["package"] if "tags" in self.state.nodes[pick]["properties"] else ["lines"],
                )
            elif kind == 4:
                self.state.update_node(
                    pick, {"name": f"Renamed{i}-{self.state.nodes[pick]['properties']['name']}"}
                )
            elif kind == 5:
                self.state.delete_node(pick)
            else:
                into = self.rng.choice([x for x in ids if x != pick])
                after = {**self.state.nodes[into]["properties"], "merged": True}
                merge_nodes(self.state, pick, into, after, allow_self_loops=lambda _: False)

    def commit(self, finish: bool = False) -> int:
        self.iteration += 1
        return self.store.commit_step(
            self.id,
            kind="iteration",
            record={"iteration": self.iteration, "verdicts": []},
            mutations=self.state.take_journal(),
            state=self.state,
            finish={"stop_reason": "finished"} if finish else None,
        )

    def point(self) -> SyncPoint:
        return session_point(self.store, self.id)


def expected(state: GraphState) -> tuple[dict, dict]:
    """The graph as the scope should hold it: nodes by (label, name), edges by (name, type, name)."""
    nodes = {(d["type"], d["properties"]["name"]): d["properties"] for d in state.nodes.values()}
    edges = {
        (state.nodes[u]["properties"]["name"], d["type"], state.nodes[v]["properties"]["name"]): d[
            "properties"
        ]
        for _, u, v, d in state.edges()
    }
    return nodes, edges


def held(server: BoltServer, scope: str) -> tuple[dict, dict]:
    """What the scope holds, read back the same way (duplicates are failures)."""
    with BoltSession(server.settings()) as bolt:
        nodes: dict = {}
        for r in bolt.run(
            "MATCH (n) WHERE n.igg_scope = $s RETURN labels(n) AS l, properties(n) AS p", s=scope
        ):
            props = {k: v for k, v in r["p"].items() if k != "igg_scope"}
            key = (r["l"][0], props["name"])
            assert key not in nodes, f"duplicate node {key}"
            nodes[key] = props
        edges: dict = {}
        for r in bolt.run(
            "MATCH (a)-[e]->(b) WHERE e.igg_scope = $s RETURN a.name AS a, type(e) AS t, b.name AS b, "
            "properties(e) AS p",
            s=scope,
        ):
            key = (r["a"], r["t"], r["b"])
            assert key not in edges, f"duplicate edge {key}"
            edges[key] = {k: v for k, v in r["p"].items() if k != "igg_scope"}
    return nodes, edges


def marker(server: BoltServer, scope: str) -> list[dict]:
    with BoltSession(server.settings()) as bolt:
        return bolt.run(cypher.MARKER_READ, scope=scope)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "sessions.sqlite"


def sync(server: BoltServer, s: Session, **kwargs: Any) -> dict:
    return sync_neo4j(s.point(), settings=server.settings(), **kwargs)


def test_an_export_100_changes_and_a_delta_leave_the_database_equal_to_the_graph(bolt_server, store):
    s = Session(store, size=120)
    first = sync(bolt_server, s)
    assert first["mode"] == "full" and "first export" in first["fallback"]
    assert held(bolt_server, s.id) == expected(s.state)
    s.change(100)
    s.commit()
    delta = sync(bolt_server, s)
    assert (delta["mode"], delta["fallback"], delta["since_step"], delta["step"]) == ("delta", None, 1, 2)
    assert "read_scope" not in delta["timings"] and delta["batches"] == 1
    assert held(bolt_server, s.id) == expected(s.state)
    touched = sum(c[a] for c in delta["changes"].values() for a in ("create", "update", "delete"))
    assert 100 <= touched < 400  # what changed, not the whole graph
    (m,) = marker(bolt_server, s.id)
    assert (m["digest"], m["step"], m["nodes"], m["edges"]) == (
        delta["digest"],
        2,
        s.state.node_count,
        s.state.edge_count,
    )
    again = sync(bolt_server, s)  # nothing committed since: nothing written
    assert (again["mode"], again["statements"], again["digest"]) == ("delta", 0, delta["digest"])


def test_the_plan_shows_the_delta_and_writes_nothing(bolt_server, store):
    s = Session(store, size=30)
    sync(bolt_server, s)
    before = held(bolt_server, s.id)
    s.state.update_node(next(iter(s.state.nodes)), {"lines": 999})
    s.add()
    s.commit()
    plan = plan_sync(s.point(), settings=bolt_server.settings())
    assert (plan["mode"], plan["since_step"], plan["step"]) == ("delta", 1, 2)
    assert plan["counts"]["nodes"] == {"create": 1, "update": 1, "delete": 0, "unchanged": 29}
    assert [c["action"] for c in plan["changes"]] == ["update", "create"]
    assert held(bolt_server, s.id) == before
    done = subprocess.run(
        [sys.executable, "-m", "igg", "export", s.id, "--store", str(store), "--format", "neo4j", "--plan"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        env={**os.environ, **bolt_server.env, "NEO4J_URI": bolt_server.uri},
    )
    assert done.returncode == 0, done.stderr
    assert "delta from the journal, steps 1 -> 2" in done.stdout and "1 to create, 1 to update" in done.stdout


@pytest.mark.parametrize("meddle", ["delete a node", "add a node", "delete the marker", "another session"])
def test_a_scope_changed_behind_iggs_back_falls_back_to_read_and_diff(bolt_server, store, meddle):
    s = Session(store, size=25)
    sync(bolt_server, s)
    with BoltSession(bolt_server.settings()) as bolt:
        if meddle == "delete a node":
            bolt.run("MATCH (n:Class) WHERE n.igg_scope = $s AND n.name = 'C3' DETACH DELETE n", s=s.id)
        elif meddle == "add a node":
            bolt.run("CREATE (n:Class {name: 'Intruder', package: 'x', igg_scope: $s})", s=s.id)
        elif meddle == "delete the marker":
            bolt.run(cypher.MARKER_DELETE, scope=s.id)
    if meddle == "another session":
        other = Session(store, size=5, seed=9)
        sync(bolt_server, other, scope=s.id)
    s.change(10)
    s.commit()
    summary = sync(bolt_server, s)
    reason = {
        "delete a node": "changed behind IGG's back",
        "add a node": "changed behind IGG's back",
        "delete the marker": "no IGG marker",
        "another session": "marker names another export",
    }[meddle]
    assert summary["mode"] == "full" and reason in summary["fallback"]
    assert held(bolt_server, s.id) == expected(s.state)
    s.change(5)
    s.commit()
    assert sync(bolt_server, s)["mode"] == "delta"  # the fallback left a marker: deltas again
    assert held(bolt_server, s.id) == expected(s.state)


def test_a_document_export_into_the_scope_removes_the_marker(bolt_server, store):
    from igg.export import export_neo4j

    s = Session(store, size=10)
    sync(bolt_server, s)
    export_neo4j(Session(store, size=3, seed=4).state, settings=bolt_server.settings(), scope=s.id)
    assert marker(bolt_server, s.id) == []
    s.change(3)
    s.commit()
    summary = sync(bolt_server, s)
    assert summary["mode"] == "full" and "no IGG marker" in summary["fallback"]
    assert held(bolt_server, s.id) == expected(s.state)


def test_a_delta_planned_against_a_stale_marker_writes_nothing(bolt_server, store):
    s = Session(store, size=10)
    sync(bolt_server, s)
    s.add()
    s.commit()
    before = held(bolt_server, s.id)
    diff = journal_delta(s.state, [m for _, m in s.store.mutations(s.id, after_step=1)])
    with BoltSession(bolt_server.settings()) as bolt, pytest.raises(StaleMarker, match="not the 0000000000"):
        write_delta(
            bolt,
            diff,
            s.id,
            expected="0" * 64,
            marker={
                "digest": "x",
                "session": s.id,
                "step": 9,
                "iteration": 9,
                "nodes": 0,
                "edges": 0,
                "at": 0.0,
            },
            batch_size=100,
        )
    assert held(bolt_server, s.id) == before
    assert marker(bolt_server, s.id)[0]["step"] == 1


def test_two_exporters_of_one_scope_at_once_never_interleave(bolt_server, store):
    s = Session(store, size=40)
    sync(bolt_server, s)
    for _round in range(3):
        s.change(30)
        s.commit()
        results: list[Any] = []
        points = [s.point(), s.point()]

        def go(point: SyncPoint, results: list[Any]) -> None:
            try:
                results.append(sync_neo4j(point, settings=bolt_server.settings()))
            except BaseException as exc:  # noqa: BLE001 - reported below
                results.append(exc)

        threads = [threading.Thread(target=go, args=(p, results)) for p in points]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        assert all(isinstance(r, dict) for r in results), results
        assert held(bolt_server, s.id) == expected(s.state)
        (m,) = marker(bolt_server, s.id)
        assert m["step"] == s.store.session(s.id).last_step
    s.change(5)
    s.commit()
    assert sync(bolt_server, s)["mode"] == "delta"


def wait_for(condition, timeout: float = 90.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def test_follow_mode_killed_with_sigkill_and_restarted_ends_equal_to_the_final_graph(
    bolt_server, store, tmp_path
):
    s = Session(store, size=20)
    env = {**os.environ, **bolt_server.env, "NEO4J_URI": bolt_server.uri}
    argv = [
        sys.executable,
        "-m",
        "igg",
        "export",
        s.id,
        "--store",
        str(store),
        "--format",
        "neo4j",
        "--follow",
        "--interval",
        "0.1",
        "--json",
    ]

    def start(name: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            argv, cwd=ROOT, env=env, text=True, stdout=open(tmp_path / name, "w"), stderr=subprocess.PIPE
        )

    def at_step(step: int) -> bool:
        """The scope's marker AND the store's record of the export are at ``step`` (the follower writes the
        marker first: a kill between the two writes would make the next start export in full, rightly)."""
        from igg.store.export_targets import ExportTargets

        found = marker(bolt_server, s.id)
        kept = ExportTargets(s.store.db).of_session(s.id)
        return bool(found) and found[0]["step"] == step and any(t.step == step for t in kept)

    follower = start("first.jsonl")
    try:
        wait_for(lambda: at_step(1), what="the first sync")
        for _ in range(3):
            s.change(8)
            step = s.commit()
        wait_for(lambda: at_step(step), what=f"step {step}")
        os.kill(follower.pid, signal.SIGKILL)
        follower.wait(30)
        assert held(bolt_server, s.id) == expected(s.state)
        for _ in range(3):  # committed while nobody follows
            s.change(8)
            s.commit()
        follower = start("second.jsonl")
        s.change(8)
        s.commit(finish=True)
        assert follower.wait(120) == 0, follower.stderr.read() if follower.stderr else ""
    finally:
        if follower.poll() is None:
            follower.kill()
    assert held(bolt_server, s.id) == expected(s.state)
    lines = [json.loads(x) for x in (tmp_path / "second.jsonl").read_text().splitlines()]
    assert lines[0]["mode"] == "delta" and lines[0]["since_step"] == 4  # the kill lost nothing: a delta again
    assert lines[-1]["step"] == s.store.session(s.id).last_step
    first = [json.loads(x) for x in (tmp_path / "first.jsonl").read_text().splitlines()]
    assert [x["step"] for x in first][:1] == [1] and all(x["mode"] == "delta" for x in first[1:])


# ---- the delta pinned to the read-and-diff path (no server) ------------------------------------------------


def scope_of(state: GraphState) -> ScopeContents:
    """What a scope mirroring ``state`` holds, as ``read_scope`` would read it."""
    held_scope = ScopeContents()
    ident = state.schema.identity_keys
    for plan in plan_export(state):
        for row in plan.rows:
            if plan.edge:
                et, tu, sk, tv, tk = plan.edge
                a = (tu, tuple(freeze(x) for x in row[: len(sk)]))
                b = (tv, tuple(freeze(x) for x in row[len(sk) : -1]))
                held_scope.edges[(a, et, b)] = row[-1]
            else:
                held_scope.nodes[(plan.label, tuple(freeze(row[k]) for k in ident[plan.label]))] = row
    return held_scope


def apply_diff(scope: ScopeContents, diff: ScopeDiff, state: GraphState) -> ScopeContents:
    """What the scope holds after a diff's statements: deletes (relationships, then nodes with theirs),
    merges."""
    ident = state.schema.identity_keys
    nodes, edges = dict(scope.nodes), dict(scope.edges)
    for (et, tu, sk, tv, _), rows in diff.edge_deletes.items():
        for r in rows:
            edges.pop(
                (
                    (tu, tuple(freeze(x) for x in r[: len(sk)])),
                    et,
                    (tv, tuple(freeze(x) for x in r[len(sk) :])),
                ),
                None,
            )
    for label, rows in diff.node_deletes.items():
        for r in rows:
            key = (label, tuple(freeze(x) for x in r))
            nodes.pop(key, None)
            edges = {k: v for k, v in edges.items() if key not in (k[0], k[2])}
    for plan, rows in diff.writes:
        for row in rows:
            if plan.edge:
                et, tu, sk, tv, _ = plan.edge
                a = (tu, tuple(freeze(x) for x in row[: len(sk)]))
                b = (tv, tuple(freeze(x) for x in row[len(sk) : -1]))
                if a in nodes and b in nodes:  # MATCH both ends, else the row does nothing
                    edges[(a, et, b)] = row[-1]
            else:
                nodes[(plan.label, tuple(freeze(row[k]) for k in ident[plan.label]))] = row
    return ScopeContents(nodes=nodes, edges=edges)


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 10_000), size=st.integers(2, 12), changes=st.integers(1, 25))
def test_the_journal_delta_leaves_the_scope_the_read_and_diff_path_leaves(
    seed, size, changes, tmp_path_factory
):
    """The fast path (journal) is pinned to the general path (read the scope, diff) it shortcuts."""
    s = Session(tmp_path_factory.mktemp("prop") / "s.sqlite", size=size, seed=seed)
    before = scope_of(s.state)
    s.change(changes)
    s.commit()
    mutations = [m for _, m in s.store.mutations(s.id, after_step=1)]
    fast = apply_diff(before, journal_delta(s.state, mutations), s.state)
    general = apply_diff(before, diff_scope(plan_export(s.state), s.state, before, detail=0), s.state)
    want = scope_of(s.state)
    assert (fast.nodes, fast.edges) == (want.nodes, want.edges) == (general.nodes, general.edges)
    s.store.close()


def test_a_run_syncing_each_iteration_killed_and_resumed_ends_with_the_target_equal_to_the_graph(
    bolt_server, tmp_path
):
    """``igg run --export neo4j --sync-each-iteration``, killed with SIGKILL while its agent waits in
    iteration 7, then ``igg resume`` with the same options: the scope equals the final graph."""
    answers = [json.dumps(t) for t in responses(10)]
    store = tmp_path / "sessions.sqlite"
    session_id = f"synced-{uuid.uuid4().hex[:8]}"
    payload = json.loads((FIXTURES / "seed_request.json").read_text())
    payload["session_id"] = session_id
    payload["config"].update(
        max_iterations=10,
        stuck_after=10,
        constraints={"max_nodes": 1000, "max_edges": 4000},
        llm={"timeout_seconds": 60, "max_retries": 0, "model": "test-model"},
    )
    request = tmp_path / "r.json"
    request.write_text(json.dumps(payload))
    sync_args = [
        "--agent",
        "llm",
        "--store",
        str(store),
        "--export",
        f"neo4j:{bolt_server.uri}",
        "--sync-each-iteration",
        "--json",
    ]
    with FakeOpenAI(answers[:6] + [Reply(content=answers[6], hang=60)]) as server:
        env = {
            **os.environ,
            **bolt_server.env,
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": "sk-test",
        }
        child = subprocess.Popen(
            [sys.executable, "-m", "igg", "run", str(request), *sync_args],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        wait_for(lambda: len(server.requests) == 7, what="iteration 7")
        found = marker(bolt_server, session_id)
        assert found and found[0]["iteration"] == 6  # iterations 1..6 were pushed as they landed
        os.kill(child.pid, signal.SIGKILL)
        child.wait(30)
        server.add(*answers[6:])
        resumed = subprocess.run(
            [sys.executable, "-m", "igg", "resume", session_id, *sync_args[2:]],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads(resumed.stdout)
    (export,) = [e for e in summary["exports"] if e["format"] == "neo4j"]
    assert export["ok"] and export["mode"] == "delta" and export["failed_syncs"] == 0
    graph = SessionStore(store).load_state(session_id)[1]
    assert held(bolt_server, session_id) == expected(graph)


def test_session_only_options_are_refused_where_they_cannot_apply(tmp_path):
    def igg(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "igg", *args],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=60,
            env={**os.environ, "IGG_HOME": str(tmp_path)},
        )

    request = str(FIXTURES / "seed_request.json")
    done = igg("export", request, "--format", "neo4j", "--follow")
    assert (
        done.returncode == 2
        and "--follow applies to a stored session (give SESSION and --store)" in done.stderr
    )
    done = igg("export", "x", "--format", "gexf", "--full", "--follow")
    assert (
        done.returncode == 2
        and "--full and --follow apply to --format neo4j of a stored session" in done.stderr
    )
    done = igg(
        "run",
        request,
        "--agent",
        "script:fixtures/auth/transcript.jsonl",
        "--store",
        str(tmp_path / "s.sqlite"),
        "--sync-each-iteration",
    )
    assert done.returncode == 2 and "needs exactly one --export neo4j[:URI]" in done.stderr
    assert (
        not (tmp_path / "s.sqlite").exists()
        or "uuid-1234" not in igg("sessions", "--store", str(tmp_path / "s.sqlite")).stdout
    )
    done = igg(
        "run",
        request,
        "--agent",
        "script:fixtures/auth/transcript.jsonl",
        "--export",
        "neo4j:bolt://127.0.0.1:1",
        "--out",
        str(tmp_path / "o"),
        "--sync-each-iteration",
    )
    assert done.returncode == 2 and "needs the session in a store (--store PATH or IGG_STORE)" in done.stderr


@pytest.mark.parametrize("command", ["run", "map-code"])
def test_a_synced_command_opens_its_store_once(bolt_server, tmp_path, command):
    """``--sync-each-iteration``: the run and the recorder keeping the target in step write through one
    opened store (``store_opened`` is logged at each opening), and the target holds the graph."""
    with BoltSession(bolt_server.settings()) as bolt:  # the other case's identities (Method by name) left
        for row in bolt.run("SHOW CONSTRAINTS"):
            if str(row.get("name", "")).startswith("igg_"):
                bolt.run(f"DROP CONSTRAINT {row['name']}")
    store = tmp_path / "s.sqlite"
    session_id = f"once-{uuid.uuid4().hex[:8]}"
    given = (
        [str(FIXTURES / "seed_request.json"), "--agent", "script:fixtures/auth/transcript.jsonl"]
        if command == "run"
        else [str(FIXTURES / "code" / "python"), "--session", session_id]
    )
    if command == "run":
        payload = json.loads((FIXTURES / "seed_request.json").read_text())
        payload["session_id"] = session_id
        request = tmp_path / "r.json"
        request.write_text(json.dumps(payload))
        given[0] = str(request)
    done = subprocess.run(
        [sys.executable, "-m", "igg", command, *given, "--store", str(store)]
        + ["--export", f"neo4j:{bolt_server.uri}", "--sync-each-iteration"]
        + ["--log-level", "debug", "--log-format", "json", "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
        env={**os.environ, **bolt_server.env, "IGG_HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    events = [json.loads(line) for line in done.stderr.splitlines() if line.startswith("{")]
    opened = [e for e in events if e.get("event") == "store_opened"]
    assert len(opened) == 1, opened
    graph = SessionStore(store).load_state(session_id)[1]
    with BoltSession(bolt_server.settings()) as bolt:
        (row,) = bolt.run("MATCH (n) WHERE n.igg_scope = $s RETURN count(n) AS c", s=session_id)
    assert graph.node_count > 5 and row["c"] == graph.node_count
