"""``TreeIndexes.holding`` (the files whose elements hold one of some nodes: those an update must link before
it removes the nodes) reads only the rows whose JSON names one of them: pinned to the plain definition, every
file's row read and searched, on ids that are prefixes of one another, quoted or not ASCII."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from igg.codemap.treeindex import TreeIndex, TreeIndexes

IDS = ["n1", "n12", "n123", "e1", 'q"1', "ü2", "a,b", "n1\\", "[x]"]


def index_with(elements: dict[str, list[str]]) -> TreeIndex:
    return TreeIndex(
        session_id="s",
        last_step=1,
        read=0,
        dirs={},
        paths=[],
        sizes=[],
        mtimes=[],
        shas=[],
        elements=elements,
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    elements=st.dictionaries(
        st.sampled_from([f"src/f{n}.ts" for n in range(12)]), st.lists(st.sampled_from(IDS), max_size=5)
    ),
    sought=st.sets(st.sampled_from(IDS), max_size=4),
)
def test_holding_is_the_files_whose_elements_hold_a_node(
    tmp_path_factory: pytest.TempPathFactory, elements: dict[str, list[str]], sought: set[str]
) -> None:
    indexes = TreeIndexes(tmp_path_factory.mktemp("holding") / "s.codeindex")
    try:
        indexes.put("k", index_with(elements))
        indexes.put_elements("k", {"src/later.ts": ["n12", "ü2"]})  # a file added by an update
        everything = {**elements, "src/later.ts": ["n12", "ü2"]}
        assert indexes.holding("k", sought) == {p for p, ids in everything.items() if sought & set(ids)}
        assert indexes.holding("other", sought) == set()
    finally:
        indexes.close()
