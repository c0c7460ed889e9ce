"""What a commit range did to the dependencies: ``igg map-code PATH --since REF`` and ``igg check --since
REF``.

Both states are mapped the way ``--update`` re-maps: the work tree is walked and only files whose content the
facts cache does not know are parsed; the tree of ``REF`` is taken from git (``git archive``, so the work
tree, the index and the checked-out branch are never touched), walked with the same rules, and its files are
looked up by content in the same cache, so a file the change left alone is parsed at most once, whichever
state asks first. Each state is linked whole (linking is cheap; parsing is not) and placed in the code schema
as a fresh map places it (``igg.mapping.depgraph.model_graph``).

``igg.mapping.changes`` compares the two graphs' dependencies. ``tests/unit/test_rules_since.py`` pins this to
diffing two fresh maps of the two checkouts.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

from igg.codemap import language as languages
from igg.codemap.cache import FactsCache
from igg.codemap.facts import FileFacts, without_bodies
from igg.codemap.language import Reads
from igg.codemap.link import CodeModel, link
from igg.codemap.schema import load_code_schema
from igg.codemap.sources import SourceFile
from igg.codemap.treeindex import TreeIndex
from igg.codemap.walk import DEFAULT_MAX_BYTES, WalkResult, read_bytes_as_walked, walk
from igg.errors import Problem, RequestInvalid
from igg.mapping.depgraph import model_graph
from igg.mapping.prepare import parse_all
from igg.mapping.touched import added_files, edited_files, in_walk_order, removed_source, sibling_files
from igg.rules.depgraph import DepGraph

SCRATCH = Path("/dev/shm")
"""Where REF's tree is unpacked when it can be (a tmpfs); else the system's temporary folder."""


@dataclass(kw_only=True)
class TreeState:
    """One state of the mapped trees: its linked model and the rules' graph of it."""

    model: CodeModel | None
    """None when the graph was kept (``igg.mapping.kept``)."""
    graph: DepGraph
    files: int
    parsed: int
    """Files parsed (the others came from the facts cache)."""
    facts: Mapping[str, FileFacts] = field(default_factory=dict)
    """Each file read, by its path in the walked root: its facts as linked."""
    keys: dict[str, tuple[str | None, str]] = field(default_factory=dict)
    """Each file read, by its path: its module name as its language named it (``SourceFile.module``, which
    its facts may spell otherwise: Go's name the file) and its facts key (``FactsCache.key``)."""
    index: TreeIndex | None = None
    """What the walk read (``TreeIndex.of``), for ``igg.mapping.kept``."""
    kept: bool = False
    """Whether this is the graph a run before kept (``igg.mapping.kept``), not one mapped now."""
    relinked: bool = False
    """Whether this state of a commit was linked from the work tree's facts (``relinked_at_commit``)."""
    linked_from: tuple[DepGraph, dict[str, FileFacts | None]] | None = None
    """The kept graph this state was linked again from (``igg.mapping.kept``), with the facts it was linked
    from of each file read again, added (None: not in it) or removed since: a commit whose files give that
    graph is judged by it (``kept_at_commit``)."""
    spliced: set[str] | None = None
    """The files whose edges alone differ from those of the kept graph it was linked again from (those read
    again, added or removed, and those whose imports may find one added or removed: ``igg.mapping.spliced``);
    None when it was not spliced."""
    reads: Reads = "all"
    ignore_files: list[str] = field(default_factory=list)
    """The ``.gitignore`` files the walk of one folder read, by their paths in it."""
    kept_as: tuple[str, str, str | None] | None = None
    """Where a run kept this graph (``igg.mapping.kept``): the kept row's key, the token naming this graph in
    it, and the token of the kept graph it was linked again from (``linked_from``; None: none). A check keeps
    the keys of its violations under the token (``kept.keep_known``), for the next check whose ``REF`` is
    this graph."""


def tree_state(
    paths: Sequence[Path],
    cache: FactsCache | None,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    package_prefix: str | None = None,
    schema: str | Path | None = None,
    reads: Reads = "all",
) -> TreeState:
    """Walk, parse (what ``cache`` lacks; every file without one, the state then keeping no facts' keys) and
    link ``paths``; place the result in the code schema. ``reads`` (``igg.rules.reads``): only as much as that
    (``imports``: each file's imports, linked)."""
    walked = walk(list(paths), max_bytes=max_bytes, package_prefix=package_prefix)
    if not any(not languages.is_config(f.path) for f in walked.files):
        raise RequestInvalid(
            [Problem("PATH", f"no {languages.spoken()} source files under {', '.join(map(str, paths))}")],
            source="the command line",
        )
    counts: dict[str, int] = {}
    keys: list[tuple[str | None, str]] = []
    facts, _ = parse_all(walked.files, cache=cache, counts=counts, bodies=False, reads=reads, keys=keys)
    state = linked_state(paths, walked, facts, keys, schema=schema, reads=reads)
    state.parsed = counts.get("parsed", 0)
    return state


