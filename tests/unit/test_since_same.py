"""``igg check --since REF`` judges the commit by the work tree's own graph when the commit's files give that
graph (``igg.mapping.since.same_at_commit``), without unpacking the commit's tree: pinned here to the general
path (the commit's tree unpacked, walked, parsed and linked) on random changes of a git work tree, committed
or not. Each case runs the check both ways and compares the whole report; a case the fast path may answer
(bodies, files no walk reads) must be answered by it, and a change of imports alone by linking the commit's
facts (``relinked_at_commit``), or the pin would hold by never taking them."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import igg.mapping.since as since
from igg.mapping.checking import run_check

RULES = """
[[rules]]
name = "layered"
kind = "layers"
layers = ["shop.api", "shop.service", "shop.db"]
[[rules]]
name = "util-not-db"
kind = "forbidden"
from = "shop.util"
to = "shop.db"
[[rules]]
name = "no-cycles"
kind = "acyclic"
level = "module"
"""

TREE = {
    "shop/__init__.py": "",
    "shop/api/__init__.py": "",
    "shop/api/views.py": "from shop.service import orders\n\n\ndef view(x):\n    return orders.total(x)\n",
    "shop/service/__init__.py": "",
    "shop/service/orders.py": "from shop.db import models\n\n\ndef total(x):\n    return x + 1\n",
    "shop/db/__init__.py": "",
    "shop/db/models.py": "import sqlite3\n\nfrom shop.api import views\n\n\ndef row():\n    return 1\n",
    "shop/util.py": "from shop.db import models\n\n\ndef helper():\n    return 2\n",
    "shop/web/app.ts": "import { f } from './lib';\n\nexport function g(): number {\n  return f();\n}\n",
    "shop/web/lib.ts": "export function f(): number {\n  return 1;\n}\n",
    "shop/README.md": "the shop\n",
}

BODY = {  # changes that leave every import and declaration where it was: the fast path answers
    "body": ("shop/service/orders.py", "from shop.db import models\n\n\ndef total(x):\n    return x + 2\n"),
    "ts body": (
        "shop/web/lib.ts",
        "export function f(): number {\n  return 2;\n}\n",
    ),
    "readme": ("shop/README.md", "the shop, changed\n"),
    "declaration": (  # a graph of imports has no functions
        "shop/db/models.py",
        "import sqlite3\n\nfrom shop.api import views\n\n\ndef rows():\n    return 1\n",
    ),
    "asset": ("shop/logo.png", "\x89PNG not code\n"),
}
OTHER = {  # changes the general path answers (or may: a new import, a new file, an ignore file)
    "import added": (
        "shop/util.py",
        "from shop.db import models\nfrom shop.api import views\n\n\ndef helper():\n    return 2\n",
    ),
    "import moved": ("shop/util.py", "\nfrom shop.db import models\n\n\ndef helper():\n    return 2\n"),
    "import gone": ("shop/db/models.py", "import sqlite3\n\n\ndef row():\n    return 1\n"),
    "new module": ("shop/api/extra.py", "from shop.db import models\n"),
    "deleted": ("shop/api/views.py", None),
    "gitignore": ("shop/.gitignore", "web/lib.ts\n"),
    "ts import": ("shop/web/app.ts", "import { f } from './lib';\nimport { h } from './other';\n"),
    "to binary": ("shop/service/orders.py", "from shop.db import models\0\n"),
}


RELINKED = {"import added", "import moved", "import gone", "ts import"}
"""Of those, changes of a file's content alone: the commit's graph is linked from the work tree's facts."""


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def write(repo: Path, rel: str, text: str | None) -> None:
    path = repo / rel
    if text is None:
        path.unlink()
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")


@pytest.fixture(scope="module")
def origin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("since-same") / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "t@example.com")
    git(repo, "config", "user.name", "t")
    for rel, text in TREE.items():
        write(repo, rel, text)
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
