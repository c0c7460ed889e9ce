"""What an OpenAI-compatible server answered, read for the LLM agent: the JSON of a 200 answer, its text and
counts, the answer as a record keeps it (without the text the turn keeps already), and short forms for
messages."""

from __future__ import annotations

import json
from typing import Any

import httpx

from igg.agents.retry import AnswerUnreadable


def decode_answer(response: httpx.Response, body: bytes) -> dict[str, Any]:
    """The JSON object of a 200 answer, or ``AnswerUnreadable`` saying what came instead."""
    kind = response.headers.get("content-type", "no content-type")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AnswerUnreadable(
            f"the server answered HTTP {response.status_code} with a body that is not UTF-8 "
            f"({kind}, {len(body)} bytes, invalid byte at offset {exc.start})"
        ) from None
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        start = json.dumps(" ".join(text[:60].split()), ensure_ascii=False)
        raise AnswerUnreadable(
            f"the server answered HTTP {response.status_code} with a body that is not a JSON "
            f"object ({kind}, {len(body)} bytes, starting {start})"
        )
    return data


def text_of(value: Any) -> str | None:
    """``value`` when it is a string (an answer's ``content`` or ``refusal``), else None."""
    return value if isinstance(value, str) else None


def count_of(value: Any) -> int | None:
    """``value`` when it is a whole number >= 0 (a reported token count), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def cap_text(text: str, limit: int) -> tuple[str, int | None]:
    """``text`` cut to at most ``limit`` UTF-8 bytes (on a character boundary), and its size when it was
    cut."""
    if len(text) <= limit // 4:  # no character takes more than 4 bytes
        return text, None
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text, None
    return data[:limit].decode("utf-8", errors="ignore"), len(data)


def without_text(data: dict[str, Any], cut: int | None) -> dict[str, Any]:
    """The response for the record: the answer text is the turn's ``raw`` already, not stored twice."""
    out = dict(data)
    choices = out.get("choices")
    if isinstance(choices, list):
        out["choices"] = [_choice_without_text(c, cut) for c in choices]
    return out


def _choice_without_text(choice: Any, cut: int | None) -> Any:
    if not isinstance(choice, dict) or not isinstance(choice.get("message"), dict):
        return choice
    message = dict(choice["message"])
    content = message.get("content")
    if isinstance(content, str):
        message["content"] = f"<{len(content)} characters: the record's raw_output>"
        if cut is not None:
            message["content"] = f"<{cut} bytes, cut to the record's raw_output>"
    return {**choice, "message": message}


def clip(text: str, limit: int = 160) -> str:
    """``text`` on one line, at most ``limit`` characters (``...`` where cut)."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


__all__ = ["cap_text", "clip", "count_of", "decode_answer", "text_of", "without_text"]