def linked_state(
    paths: Sequence[Path],
    walked: WalkResult,
    facts: Sequence[FileFacts],
    keys: Sequence[tuple[str | None, str]],
    *,
    schema: str | Path | None = None,
    reads: Reads = "all",
) -> TreeState:
    """The state of ``paths`` from their walk and the facts of the files it read with their modules and keys
    (``parse_all``, in the walk's order), linked and placed in the code schema (``schema``: the user's)."""
    model = link(facts, reads=reads)
    return TreeState(
        model=model,
        graph=model_graph(model, load_code_schema(schema).compile()),
        files=len(walked.files),
        parsed=0,
        facts={f.path: f for f in facts},
        keys={f.path: k for f, k in zip(facts, keys, strict=True)} if keys else {},
        index=TreeIndex.of(walked, "", 0),
        reads=reads,
        ignore_files=[
            os.path.relpath(p, paths[0]) for p in walked.stats if os.path.basename(p) == ".gitignore"
        ]
        if len(paths) == 1
        else [],
    )


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
    head: TreeState | None = None,
    **options: object,
) -> TreeState:
    """The state of ``paths`` at the commit ``ref`` of their repository (see the module doc): ``head`` itself,
    the state of the work tree mapped with the same options, when the commit's files give the same graph
    (``same_at_commit``)."""
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
    if head is not None:
        then = commit_facts(paths, root, commit.decode().strip(), head, cache, max_bytes)
        if then is not None:
            if same_at_commit(head, then):
                return head
            kept = kept_at_commit(head, then)
            if kept is not None:
                return kept
            relinked = relinked_at_commit(head, then, cache, options.get("schema"))  # type: ignore[arg-type]
            if relinked is not None:
                return relinked
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


def commit_facts(
    paths: Sequence[Path], root: Path, commit: str, head: TreeState, cache: FactsCache, max_bytes: int
) -> dict[str, FileFacts | None] | None:
    """The facts at ``commit`` of each file the change to the work tree changed (None for a file the commit
    lacks), when the commit's tree of ``paths`` is the work tree's but for the content of those files and the
    files added or removed since, told without unpacking it; None when the commit's tree must be unpacked and
    mapped (the general path, ``ref_state``).

    That holds when no file was renamed or changed in kind, each file added or removed since is one whose
    presence changes no other file's name (``igg.mapping.touched``: a removed file's facts are read from the
    commit, named as the walk names it), and no ignore file changed (``git diff --raw`` from
    ``commit`` to the work tree, which git answers from its index by stat), every ignore file the work tree's
    walk of one folder read is in the commit, every other file it read is in the commit or one of those added
    (an untracked file is one), and each changed file is one the walk read now, read at the commit too
    (``read_bytes_as_walked``), or one it skips now that it skips by its bytes then (a Go test file, a
    binary); with rules in ``.git/info/exclude`` (which an unpacked commit lacks) the general path answers.
    Then ``same_at_commit`` tells whether the commit's graph is the work tree's, and ``relinked_at_commit``
    links the commit's facts when it is not. ``tests/unit/test_since_same.py`` pins both to the general
    path."""
    if len(paths) != 1 or not paths[0].is_dir() or _excludes(root):
        return None
    rel = paths[0].resolve().relative_to(root).as_posix()
    prefix, spec = ("", []) if rel == "." else (rel + "/", [rel])
    listed = _git(
        root, "--literal-pathspecs", "ls-tree", "-r", "-z", "--name-only", "--full-tree", commit, "--", *spec
    )
    diff = _git(
        root,
        "--literal-pathspecs",
        "diff",
        "--raw",
        "-z",
        "--no-renames",
        "--no-abbrev",
        "--no-ext-diff",
        "--ignore-submodules=none",
        commit,
        "--",
        *spec,
    )
    if listed is None or diff is None:
        return None
    at_commit = set(os.fsdecode(listed).split("\0"))
    if any(prefix + path not in at_commit for path in head.ignore_files):
        return None  # an ignore file added, untracked, or in a submodule
    added = added_files(head.facts, at_commit, prefix)  # read now, missing then
    edited = edited_files(diff, prefix, head.facts, added) if added is not None else None
    if added is None or edited is None:
        return None
    changed, skipped, removed = edited
    siblings = sibling_files(head.keys, added) if removed else {}
    sources: list[SourceFile] = []
    blobs = [*skipped, *removed, *changed]  # one git process for all
    for at, ((_, path), data) in enumerate(zip(blobs, _blob_bytes(root, blobs), strict=True)):
        then = read_bytes_as_walked(path, data, max_bytes=max_bytes)
        if at < len(skipped):
            if isinstance(then, SourceFile):
                return None  # a file the walk skips now, which it may have read then
            continue
        if at < len(skipped) + len(removed):
            if not isinstance(then, SourceFile):
                if then is None:
                    return None
                continue  # skipped then by its bytes: no part of either state
            back = removed_source(then, paths[0], head.keys, siblings)
            if back is None:
                return None
            sources.append(back)
            continue
        if not isinstance(then, SourceFile):
            return None
        named = head.keys.get(path)
        if named is None or head.facts.get(path) is None:
            return None  # its facts are gone from the cache
        sources.append(replace(then, module=named[0]))
    facts, _ = parse_all(sources, cache=cache, bodies=False, reads=head.reads)
    found: dict[str, FileFacts | None] = {f.path: f for f in facts}
    found.update(dict.fromkeys(added))
    return found


