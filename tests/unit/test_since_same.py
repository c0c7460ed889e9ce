"""``igg check --since REF`` judges the commit by the work tree's own graph when the commit's files give that
graph (``igg.mapping.since.same_at_commit``), without unpacking the commit's tree: pinned here to the general
path (the commit's tree unpacked, walked, parsed and linked) on random changes of a git work tree, committed
or not. Each case runs the check both ways and compares the whole report; a case the fast path may answer
(bodies, files no walk reads) must be answered by it, and a change of imports alone by linking the commit's
facts (``relinked_at_commit``), or the pin would hold by never taking them."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import igg.mapping.since as since
from igg.mapping.checking import run_check
from tests.support import shop
from tests.support.shop import git, write

RULES = (
    shop.RULES
    + """
[[rules]]
name = "no-cycles"
kind = "acyclic"
level = "module"
"""
)
BODY = shop.BODIES
OTHER = {**shop.IMPORTS, **shop.FILES, **shop.ADDED}
RELINKED = {*shop.IMPORTS, *shop.ADDED}
"""Of those, changes of a file's content alone, and files added beside others of their language: the
commit's graph is linked from the work tree's facts."""


@pytest.fixture(scope="module")
def origin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("since-same") / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "t@example.com")
    git(repo, "config", "user.name", "t")
    shop.make(repo)
    (repo / "rules.toml").write_text(RULES, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "tree")
    return repo


def both_ways(
    repo: Path, monkeypatch: pytest.MonkeyPatch, ref: str = "HEAD"
) -> tuple[dict, dict, str | None]:
    """The check report (as JSON data) with the fast paths, without them (``commit_facts`` answering None:
    the commit's tree unpacked and mapped), and how the fast paths judged the commit (``baseline``)."""
    fast = run_check(repo / "rules.toml", paths=[repo / "shop"], since=ref)
    with monkeypatch.context() as m:
        m.setattr(since, "commit_facts", lambda *a, **k: None)
        general = run_check(repo / "rules.toml", paths=[repo / "shop"], since=ref)
    assert general.baseline == "mapped"
    return fast.model_dump(exclude={"baseline"}), general.model_dump(exclude={"baseline"}), fast.baseline


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    changes=st.lists(st.sampled_from(sorted(BODY) + sorted(OTHER)), min_size=0, max_size=3, unique=True),
    commit=st.booleans(),
)
def test_the_fast_path_reports_what_the_general_path_reports(
    origin: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, changes, commit
) -> None:
    repo = tmp_path_factory.mktemp("clone") / "repo"
    subprocess.run(["git", "clone", "-q", str(origin), str(repo)], check=True)
    for name in changes:
        write(repo, *{**BODY, **OTHER}[name])
    if commit:  # committed: the work tree is clean, and the check compares it with the commit before
        git(repo, "add", "-A")
        git(
            repo,
            "-c",
            "user.email=t@example.com",
            "-c",
            "user.name=t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "c",
        )
    fast, general, baseline = both_ways(repo, monkeypatch, "HEAD~1" if commit else "HEAD")
    assert fast == general
    last = {{**BODY, **OTHER}[name][0]: name for name in changes}.values()  # a later change of a file wins
    if all(name in BODY for name in last):
        assert baseline == "same", changes
    elif all(name in BODY or name in RELINKED for name in last):
        assert baseline == "relinked", changes
    else:
        assert baseline == "mapped", changes


def test_info_exclude_and_a_subfolder_root(
    origin: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Patterns in ``.git/info/exclude``, which an unpacked commit lacks, send the check down the general
    path; a body change under a mapped subfolder takes the fast path and reports what the general path
    does."""
    repo = tmp_path / "repo"
    subprocess.run(["git", "clone", "-q", str(origin), str(repo)], check=True)
    write(repo, *BODY["body"])
    fast, general, baseline = both_ways(repo, monkeypatch)
    assert baseline == "same" and fast == general
    assert {v["status"] for v in fast["violations"]} == {"known"} and fast["violations"]
    (repo / ".git" / "info" / "exclude").write_text("# a comment\nshop/util.py\n", encoding="utf-8")
    fast, general, baseline = both_ways(repo, monkeypatch)
    assert baseline == "mapped" and fast == general


def test_a_file_the_walk_skips_then_and_now_changes_nothing(
    origin: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Go test file or a binary the change edited is skipped by its bytes at both ends: REF is judged by the
    work tree's graph; one that the commit held as source goes down the general path."""
    repo = tmp_path / "repo"
    subprocess.run(["git", "clone", "-q", str(origin), str(repo)], check=True)
    write(repo, *BODY["binary edited"])
    fast, general, baseline = both_ways(repo, monkeypatch)
    assert baseline == "same" and fast == general
    write(repo, *OTHER["to binary"])  # a module then, a binary now
    fast, general, baseline = both_ways(repo, monkeypatch)
    assert baseline == "mapped" and fast == general


@pytest.mark.parametrize("commit", [True, False], ids=["committed", "untracked"])
@pytest.mark.parametrize("name", sorted(shop.ADDED) + ["new package", "new folder"])
def test_a_file_added_since_is_left_out_of_the_commits_state(
    origin: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, commit: bool
) -> None:
    """A file added beside others of its language (committed since, or not even tracked) is left out of the
    work tree's facts to link the commit's state (``relinked``), and the report is the general path's; a
    package's ``__init__.py`` or a folder's first file may rename the files below it: the general path."""
    repo = tmp_path / "repo"
    subprocess.run(["git", "clone", "-q", str(origin), str(repo)], check=True)
    write(repo, *OTHER[name])
    if commit:
        git(repo, "add", "-A")
        git(repo, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m", "added")
    fast, general, baseline = both_ways(repo, monkeypatch, "HEAD~1" if commit else "HEAD")
    assert fast == general
    assert baseline == ("relinked" if name in shop.ADDED else "mapped")
