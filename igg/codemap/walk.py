"""Walking source trees for ``igg map-code``: which files to read, and why the others were skipped.

Honours ``.gitignore`` files (each applies below its own directory, a deeper one over a shallower one; the
patterns are matched as git matches them, by ``pathspec``'s ``GitIgnoreSpec``) and ``.git/info/exclude``.
Skips, and says so: version-control, vendored and build directories (``node_modules``, ``vendor``, ``.venv``,
``target``, ...), generated files (``*_pb.java``, or a header saying ``@generated``/``DO NOT EDIT``/``Code
generated``), binary or undecodable files (each language decodes its own: a Python file is read in the
encoding its PEP 263 declaration names, as Python reads it), files larger than ``max_bytes``. Files in other
languages are counted by suffix, not listed. A generated file of a language that keeps them (Python:
``*_pb2.py``, or such a header) is read, and listed in ``generated``: other modules import it, so the
dependency map keeps its module and imports (its definitions are left out by its analyzer). Which language
claims a file, how its files are named and which folders of a build-like name are its packages, each language
says (``igg.codemap.language``).
"""

from __future__ import annotations

import hashlib
import os
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from igg.codemap import language as languages
from igg.codemap.cache import content_hash
from igg.codemap.sources import SourceFile, generated_by_header, generated_by_name

VENDORED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "bower_components",
        "vendor",
        "vendored",
        "third_party",
        "third-party",
        "site-packages",
        "dist-packages",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".gradle",
        ".idea",
        ".eggs",
        "target",
        "build",
        "dist",
        "out",
        "generated",
        "generated-sources",
    }
)
"""Directory names that hold vendored, cached, built or generated code."""
PACKAGE_NAMES_KEPT = frozenset(
    {"build", "dist", "out", "generated", "target", "vendor", "vendored", "third_party"}
)
"""Of those, the names a real package may bear: a folder so named is read when it holds ``__init__.py`` (a
Python package) or Java files whose ``package`` line runs through it (``com/acme/build/Step.java`` declaring
``package com.acme.build;``): a language's ``is_package_dir``; build output (class files, ``build/lib``
copies, generated sources under their own package folders) says neither, and is skipped."""

DEFAULT_MAX_BYTES = 1_000_000
RACY_NS = 2_000_000_000
"""A file or directory modified this close (ns) before the walk began keeps no modification time in
``WalkResult.stats``/``dirs``: a change in the same clock tick would not move it."""

FileStat = tuple[int, int, str | None]
"""A file's size, modification time (ns) and sha256 (hex) of its bytes as read (None: not read)."""


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
    """Generated files of a language that keeps them (Python): read (they are in ``files``) as their module
    and its imports only."""
    other: Counter[str] = field(default_factory=Counter)
    """Files in languages the code agent does not read, by suffix."""
    disk: dict[str, str] = field(default_factory=dict)
    """The path on disk of each file a language named from the disk, by its reported path."""
    bytes_read: int = 0
    dirs: dict[str, int | str] = field(default_factory=dict)
    """The directories walked (absolute), each with its modification time (ns) as it was before it was
    listed: a file added, removed or renamed in one changes it (``igg.codemap.treeindex``). One modified so
    recently that a change in the same clock tick could hide keeps its listing instead (``names_digest``),
    and -1 when it could not be listed."""
    listings: dict[str, str] = field(default_factory=dict)
    """Each directory listed (absolute), by the entries of it a walk may read or look at (``listing``), when
    the walk was asked for them (``walk(listings=True)``): a directory whose time changed because a file in it
    was saved by replacing it (a temporary file renamed over it, as editors that save safely, ``git
    checkout`` and ``sed -i`` do) holds the same entries, and its files' own stats tell the rest
    (``igg.codemap.treeindex``)."""
    stats: dict[str, FileStat] = field(default_factory=dict)
    """The files whose content decides the walk (absolute): those of the languages read and the ignore
    files, each with its size, modification time (ns, -1 when recent) and the sha256 of the bytes read (None
    when not read)."""
    texts: dict[str, str] = field(default_factory=dict)
    """The files read whose text (``SourceFile.text``) is not their bytes decoded as UTF-8 (a byte order mark,
    a Python coding cookie), by absolute path: the hash of their text (``cache.content_hash``). Every other
    file read is known by the sha256 of its bytes (``stats``), which is its text's."""

    def skipped_by_reason(self) -> dict[str, int]:
        counts = Counter(s.reason.split(" (")[0] for s in self.skipped)
        return dict(counts.most_common())


