"""The suite's tests of one ``xdist_group`` run on one worker (``tests/conftest.py``: each shared server
starts once per run; a docs page's blocks run in order in one copy). pytest-xdist's ``--dist loadgroup``
reads the group from the node id each worker rewrites; where the rewrite no longer takes (xdist 3.8 with
pytest 9.2's structured node ids: pytest-dev/pytest-xdist#1386) the groups are dropped silently (each shared
server starts on each worker, docs blocks run twice: measured, 100 CPU-seconds more), so this test fails."""

from __future__ import annotations

import pytest


@pytest.mark.xdist_group("groups-check")
def test_a_grouped_test_reaches_the_scheduler_with_its_group(request: pytest.FixtureRequest) -> None:
    if not getattr(request.config.option, "loadgroup", False):
        pytest.skip("not run by a worker of pytest -n N --dist loadgroup (scripts/test runs it so)")
    assert request.node.nodeid.endswith("@groups-check"), (
        f"{request.node.nodeid}: pytest-xdist dropped this test's xdist_group, and every other test's "
        "(pytest-dev/pytest-xdist#1386): install the pytest that pyproject.toml's dev extra allows "
        "(scripts/test does)"
    )
