"""A Python file's import statements read from its text, without a syntax tree: what ``igg check`` reads of
a Python file when its rules read imports alone (``Python.imports``), and what a file that does not parse
still says about the dependency map (``analyze_python``, ``Python.header``).

``import_statements(text)`` lexes just enough of the file to find its import statements exactly as Python's
parser does: string literals and comments are skipped, an ``import`` or ``from`` keyword counts where a
statement starts (at the start of a line, after ``;``, or after the ``:`` of a compound statement's header),
and each statement is read whole (parenthesised names, comments, backslash continuations). A valid file gives
the statements ``ast`` gives, in source order, with the same lines and columns: a property test
(``tests/unit/test_python_scan.py``) pins it to ``ast`` on every Python file of the fixture trees, of real
projects and of the standard library.

The imports in the body of an ``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``, as ``analyze`` tells them)
are marked as the type checker's: the body is read by its indentation when it holds nothing but import
statements, blank lines and comments. Only the tokens up to the text's last ``import`` are read: every import
statement holds that word.

It returns ``None`` for what it does not read exactly, and the caller parses the file instead: a header that
names ``TYPE_CHECKING`` in another way (``if not TYPE_CHECKING:``) or whose body holds more than imports, a
string left open, a NUL character, an import statement that does not read as one, and on Python 3.12 and
later a file with f-strings (their replacement fields may then hold quotes).
"""

from __future__ import annotations

import keyword
import re
import sys
import unicodedata
from typing import Literal, NamedTuple

_TOKEN_PATTERN = r"""
      \#[^\n]*
    | \"\"\"[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*\"\"\"
    | '\'\'[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*'\'\'
    | "[^"\\\n]*(?:\\.[^"\\\n]*)*"
    | '[^'\\\n]*(?:\\.[^'\\\n]*)*'
    | "
    | '
    | \n[ \t\f]*(import|from)(?![\w])
    | ;[ \t\f]*(import|from)(?![\w])
    | :[ \t\f]*(import|from)(?![\w])
    """
"""Comments, string literals (any prefix: it stands before the quote), a quote that opens no whole string (the
file does not lex), and the ``import``/``from`` keywords where a statement may start: after a line's
indentation (the text is read with a newline before it), a ``;`` or a ``:``. Every branch starts with one
character, so the regular expression engine skips to the next of them (``#"';:`` and the newline) in C."""
_TOKENS = re.compile(_TOKEN_PATTERN, re.VERBOSE | re.DOTALL)
_TOKENS_CHECKING = re.compile(_TOKEN_PATTERN + r"| \n([ \t\f]*)((?:el)?if)(?![\w])", re.VERBOSE | re.DOTALL)
"""``_TOKENS`` and the ``if`` and ``elif`` that start a line (a file that names ``TYPE_CHECKING``)."""
_HEADER = re.compile(r"[ \t\f(]*((?:\w+[ \t\f]*\.[ \t\f]*)*TYPE_CHECKING)[ \t\f)]*:[ \t\f]*(.*)")
_CHECKING = frozenset(
    {"TYPE_CHECKING", "typing.TYPE_CHECKING", "typing_extensions.TYPE_CHECKING", "t.TYPE_CHECKING"}
)
"""The tests of an ``if`` whose body only type checkers run (``analyze._TYPE_CHECKING``)."""
_KEYWORD = re.compile(r"(import|from)(?![\w])")

_SPACE = r"(?:[ \t\f]|\\\n)"
_STATEMENT = re.compile(
    rf"""
    (?:[^\n\\\#;(]|\\\n)*                   # up to the end of the line, a comment, a ";" or a "("
    (?:\((?:[^)\#]|\#[^\n]*)*\)             # parenthesised names: lines and comments inside
       {_SPACE}*)?
    """,
    re.VERBOSE,
)
"""An import statement after its keyword, up to where it ends."""