class _Ignore:
    """The rules of one ignore file (git's own matching, by ``pathspec``), for paths relative to its
    directory."""

    def __init__(self, base: str, lines: list[str], source: str) -> None:
        self.base = base
        self.source = source
        import pathspec  # loaded by the first ignore file (a command that walks nothing goes without it)

        self.spec = pathspec.GitIgnoreSpec.from_lines(lines)

    def match(self, rel: str, is_dir: bool) -> bool | None:
        """True: ignored; False: re-included; None: no rule speaks."""
        return self.spec.check_file(rel + "/" if is_dir else rel).include


def _read_ignore(path: str | Path, base: str, source: str, state: _Walk | None = None) -> _Ignore | None:
    """The rules of the ignore file at ``path`` (None: there is none, or it is not used); ``state``: the walk
    that notes the file, with the bytes its rules were read from."""
    try:
        st = os.stat(path)
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        if state is not None:
            state.note(path)
        return None
    if state is not None:
        state.note(path, data, st)
    try:
        return _Ignore(base, data.decode("utf-8", errors="replace").splitlines(), source)
    except ValueError:  # a pattern git itself would not take: the file is not used
        return None


class _Walk:
    """One walk's state: what it found, the languages it reads, and their disk namers (made on first use)."""

    def __init__(self, max_bytes: int, chosen: Collection[str], listings: bool = False) -> None:
        self.result = WalkResult()
        self.listings = listings
        self.max_bytes = max_bytes
        self.chosen = chosen
        self.started_ns = time.time_ns()
        self._namers: dict[str, Callable[[str], str | None] | None] = {}

    def mtime(self, st: os.stat_result) -> int:
        """``st``'s modification time, or -1 when it is too recent to tell a later change (``RACY_NS``)."""
        return st.st_mtime_ns if st.st_mtime_ns < self.started_ns - RACY_NS else -1

    def note(
        self,
        path: str | Path,
        data: bytes | None = None,
        st: os.stat_result | None = None,
        absolute: str | None = None,
    ) -> None:
        """Keep the stat of a file the walk depends on (``st``, taken before ``data``, its bytes, were read;
        else taken now; ``absolute``: its absolute path, when the caller knows it)."""
        try:
            st = st or os.stat(path)
        except OSError:
            return
        self.result.stats[absolute or os.path.abspath(path)] = (
            st.st_size,
            self.mtime(st),
            hashlib.sha256(data).hexdigest() if data is not None else None,
        )

    def claims(self, rel: str) -> str | None:
        found = languages.language_of(rel)
        return found if found in self.chosen else None

    def module(self, language: str, path: str) -> str | None:
        if language not in self._namers:
            self._namers[language] = languages.get(language).disk_namer()
        namer = self._namers[language]
        return namer(path) if namer is not None else None

    def is_package_dir(self, path: str) -> bool:
        return any(languages.get(name).is_package_dir(path) for name in self.chosen)


def walk(
    paths: list[Path],
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    vendored: frozenset[str] = VENDORED_DIRS,
    package_prefix: str | None = None,
    chosen: Collection[str] | None = None,
    listings: bool = False,
) -> WalkResult:
    """The source files under ``paths`` (files or directories) of the ``chosen`` languages (default: every one
    IGG reads), in sorted order, and the skips.

    Paths are reported relative to each root (prefixed by the root's name when several roots are given).
    Modules are named as their languages import them (Python: ``python/modules.py``), under
    ``package_prefix`` when given. ``listings``: keep each directory's ``listing`` (``WalkResult.listings``,
    what the tree's index of a map compares a directory whose time changed by). Raises ``FileNotFoundError``
    for a path that does not exist.
    """
    state = _Walk(max_bytes, tuple(chosen) if chosen is not None else languages.names(), listings)
    for root in paths:
        if not root.exists():
            raise FileNotFoundError(str(root))
        prefix = (root.resolve().name + "/") if len(paths) > 1 else ""
        if root.is_file():
            _consider_guarded(state, root, prefix + root.name, len(prefix))
            continue
        _walk_dir(state, root, prefix, vendored)
    result = state.result
    by_language: dict[str, list[SourceFile]] = {}
    for f in result.files:
        name = languages.language_of(f.path)
        if name is not None:
            by_language.setdefault(name, []).append(f)
    for name, mine in by_language.items():
        renamed = {f.path: f for f in languages.get(name).rename(mine, result.disk, package_prefix)}
        result.files = [renamed.get(f.path, f) for f in result.files]
    return result


