"""Which files a change touched since a commit, told from git without unpacking the commit's tree, and
whether the commit's state is the work tree's but for them (``igg.mapping.since.commit_facts``): the files
edited, those added since (the commit's state leaves them out) and those removed since (the commit's state
has them back, named and placed as the walk would have named and placed them).

A file added or removed since must change no other file's name: none is a configuration file, a stub, a marker
its language's naming looks for or a file whose presence names other modules (``Language.names_others``: a
package's ``__init__.py``), and its folder holds, in both states, another file of its language that the walk
read (a folder that comes or goes with its first or last file may change how the files below it are named).
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from igg.codemap import language as languages
from igg.codemap.sources import SourceFile
from igg.codemap.treeindex import Added
from igg.codemap.walk import ignored_by, read_bytes_as_walked, read_ignore

REGULAR = (b"100644", b"100755")
"""The modes of a regular file in a git tree (a link is 120000, a submodule 160000)."""

Touched = tuple[list[tuple[str, str]], list[tuple[str, str]], list[tuple[str, str]]]
"""The files a change edited that the walk reads now, those it skips now, and those it removed, each as (blob
id at the commit, path)."""


def edited_files(diff: bytes, prefix: str, read_now: Collection[str], added: set[str]) -> Touched | None:
    """The files ``git diff --raw -z`` (``diff``) says the change edited, as (blob id at the commit, path):
    those the walk read now (``read_now``), those of a language read that the walk skips now (skipped then
    too: binary, not in the build, too large, they change nothing), and the regular files of a language read
    the work tree no longer has (``removed_source`` judges each); None when a file a walk reads was renamed,
    changed in kind or added (but those of ``added``), or an ignore file changed."""
    changed: list[tuple[str, str]] = []
    skipped: list[tuple[str, str]] = []
    removed: list[tuple[str, str]] = []
    fields = diff.split(b"\0")
    for meta, raw in zip(fields[0:-1:2], fields[1::2], strict=True):
        old_mode, new_mode, oid, _, status = meta.lstrip(b":").split()
        path = os.fsdecode(raw)[len(prefix) :]
        ignore_file = path.rpartition("/")[2] == ".gitignore"
        read = languages.is_read(path) or ignore_file
        if status == b"A" and path in added:
            continue  # the commit lacks it: its state leaves it out
        if status == b"D" and old_mode in REGULAR and read and not ignore_file:
            removed.append((oid.decode(), path))
            continue
        if status != b"M" or old_mode not in REGULAR or new_mode not in REGULAR:
            if read:
                return None
            continue
        if path in read_now:
            changed.append((oid.decode(), path))
        elif ignore_file:
            return None
        elif read:
            skipped.append((oid.decode(), path))
    return changed, skipped, removed


def added_files(read_now: Iterable[str], at_commit: set[str], prefix: str) -> set[str] | None:
    """The files the work tree's walk read (``read_now``) that the commit lacks (added since, or untracked),
    when the commit's state is the work tree's without them (see the module doc); None: the commit's tree
    must be mapped."""
    now = list(read_now)
    added = {path for path in now if prefix + path not in at_commit}
    if not added:
        return added
    return added if alone(added, (), now, [path for path in now if path not in added]) else None


def alone(added: Iterable[str], removed: Iterable[str], now: Iterable[str], then: Iterable[str]) -> bool:
    """Whether the files ``added`` to the walk's files ``then`` and those ``removed`` from them (``now``: the
    files read now) change no other file's name (see the module doc): a map's update takes them alone."""
    moved = [*added, *removed]
    if not moved:
        return True
    both = set(now) & set(then)
    kept = {_folder(path) for path in both if not languages.is_config(path)}
    return all(_names_no_other(path) and _folder(path) in kept for path in moved)


def sibling_files(keys: Mapping[str, Any], added: set[str]) -> dict[tuple[str, Any], str]:
    """A file the walk read now that the commit has too, other than a configuration file, for each folder and
    language (``keys``: the files the walk read now; ``added``: those the commit lacks)."""
    siblings: dict[tuple[str, Any], str] = {}
    for path in keys:
        if path not in added and not languages.is_config(path):
            siblings.setdefault(_folder(path), path)
    return siblings


def removed_source(
    then: SourceFile,
    root: Path,
    keys: Mapping[str, tuple[str | None, str]],
    siblings: Mapping[tuple[str, Any], str],
) -> SourceFile | None:
    """``then``, a file of the commit the work tree no longer has (``read_bytes_as_walked`` of its blob;
    ``root``: the walked folder), named as the walk would have named it (``Language.module_beside``), when the
    commit's state is the work tree's with it back (see the module doc) and the work tree's ignore files (the
    commit's too) do not ignore it; None: the commit's tree must be mapped. ``keys``: each file the walk read
    now, by path: its module name and facts key; ``siblings``: ``sibling_files``."""
    path = then.path
    if not _names_no_other(path) or ignored(root, path):
        return None
    named = named_beside(path, siblings, lambda p: keys[p][0], lambda p: str(root / p))
    return replace(then, module=named[0]) if named is not None else None


def named_beside(
    path: str,
    siblings: Mapping[tuple[str, Any], str],
    module_of: Callable[[str], str | None],
    on_disk: Callable[[str], str],
) -> tuple[str | None] | None:
    """The module name the walk gives ``path`` (a file that may be gone), as a 1-tuple: its language's
    ``module_beside`` the file of its folder in ``siblings`` (``sibling_files``), which the walk named
    ``module_of(sibling)`` and read at ``on_disk(sibling)``; None when it has no sibling or cannot be
    named."""
    name = languages.language_of(path)
    sibling = siblings.get(_folder(path))
    if name is None or sibling is None:
        return None
    at = on_disk(sibling)
    here = os.path.join(os.path.dirname(at), path.rpartition("/")[2])
    return languages.get(name).module_beside(here, at, module_of(sibling))


def in_walk_order(paths: Sequence[str], removed: Iterable[str]) -> list[str]:
    """``paths`` (the files a walk read, in its order) with ``removed`` where the walk would have read them: a
    folder's files are read together, sorted by name (``igg.codemap.walk``), and each removed file's folder
    still has one of them."""
    waiting: dict[str, deque[str]] = {}
    for path in sorted(removed, key=lambda p: p.rpartition("/")[2]):
        waiting.setdefault(path.rpartition("/")[0], deque()).append(path)
    out: list[str] = []
    for i, path in enumerate(paths):
        folder, _, base = path.rpartition("/")
        mine = waiting.get(folder)
        while mine and mine[0].rpartition("/")[2] < base:
            out.append(mine.popleft())
        out.append(path)
        if mine and (i + 1 == len(paths) or paths[i + 1].rpartition("/")[0] != folder):
            out.extend(mine)  # after the folder's last file
            mine.clear()
    return out


def renamed(
    before: dict[str, Any], now: dict[str, str], added: list[str], removed: list[str]
) -> list[dict[str, str]]:
    """The removed files whose content an added file has (``from`` -> ``to``), by their hashes."""
    first: dict[str, str] = {}  # each content hash's first added file (a scan per removed file was quadratic)
    for path in added:
        first.setdefault(now[path], path)
    found: list[dict[str, str]] = []
    for old in removed:
        twin = first.get(before[old]) if before[old] else None
        if twin is not None:
            found.append({"from": old, "to": twin})
    return found


Moved = tuple[set[str], list[str], Mapping[str, str]]
"""The files an update found added and removed, and where on disk the walk read each file a language names
from the disk (``WalkResult.disk``)."""


def named_then(
    moved: Moved, module_of: dict[str, str | None], before: dict[str, Any]
) -> dict[str, tuple[str | None, str | None]] | None:
    """Each removed file of ``moved``, by path: the module name the walk gave it at the last map (its
    language's ``module_beside`` a file of its folder the walk read now and then; ``module_of``: the name of
    each file read now) and its content hash then; None when a name cannot be told."""
    added, removed, disk = moved
    if not removed:
        return {}
    siblings = sibling_files(module_of, added)
    then: dict[str, tuple[str | None, str | None]] = {}
    for path in removed:
        named = named_beside(path, siblings, module_of.__getitem__, lambda p: disk.get(p, p))
        if named is None:
            return None
        then[path] = (named[0], before[path])
    return then


def _names_no_other(path: str) -> bool:
    """Whether a file at ``path`` is one whose presence or absence names no other file (the module doc)."""
    name = languages.language_of(path)
    return not (
        name is None
        or languages.is_config(path)
        or languages.is_stub(path)
        or path.rpartition("/")[2] in languages.MARKER_NAMES
        or languages.get(name).names_others(path)
    )


def _folder(path: str) -> tuple[str, Any]:
    return path.rpartition("/")[0], languages.language_of(path)


def ignored(root: Path, path: str) -> bool:
    """Whether the ignore files from ``root`` down to the folder of ``path`` ignore it, as the walk reads them
    (the folder itself is walked: another file of it was read)."""
    parts = path.split("/")
    rules = []
    for depth in range(len(parts)):
        rel_dir = "".join(f"{p}/" for p in parts[:depth])
        found = read_ignore(root / rel_dir / ".gitignore", rel_dir, rel_dir + ".gitignore")
        if found is not None:
            rules.append(found)
    return ignored_by(rules, path, False) is not None


def added_sources(
    paths: Sequence[Path],
    moved: tuple[Sequence[Added], Sequence[str]],
    listed: Sequence[tuple[str, str | None]],
    *,
    max_bytes: int,
    chosen: Sequence[str] | None,
) -> tuple[list[SourceFile], list[str]] | None:
    """The files added to the tree of ``paths`` (one folder; ``moved``: those added, the absolute paths of
    those removed, as ``TreeIndex.changed`` finds them) as the walk reads and names them, beside the files it
    read (``listed``: ``TreeIndex.sources``), and the paths of those removed as the walk gave them; None when
    one is not a file an update takes alone (see the module doc; a file removed must be one the walk read)."""
    if len(paths) != 1 or not paths[0].is_dir():
        return None
    added, removed = moved
    root = os.path.abspath(paths[0])
    rels = [os.path.relpath(path, root).replace(os.sep, "/") for path, _, _ in added]
    gone = [os.path.relpath(path, root).replace(os.sep, "/") for path in removed]
    module_of = dict(listed)
    now = [*(p for p in module_of if p not in gone), *rels]
    if any(rel in module_of for rel in rels) or any(p not in module_of for p in gone):
        return None
    if not alone(rels, gone, now, list(module_of)):
        return None
    siblings = sibling_files({p: m for p, m in module_of.items() if p not in gone}, set(rels))
    found: list[SourceFile] = []
    for (_, data, _), rel in zip(added, rels, strict=True):
        if ignored(Path(root), rel):
            return None
        source = read_bytes_as_walked(rel, data, max_bytes=max_bytes, chosen=chosen)
        named = named_beside(rel, siblings, module_of.__getitem__, lambda p: os.path.join(root, p))
        if not isinstance(source, SourceFile) or named is None:
            return None
        found.append(replace(source, module=named[0]))
    return found, gone


def with_added(
    listed: Sequence[tuple[str, str | None]], added: Sequence[SourceFile], removed: Collection[str] = ()
) -> list[tuple[str, str | None]]:
    """``listed`` (the files the walk read, in its order, with their module names: ``TreeIndex.sources``) with
    the files ``added`` where a walk reads them, without those ``removed`` (paths)."""
    modules = {p: m for p, m in listed if p not in removed}
    kept = list(modules)
    modules.update((s.path, s.module) for s in added)
    return [(path, modules[path]) for path in in_walk_order(kept, [s.path for s in added])]
