"""The scripted agent: replays a JSON Lines transcript, one agent turn per line.

Each non-blank line is either a response object, e.g.
``{"reasoning": "...", "actions": [...], "finished": false}``, which the loop reads like any decoded
response, or a raw turn ``{"raw": "<text>"}``, whose text goes through the shared response parser exactly
like an LLM's output. A raw turn may also carry ``"truncated": true`` (the output was cut off, as with an
LLM's ``finish_reason: length``) and ``"usage": {"prompt_tokens": P, "completion_tokens": C}``, so a
recorded run replays with the same accounting. ``igg run --out DIR`` writes ``DIR/transcript.jsonl`` in
this format.

Turn N answers the observation of iteration N, so a resumed run continues at the right line. Response
objects are *not* validated when the file is read: a transcript may hold malformed responses on purpose;
they are rejected by the loop, turn by turn, like any agent's.

A turn may answer a document instead of an iteration (``igg run --documents``): ``"document": ID`` (and
``"chunk": N``, 1-based, default 1) makes it the answer to that document's chunk whatever the order the
chunks are read in. A transcript holding such turns answers by document only: a chunk no turn names gets an
empty answer (no actions), and a later line for the same document and chunk replaces an earlier one (append a
document's new answer after an edit).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from igg.agents.base import AgentTurn, Observation
from igg.errors import AgentFailed, Problem, RequestInvalid
from igg.io.inputs import read_text
from igg.record.records import Usage

RAW_KEYS = frozenset({"raw", "truncated", "usage", "document", "chunk"})
"""Keys a raw turn may carry."""


class ScriptedAgent:
    """An agent that answers iteration N with turn N of a transcript."""

    def __init__(self, turns: Iterable[dict[str, Any]], *, source: str = "transcript") -> None:
        if isinstance(turns, str | Path):
            raise TypeError(
                "ScriptedAgent takes the turns themselves; for a transcript file use "
                "ScriptedAgent.from_path(path), for JSON Lines text ScriptedAgent.from_text(text)"
            )
        self.turns: list[dict[str, Any]] = []
        problems: list[Problem] = []
        for i, turn in enumerate(turns, 1):
            problem = turn_problem(turn)
            if problem:
                problems.append(Problem(f"turn {i}", problem))
            self.turns.append(turn)
        if problems:
            raise RequestInvalid(problems, source=source)
        self.source = source
        self.by_document: dict[tuple[str, int], dict[str, Any]] = {
            (str(t["document"]), int(t.get("chunk", 1))): {
                k: v for k, v in t.items() if k not in ("document", "chunk")
            }
            for t in self.turns
            if "document" in t
        }
        """Turns that answer a document's chunk, by (document id, chunk number from 1)."""

    @classmethod
    def from_path(cls, path: str | Path) -> ScriptedAgent:
        """Read a JSON Lines transcript; raises ``RequestInvalid`` naming every bad line."""
        name = f"transcript {path}"
        return cls.from_text(read_text(path, source=name), source=name)

    @classmethod
    def from_text(cls, text: str, *, source: str = "transcript") -> ScriptedAgent:
        """Read JSON Lines text (blank lines are skipped; turn numbers count the other lines)."""
        turns: list[dict[str, Any]] = []
        problems: list[Problem] = []
        for lineno, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                turn = json.loads(line)
            except json.JSONDecodeError as exc:
                problems.append(
                    Problem(
                        f"line {lineno}",
                        f"not valid JSON: {exc.msg} at column {exc.colno}; "
                        'each line must be a response object or {"raw": "<text>"}',
                    )
                )
                continue
            problem = turn_problem(turn)
            if problem:
                problems.append(Problem(f"line {lineno}", problem))
                continue
            turns.append(turn)
        if problems:
            raise RequestInvalid(problems, source=source)
        if not turns:
            raise RequestInvalid(
                [Problem("", "the transcript holds no turns (one JSON object per line)")], source=source
            )
        return cls(turns, source=source)

    def __len__(self) -> int:
        return len(self.turns)

    def __call__(self, observation: Observation) -> AgentTurn:
        """The turn for ``observation.iteration``; ``AgentFailed`` once the transcript is used up."""
        if self.by_document:
            turn = self.by_document.get((str(observation.chunk_label), (observation.chunk_index or 0) + 1))
            return self._turn(turn if turn is not None else {"actions": []})
        n = observation.iteration
        if not 1 <= n <= len(self.turns):
            raise AgentFailed(
                f"the {self.source} has {len(self.turns)} turn{'s' * (len(self.turns) != 1)}; iteration {n} "
                f"has no turn to replay (transcript exhausted)"
            )
        return self._turn(self.turns[n - 1])

    @staticmethod
    def _turn(turn: dict[str, Any]) -> AgentTurn:
        if "raw" not in turn:
            return AgentTurn(response=turn)
        usage = turn.get("usage")
        return AgentTurn(
            raw=turn["raw"],
            truncated=bool(turn.get("truncated", False)),
            usage=Usage(
                prompt_tokens=usage.get("prompt_tokens", 0),
                completion_tokens=usage.get("completion_tokens", 0),
                estimated=bool(usage.get("estimated", False)),
                cost=usage.get("cost"),
            )
            if usage
            else None,
        )


def turn_problem(turn: Any) -> str | None:
    """What is wrong with one transcript turn's shape, or None (response contents are checked later)."""
    if not isinstance(turn, dict):
        return f'a turn must be a JSON object (a response, or {{"raw": "<text>"}}); got {type(turn).__name__}'
    if "document" in turn and (
        not isinstance(turn["document"], str | int) or isinstance(turn["document"], bool)
    ):
        return "'document' must be a document id (a string)"
    chunk = turn.get("chunk", 1)
    if (
        not isinstance(chunk, int)
        or isinstance(chunk, bool)
        or chunk < 1
        or ("chunk" in turn and "document" not in turn)
    ):
        return "'chunk' must be a whole number >= 1, beside 'document'"
    if "raw" not in turn:
        return None
    extra = sorted(set(turn) - RAW_KEYS)
    if extra:
        return f"a raw turn allows only {', '.join(sorted(RAW_KEYS))}; unexpected: {', '.join(extra)}"
    if not isinstance(turn["raw"], str):
        return f"'raw' must be a string (the agent's output text); got {type(turn['raw']).__name__}"
    if not isinstance(turn.get("truncated", False), bool):
        return "'truncated' must be true or false"
    usage = turn.get("usage")
    if usage is not None:
        if not isinstance(usage, dict):
            return '\'usage\' must be an object like {"prompt_tokens": 120, "completion_tokens": 40}'
        for key in ("prompt_tokens", "completion_tokens"):
            value = usage.get(key, 0)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                return f"usage.{key} must be a whole number >= 0"
    return None
