"""``--since REF``: a git fixture of three commits. Each change's added and removed dependencies (module and
package level, with their lines) are exactly those of diffing two fresh maps of the two checkouts; the ratchet
(``--new-only``) fails only on the violation a change introduces and lists the old one as known."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from igg.codemap.cache import FactsCache
from igg.interfaces.cli import main
from igg.mapping.changes import changes
from igg.mapping.depgraph import state_lines
from igg.mapping.since import inside, tree_state
from igg.rules.depgraph import from_state
from igg.service import dependency_changes, map_code
from tests.support.shop import RULES, git

COMMITS = [
    {  # 1: the old violation (util -> db) is already there
        "shop/__init__.py": "",
        "shop/api/__init__.py": "",
        "shop/api/views.py": "from shop.service import orders\n",
        "shop/service/__init__.py": "",
        "shop/service/orders.py": "from shop.db import models\n",
        "shop/db/__init__.py": "",
        "shop/db/models.py": "import sqlite3\n",
        "shop/util.py": "from shop.db import models\n",
    },
    {  # 2: service -> api (new violation), api.views stops importing service, a new module imports json
        "shop/service/orders.py": "from shop.db import models\nfrom shop.api import views\n",
        "shop/api/views.py": "import json\n",
        "shop/api/extra.py": "from shop.db.models import x\nfrom shop import util\n",
    },
    {  # 3: nothing breaks anew: extra goes, orders drops db
        "shop/api/extra.py": None,
        "shop/service/orders.py": "\n\nfrom shop.api import views\n",
    },
]


def apply(repo: Path, files: dict[str, str | None]) -> None:
    for rel, text in files.items():
        path = repo / rel
        if text is None:
            path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "t@example.com")
    git(repo, "config", "user.name", "t")
    (repo / "igg.toml").write_text(RULES, encoding="utf-8")
    for i, files in enumerate(COMMITS, 1):
        apply(repo, files)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", f"commit {i}")
    monkeypatch.chdir(repo)
    monkeypatch.setenv("IGG_STORE", str(tmp_path / "store.sqlite"))
    return repo


def fresh(repo: Path, commit: str, where: Path):
    """The rules' graph of a fresh ``igg map-code`` (the loop) of ``commit`` checked out into ``where``."""
    git(repo, "worktree", "add", "-q", "--detach", str(where), commit)
    result, _ = map_code([where / "shop"])
    model = tree_state([where / "shop"], FactsCache(None)).model
    return from_state(result.state, state_lines(result.state, model))


def shown(found):
    return sorted(
        (c.level, c.source, c.target, tuple((h.edge, h.file, h.line) for h in c.edges)) for c in found
    )


@pytest.mark.parametrize("commit", [2, 3])
def test_since_reports_exactly_what_diffing_two_fresh_maps_reports(
    repo: Path, tmp_path: Path, commit: int
) -> None:
    git(repo, "checkout", "-q", f"HEAD~{3 - commit}")
    added, removed = dependency_changes([repo / "shop"], "HEAD~1")
    before = fresh(repo, "HEAD~1", tmp_path / "before")
    after = fresh(repo, "HEAD", tmp_path / "after")
    want_added, want_removed = changes(before, after)
    assert shown(added) == shown(want_added) and shown(removed) == shown(want_removed)
    modules = {(c.source, c.target) for c in added if c.level == "module"}
    gone = {(c.source, c.target) for c in removed if c.level == "module"}
    if commit == 2:
        assert modules == {
            ("shop.service.orders", "shop.api.views"),
            ("shop.api.views", "json"),
            ("shop.api.extra", "shop.db.models"),
            ("shop.api.extra", "shop.util"),
        }
        assert gone == {("shop.api.views", "shop.service.orders")}
        packages = {(c.source, c.target) for c in added if c.level == "package"}
        assert ("shop.service", "shop.api") in packages and ("shop.api", "shop.db") in packages
        (orders,) = [c for c in added if c.source == "shop.service.orders" and c.level == "module"]
        assert [(h.file, h.line) for h in orders.edges] == [("service/orders.py", 2)]
    else:
        assert modules == set()
        assert gone == {
            ("shop.api.extra", "shop.db.models"),
            ("shop.api.extra", "shop.util"),
            ("shop.service.orders", "shop.db.models"),
        }


