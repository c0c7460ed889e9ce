"""The command line follows the ecosystem's conventions: --version, no option prefixes, suggestions, the
usage of the command that was actually given, shell completion, ``-`` for standard input, help without raw
markup, hints that are commands to copy."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

from igg.interfaces.cli import igg_version, main


def _fail(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    return capsys.readouterr().err


def test_version_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out.strip()
    assert out == f"igg {igg_version()}" and out != "igg 0+unknown"


def test_a_mistyped_command_gets_a_suggestion(capsys: pytest.CaptureFixture[str]) -> None:
    err = _fail(["rnu", "fixtures/auth/request.json"], capsys)
    assert "invalid choice: 'rnu'" in err and "did you mean 'run'?" in err


def test_option_prefixes_are_not_accepted_and_the_subcommand_usage_is_shown(
    capsys: pytest.CaptureFixture[str],
) -> None:
    err = _fail(["run", "fixtures/auth/request.json", "--js"], capsys)
    assert err.startswith("usage: igg run "), err
    assert "unrecognized arguments: --js; did you mean '--json'?" in err


def test_an_unknown_option_far_from_any_known_one_gets_no_guess(capsys: pytest.CaptureFixture[str]) -> None:
    err = _fail(["sessions", "--zzzzzz"], capsys)
    assert err.startswith("usage: igg sessions ")
    assert "unrecognized arguments: --zzzzzz" in err and "did you mean" not in err


def _complete(line: str, tmp_path: Path) -> list[str]:
    """What the shell's TAB offers after ``line``, asked through argcomplete's protocol (as its hook does)."""
    answer = tmp_path / "completions"
    env = {
        **os.environ,
        "_ARGCOMPLETE": "1",
        "_ARGCOMPLETE_IFS": "\n",
        "COMP_LINE": line,
        "COMP_POINT": str(len(line)),
        "_ARGCOMPLETE_STDOUT_FILENAME": str(answer),
    }
    subprocess.run(
        [sys.executable, "-m", "igg"], env=env, cwd=ROOT, timeout=60, check=True, capture_output=True
    )
    return answer.read_text().split()


def test_tab_completes_commands_options_and_choices(tmp_path: Path) -> None:
    assert _complete("igg ru", tmp_path) == ["run"]
    assert "map-code" in _complete("igg ", tmp_path) and "completion" in _complete("igg ", tmp_path)
    assert _complete("igg run --ag", tmp_path) == ["--agent"]
    assert _complete("igg map-code --no-", tmp_path) == ["--no-store"]
    assert _complete("igg export g.json --format gr", tmp_path) == ["graphml"]


@pytest.mark.parametrize(
    "shell, marker", [("bash", "complete "), ("zsh", "#compdef igg"), ("fish", "complete ")]
)
def test_completion_prints_the_hook_for_each_shell(shell: str, marker: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "igg", "completion", shell],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert result.returncode == 0 and marker in result.stdout and "igg" in result.stdout


def test_no_help_text_shows_raw_double_backticks_or_internal_notes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from igg.interfaces.cli import COMMANDS

    for argv in [[], *([c] for c in COMMANDS)]:
        with pytest.raises(SystemExit):
            main([*argv, "--help"])
        text = capsys.readouterr().out
        assert text.startswith("usage: igg") and "``" not in text, argv
        assert "load_source" not in text and "the one place that knows" not in text, argv


def test_dash_reads_the_request_and_the_graph_from_standard_input(tmp_path: Path) -> None:
    def igg(*args: str, stdin: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "igg", *args],
            input=stdin,
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=120,
        )

    request = (ROOT / "fixtures" / "auth" / "request.json").read_text()
    valid = igg("validate", "-", stdin=request)
    assert valid.returncode == 0 and valid.stdout.startswith("standard input: valid. session_id=uuid-1234")
    bad = igg("validate", "-", stdin="{")
    assert bad.returncode == 2 and bad.stderr.startswith("igg: standard input is invalid")
    ran = igg(
        "run",
        "-",
        "--agent",
        "script:fixtures/auth/transcript.jsonl",
        "--no-store",
        "--out",
        str(tmp_path / "out"),
        "--json",
        stdin=request,
    )
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout)["nodes"] == 27
    drawn = igg("export", "-", "--format", "mermaid", stdin=(tmp_path / "out" / "graph.json").read_text())
    assert drawn.returncode == 0 and drawn.stdout.startswith("flowchart") and "AuthService" in drawn.stdout


def test_hints_are_exact_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A refused session id names the --store it is in (run) and map-code's own flag (--session)."""
    store = str(tmp_path / "s.sqlite")
    transcript = "script:fixtures/auth/transcript.jsonl"
    assert main(["run", "fixtures/auth/request.json", "--agent", transcript, "--store", store, "-q"]) == 0
    assert main(["fork", "uuid-1234", "--at", "2", "--store", store]) == 0
    assert f"`igg resume uuid-1234-fork-2 --store {store}`" in capsys.readouterr().out
    assert main(["run", "fixtures/auth/request.json", "--agent", transcript, "--store", store, "-q"]) == 2
    err = capsys.readouterr().err
    assert f"see it with `igg show uuid-1234 --store {store}`" in err
    assert (
        f"replace it with `igg run fixtures/auth/request.json --agent {transcript} --store {store} -q "
        "--force`"
    ) in err
    code = str(ROOT / "fixtures" / "code" / "java")
    assert main(["map-code", code, "--session", "m1", "--store", store, "-q"]) == 0
    assert main(["map-code", code, "--session", "m1", "--store", store, "-q"]) == 2
    err = capsys.readouterr().err
    assert err.rstrip().endswith("or give another --session ID") and "session_id" not in err


def test_map_code_is_headed_map_code_and_its_static_pass_asks_no_agent(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The summary table says `igg map-code SESSION`; during the static pass the bar does not say it is asking
    an agent (a rich terminal draws the bar of each iteration)."""
    import io

    from rich.console import Console

    from igg.interfaces.cli.progress import ProgressView
    from igg.mapping.prepare import code_agent, prepare
    from igg.service import run_request

    code = str(ROOT / "fixtures" / "code" / "java")
    assert main(["map-code", code, "--no-store", "--session", "m2"]) == 0
    out = capsys.readouterr().out
    assert "igg map-code m2" in out and "igg run" not in out
    codemap = prepare([Path(code)], agent="code", session_id="m3")
    agent = code_agent("code", codemap)
    statuses: list[str] = []
    console = Console(file=io.StringIO(), force_terminal=True, width=160)
    with ProgressView(
        enabled=True,
        max_iterations=codemap.request.config.max_iterations,
        console=console,
        title="igg map-code",
        agent=agent,
    ) as view:

        def watch(event: object) -> None:
            view(event)  # type: ignore[arg-type]
            statuses.append(view._progress.tasks[0].fields["status"])  # what the bar shows now

        run_request(codemap.request, agent, on_event=watch)
    asking = [s for s in statuses if "·" in s and "iteration" in s]
    assert asking and all(s.endswith("applying the static analysis") for s in asking)
    assert view.title == "igg map-code"
