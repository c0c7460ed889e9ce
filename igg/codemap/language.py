"""The language seam: what a language gives the code map, and the registry of the languages it reads.

A language is one module (or package) of ``igg.codemap`` whose ``LANGUAGE`` is a ``Language``: the files it
claims (suffixes, and exact names of the configuration files its linking reads, such as ``tsconfig.json``),
one file's text -> ``FileFacts`` (``analyze``), what a file that cannot be analysed still says (``header``),
its cache version, its schema additions, and a ``Linker`` that resolves the facts of its files across files
(``link``): module packages, imports, type names and call targets. Walk, cache, link, ``--update`` and the
static agent reach a language only through this protocol and the registry below; nothing outside a language
module asks which language a file is in.

Adding a language: write ``igg/codemap/<name>/`` (or ``<name>.py``) with its ``LANGUAGE``, add its module to
``MODULES``, and test it against an oracle (``docs/development.md``). Language modules are imported on first
use, so ``igg --help`` and the walk's limits load no parser.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Literal, Protocol

if TYPE_CHECKING:
    from igg.codemap.facts import CallableDecl, CallRef, FileFacts, ImportRef, TypeDecl
    from igg.codemap.index import ClassLevel, Index
    from igg.codemap.model import CallRow, Relation

MODULES: dict[str, str] = {
    "python": "igg.codemap.python",
    "java": "igg.codemap.java",
    "typescript": "igg.codemap.typescript",
    "go": "igg.codemap.go",
}
"""Language name -> the module whose ``LANGUAGE`` it is, in the order files of several languages are
reported."""

TITLES: dict[str, str] = {"python": "Python", "java": "Java", "typescript": "TypeScript", "go": "Go"}
"""Language name -> how messages write it."""

SUFFIXES: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".java": "java",
    **dict.fromkeys((".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs"), "typescript"),
    ".go": "go",
}
"""File suffix (lower case) -> language: the walk asks this for every file, without importing a language."""

STUBS: tuple[str, ...] = (".pyi", ".d.ts", ".d.mts", ".d.cts")
"""Name endings of declaration-only files, which merge into the module of the same name
(``Language.merge``)."""

CONFIG_NAMES: dict[str, str] = {
    **dict.fromkeys(("tsconfig.json", "jsconfig.json", "package.json"), "typescript"),
    **dict.fromkeys(("go.mod", "go.work"), "go"),
}
"""Exact file names -> the language whose linking reads them (configuration, not source: no module of their
own)."""
CONFIG_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"^(?:tsconfig|jsconfig)[\w.-]*\.json$"), "typescript")
]
"""File-name patterns of more configuration files (``tsconfig.base.json``, which a ``tsconfig.json``
extends)."""
MARKER_NAMES: dict[str, str] = dict.fromkeys(("pyproject.toml", "setup.py", "setup.cfg"), "python")
"""Exact file names a language's naming looks for beside its sources (Python's project markers), by language:
``igg check --since`` takes them from a commit together with the sources."""


Reads = Literal["imports", "tables", "all"]
"""How much of a file and of a link a caller needs (``igg check`` and ``igg cycles`` ask only what their rules
read, ``igg.rules.reads``):

* ``imports``: each file's module and imports (``Language.imports``); the link makes modules, packages,
  CONTAINS between them and IMPORTS edges;
* ``tables``: the full facts; the link adds the types, functions and methods the files declare and the tables
  their SQL reads and writes (no calls, supertypes, imported symbols or routes);
* ``all``: everything (``igg map-code``)."""

READS: tuple[Reads, ...] = ("imports", "tables", "all")
"""From the least read to the most."""


@dataclass(frozen=True, slots=True)
class SourceFile:
    """One source file: a path relative to the mapped root (``/`` separators) and its text."""

    path: str
    text: str
    module: str | None = None
    """The module name its language gives it from the disk (Python: the dotted name of a file in a package;
    see ``Language.disk_namer`` and ``sources.with_modules``); None: its analyzer names it."""

    @property
    def language(self) -> str | None:
        """The language that claims it (``language_of``), or None."""
        return language_of(self.path)


@dataclass(frozen=True, kw_only=True, slots=True)
class SchemaAdditions:
    """Node and edge types a language adds to the code schema's (``schemas/code-graph.json`` holds them
    all)."""

    node_types: tuple[str, ...] = ()
    edge_types: tuple[str, ...] = ()


AddRelation = Callable[[str, str], None]
"""``add(label, target_key)``: one relation from the file's module (the line of the statement being read)."""
PackageKey = Callable[[str, bool], str]
"""``package(name, external)``: the key of a Package symbol, created (with its parents) when new."""


