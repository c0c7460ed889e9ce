"""``--update`` after edits that change what a file says, drawn at random, equals a fresh map of the tree,
round after round.

The other update tests edit chosen lines; these draw the edits: a line deleted, duplicated or swapped with the
next, a name renamed through a file, a line of another file of the language copied in, a file copied under a
new name or removed. Many of them change declarations, imports or value flows, some leave a file that does
not parse, and the update takes whichever path it takes (facts kept, changed files linked alone, every file).
Each round goes on from the store, facts cache, tree index and kept calls the round before left, and its graph
is compared with a fresh map's, nodes and edges with their properties. Judged on the trees of
``tests/unit/test_samefacts.py``: the Python and Java fixtures, the polyglot tree, ky (TypeScript) and chi
(Go)."""

from __future__ import annotations

import random
import re
import shutil
from pathlib import Path

import pytest

from igg.codemap.language import is_config, language_of
from igg.mapping.update import update_map
from igg.service import map_code
from tests.codegraph import CODE_FIXTURES, map_into_store
from tests.unit.test_code_update import graph_of
from tests.unit.test_samefacts import TREES

ROUNDS = 8
_NAME = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]{3,}\b")


def _sources(tree: Path) -> list[Path]:
    """The tree's source files a map reads (configuration files left out), in a stable order."""
    return sorted(
        p
        for p in tree.rglob("*")
        if p.is_file() and language_of(p.name) is not None and not is_config(p.name)
    )


def _edit(tree: Path, path: Path, rng: random.Random) -> str:
    """One edit of ``path`` drawn with ``rng``; what it did, for the failure message."""
    lines = path.read_text(encoding="utf-8").split("\n")
    said = [i for i, line in enumerate(lines) if line.strip()]
    if not said:
        return f"{path.name}: nothing to edit"
    at, kind = rng.choice(said), rng.randrange(7)
    if kind == 0:
        done = f"{path.name}:{at + 1} deleted: {lines.pop(at).strip()!r}"
    elif kind == 1:
        lines.insert(at, lines[at])
        done = f"{path.name}:{at + 1} duplicated: {lines[at].strip()!r}"
    elif kind == 2 and at + 1 < len(lines):
        lines[at], lines[at + 1] = lines[at + 1], lines[at]
        done = f"{path.name}:{at + 1} swapped with the next line"
    elif kind == 3 and (names := _NAME.findall(lines[at])):
        old = rng.choice(names)
        lines = [re.sub(rf"\b{old}\b", old + "Z", line) for line in lines]
        done = f"{path.name}: {old} renamed {old}Z"
    elif kind == 4:
        kin = [p for p in _sources(tree) if p.suffix == path.suffix and p != path]
        text = rng.choice(kin).read_text(encoding="utf-8") if kin else ""
        other = [line.strip() for line in text.split("\n") if line.strip()]
        if not other:
            return f"{path.name}: no line to copy"
        copied = rng.choice(other)
        lines.insert(at, re.match(r"\s*", lines[at]).group(0) + copied)  # type: ignore[union-attr]
        done = f"{path.name}:{at + 1} got {copied!r}"
    elif kind == 5 and path.suffix != ".java":  # a Java file's class is named after the file
        copy = path.with_name(f"{path.stem}_copy{rng.randrange(100)}{path.suffix}")
        shutil.copyfile(path, copy)
        return f"{copy.name} added"
    elif kind == 6 and len(_sources(tree)) > 5:
        path.unlink()
        return f"{path.name} removed"
    else:
        return f"{path.name}: left as it was"
    path.write_text("\n".join(lines), encoding="utf-8")
    return done


@pytest.mark.parametrize("name", sorted(TREES))
def test_random_edits_update_to_a_fresh_maps_graph_round_after_round(name: str, tmp_path: Path) -> None:
    tree, store = tmp_path / "tree", tmp_path / "s.db"
    for source, at in TREES[name]:
        shutil.copytree(CODE_FIXTURES / source, tree / at)
    map_into_store(tree, store)
    rng = random.Random(name)
    paths: set[str] = set()
    for round_ in range(ROUNDS):
        done = [_edit(tree, p, rng) for p in rng.sample(_sources(tree), rng.randint(1, 3)) if p.exists()]
        result = update_map([tree], store, session_id="m", jobs=1)
        paths.add(result.files["relinked"] == 0 and "kept" or "linked")
        fresh = tmp_path / f"fresh{round_}.db"
        map_code([tree], agent="code", jobs=1, store=fresh, session_id="f")
        assert graph_of(store, "m") == graph_of(fresh, "f"), (round_, done)
    assert "linked" in paths  # the edits changed facts: not every round kept them
