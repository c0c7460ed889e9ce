"""Python, through the standard library's ``ast``: ``analyze.py`` (one file's facts), ``modules.py`` (module
names as Python imports them), ``link.py`` (names across files). ``LANGUAGE`` is its ``Language``."""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from igg.codemap.columns import position
from igg.codemap.facts import FileFacts, ImportRef
from igg.codemap.language import Language, SchemaAdditions

if TYPE_CHECKING:
    from igg.codemap.index import Index
    from igg.codemap.language import Linker
    from igg.codemap.model import CallRow
    from igg.codemap.sources import SourceFile

_PY_IMPORT = re.compile(
    r"^(?:import\s+([\w.]+(?:\s*,\s*[\w.]+)*)|from\s+([\w.]+)\s+import\s+\(?\s*([\w, ]+))", re.MULTILINE
)


class Python(Language):
    """Python's ``Language`` (see ``igg.codemap.language``)."""

    name = "python"
    suffixes = (".py", ".pyi")
    cache_version = "20"
    schema = SchemaAdditions(node_types=("Route",), edge_types=("HANDLES", "REQUESTS"))
    """Its HTTP routes and the requests that reach them (``igg.codemap.routes``; ``http.py`` finds them)."""
    comment = "#"
    hint = re.compile(
        r"^(def\s+\w+\s*\(|class\s+\w+[(:]|from\s+[\w.]+\s+import\s|import\s+[\w.]+\s*$)", re.MULTILINE
    )
    keeps_generated = True
    """A generated module (protobuf, API bindings) is a module other modules import: read as its module and
    imports, its definitions left out (they are generated, not written)."""

    def analyze(self, path: str, text: str, module: str | None) -> FileFacts:
        from igg.codemap.python.analyze import analyze_python
        from igg.codemap.sources import is_generated

        facts = analyze_python(path, text, module)
        if is_generated(path, text):
            facts.types, facts.callables, facts.flow = [], [], None
        return facts

    lighter_imports = True
    scans_imports = True
    keeps_calls = True

    imports_by_name = True

    def declared_for_imports(self, facts: FileFacts) -> object:
        """Nothing: Python resolves an import by module names alone."""
        return None

    def imports(self, path: str, text: str, module: str | None) -> FileFacts:
        """The module and its imports: Python resolves an import by module names alone."""
        from igg.codemap.python.analyze import analyze_python

        return analyze_python(path, text, module, imports_only=True)

    def header(self, path: str, text: str, module: str | None) -> FileFacts:
        """Its imports read from its text (``scanned_imports``), or, where that scan declines, its absolute
        imports from the lines that start with them."""
        from igg.codemap.python.analyze import module_name, scanned_imports

        scanned = scanned_imports(path, text, module)
        if scanned is not None:
            return scanned
        name = module or module_name(path)
        facts = FileFacts(path=path, language="python", module=name, package=name)
        for m in _PY_IMPORT.finditer(text):
            line, column = position(text, m.start())
            if m.group(1):
                for target in (t.strip() for t in m.group(1).split(",")):
                    facts.imports.append(
                        ImportRef(target=target, alias=target, module_only=True, line=line, column=column)
                    )
                continue
            source = m.group(2)
            if source.startswith("."):
                continue  # relative: its package is what the analyzer would have resolved it against
            for member in (n.strip() for n in m.group(3).split(",")):
                if member.isidentifier():
                    facts.imports.append(
                        ImportRef(
                            target=f"{source}.{member}", alias=member, source=source, line=line, column=column
                        )
                    )
        return facts

    def salvage(
        self, analyze: Callable[[str, str, str | None], FileFacts], path: str, text: str, module: str | None
    ) -> tuple[FileFacts | None, list[int]]:
        from igg.codemap.guard import without_failing_statements

        return without_failing_statements(analyze, path, text, module)

    def decode(self, data: bytes) -> str | tuple[None, str]:
        """UTF-8, or the encoding the file's PEP 263 declaration names (``# -*- coding: latin-1 -*-`` in its
        first two lines), as Python reads it."""
        encoding = "utf-8"
        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        except SyntaxError as exc:
            if exc.msg.startswith(
                ("unknown encoding", "encoding problem")
            ):  # no such codec; BOM vs declaration
                return None, f"unreadable source encoding ({exc.msg})"
            # else "invalid or missing encoding declaration": none declared, and the first lines are not UTF-8
        try:
            return data.decode(encoding)
        except (UnicodeDecodeError, LookupError):
            if encoding in ("utf-8", "utf-8-sig"):
                return None, "binary or not UTF-8 (and no coding declaration)"
            return None, f"not valid {encoding}, the encoding it declares"

    def is_package_dir(self, path: str) -> bool:
        import os

        from igg.codemap.python.modules import INIT_NAMES

        return any(os.path.isfile(os.path.join(path, n)) for n in INIT_NAMES)

    def disk_namer(self) -> Callable[[str], str | None]:
        from igg.codemap.python.modules import DiskNamer

        return DiskNamer().module

    def rename(
        self, files: Sequence[SourceFile], disk: Mapping[str, str], prefix: str | None
    ) -> list[SourceFile]:
        from igg.codemap.python.modules import rename_under_prefixes

        return rename_under_prefixes(files, disk, prefix)

    def name_paths(self, files: Sequence[SourceFile]) -> list[SourceFile]:
        if all(f.module is not None for f in files):
            return list(files)
        from igg.codemap.python.modules import names_for_paths

        names = names_for_paths(f.path for f in files)
        return [f if f.module is not None else replace(f, module=names[f.path]) for f in files]

    def merge(self, files: list[FileFacts]) -> list[FileFacts]:
        from igg.codemap.python.link import merge_stubs

        return merge_stubs(files)

    def linker(self, index: Index) -> Linker:
        from igg.codemap.python.link import PythonLinker

        return PythonLinker(index)

    def names_others(self, path: str) -> bool:
        from igg.codemap.python.link import is_init

        return is_init(path)

    def module_beside(self, path: str, sibling: str, sibling_module: str | None) -> tuple[str | None] | None:
        namer = self.disk_namer()
        if namer(sibling) != sibling_module:
            return None  # renamed once the walk was done (--package-prefix)
        return (namer(path),)

    def moved_calls(self, old: FileFacts, new: FileFacts, rows: Sequence[CallRow]) -> list[CallRow] | None:
        """Each row's site moved to where its call is now: the calls of the two facts' flows, paired in order
        (their flows differ in the sites of calls alone), must move one to one."""
        if old.flow is None or new.flow is None or len(old.flow) != len(new.flow):
            return None
        moved: dict[tuple[int, int], tuple[int, int]] = {}
        back: dict[tuple[int, int], tuple[int, int]] = {}
        for a, b in zip(old.flow, new.flow, strict=True):
            if len(a.ops) != len(b.ops):
                return None
            for x, y in zip(a.ops, b.ops, strict=True):
                if x[0] == "C":  # ("C", site, callee, args, kwargs, line, column)
                    was, now = (x[5], x[6]), (y[5], y[6])
                    if moved.setdefault(was, now) != now or back.setdefault(now, was) != was:
                        return None  # two calls of one site that part, or two that meet: not told apart
        out: list[CallRow] = []
        for ordinal, label, target, line, column in rows:
            site = moved.get((line, column))
            if site is None:
                return None
            out.append((ordinal, label, target, site[0], site[1]))
        return out


LANGUAGE = Python()
