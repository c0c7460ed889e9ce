"""A file added beside others of its language, or removed from beside them, is updated without walking the
tree or loading the graph: the tree's index finds it in a folder that holds what it held but for it
(``TreeIndex.changed``), it is read and named as the walk would (``igg.mapping.added``), and linked with the
files that name what it declares or import its path (``moved.moved_names``), whose elements alone are loaded
(``igg.mapping.bodies``); a file removed, once every file holding an edge to its nodes is among them
(``TreeIndexes.holding``). Each step here is judged against a fresh map of the same tree, and the index's rows
against the graph's."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from igg.codemap.treeindex import Added, TreeIndex
from igg.codemap.walk import DEFAULT_MAX_BYTES, walk
from igg.mapping import remap
from igg.mapping.update import update_map
from igg.mapping.updated import file_elements
from igg.store import SessionStore
from tests.codegraph import map_into_store
from tests.unit.test_bodies import _rows, _taken
from tests.unit.test_code_update import graph_of
from tests.unit.test_update_imports import fresh_graph, mapped_beside_ky, updated

_TS_LATER = "export function later(): number {\n  return 1;\n}\n"
_TS_USE = 'import { later } from "./later";\n\nexport function use(): number {\n  return later();\n}\n'

# (files first mapped, then the edits in turn: (path, text or None to delete it, or the path it is renamed
# to, whether the update takes this path)); ky beside each tree, so that no edit is large enough to keep a
# snapshot of the whole graph
CASES = {
    "a TypeScript file another imported before it was written, then edited, then removed": (
        {"app/a.ts": "export const n = 1;\n", "app/use.ts": _TS_USE, "app/side.ts": 'import "./later.js";\n'},
        [
            ("app/later.ts", _TS_LATER, True),
            ("app/later.ts", _TS_LATER + "\nexport function again(): number {\n  return later();\n}\n", True),
            ("app/later.ts", None, True),  # removed: the files that import it linked with it
            ("app/later.ts", _TS_LATER, True),  # put back: every file linked, the census made again
        ],
    ),
    "a TypeScript file added with the file that imports it": (
        {"app/a.ts": "export const n = 1;\n", "app/use.ts": "export const m = 2;\n"},
        [("app/later.ts", _TS_LATER, True), ("app/use.ts", _TS_USE, True)],
    ),
    "two TypeScript files added in one folder, a class implementing an interface of the other": (
        {"app/a.ts": "export const n = 1;\n"},
        [
            ("app/shape.ts", "export interface Shape {\n  area(): number;\n}\n", True),
            (
                "app/square.ts",
                'import { Shape } from "./shape";\n\nexport class Square implements Shape {\n'
                "  area(): number {\n    return 4;\n  }\n}\n",
                True,
            ),
        ],
    ),
    "a Java class another returned before it was written, whose method a third calls through it": (
        {
            "java/com/acme/Y.java": "package com.acme;\n\npublic class Y {\n"
            "    public static T get() {\n        return new T();\n    }\n}\n",
            "java/com/acme/X.java": "package com.acme;\n\npublic class X {\n"
            "    public int use() {\n        return Y.get().size();\n    }\n}\n",
        },
        [
            (
                "java/com/acme/T.java",
                "package com.acme;\n\npublic class T {\n"
                "    public int size() {\n        return 1;\n    }\n}\n",
                True,
            )
        ],
    ),
    "a Python module another imported before it was written (the program solved again)": (
        {
            "app/__init__.py": "",
            "app/a.py": "def one():\n    return 1\n",
            "app/use.py": "from app import later\n\n\ndef use():\n    return later.run()\n",
        },
        [("app/later.py", "from app.a import one\n\n\ndef run():\n    return one()\n", True)],
    ),
    "a Go file adding a method to a type of its package": (
        {
            "go/go.mod": "module example.com/m\n\ngo 1.21\n",
            "go/p/t.go": "package p\n\ntype T struct{}\n\nfunc Use(t T) int {\n\treturn t.Size()\n}\n",
        },
        [("go/p/size.go", "package p\n\nfunc (t T) Size() int {\n\treturn 1\n}\n", True)],
    ),
    "a Java class another names before it was written": (
        {
            "java/com/acme/A.java": "package com.acme;\n\npublic class A {\n"
            "    public int use(Later l) {\n        return l.run();\n    }\n}\n",
        },
        [
            (
                "java/com/acme/Later.java",
                "package com.acme;\n\npublic class Later {\n"
                "    public int run() {\n        return 1;\n    }\n}\n",
                True,
            )
        ],
    ),
    "a TypeScript file renamed, then removed, while another still imports it by its first name": (
        {
            "app/a.ts": "export const n = 1;\n",
            "app/money.ts": "export function cents(n: number): number {\n  return n * 100;\n}\n",
            "app/pay.ts": 'import { cents } from "./money";\n\nexport const due = cents(3);\n',
        },
        [
            ("app/money.ts", "app/cash.ts", True),  # renamed: one file removed, one added, in one update
            ("app/cash.ts", None, True),
        ],
    ),
    "a Go file removed that declared a method of a type of its package": (
        {
            "go/go.mod": "module example.com/m\n\ngo 1.21\n",
            "go/p/t.go": "package p\n\ntype T struct{}\n\nfunc Use(t T) int {\n\treturn t.Size()\n}\n",
            "go/p/size.go": "package p\n\nfunc (t T) Size() int {\n\treturn 1\n}\n",
        },
        [("go/p/size.go", None, True)],
    ),
    "a Java class removed that another calls, and a Python module another imports": (
        {
            "java/com/acme/A.java": "package com.acme;\n\npublic class A {\n"
            "    public int use(Later l) {\n        return l.run();\n    }\n}\n",
            "java/com/acme/Later.java": "package com.acme;\n\npublic class Later {\n"
            "    public int run() {\n        return 1;\n    }\n}\n",
            "app/__init__.py": "",
            "app/a.py": "def one():\n    return 1\n",
            "app/later.py": "from app.a import one\n\n\ndef run():\n    return one()\n",
            "app/use.py": "from app import later\n\n\ndef use():\n    return later.run()\n",
        },
        [("java/com/acme/Later.java", None, True), ("app/later.py", None, True)],
    ),
    "a Python module no file names, whose value another module calls, added then removed": (
        {
            "app/__init__.py": "",
            "app/a.py": "def apply(cb):\n    return cb()\n",
            "app/b.py": "def one():\n    return 1\n",
        },
        [
            (
                "app/lone.py",
                "from app.a import apply\nfrom app.b import one\n\n\ndef go():\n    return apply(one)\n",
                True,
            ),
            ("app/lone.py", None, True),  # the program solved again: apply's call of one goes
        ],
    ),
    "files the general path takes: an index file, a file in a new folder, a Java interface": (
        {
            "app/a.ts": "export const n = 1;\n",
            "java/com/acme/A.java": "package com.acme;\n\npublic class A {\n}\n",
        },
        [
            ("app/index.ts", 'export { n } from "./a";\n', False),
            ("app/sub/b.ts", "export const b = 2;\n", False),
            (
                "java/com/acme/Run.java",
                "package com.acme;\n\npublic interface Run {\n    int run();\n}\n",
                False,
            ),
            ("app/sub/b.ts", None, False),  # its folder's last file: the folder goes with it
        ],
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_file_added_is_updated_from_the_files_that_name_it_as_a_fresh_map(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each edit in turn: the path expected takes it (True: the files it reaches, loaded alone, the whole
    graph never loaded; False: the general path), the stored graph equals a fresh map's, and the index holds
    each file's elements as the graph does, which the next update reads."""
    files, edits = CASES[name]
    tree, store = mapped_beside_ky(tmp_path, files)
    for n, (path, text, alone) in enumerate(edits):
        existed = (tree / path).exists()
        if text is None:
            (tree / path).unlink()
        elif text in files or text.startswith(("app/", "go/", "java/")):  # a rename
            (tree / path).rename(tree / text)
        else:
            (tree / path).parent.mkdir(parents=True, exist_ok=True)
            (tree / path).write_text(text, encoding="utf-8")
        result = updated(tree, store, monkeypatch, alone)
        if not (tree / path).exists() and (tree / str(text)).is_file() and text != path:
            assert result.files["renamed"] == [{"from": path, "to": text}], result.files
        else:
            assert path in (
                result.files["changed"] if existed and text else result.files["added" if text else "removed"]
            ), result.files
        assert graph_of(store, "m") == fresh_graph(tree, tmp_path / f"fresh{n}.db"), (name, n)
        if alone:
            rows = {p: set(ids) for p, ids in file_elements(SessionStore(store).load_state("m")[1]).items()}
            assert _rows(store) == rows, (name, n)
    again, result = _taken(tree, store, monkeypatch)  # nothing changed since: the index answers
    assert (again, result.files["reparsed"], result.graph["nodes_added"]) == (False, 0, 0)
    assert result.seconds["load"] == 0.0


