"""A session store written by IGG before the engine was unified (tests/support/store-v1.sqlite, made by
tests/support/make_store_v1.py at commit 724ba19) is read, continued and exported by today's code."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from igg.export import ExportSpec
from igg.service import continue_session, export_session
from igg.store import SessionStore, StoreSessions, replay
from igg.workspace import Workspace
from igg.workspace.ops import ApplyInput, FinishInput, ListInput

FIXTURE = Path(__file__).parents[1] / "support" / "store-v1.sqlite"


@pytest.fixture
def store(tmp_path: Path) -> Any:
    path = tmp_path / "sessions.sqlite"
    shutil.copyfile(FIXTURE, path)
    # the writers' pids were real when the fixture was made; a live process may reuse one now (that would make
    # an interrupted session look running): point them at a pid above any kernel's pid_max (2**22)
    with sqlite3.connect(path) as conn:
        conn.execute(
            "UPDATE sessions SET owner = substr(owner, 1, instr(owner, ':')) || '4194305' || "
            "substr(owner, instr(substr(owner, instr(owner, ':') + 1), ':') + instr(owner, ':'))"
        )
    s = SessionStore(path)
    yield s
    s.close()


def test_old_sessions_are_listed_with_the_one_set_of_status_words(store: SessionStore):
    listed = {
        i.session_id: (i.status, i.last_iteration, i.nodes, i.edges, i.stop_reason) for i in store.sessions()
    }
    assert listed == {
        "run-finished": ("finished", 4, 4, 3, "max_iterations"),
        "run-interrupted": ("interrupted", 3, 3, 2, None),
        "tool-open": ("open", 2, 3, 2, None),
        "tool-finished": ("finished", 1, 2, 1, "finished"),
    }
    ws = Workspace(StoreSessions(store))
    statuses = {s["session_id"]: s["status"] for s in ws.list_sessions(ListInput())["sessions"]}
    assert statuses == {k: v[0] for k, v in listed.items()}


def test_an_old_tool_session_continues_through_the_workspace(store: SessionStore):
    ws = Workspace(StoreSessions(store))
    session = ws.get("tool-open")
    assert [v.to_dict().get("code") for v in session.last_verdicts] == [None, None, "UNKNOWN_NODE_TYPE"]
    result = ws.apply(
        ApplyInput(
            session_id="tool-open",
            reasoning="more",
            actions=[
                {"type": "ADD_NODE", "label": "Class", "properties": {"name": "C9", "package": "p"}},
                {"type": "ADD_EDGE", "label": "CALLS", "from": {"name": "C9"}, "to": {"name": "C1"}},
            ],
        )
    )
    assert (result["iteration"], result["accepted"], result["nodes"], result["edges"]) == (3, 2, 4, 3)
    ws.finish(FinishInput(session_id="tool-open"))
    info = store.session("tool-open")
    assert (info.status, info.last_iteration, info.nodes, info.stop_reason) == ("finished", 3, 4, "finished")
    assert not replay(store, "tool-open").problems


def test_an_old_interrupted_run_resumes_to_its_stop(store: SessionStore):
    def agent(obs: Any) -> dict[str, Any]:
        i = obs.iteration
        return {
            "reasoning": f"turn {i}",
            "actions": [
                {"type": "ADD_NODE", "label": "Class", "properties": {"name": f"C{i}", "package": "p"}},
                {
                    "type": "ADD_EDGE",
                    "label": "CALLS",
                    "from": {"name": f"C{i}"},
                    "to": {"name": f"C{i - 1}"},
                },
            ],
        }

    result = continue_session(store, "run-interrupted", agent=agent)
    assert (result.stop_reason, result.iterations, result.state.node_count) == ("max_iterations", 6, 6)
    assert [r.iteration for r in result.records] == [1, 2, 3, 4, 5, 6]
    assert store.session("run-interrupted").status == "finished"
    assert not replay(store, "run-interrupted").problems


def test_an_old_finished_session_exports(store: SessionStore, tmp_path: Path):
    out = tmp_path / "g.json"
    summaries = export_session(store, "tool-finished", [ExportSpec("json", str(out))])
    assert summaries[0]["ok"] is True
    names = sorted(n["properties"]["name"] for n in json.loads(out.read_text())["nodes"])
    assert names == ["A", "B"]  # Lonely was pruned when it finished


def test_old_dict_mutations_read_as_the_typed_journal_and_a_damaged_row_is_named(store: SessionStore):
    """Stores keep mutations as JSON dicts; they read back through the one TypeAdapter as typed objects, and a
    row that is none of the known kinds is a SessionError naming the session and step (no traceback)."""
    from igg.errors import SessionError
    from igg.graph.journal import EdgeAdded, NodeAdded

    kinds = {type(m) for _, m in store.mutations("run-finished")}
    assert {NodeAdded, EdgeAdded} <= kinds
    store.db.write(
        lambda c: c.execute(
            'UPDATE mutations SET data = \'{"op": "teleport_node", "id": "n1"}\' '
            "WHERE session_id = 'run-finished' AND step = 2 AND seq = 0"
        )
    )
    with pytest.raises(
        SessionError, match=r"a stored mutation of session 'run-finished' at step 2 cannot be read"
    ):
        replay(store, "run-finished")


def test_loading_a_session_validates_once_builds_once_and_reads_only_the_last_record(
    store: SessionStore, monkeypatch: Any
):
    """StoreSessions.load (what the workspace, HTTP and MCP do on first touching a stored session): the
    request is validated once, one graph is built (from the snapshot, or the seed when there is none), and the
    last verdicts come from one row; every record is read only when asked for."""
    import igg.store.store as store_module

    calls = {"load_request": 0, "build_state": 0, "steps": 0}

    def counted(name: str, real: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            calls[name] += 1
            return real(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(store_module, "load_request", counted("load_request", store_module.load_request))
    monkeypatch.setattr(store_module, "build_state", counted("build_state", store_module.build_state))
    monkeypatch.setattr(SessionStore, "steps", counted("steps", SessionStore.steps))
    for sid in ("tool-open", "run-finished"):
        calls.update(load_request=0, build_state=0, steps=0)
        loaded = StoreSessions(store).load(sid)
        assert calls == {"load_request": 1, "build_state": 1, "steps": 0}, sid
        assert (
            loaded.last_record is not None
            and loaded.last_record.iteration == store.session(sid).last_iteration
        )
        assert [r.iteration for r in loaded.records][-1] == loaded.last_record.iteration
        assert calls["steps"] == 1
    ws = Workspace(StoreSessions(store))
    assert [v.to_dict().get("code") for v in ws.get("tool-open").last_verdicts] == [
        None,
        None,
        "UNKNOWN_NODE_TYPE",
    ]
