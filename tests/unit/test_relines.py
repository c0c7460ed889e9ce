"""``line_map`` tells an edit that only moved a file's lines (its facts the same in order, each line moved)
from one that changed what the file says, on facts its real analyzers make (Python, TypeScript, Go, Java).
An update of a file whose lines moved takes its elements' lines from that map (``igg.mapping.samefacts``), so
a map it gives for an edit that changed anything else would make a graph no fresh map makes."""

from __future__ import annotations

from dataclasses import replace

import pytest

from igg.codemap.facts import FileFacts
from igg.codemap.language import SourceFile
from igg.codemap.relines import Moves, line_map
from igg.codemap.sources import with_modules
from igg.mapping.prepare import parse_all
from igg.mapping.relined import _moved_sites

PYTHON = """import os
from json import loads


def helper(x):
    return loads(x)


class Service:
    def run(self, path):
        data = helper(os.path.join(path, "a"))
        return self.save(data)

    def save(self, data):
        return data
"""

SOURCES = {
    "pkg/mod.py": PYTHON,
    "web/app.ts": """import { join } from "./util";

export function handler(a: string): string {
  return join(a, "b");
}

export class Box {
  open(): string {
    return handler("c");
  }
}
""",
    "svc/main.go": """package svc

import "strings"

func Upper(s string) string {
	return strings.ToUpper(s)
}

func Twice(s string) string {
	return Upper(s) + Upper(s)
}
""",
    "app/Main.java": """package app;

import java.util.List;

public class Main {
    int count(List<String> items) {
        return items.size();
    }

    int twice(List<String> items) {
        return count(items) + count(items);
    }
}
""",
}


def _facts(path: str, text: str) -> FileFacts:
    facts, _ = parse_all(with_modules([SourceFile(path=path, text=text)]), jobs=1, named=True)
    return facts[0]


def _lines(text: str, at: int, added: list[str]) -> str:
    lines = text.split("\n")
    lines[at:at] = added
    return "\n".join(lines)


@pytest.mark.parametrize("path", sorted(SOURCES))
def test_blank_and_comment_lines_added_move_the_lines_after_them(path: str) -> None:
    text = SOURCES[path]
    comment = "#" if path.endswith(".py") else "//"
    after = _lines(_lines(text, 4, ["", ""]), 1, [f"{comment} a comment"])  # 1 line after line 1, 2 after 4
    moves = line_map(_facts(path, text), _facts(path, after))
    assert moves is not None and moves.moved

    def moved(a: int) -> int:
        return a + (a > 1) + 2 * (a > 4)

    assert moves.lines and all(b == moved(a) for a, b in moves.lines.items())
    assert moves.sites and all(b == (moved(a[0]), a[1]) for a, b in moves.sites.items())
    same = line_map(_facts(path, text), _facts(path, text))  # nothing moved
    assert same is not None and not same.moved and same.lines.keys() == moves.lines.keys()


def test_a_line_edited_around_its_calls_moves_their_columns() -> None:
    """Parentheses put around a call on its line: the calls move right, the line stays."""
    edited = PYTHON.replace("data = helper(", "data = (helper(").replace(', "a"))\n', ', "a")))\n')
    moves = line_map(_facts("pkg/mod.py", PYTHON), _facts("pkg/mod.py", edited))
    assert moves is not None and moves.moved
    assert all(a == b for a, b in moves.lines.items())  # no line moved
    shifted = {a: b for a, b in moves.sites.items() if a != b}
    assert shifted == {(11, 16): (11, 17), (11, 23): (11, 24)}  # helper( and os.path.join(


@pytest.mark.parametrize(
    "edited",
    [
        PYTHON.replace("data = helper(os.path", "data = helper(\n            os.path"),  # a line split
        PYTHON.replace("return self.save(data)", "return self.save(data, 1)"),  # an argument
        PYTHON.replace("def helper(x):\n    return loads(x)\n", "")
        + "\n\ndef helper(x):\n    return loads(x)\n",  # a function moved below the class: order changed
        PYTHON.replace("helper", "assist"),  # a name
        PYTHON.replace("    def save(self, data):\n        return data\n", ""),  # a method removed
        PYTHON.replace("import os\n", "import os\nimport sys\n"),  # an import added
    ],
    ids=["line split", "argument", "order", "name", "removed", "added"],
)
def test_any_other_change_is_no_move(edited: str) -> None:
    assert line_map(_facts("pkg/mod.py", PYTHON), _facts("pkg/mod.py", edited)) is None


def test_an_edge_whose_sites_are_no_sites_is_left_to_the_general_path() -> None:
    moves = {"a.py": Moves({3: 4}, {(3, 5): (4, 5)})}
    edge = {"file": "a.py", "line": 3, "column": 5, "sites": ["a.py:3:5"], "site_count": 1}
    assert _moved_sites(edge, moves) == {**edge, "line": 4, "sites": ["a.py:4:5"]}
    assert _moved_sites({**edge, "sites": ["a.py:3"]}, moves) is None
    assert _moved_sites({**edge, "sites": [7]}, moves) is None
    assert _moved_sites({**edge, "line": 9}, moves) is None  # a site the facts do not hold


def test_facts_of_a_shape_no_analyzer_makes_give_no_map() -> None:
    """A damaged cache entry (an empty operation, a list where a tuple stands, an object of another class)
    gives no map and no crash: the update takes the general path."""
    before = _facts("pkg/mod.py", PYTHON)
    assert before.flow
    for odd in [(), ["C", 1, None, (), (), 3, 4], object()]:
        scope = before.flow[0]
        damaged = replace(before, flow=[replace(scope, ops=[*scope.ops, odd]), *before.flow[1:]])
        assert line_map(before, damaged) is None
