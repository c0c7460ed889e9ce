"""The session store: durable steps, resume, replay, undo, diff, explain, and concurrent writers."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from igg.errors import SessionError
from igg.models.verdicts import ErrorCode, Verdict
from igg.record.records import IterationRecord
from igg.store import SessionRecorder, SessionStore, diff, explain, replay, resume_point, undo
from igg.store.codec import canonical, differences, record_from_dict
from tests.conftest import ROOT, make_request
from tests.store_driver import responses, resume, run_iterations


@pytest.fixture
def store(store_location):
    """A new store of each kind (an SQLite file, a PostgreSQL schema: ``tests.support.postgres``)."""
    s = SessionStore(store_location)
    yield s
    s.close()


def request_for(session_id: str = "s1"):
    return make_request(session_id=session_id, constraints={"max_nodes": 500, "max_edges": 2000})


def test_a_run_is_stored_step_by_step_and_replays_to_the_same_graph(store):
    request = request_for()
    state = run_iterations(SessionRecorder(store, agent="script:x.jsonl"), request, responses(12))
    info = store.session("s1")
    assert (info.status, info.stop_reason, info.last_iteration) == ("finished", "max_iterations", 12)
    assert info.agent == f"script:{Path.cwd() / 'x.jsonl'}"  # absolute: a resume may run elsewhere
    assert (info.nodes, info.edges) == (state.node_count, state.edge_count)
    steps = store.steps("s1")
    assert [s.kind for s in steps] == ["iteration"] * 12 + ["finalize"]
    fifth = steps[4]
    assert (fifth.proposed, fifth.accepted, fifth.rejected, fifth.rejected_by_code) == (
        3,
        2,
        1,
        {"UNKNOWN_NODE_TYPE": 1},
    )
    assert steps[6].rejected_by_code == {"NODE_NOT_FOUND": 1}
    assert (
        fifth.tokens == 25 and fifth.chunk == "file1.java" and fifth.record["reasoning"] == "turn 5: add C5"
    )
    report = replay(store, "s1")
    assert report.ok, report.problems
    assert "snapshot at step 13" in report.checked
    assert canonical(report.state) == canonical(state)
    assert report.state.id_counters == state.id_counters


def test_replay_detects_a_tampered_mutation(store):
    run_iterations(SessionRecorder(store), request_for(), responses(6))
    store.db.write(
        lambda c: c.execute(
            'UPDATE mutations SET data = replace(data, \'"name":"C4"\', \'"name":"C4x"\') WHERE step = 4'
        )
    )
    report = replay(store, "s1")
    assert not report.ok
    assert any("node n4 differs" in p for p in report.problems), report.problems


def test_an_existing_session_id_refuses_to_start_over_unless_forced(store):
    run_iterations(SessionRecorder(store), request_for(), responses(3))
    with pytest.raises(
        SessionError,
        match=r"session 's1' already exists .*\(finished, 3 iterations\); inspect it "
        r"with `igg show s1`, replace it with --force",
    ):
        SessionRecorder(store).begin(request_for(), None)  # type: ignore[arg-type]
    run_iterations(SessionRecorder(store, force=True), request_for(), responses(2))
    assert store.session("s1").last_iteration == 2 and len(store.steps("s1")) == 3


def test_an_unknown_session_names_the_sessions_there(store):
    run_iterations(SessionRecorder(store), request_for("alpha"), responses(1))
    with pytest.raises(
        SessionError, match=r"no session 'beta' in .*(s\.sqlite|t_\w+); sessions there: alpha"
    ):
        store.session("beta")


def test_resume_continues_where_the_last_commit_left_off_with_the_same_ids(store):
    turns = responses(14)
    whole = run_iterations(None, request_for(), turns)
    run_iterations(
        SessionRecorder(store), request_for(), turns, stop_before=9
    )  # "crashes" before iteration 9
    point = resume_point(store, "s1")
    assert point.next_iteration == 9 and [r.iteration for r in point.records] == list(range(1, 9))
    assert point.records[3].verdicts[0].accepted and point.records[3].mutations
    with pytest.raises(SessionError, match="still being run by a live process"):
        SessionRecorder(store, resume=True).begin(point.request, point.state)
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    dead_owner = f"{socket.gethostname()}:{gone.stdout.strip()}:x"  # a process that has ended
    store.db.write(lambda c: c.execute("UPDATE sessions SET owner = ?", (dead_owner,)))
    assert store.session("s1").status == "interrupted"
    state = resume(store, "s1", turns)
    assert differences(state, whole) == []
    assert replay(store, "s1").ok
    with pytest.raises(SessionError, match="already finished"):
        resume_point(store, "s1")


def test_an_iteration_is_never_stored_twice(store):
    request = request_for()
    recorder = SessionRecorder(store)
    state = run_iterations(recorder, request, responses(3), stop_before=3)
    again = IterationRecord(iteration=2, observation_chars=1, observation_tokens=1)
    with pytest.raises(SessionError, match="iteration 2 of session 's1' is already stored"):
        recorder.record(again)
    assert store.session("s1").last_iteration == 2 and len(store.steps("s1")) == 2
    assert state.node_count == 2


def test_a_second_writer_of_one_session_is_stopped(store):
    request = request_for()
    first = SessionRecorder(store)
    state = run_iterations(first, request, responses(4), stop_before=3)
    second = SessionRecorder(store, resume=True, force=True)
    second.begin(request, state)
    with pytest.raises(SessionError, match="now written by another process"):
        first.record(IterationRecord(iteration=3, observation_chars=1, observation_tokens=1))


def test_undo_rolls_back_to_an_iteration_as_a_step_of_its_own(store):
    run_iterations(SessionRecorder(store), request_for(), responses(10))
    _, after4, _ = store.load_state("s1", upto_step=store.step_of_iteration("s1", 4))
    undone = undo(store, "s1", 4)
    assert undone.step == 12 and undone.mutations > 0 and undone.kind == "undo" and undone.to_iteration == 4
    _, now, _ = store.load_state("s1")
    assert differences(now, after4) == []
    assert store.steps("s1")[-1].kind == "undo"
    report = replay(store, "s1")
    assert report.ok and "snapshot at step 12" in report.checked
    # the undone iterations stay in the history: an undo can itself be undone to a later iteration
    undo(store, "s1", 7)
    _, after7, _ = store.load_state("s1", upto_step=7)
    _, now, _ = store.load_state("s1", use_snapshot=False)
    assert differences(now, after7) == []
    with pytest.raises(SessionError, match="has no iteration 11; its iterations are 1..10"):
        undo(store, "s1", 11)


def test_diff_gives_the_net_change_between_two_iterations(store):
    run_iterations(SessionRecorder(store), request_for(), responses(8))
    changes = {(c.kind, c.element, c.change) for c in diff(store, "s1", 3, 4)}
    # iteration 4 adds C4 (n4) and C4->C3 (e3), and deletes C2 (n2) with its edges e1 (C2->C1) and e2 (C3->C2)
    assert changes == {
        ("node", "n4", "added"),
        ("edge", "e3", "added"),
        ("node", "n2", "deleted"),
        ("edge", "e1", "deleted"),
        ("edge", "e2", "deleted"),
    }
    updated = [c for c in diff(store, "s1", 5, 6) if c.change == "changed"]
    assert [(c.element, c.before, c.after) for c in updated] == [
        ("n5", {"name": "C5", "package": "p"}, {"name": "C5", "package": "p", "doc": "d6"})
    ]
    backwards = {(c.element, c.change) for c in diff(store, "s1", 4, 3)}
    assert ("n4", "deleted") in backwards and ("n2", "added") in backwards
    assert diff(store, "s1", 2, 2) == []


def test_explain_names_the_iterations_reasoning_and_chunk_behind_a_node(store):
    run_iterations(SessionRecorder(store), request_for(), responses(8))
    events = explain(store, "s1", "C5")
    assert [(e.iteration, e.op, e.element, e.detail) for e in events] == [
        (5, "add_node", "n5", "Class {name='C5', package='p'}"),
        (5, "add_edge", "e4", 'n5 "C5" -CALLS-> n4 "C4"'),
        (6, "add_edge", "e5", 'n6 "C6" -CALLS-> n5 "C5"'),
        (6, "update_node", "n5", "doc='d6'"),
        (8, "delete_edge", "e5", 'n6 "C6" -CALLS-> n5 "C5"'),
    ]
    first = events[0]
    assert first.reasoning == "turn 5: add C5" and first.chunk == "file1.java"
    assert first.verdict == 'added Class "C5" as n5'
    assert events[-1].verdict == 'deleted Class "C6" (n6) and its 2 edges'
    by_id = explain(store, "s1", "e1", edges=False)
    assert [e.op for e in by_id] == ["add_edge", "delete_edge"]
    with pytest.raises(SessionError, match="nothing in session 's1' matches 'Nobody'"):
        explain(store, "s1", "Nobody")


def test_threads_share_one_store_without_errors(store_location):
    store = SessionStore(store_location)
    errors: list[BaseException] = []

    def worker(k: int) -> None:
        try:
            run_iterations(SessionRecorder(store), request_for(f"t{k}"), responses(25))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert sorted(s.session_id for s in store.sessions()) == [f"t{k}" for k in range(8)]
    for k in range(8):
        assert store.session(f"t{k}").last_iteration == 25 and replay(store, f"t{k}").ok
    store.close()


WRITER = """
import sys
from tests.conftest import make_request
from tests.store_driver import responses, run_iterations
from igg.store import SessionRecorder, SessionStore
store = SessionStore(sys.argv[1])
for j in range(3):
    request = make_request(session_id=f"p{sys.argv[2]}-{j}", constraints={"max_nodes": 500})
    run_iterations(SessionRecorder(store), request, responses(30))
