"""The trees a code map reads: their paths, each checked to exist, and the git commit they are at (a map and
an update record it)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from igg.errors import Problem, RequestInvalid


def existing_paths(paths: Sequence[Path]) -> list[Path]:
    """``paths`` as paths, refused (``RequestInvalid``) when one does not exist."""
    paths = [Path(p) for p in paths]
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise RequestInvalid(
            [Problem("PATH", f"{p}: no such file or directory") for p in missing], source="the command line"
        )
    return paths


def git_commit_soon(paths: Sequence[Path]) -> Callable[[], str | None]:
    """``git_commit(paths)`` started now on a thread (git runs while the caller walks and parses); call the
    result for the answer."""
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="igg-git")
    future = pool.submit(git_commit, paths)
    pool.shutdown(wait=False)
    return future.result


def git_commit(paths: Sequence[Path]) -> str | None:
    """The commit checked out in the git work tree holding ``paths[0]`` (``+dirty`` when it has changes),
    or None when it is not in one (or git is missing)."""
    if not paths:
        return None
    where = paths[0] if paths[0].is_dir() else paths[0].parent
    try:
        head = subprocess.run(
            ["git", "-C", str(where), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10
        )
        if head.returncode != 0:
            return None
        dirty = subprocess.run(
            ["git", "-C", str(where), "status", "--porcelain", "--untracked-files=no", "."],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    commit = head.stdout.strip()
    return commit + ("+dirty" if dirty.returncode == 0 and dirty.stdout.strip() else "")


__all__ = ["existing_paths", "git_commit", "git_commit_soon"]