_NAME = r"[^\W\d]\w*"
_DOTTED = rf"{_NAME}(?:\s*\.\s*{_NAME})*"
_ALIASED = rf"({_DOTTED})(?:\s+as\s+({_NAME}))?"
_IMPORT = re.compile(rf"\s+{_ALIASED}(?:\s*,\s*{_ALIASED})*\s*")
_FROM = re.compile(rf"\s*((?:\.\s*)*)({_DOTTED})?\s*import(?![\w])\s*(.*)", re.DOTALL)
_FROM_NAMES = re.compile(
    rf"(?:\*|\(\s*{_NAME}(?:\s+as\s+{_NAME})?(?:\s*,\s*{_NAME}(?:\s+as\s+{_NAME})?)*\s*,?\s*\)|"
    rf"{_NAME}(?:\s+as\s+{_NAME})?(?:\s*,\s*{_NAME}(?:\s+as\s+{_NAME})?)*)\s*"
)
_ONE = re.compile(rf"({_NAME})(?:\s+as\s+({_NAME}))?")
_COMMENT = re.compile(r"#[^\n]*")
_F_STRING = re.compile(r"(?<![\w])[rRbB]?[fF][rR]?['\"]")


class ImportStatement(NamedTuple):
    """One import statement: ``import a.b as c, d`` (``level`` None) or ``from ..m import x as y`` (``level``
    the leading dots, ``module`` what follows them, "" for none; ``names`` ``[("*", None)]`` for a wildcard).
    ``line`` is 1-based and ``column`` the 0-based character offset of its keyword in that line."""

    line: int
    column: int
    level: int | None
    module: str
    names: list[tuple[str, str | None]]
    type_only: bool = False
    """Under ``if TYPE_CHECKING:``."""


def import_statements(text: str) -> list[ImportStatement] | None:
    """The import statements of Python ``text`` in source order, or ``None`` when it cannot read them exactly
    (see the module doc): then the caller parses the file."""
    if "import" not in text:
        return None if "\x00" in text else []
    if "\x00" in text or (sys.version_info >= (3, 12) and _F_STRING.search(text)):
        return None
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = "\n" + text  # offsets below are one past the text's
    # every import statement holds the word: tokens after its last one cannot matter (two thirds of them, in
    # Django); one character more lets the keyword's end be seen
    found = _read(text, min(len(text), text.rfind("import") + 7))
    if found is _OPEN:  # a string the end cut, or one that never closes
        found = _read(text, len(text))
    return None if found is _OPEN else found  # type: ignore[return-value]


_OPEN = None, "a string left open"


def _read(text: str, endpos: int) -> list[ImportStatement] | None | tuple[None, str]:
    """``import_statements`` of ``text`` (read with a newline before it), its tokens read up to ``endpos``;
    ``_OPEN`` when a quote opens no string before it."""
    checking = "TYPE_CHECKING" in text
    typed: set[int] = set()  # where the statements under `if TYPE_CHECKING:` start
    lines_typed: list[tuple[int, int]] = []  # the rest of each line `if TYPE_CHECKING: import a; ...`
    out: list[ImportStatement] = []
    consumed = 0  # where the last statement read ends: keywords before it belong to it
    line, line_at = 0, 0  # the line number of offset line_at
    for m in (_TOKENS_CHECKING if checking else _TOKENS).finditer(text, 0, endpos):
        group = m.lastindex
        if group is None:
            if m.end() - m.start() == 1 and text[m.start()] in "'\"":
                return _OPEN
            continue
        if group == 5:
            if not _checking_block(text, m, typed, lines_typed):
                return None
            continue
        at = m.start(group)
        if at < consumed:
            continue
        word = m.group(group)
        end = _statement_end(text, m.end())
        body = _COMMENT.sub("", text[m.end() : end]).replace("\\\n", " ")
        line += text.count("\n", line_at, at)
        line_at = at
        column = at - text.rfind("\n", 0, at) - 1
        type_only = at in typed or any(a <= at < b for a, b in lines_typed)
        statement = _statement(word, body, line, column, type_only)
        if statement is None:
            if word == "import":
                return None  # not a statement Python reads: let its parser say why
            continue  # "from" continuing an expression: `yield from`, `raise E from e`
        if statement is False:
            return None
        out.append(statement)
        consumed = end
    return out