def test_files_added_in_two_languages_with_a_file_changed_are_one_update(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A TypeScript file added, the file that now imports it changed, and a Python module added, all before
    one update: taken by the files they reach, each listed as added or changed, and a fresh map's graph."""
    files = {
        "app/a.ts": "export const n = 1;\n",
        "app/use.ts": "export const m = 2;\n",
        "py/app/__init__.py": "",
        "py/app/one.py": "def one():\n    return 1\n",
    }
    tree, store = mapped_beside_ky(tmp_path, files)
    (tree / "app" / "later.ts").write_text(_TS_LATER)
    (tree / "app" / "use.ts").write_text(_TS_USE)
    (tree / "py" / "app" / "two.py").write_text(
        "from app.one import one\n\n\ndef two():\n    return one() + 1\n"
    )
    result = updated(tree, store, monkeypatch, True)
    assert (result.files["added"], result.files["changed"]) == (
        ["app/later.ts", "py/app/two.py"],
        ["app/use.ts"],
    )
    assert graph_of(store, "m") == fresh_graph(tree, tmp_path / "fresh.db")


def test_an_index_file_added_links_the_files_that_import_its_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An ``index.ts`` added is found by a folder's import (``./lib``, ``.``): the files that import its
    folder are linked with it (here both, and it), the whole graph never loaded, and the graph is a fresh
    map's. (Beside ky, whose
    ``package.json`` names ``./distribution/index.js``, an index file links every file: ``CASES``.)"""
    tree, store = tmp_path / "tree", tmp_path / "s.db"
    for n in range(12):  # enough of a graph that the file added is no fifth of it
        (tree / "app" / f"m{n}.ts").parent.mkdir(parents=True, exist_ok=True)
        (tree / "app" / f"m{n}.ts").write_text(f"export function f{n}(): number {{\n  return {n};\n}}\n")
    (tree / "app" / "use.ts").write_text('import "./lib";\n\nexport const u = 1;\n')  # names nothing
    (tree / "app" / "lib").mkdir()
    (tree / "app" / "lib" / "other.ts").write_text('import * as lib from ".";\n\nexport const o = 1;\n')
    map_into_store(tree, store)
    (tree / "app" / "lib" / "index.ts").write_text("export function g(): number {\n  return 2;\n}\n")
    result = updated(tree, store, monkeypatch, True)
    assert result.files["added"] == ["app/lib/index.ts"] and result.files["relinked"] == 3, result.files
    assert graph_of(store, "m") == fresh_graph(tree, tmp_path / "fresh.db")


def test_a_file_removed_whose_edges_another_file_holds_takes_the_general_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file removed while a file not linked with it holds an edge to one of its nodes (here the importer,
    left out of the files found to name it, as a reach that missed it would) is not removed from the part
    of the graph loaded: that edge would stay in the store, its end gone (``TreeIndexes.holding``). The
    general path removes it with every edge to it."""
    files = {"app/a.ts": "export const n = 1;\n", "app/later.ts": _TS_LATER, "app/use.ts": _TS_USE}
    tree, store = mapped_beside_ky(tmp_path, files)
    found = remap._mentioning

    def missing_the_importer(*args: Any, **kwargs: Any) -> set[str] | None:
        reach = found(*args, **kwargs)
        return None if reach is None else reach - {"app/use.ts"}

    (tree / "app" / "later.ts").unlink()
    monkeypatch.setattr(remap, "_mentioning", missing_the_importer)
    result = updated(tree, store, monkeypatch, False)
    assert result.files["removed"] == ["app/later.ts"]
    state = SessionStore(store).load_state("m")[1]
    assert all(d["from"] in state.nodes and d["to"] in state.nodes for _, d in state.edge_data())
    assert not any(state.node_properties(n).get("path") == "app/later.ts" for n in state.nodes)


