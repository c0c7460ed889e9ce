"""Writes ``tests/support/store-v1.sqlite``: a session store as IGG wrote it before the engine was unified
(commit 724ba19: ``SessionRecorder`` for runs, ``StoreSessions`` for workspace/tool sessions).

Kept so the fixture can be understood; it only runs against that old code (``git worktree add /tmp/old 724ba19
&& cd /tmp/old && python /path/to/make_store_v1.py OUT``). ``tests/unit/test_store_compat.py`` reads the file
with today's code.

Sessions in it:
  run-finished     a scripted run, 4 iterations, stop reason max_iterations
  run-interrupted  a scripted run that stopped after 3 of 6 iterations (its process is gone)
  tool-open        a workspace session with two applies (one rejected action), still open
  tool-finished    a workspace session with one apply, finished with pruning
"""

from __future__ import annotations

import sys
from pathlib import Path

from igg.workspace.store_repo import StoreSessions

from igg.engine.loop import run
from igg.request.load import load_request
from igg.store import SessionRecorder, SessionStore
from igg.workspace import Workspace
from igg.workspace.ops import ApplyInput, FinishInput


def payload(sid: str, max_iterations: int) -> dict:
    return {
        "session_id": sid,
        "goal_prompt": f"map {sid}",
        "context_data": "class A {}\n\nclass B {}",
        "config": {
            "max_iterations": max_iterations,
            "stuck_after": 10,
            "constraints": {"max_nodes": 50, "max_edges": 100},
            "schema": {
                "node_types": ["Class", "Method"],
                "edge_types": ["CALLS"],
                "required_attributes": {"Class": ["name", "package"]},
            },
        },
    }


def turn(i: int) -> dict:
    actions: list[dict] = [
        {"type": "ADD_NODE", "label": "Class", "properties": {"name": f"C{i}", "package": "p"}}
    ]
    if i > 1:
        actions.append(
            {"type": "ADD_EDGE", "label": "CALLS", "from": {"name": f"C{i}"}, "to": {"name": f"C{i - 1}"}}
        )
    if i % 2 == 0:
        actions.append({"type": "UPDATE_NODE", "node": {"name": f"C{i - 1}"}, "properties": {"doc": f"d{i}"}})
    if i == 3:
        actions.append({"type": "ADD_NODE", "label": "Nope", "properties": {"name": "x"}})
    return {"reasoning": f"turn {i}", "actions": actions}


class Script:
    def __init__(self, stop_after: int | None = None) -> None:
        self.i = 0
        self.stop_after = stop_after

    def __call__(self, obs: object) -> dict:
        self.i += 1
        if self.stop_after is not None and self.i > self.stop_after:
            raise KeyboardInterrupt
        return turn(self.i)


def main(out: Path) -> None:
    out.unlink(missing_ok=True)
    store = SessionStore(out)
    run(load_request(payload("run-finished", 4)), Script(), recorder=SessionRecorder(store, agent="python"))
    try:
        run(
            load_request(payload("run-interrupted", 6)),
            Script(stop_after=3),
            recorder=SessionRecorder(store, agent="python"),
        )
    except KeyboardInterrupt:
        pass
    ws = Workspace(StoreSessions(store))
    req = payload("tool-open", 10)
    ws.start(req)
    ws.apply(
        ApplyInput(
            session_id="tool-open", reasoning="two classes", actions=turn(1)["actions"] + turn(2)["actions"]
        )
    )
    ws.apply(ApplyInput(session_id="tool-open", reasoning="a bad one", actions=turn(3)["actions"]))
    ws.start(payload("tool-finished", 10))
    ws.apply(
        ApplyInput(
            session_id="tool-finished",
            reasoning="one",
            actions=[
                {"type": "ADD_NODE", "label": "Class", "properties": {"name": "Lonely", "package": "p"}},
                {"type": "ADD_NODE", "label": "Class", "properties": {"name": "A", "package": "p"}},
                {"type": "ADD_NODE", "label": "Class", "properties": {"name": "B", "package": "p"}},
                {"type": "ADD_EDGE", "label": "CALLS", "from": {"name": "A"}, "to": {"name": "B"}},
            ],
        )
    )
    ws.finish(FinishInput(session_id="tool-finished", prune_isolated=True))
    store.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
