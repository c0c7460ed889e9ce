"""``igg check --since REF`` judges the commit by the work tree's own graph when the commit's files give that
graph (``igg.mapping.since.same_at_commit``), without unpacking the commit's tree: pinned here to the general
path (the commit's tree unpacked, walked, parsed and linked) on random changes of a git work tree, committed
or not. Each case runs the check both ways and compares the whole report; a case the fast path may answer
(bodies, files no walk reads) must be answered by it, and a change of imports alone by linking the commit's
facts (``relinked_at_commit``), or the pin would hold by never taking them."""

from __future__ import annotations

import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import igg.mapping.checking as checking
import igg.mapping.kept as kept
import igg.mapping.since as since
from igg.codemap.cache import FactsCache
from igg.codemap.walk import walk
from igg.mapping.checking import run_check
from igg.mapping.touched import in_walk_order
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
OTHER = {**shop.IMPORTS, **shop.FILES, **shop.ADDED, **shop.REMOVED}
RELINKED = {*shop.IMPORTS, *shop.ADDED, *shop.REMOVED}
"""Of those, changes of a file's content alone, and files added or removed beside others of their language:
the commit's graph is linked from the work tree's facts."""


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


GO_SIBLING = ("shop/tool/lib/extra.go", "package lib\n\nfunc Extra() int {\n\treturn Run(2)\n}\n")


