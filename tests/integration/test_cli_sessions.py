"""The inspection commands as a person runs them: sessions, show, explain, diff, undo, replay."""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from igg.interfaces.cli import main
from igg.store import SessionRecorder, SessionStore
from tests.conftest import ROOT, make_request
from tests.store_driver import responses, run_iterations


def igg(*args: str) -> subprocess.CompletedProcess[str]:
    """The command line in this process (``main`` with stdout and stderr captured): fast, and what a person
    runs; ``igg_process`` runs it as a real child process where that matters."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return subprocess.CompletedProcess(list(args), code, out.getvalue(), err.getvalue())


def igg_process(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "igg", *args], capture_output=True, text=True, cwd=ROOT, timeout=60, env=env
    )


HALF = """
import sys
from igg.interfaces.cli import main
from igg.store import SessionRecorder, SessionStore
from tests.conftest import make_request
from tests.store_driver import responses, run_iterations
recorder = SessionRecorder(SessionStore(sys.argv[1]))
run_iterations(recorder, make_request(session_id="half"), responses(5), stop_before=3)
"""


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """A store with a finished session ``s1`` (8 iterations) and an interrupted one, ``half`` (2 of 5)."""
    path = tmp_path_factory.mktemp("template") / "sessions.sqlite"
    store = SessionStore(path)
    run_iterations(
        SessionRecorder(store, agent="script:t.jsonl"), make_request(session_id="s1"), responses(8)
    )
    store.close()
    # a run whose process ended after two iterations
    subprocess.run([sys.executable, "-c", HALF, str(path)], cwd=ROOT, check=True, timeout=60)
    assert not Path(f"{path}-wal").exists()  # every connection closed: the file is the whole store
    return path


@pytest.fixture
def store_path(template, tmp_path):
    """A private copy of the template store (tests change it)."""
    path = tmp_path / "sessions.sqlite"
    shutil.copy(template, path)
    return str(path)


def test_sessions_lists_status_and_stop_reason(store_path):
    result = igg_process("sessions", "--store", store_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split()[:6] == ["SESSION", "STATUS", "STOP", "ITER", "NODES", "EDGES"]
    rows = {line.split()[0]: line.split()[1:6] for line in lines[1:]}
    assert rows == {
        "s1": ["finished", "max_iterations", "8", "6", "3"],
        "half": ["interrupted", "-", "2", "2", "1"],
    }
    listed = json.loads(igg("sessions", "--store", store_path, "--json").stdout)
    assert {s["session_id"]: s["status"] for s in listed} == {"s1": "finished", "half": "interrupted"}


def test_the_store_comes_from_the_environment_when_not_given(store_path):
    import os

    result = igg_process("sessions", env={**os.environ, "IGG_STORE": store_path})
    assert result.returncode == 0 and "s1" in result.stdout


def test_show_prints_the_iteration_table(store_path):
    result = igg("show", "s1", "--store", store_path)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.startswith("session s1: finished (max_iterations), 8 iterations, 6 nodes, 3 edges\n")
    row5 = next(line for line in out.splitlines() if line.split()[:2] == ["5", "iteration"])
    assert row5.split() == [
        "5",
        "iteration",
        "5",
        "3",
        "2",
        "1",
        "25",
        "1.5",
        "2",
        "4",
        "2",
        "file1.java",
        "UNKNOWN_NODE_TYPE",
        "1",
    ]
    assert "total: 21 proposed, 19 accepted, 2 rejected, 200 tokens" in out
    data = json.loads(igg("show", "s1", "--store", store_path, "--json").stdout)
    assert data["steps"][6]["rejected_by_code"] == {"NODE_NOT_FOUND": 1}


def test_explain_shows_the_reasoning_chunk_and_verdict(store_path):
    result = igg("explain", "s1", "C5", "--store", store_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("C5 in session s1: 5 changes\n")
    told = re.findall(
        r"^  told: (\S+)$", result.stdout, re.MULTILINE
    )  # when IGG was told: each step's commit
    assert len(told) == 5 and told == sorted(told)
    shown = re.sub(r"^  told: \S+\n", "", result.stdout, flags=re.MULTILINE)
    assert (
        "iteration 5: add_node n5: Class {name='C5', package='p'}\n  chunk: file1.java\n"
        '  verdict: added Class "C5" as n5\n  reasoning: turn 5: add C5\n' in shown
    )
    assert "iteration 6: update_node n5: doc='d6'" in result.stdout
    only = igg("explain", "s1", "n5", "--no-edges", "--json", "--store", store_path)
    assert [e["op"] for e in json.loads(only.stdout)] == ["add_node", "update_node"]


def test_diff_prints_added_deleted_and_changed(store_path):
    result = igg("diff", "s1", "5", "6", "--store", store_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "session s1, iteration 5 -> 6: 2 added, 0 deleted, 1 changed",
        "+ node n6 Class {name='C6', package='p'}",
        "~ node n5 Class: doc: (absent) -> 'd6'",
        '+ edge e5 CALLS n6 "C6" -> n5 "C5"',
    ]


def test_undo_then_replay_equals_the_stored_graph(store_path):
    result = igg("undo", "s1", "--to", "4", "--store", store_path)
    assert result.returncode == 0, result.stderr
    assert (
        result.stdout.strip() == "session s1: rolled back to after iteration 4 as step 10 (12 mutations); "
        "the graph has 3 nodes and 1 edges"
    )
    assert "10  undo       to 4" in igg("show", "s1", "--store", store_path).stdout
    replayed = igg("replay", "s1", "--store", store_path)
    assert replayed.returncode == 0, replayed.stderr
    assert replayed.stdout.splitlines() == [
        "session s1: replayed 10 steps, 35 mutations -> 3 nodes, 1 edges",
        (
            "equal to the stored graph (checked: snapshot at step 9; snapshot at step 10; node/edge counts of"
            " 10 steps)"
        ),
    ]
    assert json.loads(igg("diff", "s1", "4", "8", "--json", "--store", store_path).stdout)


def test_replay_exits_1_and_names_the_difference_when_the_store_was_tampered_with(store_path):
    store = SessionStore(store_path)
    store.db.write(
        lambda c: c.execute("DELETE FROM mutations WHERE session_id = 's1' AND step = 6 AND seq = 0")
    )
    store.close()
    result = igg("replay", "s1", "--store", store_path)
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        "DIFFERENT from the stored graph:",
        "  step 6: stored mutation add_edge e5 does not apply: its end n6 does not exist",
    ]


@pytest.mark.parametrize(
    "args, message",
    [
        (["show", "nope"], "no session 'nope' in {store}; sessions there: "),
        (
            ["undo", "s1", "--to", "44"],
            "session 's1' has no iteration 44; its iterations are 1..8 (0 is the start)",
        ),
        (["explain", "s1", "Nobody"], "nothing in session 's1' matches 'Nobody'"),
        (["diff", "half", "1", "9"], "session 'half' has no iteration 9; its iterations are 1..2"),
    ],
)
def test_mistakes_exit_2_with_a_clear_message(store_path, args, message):
    result = igg(*args, "--store", store_path)
    assert result.returncode == 2
    assert message.format(store=store_path) in result.stderr and "Traceback" not in result.stderr


def test_a_missing_store_is_a_clear_error(tmp_path):
    result = igg("sessions", "--store", str(tmp_path / "none.sqlite"))
    assert result.returncode == 2 and f"no session store at {tmp_path / 'none.sqlite'}" in result.stderr


def test_a_file_that_is_not_a_store_is_a_clear_error(tmp_path):
    other = tmp_path / "graph.json"
    other.write_text('{"nodes": []}')
    result = igg("sessions", "--store", str(other))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"{other} is not an IGG session store (not an SQLite database)" in result.stderr


def test_export_a_stored_session_with_provenance(store_path, tmp_path):
    out = tmp_path / "s1.json"
    result = igg_process(
        "export", "s1", "--store", store_path, "--format", "json", "--provenance", "--output", str(out)
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"json: {out} (6 nodes, 3 edges")
    doc = json.loads(out.read_text())
    assert doc["metadata"]["session_id"] == "s1" and doc["metadata"]["stop_reason"] == "max_iterations"
    nodes = {n["properties"]["name"]: n for n in doc["nodes"]}
    assert nodes["C5"]["provenance"] == {"created": 5, "chunk": "file1.java", "updated": 6}
    assert nodes["C1"]["provenance"] == {"created": 1, "chunk": "file1.java"}
    plain = json.loads(igg_process("export", "s1", "--store", store_path, "-f", "json", "-o", "-").stdout)
    assert all("provenance" not in n for n in plain["nodes"])


def test_export_a_session_as_it_was_after_an_iteration(store_path, tmp_path):
    import networkx as nx

    out = tmp_path / "at3.graphml"
    result = igg_process(
        "export",
        "s1",
        "--store",
        store_path,
        "-f",
        "graphml",
        "--iteration",
        "3",
        "--provenance",
        "-o",
        str(out),
    )
    assert result.returncode == 0, result.stderr
    graph = nx.read_graphml(out)
    assert sorted(graph.nodes) == ["n1", "n2", "n3"] and graph.number_of_edges() == 2
    assert json.loads(graph.nodes["n2"]["igg_provenance"]) == {
        "created": 2,
        "chunk": "file0.java",
        "updated": 3,
    }


def test_export_finds_a_session_in_the_store_from_the_environment(store_path, tmp_path):
    import os

    result = subprocess.run(
        [sys.executable, "-m", "igg", "export", "s1", "-f", "mermaid", "-o", "-"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
        env={**os.environ, "IGG_STORE": store_path},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("flowchart LR") and '"Class: C8"' in result.stdout
    wrong = igg_process("export", "nope", "--store", store_path, "-f", "json")
    assert wrong.returncode == 2 and "no session 'nope' in" in wrong.stderr
