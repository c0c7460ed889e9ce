"""A resumed run continues the walk over the context chunks with the chunk AFTER the last committed
iteration's (``ResumePoint.chunk_cursor`` is where the walk continues, not the chunk already read), whichever
way it is resumed: ``igg resume`` (through ``igg.service.continue_session``, as HTTP and MCP) or the Python
call.

The interrupted session is real: a child process runs ``igg.service.run_request`` with the store and
``SIGKILL``s itself once iteration 1 is committed (the technique of tests/integration/test_resume_window.py).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from igg.service import continue_session
from igg.store import SessionStore, resume_point
from tests.conftest import FIXTURES, ROOT
from tests.integration.test_resume_window import CHILD

FILES = ["a.py", "b.py", "c.py"]


def interrupted(tmp_path: Path, session_id: str) -> tuple[Path, Path]:
    """A session over three one-file chunks, killed after iteration 1 was committed."""
    payload = json.loads((FIXTURES / "seed_request.json").read_text())
    payload["session_id"] = session_id
    body = "\n".join(f"x{i} = {i}  # filler to give every file a chunk of its own" for i in range(6))
    payload["context_data"] = "".join(f"# File: {name}\n{body}\n" for name in FILES)
    payload["config"].update({"max_iterations": 3, "context": {"chunk_tokens": 150}})
    request = tmp_path / "request.json"
    request.write_text(json.dumps(payload))
    turns = [
        {
            "reasoning": f"turn {i}",
            "actions": [
                {"type": "ADD_NODE", "label": "Class", "properties": {"name": f"C{i}", "package": "p"}}
            ],
        }
        for i in range(1, 4)
    ]
    transcript = tmp_path / "turns.jsonl"
    transcript.write_text("".join(json.dumps(t) + "\n" for t in turns))
    store = tmp_path / "s.sqlite"
    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(request), str(transcript), str(store), "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert child.returncode == -signal.SIGKILL, (child.stdout, child.stderr)
    return store, transcript


def chunks_read(store_path: Path, session_id: str) -> list[Any]:
    store = SessionStore(store_path)
    try:
        return [s.chunk for s in store.steps(session_id, with_records=False) if s.kind == "iteration"]
    finally:
        store.close()


def test_the_resume_point_is_the_next_chunk(tmp_path):
    store_path, _ = interrupted(tmp_path, "rc-0")
    store = SessionStore(store_path)
    try:
        point = resume_point(store, "rc-0")
    finally:
        store.close()
    assert (point.next_iteration, point.chunk_cursor) == (2, 1)


@pytest.mark.parametrize("how", ["cli", "service"])
def test_a_resumed_run_reads_the_chunks_it_had_not_read(tmp_path, how):
    store_path, _ = interrupted(tmp_path, f"rc-{how}")
    assert chunks_read(store_path, f"rc-{how}") == ["a.py"]
    if how == "cli":
        done = subprocess.run(
            [sys.executable, "-m", "igg", "resume", f"rc-{how}", "--store", str(store_path), "--json"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["iterations"] == 3
    else:
        result = continue_session(store_path, f"rc-{how}")
        assert result.stop_reason == "max_iterations"
    assert chunks_read(store_path, f"rc-{how}") == FILES
