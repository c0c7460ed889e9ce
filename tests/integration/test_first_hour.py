"""The first hour of a new user (issue 46): the README's examples run twice in a row from a new shell that
followed the Quickstart's PATH line; ``scripts/demo`` ends saying how to put ``igg`` on PATH, and that line
works; a path is never read as a session id; ``export_graph`` offers every export format of ``igg export`` but
``neo4j``; a Turtle export without rdflib is refused before a run spends anything."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from igg.interfaces.cli import main
from igg.workspace import Workspace
from igg.workspace.ops import ExportInput
from tests.integration.test_docs import BLOCKS, RUNNABLE, copy_tracked
from tests.unit.test_workspace import request_dict

ROOT = Path(__file__).resolve().parents[2]
VENV = Path(sys.prefix)
NEW_SHELL = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}


def new_shell(script: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    """``script`` in a new, clean bash: no profile, no PATH but the system's, a HOME of its own."""
    env = {**NEW_SHELL, "HOME": str(home), "TMPDIR": str(home)}
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-e", "-o", "pipefail", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.integration
def test_the_readme_examples_run_twice_from_a_new_shell(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    copy_tracked(ROOT, root)
    (root / ".venv").symlink_to(VENV)  # the virtualenv scripts/demo made
    home = tmp_path / "home"
    home.mkdir()
    lines = ["source .venv/bin/activate"]  # the Quickstart's PATH line
    for i, block in enumerate(BLOCKS["README.md"]):
        if block.lang not in RUNNABLE or block.skip_reason is not None or block.needs_bolt:
            continue
        if block.lang == "python":
            (root / f"readme_{i}.py").write_text(block.code)
            lines.append(f"python readme_{i}.py")
        else:
            lines.append(block.code)
    script = "\n".join(lines)
    first, second = new_shell(script, root, home), new_shell(script, root, home)
    assert first.returncode == 0, first.stderr[-3000:]
    assert second.returncode == 0, (
        f"the README's examples fail when run a second time:\n{second.stderr[-3000:]}"
    )
    assert "Traceback" not in first.stderr + second.stderr
    assert first.stdout == second.stdout  # the same answers the second time
    assert "started readme-mcp" in second.stdout


@pytest.mark.integration
def test_the_demo_ends_with_a_path_line_that_works_in_a_new_shell(tmp_path: Path) -> None:
    # the checkout's own demo with the test environment's virtualenv (a copy elsewhere would reinstall IGG
    # into it from the copy), its outputs and stores kept out of the checkout and the user's home
    home = tmp_path / "home"
    home.mkdir()
    env = {
        **os.environ,
        "IGG_VENV": str(VENV),
        "IGG_DEMO_OUT": str(tmp_path / "demo"),
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / "data"),
        "IGG_STORE": str(tmp_path / "demo.sqlite"),
    }
    env.pop("PYTHONPATH", None)
    done = subprocess.run(
        ["bash", str(ROOT / "scripts" / "demo")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    last = done.stdout.strip().splitlines()[-1]
    command = re.search(r"source \S+/bin/activate", last)
    assert command is not None, last
    shell = new_shell(f"{command.group(0)}\nigg --version", tmp_path, home)
    assert shell.returncode == 0 and shell.stdout.startswith("igg "), shell.stderr


def test_a_missing_path_is_never_read_as_a_session_id(tmp_path: Path, capsys, monkeypatch) -> None:
    """``out/graph.json`` cannot be a session id: a missing one is a missing file, even with a store at
    hand."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("IGG_STORE", str(tmp_path / "runs.sqlite"))
    assert (
        main(
            [
                "run",
                str(ROOT / "fixtures/auth/request.json"),
                "--agent",
                f"script:{ROOT / 'fixtures/auth/transcript.jsonl'}",
                "--quiet",
                "--out",
                "done",
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert main(["export", "out/graph.json", "--format", "json"]) == 2
    err = capsys.readouterr().err
    assert "no session" not in err and "out/graph.json" in err and "No such file" in err
    assert main(["check", "out/graph.json"]) == 2
    err = capsys.readouterr().err
    assert "no session" not in err and "out/graph.json: no such file or folder" in err
    assert (
        main(["export", "uuid-1234", "--format", "json", "--output", "-"]) == 0
    )  # a session id still is one
    assert json.loads(capsys.readouterr().out)["nodes"]


@pytest.mark.parametrize("fmt", ["gexf", "nt", "ttl", "jsonld", "html"])
def test_export_graph_offers_every_cli_format_but_neo4j(fmt: str) -> None:
    from igg.export.spec import FORMATS

    ws = Workspace()
    sid = ws.start(request_dict())["session_id"]
    out = ws.export(ExportInput(session_id=sid, format=fmt))
    assert out.content and out.bytes and out.format == fmt
    offered = set(ExportInput.model_json_schema()["properties"]["format"]["enum"])
    assert set(FORMATS) - {"neo4j"} <= offered


def test_a_turtle_export_without_rdflib_is_refused_before_the_run(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    monkeypatch.setitem(sys.modules, "rdflib", None)  # an installation without the rdf extra
    code = main(
        [
            "run",
            str(ROOT / "fixtures/auth/request.json"),
            "--agent",
            f"script:{ROOT / 'fixtures/auth/transcript.jsonl'}",
            "--no-store",
            "--out",
            str(tmp_path / "o"),
            "--export",
            f"ttl:{tmp_path / 'g.ttl'}",
        ]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "rdflib" in err and "ttl" in err
    assert not (tmp_path / "o").exists()  # nothing ran


def test_the_html_page_is_titled_by_its_goal_and_size() -> None:
    ws = Workspace()
    sid = ws.start(
        request_dict(
            goal_prompt=(
                "Map </title><script>alert(1)</script> the auth module's dependencies "
                "from the provided source files, carefully"
            )
        )
    )["session_id"]
    page = ws.export(ExportInput(session_id=sid, format="html")).content or ""
    title = re.search(r"<title>(.*?)</title>", page, re.DOTALL)
    assert title is not None
    assert title.group(1).startswith("Map &lt;/title&gt;&lt;script&gt;") and "…" in title.group(1)
    assert title.group(1).endswith("nodes, 0 edges · IGG") and sid not in title.group(1)


def test_a_code_map_proposes_each_edge_once(capsys) -> None:
    """Two relations that become one edge (an imported symbol's IMPORTS beside its module's) are proposed
    once: the code agent's own duplicates never show as rejected DUPLICATE_EDGE in a map-code summary."""
    assert main(["map-code", str(ROOT / "fixtures" / "code"), "--no-store", "--json", "--quiet"]) == 0
    actions = json.loads(capsys.readouterr().out)["actions"]
    assert actions["rejected_by_code"] == {} and actions["proposed"] == actions["accepted"] > 1000


def test_scripts_test_says_its_cost_first_and_keeps_apt_quiet() -> None:
    text = (ROOT / "scripts" / "test").read_text()
    body = text[text.index("set -euo pipefail") :]
    first_echo = body[body.index("echo ") : body.index(">&2", body.index("echo "))]
    assert "about 9 minutes on 2 cores" in first_echo and "--quick" in first_echo  # before the venv is made
    assert body.index("takes about 9 minutes") < body.index('source "$(dirname "$0")/_venv.sh" dev')
    installs = [line for line in body.splitlines() if "apt-get install" in line]
    assert installs and all('>>"$APT_LOG" 2>&1' in line for line in installs), installs
