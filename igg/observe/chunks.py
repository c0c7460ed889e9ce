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

The chunks are found as they are needed (``ContextChunks``): a run that shows five chunks of a 170 MB
context reads the first five chunks' worth of it, and keeps only each found chunk's offsets, never copies of
the text. A context up to ``EAGER_CHARS`` is split at once, so its chunk count is known from the start;
beyond that the count is known once the walk has reached the end (``ContextChunks.total``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import overload

from igg.observe.tokens import estimate_tokens, token_costs

_MARKER = re.compile(
    r"""^[ \t]*(?:
        (?://+|\#+|--|;+|%+|\*+|/\*+|<!--)[ \t]*[Ff][Ii][Ll][Ee][ \t]*:[ \t]*
        (?P<a>[^\r\n]*?)[ \t]*(?:\*/|-->)?[ \t]*
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
    count: int | None
    """How many chunks the context has (None while a big context has not been split to its end)."""
    label: str | None
    """The file path(s) the chunk holds, when the context has file markers; else None."""
    text: str
    """The chunk's text, verbatim."""


EAGER_CHARS = 4_000_000
"""Contexts up to this many characters are split completely when the run starts (a few hundred ms at most);
bigger ones chunk by chunk as the walk reaches them."""


def split_context(text: str, chunk_tokens: int) -> ContextChunks:
    """The chunks of ``text``, at most ``chunk_tokens`` estimated tokens each (none for empty text), found as
    they are needed."""
    if chunk_tokens < 2:  # one character may cost 2 (an emoji): a smaller budget could not always be met
        raise ValueError(f"chunk_tokens must be at least 2, got {chunk_tokens}")
    return ContextChunks(text, chunk_tokens)


class ContextChunks(Sequence[Chunk]):
    """The chunks of a context as a lazy sequence: ``chunks[i]`` splits the text only as far as chunk ``i``;
    ``len(chunks)`` splits all of it. ``at(cursor)`` is the chunk at a position of the loop's walk, which goes
    round again after the last chunk. Only offsets are kept; a chunk's text is cut when it is asked for."""

    def __init__(self, text: str, chunk_tokens: int) -> None:
        self.text = text
        self.chunk_tokens = chunk_tokens
        self._spans: list[tuple[int, int, str | None]] = []  # (start, end, label) of the chunks found so far
        self._source: Iterator[tuple[int, int, str | None]] | None = (
            _spans(text, chunk_tokens) if text else None
        )
        if len(text) <= EAGER_CHARS:
            self._fill(None)

    @property
    def total(self) -> int | None:
        """How many chunks the context has: known once it has been split to its end (else None)."""
        return len(self._spans) if self._source is None else None

    @property
    def found(self) -> int:
        """Chunks found so far (all of them once ``total`` is known)."""
        return len(self._spans)

    def at(self, cursor: int) -> Chunk | None:
        """The chunk at position ``cursor`` of the walk (after the last chunk it starts over); None for an
        empty context."""
        self._fill(cursor + 1)
        if not self._spans:
            return None
        return self[cursor if cursor < len(self._spans) else cursor % len(self._spans)]

    def bounds(self, index: int) -> tuple[int, int]:
        """Where chunk ``index`` (0-based) lies in the context: ``(start, end)`` character offsets."""
        self._fill(index + 1)
        start, end, _ = self._spans[index]
        return start, end

    def __bool__(self) -> bool:
        return bool(self.text)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ContextChunks | list | tuple):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable (it grows as it is read), like a list

    def __len__(self) -> int:
        self._fill(None)
        return len(self._spans)

    @overload
    def __getitem__(self, index: int) -> Chunk: ...

    @overload
    def __getitem__(self, index: slice) -> list[Chunk]: ...

    def __getitem__(self, index: int | slice) -> Chunk | list[Chunk]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        self._fill(index + 1)
        if not 0 <= index < len(self._spans):
            raise IndexError(f"chunk {index} of {len(self._spans)}")
        start, end, label = self._spans[index]
        return Chunk(index=index, count=self.total, label=label, text=self.text[start:end])

    def __iter__(self) -> Iterator[Chunk]:
        index = 0
        while True:
            self._fill(index + 1)
            if index >= len(self._spans):
                return
            yield self[index]
            index += 1

    def _fill(self, n: int | None) -> None:
        """Split until ``n`` chunks are known (None: to the end)."""
        while self._source is not None and (n is None or len(self._spans) < n):
            span = next(self._source, None)
            if span is None:
                self._source = None
            else:
                self._spans.append(span)


def _spans(text: str, chunk_tokens: int) -> Iterator[tuple[int, int, str | None]]:
    """(start, end, label) of each chunk, in order, reading the sections one at a time."""
    labels: list[str] = []
    start = end = -1  # the pending batch of whole sections: text[start:end]
    cost = 0
    for label, s, e in _sections(text):
        section = text[s:e]
        section_cost = estimate_tokens(section)
        if section_cost > chunk_tokens:
            if start >= 0:
                yield start, end, _label(labels)
                labels, start, cost = [], -1, 0
            at = s
            for part in _split_section(section, chunk_tokens):
                yield at, at + len(part), _label([label] if label else [])
                at += len(part)
            continue
        join = 1 if start >= 0 and text[end - 1] == " " and text[s].isspace() else 0
        if start >= 0 and cost + section_cost + join > chunk_tokens:
            yield start, end, _label(labels)
            labels, start, cost, join = [], -1, 0, 0
        if start < 0:
            start = s
        cost += section_cost + join
        end = e
        if label:
            labels.append(label)
    if start >= 0:
        yield start, end, _label(labels)


def file_sections(text: str) -> Iterator[tuple[str | None, int, int]]:
    """(label, start, end) per file section (from its marker line on); text before the first marker has no
    label."""
    return _sections(text)


def _sections(text: str) -> Iterator[tuple[str | None, int, int]]:
    """(label, start, end) per file section; text before the first marker has no label."""
    start, label = 0, None
    for m in _MARKER.finditer(text):
        path = (m.group("a") or m.group("b") or m.group("c") or "").strip()
        if not path:
            continue
        if m.start() > start:
            yield label, start, m.start()
        start, label = m.start(), path
    if start < len(text):
        yield label, start, len(text)


def _label(labels: list[str]) -> str | None:
    if not labels:
        return None
    labels = [label.replace("\x00", "\ufffd") for label in labels]  # a store keeps labels as text: no NUL
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
        out.append(text[start : m.end()])
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
    """Split a line whose estimate exceeds the budget into pieces within it, preferably after spaces.

    One pass over the line's estimated tokens (``token_costs``): a cut falls where a token starts, so the
    text on each side costs exactly its own tokens, and the work is linear in the line (the cut was once
    searched by estimating the whole rest of the line again for every piece: a 2 MB minified line cost a
    minute)."""
    pieces: list[str] = []
    start = cost = 0
    after_space = -1  # the last token start that follows a lone space
    for at, token_cost in token_costs(line):
        if cost + token_cost > budget and at > start:
            cut = after_space if after_space - start >= (at - start) // 2 else at
            pieces.append(line[start:cut])
            start, cost = cut, estimate_tokens(line[cut:at])
            if cost + token_cost > budget:  # what followed the space and this token do not fit together
                pieces.append(line[start:at])
                start, cost = at, 0
        cost += token_cost
        if at > start and line[at - 1] == " ":
            after_space = at
    if start < len(line):
        pieces.append(line[start:])
    return pieces
