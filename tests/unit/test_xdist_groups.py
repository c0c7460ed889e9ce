"""The suite's tests of one ``xdist_group`` run on one worker (``tests/conftest.py`` adds the groups: each
shared server starts once per run; a docs page's blocks run in order in one copy). pytest-xdist's ``--dist
loadgroup`` reads the group from the node id each worker rewrites; where the rewrite no longer takes (xdist
3.8 with pytest 9.2's structured node ids: pytest-dev/pytest-xdist#1386) the groups are dropped silently (each
shared server starts on each worker, docs blocks run twice: measured, 100 CPU-seconds more), so this test
fails: it runs a small suite grouped as ours is, on two workers, with the pytest and xdist installed."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

CONFTEST = """
import pytest

@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    for item in items:
        item.add_marker(pytest.mark.xdist_group("server" if "server" in item.name else item.path.stem))
"""
TESTS = "\n".join(f"def test_{kind}_{i}():\n    pass\n" for kind in ("server", "alone") for i in range(6))


def test_tests_of_one_group_run_on_one_worker(tmp_path: Path) -> None:
    for name, text in {"conftest.py": CONFTEST, "test_a.py": TESTS, "test_b.py": TESTS}.items():
        (tmp_path / name).write_text(text)
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "-v", "-p", "no:cacheprovider"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    ran = re.findall(r"\[(gw\d)\].*PASSED (\S+)", out.stdout)
    assert len(ran) == 24, out.stdout[-2000:]
    assert {worker for worker, _ in ran} == {"gw0", "gw1"}, "the suite ran on one worker: nothing was shown"
    workers: dict[str, set[str]] = {}
    for worker, test in ran:  # the group of the server's tests, and one group per module for the others
        group = "server" if "::test_server" in test else test.partition("::")[0]
        workers.setdefault(group, set()).add(worker)
    assert set(workers) == {"server", "test_a.py", "test_b.py"}
    assert all(len(used) == 1 for used in workers.values()), (
        f"pytest-xdist ran a group on two workers ({workers}): it drops xdist_group with this pytest "
        "(pytest-dev/pytest-xdist#1386); install the pytest that pyproject.toml's dev extra allows "
        "(scripts/test does)"
    )
