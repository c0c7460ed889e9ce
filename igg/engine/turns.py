"""What the loop reads of an agent's turn: its storable output text, its parsed response (or the reason it
has none), and the notes the agent is told about it next turn."""

from __future__ import annotations

import json
from typing import Any

import orjson

from igg.agents.base import AgentTurn
from igg.agents.parsing import parse_turn, read_value
from igg.errors import ResponseInvalid
from igg.io.encodable import escape_unencodable
from igg.models.actions import ParsedResponse
from igg.models.verdicts import ErrorCode
from igg.observe import Chunk
from igg.record.records import IterationRecord


def chunk_label(chunk: Chunk | None) -> str | None:
    """How a chunk is named to the agent and in records: its label, else ``chunk N/COUNT``."""
    if chunk is None:
        return None
    return chunk.label or f"chunk {chunk.index + 1}" + (f"/{chunk.count}" if chunk.count else "")


def notes_of(turn: AgentTurn, parsed: ParsedResponse | None) -> list[str]:
    """The notes a turn's record keeps: the agent's own, and the characters its reasoning had repaired."""
    notes = [turn.note] if turn.note else []
    if parsed is not None and parsed.repaired:
        notes.append(
            f"{parsed.repaired} unencodable character(s) (lone surrogates) in the reasoning were "
            "replaced with U+FFFD"
        )
    return notes


def raw_output(turn: AgentTurn, *, plain_json: bool = False) -> tuple[str | None, Any, int, bool]:
    """The storable output text, its kind, how many lone surrogates were escaped in it, and whether a response
    object was plain JSON throughout (nothing in it had to be written as its ``repr``). ``plain_json``: the
    agent declares its response objects hold only JSON's own types (orjson writes them; it refuses lone
    surrogates, so its text is storable as it is)."""
    # stored text must be encodable: lone surrogates are kept as their JSON escapes (the parser judges them)
    if turn.raw is not None:
        return (*_text(turn.raw, "text"), False)
    if plain_json and turn.response is not None:
        try:
            return orjson.dumps(turn.response).decode(), "object", 0, True
        except (orjson.JSONEncodeError, TypeError):
            pass  # the standard path says what is odd in it
    if turn.response is not None:
        odd: list[Any] = []

        def written(value: Any) -> str:
            odd.append(value)
            return repr(value)

        return (*_text(json.dumps(turn.response, ensure_ascii=False, default=written), "object"), not odd)
    return None, "text", 0, False


def _text(text: str, kind: Any) -> tuple[str, Any, int]:
    stored, escaped = escape_unencodable(text)
    return stored, kind, escaped


def parse(turn: AgentTurn, *, encodable: bool = False) -> tuple[ParsedResponse | None, dict[str, str] | None]:
    """The turn's response, parsed, or None and the parse error (``code``, ``message``) to record; never
    raises (``encodable``: a response object whose text holds no lone surrogate, read without a rescan)."""
    try:
        if turn.response is not None:
            return read_value(turn.response, truncated=turn.truncated, encodable=encodable), None
        if turn.raw is not None:
            return parse_turn(turn.raw, truncated=turn.truncated), None
        raise ResponseInvalid(ErrorCode.INVALID_RESPONSE, "the agent's turn held neither text nor a response")
    except ResponseInvalid as exc:
        return None, {"code": str(exc.code), "message": exc.message}
    except Exception as exc:  # a Python agent's odd objects must not crash the loop
        return None, {
            "code": str(ErrorCode.INVALID_RESPONSE),
            "message": f"the response could not be read ({type(exc).__name__}: {exc})",
        }


def notes_after(record: IterationRecord | None) -> list[str]:
    """What the agent is told in the observation after ``record``: its notes, and that it was cut off."""
    if record is None:
        return []
    notes = list(record.notes)
    if record.truncated:
        notes.append(
            f"Your previous output was cut off: only its {len(record.actions)} whole action(s) were "
            "read, the rest was lost. Send the missing actions again, fewer per response."
        )
    return notes


__all__ = ["chunk_label", "notes_after", "notes_of", "parse", "raw_output"]
