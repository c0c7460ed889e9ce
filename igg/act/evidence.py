"""Evidence: where in the context an action's claim is stated, checked under the request's grounding policy.

An ``ADD_NODE``, ``ADD_EDGE``, ``UPDATE_NODE`` or ``UPDATE_EDGE`` may carry ``evidence``: quotes (short verbatim
passages of ``context_data``) or explicit spans (``{"chunk", "start", "end"}``, 1-based chunk, character
offsets in that chunk's text). ``Grounder.ground`` locates each one and returns the resolved items the act
step stores in the element's provenance (``provenance["evidence"]``).

**How a quote is found**, in this order, the first hit winning:

1. *exact*: the quote as given, character for character;
2. *normalized*: both sides in Unicode NFC with every run of whitespace (spaces, tabs, line breaks) collapsed
   to one space, leading and trailing whitespace dropped; case-sensitive;
3. *fuzzy* (the current chunk only, quotes of ``FUZZY_MIN_CHARS`` or more): the best-aligned passage of the
   normalized chunk at least ``FUZZY_MIN_SCORE``% similar (rapidfuzz's ``partial_ratio``), reported as
   ``"match": "fuzzy"`` with its ``score``.

Chunks are searched with the current one first (the one the observation showed), then the others in order,
at most ``SEARCH_MAX_CHARS`` characters of context in all. Each chunk's normalized text is built once and
kept (the index), and runs ``MAX_QUOTE_CHARS`` characters into the next chunk, so a quote that spans a chunk
boundary is found in the chunk where it starts.

A resolved item: ``{"quote", "chunk", "start", "end", "line", "column", "match"}`` plus ``"file"`` when the
chunk's text comes from a file section (a ``// File: path`` marker; ``line``/``column`` then count in that
file, from the line after the marker) and ``"score"`` for a fuzzy match. ``start``/``end`` are offsets in the
chunk's text (``end`` may run past the chunk when the quote spans a boundary); ``line``/``column`` are 1-based.
A quote that is not found is kept as ``{"quote", "match": "none"}``.

**The policy** (``config.grounding``):

==================  =================================================================================
``off`` (default)   evidence given is located and stored; nothing is rejected or warned about
``warn``            a quote not found: the action is applied, its verdict warns ``UNGROUNDED_EVIDENCE``
``required_edges``  ``ADD_EDGE`` (and ``UPDATE_EDGE`` setting properties) without evidence:
                    ``MISSING_EVIDENCE``; any quote not found: ``UNGROUNDED_EVIDENCE`` (rejected)
``required``        the same for ``ADD_NODE``, ``ADD_EDGE`` and updates setting properties
==================  =================================================================================
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from array import array
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from rapidfuzz import fuzz

from igg.act.context import Rejection
from igg.graph.grounding import grounding_of
from igg.graph.state import EVIDENCE_KEPT
from igg.models.actions import MAX_QUOTE_CHARS, AddEdge, AddNode, EvidenceSpan, UpdateEdge, UpdateNode
from igg.models.request import Request
from igg.models.verdicts import ErrorCode as C
from igg.observe.chunks import ContextChunks, file_sections, split_context

GroundingPolicy: TypeAlias = Literal["off", "warn", "required_edges", "required"]

GroundedAction: TypeAlias = AddNode | AddEdge | UpdateNode | UpdateEdge
GROUNDED_ACTIONS = (AddNode, AddEdge, UpdateNode, UpdateEdge)
"""The action classes that may carry evidence."""

FUZZY_MIN_SCORE = 90.0
"""The least similarity (percent) of a fuzzy match."""
FUZZY_MIN_CHARS = 16
"""Shorter quotes are matched exactly or normalized only (a few characters match too much by chance)."""
FUZZY_MAX_CHARS = 200_000
"""Characters of one chunk the fuzzy fallback and the closest-passage search read, at most."""
SEARCH_MAX_CHARS = 50_000_000
"""Characters of context one quote is searched in, at most (a bigger context: the chunks nearest first)."""
MAX_KEPT = EVIDENCE_KEPT
"""Evidence items an element keeps: updates add theirs, the oldest go beyond this."""

_WS = re.compile(r"\s+")


def normalize(text: str) -> str:
    """A quote as matching compares it: NFC, whitespace runs collapsed to one space, stripped."""
    return _WS.sub(" ", unicodedata.normalize("NFC", text)).strip()


class _Index:
    """One chunk's text (plus ``MAX_QUOTE_CHARS`` of the next) normalized, and the map back to the original."""

    __slots__ = ("base", "norm", "own", "raw", "_n", "_o", "_e")

    def __init__(self, raw: str, base: int, own: int) -> None:
        self.raw, self.base, self.own = raw, base, own
        self._n, self._o, self._e = array("q"), array("q"), array("q")  # segment: normalized start -> original
        pieces: list[str] = []
        n = 0
        if unicodedata.is_normalized("NFC", raw):
            pos = 0
            for m in _WS.finditer(raw):
                if m.start() > pos:
                    self._segment(n, pos, -1)
                    pieces.append(raw[pos:m.start()])
                    n += m.start() - pos
                self._segment(n, m.start(), m.end())
                pieces.append(" ")
                n += 1
                pos = m.end()
            if pos < len(raw):
                self._segment(n, pos, -1)
                pieces.append(raw[pos:])
        else:  # rare: each starter with its combining marks composed, each output character mapped to the group
            i = 0
            while i < len(raw):
                j = i + 1
                while j < len(raw) and unicodedata.combining(raw[j]):
                    j += 1
                group = raw[i:j]
                out = " " if group.isspace() else unicodedata.normalize("NFC", group)
                if out == " " and pieces and pieces[-1] == " ":
                    self._e[-1] = j
                else:
                    self._segment(n, i, j)
                    pieces.append(out)
                    n += len(out)
                i = j
        self.norm = "".join(pieces)

    def _segment(self, n: int, o: int, end: int) -> None:
        self._n.append(n)
        self._o.append(o)
        self._e.append(end)

    def original(self, n: int) -> tuple[int, int]:
        """The original (start, end) of normalized character ``n``."""
        k = bisect.bisect_right(self._n, n) - 1
        o, e = self._o[k], self._e[k]
        if e < 0:  # copied one to one
            at = o + (n - self._n[k])
            return at, at + 1
        return o, e


