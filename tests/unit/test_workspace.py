"""The workspace service: sessions an outside agent opens, changes (with verdicts), finishes and exports."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from igg.errors import SessionError, WorkspaceError
from igg.interfaces.codes import http_status
from igg.store import SessionStore, StoreSessions
from igg.workspace import MemorySessions, Workspace
from igg.workspace.ops import ApplyInput, ExportInput, FinishInput, ListInput
from igg.workspace.paths import check_output
from igg.workspace.toolschema import openai_tools
from tests.conftest import FIXTURES, edge, node


def request_dict(**changes: Any) -> dict[str, Any]:
    payload = json.loads((FIXTURES / "seed_request.json").read_text())
    payload.pop("session_id")
    payload.update(changes)
    return payload


AUTH = {"name": "AuthService"}
CTRL = {"name": "AuthController"}


def apply(ws: Workspace, sid: str, *actions: dict[str, Any], dry_run: bool = False) -> dict[str, Any]:
    return ws.apply(ApplyInput(session_id=sid, actions=list(actions), dry_run=dry_run))


def test_apply_gives_every_action_a_verdict_and_malformed_ones_do_not_sink_their_neighbours():
    ws = Workspace()
    sid = ws.start(request_dict())["session_id"]
    result = apply(
        ws,
        sid,
        node("Class", name="AuthService", package="com.app.auth"),
        {"type": "ADD_NODE", "label": "Class"},  # no properties: missing identity
        "not an action",
        node("Gadget", name="X"),
        node("Class", name="AuthController", package="com.app.web"),
        edge("CALLS", CTRL, AUTH),
    )
    codes = [(v["accepted"], v.get("code")) for v in result["verdicts"]]
    assert codes == [
        (True, None),
        (False, "MISSING_REQUIRED_ATTRIBUTE"),
        (False, "INVALID_ACTION"),
        (False, "UNKNOWN_NODE_TYPE"),
        (True, None),
        (True, None),
    ]
    assert "Gadget" in result["verdicts"][3]["message"]
    assert result["accepted"] == 3 and result["rejected"] == 3 and result["iteration"] == 1
    assert result["rejected_by_code"] == {
        "INVALID_ACTION": 1,
        "MISSING_REQUIRED_ATTRIBUTE": 1,
        "UNKNOWN_NODE_TYPE": 1,
    }
    assert (result["nodes"], result["edges"]) == (2, 1)


def test_dry_run_validates_in_order_but_leaves_the_graph_and_iteration_untouched():
    ws = Workspace()
    sid = ws.start(request_dict())["session_id"]
    apply(ws, sid, node("Class", name="AuthService", package="p"))
    before = ws.export(ExportInput(session_id=sid))["content"]
    result = apply(
        ws,
        sid,
        node("Class", name="AuthController", package="p"),
        edge("CALLS", CTRL, AUTH),
        {"type": "DELETE_NODE", "node": AUTH},
        node("Class", name="AuthService", package="p"),
        dry_run=True,
    )
    assert [v["accepted"] for v in result["verdicts"]] == [True, True, True, True]
    assert result["dry_run"] is True and result["iteration"] == 1 and result["nodes"] == 1
    assert ws.export(ExportInput(session_id=sid))["content"] == before
    again = apply(ws, sid, node("Class", name="AuthService", package="p"), dry_run=True)
    assert again["verdicts"][0]["code"] == "DUPLICATE_NODE"


def test_finish_prunes_isolated_nodes_when_asked_and_then_refuses_changes():
    ws = Workspace()
    sid = ws.start(request_dict())["session_id"]
    apply(
        ws,
        sid,
        node("Class", name="AuthService", package="p"),
        node("Class", name="AuthController", package="p"),
        node("Class", name="Lonely", package="p"),
        edge("CALLS", CTRL, AUTH),
    )
    done = ws.finish(FinishInput(session_id=sid, prune_isolated=True))
    assert done["status"] == "finished" and done["stop_reason"] == "finished"
    assert done["pruned"] == [{"id": "n3", "type": "Class", "properties": {"name": "Lonely", "package": "p"}}]
    assert done["nodes"] == 2
    with pytest.raises(WorkspaceError) as refused:
        apply(ws, sid, node("Class", name="More", package="p"))
    assert refused.value.code == "SESSION_FINISHED" and http_status(refused.value) == 409
    doc = json.loads(ws.export(ExportInput(session_id=sid))["content"])
    assert sorted(n["properties"]["name"] for n in doc["nodes"]) == ["AuthController", "AuthService"]
    assert doc["metadata"]["stop_reason"] == "finished"


def test_start_rejects_an_invalid_request_with_every_problem():
    ws = Workspace()
    with pytest.raises(WorkspaceError) as refused:
        ws.start(request_dict(config={"schema": {"node_types": ["Class", "bad type"]}, "max_nodez": 3}))
    assert refused.value.code == "INVALID_REQUEST" and http_status(refused.value) == 422
    assert "max_nodez" in refused.value.message


def test_unknown_sessions_and_taken_ids_are_clear_errors():
    ws = Workspace()
    with pytest.raises(WorkspaceError) as missing:
        apply(ws, "nope", node("Class", name="A", package="p"))
    assert missing.value.code == "SESSION_NOT_FOUND" and http_status(missing.value) == 404
    ws.start(request_dict(session_id="s1"))
    with pytest.raises(WorkspaceError) as taken:
        ws.start(request_dict(session_id="s1"))
    assert taken.value.code == "SESSION_EXISTS"


def test_max_iterations_bounds_the_applies_of_a_session():
    ws = Workspace()
    payload = request_dict()
    payload["config"]["max_iterations"] = 1
    sid = ws.start(payload)["session_id"]
    apply(ws, sid, node("Class", name="A", package="p"))
    with pytest.raises(WorkspaceError) as refused:
        apply(ws, sid, node("Class", name="B", package="p"))
    assert refused.value.code == "MAX_ITERATIONS_REACHED"
    assert apply(ws, sid, node("Class", name="B", package="p"), dry_run=True)["verdicts"][0]["accepted"]


@pytest.mark.parametrize(
    "path",
    [
        "/etc/passwd",
        "../escape.json",
        "a/../../b.json",
        "C:\\x.json",
        "~/x.json",
        "sub/",
        "",
        " a.json",
        "a\x00b",
    ],
)
def test_export_paths_outside_the_output_directory_are_refused(tmp_path, path):
    with pytest.raises(WorkspaceError) as refused:
        check_output(tmp_path, path)
    assert refused.value.code == "PATH_FORBIDDEN" and http_status(refused.value) == 403


def test_export_through_a_symlink_out_of_the_directory_is_refused(tmp_path):
    out, outside = tmp_path / "out", tmp_path / "outside"
    out.mkdir()
    outside.mkdir()
    os.symlink(outside, out / "link")
    ws = Workspace(output_dir=out)
    sid = ws.start(request_dict())["session_id"]
    with pytest.raises(WorkspaceError) as refused:
        ws.export(ExportInput(session_id=sid, path="link/graph.json"))
    assert refused.value.code == "PATH_FORBIDDEN"
    assert list(outside.iterdir()) == []
    written = ws.export(ExportInput(session_id=sid, path="graphs/g.json"))
    assert (
        written["path"] == "graphs/g.json"
        and json.loads((out / "graphs" / "g.json").read_text())["nodes"] == []
    )


def test_a_server_without_an_output_directory_exports_inline_only():
    ws = Workspace()
    sid = ws.start(request_dict())["session_id"]
    with pytest.raises(WorkspaceError) as refused:
        ws.export(ExportInput(session_id=sid, path="g.json"))
    assert refused.value.code == "PATH_FORBIDDEN" and "output directory" in refused.value.message


def _graph(ws: Workspace, sid: str) -> tuple[list[Any], list[Any]]:
    doc = json.loads(ws.export(ExportInput(session_id=sid))["content"])
    return (
        sorted((n["id"], n["type"], n["properties"]["name"]) for n in doc["nodes"]),
        sorted((e["type"], e["from"], e["to"]) for e in doc["edges"]),
    )


@pytest.mark.parametrize("durable", [False, True], ids=["memory", "store"])
def test_a_session_is_rebuilt_from_its_repository(tmp_path: Path, durable: bool):
    """A fresh workspace over the same repository (a restarted server) continues the session exactly."""
    repo_path = tmp_path / "sessions.sqlite"
    memory = MemorySessions()
    owner = "test-host:1:restarts"  # one process plays each server: the same writer identity throughout

    def repo() -> Any:
        return StoreSessions(SessionStore(repo_path), owner=owner) if durable else memory

    first = Workspace(repo())
    sid = first.start(request_dict())["session_id"]
    apply(
        first,
        sid,
        node("Class", name="AuthService", package="p"),
        node("Class", name="AuthController", package="p"),
        edge("CALLS", CTRL, AUTH),
        node("Nope", name="x"),
    )
    apply(first, sid, {"type": "UPDATE_NODE", "node": AUTH, "properties": {"doc": "d"}})
    expected = _graph(first, sid)

    second = Workspace(repo())
    assert _graph(second, sid) == expected
    listed = second.list_sessions(ListInput())["sessions"]
    assert [(s["session_id"], s["status"], s["iteration"]) for s in listed] == [(sid, "open", 2)]
    result = apply(
        second, sid, node("Class", name="AuthService", package="p"), node("Class", name="Next", package="p")
    )
    assert [v.get("code") for v in result["verdicts"]] == ["DUPLICATE_NODE", None] and result[
        "iteration"
    ] == 3
    second.finish(FinishInput(session_id=sid))

    third = Workspace(repo())
    assert third.get(sid).info.status == "finished"
    assert len(_graph(third, sid)[0]) == 3


def test_openai_tool_definitions_come_from_the_operation_models():
    tools = {t["function"]["name"]: t["function"] for t in openai_tools()}
    assert set(tools) == {
        "start_session",
        "observe",
        "apply_actions",
        "finish_session",
        "export_graph",
        "list_sessions",
        "run_session",
        "query_graph",
        "explain",
        "diff",
        "undo",
        "review",
        "check",
        "add_documents",
        "retract_document",
    }
    query = tools["query_graph"]["parameters"]["properties"]["query"]
    assert {q["properties"]["query"]["const"] for q in query["oneOf"]} == {"neighbours", "path", "find"}
    start = tools["start_session"]["parameters"]
    assert start["required"] == ["goal_prompt", "config"]
    assert "node_types" in start["properties"]["config"]["properties"]["schema"]["properties"]
    action = tools["apply_actions"]["parameters"]["properties"]["actions"]["items"]
    kinds = {a["properties"]["type"]["const"] for a in action["oneOf"]}
    assert kinds == {
        "ADD_NODE",
        "ADD_EDGE",
        "UPDATE_NODE",
        "DELETE_NODE",
        "DELETE_EDGE",
        "UPDATE_EDGE",
        "MERGE_NODES",
        "QUERY",
    }
    for name, tool in tools.items():  # shared definitions: in the tool's own $defs, every $ref resolvable
        refs = set(re.findall(r'"\$ref": "#/\$defs/(\w+)"', json.dumps(tool["parameters"])))
        assert refs <= set(tool["parameters"].get("$defs", {})), name


class FailingRepo(MemorySessions):
    """A repository whose writes fail after the first ``ok`` ones (a full disk, a lost store)."""

    def __init__(self, ok: int) -> None:
        super().__init__()
        self.ok = ok

    def recorder(self, **options: Any) -> Any:
        inner = super().recorder(**options)
        repo = self

        class Failing:
            def begin(self, *args: Any) -> None:
                inner.begin(*args)

            def _spend(self) -> None:
                if repo.ok <= 0:
                    raise SessionError("disk full")
                repo.ok -= 1

            def record(self, record: Any) -> None:
                self._spend()
                inner.record(record)

            def finish(self, result: Any) -> None:
                self._spend()
                inner.finish(result)

        return Failing()


def test_a_step_the_repository_cannot_keep_is_undone_in_memory_too():
    ws = Workspace(FailingRepo(ok=1))
    sid = ws.start(request_dict())["session_id"]
    apply(ws, sid, node("Class", name="A", package="p"), node("Class", name="B", package="p"))
    before = _graph(ws, sid)
    with pytest.raises(WorkspaceError):
        apply(ws, sid, node("Class", name="C", package="p"), edge("CALLS", {"name": "A"}, {"name": "B"}))
    assert _graph(ws, sid) == before and ws.get(sid).info.iteration == 1
    with pytest.raises(WorkspaceError):
        ws.finish(FinishInput(session_id=sid, prune_isolated=True))
    assert _graph(ws, sid) == before and ws.get(sid).info.status == "open"


def test_igg_tools_prints_the_openai_definitions():
    import subprocess
    import sys

    from tests.conftest import ROOT

    result = subprocess.run(
        [sys.executable, "-m", "igg", "tools", "--format", "openai"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == openai_tools()
    mcp = subprocess.run(
        [sys.executable, "-m", "igg", "tools", "--format", "mcp"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    listed = {t["name"]: t["annotations"] for t in json.loads(mcp.stdout)}
    # hints equal to the MCP specification's defaults (destructive: true) are left out
    assert listed["observe"]["readOnlyHint"] and listed["apply_actions"].get("destructiveHint", True)
    assert listed["start_session"]["destructiveHint"] is False
