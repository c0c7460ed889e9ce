"""Agent answers kept in the session store, so an unchanged document costs no agent call.

Three tables of the store (``igg.store.schema``, schema 4 on): ``answers``, a row per chunk's answer, keyed by
the sha256 of what the answer depends on (``answer_key``: the chunk's text, the schema, the goal,
``PROMPT_VERSION`` and the agent's identity, its kind and model); ``document_answers``, a document's answers
(every chunk's) by its content hash (``document_key``); ``answer_mentions``, which document's answers refer to
a node by which value. Every session of the store reads them, across runs and, on PostgreSQL, across the
servers sharing the store. A cache read or write that fails costs only the calls it would have spared (a
warning says so); it never fails the build.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from typing import Any

from igg.errors import SessionError
from igg.record.logs import get_logger
from igg.store.sql import Connection, Database

log = get_logger("igg.documents")

PROMPT_VERSION = "documents-1"
"""Bumped when what a document's chunk is shown with changes: every answer is then asked for again."""

_TABLES = {"answers": "answers", "documents": "document_answers"}
_BATCH = 500


def key_base(*, schema: Any, goal: str, agent: str) -> str:
    """What every answer's key of one build shares: the prompt version, the agent, the goal and the schema."""
    return json.dumps([PROMPT_VERSION, agent, goal, schema], sort_keys=True, ensure_ascii=False, default=str)


def answer_key(base: str, text: str) -> str:
    """The key of a chunk's answer: a hash of ``key_base`` and the chunk's text."""
    return hashlib.sha256(f"{base}\x00{text}".encode("utf-8", "surrogatepass")).hexdigest()


def document_key(base: str, sha: str) -> str:
    """The key of a document's answers (every chunk's), by its content hash: what a retraction reads of the
    documents that share facts with the one retracted."""
    return hashlib.sha256(f"{base}\x01{sha}".encode("utf-8", "surrogatepass")).hexdigest()


def _table(name: str) -> str:
    if name not in _TABLES:
        raise ValueError(f"no table {name!r} in the answer cache")
    return _TABLES[name]


def _batches(values: Sequence[str]) -> list[list[str]]:
    unique = list(dict.fromkeys(values))
    return [unique[i : i + _BATCH] for i in range(0, len(unique), _BATCH)]


class AnswerCache:
    """Answers (decoded response objects) by ``answer_key``, in the tables of the store ``db``."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def _read(self, what: str, sql: str, values: Sequence[str]) -> list[Any]:
        def work(c: Connection) -> list[Any]:
            rows: list[Any] = []
            for part in _batches(values):
                rows += c.execute(sql.replace("%s", ",".join("?" * len(part))), part).fetchall()
            return rows

        try:
            return self.db.read(work) if values else []
        except SessionError as exc:
            log.warning("answer_cache_unreadable", what=what, error=str(exc))
            return []

    def _write(self, what: str, sql: str, rows: list[tuple[str, str]]) -> None:
        if not rows:
            return
        try:
            self.db.write(lambda c: c.executemany(sql, rows))
        except SessionError as exc:
            log.warning("answer_cache_write_failed", what=what, error=str(exc))

    def put_mentions(self, rows: Iterable[tuple[str, str]]) -> None:
        """(value, document key): a document's answers refer to a node by this value."""
        self._write(
            "mentions",
            "INSERT INTO answer_mentions (value, key) VALUES (?, ?) ON CONFLICT DO NOTHING",
            sorted(set(rows)),
        )

    def mentioning(self, values: Sequence[str]) -> set[str]:
        """The document keys whose answers refer to a node by one of ``values``."""
        rows = self._read("mentions", "SELECT key FROM answer_mentions WHERE value IN (%s)", values)
        return {r[0] for r in rows}

    def get_many(self, keys: Sequence[str], *, table: str = "answers") -> dict[str, dict[str, Any]]:
        """The answers found among ``keys`` (``table="documents"``: documents' answers, ``document_key``)."""
        found: dict[str, dict[str, Any]] = {}
        for key, text in self._read(
            table, f"SELECT key, answer FROM {_table(table)} WHERE key IN (%s)", keys
        ):
            try:
                value = json.loads(text)
            except ValueError:
                continue
            if isinstance(value, dict):
                found[key] = value
        return found

    def put_many(self, items: Iterable[tuple[str, dict[str, Any]]], *, table: str = "answers") -> None:
        """Keep answers by key (a key kept again takes the new answer)."""
        rows = sorted({k: json.dumps(v, ensure_ascii=False) for k, v in items}.items())
        self._write(
            table,
            f"INSERT INTO {_table(table)} (key, answer) VALUES (?, ?) "
            "ON CONFLICT (key) DO UPDATE SET answer = excluded.answer",
            rows,
        )

    def close(self) -> None:
        """Nothing to release: the store's connections are the store's."""


__all__ = ["PROMPT_VERSION", "AnswerCache", "answer_key", "document_key", "key_base"]
