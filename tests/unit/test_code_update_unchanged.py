"""``--update`` where no file changed answers from the tree's index (``igg.codemap.treeindex``) by stat
alone: no file parsed, the stored graph not loaded, and the same summary as the general path, which keeps no
step either when nothing changed (the stored session is left as it was).

The general path is what an update without the index does (its file removed); the fast path must answer
exactly what it answers, and give way to it for any change a walk could see.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from structlog.testing import capture_logs

from igg.codemap.cache import FactsCache
from igg.codemap.treeindex import INDEX_SUFFIX
from igg.mapping.update import update_map
from igg.service import map_code
from igg.store import SessionStore
from igg.store.location import sidecar_path
from tests.codegraph import CODE_FIXTURES
from tests.unit.test_code_update import graph_of


def _age(root: Path) -> None:
    """Every file and folder of ``root`` last modified a minute ago: times too recent to trust are hashed
    (or, for a folder, never trusted), as a tree edited in the same second would be."""
    then = time.time() - 60
    for folder, _, files in os.walk(root):
        for name in files:
            os.utime(Path(folder) / name, (then, then))
        os.utime(folder, (then, then))


@pytest.fixture
def mapped(tmp_path: Path) -> tuple[Path, Path]:
    tree = tmp_path / "tree"
    shutil.copytree(CODE_FIXTURES / "python", tree / "py")
    shutil.copytree(CODE_FIXTURES / "java", tree / "java")
    _age(tree)
    store = tmp_path / "s.db"
    _map(tree, store)
    return tree, store


def _map(tree: Path, store: Path) -> None:
    """Map ``tree`` into session ``m`` of ``store``, its facts cache and tree index beside it."""
    cache = FactsCache(sidecar_path(store, ".codefacts"))
    try:
        map_code([tree], store=store, session_id="m", jobs=1, cache=cache)
    finally:
        cache.close()


def _update(tree: Path, store: Path, *, general: bool = False) -> tuple[dict[str, Any], list[str]]:
    """The update's summary (times aside) and the events it logged; ``general``: without the index."""
    if general:
        Path(str(store) + INDEX_SUFFIX).unlink()
    with capture_logs() as logs:
        result = update_map([tree], store, jobs=1).to_dict()
    result.pop("seconds")
    return result, [e["event"] for e in logs]


def _linked_aside(summary: dict[str, Any]) -> dict[str, Any]:
    """An update's summary without how many files it linked again."""
    return {**summary, "files": {k: v for k, v in summary["files"].items() if k != "relinked"}}


def test_a_noop_update_neither_parses_nor_loads_and_answers_as_the_general_path(
    mapped: tuple[Path, Path],
) -> None:
    tree, store = mapped
    info = SessionStore(store).session("m")
    quick, events = _update(tree, store)
    assert "map_code_update_unchanged" in events and "map_code_state_loading" not in events
    assert quick["files"] == {
        "read": quick["files"]["read"],
        "reparsed": 0,
        "unchanged": quick["files"]["read"],
        "relinked": 0,
        "added": [],
        "changed": [],
        "removed": [],
        "renamed": [],
    }
    assert (quick["step"], quick["iteration"]) == (info.last_step, info.last_iteration)
    general, events = _update(tree, store, general=True)
    assert "map_code_state_loading" in events and "map_code_update_unchanged" not in events
    assert general == quick
    assert SessionStore(store).session("m").last_step == info.last_step  # nothing kept

    # the general path wrote the index again: the next no-op is quick once more
    again, events = _update(tree, store)
    assert again == quick and "map_code_update_unchanged" in events


