"""An edit that changes what a file declares without a node to remove (a function's parameters, a function,
method or class added) is updated from the elements of the files it links again (``igg.mapping.bodies``): the
files that name what changed are linked with it; when a symbol is added, the files of its language alone,
the census the last step kept (``SchemaFit.census``) telling whether another language's symbol holds its
key or identity (else every language's symbols are read). An identity another symbol holds, in another
language or under a schema whose names collide, is left to the general path, and each update equals the
general path's and a fresh map's. Judged on small trees written here and on the polyglot tree with ky and
chi beside it: a declaration of each language added and taken away."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import orjson
import pytest

from igg.codemap.cache import FactsCache
from igg.service import map_code
from igg.store import SessionStore
from igg.store.codec import canonical
from igg.store.location import sidecar_path
from tests.codegraph import CODE_FIXTURES, map_into_store
from tests.unit.test_bodies import _SHARED, _taken, _update
from tests.unit.test_code_update import graph_of
from tests.unit.test_code_update_unchanged import _age
from tests.unit.test_samefacts import _general, _step

_SIGNED = {
    "util.ts": "export function scale(a: number): number {\n  return a * 2;\n}\n",
    "main.ts": 'import { scale } from "./util";\n\nexport function run(): number {\n  return scale(1);\n}\n',
}


def test_a_function_whose_signature_changed_is_updated_without_the_whole_graph(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A TypeScript function given a second parameter keeps its node (its identity is its package and name)
    and changes its signature: the update links it and the files naming it, reads no whole graph, and gives a
    fresh map's graph (ky beside it, so that the change keeps no snapshot of the whole graph)."""
    tree, store = tmp_path / "tree", tmp_path / "s.db"
    shutil.copytree(CODE_FIXTURES / "typescript" / "ky", tree / "ky")
    for path, text in _SIGNED.items():
        (tree / path).write_text(text, encoding="utf-8")
    map_into_store(tree, store)
    load_state = SessionStore.load_state

    def whole(*_: object, **__: object) -> None:
        raise AssertionError("the whole graph was loaded")

    for text in (_SIGNED["util.ts"].replace("a: number)", "a: number, b = 2)"), _SIGNED["util.ts"]):
        (tree / "util.ts").write_text(text, encoding="utf-8")
        with monkeypatch.context() as m:
            m.setattr(SessionStore, "load_state", whole)
            taken, result = _taken(tree, store, monkeypatch)
        assert taken and result.graph["nodes_changed"] >= 1 and result.files["relinked"] == 2
        monkeypatch.setattr(SessionStore, "load_state", load_state)
        map_code([tree], agent="code", jobs=1, store=tmp_path / f"fresh{len(text)}.db", session_id="f")
        assert graph_of(store, "m") == graph_of(tmp_path / f"fresh{len(text)}.db", "f")


