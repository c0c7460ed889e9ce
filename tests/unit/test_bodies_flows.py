"""A Python edit that changes value flows and keeps every name (a call added or removed, an argument changed)
is updated without loading the whole graph (``remap._link_flows``): the program is solved again, and only the
files whose calls it now resolves otherwise than the last link did are linked again and loaded. The update
equals the general path's (step record, mutations, the graph with its ids and provenance) and a fresh map's.
Judged on a tree written here (a call that passes another class reaches a method of another file), on the
Python fixture and on structlog (a real package, IGG's own dependency, copied from where it is installed)."""

from __future__ import annotations

import random
import re
import shutil
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import structlog

from igg.codemap.treeindex import INDEX_SUFFIX
from igg.service import map_code
from igg.store import SessionStore
from igg.store.codec import canonical
from igg.store.location import sidecar_path
from tests.codegraph import CODE_FIXTURES, map_into_store
from tests.unit.test_bodies import _taken, _update
from tests.unit.test_code_update import graph_of
from tests.unit.test_samefacts import _general, _step

_TREE = {
    "app/__init__.py": "",
    "app/engines.py": (
        "class Fast:\n    def go(self):\n        return 1\n\n\n"
        "class Slow:\n    def go(self):\n        return 2\n\n    def stop(self):\n        return 3\n"
    ),
    "app/runner.py": "def run(engine):\n    engine.go()\n    return engine\n",
    "app/main.py": (
        "from app.engines import Fast, Slow\nfrom app.runner import run\n\n\n"
        "def main():\n    run(Fast())\n    return 0\n"
    ),
    "app/other.py": "from app.engines import Fast\n\n\ndef other():\n    Fast().go()\n",
}
"""``main`` passes a ``Fast`` to ``runner.run``, which calls ``engine.go()``: what ``run`` calls is decided in
``main.py``."""
_CALL = re.compile(r"^\s+[A-Za-z_][\w.]*\([^()]*(?:\([^()]*\))?[^()]*\)\s*$")
"""A statement that is one call (its arguments may hold one call more)."""


def _whole_loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The sessions loaded whole from now on (``SessionStore.load_state``)."""
    loads: list[str] = []
    load_state = SessionStore.load_state

    def whole(self: SessionStore, *args: Any, **kwargs: Any) -> Any:
        loads.append(str(args[0]))
        return load_state(self, *args, **kwargs)

    monkeypatch.setattr(SessionStore, "load_state", whole)
    return loads


def _mapped_tree(tmp_path: Path) -> tuple[Path, Path]:
    """``_TREE`` written under ``tmp_path`` and mapped into a store beside it: (tree, store)."""
    tree, store = tmp_path / "tree", tmp_path / "s.db"
    for path, text in _TREE.items():
        (tree / path).parent.mkdir(parents=True, exist_ok=True)
        (tree / path).write_text(text, encoding="utf-8")
    map_into_store(tree, store)
    return tree, store


def _updated_without_the_whole_graph(
    tree: Path, store: Path, path: Path, texts: Sequence[str], monkeypatch: pytest.MonkeyPatch
) -> Iterator[Any]:
    """Each update after ``path`` is given each of ``texts``, which the fast paths made without loading the
    whole graph."""
    loads = _whole_loads(monkeypatch)
    for text in texts:
        path.write_text(text, encoding="utf-8")
        loads.clear()
        taken, result = _taken(tree, store, monkeypatch)
        assert taken and loads == []
        yield result


def _fresh(tree: Path, tmp_path: Path) -> Any:
    for made in tmp_path.glob("fresh.db*"):
        made.unlink()
    map_code([tree], agent="code", jobs=1, store=tmp_path / "fresh.db", session_id="f")
    return graph_of(tmp_path / "fresh.db", "f")


def test_a_call_that_passes_another_class_links_again_the_file_whose_calls_it_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``main`` passes a ``Slow`` to ``run`` too: ``run``'s ``engine.go()`` now reaches ``Slow.go`` as well.
    That update links ``main.py`` (edited) and ``runner.py`` (whose calls changed) alone, loads no whole
    graph, and gives a fresh map's graph; deleting the call takes the edge away again the same way."""
    tree, store = _mapped_tree(tmp_path)
    main = tree / "app" / "main.py"
    edits = (
        _TREE["app/main.py"].replace("    return 0", "    run(Slow())\n    return 0"),
        _TREE["app/main.py"],
    )
    for result in _updated_without_the_whole_graph(tree, store, main, edits, monkeypatch):
        assert result.files["changed"] == ["app/main.py"] and result.files["relinked"] == 2
        assert (
            result.graph["edges_added"] + result.graph["edges_removed"] >= 2
        )  # main -> Slow, run -> Slow.go
        assert graph_of(store, "m") == _fresh(tree, tmp_path)
    assert _update(tree, store).graph["nodes_changed"] == 0


