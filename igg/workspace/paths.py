"""File paths that come from tool calls stay inside the server's output directory.

Refused: no output directory configured, absolute paths, drive or home prefixes, ``..`` components, empty or
hidden-control names, and paths that leave the directory through a symlink. The final file is opened with
``O_NOFOLLOW``, so a symlink planted after the check cannot redirect the write.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath, PureWindowsPath

from igg.errors import WorkspaceError


def _forbidden(message: str) -> WorkspaceError:
    return WorkspaceError("PATH_FORBIDDEN", message, status=403)


def resolve_output(base: Path | None, relative: str) -> Path:
    """The absolute path ``relative`` names under ``base``; ``WorkspaceError(PATH_FORBIDDEN)`` otherwise."""
    if base is None:
        raise _forbidden("this server has no output directory (start it with --output-dir DIR); omit 'path' "
                         "to get the export inline")
    if not relative or relative.strip() != relative or "\x00" in relative:
        raise _forbidden(f"path {relative!r} is not a usable file name; give a relative path such as 'graph.json'")
    posix, windows = PurePosixPath(relative), PureWindowsPath(relative)
    if posix.is_absolute() or windows.is_absolute() or windows.drive or relative.startswith("~"):
        raise _forbidden(f"path {relative!r} is absolute; give a path relative to the output directory, "
                         "such as 'graphs/auth.graphml'")
    parts = relative.replace("\\", "/").split("/")
    if ".." in parts:
        raise _forbidden(f"path {relative!r} climbs out with '..'; give a path inside the output directory")
    if any(p in ("", ".") for p in parts[-1:]):
        raise _forbidden(f"path {relative!r} names a directory, not a file")
    root = base.resolve()
    target = (root / Path(*[p for p in parts if p not in ("", ".")])).resolve()
    if not target.is_relative_to(root) or target == root:
        raise _forbidden(f"path {relative!r} leaves the output directory (through a symlink); give a path "
                         "inside it")
    return target


def write_inside(base: Path | None, relative: str, data: bytes) -> Path:
    """Write ``data`` to ``relative`` under ``base`` (creating subdirectories); returns the path written."""
    target = resolve_output(base, relative)
    assert base is not None
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.parent.resolve().is_relative_to(base.resolve()):  # a directory swapped for a symlink
        raise _forbidden(f"path {relative!r} leaves the output directory")
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(target, flags, 0o644)
    except OSError as exc:
        raise WorkspaceError("EXPORT_FAILED", f"cannot write {relative!r}: {exc.strerror or exc}", status=409) \
            from None
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    return target