def test_a_tree_written_just_before_its_map_answers_its_first_noop_update_from_the_index(
    tmp_path: Path,
) -> None:
    """A checkout mapped at once: its folders' times are too recent to tell a change, so their listings are
    kept; the first no-op update is quick, and a file added to such a folder is still seen."""
    tree = tmp_path / "tree"
    shutil.copytree(CODE_FIXTURES / "python", tree / "py")  # no _age: every time is recent
    store = tmp_path / "s.db"
    _map(tree, store)
    quick, events = _update(tree, store)
    assert "map_code_update_unchanged" in events and quick["files"]["reparsed"] == 0
    (tree / "py" / "added.py").write_text("def f():\n    return 1\n")
    changed, events = _update(tree, store)
    assert "map_code_update_unchanged" not in events
    assert changed["files"]["added"] == ["py/added.py"]


def test_a_file_touched_or_rewritten_alike_is_hashed_and_still_unchanged(mapped: tuple[Path, Path]) -> None:
    tree, store = mapped
    models = tree / "py" / "shop" / "models.py"
    models.write_text(models.read_text())
    quick, events = _update(tree, store)
    assert "map_code_update_unchanged" in events


def test_what_was_read_or_listed_alike_is_not_read_or_listed_again(
    mapped: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file saved alike by a rename over it (``git stash pop``, ``git checkout`` of the same content): the
    first no-op update lists its folder and reads the file, finds both alike and keeps their new times; the
    next one reads and lists nothing (at 50,000 files, a checkout that rewrote them all would be read at every
    update)."""
    import igg.codemap.treeindex as treeindex

    tree, store = mapped
    models = tree / "py" / "shop" / "models.py"
    models.with_name(".models.py.swp").write_bytes(models.read_bytes())
    os.replace(models.with_name(".models.py.swp"), models)
    then = time.time() - 30  # old enough for their times to be kept
    for path in (models, models.parent):
        os.utime(path, (then, then))
    read: list[str] = []
    listed: list[str] = []
    real_open, real_listing = open, treeindex.listing_of
    monkeypatch.setattr(
        treeindex, "open", lambda p, *a: read.append(str(p)) or real_open(p, *a), raising=False
    )
    monkeypatch.setattr(treeindex, "listing_of", lambda f: listed.append(f) or real_listing(f))
    for expected in ([str(models)], []):
        read.clear()
        listed.clear()
        _, events = _update(tree, store)
        assert "map_code_update_unchanged" in events
        assert read == expected and listed == ([str(models.parent)] if expected else [])


@pytest.mark.parametrize(
    "change",
    ["edit", "add", "remove", "gitignore", "rename"],
)
def test_any_change_takes_the_general_path(mapped: tuple[Path, Path], change: str) -> None:
    tree, store = mapped
    models = tree / "py" / "shop" / "models.py"
    if change == "edit":
        models.write_text(models.read_text() + "\n\ndef audit(order):\n    return order\n")
    elif change == "add":
        (tree / "py" / "shop" / "extra.py").write_text("def extra():\n    return 1\n")
    elif change == "remove":
        models.unlink()
    elif change == "gitignore":
        (tree / "py" / ".gitignore").write_text("shop/models.py\n")
    else:
        models.rename(models.with_name("models2.py"))
    result, events = _update(tree, store)
    assert "map_code_state_loading" in events and "map_code_update_unchanged" not in events
    assert result["step"] == SessionStore(store).session("m").last_step
    assert result["step"] > 0 and any(result["files"][k] for k in ("added", "changed", "removed"))


@pytest.mark.parametrize("damage", ["a path that is no text", "columns of other lengths", "not JSON"])
def test_a_damaged_index_is_a_doubt_and_the_general_path_answers(
    mapped: tuple[Path, Path], damage: str
) -> None:
    """A tree index whose row was damaged (by hand, a disk, another program) is never trusted nor a crash: the
    update takes the general path and answers what it answers without the index."""
    import sqlite3
    import zlib

    import orjson

    tree, store = mapped
    with sqlite3.connect(str(store) + INDEX_SUFFIX) as db:
        (blob,) = db.execute("SELECT data FROM trees").fetchone()
        data = orjson.loads(zlib.decompress(blob))
        if damage == "a path that is no text":
            data["paths"][0] = None  # and a number would be a file descriptor to os.stat and open
        elif damage == "columns of other lengths":
            data["sizes"].pop()
        blob = b"{" if damage == "not JSON" else orjson.dumps(data)
        db.execute("UPDATE trees SET data = ?", (zlib.compress(blob),))
    result, events = _update(tree, store)
    assert "map_code_update_unchanged" not in events and "map_code_state_loading" in events
    expected, _ = _update(tree, store, general=True)
    assert result == expected and result["files"]["reparsed"] == 0


FILES = ["shop/models.py", "shop/service.py", "shop/util/money.py", "shop/__init__.py"]
OPS = st.lists(
    st.tuples(
        st.sampled_from(
            ["touch", "same", "edit", "add", "remove", "same, renamed over", "edit, renamed over"]
        ),
        st.sampled_from(FILES),
    ),
    max_size=3,
)


def _apply(tree: Path, op: str, rel: str) -> None:
    path = tree / "py" / rel
    if not path.exists():
        return
    if op == "touch":
        os.utime(path)
    elif op == "same":
        path.write_bytes(path.read_bytes())
    elif op == "edit":
        path.write_text(path.read_text() + "\n\ndef later():\n    return 2\n")
    elif op.endswith(
        "renamed over"
    ):  # saved as safe-saving editors and git checkout save: the folder's time moves
        text = path.read_text() + ("\n\ndef later():\n    return 2\n" if op.startswith("edit") else "")
        path.with_name(f".{path.name}.swp").write_text(text)
        os.replace(path.with_name(f".{path.name}.swp"), path)
    elif op == "add":
        path.with_name("added.py").write_text("def added():\n    return 1\n")
    else:
        path.unlink()


@pytest.mark.parametrize("aged", [True, False], ids=["aged", "written-just-before"])
def test_the_index_answers_as_the_general_path_whatever_the_change(tmp_path: Path, aged: bool) -> None:
    """Property: after any few touches, same-content rewrites, edits, additions and removals, an update that
    may answer from the index gives the summary and the graph an update without it gives (but for how many
    files it links again: from the index, a function added links the files that name it, without it every
    Python file); also for a tree written just before it was mapped (as a CI checkout is), whose times are too
    recent to trust."""
    pristine = tmp_path / "pristine"
    tree = tmp_path / "tree"
    shutil.copytree(CODE_FIXTURES / "python", tree / "py")
    if aged:
        _age(tree)
    store = tmp_path / "s.db"
    _map(tree, store)
    shutil.copytree(tree, pristine / "tree")  # copystat: the files and folders keep their times
    for path in tmp_path.iterdir():  # the store, its facts cache, its index (and -wal, -shm files)
        if path.name.startswith("s.db"):
            shutil.copy2(path, pristine / path.name)
    kept = sorted(pristine.glob("s.db*"))
    examples = iter(range(1000))
    quick: list[bool] = []

    @settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
    @given(ops=OPS)
    def same(ops: list[tuple[str, str]]) -> None:
        shutil.rmtree(tree)
        shutil.copytree(pristine / "tree", tree)
        n = next(examples)  # stores of their own: an open connection never sees its file replaced
        for path in kept:
            shutil.copy2(path, tmp_path / path.name.replace("s.db", f"s{n}.db"))
            if not path.name.endswith(INDEX_SUFFIX):
                shutil.copy2(path, tmp_path / path.name.replace("s.db", f"g{n}.db"))
        for op, rel in ops:
            _apply(tree, op, rel)
        maybe, events = _update(tree, tmp_path / f"s{n}.db")
        quick.append("map_code_update_unchanged" in events)
        general, events = _update(tree, tmp_path / f"g{n}.db")
        assert "map_code_update_unchanged" not in events
        assert _linked_aside(maybe) == _linked_aside(general)
        assert graph_of(tmp_path / f"s{n}.db", "m") == graph_of(tmp_path / f"g{n}.db", "m")

    same()
    assert any(quick) and not all(quick)  # both paths were taken
