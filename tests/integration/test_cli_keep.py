"""Nothing lost: a run without --out/--store/--export is kept in the default store (and says where, with a
command that works), and Ctrl-C writes what the run had, exits 130 and says how to resume it."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from conftest import FIXTURES, ROOT
from support.fake_openai import FakeOpenAI, Reply

AUTH_REQUEST = str(FIXTURES / "auth" / "request.json")
AUTH_TRANSCRIPT = f"script:{FIXTURES / 'auth' / 'transcript.jsonl'}"


def igg(
    *args: str, env: dict[str, str] | None = None, cwd: Path = ROOT, **kwargs: Any
) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "IGG_")) or k == "IGG_HOME"}
    return subprocess.run(
        [sys.executable, "-m", "igg", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        env={**full, **(env or {})},
        **kwargs,
    )


def commands(line: str) -> list[list[str]]:
    """The commands quoted in backticks in one line of output, split as a shell would."""
    return [shlex.split(c) for c in re.findall(r"`([^`]+)`", line)]


def test_a_run_without_a_place_is_kept_in_the_default_store_and_says_how_to_see_it(_igg_home: Path) -> None:
    first = igg("run", AUTH_REQUEST, "--agent", AUTH_TRANSCRIPT)
    assert first.returncode == 0, first.stderr
    kept = [line for line in first.stderr.splitlines() if "default store" in line]
    assert len(kept) == 1
    store = _igg_home / "sessions.sqlite"
    assert f"kept session uuid-1234 in the default store {store}" in kept[0] and "--no-store" in kept[0]
    show, export = commands(kept[0])
    assert show[:2] == ["igg", "show"] and export[:2] == ["igg", "export"]
    shown = igg(*show[1:])
    assert shown.returncode == 0 and "uuid-1234" in shown.stdout and "finished" in shown.stdout
    exported = igg(*export[1:], "--output", "-")
    assert exported.returncode == 0 and exported.stdout.count("<node ") == 27

    # a rerun is refused as in a store named with --store (nothing replaced unasked), saying how to replace it
    again = igg("run", AUTH_REQUEST, "--agent", AUTH_TRANSCRIPT)
    assert again.returncode == 2 and "session 'uuid-1234' already exists" in again.stderr
    assert "--force" in again.stderr and "Traceback" not in again.stderr
    forced = igg("run", AUTH_REQUEST, "--agent", AUTH_TRANSCRIPT, "--force")
    assert forced.returncode == 0, forced.stderr
    sessions = json.loads(igg("sessions", "--store", str(store), "--json").stdout)
    assert [s["session_id"] for s in sessions] == ["uuid-1234"]


def test_no_store_out_and_export_keep_nothing_in_the_default_store(tmp_path: Path, _igg_home: Path) -> None:
    for extra in (
        ["--no-store"],
        ["--out", str(tmp_path / "out")],
        ["--export", f"json:{tmp_path / 'g.json'}"],
    ):
        result = igg("run", AUTH_REQUEST, "--agent", AUTH_TRANSCRIPT, *extra)
        assert result.returncode == 0, result.stderr
        assert "default store" not in result.stderr
    assert not (_igg_home / "sessions.sqlite").exists()


def test_map_code_is_kept_too_and_its_export_command_works(tmp_path: Path, _igg_home: Path) -> None:
    result = igg("map-code", str(FIXTURES / "code" / "java"), "--json")
    assert result.returncode == 0, result.stderr
    session = json.loads(result.stdout)["session_id"]
    (line,) = [x for x in result.stderr.splitlines() if "default store" in x]
    export = commands(line)[1]
    written = igg(*export[1:], "--output", str(tmp_path / "code.graphml"))
    assert written.returncode == 0, written.stderr
    assert f"kept session {session}" in line and (tmp_path / "code.graphml").stat().st_size > 1000


def test_an_unfinished_session_of_the_same_id_is_not_replaced_silently(_igg_home: Path) -> None:
    """A stored session that did not finish is refused with the exact commands that go on (exit 2)."""
    store = str(_igg_home / "sessions.sqlite")
    assert igg("run", AUTH_REQUEST, "--agent", AUTH_TRANSCRIPT).returncode == 0
    assert igg("fork", "uuid-1234", "--at", "3", "--as", "half", "--store", store).returncode == 0
    payload = json.loads(Path(AUTH_REQUEST).read_text())
    payload["session_id"] = "half"
    rerun = igg("run", "-", "--agent", AUTH_TRANSCRIPT, input=json.dumps(payload))
    assert rerun.returncode == 2
    assert rerun.stderr.count("\n") == 1
    resume, replace = commands(rerun.stderr)
    assert resume == ["igg", "resume", "half", "--store", store]
    assert replace == ["igg", "run", "-", "--agent", AUTH_TRANSCRIPT, "--force"]
    assert rerun.stderr.rstrip().endswith("or give the request another session_id")


def _request(tmp_path: Path) -> Path:
    payload = json.loads((FIXTURES / "seed_request.json").read_text())
    payload["session_id"] = "sp1"
    payload["context_data"] = "class AuthController { AuthService s; } class AuthService { UserRepo r; }"
    payload["config"]["llm"] = {"timeout_seconds": 60, "max_retries": 0}
    path = tmp_path / "request.json"
    path.write_text(json.dumps(payload))
    return path


def _answer(*names: str, finished: bool = False) -> str:
    actions = [
        {"type": "ADD_NODE", "label": "Class", "properties": {"name": n, "package": "com.app"}} for n in names
    ]
    return json.dumps({"reasoning": "step", "actions": actions, "finished": finished})


def test_ctrl_c_writes_what_the_run_had_exits_130_and_the_resume_command_finishes_it(tmp_path: Path) -> None:
    """SIGINT while the LLM thinks about iteration 3: graph.json and summary.json hold iterations 1-2 (stop
    reason interrupted), the store keeps them as an interrupted session, and the printed command resumes
    it."""
    request, out, store = _request(tmp_path), tmp_path / "out", tmp_path / "s.sqlite"
    with FakeOpenAI([_answer("A"), _answer("B"), Reply(content=_answer("C"), hang=60)]) as server:
        env = {
            k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "IGG_")) or k == "IGG_HOME"
        }
        env["OPENAI_BASE_URL"] = server.base_url
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "igg",
                "run",
                str(request),
                "--agent",
                "llm",
                "--out",
                str(out),
                "--store",
                str(store),
            ],
            cwd=ROOT,
            env=env,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 60
        while len(server.requests) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(server.requests) == 3, "the run never asked for iteration 3"
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    graph = json.loads((out / "graph.json").read_text())
    assert sorted(n["properties"]["name"] for n in graph["nodes"] if n["type"] == "Class") == ["A", "B"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["stop_reason"] == "interrupted" and summary["iterations"] == 2
    last = stderr.strip().splitlines()[-1]
    assert "interrupted after iteration 2 of session sp1" in last and str(out / "graph.json") in last
    (resume,) = commands(last)
    assert resume == ["igg", "resume", "sp1", "--store", str(store)]
    listed = json.loads(igg("sessions", "--store", str(store), "--json").stdout)
    assert [(s["session_id"], s["status"], s["iterations"]) for s in listed] == [("sp1", "interrupted", 2)]

    with FakeOpenAI([_answer("C", finished=True)]) as server:
        resumed = igg(*resume[1:], "--out", str(out), "--json", env={"OPENAI_BASE_URL": server.base_url})
    assert resumed.returncode == 0, resumed.stderr
    final = json.loads(resumed.stdout)
    assert final["stop_reason"] == "finished" and final["iterations"] == 3
    names = sorted(
        n["properties"]["name"]
        for n in json.loads((out / "graph.json").read_text())["nodes"]
        if n["type"] == "Class"
    )
    assert names == ["A", "B", "C"]


def test_the_session_commands_find_a_run_kept_without_store_from_any_directory(
    tmp_path: Path, _igg_home: Path
) -> None:
    """One store rule: `igg run` without --store, then `igg sessions` / `show` / `fork` / `resume` / `export`
    without --store, from another working directory, all find the session in the default store."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert igg("run", AUTH_REQUEST, "--agent", AUTH_TRANSCRIPT, cwd=tmp_path / "a").returncode == 0
    elsewhere = tmp_path / "b"
    listed = igg("sessions", "--json", cwd=elsewhere)
    assert listed.returncode == 0, listed.stderr
    assert [(s["session_id"], s["status"]) for s in json.loads(listed.stdout)] == [("uuid-1234", "finished")]
    shown = igg("show", "uuid-1234", cwd=elsewhere)
    assert shown.returncode == 0 and f"store {_igg_home / 'sessions.sqlite'}" in shown.stdout
    forked = igg("fork", "uuid-1234", "--at", "5", "--as", "half", cwd=elsewhere)
    assert forked.returncode == 0, forked.stderr
    (resume,) = commands(forked.stdout + forked.stderr)
    assert resume == ["igg", "resume", "half", "--store", str(_igg_home / "sessions.sqlite")]
    resumed = igg("resume", "half", "--json", cwd=elsewhere)  # the same command without --store works too
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["iterations"] == 12
    exported = igg("export", "half", "--format", "json", "--output", "-", cwd=elsewhere)
    assert exported.returncode == 0 and len(json.loads(exported.stdout)["nodes"]) == 27
    assert not (tmp_path / "a" / ".igg").exists() and not (elsewhere / ".igg").exists()


