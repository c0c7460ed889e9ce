"""Java, through tree-sitter (the ``tree-sitter-java`` wheel): ``analyze.py`` (one file's facts, with
``syntax.py`` and ``func.py``), ``link.py`` (names across files), ``resolve.py`` and ``overloads.py`` (typing
receivers and arguments, choosing overloads, as javac does). ``LANGUAGE`` is its ``Language``."""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from igg.codemap.columns import position
from igg.codemap.facts import FileFacts, ImportRef
from igg.codemap.language import Language, SchemaAdditions

if TYPE_CHECKING:
    from igg.codemap.index import Index
    from igg.codemap.language import Linker

PACKAGE_LINE = re.compile(r"^\s*package\s+([\w.]+)\s*;", re.MULTILINE)
_IMPORT = re.compile(r"^\s*import\s+(static\s+)?([\w.]+)(\.\*)?\s*;", re.MULTILINE)
PROBE_DEPTH = 3
"""How deep below a folder of a build-like name the walk looks for the Java file that says it is a package."""


class Java(Language):
    """Java's ``Language`` (see ``igg.codemap.language``)."""

    name = "java"
    suffixes = (".java",)
    cache_version = "18"
    schema = SchemaAdditions(node_types=("Route",), edge_types=("HANDLES", "REQUESTS"))
    functional_types = True
    """Its HTTP routes and the requests that reach them (``igg.codemap.routes``; ``http.py`` finds them)."""
    comment = "//"
    hint = re.compile(
        r"^\s*(package\s+[\w.]+\s*;|import\s+[\w.*]+\s*;|(public\s+)?(final\s+|abstract\s+)*"
        r"(class|interface|enum|record)\s+\w+)",
        re.MULTILINE,
    )

    def analyze(self, path: str, text: str, module: str | None) -> FileFacts:
        from igg.codemap.java.analyze import analyze_java

        return analyze_java(path, text)

    def header(self, path: str, text: str, module: str | None) -> FileFacts:
        found = PACKAGE_LINE.search(text)
        package = found.group(1) if found else ""
        stem = path.rpartition("/")[2].removesuffix(".java")
        facts = FileFacts(
            path=path, language="java", module=f"{package}.{stem}" if package else stem, package=package
        )
        for m in _IMPORT.finditer(text):
            if not m.group(1):
                target = m.group(2)
                line, column = position(text, m.start())
                facts.imports.append(
                    ImportRef(
                        target=target,
                        wildcard=bool(m.group(3)),
                        alias=None if m.group(3) else target.rpartition(".")[2],
                        line=line,
                        column=column,
                    )
                )
        return facts

    def is_package_dir(self, path: str) -> bool:
        """Whether the first Java file found below ``path`` (breadth first, ``PROBE_DEPTH`` folders deep)
        declares a package that runs through this folder: ``com/acme/build`` holding ``Step.java`` with
        ``package com.acme.build;``, or ``internal/X.java`` with ``package com.acme.build.internal;``."""
        folders = [p for p in os.path.abspath(path).split(os.sep) if p]
        level: list[tuple[str, list[str]]] = [(path, [])]
        for _ in range(PROBE_DEPTH + 1):
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

    def linker(self, index: Index) -> Linker:
        from igg.codemap.java.link import JavaLinker

        return JavaLinker(index)


def _declares(java_file: str, folders: list[str], sub: list[str]) -> bool:
    try:
        with open(java_file, encoding="utf-8", errors="replace") as f:
            head = f.read(16384)
    except OSError:
        return False
    found = PACKAGE_LINE.search(head)
    if not found:
        return False
    package = found.group(1).split(".")
    if len(package) <= len(sub) or package[len(package) - len(sub) :] != sub:
        return False
    through = package[
        : len(package) - len(sub)
    ]  # the package down to this folder: it must end in the folders
    return through == folders[-len(through) :]


LANGUAGE = Java()
