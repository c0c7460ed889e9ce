"""The service layer (``igg.service``): one function per job, the same for the CLI and the servers; and the
one act step and record that tool calls and runs share."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from igg.engine.loop import run
from igg.errors import WorkspaceError
from igg.interfaces.cli import main
from igg.persistence.memory import MemorySessions
from igg.record.records import Event
from igg.request.load import load_request
from igg.service import run_request
from igg.store import SessionStore, StoreSessions
from igg.workspace import Workspace
from igg.workspace.ops import ApplyInput, RunInput
from tests.conftest import edge, node
from tests.integration.test_http import run_script
from tests.unit.test_workspace import request_dict


def _graph(path: Path) -> tuple[list[Any], list[Any]]:
    doc = json.loads(path.read_text())
    names = {n["id"]: n["properties"]["name"] for n in doc["nodes"]}
    return (
        sorted((n["type"], n["properties"]["name"]) for n in doc["nodes"]),
        sorted((e["type"], names[e["from"]], names[e["to"]]) for e in doc["edges"]),
    )


def test_a_run_started_over_the_workspace_exports_like_igg_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from tests.support.fake_openai import FakeOpenAI

    out = tmp_path / "out"
    with FakeOpenAI(run_script()) as llm:
        monkeypatch.setenv("OPENAI_BASE_URL", llm.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        ws = Workspace(StoreSessions(SessionStore(tmp_path / "s.sqlite")), output_dir=out)
        summary = asyncio.run(
            ws.run(
                RunInput.model_validate(
                    {
                        **request_dict(session_id="web-run"),
                        "agent": "llm",
                        "exports": ["graphml", "json:docs/run.json"],
                    }
                )
            )
        )
    assert summary["stop_reason"] == "finished"
    assert [(e["format"], e["ok"]) for e in summary["exports"]] == [("graphml", True), ("json", True)]
    assert (out / "web-run" / "graph.graphml").is_file()

    transcript = tmp_path / "t.jsonl"
    transcript.write_text("".join(json.dumps({"raw": text}) + "\n" for text in run_script()))
    request = tmp_path / "r.json"
    request.write_text(json.dumps(request_dict(session_id="cli-run")))
    assert (
        main(
            [
                "run",
                str(request),
                "--agent",
                f"script:{transcript}",
                "--json",
                "--export",
                f"json:{tmp_path / 'cli.json'}",
            ]
        )
        == 0
    )
    assert _graph(out / "docs" / "run.json") == _graph(tmp_path / "cli.json")


def test_a_run_export_outside_the_output_directory_is_refused_before_it_starts(tmp_path: Path):
    ws = Workspace(MemorySessions(), output_dir=tmp_path / "out")
    inp = RunInput.model_validate(
        {**request_dict(session_id="bad"), "agent": "code", "exports": ["graphml:../escape.graphml"]}
    )
    with pytest.raises(WorkspaceError) as caught:
        asyncio.run(ws.start_run(inp))
    assert caught.value.code == "PATH_FORBIDDEN"
    assert ws.list_sessions()["sessions"] == []


def test_a_tool_call_and_a_loop_iteration_make_the_same_record_and_event(tmp_path: Path):
    actions = [
        node("Class", name="A", package="p"),
        node("Class", name="B", package="p"),
        edge("CALLS", {"name": "A"}, {"name": "B"}),
        node("Nope", name="x"),
    ]
    ws = Workspace(MemorySessions())
    sid = ws.start(request_dict(session_id="tool"))["session_id"]
    ws.apply(ApplyInput(session_id=sid, reasoning="r", actions=actions))
    tool_events: list[dict[str, Any]] = []

    async def listen() -> None:
        async for e in ws.hub.listen(sid, follow=False):
            tool_events.append(e)

    asyncio.run(listen())
    loop_events: list[Event] = []
    result = run(
        load_request(request_dict(session_id="loop")),
        lambda obs: {"reasoning": "r", "actions": actions, "finished": True},
        on_event=loop_events.append,
    )
    tool_finished = next(e for e in tool_events if e["kind"] == "iteration_finished")
    loop_finished = next(e.to_dict() for e in loop_events if e.kind == "iteration_finished")
    assert set(tool_finished) == set(loop_finished)
    for key in ("proposed", "accepted", "rejected", "rejected_by_code", "nodes", "edges"):
        assert tool_finished[key] == loop_finished[key], key
    stored = ws.repo.load(sid).records[0]
    assert [v.to_dict() for v in stored.verdicts] == [v.to_dict() for v in result.records[0].verdicts]
    assert stored.actions == result.records[0].actions
    assert [m.op for m in stored.mutations] == [m.op for m in result.records[0].mutations]


def test_run_request_keeps_the_run_in_a_store_and_a_directory(tmp_path: Path):
    request = load_request(request_dict(session_id="svc"))
    result = run_request(
        request,
        lambda obs: {"reasoning": "r", "finished": True, "actions": [node("Class", name="A", package="p")]},
        store=tmp_path / "s.sqlite",
        out=tmp_path / "run",
        agent_name="python",
        exports=[],
    )
    assert result.stop_reason == "finished" and result.export_error is None
    assert SessionStore(tmp_path / "s.sqlite").session("svc").status == "finished"
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["session_id"] == "svc"
