"""The import statements of a Python file read from its text (``igg.codemap.python.scan``, what an
imports-only check reads) are the ones Python's own parser finds: the same modules, names, aliases, relative
levels, lines, columns, type-only flags and order, on tricky snippets, on random programs and on every file
of the fixture trees and of a sample of the standard library (real code nobody here wrote). Where the scan
cannot be sure it declines, and the file is parsed."""

from __future__ import annotations

import ast
import os
import sysconfig
from contextlib import AbstractContextManager
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from igg.codemap.columns import Columns
from igg.codemap.facts import ImportRef
from igg.codemap.guard import time_limit
from igg.codemap.python.analyze import _Analyzer, analyze_python, import_refs, scanned_imports
from igg.codemap.python.scan import NESTED_QUOTES, import_statements

ROOT = Path(__file__).resolve().parents[2]


def parsed(text: str, module: str = "pkg.sub.mod") -> list[ImportRef]:
    """The imports Python's parser gives ``text`` (the analyzer's reading of its syntax tree)."""
    return _Analyzer("pkg/sub/mod.py", ast.parse(text), Columns(text), module).imports().imports


def scanned(text: str, module: str = "pkg.sub.mod", *, nested: bool | None = None) -> list[ImportRef] | None:
    """The imports the scan reads of ``text`` (``nested``: read its f-strings as Python 3.12 reads them, or
    not; by default as the running Python does)."""
    if nested is None:
        facts = scanned_imports("pkg/sub/mod.py", text, module)
        return None if facts is None else facts.imports
    statements = import_statements(text, nested_quotes=nested)
    if statements is None:
        return None
    return [r for s in statements for r in import_refs(s, module.rpartition(".")[0])]


