"""What a link makes of a tree's facts: symbols (would-be nodes) and relations (would-be edges), per file.

Every relation but CONTAINS has sites: the places in the file that state it (an import statement, a call, an
instantiation, a type's declaration for EXTENDS/IMPLEMENTS, a SQL string for READS_FROM/WRITES_TO). Several
statements of one dependency are one relation, one edge; the edge carries its sites as properties
(``site_properties``): the first one as ``file``/``line``/``column``, up to ``SITE_CAP`` of them in source
order as ``sites`` and how many there are as ``site_count``.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any


@dataclass(kw_only=True, slots=True)
class Symbol:
    """A would-be node of the code schema."""

    key: str
    label: str
    properties: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Relation:
    """A would-be edge of the code schema between two symbol keys."""

    label: str
    source: str
    target: str
    line: int = field(default=0, compare=False)
    """The line of the file's statement behind it (the first one, when several state it; 0: not known). Not
    part of a relation's identity: two statements of one dependency are one relation, one edge."""
    column: int = field(default=0, compare=False)
    """The 1-based column of that statement's site (0: not known; see ``Site``)."""


SITE_CAP = 10
"""The most sites an edge lists (``sites``); ``site_count`` counts them all."""
SITED = frozenset(
    {
        "IMPORTS",
        "IMPORTS_SYMBOL",
        "CALLS",
        "INSTANTIATES",
        "EXTENDS",
        "IMPLEMENTS",
        "READS_FROM",
        "WRITES_TO",
        "HANDLES",
        "REQUESTS",
    }
)
"""The relation labels whose edges carry sites (CONTAINS does not: a node's own ``file``/``line`` say
where)."""

Site = tuple[str, int, int]
"""(file, line, column): a file's path relative to the mapped root, as nodes' ``file``; the 1-based line and
column where the statement starts: an import statement; a call: the called name (Java, TypeScript, JavaScript,
Go: where their compilers put the call) or the call expression (Python, as ``ast`` has it); ``new T()`` and
``T()``: the expression; EXTENDS/IMPLEMENTS: the declaration of the subtype (its first modifier or
annotation, Python: the ``class`` keyword); READS_FROM/WRITES_TO: the string literal holding the statement (or
the name of the constant holding it); HANDLES: the route's registration (its decorator, annotation or
``app.get(...)`` call); REQUESTS: the client's call (the called name)."""


def site_properties(sites: Collection[Site]) -> dict[str, Any]:
    """The properties of an edge stated at ``sites`` (not empty; repeats count once): ``file``, ``line`` and
    ``column`` of the first one in source order, ``sites`` (``"path:line:column"``, at most ``SITE_CAP``, in
    source order) and ``site_count`` (every site)."""
    if len(sites) == 1:  # most edges: one statement
        for path, line, column in sites:
            return {
                "file": path,
                "line": line,
                "column": column,
                "sites": [f"{path}:{line}:{column}"],
                "site_count": 1,
            }
    ordered = sorted(set(sites))
    path, line, column = ordered[0]
    return {
        "file": path,
        "line": line,
        "column": column,
        "sites": [f"{p}:{n}:{c}" for p, n, c in ordered[:SITE_CAP]],
        "site_count": len(ordered),
    }


@dataclass(kw_only=True, slots=True)
class FilePlan:
    """What one file contributes: new symbols and the relations it states, in proposal order."""

    path: str
    language: str
    symbols: list[str] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)
    sites: dict[Relation, list[tuple[int, int]]] = field(default_factory=dict)
    """Relation -> (line, column) of every statement of the file that states it (``SITED`` labels only; a
    statement met twice is listed twice: ``site_properties`` counts it once)."""
    type_only: set[Relation] = field(default_factory=set)
    """The file's import relations that only type-only imports state (``ImportRef.type_only``)."""
    error: str | None = None


@dataclass(kw_only=True)
class CodeModel:
    """Every symbol and relation of a set of files, grouped per file."""

    symbols: dict[str, Symbol]
    files: list[FilePlan]
    shared: set[str] = field(default_factory=set)
    """Keys of modules, types and callables declared by more than one file (the first file's symbol stands
    for all of them)."""

    calls: KeptCalls | None = None
    """The calls the link resolved over the whole program, kept for the next link of the tree (``KeptCalls``;
    None: not asked for)."""

    def relation_count(self) -> int:
        return sum(len(f.relations) for f in self.files)


CallRow = tuple[int, str, str, int, int]
"""One relation a call of a file states: (the position of the calling callable in the file's ``callables``,
-1 for the module's own code; the label, ``CALLS`` or ``INSTANTIATES``; the target's symbol key; line;
column)."""


@dataclass(kw_only=True, slots=True)
class KeptCalls:
    """The calls of a language whose calls are a whole-program fixpoint (Python: a parameter holds what every
    call site of the tree passes it, ``igg.codemap.python.calls``), kept from one link of a tree to the next.

    An update that changes files in place, keeping every declaration and every value flow (their calls moved
    at most: ``igg.mapping.remap``), would solve the same program again: it gives each changed file its kept
    rows with the sites moved (``given``) instead, and the link states them as the solved program would.
    ``made``: what this link resolved, by path: the file's content hash and its rows; ``whole``: the program
    was solved, and ``made`` holds every file of the language (else only those ``given`` replayed)."""

    given: dict[str, list[CallRow]] = field(default_factory=dict)
    made: dict[str, tuple[str | None, list[CallRow]]] = field(default_factory=dict)
    whole: bool = False
