"""`igg run` as a user runs it: a real subprocess on the auth fixture and on small transcripts."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from igg.models.verdicts import ErrorCode
from tests.conftest import FIXTURES, ROOT

AUTH_REQUEST = FIXTURES / "auth" / "request.json"
AUTH_TRANSCRIPT = FIXTURES / "auth" / "transcript.jsonl"
SUMMARY_KEYS = {
    "session_id",
    "stop_reason",
    "iterations",
    "nodes",
    "edges",
    "actions",
    "exports",
    "tokens",
    "open_todos",
    "pruned",
}


def igg(*args: str, env: dict | None = None) -> subprocess.CompletedProcess[str]:
    import os

    full_env = {
        k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "IGG_")) or k == "IGG_HOME"
    }
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "igg", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        env=full_env,
    )


def run_json(*args: str) -> dict:
    result = igg("run", *args, "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def cli(capsys, *args: str) -> tuple[int, str, str]:
    """``igg ARGS`` in this process (faster than a subprocess; the subprocess tests above cover the real
    thing)."""
    import structlog

    from igg.interfaces.cli import main

    try:
        code = main(list(args))
    finally:
        structlog.reset_defaults()
    out, err = capsys.readouterr()
    return code, out, err


def cli_json(capsys, *args: str, exit_code: int = 0) -> dict:
    code, out, err = cli(capsys, "run", *args, "--json")
    assert code == exit_code, err
    return json.loads(out)


def write_request(tmp_path, **config) -> str:
    payload = json.loads((FIXTURES / "seed_request.json").read_text())
    payload["config"].update(config)
    path = tmp_path / "request.json"
    path.write_text(json.dumps(payload))
    return str(path)


def write_transcript(tmp_path, turns) -> str:
    path = tmp_path / "transcript.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in turns))
    return f"script:{path}"


def cls(name):
    return {"type": "ADD_NODE", "label": "Class", "properties": {"name": name, "package": "p"}}


def test_the_auth_fixture_runs_to_finished_with_every_verdict_and_a_self_correction(tmp_path):
    out = tmp_path / "out"
    summary = run_json(str(AUTH_REQUEST), "--agent", f"script:{AUTH_TRANSCRIPT}", "--out", str(out))
    assert SUMMARY_KEYS <= set(summary)
    assert summary["stop_reason"] == "finished" and summary["session_id"] == "uuid-1234"
    actions = summary["actions"]
    assert set(actions) == {"proposed", "accepted", "rejected", "rejected_by_code"}
    assert actions["proposed"] == actions["accepted"] + actions["rejected"]
    assert summary["invalid_turns"] == {"INVALID_JSON": 1, "INVALID_RESPONSE": 1}
    assert summary["truncated_turns"] == 1 and summary["open_todos"] == []
    # every code reachable under this request's limits (the rest: see the variant test below);
    # UNGROUNDED_SYMBOL belongs to the code agents' grounding rule (tests/unit/test_code_grounding.py)
    assert set(actions["rejected_by_code"]) == {c.value for c in ErrorCode} - {
        "INVALID_JSON",
        "INVALID_RESPONSE",
        "MAX_NODES_EXCEEDED",
        "MAX_EDGES_EXCEEDED",
        "DELETION_FORBIDDEN",
        "ROLLED_BACK",
        "UNGROUNDED_SYMBOL",
        "POSSIBLE_DUPLICATE",
        "WRONG_PROPERTY_TYPE",
        "VALUE_NOT_IN_ENUM",
        "INVALID_MERGE",
        "INVALID_QUERY",
        "QUERY_BUDGET_EXHAUSTED",
        "UNGROUNDED_EVIDENCE",
        "MISSING_EVIDENCE",
        "UNGROUNDED_VALUE",
        "TYPE_CONFLICT",
        "INVALID_TIME",
        "TIME_NOT_SCOPED",
        "TIME_CONFLICT",
        "SUPERSEDED",
    }
    # the last twelve: tests/unit/test_duplicates.py, test_schema_types.py, test_merge.py,
    # test_query_bounds.py, test_evidence.py (and fixtures/grounded, run by docs/evidence.md),
    # test_text2kg.py (two), test_validtime.py (the four of valid time; SUPERSEDED is a warning, never a
    # rejection)
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    first_rejected = {v["code"] for v in records[0]["verdicts"] if not v["accepted"]}
    assert "MISSING_REQUIRED_ATTRIBUTE" in first_rejected
    # self-correction: AuthServiceImpl rejected without its package, accepted with it on the next turn
    fixed = [v for v in records[1]["verdicts"] if v["accepted"] and "AuthServiceImpl" in v["message"]]
    assert fixed and fixed[0]["action"] == "ADD_NODE"
    graph = json.loads((out / "graph.json").read_text())
    assert graph["format"] == "igg-graph" and len(graph["nodes"]) == summary["nodes"]
    assert {"users", "sessions", "login_attempts"} <= {n["properties"]["name"] for n in graph["nodes"]}
    assert graph["metadata"]["stop_reason"] == "finished"


def test_the_transcript_written_by_out_replays_the_run_exactly(tmp_path):
    first = run_json(str(AUTH_REQUEST), "--agent", f"script:{AUTH_TRANSCRIPT}", "--out", str(tmp_path / "a"))
    again = run_json(
        str(AUTH_REQUEST),
        "--agent",
        f"script:{tmp_path / 'a' / 'transcript.jsonl'}",
        "--out",
        str(tmp_path / "b"),
    )
    first.pop("elapsed_ms")
    again.pop("elapsed_ms")
    assert again == first
    graph_a = json.loads((tmp_path / "a" / "graph.json").read_text())
    graph_b = json.loads((tmp_path / "b" / "graph.json").read_text())
    assert graph_a == graph_b


@pytest.mark.parametrize(
    "overrides, code",
    [
        ({"constraints": {"max_nodes": 12}}, "MAX_NODES_EXCEEDED"),
        ({"constraints": {"max_edges": 8}}, "MAX_EDGES_EXCEEDED"),
        ({"constraints": {"allow_deletions": False}}, "DELETION_FORBIDDEN"),
        ({"apply_mode": "atomic"}, "ROLLED_BACK"),
        (
            {"constraints": {"duplicates": {"aliases": [["UserRepository", "SessionRepository"]]}}},
            "POSSIBLE_DUPLICATE",
        ),
        ({"schema": {"property_types": {"Class": {"package": "integer"}}}}, "WRONG_PROPERTY_TYPE"),
        ({"schema": {"property_types": {"Class": {"package": {"enum": ["nowhere"]}}}}}, "VALUE_NOT_IN_ENUM"),
    ],
)
def test_the_remaining_codes_are_reached_by_the_auth_transcript_under_tighter_settings(
    tmp_path, capsys, overrides, code
):
    payload = json.loads(AUTH_REQUEST.read_text())
    for key, value in overrides.items():
        if isinstance(value, dict):
            payload["config"][key].update(value)
        else:
            payload["config"][key] = value
    payload["config"]["stuck_after"] = 20
    path = tmp_path / "request.json"
    path.write_text(json.dumps(payload))
    summary = cli_json(capsys, str(path), "--agent", f"script:{AUTH_TRANSCRIPT}")
    assert code in summary["actions"]["rejected_by_code"]


@pytest.mark.parametrize(
    "config, turns, stop",
    [
        (
            {"max_iterations": 2},
            [{"actions": [cls("A")]}, {"actions": [cls("B")]}, {"actions": [cls("C")]}],
            "max_iterations",
        ),
        (
            {"constraints": {"max_nodes": 1, "max_edges": 0}},
            [{"actions": [cls("A")]}, {"actions": []}],
            "limits_reached",
        ),
        ({"stuck_after": 2}, [{"actions": [cls("A")]}, {"raw": "no"}, {"actions": [cls("A")]}], "stuck"),
        ({}, [{"actions": [cls("A")]}], "agent_error"),
        ({}, [{"actions": [cls("A")], "finished": True}], "finished"),
    ],
)
def test_runs_end_in_each_stop_reason_with_its_exit_code(tmp_path, capsys, config, turns, stop):
    """A graceful stop exits 0; agent_error exits 1 (a script can tell a run whose agent failed)."""
    summary = cli_json(
        capsys,
        write_request(tmp_path, **config),
        "--agent",
        write_transcript(tmp_path, turns),
        exit_code=1 if stop == "agent_error" else 0,
    )
    assert summary["stop_reason"] == stop
    if stop == "agent_error":
        assert "transcript exhausted" in summary["error"]


def test_without_a_tty_progress_is_plain_log_lines_on_stderr(tmp_path):
    result = igg("run", str(AUTH_REQUEST), "--agent", f"script:{AUTH_TRANSCRIPT}")
    assert result.returncode == 0
    lines = [line for line in result.stderr.splitlines() if "iteration_finished" in line]
    assert len(lines) == 12 and "\x1b[" not in result.stderr
    assert "session_id=uuid-1234" in lines[0] and "proposed=" in lines[0] and "ms=" in lines[0]
    assert "stop reason" in result.stdout and "finished" in result.stdout


def test_json_logs_are_one_object_per_line(tmp_path):
    result = igg(
        "run", str(AUTH_REQUEST), "--agent", f"script:{AUTH_TRANSCRIPT}", "--json", "--log-format", "json"
    )
    assert result.returncode == 0
    events = [json.loads(line) for line in result.stderr.splitlines()]
    per_iteration = [e for e in events if e["event"] == "iteration_finished"]
    assert [e["iteration"] for e in per_iteration] == list(range(1, 13))
    assert {
        "session_id",
        "iteration",
        "proposed",
        "accepted",
        "rejected",
        "rejected_by_code",
        "tokens",
        "ms",
    } <= set(per_iteration[0])
    assert json.loads(result.stdout)["stop_reason"] == "finished"


def test_secrets_in_the_environment_never_reach_the_logs(tmp_path):
    secret = "sk-test-abcdefghijklmnop1234"
    result = igg(
        "run",
        str(AUTH_REQUEST),
        "--agent",
        f"script:{AUTH_TRANSCRIPT}",
        "--log-format",
        "json",
        env={"NEO4J_PASSWORD": secret},
    )
    assert result.returncode == 0 and secret not in result.stderr + result.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["--agent", "script:/nonexistent/t.jsonl"], "cannot read /nonexistent/t.jsonl"),
        (["--agent", "robot"], "'robot': unknown agent"),
    ],
)
def test_bad_input_exits_2_without_a_traceback(tmp_path, capsys, args, message):
    code, _, err = cli(capsys, "run", str(AUTH_REQUEST), *args)
    assert code == 2 and message in err


def test_a_bad_transcript_line_exits_2(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text('{"raw": "ok"}\n{oops\n')
    result = igg("run", str(AUTH_REQUEST), "--agent", f"script:{path}")
    assert result.returncode == 2 and "line 2: not valid JSON" in result.stderr


def test_auto_without_an_endpoint_or_code_is_a_one_line_error(tmp_path):
    path = write_request(tmp_path)
    result = igg("run", path)
    assert result.returncode in (1, 2) and "Traceback" not in result.stderr
    assert "OPENAI_API_KEY" in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_export_is_checked_before_the_run(tmp_path, capsys):
    code, out, err = cli(
        capsys,
        "run",
        str(AUTH_REQUEST),
        "--agent",
        f"script:{AUTH_TRANSCRIPT}",
        "--export",
        "nope-format",
        "--export",
        "graphml:",
    )
    assert code == 2 and "'nope-format'" in err and "empty target" in err
    assert "iteration_finished" not in err and out == ""


def test_exports_run_after_the_run_and_are_listed_in_the_summary(tmp_path, capsys):
    import networkx as nx

    out = tmp_path / "out"
    summary = cli_json(
        capsys,
        str(AUTH_REQUEST),
        "--agent",
        f"script:{AUTH_TRANSCRIPT}",
        "--out",
        str(out),
        "--export",
        "graphml",
        "--export",
        f"mermaid:{tmp_path / 'g.mmd'}",
    )
    assert [(e["format"], e["ok"]) for e in summary["exports"]] == [("graphml", True), ("mermaid", True)]
    graph = nx.read_graphml(out / "graph.graphml")
    assert graph.number_of_nodes() == summary["nodes"] and graph.number_of_edges() == summary["edges"]
    assert (tmp_path / "g.mmd").read_text().strip()
    assert json.loads((out / "summary.json").read_text())["exports"] == summary["exports"]


def test_a_failed_export_still_prints_the_summary_and_exits_1(tmp_path, capsys):
    code, out, err = cli(
        capsys,
        "run",
        str(AUTH_REQUEST),
        "--agent",
        f"script:{AUTH_TRANSCRIPT}",
        "--json",
        "--export",
        "graphml:/proc/igg-no-such-dir/g.graphml",
    )
    assert code == 1 and "igg: " in err
    summary = json.loads(out)
    assert summary["stop_reason"] == "finished" and summary["exports"][0]["ok"] is False


def test_the_live_view_draws_progress_on_a_terminal():
    import io

    from rich.console import Console

    from igg.agents.scripted import ScriptedAgent
    from igg.engine.loop import run
    from igg.interfaces.cli.progress import ProgressView
    from igg.request.load import load_request

    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=120)
    request = load_request(AUTH_REQUEST)
    with ProgressView(enabled=True, max_iterations=20, console=console) as view:
        result = run(request, ScriptedAgent.from_path(AUTH_TRANSCRIPT), on_event=view)
        console.print("a log line above the bar")
        view.refresh()
    drawn = screen.getvalue()
    assert result.stop_reason == "finished"
    assert "igg run uuid-1234" in drawn and "12/20" in drawn
    assert f"nodes {result.state.node_count}" in drawn and "a log line above the bar" in drawn


def test_without_a_terminal_the_live_view_draws_nothing(capsys):
    from igg.interfaces.cli.progress import ProgressView
    from igg.record.records import Event

    with ProgressView(enabled=False) as view:
        view(Event(kind="run_started", session_id="s", data={"start_iteration": 1, "max_iterations": 3}))
    assert capsys.readouterr() == ("", "")