def _walk_dir(state: _Walk, root: Path, prefix: str, vendored: frozenset[str]) -> None:
    # directories as path strings, not Paths: a tree of 2,500 folders (Django's) spent a third of its walk on
    # Path objects
    result = state.result
    top = os.path.abspath(root)
    stack: list[tuple[str, str, list[_Ignore]]] = [(top, "", [])]
    info = os.path.join(top, ".git", "info")
    _note_dir(state, info)
    exclude = _read_ignore(os.path.join(info, "exclude"), "", ".git/info/exclude", state)
    if exclude is not None:
        stack = [(top, "", [exclude])]
    while stack:
        directory, rel_dir, ignores = stack.pop()
        _note_dir(state, directory)
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            result.dirs[directory] = -1  # readable later with the same stat (a chmod)
            result.skipped.append(Skip(prefix + rel_dir or ".", f"unreadable directory ({exc.strerror})"))
            continue
        own = None
        if any(e.name == ".gitignore" and e.is_file() for e in entries):
            own = _read_ignore(os.path.join(directory, ".gitignore"), rel_dir, rel_dir + ".gitignore", state)
        active = [*ignores, own] if own is not None else ignores
        _note_listing(state, directory, entries)
        subdirs = []
        for entry in entries:
            rel = f"{rel_dir}{entry.name}"
            is_dir = entry.is_dir(follow_symlinks=False)
            if entry.is_symlink():
                result.skipped.append(Skip(prefix + rel, "symbolic link (not followed)"))
                continue
            ignored_by = _ignored(active, rel, is_dir)
            # a configuration file (package.json, tsconfig.json) counts for the compiler whatever
            # .gitignore says (a tracked file is not ignored; a .gitignore of build output often names them)
            if ignored_by is not None and not (not is_dir and languages.is_config(rel) and state.claims(rel)):
                if is_dir or state.claims(rel):  # other gitignored files are of no interest here
                    result.skipped.append(
                        Skip(prefix + rel + ("/" if is_dir else ""), f"gitignored (by {ignored_by})")
                    )
                continue
            absolute = entry.path
            if is_dir:
                if (
                    entry.name in vendored
                    and not (entry.name in PACKAGE_NAMES_KEPT and state.is_package_dir(absolute))
                    or os.path.exists(os.path.join(absolute, "pyvenv.cfg"))
                ):
                    if entry.name != ".git":
                        result.skipped.append(
                            Skip(prefix + rel + "/", f"vendored or build directory ({entry.name})")
                        )
                    continue
                subdirs.append((absolute, rel + "/", active))
            elif entry.is_file():
                if entry.name == ".gitignore":
                    continue
                _consider_guarded(state, absolute, prefix + rel, len(prefix), absolute)
            else:  # a FIFO, socket or device file: never opened (a FIFO would block the read), but listed
                result.skipped.append(Skip(prefix + rel, "not a regular file (a FIFO, socket or device)"))
        stack.extend(reversed(subdirs))


def names_digest(names: Iterable[str]) -> str:
    """What a directory's listing is kept as when its time cannot tell a change (``WalkResult.dirs``): the
    sha256 of its entries' names, sorted."""
    return "names:" + hashlib.sha256("\0".join(sorted(names)).encode("utf-8", "surrogateescape")).hexdigest()


WALK_NAMES = frozenset({".gitignore", "exclude", "pyvenv.cfg"})
"""Names of files that decide a walk though no language reads them."""