print("ok")
"""


def test_processes_share_one_store_without_errors(store_location):
    path = store_location
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), str(k)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for k in range(4)
    ]
    outputs = [p.communicate(timeout=120) for p in procs]
    for p, (out, err) in zip(procs, outputs, strict=True):
        assert p.returncode == 0 and out.strip() == "ok", err
    store = SessionStore(path)
    sessions = store.sessions()
    assert len(sessions) == 12 and all(s.status == "finished" and s.last_iteration == 30 for s in sessions)
    assert all(replay(store, s.session_id).ok for s in sessions)
    if store.db.dialect == "sqlite":
        check = store.db.read(lambda c: c.execute("PRAGMA integrity_check").fetchone()[0])
        assert check == "ok"
    store.close()


def test_records_round_trip_through_the_store(store):
    run_iterations(SessionRecorder(store), request_for(), responses(5))
    record = record_from_dict(store.steps("s1")[4].record)
    assert record.iteration == 5 and record.usage["total_tokens"] == 25
    assert [v.code for v in record.verdicts if not v.accepted] == [ErrorCode.UNKNOWN_NODE_TYPE]
    assert record.verdicts[0] == Verdict(0, "ADD_NODE", True, None, 'added Class "C5" as n5', "n5")
    assert json.loads(json.dumps(store.steps("s1")[4].record)) == store.steps("s1")[4].record


def test_the_loop_records_into_the_store_and_resumes_through_the_python_api(tmp_path):
    """The real loop with the store's recorder, interrupted (Ctrl-C in iteration 6), resumed: same graph."""
    from igg import run
    from igg.agents.scripted import ScriptedAgent

    turns = responses(10)
    request = make_request(
        session_id="api", max_iterations=10, stuck_after=10, constraints={"max_nodes": 500, "max_edges": 2000}
    )
    whole = run(request, ScriptedAgent(turns))
    scripted = ScriptedAgent(turns)

    def interrupted(observation):
        if observation.iteration == 6:
            raise KeyboardInterrupt
        return scripted(observation)

    store = SessionStore(tmp_path / "api.sqlite")
    with pytest.raises(KeyboardInterrupt):
        run(request, interrupted, recorder=SessionRecorder(store, agent="python"))
    point = resume_point(store, "api")
    assert point.next_iteration == 6 and point.agent == "python"
    # this process wrote it and is alive: taking it over needs force
    result = run(
        point.request,
        ScriptedAgent(turns),
        state=point.state,
        records=point.records,
        recorder=SessionRecorder(store, resume=True, force=True),
    )
    assert result.iterations == 10 and result.stop_reason == whole.stop_reason == "max_iterations"
    assert result.action_counts() == whole.action_counts()
    assert differences(result.state, whole.state) == []
    assert store.session("api").status == "finished" and replay(store, "api").ok


