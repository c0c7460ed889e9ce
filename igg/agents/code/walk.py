"""Walking source trees for ``igg map-code``: which files to read, and why the others were skipped.

Honours ``.gitignore`` files (each applies below its own directory, a deeper one over a shallower one; the
patterns are matched as git matches them, by ``pathspec``'s ``GitIgnoreSpec``) and ``.git/info/exclude``. Skips, and says so: version-control, vendored and
build directories (``node_modules``, ``vendor``, ``.venv``, ``target``, ...), generated Java files (``*_pb.java``,
or a header saying ``@generated``/``DO NOT EDIT``/``Code generated``), binary or non-UTF-8 files (a Python
file is read in the encoding its PEP 263 declaration names, as Python reads it), files larger than
``max_bytes``. Files in other languages are counted by suffix, not listed. A generated Python file
(``*_pb2.py``, or such a header) is read, and listed in ``generated``: other modules import it, so the
dependency map keeps its module and imports (its definitions are left out: ``sources.analyze``).
"""

from __future__ import annotations

import io
import os
import re
import tokenize
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

import pathspec

from igg.agents.code.pymodules import (
    INIT_NAMES,
    DiskNamer,
    Unit,
    folders_above,
    prefixed,
    prefixes_from_imports,
)
from igg.agents.code.sources import SourceFile, generated_by_header, generated_by_name, language_of

VENDORED_DIRS = frozenset({
    ".git", ".hg", ".svn", "node_modules", "bower_components", "vendor", "vendored", "third_party",
    "third-party", "site-packages", "dist-packages", ".venv", "venv", ".tox", ".nox", "__pycache__",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", ".gradle", ".idea", ".eggs", "target", "build", "dist",
    "out", "generated", "generated-sources",
})
"""Directory names that hold vendored, cached, built or generated code."""
PACKAGE_NAMES_KEPT = frozenset({"build", "dist", "out", "generated", "target", "vendor", "vendored", "third_party"})
"""Of those, the names a real package may bear: a folder so named is read when it holds ``__init__.py`` (a
Python package) or Java files whose ``package`` line runs through it (``com/acme/build/Step.java`` declaring
``package com.acme.build;``); build output (class files, ``build/lib`` copies, generated sources under their
own package folders) says neither, and is skipped."""
JAVA_PACKAGE_LINE = re.compile(r"^\s*package\s+([\w.]+)\s*;", re.MULTILINE)
JAVA_PROBE_DEPTH = 3
"""How deep below a folder of a build-like name the walk looks for the Java file that says it is a package."""

DEFAULT_MAX_BYTES = 1_000_000


@dataclass(frozen=True, slots=True)
class Skip:
    """A file or directory not read, and why."""

    path: str
    reason: str


@dataclass(kw_only=True)
class WalkResult:
    """The source files to map, and everything left out."""

    files: list[SourceFile] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)
    generated: list[Skip] = field(default_factory=list)
    """Generated Python files: read (they are in ``files``) as their module and its imports only."""
    other: Counter[str] = field(default_factory=Counter)
    """Files in languages the code agent does not read, by suffix."""
    disk: dict[str, str] = field(default_factory=dict)
    """The path on disk of each Python file read, by its reported path."""
    bytes_read: int = 0

    def skipped_by_reason(self) -> dict[str, int]:
        counts = Counter(s.reason.split(" (")[0] for s in self.skipped)
        return dict(counts.most_common())


class _Ignore:
    """The rules of one ignore file (git's own matching, by ``pathspec``), for paths relative to its directory."""

    def __init__(self, base: str, lines: list[str], source: str) -> None:
        self.base = base
        self.source = source
        self.spec = pathspec.GitIgnoreSpec.from_lines(lines)

    def match(self, rel: str, is_dir: bool) -> bool | None:
        """True: ignored; False: re-included; None: no rule speaks."""
        return self.spec.check_file(rel + "/" if is_dir else rel).include


def _read_ignore(path: Path, base: str, source: str) -> _Ignore | None:
    try:
        return _Ignore(base, path.read_text(encoding="utf-8", errors="replace").splitlines(), source)
    except (OSError, ValueError):  # unreadable, or a pattern git itself would not take: the file is not used
        return None


