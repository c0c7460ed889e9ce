"""Resume after a real ``kill -9``: the final graph equals an uninterrupted run's; no iteration twice or lost.

The runs are real ``igg run ... --store`` child processes. One is killed in the middle of an iteration (its
LLM agent is waiting on a loopback OpenAI-compatible server that holds the 7th answer back); another is
killed again and again at random moments (during observe, apply or the commit itself) and resumed each time.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from support.fake_openai import FakeOpenAI, Reply

from igg.store import SessionStore, replay
from igg.store.codec import differences
from tests.conftest import FIXTURES, ROOT
from tests.store_driver import responses


def write_request(path: Path, session_id: str, iterations: int, **llm: Any) -> Path:
    payload = json.loads((FIXTURES / "seed_request.json").read_text())
    payload["session_id"] = session_id
    payload["config"]["max_iterations"] = iterations
    payload["config"]["constraints"] = {"max_nodes": 1000, "max_edges": 4000}
    payload["config"]["stuck_after"] = iterations
    if llm:
        payload["config"]["llm"] = llm
    path.write_text(json.dumps(payload))
    return path


def write_transcript(path: Path, turns: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(t) + "\n" for t in turns))
    return path


def igg_process(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "igg", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )


def finish(proc: subprocess.Popen[str]) -> dict[str, Any]:
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    return json.loads(out)


def graph_of(store_path: Path, session_id: str) -> Any:
    store = SessionStore(store_path)
    try:
        return store.load_state(session_id)[1]
    finally:
        store.close()


def iterations_stored(store_path: Path, session_id: str) -> list[int]:
    store = SessionStore(store_path)
    try:
        return [s.iteration for s in store.steps(session_id, with_records=False) if s.kind == "iteration"]
    finally:
        store.close()


def wait_for(condition: Any, timeout: float = 60.0, poll: float = 0.02) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(poll)


def test_kill_9_in_the_middle_of_an_iteration_then_resume_equals_an_uninterrupted_run(tmp_path):
    turns = responses(12)
    answers = [json.dumps(t) for t in turns]
    store = tmp_path / "sessions.sqlite"
    llm = {"timeout_seconds": 60, "max_retries": 0, "model": "test-model"}
    with FakeOpenAI(answers) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test"}
        whole = finish(
            igg_process(
                "run",
                str(write_request(tmp_path / "a.json", "whole", 12, **llm)),
                "--agent",
                "llm",
                "--store",
                str(store),
                "--json",
                env=env,
            )
        )
    assert whole["iterations"] == 12
    # the 7th answer is held back: the child sits in iteration 7, waiting on its agent, when it is killed
    with FakeOpenAI(answers[:6] + [Reply(content=answers[6], hang=60)]) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test"}
        child = igg_process(
            "run",
            str(write_request(tmp_path / "b.json", "killed", 12, **llm)),
            "--agent",
            "llm",
            "--store",
            str(store),
            "--json",
            env=env,
        )
        wait_for(lambda: len(server.requests) == 7)
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
        assert child.returncode == -signal.SIGKILL
        assert iterations_stored(store, "killed") == [1, 2, 3, 4, 5, 6]
        sessions = {
            s["session_id"]: s
            for s in json.loads(
                subprocess.run(
                    [sys.executable, "-m", "igg", "sessions", "--store", str(store), "--json"],
                    cwd=ROOT,
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout
            )
        }
        assert sessions["killed"]["status"] == "interrupted" and sessions["whole"]["status"] == "finished"
        server.add(*answers[6:])
        resumed = finish(igg_process("resume", "killed", "--store", str(store), "--json", env=env))
        assert len(server.requests) == 7 + 6  # iterations 7..12 asked again, nothing more
    assert resumed["iterations"] == 12 and resumed["stop_reason"] == whole["stop_reason"]
    assert resumed["actions"] == whole["actions"]
    assert iterations_stored(store, "killed") == list(range(1, 13))
    assert differences(graph_of(store, "killed"), graph_of(store, "whole")) == []
    assert replay(SessionStore(store), "killed").ok


def test_kill_9_at_random_moments_and_resume_until_done(tmp_path):
    """Killed four times at random moments of a run (observe, apply, or the commit itself), resumed each time:
    the same final graph as an uninterrupted run, every iteration stored once."""
    count = 200
    transcript = write_transcript(tmp_path / "t.jsonl", responses(count))
    store = tmp_path / "sessions.sqlite"
    request = write_request(tmp_path / "r.json", "target", count)
    whole = finish(
        igg_process(
            "run",
            str(write_request(tmp_path / "w.json", "whole", count)),
            "--agent",
            f"script:{transcript}",
            "--store",
            str(store),
            "--json",
        )
    )
    rng = random.Random(6)
    args = ["run", str(request), "--agent", f"script:{transcript}", "--store", str(store), "--json"]
    done: list[int] = []
    for _ in range(4):
        child = igg_process(*args)
        goal = len(done) + rng.randint(3, 25)
        wait_for(lambda goal=goal: stored_count(store, "target") >= goal, poll=0.005)
        time.sleep(rng.uniform(0, 0.01))
        assert child.poll() is None, "the run ended before it could be killed"
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=30)
        done = iterations_stored(store, "target")
        assert done == list(range(1, len(done) + 1)) and len(done) >= goal  # whole iterations, none twice
        args = ["resume", "target", "--store", str(store), "--json"]
    result = finish(igg_process(*args))
    assert result["iterations"] == count and result["stop_reason"] == whole["stop_reason"]
    assert result["actions"] == whole["actions"]
    assert iterations_stored(store, "target") == list(range(1, count + 1))
    assert differences(graph_of(store, "target"), graph_of(store, "whole")) == []
    assert replay(SessionStore(store), "target").ok


def stored_count(store_path: Path, session_id: str) -> int:
    """Committed iterations of a session, read with a bare connection (0 before the store or session
    exists)."""
    if not store_path.exists():
        return 0
    conn = sqlite3.connect(store_path, timeout=10)
    try:
        return conn.execute(
            "SELECT count(*) FROM steps WHERE session_id = ? AND kind = 'iteration'", (session_id,)
        ).fetchone()[0]
    except sqlite3.OperationalError:  # the tables are not created yet
        return 0
    finally:
        conn.close()


def test_resume_refuses_a_finished_or_unknown_session(tmp_path):
    transcript = write_transcript(tmp_path / "t.jsonl", responses(3))
    store = tmp_path / "sessions.sqlite"
    request = write_request(tmp_path / "r.json", "done", 3)
    finish(
        igg_process("run", str(request), "--agent", f"script:{transcript}", "--store", str(store), "--json")
    )
    again = subprocess.run(
        [
            sys.executable,
            "-m",
            "igg",
            "run",
            str(request),
            "--agent",
            f"script:{transcript}",
            "--store",
            str(store),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (
        again.returncode == 2
        and "session 'done' already exists" in again.stderr
        and "--force" in again.stderr
    )
    forced = finish(
        igg_process(
            "run", str(request), "--agent", f"script:{transcript}", "--store", str(store), "--force", "--json"
        )
    )
    assert forced["iterations"] == 3
    for session, message in (
        ("done", "session 'done' already finished (max_iterations); nothing to resume"),
        ("nope", "no session 'nope' in"),
    ):
        result = subprocess.run(
            [sys.executable, "-m", "igg", "resume", session, "--store", str(store)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr


def test_run_exports_carry_provenance_when_asked(tmp_path, capsys):
    from igg.interfaces.cli import main

    transcript = write_transcript(tmp_path / "t.jsonl", responses(4))
    request = write_request(tmp_path / "r.json", "prov", 4)
    out = tmp_path / "graph.json"
    code = main(
        [
            "run",
            str(request),
            "--agent",
            f"script:{transcript}",
            "--store",
            str(tmp_path / "s.sqlite"),
            "--export",
            f"json:{out}",
            "--provenance",
            "--json",
        ]
    )
    assert code == 0, capsys.readouterr().err
    nodes = {n["properties"]["name"]: n["provenance"] for n in json.loads(out.read_text())["nodes"]}
    assert nodes == {f"C{i}": {"created": i, "chunk": "chunk 1/1"} for i in (1, 3, 4)}
