"""An import added, removed or pointed elsewhere is updated from the files it reaches: the file itself, and
those that mention a name it binds (another file reads a file's imports only where it passes a name on), each
found again under every name a file passes it on by (``from pkg import X as Z``, ``export { X as Z } from``,
``export default X``). The edits here are judged against a fresh map of the same tree; those of a name a file
passes on under another name were missed before (an update left an ``IMPORTS_SYMBOL`` edge out)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from igg.service import map_code
from igg.store import SessionStore
from tests.codegraph import CODE_FIXTURES, map_into_store
from tests.unit.test_bodies import _taken
from tests.unit.test_code_update import graph_of

_X = "def other():\n    return 1\n"
_TS_X = "export function other(): number {\n  return 1;\n}\n"

CASES = {
    "a Python function added that a module passes on under another name": (
        {
            "app/__init__.py": "",
            "app/sub.py": _X,
            "app/pkg.py": "from app.sub import X as Z\n",
            "app/via.py": "from app.pkg import Z as W\n",
            "app/c.py": "from app.via import W\n\n\ndef use():\n    return 2\n",
        },
        [("app/sub.py", _X + "\n\ndef X():\n    return 3\n", True)],
    ),
    "a TypeScript function added that modules pass on under other names": (
        {
            "app/x.ts": _TS_X,
            "app/pkg.ts": 'export { X as Z } from "./x";\n',
            "app/def.ts": 'import { Z } from "./pkg";\n\nexport default Z;\n',
            "app/c.ts": 'import Y from "./def";\n\nexport function use(): number {\n  return 2;\n}\n',
        },
        [("app/x.ts", _TS_X + "\nexport function X(): number {\n  return 3;\n}\n", True)],
    ),
    "TypeScript imports added, pointed elsewhere and removed, one passed on": (
        {
            "app/x.ts": _TS_X + "\nexport function X(): number {\n  return 3;\n}\n",
            "app/y.ts": "export function X(): number {\n  return 4;\n}\n",
            "app/pkg.ts": "export const n = 1;\n",
            "app/c.ts": 'import { X } from "./pkg";\n\nexport function use(): number {\n  return X();\n}\n',
        },
        [
            ("app/pkg.ts", 'import { X } from "./x";\n\nexport { X };\nexport const n = 1;\n', True),
            ("app/pkg.ts", 'import { X } from "./y";\n\nexport { X };\nexport const n = 1;\n', True),
            (
                "app/c.ts",
                'import { X } from "./pkg";\nimport { other } from "./x";\n\n'
                "export function use(): number {\n  return X() + other();\n}\n",
                True,
            ),
            (
                "app/c.ts",
                'import { X } from "./pkg";\n\nexport function use(): number {\n  return X();\n}\n',
                True,
            ),
            ("app/pkg.ts", 'export * from "./y";\nexport const n = 1;\n', False),  # every name: general
        ],
    ),
    "Python imports added and removed, their calls solved again": (
        {
            "app/__init__.py": "",
            "app/sub.py": _X + "\n\ndef X():\n    return 3\n",
            "app/c.py": "import os\n\n\ndef use():\n    return os.getcwd()\n",
            "app/d.py": "import os\n\n\ndef run():\n    return os.sep\n",
        },
        [
            ("app/c.py", "import os\nfrom app.sub import X\n\n\ndef use():\n    return X()\n", True),
            ("app/d.py", "def run():\n    return 1\n", True),  # os: c.py still imports it
            # os goes: its node with it, as no file not linked holds an edge to it (``held_within``)
            ("app/c.py", "from app.sub import X\n\n\ndef use():\n    return X()\n", True),
        ],
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_an_import_edit_updates_the_files_it_reaches_as_a_fresh_map(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each edit in turn: the path expected takes it (True: the files it reaches, loaded alone; False: the
    general path), and the stored graph equals a fresh map's (ky beside the tree, so that no edit is large
    enough to keep a snapshot of the whole graph)."""
    files, edits = CASES[name]
    tree, store = mapped_beside_ky(tmp_path, files)
    for n, (path, text, alone) in enumerate(edits):
        (tree / path).write_text(text, encoding="utf-8")
        result = updated(tree, store, monkeypatch, alone)
        assert result.files["changed"] == [path]
        assert graph_of(store, "m") == fresh_graph(tree, tmp_path / f"fresh{n}.db"), (name, n)


def updated(tree: Path, store: Path, monkeypatch: pytest.MonkeyPatch, alone: bool) -> Any:
    """One update of ``tree``'s session ``m`` in ``store``, its result: taken by the files it reaches,
    the whole graph never loaded, when ``alone``, else by the general path (asserted)."""
    with monkeypatch.context() as m:
        if alone:
            m.setattr(SessionStore, "load_state", _whole)
        taken, result = _taken(tree, store, monkeypatch)
    assert taken is alone, result.files
    return result


def fresh_graph(tree: Path, store: Path) -> Any:
    """The graph a fresh map of ``tree`` into ``store`` makes (``graph_of``)."""
    map_code([tree], agent="code", jobs=1, store=store, session_id="f")
    return graph_of(store, "f")


def mapped_beside_ky(tmp_path: Path, files: dict[str, str]) -> tuple[Path, Path]:
    """A tree of ``files`` (path -> text) with ky beside them, mapped into a store: (the tree, the store)."""
    tree, store = tmp_path / "tree", tmp_path / "s.db"
    shutil.copytree(CODE_FIXTURES / "typescript" / "ky", tree / "ky")
    for path, text in files.items():
        (tree / path).parent.mkdir(parents=True, exist_ok=True)
        (tree / path).write_text(text, encoding="utf-8")
    map_into_store(tree, store)
    return tree, store


def _whole(*_: object, **__: object) -> None:
    raise AssertionError("the whole graph was loaded")