def test_resume_rebuilds_the_state_exactly_even_after_a_periodic_snapshot(store, monkeypatch):
    """A snapshot keeps the graph, not the order of recent touches: resume replays every mutation instead."""
    monkeypatch.setattr("igg.store.recorder.SNAPSHOT_MIN_MUTATIONS", 5)
    turns = responses(12)
    whole = run_iterations(None, request_for(), turns, stop_before=10)
    run_iterations(SessionRecorder(store), request_for(), turns, stop_before=10)
    assert len(store.snapshot_steps("s1")) >= 2
    point = resume_point(store, "s1")
    assert differences(point.state, whole) == []
    assert point.state.recently_touched(50) == whole.recently_touched(50)
    assert point.state.most_connected(50) == whole.most_connected(50)
    assert point.state.id_counters == whole.id_counters
    _, from_snapshot, _ = store.load_state("s1")
    assert differences(from_snapshot, whole) == []


def test_many_sessions_on_one_event_loop_share_one_store(store_location):
    """Async runs interleaved on one event loop, each recording into the same store."""
    import asyncio

    from igg import arun
    from igg.agents.scripted import ScriptedAgent

    store = SessionStore(store_location)
    turns = responses(15)

    def agent():
        scripted = ScriptedAgent(turns)

        async def turn(observation):
            await asyncio.sleep(0.001)  # yield to the other sessions mid-iteration
            return scripted(observation)

        return turn

    def request(k):
        return make_request(
            session_id=f"a{k}",
            max_iterations=15,
            stuck_after=15,
            constraints={"max_nodes": 500, "max_edges": 2000},
        )

    async def main():
        return await asyncio.gather(
            *(arun(request(k), agent(), recorder=SessionRecorder(store)) for k in range(6))
        )

    results = asyncio.run(main())
    assert [r.iterations for r in results] == [15] * 6
    for k, result in enumerate(results):
        assert store.session(f"a{k}").status == "finished"
        _, stored, _ = store.load_state(f"a{k}", use_snapshot=False)
        assert differences(stored, result.state) == [] and replay(store, f"a{k}").ok


