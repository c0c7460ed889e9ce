"""Quiet by default for people, chatty when asked, silent for scripts; the library never writes to stdout."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from igg.interfaces.cli.common import log_level

ROOT = Path(__file__).resolve().parents[2]
REQUEST = ROOT / "fixtures" / "auth" / "request.json"
TRANSCRIPT = ROOT / "fixtures" / "auth" / "transcript.jsonl"


class _Terminal:
    def isatty(self) -> bool:
        return True


def _args(*argv: str) -> argparse.Namespace:
    from igg.interfaces.cli import _parse, build_parser

    return _parse(build_parser(), ["run", str(REQUEST), *argv])


@pytest.mark.parametrize(
    "argv, on_terminal, level",
    [
        ((), True, "warning"),  # a person: progress bar and summary, no log flood
        ((), False, "info"),  # piped: the log lines are the progress output
        (("--log-format", "json"), True, "info"),
        (("-v",), True, "info"),
        (("-vv",), True, "debug"),
        (("--quiet",), False, "error"),
        (("--log-level", "debug"), True, "debug"),
    ],
)
def test_log_level_follows_the_options_and_the_terminal(
    monkeypatch: pytest.MonkeyPatch, argv: tuple[str, ...], on_terminal: bool, level: str
) -> None:
    if on_terminal:
        monkeypatch.setattr(sys, "stderr", _Terminal())
    assert log_level(_args(*argv)) == level


def test_quiet_and_verbose_cannot_be_combined(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        _args("-q", "-v")
    assert "not allowed with argument" in capsys.readouterr().err


def _run(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "igg", *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def test_quiet_run_prints_nothing_and_still_exports(tmp_path: Path) -> None:
    result = _run(
        "run",
        str(REQUEST),
        "--agent",
        f"script:{TRANSCRIPT}",
        "--quiet",
        "--export",
        "json:graph.json",
        cwd=tmp_path,
    )
    assert result.returncode == 0
    assert result.stdout == "" and result.stderr == ""
    assert (tmp_path / "graph.json").stat().st_size > 0


def test_the_summary_names_exports_in_words_not_json(tmp_path: Path) -> None:
    result = _run(
        "run", str(REQUEST), "--agent", f"script:{TRANSCRIPT}", "--export", "json:graph.json", cwd=tmp_path
    )
    assert result.returncode == 0
    line = next(line for line in result.stdout.splitlines() if "export" in line)
    assert "json graph.json: nodes 27, edges 29" in line and "{" not in line


def test_the_library_never_writes_to_stdout(tmp_path: Path) -> None:
    """A program using IGG as a library, with no logging set up, gets nothing on stdout from IGG."""
    script = tmp_path / "lib.py"
    script.write_text(
        f"""
from pathlib import Path
from igg import ScriptedAgent, load_request, parse_export_spec, perform_exports, run
request = load_request(Path({str(REQUEST)!r}))
result = run(request, ScriptedAgent.from_path({str(TRANSCRIPT)!r}))
perform_exports(result.state, [parse_export_spec("graphml:g.graphml")])
""",
        encoding="utf-8",
    )
    result = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert (tmp_path / "g.graphml").stat().st_size > 0


def test_igg_export_takes_the_shared_verbosity_options(tmp_path: Path) -> None:
    """Unasked (even piped) `igg export` logs nothing but its result line; -v shows export_written; -q leaves
    out the result line too."""
    graph = tmp_path / "g.json"
    ran = subprocess.run(
        [
            sys.executable,
            "-m",
            "igg",
            "run",
            str(REQUEST),
            "--agent",
            f"script:{TRANSCRIPT}",
            "-q",
            "--export",
            f"json:{graph}",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr

    def export(*flags: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "igg",
                "export",
                str(graph),
                "-f",
                "graphml",
                "-o",
                str(tmp_path / "g.graphml"),
                *flags,
            ],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=120,
        )

    plain, verbose, quiet = export(), export("-v"), export("-q")
    assert plain.returncode == verbose.returncode == quiet.returncode == 0
    assert plain.stderr == "" and plain.stdout.startswith("graphml: ")
    assert "export_written" in verbose.stderr and verbose.stdout.startswith("graphml: ")
    assert quiet.stdout == "" and quiet.stderr == ""