def listing(entries: Iterable[os.DirEntry[str]]) -> str:
    """``names_digest`` of the ``entries`` of a directory a walk may read or look at (``listing_names``). Two
    listings of a directory that are equal hold the same files for the walk to read: a change is in their
    bytes, which their stats tell."""
    return names_digest(listing_names(entries))


def listing_names(entries: Iterable[os.DirEntry[str]]) -> list[str]:
    """The names of the ``entries`` of a directory a walk may read or look at: folders other than those it
    always skips (``__pycache__``, ``.git``, ``node_modules``: a test run or a build that makes them changes
    nothing; a folder's name ends with ``/``), files a language reads or looks for, and the files named in
    ``WALK_NAMES``."""
    names = []
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            if entry.name not in VENDORED_DIRS or entry.name in PACKAGE_NAMES_KEPT:
                names.append(entry.name + "/")
        elif entry.name in WALK_NAMES or languages.is_read(entry.name):
            names.append(entry.name)
    return names


def listing_of(folder: str) -> str:
    """The ``listing`` of ``folder`` now (raises ``OSError`` when it cannot be listed)."""
    with os.scandir(folder) as entries:
        return listing(entries)


def _note_listing(state: _Walk, directory: str, entries: list[os.DirEntry[str]]) -> None:
    """Keep what a directory just listed holds: the names of a directory too recent for its time to tell a
    change (``WalkResult.dirs``), and its ``listing`` when the walk keeps them."""
    result = state.result
    if result.dirs.get(directory) == -1:
        result.dirs[directory] = names_digest(e.name for e in entries)
    if state.listings:
        result.listings[directory] = listing(entries)


def _note_dir(state: _Walk, directory: str) -> None:
    """Keep a directory's modification time (``directory``: its absolute path) before it is listed (nothing
    when it does not exist)."""
    try:
        st = os.stat(directory)
    except OSError:
        return
    state.result.dirs[directory] = state.mtime(st)


def _ignored(ignores: list[_Ignore], rel: str, is_dir: bool) -> str | None:
    verdict, by = None, None
    for ig in ignores:
        local = rel[len(ig.base) :] if rel.startswith(ig.base) else None
        if local is None:
            continue
        m = ig.match(local, is_dir)
        if m is not None:
            verdict, by = m, ig.source
    return by if verdict else None


def _decoded(result: WalkResult, rel: str, data: bytes, language: str) -> str | None:
    """The file's text as its language decodes it (``Language.decode``); None, and the file skipped with the
    language's reason, when it cannot."""
    text = languages.get(language).decode(data)
    if isinstance(text, tuple):
        result.skipped.append(Skip(rel, text[1]))
        return None
    return text


def _consider_guarded(
    state: _Walk, path: str | Path, rel: str, root_part: int = 0, absolute: str | None = None
) -> None:
    """``_consider``, with whatever reading, decoding or naming one file raises made that file's skip line."""
    try:
        _consider(state, path, rel, root_part, absolute)
    except (Exception, RecursionError) as exc:  # noqa: BLE001 - one file's failure is that file's verdict
        state.result.skipped.append(
            Skip(rel, f"unreadable ({type(exc).__name__}: {str(exc)[:120] or 'no detail'})")
        )


def _consider(
    state: _Walk, path: str | Path, rel: str, root_part: int = 0, absolute: str | None = None
) -> None:
    """Read one file (``rel``: its reported path, whose first ``root_part`` characters name its root when
    several roots are mapped; ``absolute``: its absolute path, when the caller knows it) or say why not."""
    result, max_bytes = state.result, state.max_bytes
    name = state.claims(rel)
    if name is None:
        base = os.path.basename(path)
        dot = base.rfind(".")
        suffix = base[dot:].lower() if 0 < dot < len(base) - 1 else "(no suffix)"  # as PurePath.suffix
        result.other[suffix] += 1
        return
    generated = _generated_by_name(rel, name)
    if generated is not None and not languages.get(name).keeps_generated:
        result.skipped.append(Skip(rel, f"generated ({generated})"))
        return
    try:
        st = os.stat(path)
        size = st.st_size
        if size > max_bytes:
            state.note(path, st=st, absolute=absolute)
            result.skipped.append(Skip(rel, f"too large ({size:,} bytes; the limit is {max_bytes:,})"))
            return
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        # readable later with the same stat (a chmod)
        result.stats[absolute or os.path.abspath(path)] = (-1, -1, None)
        result.skipped.append(Skip(rel, f"unreadable ({exc.strerror})"))
        return
    state.note(path, data, st, absolute)
    text = _accepted(result, rel, data, name, generated, root_part)
    if text is None:
        return
    module = state.module(name, str(path))
    if module is not None:
        result.disk[rel] = str(path)
    text = text.removeprefix("\ufeff")
    if text.encode("utf-8", "surrogatepass") != data:  # its text's hash is not its bytes'
        result.texts[absolute or os.path.abspath(path)] = content_hash(text)
    result.files.append(SourceFile(rel, text, module))
    result.bytes_read += len(data)


