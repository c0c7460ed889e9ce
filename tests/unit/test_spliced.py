"""A file whose imports alone changed has its edges spliced into the kept graph of imports
(``igg.mapping.spliced``), where ``igg check`` linked every file again, and so does a file added or removed
beside others of its language, with the files whose imports may find it, where the tree was mapped: pinned,
over random sequences of such edits in three languages, to the graph a fresh map of the tree makes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from igg.codemap.cache import FactsCache
from igg.mapping import kept
from igg.mapping.checking import kept_or_mapped
from igg.mapping.since import tree_state
from tests.support import shop
from tests.support.shop import write

# each file's texts that differ in their imports alone (what the file exports stays, but in TypeScript)
VARIANTS = {
    "shop/util.py": [
        shop.TREE["shop/util.py"],
        "import csv\nfrom shop.db import models\n\n\ndef helper():\n    return 2\n",  # an outside package
        "from shop.api import views\n\n\ndef helper():\n    return 2\n",
        "\n\nfrom shop.db import models\nimport json\n\n\ndef helper():\n    return 2\n",
    ],
    "shop/db/models.py": [
        shop.TREE["shop/db/models.py"],
        "from shop.api import views\n\n\ndef row():\n    return 1\n",  # sqlite3: no other module imports it
        "import sqlite3\nimport csv\n\n\ndef row():\n    return 1\n",
    ],
    "shop/web/app.ts": [
        shop.TREE["shop/web/app.ts"],
        "import { f, h } from './lib';\nimport * as path from 'path';\n\n"
        "export function g(): number {\n  return f() + h();\n}\n",
        "\nexport function g(): number {\n  return 1;\n}\n",
        # an export added too: no link of imports reads it (``TypeScript.declared_for_imports``)
        "import * as lib from './lib';\n\nexport function g(): number {\n  return lib.f();\n}\n"
        "export const k = 1;\n",
    ],
    "shop/tool/main.go": [
        shop.TREE["shop/tool/main.go"],
        shop.IMPORTS["go import"][1],
        'package main\n\nimport "os"\n\nfunc main() {\n\tos.Exit(1)\n}\n',
    ],
    # files added and removed beside others of their language (None: no such file)
    "shop/api/views.py": [shop.TREE["shop/api/views.py"], None],  # models.py imports it
    "shop/db/extra.py": [None, shop.ADDED["new module"][1], "import shop.util\nimport json\n"],
    "shop/web/lib.ts": [shop.TREE["shop/web/lib.ts"], None],  # app.ts imports it
    "shop/web/other.ts": [None, shop.ADDED["new ts module"][1]],  # what app.ts's './other' finds
    "shop/web/index.ts": [None, "import { f } from './lib';\n\nexport const i = f();\n"],  # what '.' finds
    "shop/tool/lib/extra.go": [None, shop.ADDED["new go file"][1]],  # main.go imports its package
}


def spied(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each splice of the kept graph (``kept.spliced_graph``) made a graph, in order."""
    made: list[bool] = []
    splice = kept.spliced_graph

    def spliced(*args: Any, **kwargs: Any) -> Any:
        found = splice(*args, **kwargs)
        made.append(found is not None)
        return found

    monkeypatch.setattr(kept, "spliced_graph", spliced)
    return made


def kept_shop(tmp_path_factory: pytest.TempPathFactory, name: str) -> tuple[Path, FactsCache]:
    """The shop's tree in a folder of its own, and a facts cache on disk beside it."""
    root = tmp_path_factory.mktemp(name) / "tree"
    shop.make(root)
    return root, FactsCache(root.parent / "s.codefacts")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    steps=st.lists(
        st.tuples(st.sampled_from(sorted(VARIANTS)), st.integers(min_value=0, max_value=3)),
        min_size=1,
        max_size=8,
    )
)
@example(steps=[("shop/tool/main.go", 2), ("shop/tool/main.go", 0)])  # main.go states tool's CONTAINS again
@example(steps=[("shop/db/models.py", 1), ("shop/util.py", 1), ("shop/util.py", 0)])  # sqlite3, csv go
@example(steps=[("shop/web/app.ts", 3), ("shop/util.py", 2)])  # an export added with an import: spliced
def test_a_spliced_graph_is_the_graph_a_fresh_map_makes(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, steps: list[tuple[str, int]]
) -> None:
    """Each step a file's imports edited (an outside package first imported or no longer imported, an
    import added, removed or moved to another line), checked with the kept graph: spliced, not linked again
    (but where the edited file was the first to state an edge another file may state too: a Go package's
    ``CONTAINS`` of the package it imports), and equal to a fresh map's graph of imports."""
    root, cache = kept_shop(tmp_path_factory, "spliced")
    made = spied(monkeypatch)
    spliced_once: list[bool] = []
    try:
        kept_or_mapped([root], cache, reads="imports")
        for path, n in steps:
            texts = VARIANTS[path]
            write(root, path, texts[n % len(texts)])
            made.clear()
            state = kept_or_mapped([root], cache, reads="imports")
            assert state.graph == tree_state([root], FactsCache(None), reads="imports").graph, (path, n)
            spliced_once.extend(made)
    finally:
        cache.close()
    assert made in ([], [True], [False])  # the same text again: the kept graph; else spliced or linked
    first = VARIANTS[steps[0][0]]
    if first[steps[0][1] % len(first)] != shop.TREE.get(steps[0][0]) and steps[0][0] != "shop/tool/main.go":
        assert spliced_once[0], steps[0]  # a first edit of imports alone, in a file no package shares


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rounds=st.lists(
        st.lists(
            st.tuples(st.sampled_from(sorted(VARIANTS)), st.integers(min_value=0, max_value=3)),
            min_size=2,
            max_size=4,
        ),
        min_size=1,
        max_size=3,
    )
)
def test_several_files_changed_added_and_removed_before_one_check_splice_as_a_fresh_map_makes(
    tmp_path_factory: pytest.TempPathFactory, rounds: list[list[tuple[str, int]]]
) -> None:
    """Several of those edits between two checks (imports edited, files added and removed, in one language
    or several, as one commit makes them): each check's graph is a fresh map's, spliced or not."""
    root = tmp_path_factory.mktemp("together") / "tree"
    shop.make(root)
    cache = FactsCache(root.parent / "s.codefacts")
    try:
        kept_or_mapped([root], cache, reads="imports")
        for steps in rounds:
            for path, n in steps:
                texts = VARIANTS[path]
                write(root, path, texts[n % len(texts)])
            state = kept_or_mapped([root], cache, reads="imports")
            assert state.graph == tree_state([root], FactsCache(None), reads="imports").graph, steps
    finally:
        cache.close()


