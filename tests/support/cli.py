"""The ``igg`` command line run inside the test process: ``main`` with stdout and stderr captured.

Fast (no interpreter start-up), and the same code a person runs; tests that need a real child process
(a server, a signal) start one themselves.
"""

from __future__ import annotations

import contextlib
import io
import subprocess

from igg.interfaces.cli import main


def igg(*args: str) -> subprocess.CompletedProcess[str]:
    """``igg ARGS...`` in this process: its exit code, stdout and stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return subprocess.CompletedProcess(list(args), code, out.getvalue(), err.getvalue())
