"""What a commit range did to the dependencies: ``igg map-code PATH --since REF`` and ``igg check --since
REF``.

Both states are mapped the way ``--update`` re-maps: the work tree is walked and only files whose content the
facts cache does not know are parsed; the tree of ``REF`` is taken from git (``git archive``, so the work
tree, the index and the checked-out branch are never touched), walked with the same rules, and its files are
looked up by content in the same cache, so a file the change left alone is parsed at most once, whichever
state asks first. Each state is linked whole (linking is cheap; parsing is not) and placed in the code schema
as a fresh map places it (``igg.mapping.depgraph.model_graph``).

``changes`` lifts both graphs' dependencies to modules and packages and compares them by name: what the change
added, with the statements behind each in the work tree, and what it removed, with their statements in
``REF``. ``tests/unit/test_rules_since.py`` pins this to diffing two fresh maps of the two checkouts.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from igg.codemap import language as languages
from igg.codemap.cache import FactsCache
from igg.codemap.language import Reads
from igg.codemap.link import CodeModel, link
from igg.codemap.schema import load_code_schema
from igg.codemap.walk import DEFAULT_MAX_BYTES, walk
from igg.errors import Problem, RequestInvalid
from igg.mapping.depgraph import model_graph
from igg.mapping.prepare import parse_all
from igg.rules.check import hop
from igg.rules.cycles import lift
from igg.rules.depgraph import DepGraph, Edge
from igg.rules.report import DependencyChange

LEVELS = ("module", "package")
SCRATCH = Path("/dev/shm")
"""Where REF's tree is unpacked when it can be (a tmpfs); else the system's temporary folder."""


@dataclass(kw_only=True)
class TreeState:
    """One state of the mapped trees: its linked model and the rules' graph of it."""

    model: CodeModel
    graph: DepGraph
    files: int
    parsed: int
    """Files parsed (the others came from the facts cache)."""


def tree_state(
    paths: Sequence[Path],
    cache: FactsCache,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    package_prefix: str | None = None,
    schema: str | Path | None = None,
    reads: Reads = "all",
) -> TreeState:
    """Walk, parse (what ``cache`` lacks) and link ``paths``; place the result in the code schema.
    ``reads`` (``igg.rules.reads``): only as much as that (``imports``: each file's imports, linked)."""
    walked = walk(list(paths), max_bytes=max_bytes, package_prefix=package_prefix)
    if not any(not languages.is_config(f.path) for f in walked.files):
        raise RequestInvalid(
            [Problem("PATH", f"no {languages.spoken()} source files under {', '.join(map(str, paths))}")],
            source="the command line",
        )
    counts: dict[str, int] = {}
    facts, _ = parse_all(walked.files, cache=cache, counts=counts, bodies=False, reads=reads)
    model = link(facts, reads=reads)
    graph = model_graph(model, load_code_schema(schema).compile())
    return TreeState(model=model, graph=graph, files=len(walked.files), parsed=counts.get("parsed", 0))


def git_top(path: Path) -> Path | None:
    """The top of the git work tree holding ``path`` (None: it is in none, or git is missing)."""
    where = path if path.is_dir() else path.parent
    found = _git(where, "rev-parse", "--show-toplevel")
    return Path(found.decode().strip()) if found is not None else None


def git_root(path: Path) -> Path:
    """The top of the git work tree holding ``path``; ``RequestInvalid`` when there is none."""
    found = git_top(path)
    if found is None:
        raise RequestInvalid(
            [
                Problem(
                    "--since",
                    f"{path} is not in a git work tree: --since compares it with a commit of its repository",
                )
            ],
            source="the command line",
        )
    return found


