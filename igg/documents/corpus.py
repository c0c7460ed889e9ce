"""Reading a corpus: files and folders become documents with stable ids and content hashes.

``.txt``, ``.md``, ``.rst`` and ``.html`` files are one document each, their id the path relative to the root
given (prefixed by the root's name when several roots are given, as ``igg map-code`` names files); a
``.jsonl`` file holds one document per line, ``{"id": ..., "text": ...}``, its id the line's own. Folders are
walked with map-code's ignore rules (``.gitignore`` files, ``.git/info/exclude``, vendored and build
directories; see ``igg.codemap.walk``). A file that cannot be read, is binary or is not UTF-8 is skipped with
its reason; other suffixes are counted, not read. Two documents with one id, or a JSONL line without ``id`` or
``text``, refuse the whole corpus (``RequestInvalid`` naming each) before anything changes.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from igg.codemap.walk import VENDORED_DIRS, IgnoreRules, ignored_by, read_ignore
from igg.errors import Problem, RequestInvalid

TEXT_SUFFIXES = frozenset({".txt", ".md", ".rst", ".html", ".htm"})
"""Files read whole as one document."""
JSONL_SUFFIX = ".jsonl"
MAX_BYTES = 20_000_000
"""A larger file is skipped (its reason says so)."""


@dataclass(frozen=True, slots=True)
class Document:
    """One source: its stable id, its text and the hash of that text."""

    id: str
    text: str
    sha: str


@dataclass(kw_only=True)
class Corpus:
    """The documents read (sorted by id), what was skipped and why, and the suffixes not read."""

    documents: list[Document] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    other: Counter[str] = field(default_factory=Counter)

    def manifest(self) -> dict[str, str]:
        """Document id -> content hash."""
        return {d.id: d.sha for d in self.documents}


def content_hash(text: str) -> str:
    """The hash a document is compared by (sha256 of its UTF-8 text, 24 hex digits)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def document(doc_id: str, text: str) -> Document:
    return Document(doc_id, text, content_hash(text))


def read_corpus(paths: list[Path]) -> Corpus:
    """The documents under ``paths`` (files or folders); see the module doc. Raises ``RequestInvalid`` for a
    path that does not exist, a JSONL line without ``id`` or ``text``, or an id given twice."""
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise RequestInvalid(
            [Problem("--documents", f"{p}: no such file or directory") for p in missing],
            source="the command line",
        )
    corpus = Corpus()
    found: list[tuple[Document, str]] = []
    problems: list[Problem] = []
    for root in paths:
        prefix = (root.resolve().name + "/") if len(paths) > 1 else ""
        files = [(root, prefix + root.name)] if root.is_file() else _walk(root, prefix, corpus)
        for path, rel in files:
            found.extend(_read(path, rel, corpus, problems))
    seen: dict[str, str] = {}
    for doc, where in found:
        if doc.id in seen:
            problems.append(
                Problem(
                    where,
                    f"document id {doc.id!r} is given twice (first by {seen[doc.id]}); "
                    "each document needs an id of its own",
                )
            )
        else:
            seen[doc.id] = where
    if problems:
        raise RequestInvalid(problems, source="the documents")
    corpus.documents = sorted((d for d, _ in found), key=lambda d: d.id)
    return corpus


def _walk(root: Path, prefix: str, corpus: Corpus) -> list[tuple[Path, str]]:
    """The files under ``root`` map-code's ignore rules let through, in sorted order (directories skipped with
    their reason into ``corpus.skipped``)."""
    out: list[tuple[Path, str]] = []
    exclude = read_ignore(root / ".git" / "info" / "exclude", "", ".git/info/exclude")
    stack: list[tuple[Path, str, list[IgnoreRules]]] = [(root, "", [exclude] if exclude is not None else [])]
    while stack:
        directory, rel_dir, ignores = stack.pop()
        own = (
            read_ignore(directory / ".gitignore", rel_dir, rel_dir + ".gitignore")
            if (directory / ".gitignore").is_file()
            else None
        )
        active = [*ignores, own] if own is not None else ignores
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            corpus.skipped.append((prefix + rel_dir or ".", f"unreadable directory ({exc.strerror})"))
            continue
        subdirs = []
        for entry in entries:
            rel = f"{rel_dir}{entry.name}"
            is_dir = entry.is_dir(follow_symlinks=False)
            if entry.is_symlink():
                corpus.skipped.append((prefix + rel, "symbolic link (not followed)"))
            elif (by := ignored_by(active, rel, is_dir)) is not None:
                corpus.skipped.append((prefix + rel + "/" * is_dir, f"gitignored (by {by})"))
            elif is_dir:
                if entry.name in VENDORED_DIRS:
                    if entry.name != ".git":
                        corpus.skipped.append(
                            (prefix + rel + "/", f"vendored or build directory ({entry.name})")
                        )
                    continue
                subdirs.append((Path(entry.path), rel + "/", active))
            elif (
                not entry.is_file()
            ):  # a FIFO, socket or device file: never opened (a FIFO would block the read)
                corpus.skipped.append((prefix + rel, "not a regular file (a FIFO, socket or device)"))
            elif entry.name != ".gitignore":
                out.append((Path(entry.path), prefix + rel))
        stack.extend(reversed(subdirs))
    return out


def _read(path: Path, rel: str, corpus: Corpus, problems: list[Problem]) -> list[tuple[Document, str]]:
    suffix = path.suffix.lower()
    if suffix not in TEXT_SUFFIXES and suffix != JSONL_SUFFIX:
        corpus.other[suffix or "(no suffix)"] += 1
        return []
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            corpus.skipped.append((rel, f"too large ({size:,} bytes; the limit is {MAX_BYTES:,})"))
            return []
        data = path.read_bytes()
    except OSError as exc:
        corpus.skipped.append((rel, f"unreadable ({exc.strerror})"))
        return []
    if b"\x00" in data[:8192]:
        corpus.skipped.append((rel, "binary (NUL bytes)"))
        return []
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        corpus.skipped.append((rel, f"not UTF-8 (byte {exc.start})"))
        return []
    if suffix != JSONL_SUFFIX:
        return [(document(rel, text), rel)]
    return _jsonl(text, rel, problems)


def _jsonl(text: str, rel: str, problems: list[Problem]) -> list[tuple[Document, str]]:
    out = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{rel} line {lineno}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(Problem(where, f"not valid JSON: {exc.msg} at column {exc.colno}"))
            continue
        if not isinstance(row, dict):
            problems.append(Problem(where, 'each line must be an object {"id": ..., "text": ...}'))
            continue
        lacks = [k for k in ("id", "text") if k not in row]
        if lacks:
            problems.append(
                Problem(
                    where,
                    f'lacks {" and ".join(repr(k) for k in lacks)} (each line is {{"id": ..., "text": ...}})',
                )
            )
            continue
        if not isinstance(row["id"], str | int) or isinstance(row["id"], bool) or not str(row["id"]).strip():
            problems.append(Problem(where, "'id' must be a non-empty string or a number"))
            continue
        if not isinstance(row["text"], str):
            problems.append(Problem(where, f"'text' must be a string; got {type(row['text']).__name__}"))
            continue
        out.append((document(str(row["id"]), row["text"]), where))
    return out


__all__ = ["Corpus", "Document", "content_hash", "read_corpus"]