def test_a_file_removed_from_a_small_graph_is_judged_by_the_graph_it_leaves(tmp_path: Path) -> None:
    """A file removed whose nodes and edges are more than a fifth of the graph it leaves, though less than a
    fifth of the graph before: its step keeps a snapshot, which a part of the graph cannot stand for, so the
    general path takes it (the files' path judged it by the graph before and failed as it was kept)."""
    tree, store = tmp_path / "tree", tmp_path / "s.db"
    (tree / "app").mkdir(parents=True)
    for n in range(10):
        (tree / "app" / f"f{n}.ts").write_text(f"export function f{n}(): number {{\n  return {n};\n}}\n")
    gone = "".join(f"export function g{n}(): number {{\n  return {n};\n}}\n" for n in range(4))
    (tree / "app" / "gone.ts").write_text(gone)
    map_into_store(tree, store)
    (tree / "app" / "gone.ts").unlink()
    result = update_map([tree], store, session_id="m", jobs=1)
    assert result.files["removed"] == ["app/gone.ts"]
    assert graph_of(store, "m") == fresh_graph(tree, tmp_path / "fresh.db")


def _indexed(tree: Path) -> TreeIndex:
    walked = walk([tree], listings=True)
    return TreeIndex.of(walked, "s", 1)


def _aged(tree: Path) -> None:
    """Every file and folder of ``tree`` dated an hour back: times a walk can trust (``RACY_NS``)."""
    for folder, dirs, names in os.walk(tree):
        for name in [*dirs, *names, ""]:
            path = os.path.join(folder, name)
            stat = os.stat(path)
            os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns - 3_600_000_000_000))