READ = {
    "plain": "import os\nimport a.b.c as d, e\nfrom x.y import (z as w, v,)\n",
    "relative": (
        "from . import a\nfrom .. b import c\nfrom . . b import c\nfrom .import d\nfrom ...x import *\n"
    ),
    "above the top": "from .... import gone\nimport kept\n",
    "docstring": '"""\nimport not_this\nfrom not_this import x\n"""\nimport this\n',
    "strings": "x = 'import a'; y = \"from b import c\"\nz = '''\\'''import d'''\nimport e\n",
    "comments": "# import a\nx = 1  # from b import c\nimport d  # import e\n",
    "comment in parentheses": "from a import (  # b)\n    c,  # d)\n    e,\n)\n",
    "continuations": "import a, \\\n    b\nfrom c \\\n    import d\n",
    "one line bodies": "if x: import a\nelse: import b\ntry: import c\nexcept ImportError: import d\n",
    "semicolons": "x = 1; import a; from b import c\n",
    "nested": "def f():\n    import a\n    class C:\n        def g(self):\n            from b import c\n",
    "order": (
        "try:\n    import a\nexcept ImportError:\n    import b\nelse:\n    import c\nfinally:\n    import d\n"
    ),
    "yield from": (
        "def g():\n    x = (yield\n         from other)\n    raise E \\\n        from e\nimport a\n"
    ),
    "names like keywords": "import importlib\nfrom_x = 1\nimported = from_x\nfrom match import case, type\n",
    "unicode": "x = 'é'\nimport ﬁle\nfrom café import ﬀ as ß\n",
    "crlf": "import a\r\nimport b\r\n",
    "cr": "import a\rimport b\r",
    "tabs and form feeds": "if x:\n\timport a\n\x0cimport b\n",
    "f-strings": "x = f'{a!r:#>10}'\ny = f\"{b}#\" ; import c\n",
    "escaped quotes": "x = 'it\\'s # not a comment'\ny = \"\\\"\"\nimport a\n",
    "raw strings": "x = r'\\'; import a'\nimport b\n",
    "string continued": "x = 'a\\\nimport b'\nimport c\n",
    "type checking": (
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import a\n    from b import (\n        c,\n"
        "    )\n\n    # comment\nelse:\n    import d\nimport e\n"
    ),
    "type checking, one line": "import typing\nif typing.TYPE_CHECKING: import a; import b\nimport c\n",
    "type checking, elif": "if x:\n    import a\nelif TYPE_CHECKING:\n    import b\nimport c\n",
    "type checking, nested": "def f():\n    if (TYPE_CHECKING):  # why\n        import a\n    import b\n",
    "another type checking": "if other.TYPE_CHECKING:\n    import a\nX = 1\n",
    "type checking in a docstring": '"""\nif TYPE_CHECKING:\n    x = 1\n"""\nimport a\n',
    "type checking with code": (
        "if TYPE_CHECKING:\n    import a\n    X = a.B\n    class C:\n        import b\nimport c\n"
    ),
    "type checking, or": "if TYPE_CHECKING or x:\n    import a\n",
    "type checking, not": "if not TYPE_CHECKING:\n    import a\nelse:\n    import b\n",
    "type checking, dedented past the header": (
        "class A:\n    def f(self):\n        if TYPE_CHECKING:\n            import a\n    def g(self):\n"
        "        import b\nimport c\n"
    ),
    "type checking, lines that start inside a string or brackets": (
        "if TYPE_CHECKING:\n    X = '''\nimport a\n'''\n    from b import (\nc)\n    import d\nimport e\n"
    ),
    "type checking, a header over lines": (
        "if (\n    typing . TYPE_CHECKING  # why\n):\n    import a\nimport b\n"
    ),
    "type checking at the end": "import a\nif TYPE_CHECKING:\n    import b",
    "type checking, pass": "if TYPE_CHECKING:\n    pass\nelse:\n    import a\n",
    "no imports": "x = 1\n",
    "the last import in a string": 'import a\nx = """\nimport b\n"""\n',
    "the last import a longer name": "import a\nx = importlib\n",
    "the last import a keyword's end": "x = 1\nimport a",
}

DECLINED = {
    "a string left open": ("x = 'abc\nimport a\n", NESTED_QUOTES),
    "a NUL": ("import a\x00\n", NESTED_QUOTES),
    "a keyword as a name": ("import class\n", NESTED_QUOTES),
    "not a statement": ("import a b\n", NESTED_QUOTES),
    # Python 3.12's f-strings (PEP 701), which 3.11 does not parse: where the string's own quote stands in a
    # field, the scan cannot tell where the string ends (``ast`` of 3.12 reads the file then; these cases were
    # checked against it, and the standard libraries of 3.12 and 3.13 read as it reads them)
    "3.12, a field with the string's quotes": ('x = f"{d["k"]}"\nimport a\n', True),
    "3.12, a comment's mark in them": ('x = f"{d["#"]}"; import b\nimport c\n', True),
    "3.12, an f-string in a field": ('x = f"{f"{1}"}"\nimport a\n', True),
    "3.12, a field over lines": ('x = f"{1 +\n 2}"\nimport a\n', True),
    "3.12, a comment in a field": ('x = f"""{x\n  # comment """\n}"""\nimport a\n', True),
    "3.12, literal braces, then a dict with quotes": (
        'x = f"}}{ {"a": 1}["a"] }"; import q\nimport r\n',
        True,
    ),
}


@pytest.mark.parametrize("name", sorted(READ))
def test_the_scan_reads_what_the_parser_reads(name: str) -> None:
    text = READ[name]
    got = scanned(text)
    assert got is not None, "the scan declined a file it reads"
    assert got == parsed(text)


@pytest.mark.parametrize("name", sorted(DECLINED))
def test_the_scan_declines_what_it_cannot_read_exactly(name: str) -> None:
    text, nested = DECLINED[name]
    assert import_statements(text, nested_quotes=nested) is None


def test_the_forms_come_out_as_the_parser_gives_them() -> None:
    """Spot values, so that the two readings cannot agree on something wrong."""
    got = scanned(READ["relative"] + READ["type checking"])
    assert got is not None
    assert [(i.target, i.alias, i.source, i.line, i.column, i.type_only) for i in got][:6] == [
        ("pkg.sub.a", "a", "pkg.sub", 1, 1, False),
        ("pkg.b.c", "c", "pkg.b", 2, 1, False),
        ("pkg.b.c", "c", "pkg.b", 3, 1, False),
        ("pkg.sub.d", "d", "pkg.sub", 4, 1, False),
        ("x", None, "x", 5, 1, False),
        ("typing.TYPE_CHECKING", "TYPE_CHECKING", "typing", 6, 1, False),
    ]
    assert got[5].wildcard is False and scanned("from ...x import *")[0].wildcard  # type: ignore[index]
    typed = [(i.target, i.type_only) for i in got[6:]]
    assert typed == [("a", True), ("b.c", True), ("d", False), ("e", False)]


def test_a_file_that_does_not_parse_keeps_its_imports_as_an_imports_only_read_gives_them() -> None:
    """The full analysis of a broken file keeps what its lines say about the dependency map, with its
    error, so that an imports-only check and a full map of a half-edited tree agree."""
    text = "import os\nfrom . import sibling\n\ndef broken(:\n    pass\n"
    full = analyze_python("pkg/mod.py", text, "pkg.mod")
    light = analyze_python("pkg/mod.py", text, "pkg.mod", imports_only=True)
    assert full.error == "syntax error: invalid syntax" and full.error_line == 4
    assert [i.target for i in full.imports] == ["os", "pkg.sibling"] == [i.target for i in light.imports]
    assert full.types == [] and full.callables == []


def python_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def corpus() -> list[Path]:
    """Every Python file of the fixture trees and of the standard library (every second one: about 900)."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files = [p for p in python_files(stdlib) if "site-packages" not in p.parts]
    return python_files(ROOT / "fixtures") + files[::2]


@pytest.mark.parametrize("nested", [False, True], ids=["3.11 f-strings", "3.12 f-strings"])
def test_the_scan_reads_real_code_as_the_parser_does(nested: bool) -> None:
    """Read as Python 3.11 lexes f-strings and as 3.12 does (a field may hold the string's own quotes: the
    scan then declines the f-strings whose fields it cannot tell close), the same imports as the parser's."""
    files = corpus()
    assert len(files) > 900
    read = declined = 0
    wrong: list[str] = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
            want = parsed(text, "real.mod")
        except (SyntaxError, ValueError, UnicodeDecodeError):
            continue  # a file Python does not read (the standard library's tests of bad syntax)
        got = scanned(text, "real.mod", nested=nested)
        if got is None:
            declined += 1
        elif got != want:
            wrong.append(os.fspath(path))
        else:
            read += 1
    assert wrong == []
    assert declined < read / 100, (read, declined)  # files are read without a parse


def test_f_strings_that_close_are_read_either_way() -> None:
    text = "x = f'{x!r:>{w}}' ; import a\ny = f'}}{ {1: 2}[1] }' ; import b\nz = rf'\\d{{2}}{q}'\nimport c\n"
    assert scanned(text, nested=True) == scanned(text, nested=False) == parsed(text)


FRAGMENTS = [
    "import a",
    "import a.b as c, d",
    "from a import b",
    "from . import (b,\n    c as d)",
    "from .a import *",
    "x = 'import e'",
    'y = """\nimport f\n"""',
    "# import g",
    "z = f'{x!r:>{w}}' # from i import j",
    "import p; q = 1",
    "v = 'it\\'s'; from r import s",
    "import \\\n    v",
    "u = r'\\'  # import w'",
    "d = {k: from_ for k in x}",
    "g = (lambda: importer)",
    "t = b'''\nfrom x import y'''",
    "x = (yield\n     from gen)",
    "raise E \\\n    from e",
    "w = [1,\n# import c\n2]",
    "pass",
    "if x: import h",
    "s = '#'; import q",
    "n = 1 if TYPE_CHECKING else 2",
    "from typing import TYPE_CHECKING",
]
HEADERS = [
    ("if TYPE_CHECKING:", ""),
    ("if typing.TYPE_CHECKING:  # types", "else:\n    import yy"),
    ("if not TYPE_CHECKING:", ""),
    ("if x:", "elif TYPE_CHECKING:\n    import ee"),
    ("def f():", ""),
    ("class C:", ""),
    ("try:", "except ImportError:\n    import zz"),
    ("with x:", ""),
]


def _indented(text: str) -> str:
    return "\n".join("    " + line if line else line for line in text.split("\n"))


def _render(item: object) -> str:
    if isinstance(item, str):
        return item
    (head, tail), body = item  # type: ignore[misc]
    inner = "\n".join(_render(i) for i in body) or "pass"
    return f"{head}\n{_indented(inner)}" + (f"\n{tail}" if tail else "")


PROGRAMS = st.lists(
    st.recursive(
        st.sampled_from(FRAGMENTS),
        lambda items: st.tuples(st.sampled_from(HEADERS), st.lists(items, min_size=1, max_size=4)),
        max_leaves=12,
    ),
    max_size=8,
)


@settings(max_examples=400, deadline=None)
@given(PROGRAMS, st.sampled_from(["\n", "\r\n"]))
def test_any_program_of_these_pieces_reads_as_the_parser_reads_it(program: list[object], end: str) -> None:
    text = "\n".join(_render(i) for i in program).replace("\n", end) + end
    try:
        want = parsed(text)
    except SyntaxError:
        import_statements(text)  # a program that does not parse: the scan still answers
        return
    got = scanned(text)
    assert got is not None
    assert got == want


HOSTILE = [
    "import", "from", " ", "\n", "\t", "(", ")", "#", "\\", "\\\n", '"', "'", '"""', "'''", ";", ":", ".",
    ",", "*", "as", "a", "b1", "TYPE_CHECKING", "if ", "f", "{", "}", "elif ", "    ",
]  # fmt: skip


def finishes_within(seconds: float) -> AbstractContextManager[None]:
    """Fail (not hang) when the block runs past ``seconds`` (the per-file guard's own limit): a liveness bound
    far above what it takes (well under a millisecond here), not a timing."""
    return time_limit(seconds)


def test_an_unclosed_parenthesis_over_many_comment_lines_is_declined_at_once() -> None:
    """Without possessive repetition, the statement's pattern tried every way to split the comments'
    characters: 5 lines took 2 s, 20 lines minutes."""
    text = "from a import (\n" + "".join(f"# comment {i} here\n" for i in range(2000)) + "b\n"
    with finishes_within(10):
        assert import_statements(text) is None
        assert import_statements(text, nested_quotes=True) is None


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(HOSTILE), max_size=3000))
def test_any_text_is_answered(pieces: list[str]) -> None:
    """Whatever a file holds (a broken one, a hostile one), the scan answers: the statements or None."""
    with finishes_within(10):
        for nested in (False, True):
            found = import_statements("".join(pieces), nested_quotes=nested)
            assert found is None or all(s.line >= 1 and s.column >= 0 for s in found)


def test_typing_blocks_nested_deep_are_read_once_and_as_the_parser_reads_them() -> None:
    levels = 90
    text = "".join("    " * i + f"if TYPE_CHECKING:\n{'    ' * (i + 1)}import m{i}\n" for i in range(levels))
    text += "import after\n" + "x = 1\n" * 20000
    with finishes_within(10):
        got = scanned(text)
    assert got is not None and got == parsed(text)
    assert sum(i.type_only for i in got) == levels
