"""Valid time: when a fact held in the world (as opposed to the journal's time, when IGG was told).

A time is ISO 8601, read by ``parse_time``:

- a year ``2024``, a month ``2024-03``, a day ``2024-03-05``, or a date-time ``2024-03-05T10:30[:00[.000]]``
  with ``Z`` or an offset ``+02:00``;
- a partial date stands for the **first instant** of its period, in both bounds: ``valid_from: "2024"`` is
  2024-01-01T00:00Z, and ``valid_to: "2024"`` ends the fact as 2024 begins;
- a date-time with an offset is converted to UTC; one without an offset, and every date, is taken as UTC;
- an interval is half-open: a fact with ``[valid_from, valid_to)`` holds at ``valid_from`` and no longer at
  ``valid_to``; either bound may be missing (since always, until now).

The stored text keeps the precision the agent gave (``2024``, ``2024-03``, ``2024-03-05``,
``2024-03-05T08:30:00Z``: date-times written in UTC), so an export says what the source said; ``instant``
compares two stored times as instants.

Where the values live on an element: the properties ``igg_valid_from`` and ``igg_valid_to`` (IGG's own
prefix: no schema property can collide), and, on a node whose type keeps properties with one value at a time,
``igg_history``: one JSON text per value of such a property, ``{"key", "value", "from", "to"}``.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta, timezone
from functools import lru_cache
from typing import Any

VALID_FROM = "igg_valid_from"
"""The property holding an element's valid-time start (stored text)."""
VALID_TO = "igg_valid_to"
"""The property holding an element's valid-time end (stored text; exclusive)."""
HISTORY = "igg_history"
"""The node property holding the values of its one-at-a-time properties over time (JSON texts)."""
TIME_KEYS = (VALID_FROM, VALID_TO, HISTORY)

TIME_RULE = (
    "times are ISO 8601: 2024, 2024-03, 2024-03-05 or 2024-03-05T10:30:00Z (an offset such as +02:00 "
    "is converted to UTC; no offset means UTC); a partial date means the start of its period; "
    "valid_to is exclusive and must be after valid_from"
)
"""The rule, as verdicts and the prompt state it."""

_TIME_RE = re.compile(
    r"(?P<y>\d{4})(?:-(?P<m>\d{2})(?:-(?P<d>\d{2})(?:[T"
    r" ](?P<H>\d{2}):(?P<M>\d{2})(?::(?P<S>\d{2})(?:\.(?P<f>\d{1,6}))?)?"
    r"(?P<z>Z|[+-]\d{2}:?\d{2})?)?)?)?"
)


class TimeError(ValueError):
    """A text that is not a time ``parse_time`` reads (the message says what would be)."""


@lru_cache(maxsize=65536)
def parse_time(text: str) -> tuple[str, datetime]:
    """``(stored text, instant in UTC)`` of an ISO 8601 time (see the module docstring); raises
    ``TimeError``."""
    if not isinstance(text, str):
        raise TimeError(f"a time is a string; got {type(text).__name__}")
    match = _TIME_RE.fullmatch(text.strip())
    if match is None:
        raise TimeError(f"{text[:40]!r} is not a time: {TIME_RULE}")
    g = match.groupdict()
    try:
        year, month, day = int(g["y"]), int(g["m"] or 1), int(g["d"] or 1)
        if g["H"] is None:
            instant = datetime(year, month, day, tzinfo=UTC)
            stored = g["y"] + (f"-{g['m']}" if g["m"] else "") + (f"-{g['d']}" if g["d"] else "")
            return stored, instant
        micro = int((g["f"] or "0").ljust(6, "0"))
        zone = UTC
        if g["z"] and g["z"] != "Z":
            sign = -1 if g["z"][0] == "-" else 1
            digits = g["z"][1:].replace(":", "")
            zone = timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:])))
        local = datetime(year, month, day, int(g["H"]), int(g["M"]), int(g["S"] or 0), micro, tzinfo=zone)
    except ValueError as exc:
        raise TimeError(f"{text[:40]!r} is not a time ({exc}): {TIME_RULE}") from None
    instant = local.astimezone(UTC)
    stored = instant.strftime("%Y-%m-%dT%H:%M:%S") + (
        f".{instant.microsecond:06d}" if instant.microsecond else ""
    )
    return stored + "Z", instant


def instant(stored: str) -> datetime:
    """The instant a stored (or any valid) time stands for."""
    return parse_time(stored)[1]


def holds(properties: dict[str, Any], at: datetime) -> bool:
    """Whether an element with these properties is valid at ``at`` (no bounds: always)."""
    start = properties.get(VALID_FROM)
    if start is not None and instant(start) > at:
        return False
    end = properties.get(VALID_TO)
    return end is None or at < instant(end)


def history(properties: dict[str, Any]) -> list[dict[str, Any]]:
    """A node's ``igg_history`` entries, decoded (``{"key", "value", "from", "to"}``, ``from``/``to`` None
    when unbounded): new dicts, the caller's to change."""
    return [dict(history_entry(text)) for text in properties.get(HISTORY, ())]


@lru_cache(maxsize=65536)
def history_entry(text: str) -> dict[str, Any]:
    """One stored history entry, decoded once per text (shared: copy it before changing it, as ``history``
    does)."""
    entry: dict[str, Any] = json.loads(text)
    return entry


_ENCODE = json.JSONEncoder(ensure_ascii=False, sort_keys=True).encode


def history_text(entry: dict[str, Any]) -> str:
    """One ``igg_history`` entry as stored."""
    return _ENCODE(
        {"key": entry["key"], "value": entry["value"], "from": entry.get("from"), "to": entry.get("to")}
    )


def properties_at(properties: dict[str, Any], at: datetime) -> dict[str, Any]:
    """A node's properties as they were at ``at``: each property with a history takes the value valid then
    (and is absent when none was); the history itself is left out (the node's own bounds are kept)."""
    entries = history(properties) if HISTORY in properties else []
    if not entries:
        return properties
    out = {k: v for k, v in properties.items() if k != HISTORY}
    for key in {e["key"] for e in entries}:
        out.pop(key, None)
    for e in entries:
        if (e["from"] is None or instant(e["from"]) <= at) and (e["to"] is None or at < instant(e["to"])):
            out[e["key"]] = e["value"]
    return out


__all__ = [
    "HISTORY",
    "TIME_KEYS",
    "TIME_RULE",
    "VALID_FROM",
    "VALID_TO",
    "TimeError",
    "history",
    "history_entry",
    "history_text",
    "holds",
    "instant",
    "parse_time",
    "properties_at",
]
