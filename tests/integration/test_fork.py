"""igg fork: a new session from iteration N with its lineage; the original untouched; exported and
re-imported."""

from __future__ import annotations

import json
import subprocess
import sys

from igg.store import SessionStore
from tests.conftest import FIXTURES, ROOT, edge, node


def cls(name: str) -> dict:
    return node("Class", name=name, package="p")


def igg(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "igg", *args], capture_output=True, text=True, timeout=120, cwd=ROOT
    )


def write_turns(path, turns) -> str:
    path.write_text("".join(json.dumps(t) + "\n" for t in turns))
    return f"script:{path}"


def test_a_fork_starts_at_iteration_n_keeps_lineage_and_leaves_the_original_alone(tmp_path, store_location):
    request = json.loads((FIXTURES / "seed_request.json").read_text())
    request["session_id"] = "orig"
    (tmp_path / "request.json").write_text(json.dumps(request))
    store = store_location
    original = write_turns(
        tmp_path / "orig.jsonl",
        [
            {
                "reasoning": "one",
                "actions": [cls("A"), cls("B"), edge("CALLS", {"name": "A"}, {"name": "B"})],
            },
            {"reasoning": "two", "actions": [cls("C")]},
            {"reasoning": "three", "actions": [cls("D")], "finished": True},
        ],
    )
    assert (
        igg("run", str(tmp_path / "request.json"), "--agent", original, "--store", store, "--json").returncode
        == 0
    )

    forked = igg("fork", "orig", "--at", "1", "--as", "alt", "--store", store)
    assert forked.returncode == 0, forked.stderr
    assert forked.stdout.startswith(
        "session alt: forked from orig after iteration 1 (1 steps copied; 2 nodes, 1 edges)"
    )
    shown = igg("show", "alt", "--store", store)
    assert "forked from: orig after iteration 1" in shown.stdout and "interrupted" in shown.stdout
    # the fork continues at iteration 2 with another agent; ids go on from the original's counters
    other = write_turns(
        tmp_path / "alt.jsonl",
        [
            {"reasoning": "unused", "actions": []},
            {
                "reasoning": "a different second step",
                "actions": [cls("Z"), edge("CALLS", {"name": "B"}, {"name": "Z"})],
            },
            {"reasoning": "done", "actions": [], "finished": True},
        ],
    )
    resumed = igg("resume", "alt", "--agent", other, "--store", store, "--json")
    assert resumed.returncode == 0, resumed.stderr
    summary = json.loads(resumed.stdout)
    assert summary["iterations"] == 3 and summary["nodes"] == 3
    s = SessionStore(store)
    _, alt_state, _ = s.load_state("alt")
    _, orig_state, _ = s.load_state("orig")
    assert sorted(p["name"] for _, p in alt_state.graph.nodes(data="properties")) == ["A", "B", "Z"]
    assert sorted(p["name"] for _, p in orig_state.graph.nodes(data="properties")) == ["A", "B", "C", "D"]
    assert alt_state.find_nodes({"name": "Z"}) == ["n3"]
    s.close()
    assert igg("replay", "alt", "--store", store).returncode == 0
    explained = igg("explain", "alt", "A", "--store", store)
    assert "one" in explained.stdout  # the history before the fork point is the original's
    # exported with its lineage, and the document read back (re-imported) keeps it
    out = tmp_path / "alt.json"
    assert igg("export", "alt", "--store", store, "--format", "json", "--output", str(out)).returncode == 0
    doc = json.loads(out.read_text())
    assert doc["metadata"]["forked_from"] == "orig" and doc["metadata"]["forked_at"] == 1
    again = tmp_path / "again.json"
    assert igg("export", str(out), "--format", "json", "--output", str(again)).returncode == 0
    assert json.loads(again.read_text())["metadata"]["lineage"] == [{"session_id": "orig", "at_iteration": 1}]
    seeded = {**request, "session_id": "from-doc", "seed_data": doc}
    (tmp_path / "seeded.json").write_text(json.dumps(seeded))
    assert igg("validate", str(tmp_path / "seeded.json")).returncode == 0