def _checking_block(text: str, m: re.Match[str], typed: set[int], lines_typed: list[tuple[int, int]]) -> bool:
    """Read the ``if``/``elif`` header ``m`` (``_TOKENS_CHECKING``'s): for ``if TYPE_CHECKING:``, note where
    the statements of its body start (in ``typed``) or the rest of its line (``lines_typed``, a body on the
    header's line). False when it cannot tell exactly: a header naming ``TYPE_CHECKING`` that is not one, or a
    body that is not import statements alone (with blank lines and comments)."""
    header_end = text.find("\n", m.end())
    header_end = len(text) if header_end < 0 else header_end
    rest = text[m.end() : header_end]
    if "TYPE_CHECKING" not in rest:
        return True  # another `if`
    h = _HEADER.fullmatch(rest)
    if h is None or "\\" in rest:
        return False
    if "".join(h.group(1).split()) not in _CHECKING:
        return True  # `if other.TYPE_CHECKING:` is an `if` as any other
    if h.group(2) and not h.group(2).startswith("#"):
        lines_typed.append((m.end() + h.start(2), header_end))
        return True
    indent = _width(m.group(4))
    at = header_end + 1
    while at < len(text):
        eol = text.find("\n", at)
        eol = len(text) if eol < 0 else eol
        stripped = text[at:eol].lstrip(" \t\f")
        if not stripped or stripped[0] == "#":
            at = eol + 1
            continue
        start = eol - len(stripped)
        if _width(text[at:start]) <= indent:
            return True  # the first statement after the body
        k = _KEYWORD.match(text, start)
        if k is None:
            return False
        end = _statement_end(text, k.end())
        if end < len(text) and text[end] not in "\n#":
            return False
        typed.add(start)
        eol = text.find("\n", end)
        at = len(text) if eol < 0 else eol + 1
    return True


def _statement_end(text: str, at: int) -> int:
    """Where the import statement whose keyword ends at ``at`` ends (``_STATEMENT``, which always matches)."""
    m = _STATEMENT.match(text, at)
    return m.end() if m is not None else at


def _width(indent: str) -> int:
    """The width Python's tokenizer gives an indentation (tabs to multiples of 8, from its last form feed)."""
    return len(indent.rpartition("\f")[2].expandtabs(8))


def _statement(
    word: str, body: str, line: int, column: int, type_only: bool = False
) -> ImportStatement | Literal[False] | None:
    """The statement ``word body`` (its comments and continuations gone); None when a ``from`` does not start
    an import, False when it does but does not read as one."""
    if word == "import":
        if not _IMPORT.fullmatch(body):
            return None
        names = [(_dotted(m.group(1)), _plain(m.group(2))) for m in _ONE_DOTTED.finditer(body)]
        if not all(_ok(n) and (a is None or _ok(a)) for n, a in names):
            return False
        return ImportStatement(line, column, None, "", names, type_only)
    m = _FROM.fullmatch(body)
    if m is None:
        return None
    dots, module, rest = m.group(1), m.group(2), m.group(3)
    if not dots and not module:
        return None
    if not _FROM_NAMES.fullmatch(rest):
        return False
    level = dots.count(".")
    source = _dotted(module) if module else ""
    if source and not _ok(source):
        return False
    if rest.startswith("*"):
        return ImportStatement(line, column, level, source, [("*", None)], type_only)
    names = [(_plain(n.group(1)) or "", _plain(n.group(2))) for n in _ONE.finditer(rest)]
    if not all(_ok(n) and (a is None or _ok(a)) for n, a in names):
        return False
    return ImportStatement(line, column, level, source, names, type_only)


_ONE_DOTTED = re.compile(_ALIASED)


def _dotted(name: str) -> str:
    """A dotted name as Python's parser keeps it: without the blanks around its dots, each part ``_plain``."""
    name = "".join(name.split())
    return name if name.isascii() else ".".join(_plain(p) or "" for p in name.split("."))


def _plain(name: str | None) -> str | None:
    """An identifier as Python's parser keeps it (NFKC, PEP 3131)."""
    if name is None or name.isascii():
        return name
    return unicodedata.normalize("NFKC", name)


_KEYWORDS = frozenset(keyword.kwlist)


def _ok(name: str) -> bool:
    """Every part of dotted ``name`` an identifier and none a keyword (an ASCII part the patterns matched is
    an identifier)."""
    parts = name.split(".")
    return _KEYWORDS.isdisjoint(parts) and (name.isascii() or all(p.isidentifier() for p in parts))


__all__ = ["ImportStatement", "import_statements"]
