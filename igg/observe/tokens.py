"""A character-based token estimate that errs high, so a budget in estimated tokens holds for real ones.

No tokenizer files can be downloaded here, so IGG counts tokens with a rule instead of a vocabulary. The rule
follows how byte-pair tokenizers such as tiktoken's ``o200k_base`` cut code and markdown, rounding every
case up:

- a run of ASCII letters and digits costs one token per started group of 4 characters
  (``AuthService`` = 3, real ~2; ``the`` = 1)
- every other ASCII character that is not whitespace costs 1 (``{``, ``"``, ``->`` = 2)
- a single space costs 0 (tokenizers glue it to the next word); a tab, a newline, or any run of two
  or more whitespace characters costs 1
- every non-ASCII character costs 1, and 2 outside the Basic Multilingual Plane (emoji)

On English prose this gives ~1.3x the real count, on code and IGG's observations ~1.5x, so text
estimated within a budget is within it for the model too. The estimate is subadditive over lines: the
estimate of lines joined with newlines never exceeds the sum of the lines' estimates plus one per newline,
which lets the observation be budgeted line by line.

``estimate_lines(lines)`` is ``estimate_tokens("\\n".join(lines))`` without reading the whole text again: a
newline between a line that ends and a line that starts with a visible character costs exactly 1 and
joins no pieces, so the text's estimate is the lines' estimates plus one per such newline; lines met
before (an observation shows mostly the same lines every iteration) are looked up, not counted again.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_PIECE = re.compile(r"[A-Za-z0-9]{1,4}|\s\s+|[^\S ]|[^\sA-Za-z0-9]")
"""One match per estimated token; a lone space matches nothing."""
_ASTRAL = re.compile(r"[\U00010000-\U0010ffff]")


def estimate_tokens(text: str) -> int:
    """Estimated tokens of ``text`` (the rule is in this module's docstring; it errs high)."""
    if not text:
        return 0
    count = _PIECE.subn("", text)[1]  # counts the matches without a list of them (about 20% faster)
    if not text.isascii():
        count += len(_ASTRAL.findall(text))
    return count


def token_costs(text: str) -> Iterator[tuple[int, int]]:
    """(offset, cost) of each estimated token of ``text``, in order: the text between two offsets costs
    exactly the sum of its tokens' costs (a cut where a token starts splits nothing), so a long text can be
    cut within a budget in one pass."""
    for m in _PIECE.finditer(text):
        piece = m.group()
        yield m.start(), 1 if piece.isascii() else 1 + len(_ASTRAL.findall(piece))


def line_cost(line: str) -> int:
    """Estimated tokens one line adds to a text joined with newlines (the line plus its newline)."""
    return estimate_tokens(line) + 1


_KNOWN: dict[str, int] = {}
"""Estimates of lines seen recently (``estimate_lines``); emptied when it holds ``_KNOWN_MAX`` of them."""
_KNOWN_MAX = 20_000


def estimate_lines(lines: list[str]) -> int:
    """``estimate_tokens("\\n".join(lines))``, exactly, from the lines' own (remembered) estimates.

    Lines joined by a newline between a visible last character and a visible first character are counted
    apart (plus 1 for that newline); where a line is empty or starts or ends with whitespace, the lines
    around that newline are counted joined, as whitespace runs across it count as one piece.
    """
    known = _KNOWN
    if len(known) > _KNOWN_MAX:
        known.clear()
    total = 0
    group: list[str] = []
    for line in lines:
        if group and (not line or line[0].isspace() or not group[-1] or group[-1][-1].isspace()):
            group.append(line)  # whitespace meets across this newline: counted with the previous lines
            continue
        if group:
            total += _known(known, group) + 1  # the newline before ``line``
        group = [line]
    if group:
        total += _known(known, group)
    return total


def _known(known: dict[str, int], group: list[str]) -> int:
    text = group[0] if len(group) == 1 else "\n".join(group)
    cost = known.get(text)
    if cost is None:
        cost = known[text] = estimate_tokens(text)
    return cost
