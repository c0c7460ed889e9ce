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

It is an index, not a scan: adding a node costs a few dictionary inserts, and a probe a few look-ups,
whatever the graph size. Rule 4 finds its candidates through a one-deletion neighbourhood (the SymSpell
idea): each folded form of 4 to 40 characters is filed under itself and under every string made by deleting
one of its characters, and a probe looks up the same set, so two strings one edit apart always meet (two
edits apart, often). Folded forms outside 4-40 characters only meet by rules 1-3. Rule 3 files a
multi-word name under (initials, word) for each of its words. A probe verifies at most ``MAX_CHECKS``
candidates.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from rapidfuzz.distance import Levenshtein

from igg.graph.identity import fold, tokens
from igg.models.schema import CompiledSchema

Reason = Literal["folded", "alias", "abbreviation", "similar"]

MIN_NEIGHBOURHOOD = 4
MAX_NEIGHBOURHOOD = 40
"""Folded forms of this many characters get the one-deletion neighbourhood (rule 4's candidates)."""
MAX_CHECKS = 256
"""Most candidates verified per probe (bounds a probe's cost when a bucket is huge)."""
MIN_PREFIX = 3
"""Shortest word that counts as an abbreviation of a longer one (rule 3)."""

_Bucket = str | list[str]


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


class NearDuplicateIndex:
    """Folded identity forms of every node, for finding possible duplicates in O(1) per probe."""

    def __init__(self, schema: CompiledSchema, *, threshold: float = 0.9,
                 aliases: Iterable[Iterable[str]] = ()) -> None:
        self.schema = schema
        self.threshold = threshold
        self.aliases = [list(g) for g in aliases]
        self._alias: dict[str, str] = {}
        for group in self.aliases:
            names = [fold(n) for n in group]
            names = [n for n in names if n]
            for name in names:
                self._alias.setdefault(name, names[0])
        self._near: dict[tuple[Any, str], _Bucket] = {}
        self._words: dict[tuple[Any, str, str], _Bucket] = {}
        self._info: dict[str, tuple[Any, str, str]] = {}
        """node id -> (scope, folded key, primary value)"""

    # ---- keys ------------------------------------------------------------------------------------------
    def _scope(self, node_type: str, props: dict[str, Any]) -> tuple[tuple[Any, ...], str] | None:
        keys = self.schema.identity_keys.get(node_type)
        if not keys:
            return None
        value = props.get(keys[0])
        if value.__class__ is not str:
            return None
        if len(keys) == 1:
            return (node_type,), value
        rest = tuple(_freeze(props.get(k)) for k in keys[1:])
        return (node_type, *rest), value

    def _key(self, value: str) -> tuple[str, list[str]]:
        words = tokens(value)
        folded = "".join(words)
        return self._alias.get(folded, folded), words

    @staticmethod
    def _variants(key: str) -> Iterator[str]:
        yield key
        if MIN_NEIGHBOURHOOD <= len(key) <= MAX_NEIGHBOURHOOD:
            seen = key
            for i in range(len(key)):
                v = key[:i] + key[i + 1:]
                if v != seen:  # runs of one letter give the same deletion
                    seen = v
                    yield v

    # ---- maintenance -----------------------------------------------------------------------------------
    def add(self, node_id: str, node_type: str, props: dict[str, Any]) -> None:
        """File a node (called by ``GraphState`` on every node added or re-identified)."""
        scoped = self._scope(node_type, props)
        if scoped is None:
            return
        scope, value = scoped
        key, words = self._key(value)
        if not key:
            return
        self._info[node_id] = (scope, key, value)
        near = self._near
        for v in self._variants(key):
            _put(near, (scope, v), node_id)
        if len(words) > 1:
            initials = "".join(w[0] for w in words)
            for w in dict.fromkeys(words):
                _put(self._words, (scope, initials, w), node_id)

    def remove(self, node_id: str) -> None:
        """Forget a node (deleted or re-identified)."""
        info = self._info.pop(node_id, None)
        if info is None:
            return
        scope, key, value = info
        for v in self._variants(key):
            _drop(self._near, (scope, v), node_id)
        words = tokens(value)
        if len(words) > 1:
            initials = "".join(w[0] for w in words)
            for w in dict.fromkeys(words):
                _drop(self._words, (scope, initials, w), node_id)

    def __len__(self) -> int:
        return len(self._info)

    # ---- probing ---------------------------------------------------------------------------------------
    def candidates(self, node_type: str, props: dict[str, Any], *, exclude: str | None = None,
                   limit: int = 3) -> list[Candidate]:
        """Existing nodes the identity in ``props`` probably duplicates, best first (at most ``limit``)."""
        scoped = self._scope(node_type, props)
        if scoped is None:
            return []
        scope, value = scoped
        key, words = self._key(value)
        if not key:
            return []
        found: dict[str, Candidate] = {}
        checks = 0
        raw_key = "".join(words)
        for v in self._variants(key):
            for n in _ids(self._near.get((scope, v))):
                if n in found or n == exclude:
                    continue
                checks += 1
                if checks > MAX_CHECKS:
                    break
                _, other_key, other_value = self._info[n]
                if other_key == key:
                    reason: Reason = "folded" if raw_key == key and fold(other_value) == key else "alias"
                    if other_value == value:
                        continue  # the very same identity: DUPLICATE_NODE's business, not ours
                    found[n] = Candidate(n, other_value, reason, 1.0)
                else:
                    score = Levenshtein.normalized_similarity(key, other_key)
                    if score >= self.threshold and _digits(key) == _digits(other_key):
                        found[n] = Candidate(n, other_value, "similar", round(score, 3))
        if len(words) > 1:
            initials = "".join(w[0] for w in words)
            for w in dict.fromkeys(words):
                for n in _ids(self._words.get((scope, initials, w))):
                    if n in found or n == exclude:
                        continue
                    checks += 1
                    if checks > MAX_CHECKS:
                        break
                    other_value = self._info[n][2]
                    if _abbreviates(words, tokens(other_value)) and _digits(key) == _digits(self._info[n][1]):
                        found[n] = Candidate(n, other_value, "abbreviation", 1.0)
        order = {"folded": 0, "alias": 1, "abbreviation": 2, "similar": 3}
        return sorted(found.values(), key=lambda c: (order[c.reason], -c.score, c.value))[:limit]


def _abbreviates(a: list[str], b: list[str]) -> bool:
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


def _digits(text: str) -> str:
    return "".join(ch for ch in text if ch.isdigit()) if not text.isalpha() else ""


def _freeze(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def _put(index: dict[Any, _Bucket], key: Any, node_id: str) -> None:
    bucket = index.get(key)
    if bucket is None:
        index[key] = node_id
    elif isinstance(bucket, str):
        index[key] = [bucket, node_id]
    else:
        bucket.append(node_id)


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


def _ids(bucket: _Bucket | None) -> tuple[str, ...] | list[str]:
    if bucket is None:
        return ()
    if isinstance(bucket, str):
        return (bucket,)
    return bucket
