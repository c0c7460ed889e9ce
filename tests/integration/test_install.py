"""A built wheel installs into a fresh virtualenv and works there: map-code finds its schema, run and serve
start."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtualenv holding IGG from its wheel (dependencies borrowed from the test environment)."""
    base = tmp_path_factory.mktemp("install")
    source = base / "source"
    # Build from a clean copy, as a user's `pip install .` would see it (no .venv, no build debris).
    shutil.copytree(
        ROOT,
        source,
        ignore=shutil.ignore_patterns(
            ".venv",
            ".git",
            "build",
            "dist",
            "*.egg-info",
            "__pycache__",
            ".mypy_cache",
            ".pytest_cache",
            ".hypothesis",
            "_schemas",
            "test-artifacts",
            "runs",
            "out",
        ),
    )
    wheels = base / "wheels"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--isolated",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--wheel-dir",
            str(wheels),
            str(source),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    env_dir = base / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)  # ensurepip: offline, bundled
    python = env_dir / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    # The dependencies come from this test environment's site-packages (a path line, so its editable
    # igg finder is not loaded); IGG itself only from the wheel.
    Path(site, "borrowed-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    wheel = next(wheels.glob("igg-*.whl"))
    subprocess.run(
        [
            str(python),
            "-m",
            "pip",
            "--isolated",
            "install",
            "--quiet",
            "--no-deps",
            "--disable-pip-version-check",
            str(wheel),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    shutil.rmtree(source)
    return env_dir


def _igg(env_dir: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{env_dir / 'bin'}:{env.get('PATH', '')}"
    return subprocess.run(
        [str(env_dir / "bin" / "igg"), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def test_wheel_ships_the_code_schema_and_map_code_works(installed: Path, tmp_path: Path) -> None:
    shutil.copytree(ROOT / "fixtures" / "code", tmp_path / "code")
    result = _igg(installed, "map-code", "code", "--json", "--out", "mapped", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["nodes"] > 10
    where = subprocess.run(
        [
            str(installed / "bin" / "python"),
            "-c",
            "import igg, igg.codemap.schema as s; print(igg.__file__); print(s.CODE_SCHEMA_PATH)",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert str(installed) in where[0], "igg was imported from the checkout, not the wheel"
    assert where[1].endswith("igg/_schemas/code-graph.json")
    assert Path(where[1]).read_text() == (ROOT / "schemas" / "code-graph.json").read_text()


def test_wheel_runs_a_request_and_serve_has_help(installed: Path, tmp_path: Path) -> None:
    shutil.copytree(ROOT / "fixtures" / "auth", tmp_path / "auth")
    run = _igg(
        installed, "run", "auth/request.json", "--agent", "code", "--json", "--out", "run", cwd=tmp_path
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["stop_reason"] in {"finished", "max_iterations", "stuck", "limits_reached"}
    version = _igg(installed, "--version", cwd=tmp_path)
    assert version.returncode == 0 and version.stdout.startswith("igg "), version.stdout + version.stderr
    demo = _igg(
        installed,
        "run",
        "auth/request.json",
        "--agent",
        "auto",
        "--out",
        "demo",
        "--export",
        "mermaid:demo/graph.mmd",
        cwd=tmp_path,
    )  # what scripts/demo runs first
    assert demo.returncode == 0 and (tmp_path / "demo" / "graph.mmd").is_file(), demo.stderr
    serve = _igg(installed, "serve", "--help", cwd=tmp_path)
    assert serve.returncode == 0 and "--port" in serve.stdout


def test_wheel_metadata_names_licence_and_classifiers(installed: Path) -> None:
    out = subprocess.run(
        [
            str(installed / "bin" / "python"),
            "-c",
            "from importlib.metadata import metadata; m = metadata('igg'); "
            "print(m['License-Expression']); print(len(m.get_all('Classifier')))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert out[0] == "MIT"
    assert int(out[1]) >= 5
