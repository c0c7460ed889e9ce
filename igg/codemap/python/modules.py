"""Python module names exactly as Python imports them, whichever folder the user points at.

A file's name comes from the folders above it, not from where the mapping started: walking up from the
file's folder, every folder with an ``__init__.py`` (or ``__init__.pyi``) is a package and adds its name;
``__init__.py`` itself is the package's module. Pointing at ``src/requests`` or at ``src`` or at the
repository gives the same ``requests.api``.

PEP 420 namespace packages have no ``__init__.py``; a folder without one still counts as a package when

- it lies inside a package (``pkg/ns/inner/__init__.py``: ``pkg.ns.inner``), or
- it sits on an import root and holds packages itself (``google/api_core/__init__.py`` in a project folder
  with ``pyproject.toml``/``setup.py``/``setup.cfg``, in ``src/``/``lib/``, or in ``site-packages``:
  ``google.api_core``), recursively (``azure/mgmt/compute/__init__.py``).

Folders named ``src``/``lib``/``python``, ``site-packages`` and project folders without an ``__init__.py`` are
import roots, never packages; with one they are packages like any other (``openai/lib/__init__.py``).
A file outside any package is named by its stem (the way its own folder on ``sys.path`` imports it).

Where nothing on disk says so (a namespace portion pointed at directly, ``google/api_core``, or its parent
``google/`` in a folder that is not an import root), the tree's own absolute imports do: when the files of a
top-level package ``api_core`` are imported as ``google.api_core...`` more often than as ``api_core...``, the
package's modules are named under ``google`` (``prefixes_from_imports``). A user can say it outright with
``igg map-code --package-prefix google``.

``DiskTree`` answers these questions from the file system (``igg map-code``: also above the mapped
folder); ``PathTree`` from a set of relative paths (files given in a request's context).
"""

from __future__ import annotations

import os
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from igg.codemap.sources import SourceFile

ROOT_NAMES = frozenset({"src", "lib", "python", "site-packages", "dist-packages", "Lib"})
"""Folder names that are import roots (``sys.path`` entries), never packages."""
PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg")
"""Files that make a folder a project root (an import root, never a package)."""
INIT_NAMES = ("__init__.py", "__init__.pyi")
PYTHON_FILES = (".py", ".pyi", ".pyc", ".pyd", ".so")


class Tree(Protocol):
    """What naming needs to know about folders (given as tuples of path parts)."""

    def has_init(self, folder: tuple[str, ...]) -> bool: ...

    def is_project(self, folder: tuple[str, ...]) -> bool: ...

    def subfolders(self, folder: tuple[str, ...]) -> list[str]: ...

    def can_go_up(self, folder: tuple[str, ...]) -> bool: ...

    def only_python(self, folder: tuple[str, ...]) -> bool: ...


def _identifier(name: str) -> bool:
    return name.isidentifier()


class Namer:
    """Module names for files in one ``Tree`` (folder answers are cached)."""

    def __init__(self, tree: Tree) -> None:
        self.tree = tree
        self._package: dict[tuple[str, ...], bool] = {}

    def module(self, parts: tuple[str, ...]) -> str:
        """The dotted module name of the file at ``parts`` (folder parts + file name)."""
        folder, filename = parts[:-1], parts[-1]
        stem = filename.rsplit(".", 1)[0]
        names: list[str] = [] if stem == "__init__" else [stem]
        while folder and self.is_package(folder):
            names.append(folder[-1])
            folder = folder[:-1]
        return ".".join(reversed(names)) or stem

    def is_package(self, folder: tuple[str, ...]) -> bool:
        """True when ``folder`` is a regular or namespace package (see the module doc)."""
        known = self._package.get(folder)
        if known is None:
            known = self._package[folder] = self._decide(folder)
        return known

    def _decide(self, folder: tuple[str, ...]) -> bool:
        name = folder[-1]
        if not _identifier(name):
            return False
        if self.tree.has_init(folder):
            return True  # whatever its name: ``openai/lib/__init__.py`` is the package ``openai.lib``
        if name in ROOT_NAMES:
            return False
        if self.tree.is_project(folder):
            return False
        parent = folder[:-1]
        if not parent or not self.tree.can_go_up(folder):
            return False
        if self.is_package(parent):
            return True  # a folder without __init__.py inside a package: a namespace package in it
        if not self.tree.only_python(folder) or not self._holds_packages(folder):
            return False  # a project or plain folder (README, LICENSE, .git, ...), not a namespace portion
        return self._import_root(parent)

    def _import_root(self, folder: tuple[str, ...]) -> bool:
        return folder[-1] in ROOT_NAMES or self.tree.is_project(folder)

    def _holds_packages(self, folder: tuple[str, ...], depth: int = 0) -> bool:
        for sub in self.tree.subfolders(folder):
            if not _identifier(sub):
                continue
            if self.tree.has_init((*folder, sub)):
                return True
            if depth < 2 and self._holds_packages((*folder, sub), depth + 1):
                return True
        return False


