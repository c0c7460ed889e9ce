"""What a link makes of a tree's facts: symbols (would-be nodes) and relations (would-be edges), per file."""

from __future__ import annotations

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


@dataclass(kw_only=True, slots=True)
class FilePlan:
    """What one file contributes: new symbols and the relations it states, in proposal order."""

    path: str
    language: str
    symbols: list[str] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)
    error: str | None = None


@dataclass(kw_only=True)
class CodeModel:
    """Every symbol and relation of a set of files, grouped per file."""

    symbols: dict[str, Symbol]
    files: list[FilePlan]
    shared: set[str] = field(default_factory=set)
    """Keys of modules, types and callables declared by more than one file (the first file's symbol stands
    for all of them)."""

    def relation_count(self) -> int:
        return sum(len(f.relations) for f in self.files)
