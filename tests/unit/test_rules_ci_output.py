"""Output nobody can forge (issue 47): file names, module names, rule names and messages that reach a CI log
are escaped for it. The text of ``igg check`` and ``igg cycles`` and the ``--since`` listing show them on one
line and never let one start a workflow command; ``--format github`` escapes them as the runner expects; SARIF
locations are percent-encoded URI references (validated against the SARIF schema, formats included) that
name files that exist, also when several trees are checked."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from urllib.parse import unquote

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from igg.interfaces.cli import main

SARIF_SCHEMA = Path(__file__).resolve().parents[1] / "sarif" / "sarif-schema-2.1.0.json"
HOSTILE = [
    "evil\n::error file=x.py,line=1::forged",
    "sp ace#frag?q=1%41",
    "::warning::start",
    "rtl\u202egpj",
    "caf\u00e9",
    "c:colon",
]
"""File names (before ``.py``) of the hostile tree: a workflow command after a newline, characters a URI reads
as a fragment, query or escape, a leading ``::``, a reordering character, non-ASCII, a scheme-like colon."""
URI_REFERENCE = re.compile(r"^(?:[A-Za-z0-9\-._~/]|%[0-9A-F]{2})*$")


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


@pytest.fixture
def hostile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository with two trees, ``src/app`` (hostile file names importing ``util.db``) and ``lib/util``,
    and a rule forbidding app -> util; one commit, then one more hostile file in the work tree."""
    (tmp_path / "src" / "app").mkdir(parents=True)
    (tmp_path / "lib" / "util").mkdir(parents=True)
    (tmp_path / "src" / "app" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "lib" / "util" / "__init__.py").write_text("", encoding="utf-8")
    (tmp_path / "lib" / "util" / "db.py").write_text("x = 1\n", encoding="utf-8")
    for name in HOSTILE:
        (tmp_path / "src" / "app" / f"{name}.py").write_text("import util.db\n", encoding="utf-8")
    (tmp_path / "igg.toml").write_text(
        '[[rules]]\nname = "app-not-util"\nkind = "forbidden"\nfrom = "app*"\nto = "util*"\n',
        encoding="utf-8",
    )
    git(tmp_path, "init", "-q")
    git(tmp_path, "config", "user.email", "t@example.com")
    git(tmp_path, "config", "user.name", "t")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "one")
    (tmp_path / "src" / "app" / "new\n::error::added.py").write_text("import util.db\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("IGG_STORE", str(tmp_path / "store.sqlite"))
    return tmp_path


def commands(text: str) -> list[str]:
    """The lines of a log the GitHub Actions runner would run as workflow commands (it trims leading
    spaces)."""
    return [line for line in text.splitlines() if line.lstrip().startswith("::")]


def test_the_text_report_and_the_since_listings_cannot_start_a_workflow_command(
    hostile: Path, capsys
) -> None:
    """Issue 47: a file name holding a newline and ``::error ...`` printed a line the runner executes."""
    assert main(["check", "src/app", "lib/util", "--since", "HEAD"]) == 1
    out = capsys.readouterr().out
    assert commands(out) == []
    violations = [line for line in out.splitlines() if line.startswith("error: ")]
    assert len(violations) == len(HOSTILE) + 1
    assert "evil\\n::error file=x.py,line=1::forged" in out
    assert main(["map-code", "src/app", "lib/util", "--since", "HEAD"]) == 0
    listing = capsys.readouterr().out
    assert commands(listing) == [] and "new\\n::error::added" in listing
    (hostile / "src" / "app" / "link\n::error::skipped.py").symlink_to("/etc/passwd")
    (hostile / "src" / "app" / "bad\n::error::syntax.py").write_text("def (:\n", encoding="utf-8")
    assert main(["map-code", "src/app", "lib/util", "--no-store"]) == 0
    mapped = capsys.readouterr()
    assert commands(mapped.out + mapped.err) == [] and "link\\n::error::skipped" in mapped.err
    assert main(["cycles", "src/app", "lib/util"]) == 0
    assert commands(capsys.readouterr().out) == []


def test_github_annotations_are_one_command_each_at_files_that_exist(hostile: Path, capsys) -> None:
    """Issue 47: with several paths checked, the annotations named files that do not exist."""
    assert main(["check", "src/app", "lib/util", "--format", "github"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(HOSTILE) + 1 and all(line.startswith("::error file=") for line in lines)
    for line in lines:
        props = line[len("::error ") :].split("::", 1)[0]
        file = unquote(dict(p.split("=", 1) for p in props.split(","))["file"])
        assert (hostile / file).is_file(), file


def test_sarif_locations_are_uri_references_to_files_that_exist(hostile: Path) -> None:
    """Issue 47: ``artifactLocation.uri`` was not percent-encoded (a space or ``#`` named another file), and
    pointed at files that do not exist when several paths were checked."""
    assert main(["check", "src/app", "lib/util", "--sarif", "out.sarif", "--json"]) == 1
    log = json.loads((hostile / "out.sarif").read_text(encoding="utf-8"))
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER).validate(log)
    uris = [
        loc["physicalLocation"]["artifactLocation"]["uri"]
        for result in log["runs"][0]["results"]
        for loc in result["locations"]
    ]
    assert len(uris) == len(HOSTILE) + 1
    for uri in uris:
        assert URI_REFERENCE.match(uri), uri
        assert jsonschema.Draft7Validator.FORMAT_CHECKER.conforms(uri, "uri-reference"), uri
        assert (hostile / unquote(uri)).is_file(), uri
    assert "src/app/sp%20ace%23frag%3Fq%3D1%2541.py" in uris and "src/app/c%3Acolon.py" in uris


def test_a_single_tree_keeps_its_folder_prefix(hostile: Path) -> None:
    assert main(["check", "src", "--sarif", "one.sarif", "--json"]) == 1
    log = json.loads((hostile / "one.sarif").read_text(encoding="utf-8"))
    uris = {
        loc["physicalLocation"]["artifactLocation"]["uri"]
        for result in log["runs"][0]["results"]
        for loc in result["locations"]
    }
    assert all(uri.startswith("src/app/") and (hostile / unquote(uri)).is_file() for uri in uris), uris


@given(st.text())
def test_a_plain_log_value_is_one_line_that_cannot_begin_a_command(text: str) -> None:
    from igg.rules.github import plain

    shown = plain(text)
    assert len(shown.splitlines()) <= 1 and not shown.startswith(":")
    assert not re.search("[\\x00-\\x1f\\x7f-\\x9f\\u2028\\u2029\\u202a-\\u202e]", shown)
    if text.isascii() and text.isprintable() and not text.startswith(":"):
        assert shown == text  # an ordinary name is shown as it is
