"""Recursion in a code map: a callable calling itself is a CALLS edge from its node to itself, in every
language (the one self-loop a code map draws: ``allow_self_loops: ["CALLS"]``); ``--update`` after adding a
recursive call draws it as a fresh map does, and removing it removes the edge."""

from __future__ import annotations

from pathlib import Path

import pytest

from igg.mapping.update import update_map
from igg.service import map_code
from igg.store import SessionStore
from tests.unit.test_code_update import graph_of

TREES = {
    "python": {
        "m.py": "def fact(n):\n    return 1 if n <= 1 else n * fact(n - 1)\n\n\n"
        "class Tree:\n    def walk(self, node):\n        for child in node.children:\n"
        "            self.walk(child)\n\n\ndef helper():\n    return fact(3)\n"
    },
    "go": {
        "go.mod": "module example.com/rec\n\ngo 1.21\n",
        "rec.go": "package rec\n\nfunc Fact(n int) int {\n\tif n <= 1 {\n\t\treturn 1\n\t}\n"
        "\treturn n * Fact(n-1)\n}\n\ntype Tree struct{ Kids []*Tree }\n\n"
        "func (t *Tree) Walk() {\n\tfor _, k := range t.Kids {\n\t\tk.Walk()\n\t}\n}\n\n"
        "func Helper() int { return Fact(3) }\n",
    },
    "typescript": {
        "rec.ts": "export function fact(n: number): number {\n  return n <= 1 ? 1 : n * fact(n - 1);\n}\n"
        "export class Tree {\n  walk(depth: number): void {\n"
        "    if (depth > 0) this.walk(depth - 1);\n  }\n}\n"
        "export function helper(): number {\n  return fact(3);\n}\n"
    },
    "java": {
        "p/Rec.java": "package p;\n\npublic class Rec {\n"
        "    static int fact(int n) { return n <= 1 ? 1 : n * fact(n - 1); }\n"
        "    void walk(Rec r) { r.walk(this); }\n"
        "    static int helper() { return fact(3); }\n}\n"
    },
}
RECURSIVE = {
    "python": {"fact", "walk"},
    "go": {"Fact", "Walk"},
    "typescript": {"fact", "walk"},
    "java": {"fact", "walk"},
}


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def _loops(store: Path, session_id: str) -> dict[str, set[str]]:
    """Edge type -> the names of the nodes joined to themselves."""
    _, state, _ = SessionStore(store).load_state(session_id)
    out: dict[str, set[str]] = {}
    for _, u, v, d in state.edges():
        if u == v:
            out.setdefault(d["type"], set()).add(state.node_properties(u)["name"])
    return out


@pytest.mark.parametrize("language", sorted(TREES))
def test_a_recursive_callable_calls_itself(tmp_path: Path, language: str) -> None:
    root = tmp_path / language
    root.mkdir()
    _write(root, TREES[language])
    store = tmp_path / "s.sqlite"
    result, _ = map_code([root], store=store, session_id="m")
    assert result.stop_reason == "finished" and not result.summary()["actions"]["rejected"]
    assert _loops(store, "m") == {"CALLS": RECURSIVE[language]}

    # remove one recursion, then put it back: each update equals a fresh map of the tree as it is
    name, text = next(iter((n, t) for n, t in TREES[language].items() if not n.endswith(".mod")))
    edited = {
        "python": ("fact(n - 1)", "(n - 1)"),
        "go": ("Fact(n-1)", "(n-1)"),
        "typescript": ("fact(n - 1)", "(n - 1)"),
        "java": ("fact(n - 1)", "(n - 1)"),
    }[language]
    for version in (text.replace(*edited), text):
        (root / name).write_text(version)
        update_map([root], store, session_id="m", jobs=1)
        fresh = tmp_path / f"fresh-{len(version)}.sqlite"
        map_code([root], store=fresh, session_id="f")
        assert graph_of(store, "m") == graph_of(fresh, "f")
    assert _loops(store, "m") == {"CALLS": RECURSIVE[language]}