def walk(paths: list[Path], *, max_bytes: int = DEFAULT_MAX_BYTES, vendored: frozenset[str] = VENDORED_DIRS,
         package_prefix: str | None = None) -> WalkResult:
    """The Python and Java files under ``paths`` (files or directories), in sorted order, and the skips.

    Paths are reported relative to each root (prefixed by the root's name when several roots are given).
    Python modules are named as Python imports them (``pymodules``), under ``package_prefix`` when given.
    Raises ``FileNotFoundError`` for a path that does not exist.
    """
    result = WalkResult()
    namer = DiskNamer()
    for root in paths:
        if not root.exists():
            raise FileNotFoundError(str(root))
        prefix = (root.resolve().name + "/") if len(paths) > 1 else ""
        if root.is_file():
            _consider_guarded(result, root, prefix + root.name, max_bytes, namer)
            continue
        _walk_dir(result, root, prefix, max_bytes, vendored, namer)
    _name_under_prefixes(result, package_prefix)
    return result


def _name_under_prefixes(result: WalkResult, everything: str | None) -> None:
    """Python modules renamed under the prefix the user gives, or the tree's own imports give their top-level
    package (``pymodules.prefixes_from_imports``)."""
    python = [f for f in result.files if f.module is not None]
    if not python:
        return
    units: dict[str, Unit] = {}
    prefixes: dict[Unit, str] = {}
    if not everything:
        units = {f.path: (f.module.split(".")[0], folders_above(result.disk[f.path], f.module))
                 for f in python if f.module}
        known = {".".join(parts[:i]) for f in python if f.module
                 for parts in [f.module.split(".")] for i in range(1, len(parts) + 1)}
        prefixes = prefixes_from_imports(units.values(), (f.text for f in python), known)
        if not prefixes:
            return
    result.files = [replace(f, module=prefixed(f.module, None if everything else prefixes.get(units[f.path]),
                                                everything)) if f.module is not None else f for f in result.files]


def _walk_dir(result: WalkResult, root: Path, prefix: str, max_bytes: int, vendored: frozenset[str],
              namer: DiskNamer) -> None:
    stack: list[tuple[Path, str, list[_Ignore]]] = [(root, "", [])]
    exclude = _read_ignore(root / ".git" / "info" / "exclude", "", ".git/info/exclude")
    if exclude is not None:
        stack = [(root, "", [exclude])]
    while stack:
        directory, rel_dir, ignores = stack.pop()
        own = (_read_ignore(directory / ".gitignore", rel_dir, rel_dir + ".gitignore")
               if (directory / ".gitignore").is_file() else None)
        active = [*ignores, own] if own is not None else ignores
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            result.skipped.append(Skip(prefix + rel_dir or ".", f"unreadable directory ({exc.strerror})"))
            continue
        subdirs = []
        for entry in entries:
            rel = f"{rel_dir}{entry.name}"
            is_dir = entry.is_dir(follow_symlinks=False)
            if entry.is_symlink():
                result.skipped.append(Skip(prefix + rel, "symbolic link (not followed)"))
                continue
            ignored_by = _ignored(active, rel, is_dir)
            if ignored_by is not None:
                if is_dir or language_of(rel):  # other gitignored files are of no interest here
                    result.skipped.append(Skip(prefix + rel + ("/" if is_dir else ""), f"gitignored (by {ignored_by})"))
                continue
            if is_dir:
                if (entry.name in vendored and not (entry.name in PACKAGE_NAMES_KEPT
                                                    and (_is_package(entry.path) or _is_java_package(entry.path)))
                        or (directory / entry.name / "pyvenv.cfg").exists()):
                    if entry.name != ".git":
                        result.skipped.append(Skip(prefix + rel + "/", f"vendored or build directory ({entry.name})"))
                    continue
                subdirs.append((Path(entry.path), rel + "/", active))
            elif entry.is_file():
                if entry.name == ".gitignore":
                    continue
                _consider_guarded(result, Path(entry.path), prefix + rel, max_bytes, namer)
        stack.extend(reversed(subdirs))


def _ignored(ignores: list[_Ignore], rel: str, is_dir: bool) -> str | None:
    verdict, by = None, None
    for ig in ignores:
        local = rel[len(ig.base):] if rel.startswith(ig.base) else None
        if local is None:
            continue
        m = ig.match(local, is_dir)
        if m is not None:
            verdict, by = m, ig.source
    return by if verdict else None


def _is_package(path: str) -> bool:
    return any(os.path.isfile(os.path.join(path, n)) for n in INIT_NAMES)