class Linker(Protocol):
    """One language's cross-file resolution over the shared ``Index`` of every file's declarations."""

    def package_of(self, f: FileFacts) -> str:
        """The package that CONTAINS the file's module ('' for none)."""
        ...

    def resolve_type(self, name: str, f: FileFacts, ctx: TypeDecl | None) -> str | None:
        """The qualified name of the in-tree type ``name`` (as written in ``f``, inside ``ctx``) means, or
        None."""
        ...

    def import_relations(
        self,
        f: FileFacts,
        i: ImportRef,
        add: AddRelation,
        package: PackageKey,
        external: bool,
        symbols_only: bool,
        in_tree: bool = True,
    ) -> None:
        """The IMPORTS and IMPORTS_SYMBOL relations of import ``i`` of ``f`` through ``add`` (``external``:
        outside packages too; ``symbols_only``: no ``IMPORTS_SYMBOL``, so its target is not looked for: only
        the module or package the import names; ``in_tree`` False: ``add`` takes nothing, only the outside
        packages named matter, so an import that can name no outside package need not be resolved: a file
        linked for its symbols alone)."""
        ...

    def call_target(
        self, call: CallRef, f: FileFacts, owner: TypeDecl | None
    ) -> CallableDecl | ClassLevel | str | None:
        """What a call reaches: a callable (CALLS), a type only (a class-level CALLS), a qualified type name
        (a constructor call: INSTANTIATES), or None (not knowable: left out)."""
        ...

    def instantiable(self, qualified: str) -> bool:
        """Whether ``new``/a call of this in-tree type is an INSTANTIATES of it."""
        ...

    def callable_relations(
        self,
        f: FileFacts,
        c: CallableDecl,
        owner: TypeDecl | None,
        add: Callable[[Relation], None],
        class_level: Callable[[str | None, int, int], None],
    ) -> None:
        """Relations of a callable beyond its calls, instantiations and SQL (Java: a constructor's implicit
        ``super()``)."""
        ...

    def file_relations(self, f: FileFacts, add: Callable[[Relation], None]) -> None:
        """Relations of the file beyond its declarations (Java: a default constructor's ``super()``)."""
        ...

    def close(self) -> None:
        """Drop references back to the index (no cycle may outlive a link)."""
        ...