def test_an_undone_finished_session_continues_as_a_fork_and_bad_points_are_refused(tmp_path):
    request = json.loads((FIXTURES / "seed_request.json").read_text())
    request["session_id"] = "done"
    (tmp_path / "request.json").write_text(json.dumps(request))
    store = str(tmp_path / "s.sqlite")
    turns = write_turns(
        tmp_path / "t.jsonl",
        [
            {"reasoning": "", "actions": [cls("A")]},
            {"reasoning": "", "actions": [cls("B")], "finished": True},
        ],
    )
    igg("run", str(tmp_path / "request.json"), "--agent", turns, "--store", store, "--json")
    assert igg("undo", "done", "--to", "1", "--store", store).returncode == 0
    refused = igg("resume", "done", "--agent", turns, "--store", store)
    assert refused.returncode == 2
    assert igg("fork", "done", "--at", "1", "--store", store).returncode == 0
    more = write_turns(
        tmp_path / "more.jsonl",
        [{"reasoning": "", "actions": []}, {"reasoning": "", "actions": [cls("C")], "finished": True}],
    )
    result = igg("resume", "done-fork-1", "--agent", more, "--store", store, "--json")
    assert result.returncode == 0 and json.loads(result.stdout)["nodes"] == 2
    late = igg("fork", "done", "--at", "9", "--store", store)
    assert late.returncode == 2 and "fork it at 0..2" in late.stderr
    taken = igg("fork", "done", "--at", "1", "--store", store)
    assert taken.returncode == 2 and "already exists" in taken.stderr
    for bad in ("../../etc/x", "x" * 300):  # --as follows the session-id rule of a request
        refused_id = igg("fork", "done", "--at", "1", "--as", bad, "--store", store)
        assert refused_id.returncode == 2 and "should match pattern" in refused_id.stderr, refused_id.stderr
    opened = SessionStore(store)
    assert sorted(i.session_id for i in opened.sessions()) == ["done", "done-fork-1"]
    opened.close()


KILLED_FORK = """
import os, signal, sys
from igg.store import SessionStore
from igg.store.fork import fork

store, kill_at = SessionStore(sys.argv[1]), int(sys.argv[2])
writes = 0

def trace(statement):
    '''kill -9 this process at the kill_at-th INSERT of the fork (no cleanup, no rollback by Python)'''
    global writes
    if statement.lstrip().upper().startswith("INSERT"):
        writes += 1
        if writes == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)

store.db.connection().set_trace_callback(trace)
fork(store, "src", 3, "f")
print("forked without being killed")
"""


def test_a_fork_killed_at_any_write_leaves_no_fork_or_a_whole_one(tmp_path):
    """Deterministic kill points: the child SIGKILLs itself at its N-th INSERT while forking a 4-iteration
    session after iteration 3. Each time the fork is absent (and can be made again) or complete: never a
    session holding part of its steps (which ``igg resume`` would continue from the wrong graph)."""
    request = json.loads((FIXTURES / "seed_request.json").read_text())
    request["session_id"] = "src"
    (tmp_path / "request.json").write_text(json.dumps(request))
    turns = write_turns(
        tmp_path / "t.jsonl",
        [{"reasoning": "", "actions": [cls(f"C{i}")], "finished": i == 3} for i in range(4)],
    )
    original = tmp_path / "original.sqlite"
    assert (
        igg(
            "run", str(tmp_path / "request.json"), "--agent", turns, "--store", str(original), "--json"
        ).returncode
        == 0
    )
    outcomes = set()
    for kill_at in range(1, 12):
        store = tmp_path / f"s{kill_at}.sqlite"
        store.write_bytes(original.read_bytes())
        child = subprocess.run(
            [sys.executable, "-c", KILLED_FORK, str(store), str(kill_at)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        opened = SessionStore(store)
        ids = {i.session_id for i in opened.sessions()}
        if "f" in ids:
            assert child.returncode == 0, f"kill point {kill_at}: a fork exists although the process died"
            assert [s.iteration for s in opened.steps("f")] == [1, 2, 3]
            outcomes.add("whole")
        else:
            assert child.returncode == -9, child.stderr
            outcomes.add("none")
            again = igg("fork", "src", "--at", "3", "--as", "f", "--store", str(store))
            assert again.returncode == 0, again.stderr  # nothing half-made stands in the way
        opened.close()
    assert outcomes == {"none", "whole"}