def same_at_commit(head: TreeState, then: Mapping[str, FileFacts | None]) -> bool:
    """Whether the commit whose changed files have the facts ``then`` (``commit_facts``) has ``head``'s graph:
    a graph of imports or tables (a graph of calls reads bodies), each changed file's facts alike
    (``linked_alike``: its imports at the same lines; for tables its declarations too, its bodies aside), and
    no file added since (its module is no part of the commit's graph)."""
    return head.reads != "all" and all(
        f is not None and path in head.facts and linked_alike(f, head.facts[path], head.reads)
        for path, f in then.items()
    )


def kept_at_commit(head: TreeState, then: Mapping[str, FileFacts | None]) -> TreeState | None:
    """The commit's state when it is the kept graph ``head`` was linked again from (``head.linked_from``): the
    last check ran on the commit's tree, as a check of every commit in turn leaves it. That holds when every
    file changed since the commit (``then``: its facts then, ``commit_facts``) or since the graph was kept
    has, at the commit, facts the graph was linked from alike (``linked_alike``), and every file added or
    removed since the commit was added or removed since the graph was kept. Else None."""
    if head.linked_from is None or head.reads == "all":
        return None
    graph, before = head.linked_from
    for path in then.keys() | before.keys():
        now = head.facts.get(path)
        at_commit = then[path] if path in then else now
        in_kept = before[path] if path in before else now
        here = path in head.keys
        if not (then[path] if path in then else here) and not (before[path] if path in before else here):
            continue  # in neither: added since both
        if at_commit is None or in_kept is None or not linked_alike(at_commit, in_kept, head.reads):
            return None
    kept_as = (head.kept_as[0], head.kept_as[2], None) if head.kept_as and head.kept_as[2] else None
    return TreeState(
        model=None, graph=graph, files=head.files, parsed=0, reads=head.reads, kept=True, kept_as=kept_as
    )


def relinked_at_commit(
    head: TreeState, then: Mapping[str, FileFacts | None], cache: FactsCache, schema: str | Path | None = None
) -> TreeState | None:
    """The commit's state, linked from ``head``'s facts with those of the changed files as they were then
    (``commit_facts``), without those added since and with those removed since (where the walk read them),
    when the changed files name their modules alike (module, package and language as now, no configuration
    file among them: ``go.mod`` or ``tsconfig.json`` name other files' modules); else None."""
    removed = [path for path in then if path not in head.facts]
    for path, f in then.items():
        now = head.facts[path] if path not in removed else f
        if f is not None and now is not None and not named_alike(f, now):  # None: added since, left out
            return None
    order = in_walk_order(list(head.keys), removed)
    linked = relink(order, then, head.facts, head.keys, cache, head.reads, schema)
    if linked is None:
        return None
    return TreeState(
        model=linked[0],
        graph=linked[1],
        files=head.files - sum(f is None for f in then.values()) + len(removed),
        parsed=0,
        reads=head.reads,
        relinked=True,
    )


def named_alike(a: FileFacts, b: FileFacts) -> bool:
    """Whether two facts of one file name its module alike (module, package and language, and neither is a
    configuration file: a ``go.mod`` or ``tsconfig.json`` names other files' modules), so that every other
    file keeps its name and facts, and linking them with either (``relink``) gives that state's graph."""
    same = (a.module, a.package, a.language) == (b.module, b.package, b.language)
    return same and a.config is None and b.config is None