class Language(Protocol):
    """One language the code map reads (see the module doc). Subclass it to inherit the defaults below."""

    name: str
    suffixes: tuple[str, ...]
    config_names: tuple[str, ...] = ()
    """Exact file names of configuration files its linking reads (their ``FileFacts.config``)."""
    cache_version: str
    """Bumped whenever its analyzer's facts change: older cached facts are then parsed again."""
    schema: SchemaAdditions = SchemaAdditions()
    comment: str = "//"
    """Its line comment: how a ``File:`` marker is written before one of its files in a request's context."""
    hint: re.Pattern[str] | None = None
    """A pattern whose matches say an unmarked context is in this language (the most matches win)."""
    package_separator: str = "."
    """What separates the parts of a package name (``acme.billing``; TypeScript's folders: ``src/util``)."""
    method_sets: bool = False
    """Its linking computes relations from a type's method set (Go's implicit ``IMPLEMENTS``): a method that
    comes, goes or is redeclared concerns, on ``--update``, every file that names its type (the type's
    own)."""
    functional_types: bool = False
    """Its linking types a lambda by the one abstract method of the type it is passed as (Java's functional
    interfaces): an abstract method that comes, goes or is redeclared concerns, on ``--update``, files that
    need not name it (``igg.mapping.declared.changed_names``)."""
    keeps_generated: bool = False
    """A generated file is read (as its module and imports) instead of skipped."""
    reads_generated: bool = False
    """A generated file is read as any other file (not listed as generated)."""
    lighter_imports: bool = False
    """Its ``imports`` reads less than ``analyze`` (Python, Go): the facts cache keeps those facts apart. Else
    ``imports`` is the full analysis, cached and reused as the full map's."""
    imports_by_name: bool = False
    """A link of imports reads of the other files of its language their paths and module names alone (its
    ``declared_for_imports`` is None): ``igg.mapping.spliced`` links a file's imports against those, read
    from the kept graph's modules, instead of reading every file's facts (Python: 1.1 s at 12,500 files)."""
    scans_imports: bool = False
    """Its ``imports`` reads most files' text without parsing it (Python: ``python/scan.py``), so cheaply that
    an imports-only read of a tree of its files runs in the calling process (``parse_all``): a process pool
    would cost more than it saves."""
    keeps_calls: bool = False
    """Its calls are a whole-program fixpoint, kept from one link of a tree to the next (``KeptCalls``) and
    moved to their new sites by ``moved_calls`` (Python)."""

    def declared_for_imports(self, facts: FileFacts) -> object:
        """What of a file's declarations a link of imports alone reads (beside its imports, module, package
        and configuration): here its exports and the qualified names of its types (a Java import names a
        type). Equal for two facts of a file, they place its imports alike (``igg.mapping.since``)."""
        return facts.exports, [t.qualified for t in facts.types]

    def analyze(self, path: str, text: str, module: str | None) -> FileFacts:
        """The facts of one file (may raise: the caller's guard makes that a partial file)."""
        ...

    def header(self, path: str, text: str, module: str | None) -> FileFacts:
        """What a file that cannot be analysed still says: its module and imports, read from their lines."""
        ...

    def imports(self, path: str, text: str, module: str | None) -> FileFacts:
        """The facts of one file that resolving its imports needs (``Reads`` ``imports``): its module, its
        imports and what its linker reads to resolve them. Default: the full analysis (a language whose
        imports resolve through other files' declarations, as Java's do, keeps them)."""
        return self.analyze(path, text, module)

    def salvage(
        self, analyze: Callable[[str, str, str | None], FileFacts], path: str, text: str, module: str | None
    ) -> tuple[FileFacts | None, list[int]]:
        """The facts of a file whose analysis failed, leaving out the statements that fail on their own, and
        the first lines of those; (None, []) when the language cannot (then ``header`` is all there is)."""
        return None, []

    def decode(self, data: bytes) -> str | tuple[None, str]:
        """The text of a file's bytes, or (None, why not) when it cannot be read as this language's source."""
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return None, "binary or not UTF-8"

    def excluded(self, path: str, text: str) -> str | None:
        """Why a file it claims is no part of any build of its language and is skipped (Go: a build constraint
        for another system, a ``testdata`` folder), or None: it is read."""
        return None

    def is_package_dir(self, path: str) -> bool:
        """Whether a folder bearing a build-like name (``build``, ``dist``) is one of this language's
        packages."""
        return False

    def disk_namer(self) -> Callable[[str], str | None] | None:
        """A function naming one walk's files of this language by their path on disk (None: the analyzer names
        them from their text, as Java's ``package`` line does)."""
        return None

    def rename(
        self, files: Sequence[SourceFile], disk: Mapping[str, str], prefix: str | None
    ) -> list[SourceFile]:
        """The walked files of this language renamed once all are known (``--package-prefix``; ``disk``: each
        file's path on disk)."""
        return list(files)

    def name_paths(self, files: Sequence[SourceFile]) -> list[SourceFile]:
        """The files of a request's context (no disk) with their module names."""
        return list(files)

    def merge(self, files: list[FileFacts]) -> list[FileFacts]:
        """The facts with declaration-only files merged into their implementation (``.pyi`` into ``.py``)."""
        return files

    def linker(self, index: Index) -> Linker:
        """Its resolver over the index of every file of the link."""
        ...

    def names_others(self, path: str) -> bool:
        """Whether a file at ``path`` (relative to the walked root) decides the module names of other files by
        being there (Python: a package's ``__init__.py``): a change that adds or removes one is not a matter
        of that file alone."""
        return False

    def module_beside(self, path: str, sibling: str, sibling_module: str | None) -> tuple[str | None] | None:
        """The module name a walk gives a file at ``path`` (on disk; the file may be gone) in the folder of
        ``sibling``, a file of this language the walk named ``sibling_module``, as a 1-tuple; None when that
        cannot be told. By default the sibling's: the language names a folder's files alike (Go: the folder's
        import path) or not from the disk at all (None: from their text or path)."""
        return (sibling_module,)

    def moved_calls(self, old: FileFacts, new: FileFacts, rows: Sequence[CallRow]) -> list[CallRow] | None:
        """The calls ``rows`` kept from a file's facts ``old`` (``KeptCalls``), moved to the sites they have
        in its facts ``new``, whose calls resolve as ``old``'s did (every declaration and value flow the
        same); None when a site cannot be told (and for a language that keeps no calls: its link states
        them)."""
        return None


