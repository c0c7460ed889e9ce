"""``--update`` takes a Python file's calls from those kept at the last map when the change leaves every value
flow as it was (``KeptCalls``): the program is not solved again, the calls' sites move with the code, and the
graph is still the one a fresh map builds. Kept calls that cannot be trusted (damaged, of another step, of
other bytes) are never read: the program is solved, as before."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

import igg.codemap.python.calls as calls_module
import igg.mapping.samefacts as samefacts_module
from igg.codemap.treeindex import INDEX_SUFFIX
from igg.mapping.update import update_map
from igg.service import map_code
from igg.store.location import sidecar_path
from tests.codegraph import CODE_FIXTURES, map_into_store
from tests.unit.test_code_update import graph_of

SERVICE = "py/shop/service.py"


@pytest.fixture(scope="module")
def mapped(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A map-code session of the Python fixture, in a store with its facts cache and tree index."""
    base = tmp_path_factory.mktemp("mapped")
    shutil.copytree(CODE_FIXTURES / "python", base / "tree" / "py")
    map_into_store(base / "tree", base / "s.db")
    return base


@pytest.fixture
def solves(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """How many times the Python program is solved (``CallGraph.solve``)."""
    count: list[int] = []
    solve = calls_module.CallGraph.solve

    def counted(self: calls_module.CallGraph) -> calls_module.CallGraph:
        count.append(1)
        return solve(self)

    monkeypatch.setattr(calls_module.CallGraph, "solve", counted)
    yield count


@pytest.fixture
def general(monkeypatch: pytest.MonkeyPatch) -> None:
    """Updates take the general path (``igg.mapping.remap``), which links the changed files, even when only
    their lines moved (``igg.mapping.samefacts`` updates those without a link)."""
    monkeypatch.setattr(samefacts_module, "update_same_facts", lambda *a, **k: None)


def _shift(tree: Path, before: str, lines: int) -> None:
    """Move every call below ``before`` in the service module down by ``lines`` blank lines."""
    path = tree / SERVICE
    text = path.read_text()
    assert before in text
    path.write_text(text.replace(before, "\n" * lines + before, 1))


def _fresh(tree: Path, at: Path) -> object:
    map_code([tree], agent="code", jobs=1, store=at, session_id="f")
    return graph_of(at, "f")


@pytest.mark.usefixtures("general")
def test_updates_that_move_calls_take_the_kept_calls_and_equal_a_fresh_map(
    mapped: Path, tmp_path: Path, solves: list[int]
) -> None:
    shutil.copytree(mapped, tmp_path / "m")
    tree, store = tmp_path / "m" / "tree", tmp_path / "m" / "s.db"
    shifts = [("    def checkout(", 2), ("class AuditTrail", 3), ("def helper", 1)]
    for n, (before, lines) in enumerate(shifts):
        _shift(tree, before, lines)
        result = update_map([tree], store, session_id="m", jobs=1)
        assert (result.files["changed"], result.files["relinked"]) == ([SERVICE], 1)
        assert result.graph["edges_changed"] > 0  # the calls' sites moved
        assert solves == []  # each update took the calls the last one kept
        assert graph_of(store, "m") == _fresh(tree, tmp_path / f"fresh{n}.db")
        solves.clear()  # the fresh map solved its program


@pytest.mark.usefixtures("general")
def test_a_flow_changed_solves_the_program_and_keeps_its_calls_for_the_next_update(
    mapped: Path, tmp_path: Path, solves: list[int]
) -> None:
    shutil.copytree(mapped, tmp_path / "m")
    tree, store = tmp_path / "m" / "tree", tmp_path / "m" / "s.db"
    service = tree / SERVICE
    service.write_text(service.read_text().replace("        order.pay()\n", "", 1))  # a call removed
    assert update_map([tree], store, session_id="m", jobs=1).files["relinked"] > 1
    assert solves == [1]
    _shift(tree, "class AuditTrail", 2)
    assert update_map([tree], store, session_id="m", jobs=1).files["relinked"] == 1
    assert solves == [1]  # the calls the solving update kept
    assert graph_of(store, "m") == _fresh(tree, tmp_path / "fresh.db")


def test_an_update_of_moved_lines_moves_the_kept_calls_for_the_next_update(
    tmp_path: Path, solves: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the Java fixture beside it, the graph is large enough for the update to keep no snapshot
    (``keeps_snapshot``): such an update takes the general path."""
    tree, store = tmp_path / "tree", tmp_path / "s.db"
    shutil.copytree(CODE_FIXTURES / "python", tree / "py")
    shutil.copytree(CODE_FIXTURES / "java", tree / "java")
    map_into_store(tree, store)
    solves.clear()
    _shift(tree, "def helper", 1)
    result = update_map([tree], store, session_id="m", jobs=1)
    assert (result.files["changed"], result.files["relinked"]) == ([SERVICE], 0)  # no link: lines moved
    assert result.graph["edges_changed"] > 0 and solves == []
    monkeypatch.setattr(samefacts_module, "update_same_facts", lambda *a, **k: None)
    _shift(tree, "class AuditTrail", 2)
    assert update_map([tree], store, session_id="m", jobs=1).files["relinked"] == 1
    assert solves == []  # the calls the last update moved to their new sites
    assert graph_of(store, "m") == _fresh(tree, tmp_path / "fresh.db")


@pytest.mark.usefixtures("general")
@pytest.mark.parametrize(
    "spoil",
    [
        "UPDATE calls SET data = x'00ff'",
        "UPDATE calls SET sha = 'another'",
        "UPDATE calls_step SET step = step - 1",
        "UPDATE calls_step SET version = 'an older IGG'",
        "DELETE FROM calls",
    ],
    ids=["damaged", "other bytes", "another step", "another IGG", "none"],
)
def test_kept_calls_that_cannot_be_trusted_are_not_read(
    mapped: Path, tmp_path: Path, solves: list[int], spoil: str
) -> None:
    shutil.copytree(mapped, tmp_path / "m")
    tree, store = tmp_path / "m" / "tree", tmp_path / "m" / "s.db"
    db = sqlite3.connect(sidecar_path(store, INDEX_SUFFIX))
    with db:
        assert db.execute(spoil).rowcount > 0
    db.close()
    _shift(tree, "    def checkout(", 2)
    assert update_map([tree], store, session_id="m", jobs=1).files["relinked"] == 1
    assert solves == [1]
    assert graph_of(store, "m") == _fresh(tree, tmp_path / "fresh.db")