def test_a_call_that_changes_the_calls_of_a_django_view_keeps_the_edges_its_routes_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Django's routes name their views in another file: the route's file states the view's ``HANDLES``
    edges. A call that changes what a function of the views' file calls links that file again, and with it
    every file of routes and of handlers: the ``HANDLES`` edges stay, no whole graph is loaded, and the graph
    is a fresh map's."""
    tree, store = tmp_path / "tree", tmp_path / "s.db"
    shutil.copytree(CODE_FIXTURES / "http" / "users" / "legacy", tree / "legacy")
    shop = tree / "legacy" / "shop"
    (shop / "engines.py").write_text(_TREE["app/engines.py"], encoding="utf-8")
    views = (shop / "views.py").read_text(encoding="utf-8")
    (shop / "views.py").write_text(views + "\n\ndef run(engine):\n    engine.go()\n", encoding="utf-8")
    main = (
        "from shop.engines import Fast, Slow\nfrom shop.views import run\n\n\ndef main():\n    run(Fast())\n"
    )
    (shop / "main.py").write_text(main, encoding="utf-8")
    map_into_store(tree, store)
    handles = _count(store, "HANDLES")
    assert handles >= 4
    loads = _whole_loads(monkeypatch)
    (shop / "main.py").write_text(main + "    run(Slow())\n", encoding="utf-8")
    taken, result = _taken(tree, store, monkeypatch)
    assert taken and loads == []
    assert result.graph["edges_added"] == 2  # main -> Slow, run -> Slow.go
    assert _count(store, "HANDLES") == handles
    assert graph_of(store, "m") == _fresh(tree, tmp_path)


def _count(store: Path, label: str) -> int:
    """How many edges of ``label`` the stored map holds."""
    _, state, _ = SessionStore(store).load_state("m")
    return sum(1 for _, _, _, d in state.edges() if d["type"] == label)


def test_when_the_last_links_calls_are_not_kept_the_general_path_updates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the calls the last link resolved, which files' calls changed cannot be told: the general path
    updates, and the graph is a fresh map's."""
    tree, store = _mapped_tree(tmp_path)
    with sqlite3.connect(sidecar_path(store, INDEX_SUFFIX)) as db:
        db.execute("DELETE FROM calls")
    main = tree / "app" / "main.py"
    main.write_text(
        _TREE["app/main.py"].replace("    return 0", "    run(Slow())\n    return 0"), encoding="utf-8"
    )
    taken, result = _taken(tree, store, monkeypatch)
    assert not taken and result.files["relinked"] == result.files["read"]
    assert graph_of(store, "m") == _fresh(tree, tmp_path)


def _python_calls(tree: Path) -> list[tuple[str, int]]:
    """Each call statement of the tree's Python files: (path, line index)."""
    found = []
    for p in sorted(tree.rglob("*.py")):
        for i, line in enumerate(p.read_text(encoding="utf-8").split("\n")):
            if _CALL.match(line) and not line.strip().startswith(("return", "if", "assert", "raise", "#")):
                found.append((p.relative_to(tree).as_posix(), i))
    return found


