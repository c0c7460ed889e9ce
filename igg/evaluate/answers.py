"""Reading Text2KGBench's files: test sentences, gold triples, and a model's recorded answers in both
published forms (DBpedia-WebNLG: ``{"id", "response", "triples": [[s, r, o], ...]}``; Wikidata-TekGen: the
same, or only the ``response`` text with one ``relation(subject, object)`` per line).

A triple that is not three non-empty strings is malformed (counted, never guessed at); an answer that cannot
be read at all (not JSON, no ``id``, ``triples`` not a list) is an invalid turn for its sentence, and the rest
of the file is read on.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from igg.errors import Problem, RequestInvalid

Triple = tuple[str, str, str]
_CALL = re.compile(r"^\s*([^(),]+?)\s*\((.+),\s*([^,]+?)\)\s*$")


@dataclass
class Answer:
    """One sentence's recorded answer: its triples, how many were malformed, and why it was unreadable."""

    triples: list[Triple] = field(default_factory=list)
    malformed: int = 0
    invalid: str | None = None


def read_jsonl(path: str | Path, what: str) -> list[Any]:
    """The JSON values of a JSON Lines file (a line that is not JSON is ``None``); ``RequestInvalid`` (exit 2)
    when the file cannot be read."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise RequestInvalid([Problem(what, f"cannot read {path}: {exc}")], source="igg eval") from None
    out: list[Any] = []
    for line in lines:
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except ValueError:
            out.append(None)
    return out


def read_sentences(path: str | Path) -> dict[str, str]:
    """Test sentences by id (``{"id", "sent"}`` per line)."""
    out: dict[str, str] = {}
    for i, row in enumerate(read_jsonl(path, "--sentences")):
        if not (
            isinstance(row, dict) and isinstance(row.get("id"), str) and isinstance(row.get("sent"), str)
        ):
            raise RequestInvalid(
                [Problem(f"--sentences line {i + 1}", 'expected {"id": ..., "sent": ...}')], source="igg eval"
            )
        out[row["id"]] = row["sent"]
    return out


def read_gold(path: str | Path) -> dict[str, list[Triple]]:
    """Gold triples by id (``{"id", "triples": [{"sub", "rel", "obj"}]}`` per line)."""
    out: dict[str, list[Triple]] = {}
    for i, row in enumerate(read_jsonl(path, "--ground-truth")):
        if not (
            isinstance(row, dict) and isinstance(row.get("id"), str) and isinstance(row.get("triples"), list)
        ):
            raise RequestInvalid(
                [Problem(f"--ground-truth line {i + 1}", 'expected {"id": ..., "triples": [...]}')],
                source="igg eval",
            )
        out[row["id"]] = [
            (str(t.get("sub", "")), str(t.get("rel", "")), str(t.get("obj", "")))
            for t in row["triples"]
            if isinstance(t, dict)
        ]
    return out


def read_answers(path: str | Path) -> tuple[dict[str, Answer], int]:
    """Answers by id, and how many lines could not be tied to a sentence at all (no JSON, no id)."""
    out: dict[str, Answer] = {}
    lost = 0
    for row in read_jsonl(path, "--responses"):
        if not (isinstance(row, dict) and isinstance(row.get("id"), str)):
            lost += 1
            continue
        out[row["id"]] = parse_answer(row)
    return out, lost


def parse_answer(row: dict[str, Any]) -> Answer:
    """One answer line read (see the module doc)."""
    answer = Answer()
    given = row.get("triples")
    if given is None:
        text = row.get("response")
        if not isinstance(text, str):
            answer.invalid = "neither 'triples' nor a 'response' text"
            return answer
        given = [_call(line) for line in text.splitlines() if "(" in line]
    if not isinstance(given, list):
        answer.invalid = f"'triples' is {type(given).__name__}, not a list"
        return answer
    for t in given:
        if isinstance(t, list | tuple) and len(t) == 3 and all(isinstance(x, str) and x.strip() for x in t):
            answer.triples.append((t[0], t[1], t[2]))
        elif isinstance(t, dict) and all(
            isinstance(t.get(k), str) and t[k].strip() for k in ("sub", "rel", "obj")
        ):
            answer.triples.append((t["sub"], t["rel"], t["obj"]))
        else:
            answer.malformed += 1
    return answer


def _call(line: str) -> list[str] | None:
    """``relation(subject, object)`` as ``[subject, relation, object]``; None when the line is not one."""
    m = _CALL.match(line)
    return [m.group(2).strip(), m.group(1), m.group(3).strip()] if m else None


def relation_key(text: str) -> str:
    """A relation name as answers may write it (spaces, underscores, escaped underscores ``\\_``, any case),
    folded to compare: ``LCCN\\_number`` = ``lccn number`` = ``LCCN_number``."""
    return re.sub(r"[\s_\\]+", "", text).casefold()


__all__ = [
    "Answer",
    "Triple",
    "parse_answer",
    "read_answers",
    "read_gold",
    "read_jsonl",
    "read_sentences",
    "relation_key",
]