def _is_java_package(path: str) -> bool:
    """Whether the first Java file found below ``path`` (breadth first, ``JAVA_PROBE_DEPTH`` folders deep)
    declares a package that runs through this folder: ``com/acme/build`` holding ``Step.java`` with
    ``package com.acme.build;``, or ``internal/X.java`` with ``package com.acme.build.internal;``."""
    folders = [p for p in os.path.abspath(path).split(os.sep) if p]
    level: list[tuple[str, list[str]]] = [(path, [])]
    for _ in range(JAVA_PROBE_DEPTH + 1):
        below: list[tuple[str, list[str]]] = []
        for folder, sub in level:
            try:
                entries = sorted(os.scandir(folder), key=lambda e: e.name)
            except OSError:
                continue
            for entry in entries:
                if entry.name.endswith(".java") and entry.is_file(follow_symlinks=False):
                    return _declares(entry.path, folders, sub)
                if entry.is_dir(follow_symlinks=False) and not entry.name.startswith("."):
                    below.append((entry.path, [*sub, entry.name]))
        level = below
    return False


def _declares(java_file: str, folders: list[str], sub: list[str]) -> bool:
    try:
        with open(java_file, encoding="utf-8", errors="replace") as f:
            head = f.read(16384)
    except OSError:
        return False
    found = JAVA_PACKAGE_LINE.search(head)
    if not found:
        return False
    package = found.group(1).split(".")
    if len(package) <= len(sub) or package[len(package) - len(sub):] != sub:
        return False
    through = package[:len(package) - len(sub)]  # the package down to this folder: it must end in the folders
    return through == folders[-len(through):]


def _decoded(result: WalkResult, rel: str, data: bytes, language: str) -> str | None:
    """The file's text: UTF-8, or for Python the encoding its PEP 263 declaration names (``# -*- coding:
    latin-1 -*-`` in the first two lines), as Python reads it; None (and the file skipped) when it is not."""
    encoding = "utf-8"
    if language == "python":
        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        except SyntaxError as exc:
            if exc.msg.startswith(("unknown encoding", "encoding problem")):  # no such codec; BOM vs declaration
                result.skipped.append(Skip(rel, f"unreadable source encoding ({exc.msg})"))
                return None
            # else "invalid or missing encoding declaration": none declared, and the first lines are not UTF-8
    try:
        return data.decode(encoding)
    except (UnicodeDecodeError, LookupError):
        if encoding in ("utf-8", "utf-8-sig"):
            result.skipped.append(Skip(rel, "binary or not UTF-8" + (" (and no coding declaration)"
                                                                     if language == "python" else "")))
        else:
            result.skipped.append(Skip(rel, f"not valid {encoding}, the encoding it declares"))
        return None


def _consider_guarded(result: WalkResult, path: Path, rel: str, max_bytes: int, namer: DiskNamer) -> None:
    """``_consider``, with whatever reading, decoding or naming one file raises made that file's skip line."""
    try:
        _consider(result, path, rel, max_bytes, namer)
    except (Exception, RecursionError) as exc:  # noqa: BLE001 - one file's failure is that file's verdict
        result.skipped.append(Skip(rel, f"unreadable ({type(exc).__name__}: {str(exc)[:120] or 'no detail'})"))


def _consider(result: WalkResult, path: Path, rel: str, max_bytes: int, namer: DiskNamer) -> None:
    language = language_of(rel)
    if language is None:
        suffix = path.suffix.lower() or "(no suffix)"
        result.other[suffix] += 1
        return
    generated = "by its name" if generated_by_name(rel) else None
    if generated is not None and language != "python":
        result.skipped.append(Skip(rel, f"generated ({generated})"))
        return
    try:
        size = path.stat().st_size
        if size > max_bytes:
            result.skipped.append(Skip(rel, f"too large ({size:,} bytes; the limit is {max_bytes:,})"))
            return
        data = path.read_bytes()
    except OSError as exc:
        result.skipped.append(Skip(rel, f"unreadable ({exc.strerror})"))
        return
    if b"\x00" in data[:8192]:
        result.skipped.append(Skip(rel, "binary (NUL bytes)"))
        return
    text = _decoded(result, rel, data, language)
    if text is None:
        return
    if generated is None and generated_by_header(text):
        generated = "its header says so"
    if generated is not None:
        if language != "python":
            result.skipped.append(Skip(rel, f"generated ({generated})"))
            return
        # a generated Python module is still a module others import: the dependency map keeps it and its
        # imports, and leaves its definitions out (see ``is_generated``)
        result.generated.append(Skip(rel, f"generated ({generated})"))
    module = namer.module(str(path)) if language == "python" else None
    if module is not None:
        result.disk[rel] = str(path)
    result.files.append(SourceFile(rel, text.removeprefix("\ufeff"), module))
    result.bytes_read += len(data)
