"""Writing files safely: the one way IGG puts an export, a run-directory file or a replayed graph on disk.

Every file IGG writes goes through ``write_file`` (whole contents), ``open_for_write`` (a binary file that
appears at its name only when the ``with`` block succeeds) or ``open_stream`` (line files written as a run
goes). They all

* look at the target with ``lstat`` before opening anything: only a missing name or a regular file with a
  single link may be replaced. A symlink, FIFO, socket, device, directory or hard-linked file is refused
  (a planted FIFO would block the writer forever; a hard link would carry the write to a file elsewhere);
* refuse a session store (an SQLite database, recognised by its header or because a store in this process
  opened it: ``protect``) and its ``-wal``, ``-shm`` and ``-journal`` companions;
* write to a temporary file created beside the target (``O_CREAT | O_EXCL | O_NOFOLLOW``), fsync it and
  rename it over the target, then fsync the directory: a reader sees the old file or the new one, and a
  failed write (disk full) removes the temporary file and leaves the old file as it was;
* with ``base``, treat the name as untrusted (a client or an agent chose it): it must be relative, without
  ``..``, hidden (``.``-prefixed) components or control, format or separator characters (a newline,
  ``\\x01``, U+202E), and every directory is opened with ``O_NOFOLLOW`` from ``base`` down, so no symlink,
  planted before or during the write, can lead outside ``base``.

Refusals raise ``PathRefused``, operating-system failures ``WriteFailed`` (with the ``errno``); both are
``ExportError``.
"""

from __future__ import annotations

import errno as errno_codes
import os
import secrets
import stat
import threading
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import IO, BinaryIO

from igg.errors import ExportError

SQLITE_HEADER = b"SQLite format 3\x00"
"""The first 16 bytes of every SQLite database file."""

STORE_COMPANIONS = ("-wal", "-shm", "-journal")
"""Files SQLite keeps beside a database; overwriting one corrupts or rolls back the database."""

MAX_COMPONENT_BYTES = 255
"""Longest file or directory name (bytes of UTF-8) most file systems allow."""

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)

_protected: set[Path] = set()
_protected_lock = threading.Lock()


class PathRefused(ExportError):
    """IGG will not write this path (outside its directory, a planted special file, a session store, ...)."""


class WriteFailed(ExportError):
    """The operating system failed the write (disk full, permission denied, ...); nothing was left behind."""

    def __init__(self, message: str, errno: int | None) -> None:
        super().__init__(message)
        self.errno = errno

    @property
    def out_of_space(self) -> bool:
        """Whether the disk or a quota or file-size limit ran out."""
        return self.errno in (errno_codes.ENOSPC, errno_codes.EDQUOT, errno_codes.EFBIG)


def protect(path: str | Path) -> None:
    """Never write ``path`` or its SQLite companions (session stores call this when they open)."""
    with _protected_lock:
        _protected.add(Path(os.path.abspath(path)).resolve())


def check_name(name: str) -> tuple[str, ...]:
    """The components of an untrusted relative file name; ``PathRefused`` says what is wrong with it."""
    if not isinstance(name, str) or not name or name.strip() != name:
        raise PathRefused(
            f"path {name!r} is not a usable file name; give a relative path such as 'graph.json'"
        )
    bad = next((ch for ch in name if _forbidden_char(ch)), None)
    if bad is not None:
        raise PathRefused(
            f"path {name!r} contains the character U+{ord(bad):04X} "
            f"({unicodedata.name(bad, 'a control character')}); use letters, digits, spaces and "
            "'-_.' in names"
        )
    posix, windows = PurePosixPath(name), PureWindowsPath(name)
    if posix.is_absolute() or windows.is_absolute() or windows.drive or name.startswith("~"):
        raise PathRefused(
            f"path {name!r} is absolute; give a path relative to the output directory, such as "
            "'graphs/auth.graphml'"
        )
    parts = tuple(p for p in name.replace("\\", "/").split("/") if p not in ("", "."))
    if ".." in parts:
        raise PathRefused(f"path {name!r} climbs out with '..'; give a path inside the output directory")
    if not parts or name.endswith(("/", "\\")) or name.endswith("/.") or name == ".":
        raise PathRefused(
            f"path {name!r} names a directory, not a file; add a file name such as 'graph.json'"
        )
    hidden = next((p for p in parts if p.startswith(".")), None)
    if hidden is not None:
        raise PathRefused(
            f"path {name!r} has the hidden component {hidden!r}; names starting with '.' (such "
            "as .ssh or .igg) are refused; give a visible name such as 'graph.json'"
        )
    long = next((p for p in parts if len(p.encode("utf-8", "surrogatepass")) > MAX_COMPONENT_BYTES), None)
    if long is not None:
        raise PathRefused(f"path {name!r} has a component longer than {MAX_COMPONENT_BYTES} bytes")
    return parts