@pytest.mark.parametrize("name", ["python", "structlog"])
def test_python_calls_added_and_removed_are_updated_as_the_general_path_updates_them(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Call statements of Python files duplicated (the same call with its arguments once more) and deleted (a
    value that no longer flows), one or two at a time, in two copies of the tree: one updated as
    ``igg map-code --update`` updates, the other by the general path. Each step, its record and the stored
    graph are alike; the last graph is a fresh map's."""
    source = CODE_FIXTURES / "python" if name == "python" else Path(structlog.__file__).parent
    trees = {}
    for copy in ("fast", "slow"):
        shutil.copytree(
            source, tmp_path / copy / "tree" / source.name, ignore=shutil.ignore_patterns("__pycache__")
        )
        map_into_store(tmp_path / copy / "tree", tmp_path / copy / "s.db")
        trees[copy] = (tmp_path / copy / "tree", tmp_path / copy / "s.db")
    (fast, fast_store), (slow, slow_store) = trees["fast"], trees["slow"]
    taken = 0
    for round_ in range(6):
        rng = random.Random(round_)
        found = _python_calls(fast)
        picked = sorted(rng.sample(found, min(len(found), rng.randint(1, 2))), reverse=True)
        duplicate = [rng.random() < 0.5 for _ in picked]
        for tree in (fast, slow):
            for (path, line), twice in zip(picked, duplicate, strict=True):
                lines = (tree / path).read_text(encoding="utf-8").split("\n")
                if twice:
                    lines.insert(line, lines[line])
                else:
                    lines[line] = lines[line][: len(lines[line]) - len(lines[line].lstrip())] + "pass"
                (tree / path).write_text("\n".join(lines), encoding="utf-8")
        made, kept = _taken(fast, fast_store, monkeypatch)
        done = _general(monkeypatch)
        general = _update(slow, slow_store)
        done()
        taken += made
        assert (kept.graph, kept.step, kept.iteration) == (general.graph, general.step, general.iteration)
        assert _step(fast_store, kept.step) == _step(slow_store, general.step)
        assert canonical(SessionStore(fast_store).load_state("m")[1]) == canonical(
            SessionStore(slow_store).load_state("m")[1]
        )
    assert taken >= 3
    assert graph_of(fast_store, "m") == _fresh(fast, tmp_path)


def test_every_store_an_update_or_a_map_opens_is_closed_when_it_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An update may try three paths, each reading the store: it opens one store for them all and closes it
    when it ends, whichever path answers (a PostgreSQL store left open has its pool closed by the collector,
    from one of the pool's own threads). A line's constant changed, a call added, a file added; and a map
    given its store's path closes the stores it opened to record the run and to keep the tree's index."""
    tree, store = _mapped_tree(tmp_path)
    opened: list[SessionStore] = []
    closed: list[SessionStore] = []
    init, close = SessionStore.__init__, SessionStore.close

    def opening(self: SessionStore, *args: Any, **kwargs: Any) -> None:
        opened.append(self)
        init(self, *args, **kwargs)

    def closing(self: SessionStore) -> None:
        closed.append(self)
        close(self)

    monkeypatch.setattr(SessionStore, "__init__", opening)
    monkeypatch.setattr(SessionStore, "close", closing)
    main = tree / "app" / "main.py"
    edits = [
        lambda: main.write_text(_TREE["app/main.py"].replace("return 0", "return 1"), encoding="utf-8"),
        lambda: main.write_text(
            _TREE["app/main.py"].replace("    return 0", "    run(Slow())\n    return 0")
        ),
        lambda: (tree / "app" / "more.py").write_text(_TREE["app/other.py"], encoding="utf-8"),
    ]
    for edit in edits:
        opened.clear()
        closed.clear()
        edit()
        result = _update(tree, store)
        assert result.graph["nodes_changed"] + result.graph["nodes_added"] + result.graph["edges_added"] > 0
        assert opened and all(any(s is c for c in closed) for s in opened)
    opened.clear()
    closed.clear()
    map_code([tree], agent="code", jobs=1, store=tmp_path / "another.db", session_id="a")  # a map, too
    assert len(opened) >= 2 and all(any(s is c for c in closed) for s in opened)


def test_a_function_whose_parameters_changed_is_updated_with_the_files_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A parameter added to ``run``: its node's signature changes, its flows too, and ``main.py`` names it.
    The update links the changed file, the files naming what changed and those whose calls changed, loads no
    whole graph, and gives a fresh map's graph; then a parameter taken away, the same."""
    tree, store = _mapped_tree(tmp_path)
    runner = tree / "app" / "runner.py"
    edits = (_TREE["app/runner.py"].replace("run(engine)", "run(engine, times=1)"), _TREE["app/runner.py"])
    for result in _updated_without_the_whole_graph(tree, store, runner, edits, monkeypatch):
        assert result.files["changed"] == ["app/runner.py"] and result.graph["nodes_changed"] >= 1
        assert 2 <= result.files["relinked"] < result.files["read"]
        assert graph_of(store, "m") == _fresh(tree, tmp_path)


_CLASS_VIEWS = (
    "from django.views import View\n\n\nclass ReviewView(View):\n    def get(self, request, slug):\n"
    '        request.cursor.execute("SELECT id FROM reviews")\n        return None\n\n'
    "    def post(self, request, slug):\n        return None\n"
)
"""A views file of class-based views alone: its methods' ``HANDLES`` edges are stated by ``urls.py``."""


def test_a_class_based_view_whose_body_changed_keeps_the_edges_its_routes_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A class-based view's query changed from reading its table to deleting from it (its facts changed, its
    names and flows did not): the route's file states the view's ``HANDLES`` edges, so the file is not linked
    alone (which dropped them). The graph is a fresh map's."""
    tree, store = tmp_path / "tree", tmp_path / "s.db"
    shutil.copytree(CODE_FIXTURES / "http" / "users" / "legacy", tree / "legacy")
    views = tree / "legacy" / "shop" / "views.py"
    views.write_text(_CLASS_VIEWS, encoding="utf-8")
    map_into_store(tree, store)
    handles = _count(store, "HANDLES")
    assert handles >= 2
    views.write_text(_CLASS_VIEWS.replace("SELECT id FROM", "DELETE FROM"), encoding="utf-8")
    result = _update(tree, store)
    assert result.graph["edges_added"] == result.graph["edges_removed"] == 1  # READS_FROM -> WRITES_TO
    assert _count(store, "HANDLES") == handles
    assert graph_of(store, "m") == _fresh(tree, tmp_path)
