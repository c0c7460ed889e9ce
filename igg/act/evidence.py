"""Evidence: where in the context an action's claim is stated, checked under the request's grounding policy.

An ``ADD_NODE``, ``ADD_EDGE``, ``UPDATE_NODE`` or ``UPDATE_EDGE`` may carry ``evidence``: quotes (short
verbatim passages of ``context_data``) or explicit spans (``{"chunk", "start", "end"}``, 1-based chunk,
character offsets in that chunk's text). ``Grounder.ground`` locates each one and returns the resolved items
the act step stores in the element's provenance (``provenance["evidence"]``).

**How a quote is found**, in this order, the first hit winning:

1. *exact*: the quote as given, character for character;
2. *normalized*: both sides in Unicode NFC with every run of whitespace (spaces, tabs, line breaks) collapsed
   to one space, leading and trailing whitespace dropped; case-sensitive;
3. *fuzzy* (the current chunk only, quotes of ``FUZZY_MIN_CHARS`` or more): the best-aligned passage of the
   normalized chunk at least ``FUZZY_MIN_SCORE``% similar (rapidfuzz's ``partial_ratio``), reported as
   ``"match": "fuzzy"`` with its ``score``.

Chunks are searched with the current one first (the one the observation showed), then the others in order, at
most ``SEARCH_MAX_CHARS`` characters of context in all. Each chunk's normalized text is built once and kept
(the index), and runs ``MAX_QUOTE_CHARS`` characters into the next chunk, so a quote that spans a chunk
boundary is found in the chunk where it starts. Beyond the current chunk, a word index (each normalized word
-> the chunks holding it, built when first needed) narrows the search to the chunks holding the quote's
longest inner word (one not at either end, which a quote may cut).

A resolved item: ``{"quote", "chunk", "start", "end", "line", "column", "match"}`` plus ``"file"`` when the
chunk's text comes from a file section (a ``// File: path`` marker; ``line``/``column`` then count in that
file, from the line after the marker) and ``"score"`` for a fuzzy match. ``start``/``end`` are offsets in the
chunk's text (``end`` may run past the chunk when the quote spans a boundary); ``line``/``column`` are
1-based. A quote that is not found is kept as ``{"quote", "match": "none"}``; under ``values`` one the value
rule finds is ``{"quote", "match": "name", "rule"}`` (``rule``: how ``igg.act.values`` found it).

**The policy** (``config.grounding``):

==================  =================================================================================
``off`` (default)   evidence given is located and stored; nothing is rejected or warned about
``warn``            a quote not found: the action is applied, its verdict warns ``UNGROUNDED_EVIDENCE``
``required_edges``  ``ADD_EDGE`` (and ``UPDATE_EDGE`` setting properties) without evidence:
                    ``MISSING_EVIDENCE``; any quote not found: ``UNGROUNDED_EVIDENCE`` (rejected)
``required``        the same for ``ADD_NODE``, ``ADD_EDGE`` and updates setting properties
``values``          every value an ``ADD_NODE``, ``ADD_EDGE`` or update writes (node identities, literal
                    property values) must be stated in the context, read as knowledge graphs write names
                    (``igg.act.values``: exact, normalized, without a disambiguator, bounded fuzzy; the
                    schema's own terms count as stated): else ``UNGROUNDED_VALUE``, naming the value and the
                    closest passage. Evidence is not demanded; a quote given is located as above, then by the
                    same value rule (``"match": "name"``), and refused when not found
==================  =================================================================================
"""

from __future__ import annotations

import bisect
import dataclasses
import re
import unicodedata
from array import array
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from rapidfuzz import fuzz
from rapidfuzz.distance import ScoreAlignment

from igg.act.context import Rejection
from igg.act.values import ValueFinder
from igg.graph.grounding import grounding_of
from igg.models.actions import MAX_QUOTE_CHARS, AddEdge, AddNode, EvidenceSpan, UpdateEdge, UpdateNode
from igg.models.request import Request
from igg.models.verdicts import ErrorCode as C
from igg.models.verdicts import Verdict
from igg.observe.chunks import ContextChunks, file_sections, split_context

GroundingPolicy: TypeAlias = Literal["off", "warn", "required_edges", "required", "values"]

GroundedAction: TypeAlias = AddNode | AddEdge | UpdateNode | UpdateEdge
GROUNDED_ACTIONS = (AddNode, AddEdge, UpdateNode, UpdateEdge)
"""The action classes that may carry evidence."""