def test_the_ratchet_fails_only_on_the_new_violation(repo: Path, capsys) -> None:
    git(repo, "checkout", "-q", "HEAD~1")  # commit 2: adds service -> api
    assert main(["check", "shop", "--since", "HEAD~1", "--new-only", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    status = {(v["rule"], v["status"]) for v in report["violations"]}
    assert status == {("layered", "new"), ("util-not-db", "known")}
    git(repo, "checkout", "-q", "main")  # commit 3: the same violations, none new
    assert main(["check", "shop", "--since", "HEAD~1", "--new-only"]) == 0
    out = capsys.readouterr().out
    assert "[known]" in out and "[new]" not in out and "igg check passed: 2 violations (0 new, 2 known" in out
    assert main(["check", "shop", "--since", "HEAD~1"]) == 1  # without the ratchet, known ones fail too
    capsys.readouterr()
    assert main(["check", "shop", "--since", "nope", "--new-only"]) == 2
    assert "'nope' is no commit" in capsys.readouterr().err


def test_map_code_since_lists_added_and_removed_dependencies(repo: Path, capsys) -> None:
    git(repo, "checkout", "-q", "HEAD~1")
    assert main(["map-code", "shop", "--since", "HEAD~1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {(c["source"], c["target"]) for c in out["removed"] if c["level"] == "module"} == {
        ("shop.api.views", "shop.service.orders")
    }
    assert main(["map-code", "shop", "--since", "HEAD~1"]) == 0
    text = capsys.readouterr().out
    assert "+ module shop.service.orders -> shop.api.views (service/orders.py:2)" in text
    assert "- module shop.api.views -> shop.service.orders (api/views.py:1)" in text


def test_since_skips_links_and_assets_and_unpacks_only_the_files_the_walk_reads(
    repo: Path, monkeypatch, capsys
) -> None:
    """Issue 47: a commit holding a symbolic link to an absolute path or outside the tree crashed ``--since``
    (a traceback, exit 1), and the whole tree of the ref was read into memory and unpacked, assets included
    (+300 MB for a 150 MB asset; ENOSPC in a 64 MB /dev/shm). Links are skipped as the work-tree walk skips
    them, and only the files a walk reads are written to the scratch folder."""
    import igg.mapping.since as since

    (repo / "shop" / "passwd.py").symlink_to("/etc/passwd")
    (repo / "shop" / "outside.py").symlink_to("../../outside.py")
    (repo / "shop" / "logo.bin").write_bytes(b"\0" * 3_000_000)
    (repo / "shop" / "notes.txt").write_text("not code\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "links and assets")
    apply(repo, {"shop/util.py": "import os\n"})
    unpacked: list[str] = []
    walk_tree = since.tree_state

    def recording(paths, cache, **options):
        if "igg-since-" in str(paths[0]):
            top = paths[0].parent
            unpacked.extend(sorted(str(p.relative_to(top)) for p in top.rglob("*") if not p.is_dir()))
        return walk_tree(paths, cache, **options)

    monkeypatch.setattr(since, "tree_state", recording)
    monkeypatch.setattr(since, "commit_facts", lambda *a, **k: None)  # the general path: REF's tree unpacked
    assert main(["check", "shop", "--since", "HEAD"]) == 1
    out = capsys.readouterr().out
    assert "removed module dependency: shop.util -> shop.db.models" in out
    assert unpacked == sorted(COMMITS[0]), unpacked  # no link, no asset, no text file
    assert main(["map-code", "shop", "--since", "HEAD"]) == 0
    assert "- module shop.util -> shop.db.models" in capsys.readouterr().out


@pytest.mark.parametrize("value", ["--since=", "--since=--", "--since= ", "--since=-x"])
@pytest.mark.parametrize("command", ["check", "map-code"])
def test_an_empty_or_option_like_since_exits_2_in_one_line(
    repo: Path, capsys, command: str, value: str
) -> None:
    """Issue 47: ``--since ''`` (an unset CI variable) and ``--since=--`` gave a traceback, or a plain map
    with exit 0."""
    assert main([command, "shop", value]) == 2
    captured = capsys.readouterr()
    assert "is no git ref" in captured.err and "Traceback" not in captured.err and captured.out == ""


def test_a_path_of_the_ref_tree_is_written_only_inside_the_scratch_folder(tmp_path: Path) -> None:
    """The lexical check that replaced resolving each written path: never true for a path that resolves
    outside, and true for every plain relative path (every path of a sound git tree)."""
    import itertools

    top = (tmp_path / "top").resolve()
    top.mkdir()
    parts = ["a", "b.py", "..", ".", "", "x..y"]
    for n in range(1, 5):
        for combo in itertools.product(parts, repeat=n):
            path = "/".join(combo)
            for p in (path, "/" + path):
                if inside(p):
                    assert (top / p).resolve().is_relative_to(top), p
    assert inside("src/app/main.py") and inside("x..y/a.go")
    assert not any(inside(p) for p in ("../x.py", "a/../../x.py", "/etc/passwd", "a//b.py", "./a.py", "a/"))