def _forbidden_char(ch: str) -> bool:
    # C*: controls (newline, \x01), format (U+202E and the other bidi overrides), surrogates, private use,
    # unassigned; Zl/Zp: line and paragraph separators. Each can forge a line or hide a name's real order.
    return unicodedata.category(ch)[0] == "C" or unicodedata.category(ch) in ("Zl", "Zp")


def write_file(target: str | Path, data: bytes, *, base: Path | None = None) -> Path:
    """Write ``data`` to ``target`` (under ``base`` when given: see the module docstring); returns the
    path."""
    with open_for_write(target, base=base) as fh:
        fh.write(data)
    return Path(target) if base is None else base / target


@contextmanager
def open_for_write(target: str | Path, *, base: Path | None = None) -> Iterator[BinaryIO]:
    """A binary file that replaces ``target`` when the block ends without an error (and vanishes
    otherwise)."""
    shown = _shown(target, base)
    dir_fd, name, mode = _prepare(target, base)
    tmp, fd = _temporary(dir_fd, name, mode, shown)
    try:
        with os.fdopen(fd, "wb") as fh:
            try:
                yield fh
                fh.flush()
                os.fsync(fh.fileno())
            except BaseException:
                with suppress(OSError):
                    fh.close()  # a full disk can fail the final flush too: the file goes either way
                raise
        os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        with suppress(OSError):  # some file systems cannot sync a directory; the rename still happened
            os.fsync(dir_fd)
    except OSError as exc:
        with suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise WriteFailed(f"cannot write {shown}: {exc.strerror or exc}", exc.errno) from None
    except BaseException:
        with suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise
    finally:
        os.close(dir_fd)


def open_stream(target: str | Path, *, base: Path | None = None) -> IO[str]:
    """A UTF-8 text file at ``target``, empty, for lines appended as a run goes (``records.jsonl``).

    The new file is renamed into place at once (the checks above still apply), so whatever stood at the
    name is replaced, never written through.
    """
    shown = _shown(target, base)
    dir_fd, name, mode = _prepare(target, base)
    try:
        tmp, fd = _temporary(dir_fd, name, mode, shown)
        try:
            os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except OSError as exc:
            os.close(fd)
            with suppress(OSError):
                os.unlink(tmp, dir_fd=dir_fd)
            raise WriteFailed(f"cannot write {shown}: {exc.strerror or exc}", exc.errno) from None
    finally:
        os.close(dir_fd)
    return os.fdopen(fd, "w", encoding="utf-8")


def _shown(target: str | Path, base: Path | None) -> str:
    return repr(str(target)) if base is not None else str(target)