def test_the_index_tells_files_added_to_a_folder_from_any_other_change(tmp_path: Path) -> None:
    """A source file added to a folder that holds what it held is reported with its bytes, and a file it read
    that is gone by its path (asked for: ``removed``); a file of no language read changes nothing; a folder
    added, a file gone unasked, a file larger than the walk's default limit, or no ``added`` list asked for
    answer None (the general path walks the tree)."""
    tree = tmp_path / "tree"
    (tree / "app").mkdir(parents=True)
    (tree / "app" / "a.py").write_text("A = 1\n")
    index = _indexed_at(tree)
    (tree / "app" / "notes.txt").write_text("nothing read\n")
    added: list[Added] = []
    assert index.changed(added=added) == [] and added == []
    (tree / "app" / "b.py").write_text("B = 2\n")
    index = _indexed_at(tree)
    (tree / "app" / "c.py").write_text("C = 3\n")
    assert index.changed() is None  # no list for added files: a folder changed
    assert index.changed(added=added) == []
    assert [(path, data) for path, data, _ in added] == [(str(tree / "app" / "c.py"), b"C = 3\n")]
    index = _indexed_at(tree)
    (tree / "app" / "sub").mkdir()
    assert index.changed(added=[]) is None
    index = _indexed_at(tree)
    (tree / "app" / "b.py").unlink()
    (tree / "app" / "d.py").write_text("D = 4\n")
    assert index.changed(added=[]) is None
    added.clear()
    removed: list[str] = []
    assert index.changed(added=added, removed=removed) == []
    assert ([p for p, _, _ in added], removed) == ([str(tree / "app" / "d.py")], [str(tree / "app" / "b.py")])
    index.drop(set(removed))
    assert str(tree / "app" / "b.py") not in index.paths and len(index.paths) == len(index.shas) == 2
    index = _indexed_at(tree)
    (tree / "app" / "a.py").unlink()
    (tree / "app" / "gone").mkdir()  # a folder added with the file removed: not the folder it was
    assert index.changed(added=[], removed=[]) is None
    (tree / "app" / "gone").rmdir()
    index = _indexed_at(tree)
    (tree / "app" / "big.py").write_bytes(b"#" * (DEFAULT_MAX_BYTES + 1))  # not read whole: the walk decides
    assert index.changed(added=[]) is None


def _indexed_at(tree: Path) -> TreeIndex:
    _aged(tree)
    return _indexed(tree)
