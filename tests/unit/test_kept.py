"""A checked tree's graph is kept in the facts cache and taken again by stat (``igg.mapping.kept``): after
each random change of a tree (a body edited, a file touched, saved by renaming, an import added or moved, a
file added or removed, an ignore file written), the graph the next check reads is the graph a fresh map of the
tree makes; the changes that leave the graph as it was are answered from the kept row, which is what makes
the pin worth anything."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import igg.mapping.checking as checking
import igg.mapping.kept as kept
from igg.codemap.cache import FactsCache
from igg.interfaces.cli import main
from igg.mapping.checking import kept_or_mapped, run_check
from igg.mapping.since import tree_state
from igg.mapping.update import update_map
from igg.service import map_code
from tests.support import shop
from tests.support.shop import write

KEEPS = {  # the graph stays as it was: the kept row answers
    **{
        name: shop.BODIES[name]
        for name in ("body", "ts body", "ts lines", "go body", "readme", "function renamed", "binary edited")
    },
    "touched": ("shop/util.py", ...),
    "saved by renaming": (
        "shop/api/views.py",
        "from shop.service import orders\n\n\ndef view(x):\n    return 0\n",
    ),
    "not code": ("notes.txt", "a note\n"),
}
TABLES_MAP = {"function renamed", "ts lines"}
"""Of those, edits of declarations: a graph of tables holds them (their names, their lines)."""
MOVED = {**shop.ADDED, **shop.REMOVED}
"""Files added or removed beside others of their language: a graph of imports is spliced (its other files'
facts read from the cache), one of tables mapped again."""
MAPS = {  # the graph may change: linked again from the cache, or the tree mapped again
    **shop.IMPORTS,
    **{name: shop.FILES[name] for name in ("package removed", "gitignore", "new folder")},
    **MOVED,
}


def change(root: Path, name: str) -> None:
    rel, text = {**KEEPS, **MAPS}[name]
    path = root / rel
    if text is ...:
        if path.exists():
            st = path.stat()
            os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    elif name == "saved by renaming":
        path.parent.mkdir(parents=True, exist_ok=True)
        (path.parent / ".views.py.swp").write_text(text, encoding="utf-8")
        os.replace(path.parent / ".views.py.swp", path)
    else:
        write(root, rel, text)


def files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def spied(monkeypatch: pytest.MonkeyPatch, relinked: list[bool] | None = None) -> list[bool]:
    """Whether each ``kept_state`` call answered from the kept row (and, in ``relinked``, whether it linked
    the kept facts again, without walking the tree: files changed in place, their imports with them)."""
    answered: list[bool] = []
    original = kept.kept_state

    def spy(*args, **kwargs):
        found = original(*args, **kwargs)
        answered.append(found is not None and found.kept)
        if relinked is not None:
            relinked.append(found is not None and not found.kept)
        return found

    monkeypatch.setattr(kept, "kept_state", spy)
    return answered


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    steps=st.lists(st.sampled_from(sorted(KEEPS) + sorted(MAPS)), min_size=1, max_size=5),
    reads=st.sampled_from(["imports", "tables"]),
    first=st.sampled_from(["check", "map"]),
)
def test_a_kept_graph_is_the_graph_a_fresh_map_makes(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, steps, reads, first
) -> None:
    """Kept first by a check of the tree, or by a map of it (``keep_mapped``: imports only)."""
    root = tmp_path_factory.mktemp("kept") / "tree"
    shop.make(root)
    cache = FactsCache(root.parent / "s.codefacts")
    relinked: list[bool] = []
    answered = spied(monkeypatch, relinked)
    try:
        if first == "map":
            map_code([root], cache=cache)
        state = kept_or_mapped([root], cache, reads=reads)
        # nothing kept yet, unless a map kept the graph of imports
        assert answered == [first == "map" and reads == "imports"]
        assert state.graph == tree_state([root], FactsCache(None), reads=reads).graph
        for at, step in enumerate(steps):
            before = files(root)
            change(root, step)
            state = kept_or_mapped([root], cache, reads=reads)
            assert state.graph == tree_state([root], FactsCache(None), reads=reads).graph, step
            after = files(root)
            rel = {**KEEPS, **MAPS}[step][0]
            if after == before or (  # nothing changed (a step taken again), or a keeping edit of the tree
                step in KEEPS
                and not {p for p in before.keys() ^ after.keys() if not p.endswith(".txt")}  # none came back
                and not (step in TABLES_MAP and reads == "tables")  # tables: functions are nodes
                and before.get(rel) == shop.TREE.get(rel, "").encode()  # from the file as the tree had it
            ):
                assert answered[-1], step
            elif step in MAPS:
                assert not answered[-1], step
                # an import edited, a file added or removed beside others: the kept facts linked again, with
                # the file's now (not the tree mapped); in web/ once the ignore file left web/lib.ts out, the
                # folder's listing no longer tells what it held (mapped)
                ignored = step in ("ts module removed", "new ts module") and "gitignore" in steps[:at]
                moved = reads == "imports" and step in MOVED and not ignored
                assert relinked[-1] is (step in shop.IMPORTS or moved), step
            again = kept_or_mapped([root], cache, reads=reads)  # nothing changed since: the kept row answers
            assert answered[-1] and again.graph == state.graph
    finally:
        cache.close()


def kept_shop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, FactsCache, list[bool]]:
    """The shop under ``tmp_path`` checked once (its graph kept in a cache on disk), and the answers spied."""
    root = tmp_path / "tree"
    shop.make(root)
    cache = FactsCache(tmp_path / "s.codefacts")
    answered = spied(monkeypatch)
    kept_or_mapped([root], cache, reads="imports")
    return root, cache, answered


def test_a_new_import_links_the_kept_facts_again_and_a_lost_row_costs_a_map(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An import added: the files keep their modules, so the kept facts are linked again with theirs now,
    without walking the tree (8 of 23 s of a ``check --since`` at 50,000 files), and the graph is a fresh
    map's and kept; the next check answers from the row. A TypeScript export added links as before (a link of
    imports resolves a specifier by paths alone): the kept graph answers, where every file was linked again
    (9.2 s at 50,000 files). A damaged row, or facts gone from the cache, map the tree."""
    root, cache, answered = kept_shop(tmp_path, monkeypatch)
    change(root, "import added")
    with monkeypatch.context() as m:
        m.setattr(checking, "tree_state", lambda *a, **k: pytest.fail("the tree was mapped"))
        state = kept_or_mapped([root], cache, reads="imports")
    assert state.graph == tree_state([root], FactsCache(None), reads="imports").graph
    assert answered[-1] is False and not state.kept
    assert kept_or_mapped([root], cache, reads="imports").graph == state.graph
    assert answered[-1] is True
    write(
        root,
        "shop/web/lib.ts",
        shop.TREE["shop/web/lib.ts"] + "\nexport function k(): number {\n  return 4;\n}\n",
    )
    with monkeypatch.context() as m:
        m.setattr(checking, "tree_state", lambda *a, **k: pytest.fail("the tree was mapped"))
        exported = kept_or_mapped([root], cache, reads="imports")
    assert answered[-1] is True and exported.kept
    assert exported.graph == state.graph == tree_state([root], FactsCache(None), reads="imports").graph
    assert state.graph.edges.keys() >= {("module:shop/util.py", "IMPORTS", "module:shop/api/views.py")}
    with sqlite3.connect(tmp_path / "s.codefacts") as db:  # a damaged row
        db.execute("UPDATE kept SET data = x'00ff'")
    assert (
        kept_or_mapped([root], cache, reads="imports").graph
        == tree_state([root], FactsCache(None), reads="imports").graph
    )
    assert answered[-1] is False
    change(root, "body")
    with sqlite3.connect(tmp_path / "s.codefacts") as db:  # the facts the graph was linked from are gone
        db.execute("DELETE FROM facts")
    state = kept_or_mapped([root], cache, reads="imports")
    assert (
        answered[-1] is False and state.graph == tree_state([root], FactsCache(None), reads="imports").graph
    )
    cache.close()


