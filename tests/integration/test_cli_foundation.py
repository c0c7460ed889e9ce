"""`igg validate` and `igg schema` as a user runs them (a real subprocess)."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import FIXTURES, ROOT


def igg(*args: str, cwd=ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "igg", *args], capture_output=True, text=True, cwd=cwd, timeout=60
    )


def test_validate_accepts_the_seed_payload():
    result = igg("validate", str(FIXTURES / "seed_request.json"))
    assert result.returncode == 0, result.stderr
    assert "valid. session_id=uuid-1234" in result.stdout


def test_validate_lists_every_problem_with_its_path_and_exits_2(tmp_path):
    payload = json.loads((FIXTURES / "seed_request.json").read_text())
    payload["config"]["constraints"]["max_nodez"] = 1
    payload["extra"] = True
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(payload))
    result = igg("validate", str(path))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "config.constraints.max_nodez: unknown key 'max_nodez'" in result.stderr
    assert (
        "extra: unknown key 'extra'; allowed here: session_id, goal_prompt, context_data, config, seed_data"
        in result.stderr
    )


def test_validate_of_a_missing_or_broken_file_is_a_clear_error(tmp_path):
    result = igg("validate", str(tmp_path / "nope.json"))
    assert result.returncode == 2 and "cannot read" in result.stderr and "Traceback" not in result.stderr
    broken = tmp_path / "broken.json"
    broken.write_text('{"goal_prompt": ')
    result = igg("validate", str(broken))
    assert result.returncode == 2 and "not valid JSON" in result.stderr


def test_schema_prints_the_files_in_schemas():
    for name in ("request", "response"):
        result = igg("schema", name)
        assert result.returncode == 0
        assert result.stdout == (ROOT / "schemas" / f"{name}.schema.json").read_text()
