"""The near-duplicate index: which existing nodes an identity probably names already.

Two nodes of the **same type** are *possible duplicates* when their primary identity values (the first
identity key; for composite identities the other identity values must be equal) match by one of these
rules, tried in this order:

1. ``folded``: equal after folding (``igg.graph.identity.fold``: case, separators, camelCase/snake_case):
   ``AuthService`` ~ ``auth_service`` ~ ``authservice`` ~ ``AUTH-SERVICE``.
2. ``alias``: both names are in one group of the user's alias list (``constraints.duplicates.aliases``),
   compared folded: ``[["AuthService", "AuthenticationService", "AuthSvc"]]``.
3. ``abbreviation``: the same number (2+) of words, each pair equal or one a prefix (3+ letters) of the
   other, at least one pair equal: ``AuthService`` ~ ``AuthenticationService``, ``UserRepo`` ~
   ``UserRepository``.
4. ``similar``: Levenshtein similarity of the folded forms, ``1 - distance / longer length``, at least
   ``threshold`` (default 0.9: one edit per ten characters): ``AuthServce`` ~ ``AuthService`` (0.91).

Rules 3 and 4 never pair names whose digits differ (``Handler1``/``Handler2``, ``Table1``/``Table10``,
``OAuth2Client``/``OAuthClient``): numbered things are usually different things.

It is an index, not a scan: adding a node costs four dictionary inserts, and a probe ten look-ups, whatever
the graph size. Every key lives in one table per node type (and other identity values) and digits of the name.
Rule 4 finds its candidates by pigeonhole: the letters of a name (``m`` of them, ``a = m // 3``) are cut into
thirds and filed under each pair of thirds: the first ``m - a`` letters, the first and last ``a``, the last
``m - a``. A probe of ``n`` letters looks under the pairs a name of ``n - 1``, ``n`` or ``n + 1`` letters
would have, aligning the first third from the start and the last from the end: one edit changes at most one
third, so names one edit apart always meet (two edits apart, often). Rule 3 files a name of 2+ words under the
first three letters of each of its words (shorter words whole): two names where each word equals the other's
or is a 3+ letter prefix of it share that key, so every abbreviation is found, and names that merely share a
common word (``...Service``) rarely meet. A probe verifies at most ``MAX_CHECKS`` candidates.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from rapidfuzz.distance import Levenshtein

from igg.graph.identity import ASCII_WORDS, tokens
from igg.models.schema import CompiledSchema

Reason = Literal["folded", "alias", "abbreviation", "similar"]

MAX_CHECKS = 64
"""Most candidates verified per probe (bounds a probe's cost when a bucket is huge)."""
MIN_PREFIX = 3
"""Shortest word that counts as an abbreviation of a longer one (rule 3)."""

_Bucket = str | list[str]
_DIGITS = re.compile(r"\d+")
_NON_DIGITS = re.compile(r"\D+")
_SHAPES: list[tuple[str, str, str, int]] = []
"""Per letter count ``m``: the prefixes of the three rule-4 keys (kind and length) and ``a = m // 3``."""


def _shape(m: int) -> tuple[str, str, str, int]:
    """The key prefixes of a name of ``m`` letters: which piece (first two thirds, outer thirds, last two
    thirds) and the letter count, and the length of a third. Letters never include control characters, so
    keys of different kinds or lengths never collide (and a collision would only cost a verification)."""
    while len(_SHAPES) <= m:
        k = len(_SHAPES)
        n = chr(k % 0x110000)
        _SHAPES.append(("\x01" + n, "\x02" + n, "\x03" + n, k // 3))
    return _SHAPES[m]


_shape(64)


class _Keys(NamedTuple):
    """What the index files one identity under (kept per node, so removal recomputes nothing)."""

    scope: Any
    """The node type, or (type, other identity values) for composite identities."""
    value: str
    key: str
    """The folded form, or its alias group's."""
    folded: str
    words: tuple[str, ...]
    """The words without the numbers, case-folded."""
    group: Any
    """The scope and the name's digits: every key lives in this group's table."""
    letters: str
    near: tuple[str, ...]
    """Rule 4's keys (and rule 1's: equal folded forms share them), then rule 3's if the name has 2+ words."""


@dataclass(frozen=True, slots=True)
class Candidate:
    """An existing node the probed identity probably names."""

    node: str
    """The existing node's id."""
    value: str
    """Its primary identity value."""
    reason: Reason
    score: float
    """1.0 for rules 1-3; the similarity for rule 4."""


_ORDER = {"folded": 0, "alias": 1, "abbreviation": 2, "similar": 3}


class NearDuplicateIndex:
    """Folded identity forms of every node, for finding possible duplicates in O(1) per probe."""

    def __init__(
        self, schema: CompiledSchema, *, threshold: float = 0.9, aliases: Iterable[Iterable[str]] = ()
    ) -> None:
        self.schema = schema
        self.threshold = threshold
        self.aliases = [list(g) for g in aliases]
        self._alias: dict[str, str] = {}
        for group in self.aliases:
            names = ["".join(tokens(n)) for n in group]
            names = [n for n in names if n]
            for name in names:
                self._alias.setdefault(name, names[0])
        self._groups: dict[Any, dict[str, _Bucket]] = {}
        self._info: dict[str, _Keys] = {}
        self._memo: _Keys | None = None

    # ---- keys ------------------------------------------------------------------------------------------
    def _scope(self, node_type: str, props: dict[str, Any]) -> tuple[Any, str] | None:
        keys = self.schema.identity_keys.get(node_type)
        if not keys:
            return None
        value = props.get(keys[0])
        if value.__class__ is not str:
            return None
        if len(keys) == 1:
            return node_type, value
        rest = tuple(_freeze(props.get(k)) for k in keys[1:])
        return (node_type, *rest), value

    def _keys(self, scope: Any, value: str) -> _Keys | None:
        memo = self._memo
        if memo is not None and memo.value == value and memo.scope == scope:
            return memo  # the probe of an ADD_NODE, then its add: computed once
        if value.isascii():  # the fast path of tokens()/fold(): C calls only
            found = ASCII_WORDS.findall(value)
            folded = "".join(found).lower()
            words = tuple(map(str.lower, found)) if len(found) > 1 else ()
        else:
            words = tuple(tokens(value))
            folded = "".join(words)
        key = self._alias.get(folded, folded)
        if not key:
            return None
        if key.isalpha():
            digits, letters = "", key
        else:
            digits, letters = _NON_DIGITS.sub("", key), _DIGITS.sub("", key)
            words = tuple([w for w in words if not w.isdigit()])
        m = len(letters)
        first, outer, last, a = _SHAPES[m] if m < len(_SHAPES) else _shape(m)
        if len(words) > 1:
            # equal words, and a word and its 3+ letter prefix, agree on their first three letters
            near: tuple[str, ...] = (
                first + letters[: m - a],
                outer + letters[:a] + "|" + letters[m - a :],
                last + letters[a:],
                "\x04" + "|".join([w[:MIN_PREFIX] for w in words]),
            )
        else:
            near = (
                first + letters[: m - a],
                outer + letters[:a] + "|" + letters[m - a :],
                last + letters[a:],
            )
        group = scope if not digits else (scope, digits)
        self._memo = memo = _Keys(scope, value, key, folded, words, group, letters, near)
        return memo

    @staticmethod
    def _probes(keys: _Keys) -> tuple[str, ...]:
        """Rule 4's keys a name one edit away would be filed under, for each length it may have."""
        letters = keys.letters
        n = len(letters)
        near = keys.near
        if n == 0:  # a name of digits only (no letters) is one edit from a one-letter name
            f, o, t, a = _shape(1)
            return (
                near[0],
                near[1],
                near[2],
                f + letters[: 1 - a],
                o + letters[:a] + "|" + letters[n - a :],
                t + letters[max(0, n - (1 - a)) :],
            )
        f1, o1, t1, a1 = _SHAPES[n - 1] if n <= len(_SHAPES) else _shape(n - 1)
        f2, o2, t2, a2 = _SHAPES[n + 1] if n + 1 < len(_SHAPES) else _shape(n + 1)
        pre1 = letters[:a1]
        return (
            near[0],
            near[1],
            near[2],
            f1 + letters[: n - 1 - a1],
            o1 + pre1 + "|" + letters[n - a1 :],
            t1 + letters[a1 + 1 :],
            f2 + letters[: n + 1 - a2],
            o2 + letters[:a2] + "|" + letters[n - a2 :],
            t2 + (letters[a2 - 1 :] if a2 else letters),
        )

    # ---- maintenance -----------------------------------------------------------------------------------
    def add(self, node_id: str, node_type: str, props: dict[str, Any]) -> None:
        """File a node (called by ``GraphState`` on every node added or re-identified)."""
        scoped = self._scope(node_type, props)
        if scoped is None:
            return
        keys = self._keys(*scoped)
        if keys is None:
            return
        self._info[node_id] = keys
        table = self._groups.get(keys.group)
        if table is None:
            table = self._groups[keys.group] = {}
        get = table.get
        for k in keys.near:
            bucket = get(k)
            if bucket is None:
                table[k] = node_id
            elif bucket.__class__ is str:
                table[k] = [bucket, node_id]
            else:
                bucket.append(node_id)  # type: ignore[union-attr]

    def remove(self, node_id: str) -> None:
        """Forget a node (deleted or re-identified)."""
        keys = self._info.pop(node_id, None)
        if keys is None:
            return
        table = self._groups[keys.group]
        for k in keys.near:
            _drop(table, k, node_id)
        if not table:
            del self._groups[keys.group]

    def __len__(self) -> int:
        return len(self._info)

    # ---- probing ---------------------------------------------------------------------------------------
    def candidates(
        self, node_type: str, props: dict[str, Any], *, exclude: str | None = None, limit: int = 3
    ) -> list[Candidate]:
        """Existing nodes the identity in ``props`` probably duplicates, best first (at most ``limit``)."""
        scoped = self._scope(node_type, props)
        if scoped is None:
            return []
        keys = self._keys(*scoped)
        if keys is None:
            return []
        table = self._groups.get(keys.group)
        if table is None:
            return []
        key, value, threshold = keys.key, keys.value, self.threshold
        found: dict[str, Candidate] = {}
        info = self._info
        get = table.get
        # rule 1 needs the own-length pieces only; rule 4 looks one letter shorter and longer too, unless one
        # edit could not reach the threshold at this length
        pool = _pool(map(get, self._probes(keys) if 1 - 1 / (len(key) + 1) >= threshold else keys.near[:3]))
        similarity = Levenshtein.normalized_similarity
        for n in pool:
            other = info[n]
            if n == exclude or other.value == value:
                continue  # the very same identity: DUPLICATE_NODE's business, not ours
            if other.key == key:
                reason: Reason = "folded" if keys.folded == key and other.folded == key else "alias"
                found[n] = Candidate(n, other.value, reason, 1.0)
            else:
                score = similarity(key, other.key, score_cutoff=threshold)
                if score >= threshold:
                    found[n] = Candidate(n, other.value, "similar", round(score, 3))
        if len(keys.near) > 3:
            bucket = get(keys.near[3])
            if bucket is not None:
                self._abbreviations(keys.words, bucket, found, exclude)
        if len(found) > 1:
            return sorted(found.values(), key=lambda c: (_ORDER[c.reason], -c.score, c.value))[:limit]
        return list(found.values())[:limit]

    def _abbreviations(
        self, words: tuple[str, ...], bucket: _Bucket, found: dict[str, Candidate], exclude: str | None
    ) -> None:
        """Add to ``found`` the nodes of ``bucket`` (rule 4's) whose identity's words ``words`` abbreviate or
        spell out, checking at most ``MAX_CHECKS`` of them."""
        info = self._info
        checks = 0
        for n in (bucket,) if bucket.__class__ is str else bucket:
            if n in found or n == exclude:
                continue
            checks += 1
            if checks > MAX_CHECKS:
                break
            other = info[n]
            if _abbreviates(words, other.words):
                found[n] = Candidate(n, other.value, "abbreviation", 1.0)


def _pool(buckets: Iterable[_Bucket | None]) -> list[str]:
    """The nodes of the buckets found (a bucket of one node is its id), each once, at most ``MAX_CHECKS`` when
    there are several."""
    pool: list[str] = []
    for bucket in buckets:
        if bucket is not None:
            if bucket.__class__ is str:
                pool.append(bucket)
            else:
                pool += bucket
    if len(pool) > 1:
        pool = list(dict.fromkeys(pool))[:MAX_CHECKS]
    return pool


def _abbreviates(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    if len(a) != len(b) or a == b:
        return False
    same = False
    for x, y in zip(a, b, strict=True):
        if x == y:
            same = True
            continue
        short, long_ = (x, y) if len(x) < len(y) else (y, x)
        if len(short) < MIN_PREFIX or not long_.startswith(short):
            return False
    return same


def _freeze(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def _drop(index: dict[Any, _Bucket], key: Any, node_id: str) -> None:
    bucket = index.get(key)
    if bucket is None:
        return
    if isinstance(bucket, str):
        if bucket == node_id:
            del index[key]
        return
    if node_id in bucket:
        bucket.remove(node_id)
        if len(bucket) == 1:
            index[key] = bucket[0]
