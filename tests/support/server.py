"""Start and stop a live ``igg`` server (serve, view, mcp --transport http) for tests: one copy of the port
picking, the clean environment, the wait for it to answer and the stop."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from tests.conftest import ROOT

SECRETS = ("IGG_API_TOKEN", "OPENAI_API_KEY", "OPENAI_BASE_URL")
"""Variables of the test's own environment a server must not inherit."""

START_DEADLINE = 90.0
"""Seconds a server may take to answer: a loaded machine starts Python slowly."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def clean_env(extra: dict[str, str] | None = None, *, drop: Sequence[str] = SECRETS) -> dict[str, str]:
    """This process's environment without ``drop``, plus ``extra``."""
    return {k: v for k, v in os.environ.items() if k not in drop} | (extra or {})


def wait_until(
    ready: Callable[[], bool], proc: subprocess.Popen[Any], what: str, log: Callable[[], str] = lambda: ""
) -> None:
    """Poll ``ready`` (transport errors count as not yet) until it holds; fail naming ``what`` (and the
    server's log) if the server exits or the deadline passes first."""
    deadline = time.monotonic() + START_DEADLINE
    while True:
        try:
            if ready():
                return
        except httpx.TransportError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            if proc.poll() is None:
                proc.kill()
            raise AssertionError(f"{what} did not start: {log()}")
        time.sleep(0.1)


def stop(proc: subprocess.Popen[Any]) -> None:
    """Terminate, and kill if it has not exited within 10 s."""
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextmanager
def igg_serve(
    args: Sequence[str], *, env: dict[str, str], log_path: Path | None = None, **popen: Any
) -> Iterator[tuple[subprocess.Popen[Any], str]]:
    """``igg serve --port P ARGS`` on a free loopback port, answering ``/healthz``: the process and its base
    URL. With ``log_path`` its output goes to that file; otherwise ``popen`` says where
    (``subprocess.Popen``'s stdout, stderr, preexec_fn ...). The server is stopped on exit; a start that fails
    shows its log."""
    port = free_port()
    with contextlib.ExitStack() as files:
        if log_path is not None:
            popen |= {"stdout": files.enter_context(log_path.open("w")), "stderr": subprocess.STDOUT}
        proc = subprocess.Popen(
            [sys.executable, "-m", "igg", "serve", "--port", str(port), *args], cwd=ROOT, env=env, **popen
        )
        base = f"http://127.0.0.1:{port}"

        def log() -> str:
            if log_path is not None:
                return log_path.read_text()
            return proc.communicate()[1].decode() if popen.get("stderr") == subprocess.PIPE else ""

        try:
            wait_until(
                lambda: httpx.get(f"{base}/healthz", timeout=1).status_code == 200, proc, "igg serve", log
            )
            yield proc, base
        finally:
            stop(proc)