def _generated_by_name(rel: str, name: str) -> str | None:
    """Why a file of language ``name`` at ``rel`` is generated by its name (None: it is not, or the language
    reads such files as written)."""
    return "by its name" if generated_by_name(rel) and not languages.get(name).reads_generated else None


def _accepted(
    result: WalkResult, rel: str, data: bytes, name: str, generated: str | None, root_part: int = 0
) -> str | None:
    """The text of a file of language ``name`` that holds ``data`` and is not too large, when the walk reads
    it (a generated one is listed in ``result.generated``); else None, its skip line in ``result.skipped``."""
    language = languages.get(name)
    if b"\x00" in data[:8192]:
        result.skipped.append(Skip(rel, "binary (NUL bytes)"))
        return None
    text = _decoded(result, rel, data, name)
    if text is None:
        return None
    excluded = language.excluded(rel[root_part:], text)  # the root's own name decides nothing
    if excluded is not None:
        result.skipped.append(Skip(rel, f"not in the build: {excluded}"))
        return None
    if generated is None and not language.reads_generated and generated_by_header(text):
        generated = "its header says so"
    if generated is not None:
        if not language.keeps_generated:
            result.skipped.append(Skip(rel, f"generated ({generated})"))
            return None
        # a generated module is still a module others import: the dependency map keeps it and its imports,
        # and its analyzer leaves its definitions out
        result.generated.append(Skip(rel, f"generated ({generated})"))
    return text


def read_bytes_as_walked(
    rel: str, data: bytes, *, max_bytes: int = DEFAULT_MAX_BYTES, chosen: Collection[str] | None = None
) -> SourceFile | Skip | None:
    """What a walk makes of a file at ``rel`` (its path in the walked root) holding ``data``, by the rules
    ``_consider`` applies to a file it read: its ``SourceFile`` (without a module name: a walk names modules
    from the disk), or the ``Skip`` saying why it is not read; None when no language read is ``chosen``
    claims it. The rules that look at the file's neighbours (ignore files, vendored folders) are not applied
    (``igg.mapping.since`` judges a file of a commit at a path the work tree's walk read)."""
    try:
        return _read_bytes(rel, data, max_bytes, chosen)
    except (Exception, RecursionError) as exc:  # noqa: BLE001 - as _consider_guarded: that file's verdict
        return Skip(rel, f"unreadable ({type(exc).__name__}: {str(exc)[:120] or 'no detail'})")


def _read_bytes(
    rel: str, data: bytes, max_bytes: int, chosen: Collection[str] | None
) -> SourceFile | Skip | None:
    state = _Walk(max_bytes, tuple(chosen) if chosen is not None else languages.names())
    name = state.claims(rel)
    if name is None:
        return None
    generated = _generated_by_name(rel, name)
    if generated is not None and not languages.get(name).keeps_generated:
        return Skip(rel, f"generated ({generated})")
    if len(data) > max_bytes:
        return Skip(rel, f"too large ({len(data):,} bytes; the limit is {max_bytes:,})")
    text = _accepted(state.result, rel, data, name, generated)
    return SourceFile(rel, text.removeprefix("\ufeff"), None) if text is not None else state.result.skipped[0]


IgnoreRules = _Ignore
"""One ignore file's rules (``igg.documents.corpus`` walks folders by the same rules)."""
read_ignore = _read_ignore
ignored_by = _ignored