def _prepare(target: str | Path, base: Path | None) -> tuple[int, str, int | None]:
    """Open the target's directory (creating it) and check the target: ``(dir_fd, name, file_mode)``."""
    parts: tuple[str, ...]
    if base is None:
        path = Path(target)
        if not path.name or path.name in (".", ".."):
            raise PathRefused(f"{target} names a directory, not a file")
        directory, parts = path.parent, (path.name,)
    else:
        directory, parts = base, check_name(str(target))
    shown = _shown(target, base)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        dir_fd = os.open(directory, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    except OSError as exc:
        raise WriteFailed(
            f"cannot write {shown}: the directory {directory}: {exc.strerror or exc}", exc.errno
        ) from None
    try:
        for part in parts[:-1]:  # untrusted subdirectories: created and entered without following links
            with suppress(FileExistsError):
                os.mkdir(part, 0o755, dir_fd=dir_fd)
            try:
                sub = os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=dir_fd)
            except OSError as exc:
                if exc.errno in (errno_codes.ELOOP, errno_codes.ENOTDIR):
                    raise PathRefused(
                        f"path {shown} goes through {part!r}, which is a symlink or not a "
                        "directory; give a path inside the output directory"
                    ) from None
                raise WriteFailed(f"cannot write {shown}: {exc.strerror or exc}", exc.errno) from None
            os.close(dir_fd)
            dir_fd = sub
        name = parts[-1]
        mode = _check_target(dir_fd, name, shown)
    except BaseException:
        os.close(dir_fd)
        raise
    return dir_fd, name, mode


def _check_target(dir_fd: int, name: str, shown: str) -> int | None:
    """Refuse special files, hard links and stores at ``name``; the mode of the file it replaces (if any)."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise WriteFailed(f"cannot write {shown}: {exc.strerror or exc}", exc.errno) from None
    if st is not None:
        kind = _kind(st.st_mode)
        if kind is not None:
            raise PathRefused(
                f"{shown} is {kind}; IGG replaces regular files only; remove it or choose another name"
            )
        if st.st_nlink > 1:
            raise PathRefused(
                f"{shown} has {st.st_nlink} hard links; writing it would change the other "
                "names too; remove it or choose another name"
            )
    real = (
        Path(os.path.realpath(f"/proc/self/fd/{dir_fd}")) / name if os.path.isdir("/proc/self/fd") else None
    )
    for suffix in ("", *STORE_COMPANIONS):
        if suffix and not name.endswith(suffix):
            continue
        database = name.removesuffix(suffix) if suffix else name
        with _protected_lock:
            registered = real is not None and real.parent / database in _protected
        if registered or _is_sqlite(dir_fd, database):
            raise PathRefused(
                f"{shown} is a session store{' companion file' if suffix else ''} (an SQLite "
                "database); exports never overwrite it; choose another name"
            )
    return stat.S_IMODE(st.st_mode) if st is not None else None


def _kind(mode: int) -> str | None:
    if stat.S_ISREG(mode):
        return None
    return (
        "a symbolic link"
        if stat.S_ISLNK(mode)
        else "a directory"
        if stat.S_ISDIR(mode)
        else "a FIFO (named pipe)"
        if stat.S_ISFIFO(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "a device"
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
        else "not a regular file"
    )


def _is_sqlite(dir_fd: int, name: str) -> bool:
    """Whether ``name`` is a regular file starting with SQLite's header (never opens anything else)."""
    if not name:
        return False
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if not stat.S_ISREG(st.st_mode) or st.st_size < len(SQLITE_HEADER):
            return False
        fd = os.open(name, os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC, dir_fd=dir_fd)
    except OSError:
        return False
    try:
        return os.read(fd, len(SQLITE_HEADER)) == SQLITE_HEADER
    except OSError:
        return False
    finally:
        os.close(fd)


def _temporary(dir_fd: int, name: str, mode: int | None, shown: str) -> tuple[str, int]:
    """A new, exclusive temporary file beside ``name``: ``(its name, its descriptor)``."""
    stem = name.encode("utf-8", "surrogatepass")[:100].decode("utf-8", "ignore")
    for _ in range(10):
        tmp = f".{stem}.{secrets.token_hex(6)}.tmp"
        try:
            fd = os.open(
                tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o644, dir_fd=dir_fd
            )
        except FileExistsError:
            continue
        except OSError as exc:
            raise WriteFailed(f"cannot write {shown}: {exc.strerror or exc}", exc.errno) from None
        if mode is not None:
            with suppress(OSError):
                os.fchmod(fd, mode)  # a replaced file keeps its mode
        return tmp, fd
    raise WriteFailed(f"cannot write {shown}: no free temporary name beside it", errno_codes.EEXIST)