def _git(where: Path, *args: str) -> bytes | None:
    try:
        done = subprocess.run(["git", "-C", str(where), *args], capture_output=True, timeout=300)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def check_ref(ref: object) -> None:
    """Refuse a ``--since`` value that cannot name a commit (``RequestInvalid``, exit 2): empty (an unset CI
    variable), an option, or what argparse makes of ``--since=--`` (an empty list)."""
    if not isinstance(ref, str) or not ref.strip() or ref.startswith("-"):
        ref = ref if isinstance(ref, str) else "--"
        raise RequestInvalid(
            [
                Problem(
                    "--since",
                    f"{ref!r} is no git ref: give a commit such as HEAD~1, origin/main "
                    "or a commit id (an empty value often is an unset CI variable)",
                )
            ],
            source="the command line",
        )


def ref_state(
    paths: Sequence[Path],
    ref: str,
    cache: FactsCache,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    **options: object,
) -> TreeState:
    """The state of ``paths`` at the commit ``ref`` of their repository (see the module doc)."""
    check_ref(ref)
    root = git_root(paths[0])
    commit = _git(root, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
    if commit is None:
        raise RequestInvalid(
            [
                Problem(
                    "--since",
                    f"{ref!r} is no commit of the repository at {root} (try HEAD~1, a "
                    "branch such as origin/main, or a commit id; a shallow clone may lack it: "
                    "fetch with --depth 0 or fetch that ref)",
                )
            ],
            source="the command line",
        )
    rels = []
    for p in paths:
        resolved = p.resolve()
        if not resolved.is_relative_to(root):
            raise RequestInvalid(
                [Problem("--since", f"{p} is outside the repository at {root}")], source="the command line"
            )
        rels.append(resolved.relative_to(root))
    blobs = _wanted_blobs(root, commit.decode().strip(), rels, ref, max_bytes)
    # in memory when the system has a tmpfs with room for these files; else the system's temporary folder
    need = sum(size for _, _, size in blobs) + SCRATCH_SLACK
    scratch = SCRATCH if _room(SCRATCH) > need else None
    with tempfile.TemporaryDirectory(prefix="igg-since-", dir=scratch) as tmp:
        top = Path(tmp) / root.name
        _write_blobs(root, blobs, top)
        there = [top / r for r in rels]
        missing = [str(r) for r, t in zip(rels, there, strict=True) if not t.exists()]
        if missing:
            raise RequestInvalid(
                [
                    Problem(
                        "--since", f"{', '.join(missing)} did not exist (or held no source file) at {ref!r}"
                    )
                ],
                source="the command line",
            )
        return tree_state(there, cache, max_bytes=max_bytes, **options)  # type: ignore[arg-type]


SCRATCH_SLACK = 16 << 20
"""Room left free on the tmpfs beyond the files taken from the commit (a Docker container's /dev/shm is 64
MB)."""


def _room(folder: Path) -> int:
    """Bytes free in ``folder`` when it is a writable folder (else 0)."""
    try:
        if not folder.is_dir() or not os.access(folder, os.W_OK):
            return 0
        stat = os.statvfs(folder)
    except OSError:
        return 0
    return stat.f_bavail * stat.f_frsize


def _wanted_blobs(
    root: Path, commit: str, rels: Sequence[Path], ref: str, max_bytes: int
) -> list[tuple[str, str, int]]:
    """(object id, path, size) of the files at ``commit`` under ``rels`` the walk would read: regular files
    (symbolic links and submodules are skipped, as the work-tree walk skips links) that a language reads or
    looks for, or ``.gitignore`` files, within ``max_bytes`` (bigger ones the walk skips unread)."""
    specs = [str(r) for r in rels if str(r) != "."]
    listing = _git(
        root, "--literal-pathspecs", "ls-tree", "-r", "-z", "--long", "--full-tree", commit, "--", *specs
    )
    if listing is None:
        raise RequestInvalid(
            [Problem("--since", f"git could not list {', '.join(map(str, rels))} at {ref!r}")],
            source="the command line",
        )
    blobs = []
    for entry in listing.split(b"\0"):
        if not entry:
            continue
        meta, _, raw_path = entry.partition(b"\t")
        mode, kind, oid, size = meta.split()
        path = os.fsdecode(raw_path)
        if kind != b"blob" or mode not in (b"100644", b"100755"):
            continue  # a symbolic link (120000), a submodule (160000)
        if not (languages.is_read(path) or path.rpartition("/")[2] == ".gitignore") or int(size) > max_bytes:
            continue
        blobs.append((oid.decode(), path, int(size)))
    return blobs


def _write_blobs(root: Path, blobs: Sequence[tuple[str, str, int]], top: Path) -> None:
    """Write each blob under ``top`` at its path, streamed from one ``git cat-file --batch`` one at a time."""
    if not blobs:
        return
    with subprocess.Popen(
        ["git", "-C", str(root), "cat-file", "--batch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    ) as git:
        assert git.stdin is not None and git.stdout is not None
        writer = threading.Thread(
            target=_send_ids, args=(git.stdin, [oid for oid, _, _ in blobs]), daemon=True
        )
        writer.start()
        made: set[Path] = set()
        for oid, path, _ in blobs:
            header = git.stdout.readline().split()
            if len(header) != 3 or header[0].decode() != oid:
                raise RequestInvalid(
                    [Problem("--since", f"git could not read {path} ({oid})")], source="the command line"
                )
            data = git.stdout.read(int(header[2]))
            git.stdout.read(1)  # the newline after the content
            if not inside(path):
                continue  # git never stores such a path; a damaged tree is not written outside the scratch
            target = top / path
            if target.parent not in made:
                target.parent.mkdir(parents=True, exist_ok=True)
                made.add(target.parent)
            with open(target, "wb") as f:
                f.write(data)
        writer.join()


def inside(path: str) -> bool:
    """Whether ``path``, a path of a git tree, names a file below the folder it is written under: relative,
    with no empty, ``.`` or ``..`` part. The scratch folder holds only the folders and regular files written
    there, no symbolic link, so a path that passes cannot resolve outside it."""
    return bool(path) and not path.startswith("/") and all(p not in ("", ".", "..") for p in path.split("/"))


def _send_ids(stream: IO[bytes], oids: list[str]) -> None:
    try:
        for oid in oids:
            stream.write(oid.encode() + b"\n")
        stream.close()
    except OSError:
        pass  # git went away: the reader reports it


def dependencies(graph: DepGraph, level: str) -> dict[tuple[str, str], list[Edge]]:
    """(source name, target name) -> the edges behind it, for every dependency lifted to ``level`` (module or
    package; a table is its own node, an external package too). Containment is no dependency."""
    out: dict[tuple[str, str], list[Edge]] = {}
    lifted: dict[str, str | None] = {}
    for edge in graph.edges.values():
        if edge.type == "CONTAINS":
            continue
        ends = []
        for end in (edge.source, edge.target):
            if end not in lifted:
                up = lift(graph, end, level)  # type: ignore[arg-type]
                lifted[end] = (
                    up if up is not None else (end if graph.nodes[end].type == "DatabaseTable" else None)
                )
            ends.append(lifted[end])
        a, b = ends
        if a is None or b is None or a == b:
            continue
        out.setdefault((graph.name(a), graph.name(b)), []).append(edge)
    return out


def changes(base: DepGraph, head: DepGraph) -> tuple[list[DependencyChange], list[DependencyChange]]:
    """(added, removed) dependencies from ``base`` to ``head``, module level then package level, by name."""
    added: list[DependencyChange] = []
    removed: list[DependencyChange] = []
    for level in LEVELS:
        before, after = dependencies(base, level), dependencies(head, level)
        for (a, b), edges in sorted(after.items()):
            if (a, b) not in before:
                added.append(
                    DependencyChange(
                        level=level,  # type: ignore[arg-type]
                        source=a,
                        target=b,
                        edges=[hop(head, e) for e in edges],
                    )
                )
        for (a, b), edges in sorted(before.items()):
            if (a, b) not in after:
                removed.append(
                    DependencyChange(
                        level=level,  # type: ignore[arg-type]
                        source=a,
                        target=b,
                        edges=[hop(base, e) for e in edges],
                    )
                )
    return added, removed
