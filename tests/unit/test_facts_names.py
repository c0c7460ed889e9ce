"""``mentioned_names`` (the names a file's facts mention, which ``--update`` reads to tell which files a
changed declaration concerns) walks the facts a level at a time; it is pinned here to the plain walk it
replaced, on the facts of every fixture tree (real projects' files among them) and on facts holding any JSON
a configuration file may say. A name it missed would leave a file that mentions a changed declaration
unlinked, and an update unlike a fresh map."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from igg.codemap.facts import _NOT_NAMES, FileFacts, ImportRef, mentioned_names
from igg.codemap.sources import analyze, with_modules
from igg.codemap.walk import walk

CODE = Path(__file__).resolve().parents[2] / "fixtures" / "code"
TREES = sorted(p.name for p in CODE.iterdir() if p.is_dir())


def plain_walk(f: FileFacts) -> str:
    """What ``mentioned_names`` was: one object at a time off a stack."""
    found: set[str] = set()
    stack: list[Any] = [f]
    while stack:
        x = stack.pop()
        cls = x.__class__
        if cls is str:
            found.update(x.split("."))
        elif cls is list or cls is tuple:
            stack.extend(x)
        elif cls is dict:
            stack.extend(x)
            stack.extend(x.values())
        elif hasattr(cls, "__slots__"):
            stack.extend(getattr(x, slot) for slot in cls.__slots__ if slot not in _NOT_NAMES)
    found.discard("")
    return "\n" + "\n".join(sorted(found)) + "\n"


@pytest.mark.parametrize("tree", TREES)
def test_the_names_of_every_fixture_file_are_those_the_plain_walk_finds(tree: str) -> None:
    facts = [analyze(s) for s in with_modules(walk([CODE / tree]).files)]
    assert facts
    for f in facts:
        assert mentioned_names(f) == plain_walk(f), f.path
    assert any(len(mentioned_names(f)) > 40 for f in facts)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(config=st.dictionaries(st.text(max_size=8), _JSON, max_size=5), targets=st.lists(st.text(max_size=15)))
def test_names_in_any_configuration_and_import_are_those_the_plain_walk_finds(
    config: dict[str, Any], targets: list[str]
) -> None:
    f = FileFacts(path="a/b.ts", language="typescript", module="a.b", package="a", config=config)
    f.imports = [ImportRef(target=t, alias=t.rpartition(".")[2]) for t in targets]
    assert mentioned_names(f) == plain_walk(f)