def test_a_project_store_in_the_working_directory_wins_over_the_default_store(
    tmp_path: Path, _igg_home: Path
) -> None:
    """./.igg/sessions.sqlite, when it exists, is where runs without --store go and what `igg sessions`
    reads."""
    project = tmp_path / "project"
    project.mkdir()
    assert (
        igg(
            "run", AUTH_REQUEST, "--agent", AUTH_TRANSCRIPT, "--store", ".igg/sessions.sqlite", cwd=project
        ).returncode
        == 0
    )
    payload = json.loads(Path(AUTH_REQUEST).read_text())
    payload["session_id"] = "second"
    run = igg("run", "-", "--agent", AUTH_TRANSCRIPT, cwd=project, input=json.dumps(payload))
    assert run.returncode == 0, run.stderr
    assert "kept session second in the project store .igg/sessions.sqlite" in run.stderr
    listed = json.loads(igg("sessions", "--json", cwd=project).stdout)
    assert sorted(s["session_id"] for s in listed) == ["second", "uuid-1234"]
    assert not (_igg_home / "sessions.sqlite").exists()


def test_a_missing_named_store_is_refused_with_the_command_that_works(
    tmp_path: Path, _igg_home: Path
) -> None:
    """`igg show ID --store WRONG`: exit 2, one line, and the same command on the default store, which
    works."""
    assert igg("run", AUTH_REQUEST, "--agent", AUTH_TRANSCRIPT).returncode == 0
    shown = igg("show", "uuid-1234", "--store", str(tmp_path / "wrong.sqlite"), cwd=tmp_path)
    assert shown.returncode == 2 and shown.stderr.count("\n") == 1
    (again,) = [c for c in commands(shown.stderr) if "REQUEST.json" not in c]
    assert again == ["igg", "show", "uuid-1234"]
    assert igg(*again[1:], cwd=tmp_path).returncode == 0
    empty = igg("sessions", env={"IGG_HOME": str(tmp_path / "nothing")}, cwd=tmp_path)
    assert empty.returncode == 2 and "no session store at" in empty.stderr and "default store" in empty.stderr


def test_a_map_kept_in_the_default_store_is_updated_without_naming_the_store(
    tmp_path: Path, _igg_home: Path
) -> None:
    """`igg map-code DIR` then `igg map-code DIR --update`, neither with --store: the update finds the map
    (and its facts cache) in the default store, like every session command."""
    tree = tmp_path / "tree"
    (tree / "shop").mkdir(parents=True)
    (tree / "shop" / "__init__.py").write_text("")
    (tree / "shop" / "cart.py").write_text("class Cart:\n    pass\n")
    first = igg("map-code", str(tree), "--quiet")
    assert first.returncode == 0, first.stderr
    (tree / "shop" / "order.py").write_text("from shop.cart import Cart\n\nclass Order(Cart):\n    pass\n")
    updated = igg("map-code", str(tree), "--update", "--json")
    assert updated.returncode == 0, updated.stderr
    summary = json.loads(updated.stdout)
    assert summary["files"]["added"] == ["shop/order.py"] and summary["graph"]["nodes_added"] == 2
    assert (_igg_home / "sessions.sqlite").exists() and not (tmp_path / ".igg").exists()
