"""TypeScript and JavaScript, through tree-sitter (the ``tree-sitter-typescript`` and
``tree-sitter-javascript`` wheels): ``analyze.py`` (one file's facts), ``resolve.py`` (module resolution as
the compiler does it, from the tree's ``tsconfig.json`` and ``package.json`` files), ``link.py`` (names across
files). ``LANGUAGE`` is its ``Language``; the configuration files are read as facts of their own
(``FileFacts.config``), so a changed one is parsed again and ``--update`` links every file."""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from igg.codemap.columns import position
from igg.codemap.facts import FileFacts, ImportRef
from igg.codemap.language import Language, SchemaAdditions
from igg.codemap.typescript.resolve import implementation

if TYPE_CHECKING:
    from igg.codemap.index import Index
    from igg.codemap.language import Linker

SUFFIXES = (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs")
CONFIG_NAMES = ("tsconfig.json", "jsconfig.json", "package.json")
CONFIG_PATTERN = re.compile(r"^(?:tsconfig|jsconfig)[\w.-]*\.json$")
"""``tsconfig.base.json``, ``tsconfig.build.json``: configurations a ``tsconfig.json`` may extend."""
_JSONC = re.compile(r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*.*?\*/', re.DOTALL)
_TRAILING = re.compile(r",(\s*[}\]])")
_IMPORT_LINE = re.compile(
    r"""^\s*(?:import|export)\b[^'"\n;]*?(?:from\s*)?['"]([^'"\n]+)['"]""", re.MULTILINE
)
_PACKAGE_KEYS = ("name", "main", "types", "typings", "exports", "imports", "workspaces", "type")


def read_jsonc(text: str) -> Any:
    """JSON with comments and trailing commas, as ``tsconfig.json`` may be written (raises ValueError)."""
    stripped = _JSONC.sub(lambda m: m.group(1) or "", text)
    return json.loads(_TRAILING.sub(r"\1", stripped))


class TypeScript(Language):
    """TypeScript's and JavaScript's ``Language`` (see ``igg.codemap.language``)."""

    name = "typescript"
    suffixes = SUFFIXES
    config_names = CONFIG_NAMES
    cache_version = "10"
    schema = SchemaAdditions(node_types=("Route",), edge_types=("HANDLES", "REQUESTS"))
    """Its HTTP routes and the requests that reach them (``igg.codemap.routes``; ``http.py`` finds them)."""
    comment = "//"
    package_separator = "/"
    reads_generated = True
    """A generated module (an OpenAPI client, ``*.gen.ts``) is read like any other: the compiler reads it."""

    imports_by_name = True

    def declared_for_imports(self, facts: FileFacts) -> object:
        """Nothing: a link of imports resolves a specifier to a file by the tree's paths and configuration
        files alone (``IMPORTS`` to its module); what the file exports is read only for ``IMPORTS_SYMBOL``,
        which a graph of imports leaves out. An export added or renamed leaves every graph of imports as it
        was (``igg check`` keeps its graph)."""
        return None

    def analyze(self, path: str, text: str, module: str | None) -> FileFacts:
        base = path.rpartition("/")[2]
        if base in CONFIG_NAMES or CONFIG_PATTERN.match(base):
            return self.config(path, text)
        from igg.codemap.typescript.analyze import analyze_typescript

        return analyze_typescript(path, text, module)

    @staticmethod
    def config(path: str, text: str) -> FileFacts:
        """A ``tsconfig.json`` or ``package.json`` as linking reads it (an unreadable one: an empty one, and
        why)."""
        facts = FileFacts(
            path=path, language="typescript", module=path, package="", lines=text.count("\n") + 1, config={}
        )
        try:
            data = read_jsonc(text) if text.strip() else {}
        except ValueError as exc:
            facts.error = f"not valid JSON ({exc}); read as empty"
            return facts
        if not isinstance(data, dict):
            return facts
        if path.rpartition("/")[2] == "package.json":
            data = {k: v for k, v in data.items() if k in _PACKAGE_KEYS}
        else:
            data = {k: v for k, v in data.items() if k in ("extends", "compilerOptions")}
            options = data.get("compilerOptions")
            if isinstance(options, dict):
                data["compilerOptions"] = {
                    k: v
                    for k, v in options.items()
                    if k in ("baseUrl", "paths", "moduleResolution", "module", "customConditions")
                }
        facts.config = data
        return facts

    def is_package_dir(self, path: str) -> bool:
        """A folder of a build-like name (``vendor``, ``build``) holding TypeScript sources (``.ts``,
        ``.tsx``; not ``.d.ts``) within three levels is source: a compiler's output holds ``.js`` and
        ``.d.ts`` files."""
        import os

        level = [path]
        for _ in range(3):
            below = []
            for folder in level:
                try:
                    entries = list(os.scandir(folder))
                except OSError:
                    continue
                for entry in entries:
                    lower = entry.name.lower()
                    if (
                        entry.is_file(follow_symlinks=False)
                        and lower.endswith((".ts", ".tsx", ".mts", ".cts"))
                        and not lower.endswith((".d.ts", ".d.mts", ".d.cts"))
                    ):
                        return True
                    if (
                        entry.is_dir(follow_symlinks=False)
                        and entry.name != "node_modules"
                        and not entry.name.startswith(".")
                    ):
                        below.append(entry.path)
            level = below[:200]
        return False

    def header(self, path: str, text: str, module: str | None) -> FileFacts:
        from igg.codemap.typescript.analyze import module_name

        name = module or module_name(path)
        facts = FileFacts(path=path, language="typescript", module=name, package=name)
        for m in _IMPORT_LINE.finditer(text):
            line, column = position(text, m.start())
            facts.imports.append(ImportRef(target=m.group(1), source=m.group(1), line=line, column=column))
        return facts

    def merge(self, files: list[FileFacts]) -> list[FileFacts]:
        """A declaration file merges into the implementation it declares, as the compiler pairs them
        (``x.d.ts`` with ``x.ts``, ``x.tsx``, ``x.js`` or ``x.jsx``, the first there; ``x.d.mts`` with
        ``x.mts`` or ``x.mjs``; ``x.d.cts`` with ``x.cts`` or ``x.cjs``): its declarations and exports are
        added where the implementation lacks them. A declaration file without one is a module of its own; when
        its name is another module's too (``index.d.cts`` beside ``index.d.ts`` and ``index.js``), it is named
        by the file it declares (``index.cjs``), so that the declarations of both stay apart."""
        paths = {f.path: f for f in files if f.language == "typescript"}
        merged: dict[str, FileFacts] = {}
        out = []
        for f in files:
            twin = implementation(f.path, paths) if f.language == "typescript" else None
            if twin is None:
                out.append(f)
                continue
            base = merged.get(twin.path, twin)
            known_types = {t.qualified for t in base.types}
            known_calls = {(c.owner, c.name) for c in base.callables}
            merged[twin.path] = replace(
                base,
                types=[*base.types, *(t for t in f.types if t.qualified not in known_types)],
                callables=[
                    *base.callables,
                    *(c for c in f.callables if (c.owner, c.name) not in known_calls),
                ],
                exports={**f.exports, **base.exports},
            )
        result = [merged.get(f.path, f) for f in out]
        taken = Counter(f.module for f in result)
        return [_apart(f) if taken[f.module] > 1 and _declares_alone(f, paths) else f for f in result]

    def linker(self, index: Index) -> Linker:
        from igg.codemap.typescript.link import TypeScriptLinker

        return TypeScriptLinker(index)


_DECLARED = {".d.ts": ".js", ".d.mts": ".mjs", ".d.cts": ".cjs"}
"""A declaration file's suffix -> the suffix of the JavaScript file it declares."""


def _declares_alone(f: FileFacts, paths: dict[str, FileFacts]) -> bool:
    return (
        f.language == "typescript"
        and f.path.lower().endswith(tuple(_DECLARED))
        and implementation(f.path, paths) is None
    )


def _apart(f: FileFacts) -> FileFacts:
    """``f`` (a declaration file) named by the file it declares: its types and methods renamed with it."""
    suffix = next(s for s in _DECLARED if f.path.lower().endswith(s))
    name = f.path[: -len(suffix)] + _DECLARED[suffix]
    old = f"{f.module}."
    return replace(
        f,
        module=name,
        package=name,
        types=[replace(t, package=name) if t.package == f.module else t for t in f.types],
        callables=[
            replace(c, owner=name + "." + c.owner[len(old) :]) if c.owner and c.owner.startswith(old) else c
            for c in f.callables
        ],
    )


LANGUAGE = TypeScript()
