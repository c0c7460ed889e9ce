"""A link of some files alone (``link(only=...)``, what ``igg map-code --update`` runs when no declaration
changed) gives every symbol a full link gives, in the same order and with the same properties, and the same
relations of the files it links: the other files are read for their symbols alone (their imports for the
outside packages they name, a relative TypeScript import not resolved at all), which must not change what the
update plans. Judged on every code fixture (real projects among them: ky and superstruct in TypeScript, chi
and uuid in Go) and a tree of all of them."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest

from igg.codemap.link import link
from igg.codemap.model import CodeModel
from igg.codemap.sources import analyze
from igg.codemap.walk import walk
from tests.codegraph import CODE_FIXTURES

TREES = ["go/chi", "go/uuid", "http", "java", "polyglot", "python", "typescript/ky", "typescript/superstruct"]


def _facts(root: Path) -> list:
    return [analyze(f) for f in walk([root]).files]


def _plans(model: CodeModel) -> dict[str, tuple[list, dict, set]]:
    return {p.path: (p.relations, p.sites, p.type_only) for p in model.files}


def _same_but_for_the_rest(facts: list, picked: list[str]) -> None:
    full = link(facts)
    part = link(facts, only=set(picked))
    assert list(part.symbols) == list(full.symbols)
    assert [(s.label, s.properties) for s in part.symbols.values()] == [
        (s.label, s.properties) for s in full.symbols.values()
    ]
    whole, mine = _plans(full), _plans(part)
    for path in picked:
        assert mine[path] == whole[path], path
    for path, (relations, _, _) in mine.items():  # the others' (a package's CONTAINS) are a full link's
        assert set(relations) <= set(whole[path][0]), path


@pytest.mark.parametrize("tree", TREES)
def test_a_link_of_some_files_gives_every_symbol_and_their_relations_as_a_full_link(tree: str) -> None:
    facts = _facts(CODE_FIXTURES / tree)
    paths = [f.path for f in facts if f.config is None]
    rng = random.Random(tree)
    for picked in ([p] for p in rng.sample(paths, min(6, len(paths)))):
        _same_but_for_the_rest(facts, picked)
    _same_but_for_the_rest(facts, rng.sample(paths, min(len(paths), 5)))


def test_a_link_of_some_files_of_a_tree_of_every_fixture_is_a_full_links(tmp_path: Path) -> None:
    """Files of four languages in one tree, linked a few at a time."""
    for tree in TREES:
        shutil.copytree(CODE_FIXTURES / tree, tmp_path / tree)
    facts = _facts(tmp_path)
    paths = [f.path for f in facts if f.config is None]
    rng = random.Random(5)
    for _ in range(4):
        _same_but_for_the_rest(facts, rng.sample(paths, 3))
