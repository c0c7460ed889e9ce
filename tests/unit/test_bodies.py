"""An update whose changed files kept their declarations and value flows and changed what their bodies call
(``igg.mapping.bodies``) loads only the elements of the files it links again, and keeps what the general path
keeps for the same edit: the same step record, the same mutations, the same graph (ids and provenance
included), and a tree index, facts cache and kept calls from which the next updates, of either kind, go on
alike and equal a fresh map. Judged on the polyglot tree, the Java fixture and two real projects (ky in
TypeScript, chi in Go): call statements duplicated (a call site more) and deleted (a call or an edge less)."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

import igg.mapping.bodies as bodies_module
from igg.codemap.treeindex import INDEX_SUFFIX
from igg.mapping.update import update_map
from igg.mapping.updated import file_elements
from igg.service import map_code
from igg.store import SessionStore
from igg.store.codec import canonical
from igg.store.location import sidecar_path
from tests.codegraph import CODE_FIXTURES, map_into_store
from tests.unit.test_code_update import graph_of
from tests.unit.test_samefacts import _general, _sources, _step

TREES: dict[str, list[tuple[str, str]]] = {
    "java": [("java", "java")],
    "polyglot": [("polyglot", "")],
    "ky": [("typescript/ky", "")],
    "chi": [("go/chi", "")],
}
"""Each tree: the fixture folders copied into it, and where."""
_CALL = re.compile(r"^\s+(?:this\.)?[A-Za-z_][\w.]*\([^()]*\);?\s*$")
"""A statement that is one call with plain arguments (no call nested in them)."""


@pytest.fixture(scope="module", params=sorted(TREES))
def mapped(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp(request.param)
    for source, at in TREES[request.param]:
        shutil.copytree(CODE_FIXTURES / source, base / "tree" / at)
    return base


def _calls(tree: Path) -> list[tuple[str, int]]:
    """Each call statement of the tree's TypeScript, Go and Java files: (path, line index)."""
    found = []
    for p in _sources(tree):
        if p.suffix in (".ts", ".go", ".java"):
            for i, line in enumerate(p.read_text(encoding="utf-8").split("\n")):
                if _CALL.match(line) and not line.strip().startswith(("return", "if", "for", "//")):
                    found.append((p.relative_to(tree).as_posix(), i))
    return found


def _edit(tree: Path, at: tuple[str, int], duplicate: bool) -> None:
    path = tree / at[0]
    lines = path.read_text(encoding="utf-8").split("\n")
    if duplicate:
        lines.insert(at[1], lines[at[1]])
    else:
        del lines[at[1]]
    path.write_text("\n".join(lines), encoding="utf-8")


def _recording(made: list[Any]) -> Callable[..., Any]:
    """``update_bodies``, appending what it returns to ``made``."""
    real = bodies_module.update_bodies

    def record(*args: Any, **kwargs: Any) -> Any:
        made.append(real(*args, **kwargs))
        return made[-1]

    return record


def _update(tree: Path, store: Path) -> Any:
    return update_map([tree], store, session_id="m", jobs=1)