class DiskTree:
    """Folder answers from the file system (absolute path parts)."""

    def __init__(self) -> None:
        self._listing = lru_cache(maxsize=4096)(self._list)

    @staticmethod
    def _list(folder: tuple[str, ...]) -> tuple[frozenset[str], tuple[str, ...], bool]:
        try:
            entries = list(os.scandir(os.path.join(os.sep, *folder)))
        except OSError:
            return frozenset(), (), False
        files = frozenset(e.name for e in entries if not e.is_dir())
        dirs = tuple(sorted(e.name for e in entries if e.is_dir() and not e.name.startswith(".")))
        only_python = all(n.endswith(PYTHON_FILES) or n == "py.typed" for n in files) and not any(
            e.name.startswith(".") for e in entries
        )
        return files, dirs, only_python

    def only_python(self, folder: tuple[str, ...]) -> bool:
        return self._listing(folder)[2]

    def has_init(self, folder: tuple[str, ...]) -> bool:
        files = self._listing(folder)[0]
        return any(n in files for n in INIT_NAMES)

    def is_project(self, folder: tuple[str, ...]) -> bool:
        files = self._listing(folder)[0]
        return any(n in files for n in PROJECT_MARKERS)

    def subfolders(self, folder: tuple[str, ...]) -> list[str]:
        return list(self._listing(folder)[1])

    def can_go_up(self, folder: tuple[str, ...]) -> bool:
        return len(folder) > 1