@pytest.mark.parametrize("commit", [True, False], ids=["committed", "deleted"])
@pytest.mark.parametrize(
    "name",
    [*sorted(shop.REMOVED), "go file removed", "moved", "ignored", "package removed", "last go file removed"],
)
def test_a_file_removed_since_comes_back_in_the_commits_state(
    origin: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, commit: bool
) -> None:
    """A file removed beside others of its language (committed since, or deleted in the work tree) is read
    from the commit, named as the walk names it there (Python by the folders on disk, Go by its folder's
    import path, TypeScript by its path) and linked with the work tree's facts where the walk read it
    (``relinked``); the report is the general path's. A package's ``__init__.py`` or a folder's last file
    may rename other files, and a file the ignore files leave out was no part of the commit's graph: the
    general path."""
    repo = tmp_path / "repo"
    subprocess.run(["git", "clone", "-q", str(origin), str(repo)], check=True)
    before = {
        "go file removed": [GO_SIBLING],  # the folder keeps lib.go
        "ignored": [
            ("shop/.gitignore", "db/secret.py\n"),
            ("shop/db/secret.py", "from shop.api import views\n"),
        ],
    }.get(name, [])
    for edit in before:
        write(repo, *edit)
    if before:
        git(repo, "add", "-A", "-f")
        git(repo, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m", "before")
    gone = {"go file removed": GO_SIBLING, "ignored": ("shop/db/secret.py", None)}.get(name)
    gone = gone or OTHER[name if name != "moved" else "deleted"]
    if name == "moved":  # a file removed and one added: views.py into the service package
        write(repo, "shop/service/views.py", (repo / gone[0]).read_text(encoding="utf-8"))
    write(repo, gone[0], None)
    if commit:
        git(repo, "add", "-A")
        git(repo, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m", "removed")
    fast, general, baseline = both_ways(repo, monkeypatch, "HEAD~1" if commit else "HEAD")
    assert fast == general
    assert baseline == ("relinked" if name in {*shop.REMOVED, "go file removed", "moved"} else "mapped")


def test_a_removed_file_takes_the_place_the_walk_reads_it_at(tmp_path: Path) -> None:
    """``in_walk_order`` puts each file back where the walk itself reads it, for every file of the shop whose
    folder keeps another, alone and all of one folder at once."""
    root = tmp_path / "tree"
    shop.make(root)
    write(root, *shop.ADDED["new ts module"])
    write(root, *GO_SIBLING)
    paths = [f.path for f in walk([root]).files]
    folders = Counter(p.rpartition("/")[0] for p in paths)
    movable = [p for p in paths if folders[p.rpartition("/")[0]] > 1]
    assert len(movable) >= 8
    for path in movable:
        assert in_walk_order([p for p in paths if p != path], [path]) == paths, path
    for folder, count in folders.items():
        if count > 2:
            mine = [p for p in paths if p.rpartition("/")[0] == folder][1:]
            assert in_walk_order([p for p in paths if p not in mine], mine) == paths, folder


def test_a_commit_whose_tree_the_last_check_kept_is_judged_by_that_graph(
    origin: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each commit checked in turn with a store (``--since HEAD~1``, the kept graph then being the parent's):
    an import edit committed splices the changed files' edges into the kept graph (``igg.mapping.spliced``:
    nothing else another file's imports read of them changed; a TypeScript export that went with it is none: a
    link of imports reads paths), where every file was linked again, and the commit is judged by the kept
    graph itself (``baseline: kept``), where it was linked a second time; two commits since the last check
    link the commit as before (``relinked``). A file added or removed beside others of its language is spliced
    too, with the files whose imports may find it, and the commit judged by the kept graph. Each report equals
    the general path's (the commit's tree unpacked and mapped)."""
    repo = tmp_path / "repo"
    subprocess.run(["git", "clone", "-q", str(origin), str(repo)], check=True)
    store = tmp_path / "s.codefacts"
    run_check(repo / "rules.toml", paths=[repo / "shop"], cache=FactsCache(store))  # keeps the graph
    linked: list[str] = []
    relink = since.relink
    for module in (since, kept):  # the work tree's graph linked again (``kept``), the commit's (``since``)
        monkeypatch.setattr(module, "relink", lambda *a, **k: linked.append("link") or relink(*a, **k))
    splice = kept.spliced_graph

    def spliced(*args: Any, **kwargs: Any) -> Any:
        found = splice(*args, **kwargs)
        linked.extend(["splice"] if found is not None else [])
        return found

    monkeypatch.setattr(kept, "spliced_graph", spliced)
    judged: list[int] = []  # the graphs each check judged
    judge = checking.check
    monkeypatch.setattr(
        checking, "check", lambda g, *a, **k: judged.append(len(g.edges)) or judge(g, *a, **k)
    )
    compared: list[Any] = []  # the modules ``changes`` compared the graphs within (None: the whole graphs)
    compare = checking.changes
    monkeypatch.setattr(checking, "changes", lambda b, h, w=None: compared.append(w) or compare(b, h, w))
    rules = (repo / "rules.toml").read_text(encoding="utf-8")
    for names, baseline, how, new_rules, within in (
        (["import added"], "kept", "splice", False, None),
        (["ts import"], "kept", "splice", False, None),  # its export went too: no link of imports reads it
        (["go import", "import gone"], "kept", "splice", True, None),  # two files of one commit
        (["import moved"], "kept", "splice", False, None),  # on another line: the graph looks at lines
        # files added and removed: spliced with the files whose imports may find them
        (["new module"], "kept", "splice", False, {"db/extra.py"}),  # no import names it
        (["deleted"], "kept", "splice", False, {"api/views.py", "db/extra.py"}),  # extra.py imported it
        (["new go file"], "kept", "splice", False, {"tool/lib/extra.go", "tool/main.go"}),  # its package's
        (["new ts module"], "kept", "splice", False, {"web/other.ts", "web/app.ts"}),  # app.ts: './other'
        (["ts module removed"], "kept", "splice", False, {"web/lib.ts", "web/app.ts", "web/other.ts"}),
    ):
        for name in names:
            write(repo, *shop.EDITS[name])
        if new_rules:  # the violations the last check kept are of other rules: the commit's graph is judged
            rules += '\n[[rules]]\nname = "no-package-cycles"\nkind = "acyclic"\nlevel = "package"\n'
            (repo / "rules.toml").write_text(rules, encoding="utf-8")
        _commit(repo)
        linked.clear()
        judged.clear()
        fast = run_check(repo / "rules.toml", paths=[repo / "shop"], since="HEAD~1", cache=FactsCache(store))
        assert (fast.baseline, linked) == (baseline, [how]), names
        # the commit's graph is the one the last check judged: its violations' keys were kept with it
        assert len(judged) == (2 if new_rules else 1), names
        # and the dependencies compared for the modules spliced alone
        spliced = within or {shop.EDITS[name][0].removeprefix("shop/") for name in names}
        assert compared[-1] == {f"module:{path}" for path in spliced}, names
        general = _mapped(repo, monkeypatch)
        assert fast.model_dump(exclude={"baseline", "kept"}) == general, names
    write(repo, *shop.IMPORTS["ts import"][:1], "import { f } from './lib';\n")  # two commits unchecked
    _commit(repo)
    write(repo, *shop.IMPORTS["import gone"][:1], "import os\n\n\ndef row():\n    return 1\n")
    _commit(repo)
    fast = run_check(repo / "rules.toml", paths=[repo / "shop"], since="HEAD~1", cache=FactsCache(store))
    assert fast.baseline == "relinked"
    assert fast.model_dump(exclude={"baseline", "kept"}) == _mapped(repo, monkeypatch)


def _commit(repo: Path) -> None:
    git(repo, "add", "-A")
    git(repo, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m", "c")


def _mapped(repo: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    """The report of ``check --since HEAD~1`` by the general path, as data (without ``baseline`` and
    ``kept``)."""
    with monkeypatch.context() as m:
        m.setattr(since, "commit_facts", lambda *a, **k: None)
        general = run_check(repo / "rules.toml", paths=[repo / "shop"], since="HEAD~1")
    assert general.baseline == "mapped"
    return general.model_dump(exclude={"baseline", "kept"})
