"""Context chunks: context_data larger than its budget is split on natural boundaries and walked in order.

Boundaries, coarsest first:
1. **file markers**, lines such as ``// File: src/A.java``, ``# File: a.py``, ``-- File: x.sql``,
   ``/* File: x */``, ``<!-- File: x -->``, ``--- path`` (diff style) or ``==> path <==`` (``head``/``tail``
   style); a file section runs from its marker to the next one, and its label is the path;
2. **paragraphs**, split after blank lines;
3. **lines**;
4. an over-long line is split hard, preferably after a space.

Whole files that fit are packed together into one chunk up to the budget (labelled ``first .. last
(N files)``); a file that does not fit gets chunks of its own, each labelled with its path. Every chunk's
estimated tokens are within the budget, the chunks' texts joined give the context back exactly, and the
same input always gives the same chunks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from igg.observe.tokens import estimate_tokens

_MARKER = re.compile(
    r"""^[ \t]*(?:
        (?://+|\#+|--|;+|%+|\*+|/\*+|<!--)[ \t]*[Ff][Ii][Ll][Ee][ \t]*:[ \t]*(?P<a>[^\r\n]*?)[ \t]*(?:\*/|-->)?[ \t]*
      | ---[ \t]+(?:a/|b/)?(?P<b>[^\s]+)(?:[ \t]+[^\r\n]*?)?
      | ==>[ \t]+(?P<c>[^\r\n]+?)[ \t]+<==[ \t]*
    )\r?$""",
    re.MULTILINE | re.VERBOSE,
)
_PARAGRAPH_END = re.compile(r"\n[ \t\r]*\n(?:[ \t\r]*\n)*")
_LABEL_CHARS = 200


@dataclass(frozen=True)
class Chunk:
    """One piece of the context, as the loop walks it."""

    index: int
    """0-based position among the chunks (shown 1-based: ``chunk 3/12``)."""
    count: int
    """How many chunks the context has."""
    label: str | None
    """The file path(s) the chunk holds, when the context has file markers; else None."""
    text: str
    """The chunk's text, verbatim."""


def split_context(text: str, chunk_tokens: int) -> list[Chunk]:
    """Split ``text`` into chunks of at most ``chunk_tokens`` estimated tokens ([] for empty text)."""
    if chunk_tokens < 2:  # one character may cost 2 (an emoji): a smaller budget could not always be met
        raise ValueError(f"chunk_tokens must be at least 2, got {chunk_tokens}")
    if not text:
        return []
    pieces: list[tuple[list[str], str]] = []  # (labels, text)
    batch: list[tuple[str | None, str]] = []
    batch_cost = 0
    for label, section in _sections(text):
        cost = estimate_tokens(section)
        if cost > chunk_tokens:
            if batch:
                pieces.append(_merge(batch))
                batch, batch_cost = [], 0
            pieces.extend(([label] if label else [], part) for part in _split_section(section, chunk_tokens))
            continue
        if batch and batch_cost + cost + _join_cost(batch[-1][1], section) > chunk_tokens:
            pieces.append(_merge(batch))
            batch, batch_cost = [], 0
        batch_cost += cost + (_join_cost(batch[-1][1], section) if batch else 0)
        batch.append((label, section))
    if batch:
        pieces.append(_merge(batch))
    count = len(pieces)
    return [Chunk(index=i, count=count, label=_label(labels), text=t) for i, (labels, t) in enumerate(pieces)]


def _sections(text: str) -> list[tuple[str | None, str]]:
    """(label, text) per file section; text before the first marker has no label."""
    sections: list[tuple[str | None, str]] = []
    start, label = 0, None
    for m in _MARKER.finditer(text):
        path = (m.group("a") or m.group("b") or m.group("c") or "").strip()
        if not path:
            continue
        if m.start() > start:
            sections.append((label, text[start:m.start()]))
        start, label = m.start(), path
    sections.append((label, text[start:]))
    return [s for s in sections if s[1]]


def _merge(batch: list[tuple[str | None, str]]) -> tuple[list[str], str]:
    return [label for label, _ in batch if label], "".join(t for _, t in batch)


def _label(labels: list[str]) -> str | None:
    if not labels:
        return None
    if len(labels) == 1:
        return labels[0][:_LABEL_CHARS]
    return f"{labels[0][:_LABEL_CHARS]} .. {labels[-1][:_LABEL_CHARS]} ({len(labels)} files)"


def _join_cost(left: str, right: str) -> int:
    """Extra tokens joining two texts may cost beyond their own estimates (a space meeting whitespace)."""
    return 1 if left[-1:] == " " and right[:1].isspace() else 0


def _split_section(section: str, budget: int) -> list[str]:
    """Split one over-budget section: paragraphs, then lines, then hard splits, packed greedily."""
    units: list[str] = []
    for paragraph in _split_keep(section, _PARAGRAPH_END):
        if estimate_tokens(paragraph) <= budget:
            units.append(paragraph)
            continue
        for line in paragraph.splitlines(keepends=True):
            if estimate_tokens(line) <= budget:
                units.append(line)
            else:
                units.extend(_hard_split(line, budget))
    return _pack(units, budget)


def _split_keep(text: str, boundary: re.Pattern[str]) -> list[str]:
    """Split after each match of ``boundary``, keeping it with the piece before."""
    out, start = [], 0
    for m in boundary.finditer(text):
        out.append(text[start:m.end()])
        start = m.end()
    if start < len(text):
        out.append(text[start:])
    return out


def _pack(units: list[str], budget: int) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    cost = 0
    for unit in units:
        unit_cost = estimate_tokens(unit)
        extra = _join_cost(current[-1], unit) if current else 0
        if current and cost + extra + unit_cost > budget:
            parts.append("".join(current))
            current, cost, extra = [], 0, 0
        current.append(unit)
        cost += unit_cost + extra
    if current:
        parts.append("".join(current))
    return parts


def _hard_split(line: str, budget: int) -> list[str]:
    """Split a line whose estimate exceeds the budget into pieces within it, preferably after spaces."""
    pieces: list[str] = []
    rest = line
    while rest:
        if estimate_tokens(rest) <= budget:
            pieces.append(rest)
            break
        n = min(len(rest), 4 * budget)
        while n > 1 and estimate_tokens(rest[:n]) > budget:
            n = max(1, min(n - 1, n * budget // max(1, estimate_tokens(rest[:n]))))
        space = rest.rfind(" ", n // 2, n)
        if space > 0:
            n = space + 1
        pieces.append(rest[:n])
        rest = rest[n:]
    return pieces
