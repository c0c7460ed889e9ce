"""Resume is exact at every kill point, including the window between the last committed iteration and the end
of the run: a committed turn that already ended the run (finished, stuck, limits_reached) is recognised on
resume, the agent is not asked again, and the graph equals an uninterrupted run's.

Each kill is deterministic: the child process runs the run through the Python API with one more recorder
after the store's, which ``SIGKILL``s its own process once iteration N is committed. The scripted agent has
exactly the turns of the run: a resume that asked it again would stop with ``agent_error``.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from igg.store import SessionStore
from igg.store.codec import differences
from tests.conftest import FIXTURES, ROOT

CHILD = """
import json, os, signal, sys
from igg.agents.registry import make_agent
from igg.request.load import load_request
from igg.service import run_request

request_path, transcript, store, kill_after = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])

class KillAfter:
    '''After the store has committed iteration N: kill -9 this process (no cleanup, no finalisation).'''
    def begin(self, request, state, records): pass
    def record(self, record):
        if record.iteration == kill_after:
            os.kill(os.getpid(), signal.SIGKILL)
    def finish(self, result): pass

request = load_request(json.loads(open(request_path).read()))
spec = f"script:{transcript}"
run_request(request, make_agent(spec, request), store=store, agent_name=spec, recorders=[KillAfter()])
print("the run ended without being killed")
"""


def cls(name: str) -> dict[str, Any]:
    return {"type": "ADD_NODE", "label": "Class", "properties": {"name": name, "package": "p"}}


def calls(a: str, b: str) -> dict[str, Any]:
    return {"type": "ADD_EDGE", "label": "CALLS", "from": {"name": a}, "to": {"name": b}}


NOPE = {"type": "ADD_NODE", "label": "Nope", "properties": {"name": "x"}}

SCENARIOS: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = {
    # stop reason: (config changes, the turns of the whole run)
    "finished": (
        {},
        [
            {"reasoning": "1", "actions": [cls("A")]},
            {"reasoning": "2", "actions": [cls("B"), calls("A", "B")]},
            {"reasoning": "3", "actions": [cls("C"), calls("B", "C")], "finished": True},
        ],
    ),
    "stuck": (
        {"stuck_after": 2},
        [
            {"reasoning": "1", "actions": [cls("A")]},
            {"reasoning": "2", "actions": [NOPE]},
            {"reasoning": "3", "actions": [NOPE]},
        ],
    ),
    "limits_reached": (
        {"constraints": {"max_nodes": 2, "max_edges": 1}},
        [
            {"reasoning": "1", "actions": [cls("A")]},
            {"reasoning": "2", "actions": [cls("B"), calls("A", "B")]},
        ],
    ),
}


def prepare(tmp_path: Path, stop: str, session_id: str) -> tuple[Path, Path]:
    config, turns = SCENARIOS[stop]
    payload = json.loads((FIXTURES / "seed_request.json").read_text())
    payload["session_id"] = session_id
    payload["config"].update({"max_iterations": 10, **config})
    request = tmp_path / f"{session_id}.json"
    request.write_text(json.dumps(payload))
    transcript = tmp_path / f"{stop}.jsonl"
    transcript.write_text("".join(json.dumps(t) + "\n" for t in turns))
    return request, transcript


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "igg", *args], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


def killed_run(tmp_path: Path, stop: str, session_id: str, store: Path, kill_after: int) -> None:
    request, transcript = prepare(tmp_path, stop, session_id)
    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(request), str(transcript), str(store), str(kill_after)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert child.returncode == -signal.SIGKILL, (child.stdout, child.stderr)


def graph(store: Path, session_id: str) -> Any:
    opened = SessionStore(store)
    try:
        return opened.load_state(session_id)[1]
    finally:
        opened.close()


@pytest.mark.parametrize(
    ("stop", "kill_after"),
    [
        ("finished", 1),
        ("finished", 2),
        ("finished", 3),  # every kill point of a run; 3: the window
        ("stuck", 3),
        ("limits_reached", 2),  # the window for the other stops a turn can cause
    ],
)
def test_a_run_killed_after_a_committed_iteration_resumes_to_the_uninterrupted_result(
    tmp_path, stop, kill_after
):
    store = tmp_path / "sessions.sqlite"
    request, transcript = prepare(tmp_path, stop, "whole")
    whole = cli("run", str(request), "--agent", f"script:{transcript}", "--store", str(store), "--json")
    assert whole.returncode == 0, whole.stderr
    expected = json.loads(whole.stdout)
    assert expected["stop_reason"] == stop

    killed_run(tmp_path, stop, "killed", store, kill_after)
    listed = {s["session_id"]: s for s in json.loads(cli("sessions", "--store", str(store), "--json").stdout)}
    assert listed["killed"]["status"] == "interrupted" and listed["killed"]["iterations"] == kill_after

    resumed = cli("resume", "killed", "--store", str(store), "--json")
    assert resumed.returncode == 0, resumed.stderr
    result = json.loads(resumed.stdout)
    assert (result["stop_reason"], result["iterations"]) == (stop, expected["iterations"])
    assert result["actions"] == expected["actions"]
    assert differences(graph(store, "killed"), graph(store, "whole")) == []
    again = cli("resume", "killed", "--store", str(store))
    assert again.returncode == 2 and "already finished" in again.stderr