def test_calls_added_and_removed_in_bodies_are_updated_as_the_general_path_updates_them(
    mapped: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trees = {}
    for name in ("fast", "slow"):
        shutil.copytree(mapped / "tree", tmp_path / name / "tree")
        map_into_store(tmp_path / name / "tree", tmp_path / name / "s.db")
        trees[name] = (tmp_path / name / "tree", tmp_path / name / "s.db")
    (fast, fast_store), (slow, slow_store) = trees["fast"], trees["slow"]
    taken = 0
    for round_ in range(5):
        rng = random.Random(round_)
        found = _calls(fast)
        picked = sorted(rng.sample(found, min(len(found), rng.randint(1, 2))), reverse=True)
        duplicate = [rng.random() < 0.6 for _ in picked]
        for tree in (fast, slow):
            for at, twice in zip(picked, duplicate, strict=True):
                _edit(tree, at, twice)
        made: list[Any] = []
        with monkeypatch.context() as m:
            m.setattr(bodies_module, "update_bodies", _recording(made))
            kept = _update(fast, fast_store)
        done = _general(monkeypatch)
        general = _update(slow, slow_store)
        done()
        taken += bool(made) and made[0] is not None
        assert (kept.graph, kept.step, kept.iteration) == (general.graph, general.step, general.iteration)
        if made and made[0] is not None:
            assert kept.files == general.files
        assert _step(fast_store, kept.step) == _step(slow_store, general.step)
        assert canonical(SessionStore(fast_store).load_state("m")[1]) == canonical(
            SessionStore(slow_store).load_state("m")[1]
        )
    assert taken >= 2  # a change of a fifth of a small graph keeps a snapshot: the general path's
    map_code([fast], agent="code", jobs=1, store=tmp_path / "fresh.db", session_id="f")
    assert graph_of(fast_store, "m") == graph_of(tmp_path / "fresh.db", "f")
    assert _update(fast, fast_store).graph["nodes_changed"] == 0  # nothing left to change


def test_a_call_added_loads_only_the_elements_of_the_files_linked_again(
    mapped: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Call statements duplicated one after the other until one adds a call site to an edge: that update read
    no whole graph, and every update's graph is a fresh map's."""
    shutil.copytree(mapped / "tree", tmp_path / "tree")
    tree, store = tmp_path / "tree", tmp_path / "s.db"
    map_into_store(tree, store)
    wholes: list[str] = []
    load_state = SessionStore.load_state

    def whole(self: SessionStore, *args: Any, **kwargs: Any) -> Any:
        wholes.append(str(args[0]))
        return load_state(self, *args, **kwargs)

    monkeypatch.setattr(SessionStore, "load_state", whole)
    found = _calls(tree)
    for at in random.Random(7).sample(found, min(8, len(found))):
        wholes.clear()
        _edit(tree, at, True)
        made: list[Any] = []
        with monkeypatch.context() as m:
            m.setattr(bodies_module, "update_bodies", _recording(made))
            result = _update(tree, store)
        if made and made[0] is not None and result.graph["edges_changed"]:
            assert wholes == [], at  # the whole graph was not loaded
            break
    else:
        pytest.fail("no call duplicated took the bodies path")
    monkeypatch.setattr(SessionStore, "load_state", load_state)
    map_code([tree], agent="code", jobs=1, store=tmp_path / "fresh.db", session_id="f")
    assert graph_of(store, "m") == graph_of(tmp_path / "fresh.db", "f")


def _rows(store: Path) -> dict[str, set[str]]:
    """The elements the tree's index holds for each file (``tree_elements``)."""
    with sqlite3.connect(sidecar_path(store, INDEX_SUFFIX)) as db:
        return {
            path: set(json.loads(data)) for path, data in db.execute("SELECT path, data FROM tree_elements")
        }


@pytest.mark.parametrize("name", ["chi", "java", "polyglot"])  # ky: every call's line moves a fifth of it
def test_the_index_keeps_the_elements_an_update_of_bodies_added_and_removed(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call deleted (an edge removed), then put back (the edge added again), each by this path: the index
    then holds each file's elements as a map of the graph would (``file_elements``), which the next update
    of moved lines loads, and the graph is a fresh map's."""
    tree, store = tmp_path / "tree", tmp_path / "s.db"
    for source, at in TREES[name]:
        shutil.copytree(CODE_FIXTURES / source, tree / at)
    map_into_store(tree, store)
    found = _calls(tree)
    for path, line in random.Random(3).sample(found, len(found)):
        text = (tree / path).read_text(encoding="utf-8")
        _edit(tree, (path, line), False)
        made: list[Any] = []
        with monkeypatch.context() as m:
            m.setattr(bodies_module, "update_bodies", _recording(made))
            result = _update(tree, store)
        if made and made[0] is not None and result.graph["edges_removed"]:
            break
        (tree / path).write_text(text, encoding="utf-8")
        _update(tree, store)
    else:
        pytest.fail("no call of this tree removes an edge alone")
    rows = {p: set(ids) for p, ids in file_elements(SessionStore(store).load_state("m")[1]).items()}
    assert _rows(store) == rows
    (tree / path).write_text(text, encoding="utf-8")  # the call put back: this path again
    made.clear()
    with monkeypatch.context() as m:
        m.setattr(bodies_module, "update_bodies", _recording(made))
        assert _update(tree, store).graph["edges_added"] >= 1
    assert made and made[0] is not None
    rows = {p: set(ids) for p, ids in file_elements(SessionStore(store).load_state("m")[1]).items()}
    assert _rows(store) == rows
    map_code([tree], agent="code", jobs=1, store=tmp_path / "fresh.db", session_id="f")
    assert graph_of(store, "m") == graph_of(tmp_path / "fresh.db", "f")


def _taken(tree: Path, store: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[bool, Any]:
    """One update: whether this path made it, and its result."""
    made: list[Any] = []
    with monkeypatch.context() as m:
        m.setattr(bodies_module, "update_bodies", _recording(made))
        result = _update(tree, store)
    return bool(made) and made[0] is not None, result


def test_a_file_whose_text_is_not_its_bytes_is_known_by_its_texts_hash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """This path does not walk the tree: the facts of the files that did not change come from the cache by
    their texts' hashes, which the index keeps. A file that starts with a byte order mark (which the walk
    drops) is known by its text's hash, not its bytes': an edit elsewhere takes this path; edits of that file
    keep its hash in step (``TreeIndex.note``); every graph is a fresh map's."""
    tree, store = tmp_path / "tree", tmp_path / "s.db"
    shutil.copytree(CODE_FIXTURES / "java", tree)
    marked = next(p for p in sorted(tree.rglob("*.java")) if p.name == "AuthService.java")
    marked.write_bytes(b"\xef\xbb\xbf" + marked.read_bytes())
    map_into_store(tree, store)
    found = _calls(tree)
    others = [c for c in found if not c[0].endswith("AuthService.java")]
    own = [c for c in found if c[0].endswith("AuthService.java")]

    def first_taken(candidates: list[tuple[str, int]]) -> tuple[str, int]:
        """The first call whose duplicate this path updates (each update's graph a fresh map's)."""
        for at in candidates:
            _edit(tree, at, True)
            taken, _ = _taken(tree, store, monkeypatch)
            map_code([tree], agent="code", jobs=1, store=tmp_path / "fresh.db", session_id="f")
            assert graph_of(store, "m") == graph_of(tmp_path / "fresh.db", "f")
            for made in tmp_path.glob("fresh.db*"):
                made.unlink()
            if taken:
                return at
        pytest.fail("no call duplicated took this path")

    other = first_taken(others)
    first_taken(own)  # the marked file edited: its text's new hash noted
    assert first_taken([other]) == other


def test_a_file_linked_with_the_edited_one_is_never_parsed_from_the_empty_text_that_stands_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The files this path links with the edited ones are not read: their whole facts come from the cache.
    When one's are missing (here: unreadable), the general path parses that file from the disk, and the graph
    is a fresh map's. chi's ``chain.go`` declares methods of a type of ``chi.go``: the two are linked
    together."""
    import igg.mapping.remap as remap_module

    tree, store = tmp_path / "tree", tmp_path / "s.db"
    shutil.copytree(CODE_FIXTURES / "go" / "chi", tree)
    map_into_store(tree, store)
    with sqlite3.connect(sidecar_path(store, ".codefacts")) as db:
        keys = [k for (k,) in db.execute("SELECT key FROM facts") if k.split("\x00")[1] == "chi.go"]
        assert len(keys) == 1
        db.execute("UPDATE facts SET declared = coalesce(declared, data), data = x'00' WHERE key = ?", keys)
    line = (tree / "chain.go").read_text(encoding="utf-8").split("\n").index("\tc.chain.ServeHTTP(w, r)")
    _edit(tree, ("chain.go", line), True)
    analyzed: list[tuple[str, str]] = []
    analyze = remap_module.analyze

    def recording(source: Any, **kwargs: Any) -> Any:
        analyzed.append((source.path, source.text))
        return analyze(source, **kwargs)

    monkeypatch.setattr(remap_module, "analyze", recording)
    taken, _ = _taken(tree, store, monkeypatch)
    assert not taken
    assert [p for p, _ in analyzed] == ["chi.go"]
    assert analyzed[0][1] == (tree / "chi.go").read_text(encoding="utf-8")
    map_code([tree], agent="code", jobs=1, store=tmp_path / "fresh.db", session_id="f")
    assert graph_of(store, "m") == graph_of(tmp_path / "fresh.db", "f")


def _unreadable_but(store: Path, language: str) -> int:
    """Make the cached facts of every file not of ``language`` unreadable (as a damaged row reads: the general
    path would parse the file again); how many."""
    with sqlite3.connect(sidecar_path(store, ".codefacts")) as db:
        keys = [(k,) for (k,) in db.execute("SELECT key FROM facts") if k.split(".")[1] != language]
        db.executemany("UPDATE facts SET data = x'00', declared = x'00' WHERE key = ?", keys)
    return len(keys)


@pytest.mark.parametrize("language", ["go", "java", "typescript"])
def test_an_edit_reads_the_facts_of_its_own_language_alone(
    language: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No analyzer resolves a name across languages: a call added to a body of one language reaches no file
    of another, whose facts this path does not read. On the polyglot tree (Go, Java, TypeScript and Python;
    with ky and chi beside it), every other language's cached facts unreadable: a call duplicated in a file of
    ``language`` still takes this path, and the graph is a fresh map's."""
    tree, store = tmp_path / "tree", tmp_path / "s.db"
    shutil.copytree(CODE_FIXTURES / "polyglot", tree)
    shutil.copytree(CODE_FIXTURES / "typescript" / "ky", tree / "ky")
    shutil.copytree(CODE_FIXTURES / "go" / "chi", tree / "chi")
    map_into_store(tree, store)
    suffix = {"go": ".go", "java": ".java", "typescript": ".ts"}[language]
    for at in [c for c in _calls(tree) if c[0].endswith(suffix)]:
        assert _unreadable_but(store, language) > 0
        _edit(tree, at, True)
        taken, _ = _taken(tree, store, monkeypatch)
        if taken:
            break
    else:
        pytest.fail(f"no {language} call duplicated took this path")
    map_code([tree], agent="code", jobs=1, store=tmp_path / "fresh.db", session_id="f")
    assert graph_of(store, "m") == graph_of(tmp_path / "fresh.db", "f")


_SHARED = {
    "util.py": "import os\n\n\ndef f():\n    return os.getcwd()\n\n\ndef g():\n    f()\n    return 1\n",
    "util.ts": 'import * as os from "os";\n\nexport function f(): string {\n  return os.homedir();\n}\n\n'
    "export function g(): number {\n  f();\n  return 1;\n}\n",
    "main.ts": 'import { f, g } from "./util";\n\nexport function run(): void {\n  g();\n  f();\n}\n',
}
"""A tree whose Python and TypeScript files share symbols: the outside package ``os`` both import, and
``util.f``/``util.g`` (each language names the root's ``util`` module alike)."""


def test_symbols_shared_with_a_file_of_another_language_are_updated_as_a_fresh_map_makes_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """This path links the files of the edited file's language alone, so a symbol a file of another language
    declares too is one it may place otherwise: it changes no node the edited files do not hold, and leaves
    such an edit to the general path. Every TypeScript call duplicated, then deleted, one at a time, in both
    trees (ky beside them, so that no change is large enough to keep a snapshot): each update's graph and
    step equal the general path's, and the last graph a fresh map's."""
    trees = {}
    for name in ("fast", "slow"):
        shutil.copytree(CODE_FIXTURES / "typescript" / "ky", tmp_path / name / "tree" / "ky")
        for path, text in _SHARED.items():
            (tmp_path / name / "tree" / path).write_text(text, encoding="utf-8")
        map_into_store(tmp_path / name / "tree", tmp_path / name / "s.db")
        trees[name] = (tmp_path / name / "tree", tmp_path / name / "s.db")
    (fast, fast_store), (slow, slow_store) = trees["fast"], trees["slow"]
    edits = [(at, twice) for twice in (True, False) for at in _calls(fast) if at[0] in _SHARED]
    assert len(edits) >= 6
    for at, twice in edits:
        for tree in (fast, slow):
            _edit(tree, at, twice)
        _, kept = _taken(fast, fast_store, monkeypatch)
        done = _general(monkeypatch)
        general = _update(slow, slow_store)
        done()
        assert (kept.graph, kept.step) == (general.graph, general.step), at
        assert _step(fast_store, kept.step) == _step(slow_store, general.step), at
    map_code([fast], agent="code", jobs=1, store=tmp_path / "fresh.db", session_id="f")
    assert graph_of(fast_store, "m") == graph_of(tmp_path / "fresh.db", "f")


def _logged(work: Callable[[], Any]) -> tuple[Any, list[str]]:
    """What ``work`` returns, and the events it logged."""
    with capture_logs() as logs:
        result = work()
    return result, [e["event"] for e in logs]


def _saved_by_rename(path: Path, text: str) -> None:
    """Save ``text`` to ``path`` as editors that save safely do (and ``git checkout``, ``sed -i``): a new file
    beside it, renamed over it. Its directory's time changes; its listing does not."""
    new = path.with_name(f".{path.name}.swp")
    new.write_text(text, encoding="utf-8")
    os.replace(new, path)


def test_an_edit_saved_by_a_rename_over_the_file_is_updated_by_the_fast_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file saved by a rename over it changes its directory's time: the index lists that directory again,
    finds the same entries, and the update goes on as for a file written in place (here: a call duplicated,
    updated without loading the whole graph). A file no language reads, added beside it, changes nothing;
    a source file added takes the general path, which maps it. Each graph is a fresh map's."""
    tree, store = tmp_path / "tree", tmp_path / "s.db"
    shutil.copytree(CODE_FIXTURES / "java", tree)
    map_into_store(tree, store)
    for path, line in _calls(tree):
        before = (tree / path).read_text(encoding="utf-8")
        lines = before.split("\n")
        lines.insert(line, lines[line])
        mtime = (tree / path).parent.stat().st_mtime_ns
        _saved_by_rename(tree / path, "\n".join(lines))
        assert (tree / path).parent.stat().st_mtime_ns != mtime
        taken, result = _taken(tree, store, monkeypatch)
        if taken:
            break
        (tree / path).write_text(before, encoding="utf-8")
        _update(tree, store)
    else:
        pytest.fail("no call saved by a rename took the bodies path")
    assert result.files["changed"] == [path]
    map_code([tree], agent="code", jobs=1, store=tmp_path / "fresh.db", session_id="f")
    assert graph_of(store, "m") == graph_of(tmp_path / "fresh.db", "f")
    (tree / path).with_name("NOTES.txt").write_text("not a source file\n", encoding="utf-8")
    (tree / path).with_name("__pycache__").mkdir()  # as a test run makes one
    unchanged, events = _logged(lambda: _update(tree, store))
    assert unchanged.files["changed"] == [] and "map_code_update_unchanged" in events
    (tree / path).with_name("Extra.java").write_text(
        (tree / path).read_text(encoding="utf-8").replace("class ", "class Extra", 1), encoding="utf-8"
    )
    added = _update(tree, store)
    assert added.files["added"] == [str(Path(path).with_name("Extra.java"))]
    for made in tmp_path.glob("fresh.db*"):
        made.unlink()
    map_code([tree], agent="code", jobs=1, store=tmp_path / "fresh.db", session_id="f")
    assert graph_of(store, "m") == graph_of(tmp_path / "fresh.db", "f")
