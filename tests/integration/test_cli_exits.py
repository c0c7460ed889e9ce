"""Exit codes a script can trust: 0 graceful stop, 1 agent_error or a failed export, 2 invalid input before
any work, 130 interrupted (tests/integration/test_cli_keep.py); servers on a busy port say so in one line and
exit 2."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import FIXTURES, ROOT

from igg.interfaces.cli import main
from igg.interfaces.codes import EXIT_CODES

AUTH_REQUEST = str(FIXTURES / "auth" / "request.json")
TRANSCRIPT = f"script:{FIXTURES / 'auth' / 'transcript.jsonl'}"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "IGG_")) or k == "IGG_HOME"}
    return {**env, **extra}


def _llm_request(tmp_path: Path) -> str:
    payload = json.loads((FIXTURES / "seed_request.json").read_text())
    payload["session_id"] = "llm-1"
    payload["context_data"] = "Alice met Bob in Paris."  # no source code: auto has nothing but the LLM
    payload["config"]["llm"] = {"timeout_seconds": 2, "max_retries": 0}
    path = tmp_path / "request.json"
    path.write_text(json.dumps(payload))
    return str(path)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_an_unreachable_llm_exits_1_from_run_and_from_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    store = str(tmp_path / "s.sqlite")
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{_closed_port()}/v1")
    assert main(["run", _llm_request(tmp_path), "--agent", "llm", "--store", store, "--json", "-q"]) == 1
    summary = json.loads(capsys.readouterr().out)
    assert summary["stop_reason"] == "agent_error" and summary["iterations"] == 0
    # an interrupted session (a fork of a scripted run) continued with the unreachable LLM: 1 as well
    assert main(["run", AUTH_REQUEST, "--agent", TRANSCRIPT, "--store", store, "-q"]) == 0
    assert main(["fork", "uuid-1234", "--at", "2", "--as", "cont", "--store", store]) == 0
    capsys.readouterr()
    assert main(["resume", "cont", "--store", store, "--agent", "llm", "--json", "-q"]) == 1
    assert json.loads(capsys.readouterr().out)["stop_reason"] == "agent_error"


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "REQ", "--agent", "llm"],
        ["run", "REQ", "--agent", "auto"],
        ["map-code", str(FIXTURES / "code" / "java"), "--agent", "hybrid"],
    ],
)
def test_an_agent_without_its_endpoint_is_the_same_line_and_exit_2(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    argv = [_llm_request(tmp_path) if a == "REQ" else a for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert err.startswith(
        "igg: the LLM agent needs an endpoint: set OPENAI_API_KEY (OpenAI) or OPENAI_BASE_URL"
    )


@pytest.mark.parametrize(
    "target, says",
    [
        ("DIR", "is a directory; give a file path, e.g. DIR/graph.graphml"),
        ("FILE/graph.graphml", "FILE is a file, so FILE/graph.graphml cannot be created"),
    ],
)
def test_a_bad_export_target_is_refused_before_the_run(
    tmp_path: Path, target: str, says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "DIR").mkdir()
    (tmp_path / "FILE").write_text("x")
    target, says = (
        t.replace("DIR", str(tmp_path / "DIR")).replace("FILE", str(tmp_path / "FILE"))
        for t in (target, says)
    )
    out, store = tmp_path / "out", tmp_path / "s.sqlite"
    assert (
        main(
            [
                "run",
                AUTH_REQUEST,
                "--agent",
                TRANSCRIPT,
                "--out",
                str(out),
                "--store",
                str(store),
                "--export",
                f"graphml:{target}",
            ]
        )
        == 2
    )
    assert says in capsys.readouterr().err
    assert not out.exists() and not store.exists()  # nothing ran
    code = str(FIXTURES / "code" / "java")
    assert main(["map-code", code, "--export", f"graphml:{target}", "--out", str(out)]) == 2
    assert says in capsys.readouterr().err and not out.exists()


def test_a_failed_export_exits_1_after_the_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A target that only fails when written (neo4j on a closed port) still prints the summary, then exit
    1."""
    uri = f"bolt://127.0.0.1:{_closed_port()}"
    assert (
        main(["run", AUTH_REQUEST, "--agent", TRANSCRIPT, "--no-store", "--json", "--export", f"neo4j:{uri}"])
        == 1
    )
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    assert summary["stop_reason"] == "finished" and summary["exports"][0]["ok"] is False
    assert "igg: neo4j:" in captured.err


@pytest.mark.parametrize("argv", [["serve"], ["mcp", "--transport", "http"], ["view"]])
def test_a_busy_port_is_one_line_and_exit_2_before_anything_says_serving(argv: list[str]) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "igg", *argv, "--port", str(port), "--memory"],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=60,
            env=_env(),
        )
    assert result.returncode == 2
    assert result.stderr == (
        f"igg: cannot listen on 127.0.0.1:{port}: Address already in use; choose another "
        "--port (0 picks a free one)\n"
    )
    assert result.stdout == ""


def test_mcp_over_http_prints_its_url_and_answers_there() -> None:
    import httpx

    proc = subprocess.Popen(
        [sys.executable, "-m", "igg", "mcp", "--transport", "http", "--port", "0", "--memory"],
        cwd=ROOT,
        env=_env(),
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        assert line.startswith("igg: MCP over streamable HTTP at http://127.0.0.1:"), line
        url = line.split(" at ", 1)[1].split()[0]
        assert url.endswith("/mcp")
        deadline = time.monotonic() + 30
        while True:
            try:
                answer = httpx.get(url, headers={"Accept": "text/event-stream"}, timeout=5)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline
                time.sleep(0.1)
        assert answer.status_code in (400, 405, 406)  # the MCP endpoint itself: a GET without a session
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_the_exit_code_table_is_the_one_in_the_docs() -> None:
    readme = (ROOT / "docs" / "running.md").read_text()
    for code, meaning in EXIT_CODES:
        assert f"| {code} | {meaning.replace('|', chr(92) + '|')} |" in readme