def test_a_function_added_is_updated_without_the_whole_graph(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A TypeScript function added beside another (exported: the files that name it are linked with it), then
    called from another file: each update adds its nodes and edges from the elements of the files linked again
    (an identity another file's symbol shares is seen: the census), reads no whole
    graph, and gives a fresh map's graph."""
    tree, store = tmp_path / "tree", tmp_path / "s.db"
    shutil.copytree(CODE_FIXTURES / "typescript" / "ky", tree / "ky")
    main = 'import * as util from "./util";\n\nexport function run(): number {\n  return util.scale(1);\n}\n'
    (tree / "util.ts").write_text(_SIGNED["util.ts"], encoding="utf-8")
    (tree / "main.ts").write_text(main, encoding="utf-8")
    map_into_store(tree, store)
    load_state = SessionStore.load_state

    def whole(*_: object, **__: object) -> None:
        raise AssertionError("the whole graph was loaded")

    twice = _SIGNED["util.ts"] + "\nexport function twice(a: number): number {\n  return scale(a) * 2;\n}\n"
    for n, (path, text) in enumerate([("util.ts", twice), ("main.ts", main.replace("scale(1)", "twice(1)"))]):
        (tree / path).write_text(text, encoding="utf-8")
        with monkeypatch.context() as m:
            m.setattr(SessionStore, "load_state", whole)
            taken, result = _taken(tree, store, monkeypatch)
        assert taken, path
        monkeypatch.setattr(SessionStore, "load_state", load_state)
        map_code([tree], agent="code", jobs=1, store=tmp_path / f"fresh{n}.db", session_id="f")
        assert graph_of(store, "m") == graph_of(tmp_path / f"fresh{n}.db", "f")
    assert result.graph["edges_added"] >= 1


_ADDED = {
    "scripts/reports/monthly.py": ("\n\ndef added_total(rows):\n    return len(rows)\n", None),
    "services/notify/mail/mail.go": ("\nfunc addedTotal(n int) int {\n\treturn n + 1\n}\n", None),
    "web/packages/ui/src/table.ts": (
        "\nexport function addedTotal(n: number): number {\n  return n + 1;\n}\n",
        None,
    ),
    "services/billing/src/main/java/com/acme/billing/BillingService.java": (
        "    public int addedTotal(int n) {\n        return n + 1;\n    }\n",
        "}",
    ),
}
"""A function or method added to a file of each language: the text, and where it goes (None: at the end;
else before the last occurrence of that text)."""


@pytest.mark.parametrize("path", sorted(_ADDED))
def test_a_declaration_added_is_updated_as_the_general_path_updates_it(
    path: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A function (a method in Java) added to a file of the polyglot tree (ky and chi beside it), then taken
    away again: each update equals the general path's (the step, its record and the stored graph, ids and
    provenance included), and the last graph a fresh map's; the addition takes this path."""
    trees = {}
    for name in ("fast", "slow"):
        shutil.copytree(CODE_FIXTURES / "polyglot", tmp_path / name / "tree")
        shutil.copytree(CODE_FIXTURES / "typescript" / "ky", tmp_path / name / "tree" / "ky")
        shutil.copytree(CODE_FIXTURES / "go" / "chi", tmp_path / name / "tree" / "chi")
        map_into_store(tmp_path / name / "tree", tmp_path / name / "s.db")
        trees[name] = (tmp_path / name / "tree", tmp_path / name / "s.db")
    (fast, fast_store), (slow, slow_store) = trees["fast"], trees["slow"]
    before = (fast / path).read_text(encoding="utf-8")
    text, at = _ADDED[path]
    cut = len(before) if at is None else before.rindex(at)
    taken = []
    for edited in (before[:cut] + text + before[cut:], before):
        for tree in (fast, slow):
            (tree / path).write_text(edited, encoding="utf-8")
        made, kept = _taken(fast, fast_store, monkeypatch)
        taken.append(made)
        done = _general(monkeypatch)
        general = _update(slow, slow_store)
        done()
        assert (kept.graph, kept.step, kept.iteration) == (general.graph, general.step, general.iteration)
        assert _step(fast_store, kept.step) == _step(slow_store, general.step)
        assert canonical(SessionStore(fast_store).load_state("m")[1]) == canonical(
            SessionStore(slow_store).load_state("m")[1]
        )
    assert taken[0] and kept.graph["nodes_removed"] >= 1  # the removal: the general path's
    map_code([fast], agent="code", jobs=1, store=tmp_path / "fresh.db", session_id="f")
    assert graph_of(fast_store, "m") == graph_of(tmp_path / "fresh.db", "f")


def test_a_declaration_added_whose_identity_another_language_holds_is_updated_as_a_fresh_map_makes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A function added to ``util.py`` whose package and name ``util.ts`` declares too: a fresh map makes one
    node of the two (or qualifies their names), which the files of one language cannot tell. The update reads
    every language's symbols when one is added, leaves such an addition to the general path, and its graph and
    step equal the general path's and a fresh map's."""
    shared = {**_SHARED, "util.ts": _SHARED["util.ts"] + "\nexport function h(): number {\n  return 2;\n}\n"}
    trees = {}
    for name in ("fast", "slow"):
        shutil.copytree(CODE_FIXTURES / "typescript" / "ky", tmp_path / name / "tree" / "ky")
        for path, text in shared.items():
            (tmp_path / name / "tree" / path).write_text(text, encoding="utf-8")
        map_into_store(tmp_path / name / "tree", tmp_path / name / "s.db")
        trees[name] = (tmp_path / name / "tree", tmp_path / name / "s.db")
    (fast, fast_store), slow = trees["fast"], trees["slow"][0]
    for tree in (fast, slow):
        (tree / "util.py").write_text(shared["util.py"] + "\n\ndef h():\n    return 2\n", encoding="utf-8")
    _left_to_the_general_path(trees, monkeypatch)
    map_code([fast], agent="code", jobs=1, store=tmp_path / "fresh.db", session_id="f")
    assert graph_of(fast_store, "m") == graph_of(tmp_path / "fresh.db", "f")


_TWO = {
    "py/app.py": "def main():\n    return 1\n",
}


def test_a_class_added_whose_name_a_class_of_another_language_holds_is_updated_as_a_fresh_map_makes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under a code schema whose classes are known by their names alone, a Python class ``User`` added shares
    its identity with the Java class ``com.acme.model.User``, so a fresh map qualifies the names of both
    (``SchemaFit.colliding``): a node of a file of another language, which no file linked again names. The
    update leaves it to the general path: its graph and step equal the general path's and a fresh map's."""
    schema = tmp_path / "schema.json"  # the code schema, a class known by its name alone
    code = json.loads((CODE_FIXTURES.parents[1] / "schemas" / "code-graph.json").read_text(encoding="utf-8"))
    code["identity_keys"]["Class"] = ["name"]
    schema.write_text(json.dumps(code), encoding="utf-8")
    trees = {}
    for name in ("fast", "slow"):
        for path, text in _TWO.items():
            (tmp_path / name / "tree" / path).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / name / "tree" / path).write_text(text, encoding="utf-8")
        shutil.copytree(CODE_FIXTURES / "java", tmp_path / name / "tree" / "java")
        _age(tmp_path / name / "tree")  # its folders' times told apart from the edit's
        _map(tmp_path / name / "tree", tmp_path / name / "s.db", schema)
        trees[name] = (tmp_path / name / "tree", tmp_path / name / "s.db")
    (fast, fast_store), slow = trees["fast"], trees["slow"][0]
    for tree in (fast, slow):
        (tree / "py/app.py").write_text(_TWO["py/app.py"] + "\n\nclass User:\n    pass\n", encoding="utf-8")
    _left_to_the_general_path(trees, monkeypatch)
    _map(fast, tmp_path / "fresh.db", schema, session_id="f")
    assert graph_of(fast_store, "m") == graph_of(tmp_path / "fresh.db", "f")


def _left_to_the_general_path(trees: dict[str, tuple[Path, Path]], monkeypatch: pytest.MonkeyPatch) -> None:
    """The update of ``trees["fast"]`` (tree, store) took the general path, and made the step the general path
    made of ``trees["slow"]``."""
    (fast, fast_store), (slow, slow_store) = trees["fast"], trees["slow"]
    made, kept = _taken(fast, fast_store, monkeypatch)
    done = _general(monkeypatch)
    general = _update(slow, slow_store)
    done()
    assert not made
    assert (kept.graph, kept.step) == (general.graph, general.step)
    assert _step(fast_store, kept.step) == _step(slow_store, general.step)


def _map(tree: Path, store: Path, schema: Path, session_id: str = "m") -> None:
    """``map_into_store`` under the schema in ``schema``."""
    cache = FactsCache(sidecar_path(store, ".codefacts"))
    try:
        result, _ = map_code(
            [tree], agent="code", jobs=1, store=store, session_id=session_id, cache=cache, schema=schema
        )
    finally:
        cache.close()
    assert result.stop_reason == "finished"


def _forget_facts(store: Path, language: str) -> list[tuple[str, bytes, bytes | None]]:
    """Remove the facts of ``language``'s files from the facts cache beside ``store`` (an update that reads
    them goes to the general path, which parses them): the rows removed, for ``_remember``."""
    with sqlite3.connect(sidecar_path(store, ".codefacts")) as db:
        rows = db.execute("SELECT key, data, declared FROM facts").fetchall()
        gone = [r for r in rows if (f := FactsCache._load(r[1])) is not None and f.language == language]
        db.executemany("DELETE FROM facts WHERE key = ?", [(r[0],) for r in gone])
    return gone


def _remember(store: Path, rows: list[tuple[str, bytes, bytes | None]]) -> None:
    with sqlite3.connect(sidecar_path(store, ".codefacts")) as db:
        db.executemany("INSERT INTO facts (key, data, declared) VALUES (?, ?, ?)", rows)


_APART = {
    "util.py": "import os\n\n\ndef f():\n    return os.getcwd()\n",
    "util.ts": "export function g(): number {\n  return 1;\n}\n",
    "main.ts": 'import { g } from "./util";\n\nexport function run(): void {\n  g();\n  g();\n}\n',
}
"""A Python and a TypeScript file of one package (``util``) that share no symbol."""
_ADDED_TS = "\nexport function {}(): number {{\n  return 2;\n}}\n"


def test_a_function_added_links_its_own_language_by_the_census_kept_in_step(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the census the map kept (``SchemaFit.census``), a function added reads and links the files of its
    own language alone: with the Python files' facts gone from the cache, a TypeScript function added still
    takes this path. The census follows each step: after that addition (kept with its symbol), after lines
    moved (``igg.mapping.samefacts``) and after a call changed (moved to the new step); after a file removed
    it is kept stale (it may hold the symbols removed), and a function added next still links its language
    alone, where the update read every language's; the file put back links every file. A Python function of
    the TypeScript one's package and name shares its identity, and the update leaves it to the general path.
    Every step equals the general path's, and the last graph a fresh map's."""
    trees = {}
    for name in ("fast", "slow"):
        shutil.copytree(CODE_FIXTURES / "typescript" / "ky", tmp_path / name / "tree" / "ky")
        for path, text in _APART.items():
            (tmp_path / name / "tree" / path).write_text(text, encoding="utf-8")
        _age(tmp_path / name / "tree")
        map_into_store(tmp_path / name / "tree", tmp_path / name / "s.db")
        trees[name] = (tmp_path / name / "tree", tmp_path / name / "s.db")
    (fast, fast_store), (slow, slow_store) = trees["fast"], trees["slow"]
    forgotten = _forget_facts(fast_store, "python")
    assert len(forgotten) == 1
    util, main = _APART["util.ts"], "// reviewed\n" + _APART["main.ts"]
    edits = [
        ("util.ts", util + _ADDED_TS.format("h"), True),  # its symbol added to the census
        ("main.ts", main, None),  # lines moved: the same symbols
        ("util.ts", util + _ADDED_TS.format("h") + _ADDED_TS.format("h2"), True),
        ("main.ts", main.replace("  g();\n", "", 1), True),  # a call removed: the same symbols
        ("util.ts", util + _ADDED_TS.format("h") + _ADDED_TS.format("h2") + _ADDED_TS.format("h3"), True),
        ("extra.ts", _ADDED_TS.format("e"), True),  # a file added beside util.ts
        ("extra.ts", None, True),  # removed: the census kept, stale (it still holds e)
        # a function added after the removal: the stale census still tells the Python file's identities
        ("util.ts", util + "".join(_ADDED_TS.format(f"h{n}") for n in ("", 2, 3, 4)), True),
        # e put back (the Python facts back in the cache): the stale census holds its key, so every file is
        # linked, and a census made of them
        ("extra.ts", _ADDED_TS.format("e"), True),
        ("util.py", _APART["util.py"] + "\n\ndef h():\n    return 2\n", False),  # h's identity is taken
    ]
    for at, (path, text, fast_path) in enumerate(edits):
        if path == "extra.ts" and text is not None and at > 6:
            _remember(fast_store, forgotten)  # the file's facts then: else the general path parses it
        for tree in (fast, slow):
            if text is None:
                (tree / path).unlink()
            else:
                (tree / path).write_text(text, encoding="utf-8")
        made, kept = _taken(fast, fast_store, monkeypatch)
        done = _general(monkeypatch)
        general = _update(slow, slow_store)
        done()
        if fast_path is not None:
            assert made is fast_path, path
        assert (kept.graph, kept.step) == (general.graph, general.step), path
        assert _step(fast_store, kept.step) == _step(slow_store, general.step), path
    map_code([fast], agent="code", jobs=1, store=tmp_path / "fresh.db", session_id="f")
    assert graph_of(fast_store, "m") == graph_of(tmp_path / "fresh.db", "f")


def test_the_census_holds_every_key_and_identity_of_a_map_and_reads_back_in_step(tmp_path: Path) -> None:
    """The census of the polyglot tree's model (``SchemaFit.census``), kept in a tree index and read back,
    holds every symbol's key and identity, and no key or identity a symbol added would take; a census kept
    for another step, or moved from another, is none."""
    from igg.agents.code.mapping import SchemaFit
    from igg.codemap.link import link
    from igg.codemap.schema import load_code_schema
    from igg.codemap.treeindex import TreeIndexes
    from igg.codemap.walk import walk
    from igg.mapping.bodies import _entries
    from igg.mapping.prepare import parse_all

    facts, _ = parse_all(walk([CODE_FIXTURES / "polyglot"]).files)
    fit = SchemaFit(link(facts), load_code_schema(None).compile())
    census = fit.census()
    assert census is not None
    indexes = TreeIndexes(tmp_path / "s.codeindex")
    try:
        indexes.put_census("m", 3, census)
        kept = indexes.census("m", 3)
        assert kept is not None and indexes.census("m", 2) is None
        placed = set(fit.placed)
        assert all(  # identities as grouped: those placed under another name (qualified) aside
            kept.holds_any([orjson.dumps((p.label, p.identity))])
            for key, p in fit.placed.items()
            if key not in fit.colliding
        )
        assert _entries(fit, placed) >= {orjson.dumps(key) for key in placed}
        assert all(kept.holds_any([orjson.dumps(key)]) for key in fit.model.symbols)
        new = fit.placed[next(iter(placed))]
        assert not kept.holds_any([orjson.dumps("function:nowhere.added"), orjson.dumps((new.label, ("x",)))])
        indexes.add_census("m", 3, 4, [orjson.dumps("function:nowhere.added")])
        assert indexes.census("m", 3) is None
        assert indexes.census("m", 4).holds_any([orjson.dumps("function:nowhere.added")])  # type: ignore[union-attr]
        indexes.add_census("m", 3, 5)  # from a step it does not speak for: none kept
        assert indexes.census("m", 5) is None and indexes.census("m", 4) is None
    finally:
        indexes.close()