def test_a_check_in_memory_keeps_nothing_and_a_full_map_is_not_kept(tmp_path: Path, monkeypatch) -> None:
    root = tmp_path / "tree"
    shop.make(root)
    answered = spied(monkeypatch)
    (tmp_path / "rules.toml").write_text(
        '[[rules]]\nname = "acyclic"\nkind = "acyclic"\nlevel = "module"\n', encoding="utf-8"
    )
    run_check(tmp_path / "rules.toml", paths=[root])
    assert answered == []  # FactsCache(None): in memory, nothing to keep
    cache = FactsCache(tmp_path / "s.codefacts")
    kept_or_mapped([root], cache, reads="all")
    kept_or_mapped([root], cache, reads="all")
    assert answered == []  # a graph of calls reads bodies: never kept
    cache.close()


def test_a_skipped_file_edited_keeps_the_graph_and_one_now_read_maps_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, cache, answered = kept_shop(tmp_path, monkeypatch)
    change(root, "binary edited")
    kept_or_mapped([root], cache, reads="imports")
    assert answered == [False, True]
    write(root, "shop/data.py", "import json\n")  # no binary any more: a module the walk reads
    state = kept_or_mapped([root], cache, reads="imports")
    assert answered[-1] is False and "module:shop/data.py" in state.graph.nodes
    cache.close()