def test_a_language_whose_imports_link_by_name_reads_no_declaration_of_other_files() -> None:
    """``Language.imports_by_name`` (the splice links against the kept graph's module names) holds of a
    language whose link of imports reads nothing of other files' declarations."""
    from igg.codemap import language as languages
    from igg.codemap.facts import FileFacts

    named = [name for name in languages.names() if languages.get(name).imports_by_name]
    assert sorted(named) == ["python", "typescript"]
    for name in named:
        facts = FileFacts(path="a/b", language=name, module="a.b", package="a", exports={"x": "x"})
        assert languages.get(name).declared_for_imports(facts) is None


def test_files_edited_beside_an_import_keep_their_edges_and_their_languages_are_not_read(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Go body, a TypeScript body and a Python import edited before one check: the Python file alone is
    linked again (against the Python modules' names), the Go and TypeScript files keep their edges, and no
    file's facts are read from the cache (at 50,000 files the Go and Java files' facts took 1.6 s when a body
    of each language was edited beside the import); the graph is a fresh map's."""
    root = tmp_path_factory.mktemp("beside") / "tree"
    shop.make(root)
    cache = FactsCache(root.parent / "s.codefacts")
    made: list[Any] = []
    splice = kept.spliced_graph
    monkeypatch.setattr(kept, "spliced_graph", lambda *a, **k: made.append(splice(*a, **k)) or made[-1])
    try:
        kept_or_mapped([root], cache, reads="imports")
        for name in ("go body", "ts body"):
            write(root, *shop.BODIES[name])
        write(root, "shop/util.py", VARIANTS["shop/util.py"][2])
        read: list[int] = []
        get_many = cache.get_many
        monkeypatch.setattr(
            cache, "get_many", lambda keys, **k: read.append(len(keys)) or get_many(keys, **k)
        )
        state = kept_or_mapped([root], cache, reads="imports")
        assert made and made[-1] is not None  # spliced
        assert read[-1] == 0  # the splice read no file's facts (before it: the three files' then and now)
        assert state.graph == tree_state([root], FactsCache(None), reads="imports").graph
    finally:
        cache.close()


def test_many_files_added_at_once_are_spliced_as_a_fresh_map_makes(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A commit of 40 Python and 40 TypeScript modules, each importing the one before (more names than the
    facts are searched for: every file's facts are read), then half of them removed: spliced, in one pass over
    the files, and each graph a fresh map's."""
    root, cache = kept_shop(tmp_path_factory, "many")
    made = spied(monkeypatch)
    try:
        kept_or_mapped([root], cache, reads="imports")
        for n in range(40):
            write(
                root, f"shop/db/gen{n}.py", f"from shop.db import gen{n - 1}\n" if n else "import shop.util\n"
            )
            write(root, f"shop/web/gen{n}.ts", f"import {{ g }} from './gen{n - 1}';\nexport const g = 1;\n")
        state = kept_or_mapped([root], cache, reads="imports")
        assert made == [True]
        assert state.graph == tree_state([root], FactsCache(None), reads="imports").graph
        for n in range(0, 40, 2):
            write(root, f"shop/db/gen{n}.py", None)
            write(root, f"shop/web/gen{n}.ts", None)
        state = kept_or_mapped([root], cache, reads="imports")
        assert made[-1]
        assert state.graph == tree_state([root], FactsCache(None), reads="imports").graph
    finally:
        cache.close()


def test_a_folders_first_file_removed_is_spliced_with_the_file_that_states_its_package_now(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first file of a folder in the walk's order states its package's ``CONTAINS`` of the package (every
    file of it states that edge; the graph keeps the first one's): removed, it is spliced with the file next
    in its folder, which states it now (``_restating``), where the splice gave up and every file was linked
    again (7.1 s after the bench's first TypeScript file of a folder was removed at 50,000 files)."""
    root, cache = kept_shop(tmp_path_factory, "first")
    write(root, "shop/tool/lib/extra.go", shop.ADDED["new go file"][1])  # before lib.go in the walk
    made = spied(monkeypatch)
    try:
        kept_or_mapped([root], cache, reads="imports")
        for path in ("shop/web/app.ts", "shop/tool/lib/extra.go"):  # each its folder's first of its language
            write(root, path, None)
            state = kept_or_mapped([root], cache, reads="imports")
            assert made[-1], path
            assert state.graph == tree_state([root], FactsCache(None), reads="imports").graph, path
    finally:
        cache.close()
