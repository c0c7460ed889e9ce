"""Go, through tree-sitter (the ``tree-sitter-go`` wheel): ``build.py`` (which files a build reads, each
folder's import path from ``go.mod``), ``analyze.py`` (one file's facts; ``scope.py``: the locals of a
function and the expressions that type them), ``link.py`` (names across files, and the computed
``IMPLEMENTS``). ``LANGUAGE`` is its ``Language``; ``go.mod`` and ``go.work`` are read as facts of their own
(``FileFacts.config``), so a changed one is parsed again and ``--update`` links every file (a new ``module``
path renames every package under it)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from igg.codemap.columns import position
from igg.codemap.facts import FileFacts, ImportRef
from igg.codemap.language import Language, SchemaAdditions

if TYPE_CHECKING:
    from igg.codemap.index import Index
    from igg.codemap.language import Linker, SourceFile

SUFFIXES = (".go",)
CONFIG_NAMES = ("go.mod", "go.work")
_IMPORT = re.compile(r'^\s*(?:import\s+)?(?:([\w.]+)\s+)?"([^"\n]+)"', re.MULTILINE)
_IMPORT_BLOCK = re.compile(r"^import\s*\((.*?)^\)|^import\s+[^\n(]+$", re.MULTILINE | re.DOTALL)


class Go(Language):
    """Go's ``Language`` (see ``igg.codemap.language``)."""

    name = "go"
    suffixes = SUFFIXES
    config_names = CONFIG_NAMES
    cache_version = "3"
    schema = SchemaAdditions(node_types=("Route",), edge_types=("HANDLES", "REQUESTS"))
    """Its HTTP routes and the requests that reach them (``igg.codemap.routes``; ``http.py`` finds them)."""
    comment = "//"
    hint = re.compile(
        r"^(package\s+\w+\s*$|func\s+(\(\w+\s+\*?\w+\)\s*)?\w+\(|import\s+\(\s*$)", re.MULTILINE
    )
    package_separator = "/"
    method_sets = True
    """IMPLEMENTS is computed from method sets: a method added in another file than its type's relinks the
    type's file on ``--update``."""
    reads_generated = True
    """A generated file (``*.pb.go``, ``Code generated ... DO NOT EDIT.``) is part of its package: go builds
    it."""

    def analyze(self, path: str, text: str, module: str | None) -> FileFacts:
        if path.rpartition("/")[2] in CONFIG_NAMES:
            return self.config(path, text)
        from igg.codemap.go.analyze import analyze_go

        return analyze_go(path, text, module)

    lighter_imports = True

    def declared_for_imports(self, facts: FileFacts) -> object:
        """The package clause's name: Go resolves an import by the packages' paths alone."""
        return facts.exports.get("package")

    def imports(self, path: str, text: str, module: str | None) -> FileFacts:
        """The package clause and the imports: Go resolves an import path by the packages' paths alone."""
        if path.rpartition("/")[2] in CONFIG_NAMES:
            return self.config(path, text)
        from igg.codemap.go.analyze import analyze_go

        return analyze_go(path, text, module, imports_only=True)

    @staticmethod
    def config(path: str, text: str) -> FileFacts:
        """A ``go.mod`` or ``go.work`` as linking reads it."""
        from igg.codemap.go.build import read_mod

        return FileFacts(
            path=path,
            language="go",
            module=path,
            package="",
            lines=text.count("\n") + 1,
            config=read_mod(text),
        )

    def excluded(self, path: str, text: str) -> str | None:
        """Files ``go list`` leaves out of every package (``build.excluded``): build constraints for this
        machine, ``testdata``, names starting with ``_`` or ``.``."""
        if path.rpartition("/")[2] in CONFIG_NAMES:
            return None
        from igg.codemap.go.build import excluded

        return excluded(path, text)

    def is_package_dir(self, path: str) -> bool:
        """A folder of a build-like name (``build``, ``out``, ``generated``, ``third_party``; not ``vendor``,
        which ``./...`` leaves out) holding ``.go`` files within three levels is a package folder, as ``go
        list ./...`` reads it."""
        import os

        if os.path.basename(path) in ("vendor", "vendored"):
            return False
        level = [path]
        for _ in range(3):
            below = []
            for folder in level:
                try:
                    entries = list(os.scandir(folder))
                except OSError:
                    continue
                for entry in entries:
                    if entry.name.startswith((".", "_")) or entry.name == "testdata":
                        continue
                    if entry.name.endswith(".go") and entry.is_file(follow_symlinks=False):
                        return True
                    if entry.is_dir(follow_symlinks=False):
                        below.append(entry.path)
            level = below[:200]
        return False

    def header(self, path: str, text: str, module: str | None) -> FileFacts:
        from igg.codemap.go.analyze import package_path
        from igg.codemap.go.build import package_clause

        pkg = package_path(path, module, package_clause(text))
        facts = FileFacts(path=path, language="go", module=f"{pkg}/{path.rpartition('/')[2]}", package=pkg)
        for block in _IMPORT_BLOCK.finditer(text):
            for m in _IMPORT.finditer(block.group(0)):
                line, column = position(text, block.start() + m.start(1 if m.group(1) else 2))
                facts.imports.append(ImportRef(target=m.group(2), alias=m.group(1), line=line, column=column))
        return facts

    def rename(
        self, files: Sequence[SourceFile], disk: Mapping[str, str], prefix: str | None
    ) -> list[SourceFile]:
        """Each ``.go`` file named by its folder's import path (``build.import_paths``); ``--package-prefix``
        does not apply (import paths are absolute)."""
        return self.name_paths(files)

    def name_paths(self, files: Sequence[SourceFile]) -> list[SourceFile]:
        from igg.codemap.go.build import import_paths

        mods = {f.path: f.text for f in files if f.path.rpartition("/")[2] == "go.mod"}
        sources = [f for f in files if f.path.endswith(".go")]
        named = import_paths((f.path for f in sources), mods, {f.path: f.text for f in sources})
        # a file already named keeps its name: some of a tree's files parsed again (those the facts cache
        # lacks) come named from the whole tree, whose go.mod may not be among them
        return [
            replace(f, module=named[f.path]) if f.path in named and f.module is None else f for f in files
        ]

    def linker(self, index: Index) -> Linker:
        from igg.codemap.go.link import GoLinker

        return GoLinker(index)


LANGUAGE = Go()