def relink(
    order: Sequence[str],
    changed: Mapping[str, FileFacts | None],
    facts: Mapping[str, FileFacts],
    keys: Mapping[str, tuple[str | None, str]],
    cache: FactsCache,
    reads: Reads,
    schema: str | Path | None = None,
) -> tuple[CodeModel, DepGraph, dict[str, FileFacts]] | None:
    """The files ``order`` (in the walk's order) linked and placed in the code schema, as a map of them links
    them, and the facts each was linked from: its facts in ``changed`` (None: left out), else in ``facts``
    (a state's: when they are not a dict, a kept graph's, read from ``cache`` at once by their keys in
    ``keys``); None when one is gone from the cache."""
    found: Mapping[str, FileFacts | None] = facts
    if not isinstance(facts, dict):
        wanted = [path for path in order if path not in changed]
        cached = cache.get_many([keys[path][1] for path in wanted], bodies=False)
        if any(f is None for f in cached):
            return None
        found = dict(zip(wanted, cached, strict=True))
    linked: dict[str, FileFacts] = {}
    for path in order:
        f = changed[path] if path in changed else found[path]
        if f is not None:
            linked[path] = f
    model = link(list(linked.values()), reads=reads)
    return model, model_graph(model, load_code_schema(schema).compile()), linked


def linked_alike(a: FileFacts, b: FileFacts, reads: Reads) -> bool:
    """Whether two facts of one file make the same graph of imports (``reads="imports"``) or of imports and
    tables: for imports, the same imports (each at its line and column), configuration, module, package,
    language, parse error and what its language's link of imports reads of its declarations
    (``Language.declared_for_imports``), whatever else changed, so a file's full facts (a map's) and its
    imports alone compare alike; for tables, equal but for their callables' bodies, line counts, content
    hashes, mentioned names and value flows."""
    if reads == "imports":
        return _imports_view(a) == _imports_view(b)
    return _as_linked(a) == _as_linked(b)


def read_by_others(f: FileFacts) -> tuple[Any, ...]:
    """What a link of the other files' imports reads of ``f`` (``linked_alike``'s view but its imports):
    two facts of a file alike in it leave every other file's imports resolving as they did."""
    view = _imports_view(f)
    return view[:5] + view[6:]


def _imports_view(f: FileFacts) -> tuple[Any, ...]:
    declared = languages.get(f.language).declared_for_imports(f) if f.language in languages.names() else f
    return (f.module, f.package, f.language, f.error, f.error_line, f.imports, f.config, declared)


def _as_linked(f: FileFacts) -> FileFacts:
    return replace(without_bodies(f), sha=None, lines=0, names=None, flow=None)


def _excludes(root: Path) -> bool:
    """Whether the repository's ``.git/info/exclude`` holds a pattern (not only blanks and comments)."""
    found = _git(root, "rev-parse", "--git-path", "info/exclude")
    if found is None:
        return True
    try:
        lines = (root / found.decode().strip()).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return False
    return any(line.strip() and not line.startswith("#") for line in lines)


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
    made: set[Path] = set()
    for (_, path, _), data in zip(
        blobs, _blob_bytes(root, [(oid, path) for oid, path, _ in blobs]), strict=True
    ):
        if not inside(path):
            continue  # git never stores such a path; a damaged tree is not written outside the scratch
        target = top / path
        if target.parent not in made:
            target.parent.mkdir(parents=True, exist_ok=True)
            made.add(target.parent)
        with open(target, "wb") as f:
            f.write(data)


def _blob_bytes(root: Path, blobs: Sequence[tuple[str, str]]) -> Iterator[bytes]:
    """The content of each (object id, path) blob, in order, from one ``git cat-file --batch``."""
    if not blobs:
        return
    with subprocess.Popen(
        ["git", "-C", str(root), "cat-file", "--batch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    ) as git:
        assert git.stdin is not None and git.stdout is not None
        writer = threading.Thread(target=_send_ids, args=(git.stdin, [oid for oid, _ in blobs]), daemon=True)
        writer.start()
        for oid, path in blobs:
            header = git.stdout.readline().split()
            if len(header) != 3 or header[0].decode() != oid:
                raise RequestInvalid(
                    [Problem("--since", f"git could not read {path} ({oid})")], source="the command line"
                )
            data = git.stdout.read(int(header[2]))
            git.stdout.read(1)  # the newline after the content
            yield data
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