class PathTree:
    """Folder answers from a set of relative file paths (the root is an import root)."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.files: dict[tuple[str, ...], set[str]] = {}
        self.dirs: dict[tuple[str, ...], set[str]] = {}
        for p in paths:
            parts = tuple(p.split("/"))
            self.files.setdefault(parts[:-1], set()).add(parts[-1])
            for i in range(len(parts) - 1):
                self.dirs.setdefault(parts[:i], set()).add(parts[i])

    def has_init(self, folder: tuple[str, ...]) -> bool:
        return any(n in self.files.get(folder, ()) for n in INIT_NAMES)

    def is_project(self, folder: tuple[str, ...]) -> bool:
        return any(n in self.files.get(folder, ()) for n in PROJECT_MARKERS)

    def subfolders(self, folder: tuple[str, ...]) -> list[str]:
        return sorted(self.dirs.get(folder, ()))

    def can_go_up(self, folder: tuple[str, ...]) -> bool:
        return True

    def only_python(self, folder: tuple[str, ...]) -> bool:
        return True


class _PathNamer(Namer):
    def _import_root(self, folder: tuple[str, ...]) -> bool:
        return not folder or super()._import_root(folder)

    def _decide(self, folder: tuple[str, ...]) -> bool:
        if len(folder) == 1 and not self.tree.has_init(folder):
            name = folder[0]
            return (
                _identifier(name)
                and name not in ROOT_NAMES
                and not self.tree.is_project(folder)
                and self.tree.only_python(folder)
                and self._holds_packages(folder)
            )
        return super()._decide(folder)


def names_for_paths(paths: Iterable[str]) -> dict[str, str]:
    """Module names of the Python files among relative ``paths`` (a request's files), by path."""
    paths = list(paths)
    namer = _PathNamer(PathTree(paths))
    return {p: namer.module(tuple(p.split("/"))) for p in paths if p.endswith((".py", ".pyi"))}


class DiskNamer:
    """Module names of files on disk (absolute paths), sharing folder answers across files."""

    def __init__(self) -> None:
        self._namer = Namer(DiskTree())

    def module(self, path: str) -> str:
        absolute = os.path.abspath(path)
        return self._namer.module(tuple(p for p in absolute.split(os.sep) if p))


IMPORT_LINE = re.compile(
    r"\n[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import[ \t]+\(?[ \t]*([\w \t,]*)"
    r"|import[ \t]+([\w.]+(?:[ \t]*,[ \t]*[\w.]+)*))"
)
"""An import statement's module names (absolute ones: relative names start with a dot and are left out), at
the start of a line of a text read with a newline before it (a pattern that starts with one character is
searched for in C, where ``^`` in multi-line mode tries every position)."""


def imported_modules(text: str) -> list[str]:
    """The absolute names the import statements of ``text`` name, read from their lines: ``import a.b`` and
    ``from a import b`` give ``a.b`` (and ``a``: ``b`` may be a module or a name in ``a``)."""
    out: list[str] = []
    last = text.rfind("import")  # every line it finds holds the word: none after the word's last line
    if last < 0:
        return out
    text = "\n" + text
    end = text.find("\n", last + 1)
    for m in IMPORT_LINE.finditer(text, 0, len(text) if end < 0 else end):
        source = m.group(1)
        if source is None:
            out.extend(n.strip().split(" ")[0] for n in m.group(3).split(","))
        elif not source.startswith("."):
            out.append(source)
            out.extend(f"{source}.{n.strip().split(' ')[0]}" for n in m.group(2).split(",") if n.strip())
    return out


Unit = tuple[str, tuple[str, ...]]
"""A top-level package or module outside packages: its name and the folders above it."""


def prefixes_from_imports(units: Iterable[Unit], texts: Iterable[str], known: set[str]) -> dict[Unit, str]:
    """The package prefix the tree's own imports give each top-level package or module (see the module doc).

    A unit ``T`` gets the prefix ``P`` when imports ``P.T...`` naming one of ``known`` (the tree's module
    and package names) outnumber the imports of ``T...`` itself, and the folders above ``T`` end in ``P``'s
    names: ``google/api_core/exceptions.py`` imported as ``google.api_core.exceptions``. The imports so make
    ``google`` a namespace: every other unit below its folder is named under it too (``google/type/x.py``:
    ``google.type.x``, whether the tree imports it or not)."""
    by_name: defaultdict[str, list[tuple[str, ...]]] = defaultdict(list)
    for name, folders in set(units):
        by_name[name].append(folders)
    direct: Counter[str] = Counter()
    via: defaultdict[Unit, Counter[str]] = defaultdict(Counter)
    for text in texts:
        for imported in imported_modules(text):
            parts = imported.split(".")
            if parts[0] in by_name:
                direct[parts[0]] += 1
                continue
            for k in range(1, len(parts)):
                if parts[k] in by_name and ".".join(parts[k:]) in known:
                    segments = tuple(parts[:k])
                    for folders in by_name[parts[k]]:
                        if folders[len(folders) - k :] == segments:
                            via[(parts[k], folders)][".".join(segments)] += 1
                    break
    out: dict[Unit, str] = {}
    roots: set[tuple[str, ...]] = set()
    for unit, counts in via.items():
        prefix, hits = counts.most_common(1)[0]
        if hits > direct[unit[0]]:
            out[unit] = prefix
            roots.add(unit[1][: len(unit[1]) - prefix.count(".")])
    # the rest of a namespace the imports established: every unit below one of its folders (the chain of
    # folders between them has no __init__.py, or the units would not be top-level)
    for name, all_folders in by_name.items():
        for folders in all_folders:
            root = next((folders[:i] for i in range(1, len(folders) + 1) if folders[:i] in roots), None)
            if (
                (name, folders) not in out
                and root is not None
                and all(_identifier(f) for f in folders[len(root) - 1 :])
            ):
                out[(name, folders)] = ".".join(folders[len(root) - 1 :])
    return out


def folders_above(path: str, module: str) -> tuple[str, ...]:
    """The folders of ``path`` (an absolute file path) above the top-level package of its ``module`` name."""
    parts = [p for p in os.path.abspath(path).split(os.sep) if p]
    folder = parts[:-1]
    depth = len(module.split(".")) - (0 if parts[-1].rsplit(".", 1)[0] == "__init__" else 1)
    return tuple(folder[: len(folder) - depth]) if depth else tuple(folder)


def prefixed(module: str, unit_prefix: str | None, everything: str | None = None) -> str:
    """``module`` under ``everything`` (the user's prefix), else under its unit's prefix, if any."""
    prefix = everything or unit_prefix
    return f"{prefix}.{module}" if prefix else module


def rename_under_prefixes(
    files: Sequence[SourceFile], disk: Mapping[str, str], everything: str | None
) -> list[SourceFile]:
    """Python modules (``files``, read from ``disk``) renamed under the prefix the user gives
    (``everything``), or the one the tree's own imports give their top-level package
    (``prefixes_from_imports``)."""
    python = [f for f in files if f.module is not None]
    if not python:
        return list(files)
    units: dict[str, Unit] = {}
    prefixes: dict[Unit, str] = {}
    if not everything:
        units = {
            f.path: (f.module.split(".")[0], folders_above(disk[f.path], f.module))
            for f in python
            if f.module
        }
        known = {
            ".".join(parts[:i])
            for f in python
            if f.module
            for parts in [f.module.split(".")]
            for i in range(1, len(parts) + 1)
        }
        prefixes = prefixes_from_imports(units.values(), (f.text for f in python), known)
        if not prefixes:
            return list(files)
    return [
        replace(f, module=prefixed(f.module, None if everything else prefixes.get(units[f.path]), everything))
        if f.module is not None
        else f
        for f in files
    ]