FUZZY_MIN_SCORE = 90.0
"""The least similarity (percent) of a fuzzy match."""
FUZZY_MIN_CHARS = 16
"""Shorter quotes are matched exactly or normalized only (a few characters match too much by chance)."""
FUZZY_MAX_CHARS = 200_000
"""Characters of one chunk the fuzzy fallback and the closest-passage search read, at most."""
FUZZY_RESPONSE_WORK = 20_000_000
"""The fuzzy matcher's work all the evidence of one response may cost together (``Grounder.begin_response``),
counted as the characters of chunk text it reads times the quote's length (its cost grows with both: about
7 ns per unit for a 500-character quote against repetitive text, the worst seen): at most ~0.15 s of CPU per
response, however many near-miss quotes it sends. Beyond it a quote is matched exactly or normalized only,
and its miss says so. A 100-character quote against a chunk of the default size costs ~1.2 million."""
SEARCH_RESPONSE_CHARS = 200_000_000
"""Characters of context the exact and normalized searches beyond the chunk on show read for all the evidence
of one response together (``Grounder.begin_response``; ~0.1 s of CPU): past it a quote is looked for in the
chunk on show only, and its miss says so. A few dozen quotes from elsewhere in an 8 MB context fit; 2,000
short quotes that are nowhere once cost 13 s."""
SEARCH_MAX_CHARS = 50_000_000
"""Characters of context one quote is searched in, at most (a bigger context: the chunks nearest first)."""

_WS = re.compile(r"\s+")
_NEWLINE = re.compile("\n")


def normalize(text: str) -> str:
    """A quote as matching compares it: NFC, whitespace runs collapsed to one space, stripped."""
    return _WS.sub(" ", unicodedata.normalize("NFC", text)).strip()


INFINITE = float("inf")
"""Above every context offset: ``(offset, INFINITE)`` sorts after each section starting at ``offset``."""


class _Index:
    """One chunk's text (plus ``MAX_QUOTE_CHARS`` of the next), and its normalized form with the map back to
    the original, built on first need (an exact quote never needs it)."""

    __slots__ = ("base", "own", "raw", "_norm", "_n", "_o", "_e")

    def __init__(self, raw: str, base: int, own: int) -> None:
        self.raw, self.base, self.own = raw, base, own
        self._norm: str | None = None
        self._n, self._o, self._e = (
            array("q"),
            array("q"),
            array("q"),
        )  # segment: normalized start -> original

    @property
    def norm(self) -> str:
        """The text normalized (NFC, whitespace runs as one space)."""
        if self._norm is None:
            self._norm = self._normalize()
        return self._norm

    def _normalize(self) -> str:
        raw = self.raw
        pieces: list[str] = []
        n = 0
        if unicodedata.is_normalized("NFC", raw):
            pos = 0
            for m in _WS.finditer(raw):
                if m.start() > pos:
                    self._segment(n, pos, -1)
                    pieces.append(raw[pos : m.start()])
                    n += m.start() - pos
                self._segment(n, m.start(), m.end())
                pieces.append(" ")
                n += 1
                pos = m.end()
            if pos < len(raw):
                self._segment(n, pos, -1)
                pieces.append(raw[pos:])
        else:
            # rare: each starter with its combining marks composed, each output character mapped to the group
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
        return "".join(pieces)

    def _segment(self, n: int, o: int, end: int) -> None:
        self._n.append(n)
        self._o.append(o)
        self._e.append(end)

    def original(self, n: int) -> tuple[int, int]:
        """The original (start, end) of normalized character ``n`` (after ``norm`` was read)."""
        k = bisect.bisect_right(self._n, n) - 1
        o, e = self._o[k], self._e[k]
        if e < 0:  # copied one to one
            at = o + (n - self._n[k])
            return at, at + 1
        return o, e


@dataclass(frozen=True, slots=True)
class Grounded:
    """An action's evidence, located: the items to store (None: it gave none) and a warning to add
    (``warn``)."""

    items: list[dict[str, Any]] | None
    warning: str | None = None


NOT_GIVEN = Grounded(None)