@cache
def get(name: str) -> Language:
    """The language ``name`` (a key of ``MODULES``); raises KeyError for one IGG does not read."""
    language: Language = importlib.import_module(MODULES[name]).LANGUAGE
    return language


def names() -> tuple[str, ...]:
    """Every language IGG reads, in reporting order."""
    return tuple(MODULES)


def language_of(path: str) -> str | None:
    """The language that claims ``path`` (by suffix, or a configuration file's exact name), or None."""
    slash = path.rfind("/")
    base = path[slash + 1 :]
    if base in CONFIG_NAMES:
        return CONFIG_NAMES[base]
    dot = base.rfind(".")
    if base.endswith(".json"):
        return next((name for pattern, name in CONFIG_PATTERNS if pattern.match(base)), None)
    return SUFFIXES.get(base[dot:].lower()) if dot >= 0 else None


def is_read(path: str) -> bool:
    """Whether a walk of the code map reads or looks for ``path``: a source or configuration file of some
    language, or a marker its naming looks for (``MARKER_NAMES``)."""
    return language_of(path) is not None or path[path.rfind("/") + 1 :] in MARKER_NAMES


def is_stub(path: str) -> bool:
    """Whether ``path`` is a declaration-only file (``.pyi``, ``.d.ts``) that merges into its module."""
    return path.endswith(STUBS)


def is_config(path: str) -> bool:
    """Whether ``path`` is a configuration file a language's linking reads (not a source of its own)."""
    base = path[path.rfind("/") + 1 :]
    return base in CONFIG_NAMES or base.endswith(".json") and any(p.match(base) for p, _ in CONFIG_PATTERNS)


def spoken(chosen: Iterable[str] | None = None) -> str:
    """The languages' titles as a sentence says them: ``Python or Java``, ``Python, Java or TypeScript``."""
    titles = [TITLES.get(n, n) for n in (chosen if chosen is not None else names())]
    return titles[0] if len(titles) == 1 else f"{', '.join(titles[:-1])} or {titles[-1]}"


def parse_languages(value: str | Iterable[str] | None) -> tuple[str, ...]:
    """The language names of ``--languages python,java`` (None: every language); raises ValueError naming the
    ones IGG does not read."""
    if value is None:
        return names()
    items = value.split(",") if isinstance(value, str) else list(value)
    chosen = [v.strip().lower() for v in items if v.strip()]
    unknown = [v for v in chosen if v not in MODULES]
    if unknown or not chosen:
        raise ValueError(f"{', '.join(unknown) or repr(value)}: languages are {', '.join(MODULES)}")
    return tuple(n for n in MODULES if n in chosen)


def check_languages(value: str | Iterable[str] | None) -> tuple[str, ...]:
    """``parse_languages`` for a person's input: raises ``RequestInvalid`` (``--languages``) naming the
    unknown ones and the ones IGG reads."""
    from igg.errors import Problem, RequestInvalid

    try:
        return parse_languages(value)
    except ValueError as exc:
        raise RequestInvalid([Problem("--languages", str(exc))], source="the command line") from None


def register(
    name: str,
    module: str,
    suffixes: Iterable[str],
    config_names: Iterable[str] = (),
    title: str | None = None,
    stubs: Iterable[str] = (),
) -> None:
    """Add a language at run time (a plug-in outside IGG): its module holds ``LANGUAGE``."""
    global STUBS
    MODULES[name] = module
    STUBS = (*STUBS, *stubs)
    TITLES[name] = title or name
    SUFFIXES.update(dict.fromkeys((s.lower() for s in suffixes), name))
    CONFIG_NAMES.update(dict.fromkeys(config_names, name))
    get.cache_clear()