@dataclass(frozen=True, slots=True)
class Grounded:
    """An action's evidence, located: the items to store (None: it gave none) and a warning to add (``warn``)."""

    items: list[dict[str, Any]] | None
    warning: str | None = None


NOT_GIVEN = Grounded(None)


class Grounder:
    """Locates evidence in one request's context and applies its grounding policy (see the module doc)."""

    def __init__(self, context: str, chunk_tokens: int, policy: GroundingPolicy = "off") -> None:
        self.context, self.chunk_tokens = context, chunk_tokens
        self.policy: GroundingPolicy = policy
        self._chunks: ContextChunks | None = None
        self._indexes: dict[int, _Index] = {}
        self._sections: list[tuple[int, int, str]] | None = None  # (start, body start, path) per file section
        self._line_base: dict[int, int] = {}

    @classmethod
    def for_request(cls, request: Request) -> Grounder:
        """The grounder of a request: its context, chunked as the loop walks it, and its policy."""
        config = request.config
        return cls(request.context_data, config.context.chunk_tokens, config.grounding)

    @property
    def chunks(self) -> ContextChunks | None:
        """The context's chunks (split on first use, shared with the loop's walk); None for no context."""
        if self._chunks is None and self.context:
            self._chunks = split_context(self.context, self.chunk_tokens)
        return self._chunks

    def demands(self, action: GroundedAction) -> bool:
        """Whether the policy requires evidence on this action."""
        if self.policy not in ("required", "required_edges"):
            return False
        if isinstance(action, AddEdge):
            return True
        if isinstance(action, UpdateEdge):
            return bool(action.properties)
        if self.policy == "required_edges":
            return False
        return isinstance(action, AddNode) or bool(action.properties)

    def active(self, action: object) -> bool:
        """Whether ``ground`` has anything to do for this action (evidence given, or the policy demands it)."""
        return isinstance(action, GROUNDED_ACTIONS) and (bool(action.evidence) or self.demands(action))

    def ground(self, action: Any, cursor: int | None = None) -> Grounded | Rejection:
        """Locate the action's evidence (``cursor``: the loop's position in the context walk, whose chunk is
        searched first) and apply the policy: the located items, or a rejection."""
        if not action.evidence:
            if self.demands(action):
                what = "every ADD_EDGE and UPDATE_EDGE" if self.policy == "required_edges" else \
                    "every ADD_NODE, ADD_EDGE and update"
                return C.MISSING_EVIDENCE, (
                    f'config.grounding is "{self.policy}": {what} needs "evidence", a verbatim quote of the context '
                    f'that states it (at most {MAX_QUOTE_CHARS} characters), e.g. "evidence": ["..."], or a span '
                    '{"chunk": N, "start": S, "end": E}.')
            return NOT_GIVEN
        current = self._current(cursor)
        items: list[dict[str, Any]] = []
        missed: list[str] = []
        for given in action.evidence:
            if isinstance(given, EvidenceSpan):
                spanned, problem = self._span(given)
                if problem is not None:
                    return C.UNGROUNDED_EVIDENCE, problem
                items.append(spanned)
                continue
            found = self._locate(given, current)
            if found is None:
                missed.append(self._miss(given, current))
                found = {"quote": given, "match": "none"}
            items.append(found)
        if not missed:
            return Grounded(items)
        message = "; ".join(missed)
        if self.policy in ("required", "required_edges"):
            return C.UNGROUNDED_EVIDENCE, message + (" Quote the context verbatim (a few words that state it) or "
                                                     "give a span {\"chunk\", \"start\", \"end\"}.")
        return Grounded(items, message if self.policy == "warn" else None)

    # ---- locating ------------------------------------------------------------------------------------------
    def _current(self, cursor: int | None) -> int | None:
        if self.chunks is None or cursor is None:
            return None
        chunk = self.chunks.at(cursor)
        return chunk.index if chunk is not None else None

    def _order(self, current: int | None) -> list[int]:
        """Chunk indexes to search: the current one, then the others in order, within ``SEARCH_MAX_CHARS``."""
        assert self.chunks is not None
        total = len(self.chunks)
        order = ([current] if current is not None else []) + [i for i in range(total) if i != current]
        if len(self.chunks.text) <= SEARCH_MAX_CHARS:
            return order
        if current is not None:  # nearest first
            order = sorted(order, key=lambda i: abs(i - current))
        kept: list[int] = []
        size = 0
        for i in order:
            start, end = self.chunks.bounds(i)
            size += end - start
            if size > SEARCH_MAX_CHARS and kept:
                break
            kept.append(i)
        return kept

    def _index(self, i: int) -> _Index:
        index = self._indexes.get(i)
        if index is None:
            assert self.chunks is not None
            start, end = self.chunks.bounds(i)
            index = self._indexes[i] = _Index(self.chunks.text[start:end + MAX_QUOTE_CHARS], start, end - start)
        return index

    def _locate(self, quote: str, current: int | None) -> dict[str, Any] | None:
        if self.chunks is None:
            return None
        wanted = normalize(quote)
        if not wanted:
            return None
        order = self._order(current)
        for i in order:  # exact, then normalized, chunk by chunk
            index = self._index(i)
            at = index.raw.find(quote)
            if 0 <= at < index.own:
                return self._item(quote, i, at, at + len(quote), "exact")
            n = index.norm.find(wanted)
            if n >= 0:
                start, _ = index.original(n)
                if start < index.own:
                    _, end = index.original(n + len(wanted) - 1)
                    return self._item(quote, i, start, end, "normalized")
        fuzzy_in = order[0] if order else None
        if fuzzy_in is not None and len(wanted) >= FUZZY_MIN_CHARS:
            index = self._index(fuzzy_in)
            hit = fuzz.partial_ratio_alignment(wanted, index.norm[:FUZZY_MAX_CHARS], score_cutoff=FUZZY_MIN_SCORE)
            if hit is not None and hit.dest_end > hit.dest_start:
                start, _ = index.original(hit.dest_start)
                _, end = index.original(hit.dest_end - 1)
                if start < index.own:
                    item = self._item(quote, fuzzy_in, start, end, "fuzzy")
                    item["score"] = round(hit.score, 1)
                    return item
        return None

    def _span(self, span: EvidenceSpan) -> tuple[dict[str, Any], str | None]:
        if self.chunks is None:
            return {}, "evidence span: the request has no context_data to point into."
        total = len(self.chunks)
        if span.chunk > total:
            return {}, f"evidence span: chunk {span.chunk} does not exist; the context has {total} chunk(s)."
        start, end = self.chunks.bounds(span.chunk - 1)
        if span.end > end - start:
            return {}, (f"evidence span: chunk {span.chunk} has {end - start} characters; end {span.end} is past it.")
        text = self.chunks.text[start + span.start:start + span.end]
        return self._item(text, span.chunk - 1, span.start, span.end, "span"), None

    def _item(self, quote: str, chunk: int, start: int, end: int, match: str) -> dict[str, Any]:
        assert self.chunks is not None
        base = self.chunks.bounds(chunk)[0]
        item: dict[str, Any] = {"quote": quote, "chunk": chunk + 1, "start": start, "end": end}
        item.update(self._where(chunk, base + start))
        item["match"] = match
        return item

    def _where(self, chunk: int, offset: int) -> dict[str, Any]:
        """Line and column (1-based) of a context offset: in its file section when it has one."""
        assert self.chunks is not None
        text = self.chunks.text
        if self._sections is None:
            self._sections = []
            for label, s, _ in file_sections(text):
                if label:
                    newline = text.find("\n", s)
                    self._sections.append((s, len(text) if newline < 0 else newline + 1, label))
        k = bisect.bisect_right(self._sections, (offset, len(text) + 1)) - 1
        line_start = text.rfind("\n", 0, offset) + 1
        column = offset - line_start + 1
        if k >= 0 and offset >= self._sections[k][1]:
            _, body, path = self._sections[k]
            return {"file": path, "line": text.count("\n", body, offset) + 1, "column": column}
        base = self._line_base.get(chunk)
        chunk_start = self.chunks.bounds(chunk)[0]
        if base is None:
            base = self._line_base[chunk] = text.count("\n", 0, chunk_start)
        return {"line": base + text.count("\n", chunk_start, offset) + 1, "column": column}

    def _miss(self, quote: str, current: int | None) -> str:
        """Why a quote was not found: where IGG looked and the closest passage."""
        short = quote if len(quote) <= 80 else quote[:77] + "..."
        if self.chunks is None:
            return f"evidence {short!r} is not in the context: the request has no context_data"
        order = self._order(current)
        total = len(self.chunks)
        where = (f"chunk {current + 1} (the current one) and the other {len(order) - 1}" if current is not None
                 else f"all {len(order)} chunk(s)")
        if len(order) < total:
            where += f" (of {total}: the search stops after {SEARCH_MAX_CHARS:,} characters)"
        message = (f"evidence {short!r} is not in the context: looked in {where}, exactly, with whitespace and line "
                   f"breaks collapsed, and approximately (at least {FUZZY_MIN_SCORE:.0f}% similar)")
        if order:
            index = self._index(order[0])
            hit = fuzz.partial_ratio_alignment(normalize(quote), index.norm[:FUZZY_MAX_CHARS])
            if hit is not None and hit.score > 0:
                passage = index.norm[hit.dest_start:hit.dest_end]
                passage = passage if len(passage) <= 120 else passage[:117] + "..."
                message += f"; the closest passage, in chunk {order[0] + 1}, is {passage!r} ({hit.score:.0f}% similar)"
        return message + "."


def kept_evidence(before: list[dict[str, Any]] | None, added: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """An element's evidence after an update adds ``added``: the newest ``MAX_KEPT`` items."""
    return ([*before, *added] if before else list(added))[-MAX_KEPT:]


__all__ = ["FUZZY_MIN_CHARS", "FUZZY_MIN_SCORE", "GROUNDED_ACTIONS", "MAX_KEPT", "NOT_GIVEN", "SEARCH_MAX_CHARS",
           "Grounded", "GroundedAction", "Grounder", "GroundingPolicy", "grounding_of", "kept_evidence", "normalize"]