def test_a_map_with_a_store_keeps_the_graph_the_next_check_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``igg map-code TREE --store S`` keeps the tree's graph of imports beside the store: the first ``igg
    check TREE --store S`` answers from it (``kept``), with the report a check without a cache gives. A map
    of some languages keeps nothing (a check reads them all); one with a schema of the user's keeps it."""
    root = tmp_path / "tree"
    shop.make(root)
    rules = tmp_path / "rules.toml"
    rules.write_text('[[rules]]\nname = "acyclic"\nkind = "acyclic"\nlevel = "module"\n', encoding="utf-8")

    def run(*args: str) -> dict:
        capsys.readouterr()
        main([*args, "--json"])
        return json.loads(capsys.readouterr().out)

    summary = run("map-code", str(root), "--store", str(tmp_path / "s.sqlite"), "--quiet")
    assert summary["map_code"]["seconds"]["keep"] >= 0
    checked = run("check", str(root), "--rules", str(rules), "--store", str(tmp_path / "s.sqlite"))
    fresh = run("check", str(root), "--rules", str(rules))
    assert checked["kept"] is True and not fresh["kept"]
    assert checked["violations"] and checked["violations"] == fresh["violations"]
    assert (checked["nodes"], checked["edges"]) == (fresh["nodes"], fresh["edges"])
    schema = tmp_path / "schema.json"  # a schema of the user's: the check places its graph in the code schema
    schema.write_bytes(Path("schemas/code-graph.json").read_bytes())
    run("map-code", str(root), "--store", str(tmp_path / "u.sqlite"), "--schema", str(schema), "--quiet")
    checked = run("check", str(root), "--rules", str(rules), "--store", str(tmp_path / "u.sqlite"))
    assert checked["kept"] is True and checked["violations"] == fresh["violations"]
    summary = run("map-code", str(root), "--store", str(tmp_path / "t.sqlite"), "--languages", "python")
    assert "keep" not in summary["map_code"]["seconds"]
    checked = run("check", str(root), "--rules", str(rules), "--store", str(tmp_path / "t.sqlite"))
    assert not checked["kept"] and checked["violations"] == fresh["violations"]


def test_an_update_that_changes_the_imports_keeps_the_graph_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After ``map-code --store S``, an ``--update`` for a new import (the files that name what it binds
    linked) leaves the kept graph, which the check links again with the file's new facts; one for a module
    added beside others (the files that name it linked, their elements loaded alone: ``igg.mapping.bodies``)
    leaves it too, and the check, which sees a folder changed, splices the new module and the files whose
    imports may find it into the kept graph; so does one for a module removed; one for a body edit (a few
    files linked) leaves the kept graph, which still holds. Each answer is a fresh map's graph."""
    root = tmp_path / "tree"
    shop.make(root)
    store = tmp_path / "s.sqlite"
    cache_path = tmp_path / "s.sqlite.codefacts"
    map_code([root], store=str(store), cache=FactsCache(cache_path))
    relinked: list[bool] = []
    answered = spied(monkeypatch, relinked)
    steps = (("import added", False, True), ("new module", False, True), ("deleted", False, True))
    for step, kept_then, relinked_then in (*steps, ("body", True, False)):
        change(root, step)
        result = update_map([root], store)
        assert result.files["relinked"] < result.files["read"], step
        cache = FactsCache(cache_path)
        try:
            state = kept_or_mapped([root], cache, reads="imports")
        finally:
            cache.close()
        assert (answered[-1], relinked[-1]) == (kept_then, relinked_then), step
        assert state.graph == tree_state([root], FactsCache(None), reads="imports").graph, step
    # the body-edited file's facts in the cache are the update's (full facts), and the row keeps their key:
    # an import added to it next links the kept facts again, with no file's facts missing
    write(root, "shop/service/orders.py", shop.BODIES["body"][1].replace("\n\n", "\nimport shop.util\n\n", 1))
    cache = FactsCache(cache_path)
    try:
        with monkeypatch.context() as m:
            m.setattr(checking, "tree_state", lambda *a, **k: pytest.fail("the tree was mapped"))
            state = kept_or_mapped([root], cache, reads="imports")
    finally:
        cache.close()
    assert state.graph == tree_state([root], FactsCache(None), reads="imports").graph
    assert ("module:shop/service/orders.py", "IMPORTS", "module:shop/util.py") in state.graph.edges


def test_a_graph_that_cannot_be_kept_leaves_the_map_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Keeping the graph only saves the next check a map: when linking it fails, the map still succeeds and
    keeps nothing, and the check maps the tree."""
    root = tmp_path / "tree"
    shop.make(root)

    def broken(*args, **kwargs):
        raise RuntimeError("no graph")

    monkeypatch.setattr(kept, "linked_state", broken)
    assert main(["map-code", str(root), "--store", str(tmp_path / "s.sqlite"), "--quiet", "--json"]) == 0
    assert "keep" not in json.loads(capsys.readouterr().out)["map_code"]["seconds"]
    monkeypatch.undo()
    answered = spied(monkeypatch)
    cache = FactsCache(tmp_path / "s.sqlite.codefacts")
    try:
        state = kept_or_mapped([root], cache, reads="imports")
    finally:
        cache.close()
    assert answered == [False]
    assert state.graph == tree_state([root], FactsCache(None), reads="imports").graph