class Grounder:
    """Locates evidence in one request's context and applies its grounding policy (see the module doc)."""

    def __init__(
        self,
        context: str,
        chunk_tokens: int,
        policy: GroundingPolicy = "off",
        terms: tuple[str, ...] = (),
        kinds: tuple[str, ...] = (),
    ) -> None:
        """``terms``: the schema's node types and their labels, which the ``values`` policy counts as stated;
        ``kinds``: its relations' names and labels, which may follow a stated name (``igg.act.values``)."""
        self.context, self.chunk_tokens = context, chunk_tokens
        self.policy: GroundingPolicy = policy
        self.terms, self.kinds = terms, kinds
        self._finder: ValueFinder | None = None
        self._chunks: ContextChunks | None = None
        self._indexes: dict[int, _Index] = {}
        self._sections: list[tuple[int, int, str]] | None = None  # (start, body start, path) per file section
        self._newlines = array("q")  # offsets of the context's line breaks (with the sections, on first need)
        self._words: dict[str, list[int]] | None = None  # word -> chunks whose normalized text holds it
        self.fuzzy_left = FUZZY_RESPONSE_WORK
        """The fuzzy work the response being applied may still cost (``FUZZY_RESPONSE_WORK``)."""
        self._near: dict[tuple[str, int], ScoreAlignment | None] = {}  # (quote, chunk) -> the best alignment
        self.search_left = SEARCH_RESPONSE_CHARS
        """Characters the searches beyond the chunk on show may still read for the response being applied."""
        self._cut: set[str] = set()  # quotes of this response whose search the budget cut short

    def begin_response(self) -> None:
        """A new response's evidence is about to be located: its fuzzy budget starts whole."""
        self.fuzzy_left = FUZZY_RESPONSE_WORK
        self._near.clear()
        self.search_left = SEARCH_RESPONSE_CHARS
        self._cut.clear()

    def _nearest(self, wanted: str, i: int) -> ScoreAlignment | None | bool:
        """The best-aligned passage of chunk ``i``'s normalized text for the normalized quote ``wanted``
        (found once per response, for the match and for a miss's closest passage); False when the response's
        fuzzy budget cannot pay for it."""
        key = (wanted, i)
        if key in self._near:
            return self._near[key]
        text = self._index(i).norm[:FUZZY_MAX_CHARS]
        work = len(text) * max(len(wanted), FUZZY_MIN_CHARS)
        if work > self.fuzzy_left:
            return False
        self.fuzzy_left -= work
        near = self._near[key] = fuzz.partial_ratio_alignment(wanted, text)
        return near

    @classmethod
    def for_request(cls, request: Request) -> Grounder:
        """The grounder of a request: its context, chunked as the loop walks it, and its policy."""
        config = request.config
        schema = config.schema_
        labels = {name: term.label for name, term in schema.terms.items()}
        terms = (*schema.node_types, *(labels[t] for t in schema.node_types if t in labels))
        kinds = (
            *schema.edge_types,
            *(label for name, label in labels.items() if name not in schema.node_types),
        )
        return cls(request.context_data, config.context.chunk_tokens, config.grounding, terms, kinds)

    @property
    def finder(self) -> ValueFinder:
        """The value rule over the whole context (built on first use)."""
        if self._finder is None:
            self._finder = ValueFinder(self.context, self.terms, self.kinds)
        return self._finder

    @property
    def chunks(self) -> ContextChunks | None:
        """The context's chunks (split on first use, shared with the loop's walk); None for no context."""
        chunks = self._chunks
        if chunks is None and self.context:
            chunks = self._chunks = split_context(self.context, self.chunk_tokens)
        return chunks

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
        """Whether ``ground`` has anything to do for this action (evidence given, or the policy demands
        it)."""
        return isinstance(action, GROUNDED_ACTIONS) and (
            bool(action.evidence)
            or self.demands(action)
            or (self.policy == "values" and bool(action.properties))
        )

    def ground(self, action: Any, cursor: int | None = None) -> Grounded | Rejection:
        """Locate the action's evidence (``cursor``: the loop's position in the context walk, whose chunk is
        searched first) and apply the policy: the located items, or a rejection."""
        if self.policy == "values" and action.properties:
            unstated = self.unstated(action.properties, action.label if action.type == "ADD_NODE" else None)
            if unstated is not None:
                return C.UNGROUNDED_VALUE, unstated
        if not action.evidence:
            if self.demands(action):
                what = (
                    "every ADD_EDGE and UPDATE_EDGE"
                    if self.policy == "required_edges"
                    else "every ADD_NODE, ADD_EDGE and update"
                )
                return (
                    C.MISSING_EVIDENCE,
                    (
                        f'config.grounding is "{self.policy}": {what} needs "evidence", a verbatim quote of'
                        f" the context that states it (at most {MAX_QUOTE_CHARS} characters), e.g."
                        ' "evidence": ["..."], or a span {"chunk": N, "start": S, "end": E}.'
                    ),
                )
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
            if found is None and self.policy == "values" and (how := self.finder.find(given)) is not None:
                found = {"quote": given, "match": "name", "rule": how}
            if found is None:
                missed.append(self._miss(given, current))
                found = {"quote": given, "match": "none"}
            items.append(found)
        if not missed:
            return Grounded(items)
        message = "; ".join(missed)
        if self.policy in ("required", "required_edges", "values"):
            return (
                C.UNGROUNDED_EVIDENCE,
                message + " Quote the context verbatim (a few words that state it) or "
                'give a span {"chunk", "start", "end"}.',
            )
        return Grounded(items, message if self.policy == "warn" else None)

    def unstated(self, properties: dict[str, Any], kind: str | None = None) -> str | None:
        """Under ``values``: why the first property value the context does not state is refused, or None
        (``kind``: a new node's type, for the referent rule of ``igg.act.values``)."""
        finder = self.finder
        for key, value in properties.items():
            for item in value if isinstance(value, list) else (value,):
                if (
                    isinstance(item, bool)
                    or not isinstance(item, str | int | float)
                    or finder.find(item, kind)
                ):
                    continue
                passage = finder.closest(item)
                near = f"; the closest passage is {passage!r}" if passage else ""
                return (
                    f"{key} {item!r} is not stated in the context (looked for it exactly; folded: case,"
                    " accents, '_', punctuation, dates, numbers, units; without a parenthesised qualifier;"
                    f" and with initials, a leading 'The' or a short ending left out){near}. Write only"
                    " values the context states, as it states them, or the ontology's own terms."
                )
        return None

    # ---- locating ------------------------------------------------------------------------------------------
    def _current(self, cursor: int | None) -> int | None:
        """The chunk (0-based) at the loop's ``cursor`` (the walk starts over after the last chunk)."""
        chunks = self.chunks
        if chunks is None or cursor is None:
            return None
        if cursor < chunks.found:
            return cursor
        total = len(chunks)
        return cursor % total if total else None

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

    def _in_chunk(self, quote: str, wanted: str, i: int) -> dict[str, Any] | None:
        """The quote in chunk ``i``: exact, else normalized (starting in the chunk itself, not its
        overlap)."""
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
        return None

    def _candidates(self, wanted: str, order: list[int], current: int | None) -> list[int]:
        """The chunks that can hold a normalized quote, in search order: the current one, then those whose
        text has the quote's longest inner word (the word index, built on first need), or all of ``order`` for
        a quote of fewer than three words (whose inner words may be cut)."""
        words = wanted.split(" ")
        if len(words) < 3 or len(order) <= 2:
            return order
        if self._words is None:
            self._words = {}
            for i in order:
                for word in set(self._index(i).norm.split(" ")):
                    self._words.setdefault(word, []).append(i)
        holding = set(self._words.get(max(words[1:-1], key=len), ()))
        return [i for i in order if i == current or i in holding]

    def _index(self, i: int) -> _Index:
        index = self._indexes.get(i)
        if index is None:
            assert self.chunks is not None
            start, end = self.chunks.bounds(i)
            index = self._indexes[i] = _Index(
                self.chunks.text[start : end + MAX_QUOTE_CHARS], start, end - start
            )
        return index

    def _locate(self, quote: str, current: int | None) -> dict[str, Any] | None:
        if self.chunks is None:
            return None
        if current is not None:  # the common case first: the quote as it stands in the chunk on show
            index = self._index(current)
            at = index.raw.find(quote)
            if 0 <= at < index.own:
                return self._item(quote, current, at, at + len(quote), "exact")
        wanted = normalize(quote)
        if not wanted:
            return None
        if current is not None:  # most quotes come from the chunk on show: no search order, no word index
            hit = self._in_chunk(quote, wanted, current)
            if hit is not None:
                return hit
        order = self._order(current)
        chunks = self.chunks
        for i in self._candidates(wanted, order, current):
            if i != current:
                start, end = chunks.bounds(i)
                cost = 2 * (end - start + MAX_QUOTE_CHARS)  # the text as given, then normalized
                if cost > self.search_left:
                    self._cut.add(quote)
                    break
                self.search_left -= cost
                hit = self._in_chunk(quote, wanted, i)
                if hit is not None:
                    return hit
        fuzzy_in = order[0] if order else None
        if fuzzy_in is not None and len(wanted) >= FUZZY_MIN_CHARS:
            index = self._index(fuzzy_in)
            near = self._nearest(wanted, fuzzy_in)
            if (
                isinstance(near, ScoreAlignment)
                and near.score >= FUZZY_MIN_SCORE
                and near.dest_end > near.dest_start
            ):
                start, _ = index.original(near.dest_start)
                _, end = index.original(near.dest_end - 1)
                if start < index.own:
                    item = self._item(quote, fuzzy_in, start, end, "fuzzy")
                    item["score"] = round(near.score, 1)
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
            return (
                {},
                f"evidence span: chunk {span.chunk} has {end - start} characters; end {span.end} is past it.",
            )
        text = self.chunks.text[start + span.start : start + span.end]
        return self._item(text, span.chunk - 1, span.start, span.end, "span"), None

    def _item(self, quote: str, chunk: int, start: int, end: int, match: str) -> dict[str, Any]:
        path, line, column = self._where(self._index(chunk).base + start)
        item: dict[str, Any] = {"quote": quote, "chunk": chunk + 1, "start": start, "end": end}
        if path is not None:
            item["file"] = path
        item["line"], item["column"], item["match"] = line, column, match
        return item

    def _where(self, offset: int) -> tuple[str | None, int, int]:
        """The file section (None: none), line and column (1-based) of a context offset: the line counted in
        its file section when it has one."""
        if self._sections is None:
            assert self.chunks is not None
            text = self.chunks.text
            self._sections = []
            for label, s, _ in file_sections(text):
                if label:
                    newline = text.find("\n", s)
                    self._sections.append((s, len(text) if newline < 0 else newline + 1, label))
            self._newlines = array("q", (m.start() for m in _NEWLINE.finditer(text)))
        newlines = self._newlines
        k = bisect.bisect_left(newlines, offset)  # newlines before the offset
        column = offset - (newlines[k - 1] + 1 if k else 0) + 1
        sections = self._sections
        if sections:
            at = bisect.bisect_right(sections, (offset, INFINITE)) - 1
            if at >= 0 and offset >= sections[at][1]:
                _, body, path = sections[at]
                return path, k - bisect.bisect_left(newlines, body) + 1, column
        return None, k + 1, column

    def _miss(self, quote: str, current: int | None) -> str:
        """Why a quote was not found: where IGG looked and the closest passage."""
        short = quote if len(quote) <= 80 else quote[:77] + "..."
        if self.chunks is None:
            return f"evidence {short!r} is not in the context: the request has no context_data"
        order = self._order(current)
        total = len(self.chunks)
        where = (
            f"chunk {current + 1} (the current one) and the other {len(order) - 1}"
            if current is not None
            else f"all {len(order)} chunk(s)"
        )
        if len(order) < total:
            where += f" (of {total}: the search stops after {SEARCH_MAX_CHARS:,} characters)"
        message = (
            f"evidence {short!r} is not in the context: looked in {where}, exactly, with whitespace and line "
            f"breaks collapsed, and approximately (at least {FUZZY_MIN_SCORE:.0f}% similar)"
        )
        if quote in self._cut:
            message += (
                f" (not in every chunk: this response's search budget of {SEARCH_RESPONSE_CHARS:,} "
                "characters was spent; quote the chunk on show, or send fewer quotes from elsewhere per "
                "response)"
            )
        wanted = normalize(quote)
        hit = self._nearest(wanted, order[0]) if order and wanted else None
        if hit is False:
            message += (
                " (not approximately: this response's budget for approximate matching is spent; quote the "
                "context verbatim)"
            )
        if isinstance(hit, ScoreAlignment):
            index = self._index(order[0])
            if hit.score > 0:
                passage = index.norm[hit.dest_start : hit.dest_end]
                passage = passage if len(passage) <= 120 else passage[:117] + "..."
                message += (
                    f"; the closest passage, in chunk {order[0] + 1}, is {passage!r} ({hit.score:.0f}%"
                    " similar)"
                )
        return message + "."


def warned(verdict: Verdict, grounded: Grounded) -> Verdict:
    """An accepted verdict with the ``warn`` policy's warning, when the evidence had one."""
    if grounded.warning is None or not verdict.accepted:
        return verdict
    return dataclasses.replace(
        verdict, warning=C.UNGROUNDED_EVIDENCE, message=f"{verdict.message}; warning: {grounded.warning}"
    )


__all__ = [
    "FUZZY_MIN_CHARS",
    "FUZZY_RESPONSE_WORK",
    "SEARCH_RESPONSE_CHARS",
    "FUZZY_MIN_SCORE",
    "GROUNDED_ACTIONS",
    "NOT_GIVEN",
    "SEARCH_MAX_CHARS",
    "Grounded",
    "GroundedAction",
    "Grounder",
    "GroundingPolicy",
    "grounding_of",
    "normalize",
    "warned",
]
