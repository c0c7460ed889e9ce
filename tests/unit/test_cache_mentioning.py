"""``FactsCache.mentioning`` reads only the facts that hold one of some words (a check splicing a file added
or removed reads the facts of the files whose imports may name it, not those of every file of its
language): pinned to the plain definition, every row read and its facts searched for the words."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from igg.codemap.cache import FactsCache
from igg.codemap.facts import FileFacts, ImportRef

WORDS = ["m4", "m40", "added1_m4", "lib", "Lib", "ünï", "index", "p0"]


def facts(n: int, targets: list[str]) -> FileFacts:
    imports = [ImportRef(target=t) for t in targets]
    return FileFacts(
        path=f"src/f{n}.ts", language="typescript", module=f"src/f{n}", package="src", imports=imports
    )


def named(f: FileFacts, words: set[str]) -> bool:
    """Whether ``f`` holds one of ``words`` in any string (its path, module, package, import targets)."""
    strings = [f.path, f.module, f.package, *(i.target for i in f.imports)]
    return any(w in s for w in words for s in strings)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    files=st.lists(
        st.lists(
            st.builds(
                lambda a, b, c: f"{a}/{b}/{c}",
                st.sampled_from([".", "..", "@app"]),
                *[st.sampled_from(WORDS)] * 2,
            ),
            max_size=4,
        ),
        min_size=1,
        max_size=12,
    ),
    words=st.sets(st.sampled_from(WORDS), max_size=3),
    bodies=st.booleans(),
)
def test_mentioning_is_the_facts_that_hold_a_word(
    tmp_path_factory: pytest.TempPathFactory, files: list[list[str]], words: set[str], bodies: bool
) -> None:
    cache = FactsCache(tmp_path_factory.mktemp("mentioning") / "c.codefacts")
    try:
        made = [facts(n, targets) for n, targets in enumerate(files)]
        keys = [f"k{n}" for n in range(len(made))]
        cache.put_many(zip(keys, made, strict=True))
        found = cache.mentioning(keys, words, bodies=bodies)
        assert found is not None
        whole = dict(zip(keys, cache.get_many(keys, bodies=bodies), strict=True))
        assert found.keys() == {k for k, f in whole.items() if f is not None and named(f, words)}
        assert all(found[k] == whole[k] for k in found)
    finally:
        cache.close()


def test_a_key_without_a_row_answers_none(tmp_path: Path) -> None:
    """A file whose facts are gone from the cache is not taken for one that names no word."""
    cache = FactsCache(tmp_path / "c.codefacts")
    try:
        cache.put_many([("k0", facts(0, ["./lib"]))])
        assert cache.mentioning(["k0"], {"lib"}) == {"k0": facts(0, ["./lib"])}
        assert cache.mentioning(["k0"], {"other"}) == {}
        assert cache.mentioning(["k0", "gone"], {"lib"}) is None
        assert cache.mentioning(["k0", "gone"], set()) is None
    finally:
        cache.close()
