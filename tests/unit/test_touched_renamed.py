"""``igg.mapping.touched.renamed``: a removed file is renamed to the first added file with its content, found
by its hash in one look-up (a scan of the added files per removed file took 88 s when a whole tree of 50,000
files was mapped from another root); pinned to the plain definition on random hashes."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from igg.mapping.touched import renamed

HASHES = st.sampled_from(["", "a1", "b2", "c3", "d4"])


def plainly(
    before: dict[str, Any], now: dict[str, str], added: list[str], removed: list[str]
) -> list[dict[str, str]]:
    found = []
    for old in removed:
        twin = next((p for p in added if now[p] == before[old] and before[old]), None)
        if twin is not None:
            found.append({"from": old, "to": twin})
    return found


@given(st.lists(HASHES, max_size=8), st.lists(HASHES, max_size=8))
def test_each_removed_file_pairs_with_the_first_added_file_of_its_content(
    added_hashes: list[str], removed_hashes: list[str]
) -> None:
    now = {f"new/{i}.py": h for i, h in enumerate(added_hashes)}
    before = {f"old/{i}.py": h for i, h in enumerate(removed_hashes)}
    added, removed = list(now), list(before)
    assert renamed(before, now, added, removed) == plainly(before, now, added, removed)


def test_a_whole_tree_moved_pairs_every_file() -> None:
    before = {f"old/m{i}.py": f"sha{i}" for i in range(20_000)}
    now = {f"new/m{i}.py": f"sha{i}" for i in range(20_000)}
    found = renamed(before, now, sorted(now), sorted(before))
    assert len(found) == 20_000
    assert found[0] == {"from": "old/m0.py", "to": "new/m0.py"}
