"""`igg batch` and `igg map-code --scheduler` on a real Dask cluster (a scheduler and two worker processes).

Every test compares what the cluster produced with what a single process produces for the same input, and
reads the results back from the session store the batch wrote.
"""

from __future__ import annotations

import json
import os
import signal
from typing import Any

import pytest

import igg
from igg.batch import run_requests
from igg.interfaces.cli import main
from igg.store import SessionStore, replay
from tests.conftest import FIXTURES

AUTH = FIXTURES / "auth"
TRANSCRIPT = AUTH / "transcript.jsonl"
CODE = FIXTURES / "code"


def auth_payload(session_id: str | None, max_iterations: int) -> dict[str, Any]:
    payload = json.loads((AUTH / "request.json").read_text())
    payload.pop("session_id", None)
    if session_id:
        payload["session_id"] = session_id
    payload["config"]["max_iterations"] = max_iterations
    return payload


def local_graph(payload: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The graph (nodes, edges) and summary of the same request run in this process."""
    request = igg.load_request(payload)
    result = igg.run(request, igg.ScriptedAgent.from_path(TRANSCRIPT))
    return graph_of(result.state, request), _comparable(result.summary())


def graph_of(state: Any, request: Any, *, edge_ids: bool = True) -> dict[str, Any]:
    """Nodes and edges with provenance; without ``edge_ids``, edges as a sorted list of what they connect
    (map-code numbers edges in an order that depends on the process's hash seed: see the closing notes)."""
    doc = state.to_document(request.config.schema_, provenance=True).model_dump(by_alias=True)
    edges = (
        doc["edges"]
        if edge_ids
        else sorted(
            json.dumps({k: v for k, v in e.items() if k != "id"}, sort_keys=True) for e in doc["edges"]
        )
    )
    return {"nodes": doc["nodes"], "edges": edges}


def stored_graph(store: SessionStore, session_id: str, *, edge_ids: bool = True) -> dict[str, Any]:
    request, state, _ = store.load_state(session_id)
    return graph_of(state, request, edge_ids=edge_ids)


def _comparable(summary: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in summary.items() if k not in ("elapsed_ms", "session_id", "exports")}


def test_batch_of_requests_stores_each_session_as_a_single_run_would(
    dask_cluster, tmp_path, capsys, store_location
):
    """A folder and a JSON Lines file of requests run on the cluster; the store, --out and the exports hold
    for every session exactly what `igg run` produces alone; running the batch again runs nothing."""
    folder = tmp_path / "requests"
    folder.mkdir()
    payloads = {"auth-a": auth_payload("auth-a", 12), "auth-b": auth_payload("auth-b", 5)}
    for name, payload in payloads.items():
        (folder / f"{name}.json").write_text(json.dumps(payload))
    (folder / "notes.txt").write_text("not a request")
    lines = [auth_payload(None, 8), auth_payload("auth-d", 3)]
    jsonl = tmp_path / "more.jsonl"
    jsonl.write_text("\n".join(json.dumps(p) for p in lines) + "\n")
    store_path = store_location  # an SQLite file, a PostgreSQL schema
    dask_cluster.wait_ready()  # both workers (a killed one is replaced by its nanny)
    args = [
        "batch",
        str(folder),
        str(jsonl),
        "--scheduler",
        dask_cluster.address,
        "--agent",
        f"script:{TRANSCRIPT}",
        "--store",
        str(store_path),
        "--out",
        str(tmp_path / "out"),
        "--export",
        "graphml",
        "--export",
        f"json:{tmp_path}/exports/{{session_id}}.json",
        "--json",
    ]

    assert main(args) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["sessions"], report["done"], report["failed"], report["skipped"]) == (4, 4, 0, 0)
    assert report["cluster"]["workers"] == 2 and not report["cluster"]["local"]
    ids = [r["session_id"] for r in report["results"]]
    derived = ids[2]
    assert ids[:2] == ["auth-a", "auth-b"] and ids[3] == "auth-d" and derived.startswith("more-1-")
    expected = {**payloads, derived: lines[0], "auth-d": lines[1]}

    store = SessionStore(store_path)
    assert sorted(s.session_id for s in store.sessions()) == sorted(ids)
    for item in report["results"]:
        sid = item["session_id"]
        graph, summary = local_graph(expected[sid])
        assert _comparable(item["summary"]) == summary, sid
        assert stored_graph(store, sid) == graph, sid
        steps = store.steps(sid, with_records=False)
        iterations = [s.iteration for s in steps if s.kind == "iteration"]
        assert iterations == list(range(1, summary["iterations"] + 1)) and steps[-1].kind == "finalize"
        assert store.session(sid).status == "finished"
        assert {e["format"] for e in item["summary"]["exports"]} == {"graphml", "json"}
        assert (tmp_path / "out" / sid / "graph.graphml").is_file()
        assert (tmp_path / "out" / sid / "records.jsonl").read_text().count("\n") == summary["iterations"]
        exported = json.loads((tmp_path / "exports" / f"{sid}.json").read_text())
        assert len(exported["nodes"]) == summary["nodes"]
        assert replay(store, sid).ok, sid  # snapshots and every step's counts agree with the mutations
        # who committed it: the client (SQLite: one writer), or the worker that ran it (PostgreSQL)
        writer_pid = int((store.session(sid).owner or "").split(":")[1])
        assert writer_pid == (
            int(item["worker"].split(":")[1]) if "postgresql" in store_location else os.getpid()
        )

    assert main(args) == 0  # the same batch again: every session is already in the store
    again = json.loads(capsys.readouterr().out)
    assert (again["done"], again["skipped"]) == (0, 4)
    assert len(store.sessions()) == 4
    store.close()


def test_batch_map_code_maps_each_tree_as_local_map_code_does(dask_cluster, tmp_path, capsys, monkeypatch):
    """`igg batch map-code` maps each tree on a worker of the cluster named by DASK_SCHEDULER_ADDRESS; each
    stored graph equals `igg map-code` in-process."""
    from igg.service import map_code

    store_path = tmp_path / "trees.sqlite"
    trees = [CODE / "java", CODE / "python"]
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", dask_cluster.address)
    assert main(["batch", "map-code", *map(str, trees), "--store", str(store_path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["done"], report["failed"]) == (2, 0)
    assert report["cluster"]["scheduler"] == dask_cluster.address and not report["cluster"]["local"]
    store = SessionStore(store_path)
    for tree, item in zip(trees, report["results"], strict=True):
        result, summary = map_code([tree], jobs=1)
        request = store.request(item["session_id"])
        assert stored_graph(store, item["session_id"], edge_ids=False) == graph_of(
            result.state, request, edge_ids=False
        )
        assert item["summary"]["map_code"]["graph"] == summary["graph"]
        assert item["summary"]["map_code"]["files"]["read"] == summary["files"]["read"]


def test_map_code_scheduler_parses_on_the_workers_and_links_the_same_graph(dask_cluster, tmp_path, capsys):
    """`igg map-code --scheduler` sends the files to the workers to parse; the linked graph is the local
    one."""
    tree = str(CODE / "java")
    dask_cluster.wait_ready()
    assert main(["map-code", tree, "--json", "--export", f"json:{tmp_path}/local.json"]) == 0
    local = json.loads(capsys.readouterr().out)
    assert (
        main(
            [
                "map-code",
                tree,
                "--json",
                "--scheduler",
                dask_cluster.address,
                "--export",
                f"json:{tmp_path}/cluster.json",
            ]
        )
        == 0
    )
    remote = json.loads(capsys.readouterr().out)
    assert remote["map_code"]["files"]["parse_processes"] == 2  # the cluster's two worker threads
    assert remote["map_code"]["graph"] == local["map_code"]["graph"]
    docs = [json.loads((tmp_path / f"{name}.json").read_text()) for name in ("local", "cluster")]
    assert (
        docs[0]["nodes"] == docs[1]["nodes"] and docs[0]["edges"] == docs[1]["edges"]
    )  # ids too: linked here
    with dask_cluster.client() as client:  # the parse tasks really ran on the cluster
        ran = client.run_on_scheduler(
            lambda dask_scheduler: {
                p: tp.state_counts.get("memory", 0) for p, tp in dask_scheduler.task_prefixes.items()
            }
        )
    assert ran.get("parse_batch", 0) >= 1  # Dask names the prefix of _parse_batch-<hash> without its "_"


def test_a_worker_killed_mid_batch_loses_no_session_and_duplicates_none(
    dask_cluster, tmp_path, store_location
):
    """kill -9 of a worker while it runs a session (with a PostgreSQL store, perhaps while it commits one):
    the scheduler runs that session again on the other worker; every session is stored exactly once, each
    iteration once, with the graph a local run gives."""
    folder = tmp_path / "requests"
    folder.mkdir()
    n = 24
    for i in range(n):
        (folder / f"r{i:02}.json").write_text(json.dumps(auth_payload(f"kill-{i:02}", 12)))
    store_path = store_location
    killed: list[int] = []

    def on_session(report: Any, finished: int, total: int) -> None:
        if not killed and report.status == "done":  # that worker is busy with its next session by now
            pid = int(report.worker.rsplit(":", 1)[1])
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)

    dask_cluster.wait_ready()
    with dask_cluster.client() as client:
        report = run_requests(
            [folder], agent=f"script:{TRANSCRIPT}", store=store_path, client=client, on_session=on_session
        )
        removed = [
            msg
            for _, msg in client.get_events("all")
            if isinstance(msg, dict) and msg.get("action") == "remove-worker" and not msg.get("expected")
        ]
    assert killed, "no session finished before the kill"
    assert removed, "the scheduler never saw the worker die"
    interrupted = {k for msg in removed for k in msg["processing-tasks"]}
    assert any(str(k).startswith("igg-session-kill-") for k in interrupted), interrupted
    assert (report.count("done"), report.count("failed")) == (n, 0)
    store = SessionStore(store_path)
    assert sorted(s.session_id for s in store.sessions()) == [f"kill-{i:02}" for i in range(n)]
    graph, summary = local_graph(auth_payload("kill-00", 12))
    for i in range(n):
        sid = f"kill-{i:02}"
        steps = store.steps(sid, with_records=False)
        assert [s.iteration for s in steps] == [*range(1, 13), None], sid
        assert stored_graph(store, sid) == graph, sid


def test_an_interrupted_session_in_the_store_is_continued_from_its_last_committed_iteration(
    dask_cluster, tmp_path, store_location
):
    """A session whose process died after iteration 5 is continued by the batch at iteration 6, on a worker;
    the store then holds iterations 1..12 once each and the graph of an uninterrupted run."""
    import socket

    from igg.store import SessionRecorder

    class Crash(Exception):
        pass

    class CrashAfter:
        def begin(self, request: Any, state: Any, records: Any) -> None:
            pass

        def record(self, record: Any) -> None:
            if record.iteration == 5:
                raise Crash

        def finish(self, result: Any) -> None:
            pass

    payload = auth_payload("resumed", 12)
    store_path = store_location
    store = SessionStore(store_path)
    recorder = SessionRecorder(store, agent=f"script:{TRANSCRIPT}")
    with pytest.raises(Crash):
        igg.run(
            igg.load_request(payload),
            igg.ScriptedAgent.from_path(TRANSCRIPT),
            recorder=[recorder, CrashAfter()],
        )
    store.db.write(
        lambda db: db.execute(  # the process that ran it is gone (a pid that does not exist)
            "UPDATE sessions SET owner = ? WHERE session_id = 'resumed'",
            (f"{socket.gethostname()}:999999999:x",),
        )
    )
    assert store.session("resumed").status == "interrupted" and store.session("resumed").last_iteration == 5

    (tmp_path / "resumed.json").write_text(json.dumps(payload))
    report = run_requests(
        [tmp_path / "resumed.json"],
        agent=f"script:{TRANSCRIPT}",
        store=store_path,
        scheduler=dask_cluster.address,
    )
    (item,) = report.sessions
    assert (item.status, item.continued_after) == ("done", 5)
    steps = store.steps("resumed", with_records=False)
    assert [s.iteration for s in steps] == [*range(1, 13), None]
    graph, summary = local_graph(payload)
    assert stored_graph(store, "resumed") == graph
    assert _comparable(item.summary or {}) == summary
    store.close()


def test_a_local_cluster_says_nothing_when_the_dashboard_port_is_taken() -> None:
    """Dask's default :8787, taken by another cluster (or here by a socket of the test), made every local
    batch warn 'Port 8787 is already in use' into IGG's output; the scheduler's HTTP server now takes a free
    loopback port."""
    import socket
    import warnings

    from igg.batch.cluster import open_cluster

    holder = socket.socket()
    try:
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        holder.bind(("0.0.0.0", 8787))
        holder.listen()
    except OSError:
        pass  # taken already: the case itself
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with open_cluster(workers=1) as (client, info):
                services = client.scheduler_info()["services"]
        assert info.local and info.workers == 1
        assert not [w for w in caught if "already in use" in str(w.message)]
        assert services.get("dashboard") not in (None, 8787)
    finally:
        holder.close()


def test_a_task_run_again_after_its_worker_committed_reports_the_stored_session(
    tmp_path: Any, postgres_url: str
) -> None:
    """With PostgreSQL each worker commits its own session. A worker killed after its commit, before the
    client had the answer, has its task run again (Dask: "Couldn't gather 1 keys, rescheduling"): that run
    finds the session whole in the store and reports it committed, where the store's refusal of a second
    session of the same id made it ``failed``. A session of that id that is not finished is still refused."""
    from igg.batch.jobs import request_jobs
    from igg.batch.remote import commit_session
    from igg.batch.tasks import SessionFailed

    (tmp_path / "r.json").write_text(json.dumps(auth_payload("again", 4)))
    [job] = request_jobs([str(tmp_path / "r.json")], agent=f"script:{TRANSCRIPT}")
    first = commit_session(job, postgres_url, False)
    again = commit_session(job, postgres_url, False)
    assert first.committed and again.committed
    store = SessionStore(postgres_url)
    assert [s.session_id for s in store.sessions()] == ["again"]
    assert stored_graph(store, "again") == local_graph(auth_payload("again", 4))[0]
    assert [s.iteration for s in store.steps("again") if s.kind == "iteration"] == [1, 2, 3, 4]
    running = "UPDATE sessions SET status = 'running' WHERE session_id = 'again'"
    store.db.write(lambda c: c.execute(running))
    with pytest.raises(SessionFailed):  # a session of that id another process writes: refused as before
        commit_session(job, postgres_url, False)
