"""Agent answers kept beside the store, so an unchanged document costs no agent call.

One SQLite file beside the session store (``STORE.answers``, as ``igg.codemap.cache`` keeps a code map's
facts): a row per answer, keyed by the sha256 of what the answer depends on, ``answer_key``: the chunk's text,
the schema, the goal, ``PROMPT_VERSION`` and the agent's identity (its kind and model). Any session of the
store reads it, across runs. A missing or unreadable cache costs only the calls it would have spared.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import structlog

log = structlog.get_logger("igg.documents")

PROMPT_VERSION = "documents-1"
"""Bumped when what a document's chunk is shown with changes: every answer is then asked for again."""


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


class AnswerCache:
    """Answers (decoded response objects) by ``answer_key``; in memory with ``path=None``."""

    def __init__(self, path: str | Path | None) -> None:
        self.path = Path(path) if path is not None else None
        try:
            if self.path is not None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(self.path) if self.path is not None else ":memory:")
            self._db.execute("PRAGMA synchronous = OFF")  # a cache: a lost write costs a call
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, answer TEXT NOT NULL)"
            )
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS documents (key TEXT PRIMARY KEY, answer TEXT NOT NULL)"
            )
            self._db.execute(_MENTIONS)
        except (sqlite3.Error, OSError) as exc:
            log.warning("answer_cache_unusable", path=str(self.path), error=str(exc))
            self._db = sqlite3.connect(":memory:")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, answer TEXT NOT NULL)"
            )
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS documents (key TEXT PRIMARY KEY, answer TEXT NOT NULL)"
            )
            self._db.execute(_MENTIONS)

    def put_mentions(self, rows: Iterable[tuple[str, str]]) -> None:
        """(value, document key): a document's answers refer to a node by this value."""
        try:
            with self._db:
                self._db.executemany("INSERT OR IGNORE INTO mentions (value, key) VALUES (?, ?)", list(rows))
        except sqlite3.Error as exc:
            log.warning("answer_cache_write_failed", path=str(self.path), error=str(exc))

    def mentioning(self, values: Sequence[str]) -> set[str]:
        """The document keys whose answers refer to a node by one of ``values``."""
        out: set[str] = set()
        unique = list(dict.fromkeys(values))
        for start in range(0, len(unique), 500):
            part = unique[start : start + 500]
            try:
                out.update(
                    r[0]
                    for r in self._db.execute(
                        f"SELECT key FROM mentions WHERE value IN ({','.join('?' * len(part))})", part
                    )
                )
            except sqlite3.Error:
                return out
        return out

    def get_many(self, keys: Sequence[str], *, table: str = "answers") -> dict[str, dict[str, Any]]:
        """The answers found among ``keys`` (``table="documents"``: documents' answers, ``document_key``)."""
        found: dict[str, dict[str, Any]] = {}
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), 500):
            part = unique[start : start + 500]
            try:
                rows = self._db.execute(
                    f"SELECT key, answer FROM {_table(table)} WHERE key IN ({','.join('?' * len(part))})",
                    part,
                ).fetchall()
            except sqlite3.Error as exc:
                log.warning("answer_cache_unreadable", path=str(self.path), error=str(exc))
                return {}
            for key, text in rows:
                try:
                    value = json.loads(text)
                except ValueError:
                    continue
                if isinstance(value, dict):
                    found[key] = value
        return found

    def put_many(self, items: Iterable[tuple[str, dict[str, Any]]], *, table: str = "answers") -> None:
        rows = [(k, json.dumps(v, ensure_ascii=False)) for k, v in items]
        try:
            with self._db:
                self._db.executemany(
                    f"INSERT OR REPLACE INTO {_table(table)} (key, answer) VALUES (?, ?)", rows
                )
        except sqlite3.Error as exc:
            log.warning("answer_cache_write_failed", path=str(self.path), error=str(exc))

    def close(self) -> None:
        self._db.close()


_MENTIONS = (
    "CREATE TABLE IF NOT EXISTS mentions (value TEXT NOT NULL, key TEXT NOT NULL, PRIMARY KEY (value, key))"
)


def _table(name: str) -> str:
    if name not in ("answers", "documents"):
        raise ValueError(f"no table {name!r} in the answer cache")
    return name


__all__ = ["PROMPT_VERSION", "AnswerCache", "answer_key", "document_key", "key_base"]
