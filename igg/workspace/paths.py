"""File paths that come from tool calls stay inside the server's output directory.

The checks and the write itself are ``igg.io.files``' (relative names only, no ``..``, no hidden components or
control characters, no symlinked directories, no planted special or hard-linked files, never a session store,
temporary file + rename). This module turns its refusals into the workspace's error codes:
``PATH_FORBIDDEN`` (403) for a path IGG will not write, ``EXPORT_FAILED`` for a write the system failed
(507 when the disk or a quota is full, 409 otherwise).
"""

from __future__ import annotations

from pathlib import Path

from igg.errors import WorkspaceError
from igg.io.files import PathRefused, WriteFailed, check_name, write_file


def _forbidden(message: str) -> WorkspaceError:
    return WorkspaceError("PATH_FORBIDDEN", message)


def _no_directory() -> WorkspaceError:
    return _forbidden(
        "this server has no output directory (start it with --output-dir DIR); omit 'path' to get "
        "the export inline"
    )


def check_output(base: Path | None, relative: str) -> None:
    """Refuse (``WorkspaceError(PATH_FORBIDDEN)``) a name that can never be written under ``base``."""
    if base is None:
        raise _no_directory()
    try:
        check_name(relative)
    except PathRefused as exc:
        raise _forbidden(str(exc)) from None


def write_inside(base: Path | None, relative: str, data: bytes) -> Path:
    """Write ``data`` to ``relative`` under ``base`` (creating subdirectories); returns the path written."""
    check_output(base, relative)
    assert base is not None
    try:
        write_file(relative, data, base=base)
    except PathRefused as exc:
        raise _forbidden(str(exc)) from None
    except WriteFailed as exc:
        raise WorkspaceError(
            "EXPORT_FAILED", f"{exc}; nothing was written", disk_full=exc.out_of_space
        ) from None
    return base / relative