class WatchedStore(SessionStore):
    """The real SQLite store, noting which thread each write runs on."""

    def __init__(self, *args: Any, slow_commit: float = 0.0, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.writers: set[int] = set()
        self.slow_commit = slow_commit
        self.commits = 0

    def commit_step(self, *args: Any, **kwargs: Any) -> int:
        self.writers.add(threading.get_ident())
        self.commits += 1
        if self.commits % 5 == 0:  # a slow disk now and then: such a commit on the loop's thread stalls it
            time.sleep(self.slow_commit)
        return super().commit_step(*args, **kwargs)

    def create_session(self, *args: Any, **kwargs: Any) -> Any:
        self.writers.add(threading.get_ident())
        return super().create_session(*args, **kwargs)


def test_fifty_async_sessions_on_one_store_never_stall_the_event_loop(tmp_path):
    """50 sessions on one event loop, each committing every iteration (fsync'd) to one SQLite store: the
    commits run off the loop's thread, and a heartbeat task on the same loop stays within 50 ms.

    The store sits on a slow disk (every fifth commit takes 60 ms more), so one such commit on the loop's
    thread would make a heartbeat more than 50 ms late. Time the process's threads spent runnable but waiting
    for a CPU that other processes held (the kernel's run-queue delay, ``/proc/.../schedstat``) says nothing
    about IGG and is taken off each interval's lateness; time the loop spends blocked on a commit, a lock or
    the GIL, or busy with work of its own, counts."""
    import os

    from igg import arun

    def run_queue_delay() -> float:
        """Seconds this process's threads have waited on a run queue, in all."""
        total = 0
        for tid in os.listdir("/proc/self/task"):
            try:
                with open(f"/proc/self/task/{tid}/schedstat", encoding="ascii") as f:
                    total += int(f.read().split()[1])
            except OSError:  # the thread ended meanwhile
                pass
        return total / 1e9

    store = WatchedStore(tmp_path / "heartbeat.sqlite", slow_commit=0.06)
    lateness: list[float] = []

    def agent(k: int) -> Any:
        async def turn(observation: Any) -> dict[str, Any]:
            await asyncio.sleep(0)
            i = observation.iteration
            return {
                "reasoning": "",
                "finished": i == 3,
                "actions": [
                    {
                        "type": "ADD_NODE",
                        "label": "Class",
                        "properties": {"name": f"S{k}C{i}", "package": "p"},
                    }
                ],
            }

        return turn

    async def heartbeat(done: asyncio.Event) -> None:
        while not done.is_set():
            waited = run_queue_delay()
            before = time.perf_counter()
            await asyncio.sleep(0.005)
            late = time.perf_counter() - before - 0.005
            lateness.append(max(0.0, late - (run_queue_delay() - waited)))

    async def main() -> list[Any]:
        done = asyncio.Event()
        beat = asyncio.create_task(heartbeat(done))
        results = await asyncio.gather(
            *(
                arun(
                    make_request(session_id=f"h{k}", max_iterations=5),
                    agent(k),
                    recorder=SessionRecorder(store),
                )
                for k in range(50)
            )
        )
        done.set()
        await beat
        return results

    loop_thread = threading.get_ident()
    results = asyncio.run(main())
    assert [r.stop_reason for r in results] == ["finished"] * 50
    assert all(store.session(f"h{k}").last_iteration == 3 for k in range(50))
    assert store.writers and loop_thread not in store.writers
    assert len(lateness) >= 50, f"only {len(lateness)} heartbeats ran"
    assert max(lateness) < 0.05, f"heartbeat late by up to {max(lateness) * 1000:.0f} ms"


def test_an_atomic_block_keeps_all_of_its_writes_or_none(store):
    """``db.atomic()`` (a batch worker commits a whole session in one): an error inside keeps nothing of
    it."""
    with pytest.raises(RuntimeError), store.db.atomic():
        run_iterations(SessionRecorder(store), request_for(), responses(3))
        assert store.session("s1").last_iteration == 3  # reads inside see the block's own writes
        raise RuntimeError("stop")
    assert store.sessions() == []
    with store.db.atomic():
        run_iterations(SessionRecorder(store), request_for(), responses(3))
    assert store.session("s1").last_iteration == 3 and replay(store, "s1").ok


@pytest.mark.parametrize("grounding", ["off", "warn", "required"])
def test_an_update_reads_the_request_without_its_context_when_nothing_quotes_it(store, grounding):
    """A code map's request holds every file of its tree (68 MB at 50,000 files), which an update never reads
    when its grounding is off: ``context=False`` reads the request without ``context_data`` then, and whole
    under a grounding that quotes evidence from it. Everything else of the request is as stored."""
    context = "Alice works at Acme. " * 50
    request = make_request(session_id="s1", context_data=context, grounding=grounding)
    run_iterations(SessionRecorder(store, agent="script:x.jsonl"), request, responses(2))
    whole, lean = store.request("s1"), store.request("s1", context=False)
    assert whole.context_data == context
    assert lean.context_data == ("" if grounding == "off" else context)
    assert lean.model_dump(exclude={"context_data"}) == whole.model_dump(exclude={"context_data"})
