"""Source files as the code agent reads them: from disk (``igg map-code``) or from a request's context.

A request's ``context_data`` holds several files when each is introduced by a marker line such as
``// File: src/main/java/com/app/auth/AuthService.java`` or ``# File: app/auth/service.py`` (``--`` and
``File:``/``file:`` variants too). ``looks_like_source`` decides whether a context is source code (what
``--agent auto`` asks). ``analyze`` runs the right analyzer for a file; ``analyze_all`` runs them on a
thread or process pool.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from concurrent.futures import Executor
from dataclasses import dataclass

from igg.agents.code.facts import FileFacts

LANGUAGES: dict[str, str] = {".py": "python", ".pyi": "python", ".java": "java"}
"""File suffix -> language the code agent analyses."""

MARKER_RE = re.compile(r"^[ \t]*(?://|#|--)[ \t]*[Ff]ile:[ \t]*(\S[^\n]*?)[ \t]*$", re.MULTILINE)
"""A line that introduces one file of a multi-file context."""

_JAVA_HINT = re.compile(r"^\s*(package\s+[\w.]+\s*;|import\s+[\w.*]+\s*;|(public\s+)?(final\s+|abstract\s+)*"
                        r"(class|interface|enum|record)\s+\w+)", re.MULTILINE)
_PY_HINT = re.compile(r"^(def\s+\w+\s*\(|class\s+\w+[(:]|from\s+[\w.]+\s+import\s|import\s+[\w.]+\s*$)",
                      re.MULTILINE)


@dataclass(frozen=True, slots=True)
class SourceFile:
    """One source file: a path relative to the mapped root (``/`` separators) and its text."""

    path: str
    text: str
    module: str | None = None
    """Python: the dotted module name when the file sits in a package (see ``with_modules``)."""

    @property
    def language(self) -> str | None:
        return language_of(self.path)


def language_of(path: str) -> str | None:
    """``python``, ``java``, or None for a file the code agent does not analyse."""
    dot = path.rfind(".")
    return LANGUAGES.get(path[dot:].lower()) if dot >= 0 else None


def split_context(text: str) -> list[SourceFile]:
    """The files of a context with file markers; a context without markers is one file named by its
    language (``context.java`` / ``context.py``) when it looks like source, else no file at all."""
    marks = list(MARKER_RE.finditer(text))
    if not marks:
        guess = _guess_language(text)
        return [SourceFile(f"context.{'java' if guess == 'java' else 'py'}", text)] if guess else []
    files = []
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        path = m.group(1).strip().strip("`'\"").replace("\\", "/").lstrip("./")
        files.append(SourceFile(path, text[m.end():end].strip("\n") + "\n"))
    return files


def _guess_language(text: str) -> str | None:
    java = len(_JAVA_HINT.findall(text))
    python = len(_PY_HINT.findall(text))
    if java == python == 0:
        return None
    return "java" if java >= python else "python"


def looks_like_source(text: str) -> bool:
    """True when a context is source code the code agent can analyse: file markers naming ``.py`` or
    ``.java`` files, or unmarked text with Java or Python declarations."""
    if not text.strip():
        return False
    marked = False
    for m in MARKER_RE.finditer(text):  # the first marker naming a source file decides (a huge context is not
        marked = True                   # listed whole)
        if language_of(m.group(1).strip().strip("`'\"")):
            return True
    return not marked and _guess_language(text) is not None


def with_modules(files: Sequence[SourceFile]) -> list[SourceFile]:
    """The files with Python module names as imports spell them (``pymodules``): a file in a package is
    named from its top-most package down (regular or namespace), wherever the files' root is
    (``fixtures/code/python/shop/models.py`` -> ``shop.models``); a file outside packages by its stem.
    Files that already carry a name (``igg map-code`` names them from the disk) keep it."""
    if all(f.module is not None or f.language != "python" for f in files):
        return list(files)
    from igg.agents.code.pymodules import names_for_paths

    names = names_for_paths(f.path for f in files if f.language == "python")
    return [f if f.module is not None or f.language != "python" else SourceFile(f.path, f.text, names[f.path])
            for f in files]


def analyze(source: SourceFile) -> FileFacts:
    """The facts of one file, by its language (raises ValueError for a language the agent does not read)."""
    from igg.agents.code.cache import content_hash

    language = source.language
    if language == "python":
        from igg.agents.code.python import analyze_python

        facts = analyze_python(source.path, source.text, source.module)
    elif language == "java":
        from igg.agents.code.java import analyze_java

        facts = analyze_java(source.path, source.text)
    else:
        raise ValueError(f"{source.path}: not a Python or Java file (suffixes: {', '.join(LANGUAGES)})")
    facts.sha = content_hash(source.text)
    return facts


def analyze_all(sources: Sequence[SourceFile], executor: Executor | None = None) -> list[FileFacts]:
    """The facts of every file, in input order; on ``executor`` when given (parsing is per file)."""
    sources = with_modules(sources)
    if executor is None:
        return [analyze(s) for s in sources]
    return list(executor.map(analyze, sources, chunksize=max(1, len(sources) // 64)))
