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
are marked as the type checker's: that header and its body are read by Python's own tokenizer (``tokenize``,
from the header's line as far as the body goes: where the first logical line as shallow as the header
starts). Only the tokens up to the text's last ``import`` are read: every import statement holds that word.

It returns ``None`` for what it does not read exactly, and the caller parses the file instead: a string left
open, a NUL character, an import statement that does not read as one, a ``TYPE_CHECKING`` body the tokenizer
cannot read, and on Python 3.12 and later an f-string whose replacement fields hold its own quotes (PEP 701:
where a field does not close inside the string as 3.11 delimits it, ``_fields_close``).
"""

from __future__ import annotations

import bisect
import io
import keyword
import re
import sys
import tokenize
import unicodedata
from collections.abc import Callable, Iterator
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
_TOKENS_CHECKING = re.compile(
    _TOKEN_PATTERN + r"| \n(?P<indent>[ \t\f]*)(?P<header>(?:el)?if)(?![\w])", re.VERBOSE | re.DOTALL
)
"""``_TOKENS`` and the ``if`` and ``elif`` that start a line (a file that names ``TYPE_CHECKING``)."""
_CHECKING = frozenset(
    {"TYPE_CHECKING", "typing.TYPE_CHECKING", "typing_extensions.TYPE_CHECKING", "t.TYPE_CHECKING"}
)
"""The tests of an ``if`` whose body only type checkers run (``analyze._TYPE_CHECKING``)."""

_SPACE = r"(?:[ \t\f]|\\\n)"
_STATEMENT = re.compile(
    rf"""
    (?:[^\n\\\#;(]++|\\\n)*+                # up to the end of the line, a comment, a ";" or a "("
    (?:\((?:[^)\#]++|\#[^\n]*+)*+\)         # parenthesised names: lines and comments inside
       {_SPACE}*+)?
    """,
    re.VERBOSE,
)
"""An import statement after its keyword, up to where it ends. Every repetition is possessive (as in every
pattern below): a text that does not match fails at once, where backtracking into a comment's characters
would try every way to split them (an unclosed parenthesis over 20 comment lines took minutes)."""

_NAME = r"[^\W\d]\w*+"
_DOTTED = rf"{_NAME}(?:\s*+\.\s*+{_NAME})*+"
_ALIASED = rf"({_DOTTED})(?:\s++as\s++({_NAME}))?"
_IMPORT = re.compile(rf"\s++{_ALIASED}(?:\s*+,\s*+{_ALIASED})*+\s*+")
_FROM = re.compile(rf"\s*+((?:\.\s*+)*+)({_DOTTED})?\s*+import(?![\w])\s*+(.*)", re.DOTALL)
_AS = rf"{_NAME}(?:\s++as\s++{_NAME})?"
_FROM_NAMES = re.compile(
    rf"(?:\*|\(\s*+{_AS}(?:\s*+,\s*+{_AS})*+\s*+(?:,\s*+)?\)|{_AS}(?:\s*+,\s*+{_AS})*+)\s*+"
)
_ONE = re.compile(rf"({_NAME})(?:\s++as\s++({_NAME}))?")
_COMMENT = re.compile(r"#[^\n]*")
NESTED_QUOTES = sys.version_info >= (3, 12)
"""Whether an f-string's replacement fields may hold its own quotes, comments and line breaks (PEP 701, Python
3.12): the running Python's grammar, which ``ast`` follows."""


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


def import_statements(text: str, *, nested_quotes: bool = NESTED_QUOTES) -> list[ImportStatement] | None:
    """The import statements of Python ``text`` in source order, or ``None`` when it cannot read them exactly
    (see the module doc): then the caller parses the file. ``nested_quotes``: read f-strings as Python 3.12
    does (``NESTED_QUOTES``; an f-string whose fields hold its own quotes is then declined)."""
    if "import" not in text:
        return None if "\x00" in text else []
    if "\x00" in text:
        return None
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = "\n" + text  # offsets below are one past the text's
    # every import statement holds the word: tokens after its last one cannot matter (two thirds of them, in
    # Django); one character more lets the keyword's end be seen
    found = _read(text, min(len(text), text.rfind("import") + 7), nested_quotes)
    if found is _OPEN:  # a string the end cut, or one that never closes
        found = _read(text, len(text), nested_quotes)
    return None if found is _OPEN or found is _NESTED else found  # type: ignore[return-value]


_OPEN = None, "a string left open"
_NESTED = None, "an f-string whose fields hold its own quotes"


def _read(text: str, endpos: int, nested_quotes: bool) -> list[ImportStatement] | None | tuple[None, str]:
    """``import_statements`` of ``text`` (read with a newline before it), its tokens read up to ``endpos``;
    ``_OPEN`` when a quote opens no string before it, ``_NESTED`` when an f-string may go on past the quote
    that ends it here (``nested_quotes``, ``_fields_close``)."""
    checking = "TYPE_CHECKING" in text
    typed: list[tuple[int, int]] = []  # the bodies of `if TYPE_CHECKING:`
    out: list[ImportStatement] = []
    consumed = 0  # where the last statement read ends: keywords before it belong to it
    line, line_at = 0, 0  # the line number of offset line_at
    for m in (_TOKENS_CHECKING if checking else _TOKENS).finditer(text, 0, endpos):
        group = m.lastindex
        if group is None:
            start = m.start()
            if text[start] in "'\"":
                if m.end() - start == 1:
                    return _OPEN
                if nested_quotes and _f_prefix(text, start) and not _fields_close(text, start, m.end()):
                    return _NESTED
            continue
        if m.lastgroup == "header":
            if _within(typed, m.start() + 1):
                continue  # in the body of another: all of it is the type checker's already (and each body
                # read once: nested ones would read the text under them again, level after level)
            if not _checking_block(text, m, typed):
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
        type_only = _within(typed, at)
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


def _within(typed: list[tuple[int, int]], at: int) -> bool:
    """Whether offset ``at`` is in one of the bodies ``typed`` (apart and in order: a body inside another is
    not noted)."""
    i = bisect.bisect_right(typed, (at, sys.maxsize)) - 1
    return i >= 0 and at < typed[i][1]


def _checking_block(text: str, m: re.Match[str], typed: list[tuple[int, int]]) -> bool:
    """Read the ``if``/``elif`` header ``m`` (``_TOKENS_CHECKING``'s): for ``if TYPE_CHECKING:`` (a test
    ``analyze`` tells as one), note where its body starts and ends in ``typed``. Its tokens are Python's own
    (``tokenize``, from the header's line on, as far as the body goes). False when they cannot be read."""
    eol = text.find("\n", m.end())
    first = text[m.end() : len(text) if eol < 0 else eol]
    if "TYPE_CHECKING" not in first and not any(c in first for c in "([{\\"):
        return True  # another `if`, whose test ends on its line
    # a test that is a dotted name holds no colon; one looked for further than this is left to the tokens (a
    # search to the end of the text for every `if` would cost their product)
    colon = text.find(":", m.end(), m.end() + 2000)
    if colon >= 0 and "TYPE_CHECKING" not in text[m.end() : colon]:
        return True  # another `if`
    start = m.start() + 1
    lines = [start]  # where each line of the tokens' text starts, as they come
    tokens = tokenize.generate_tokens(io.StringIO(text[start:]).readline)

    def offset(row: int, col: int) -> int:
        while len(lines) < row:
            lines.append(text.index("\n", lines[-1]) + 1)
        return lines[row - 1] + col

    try:
        test = _test(tokens)
        if test is None or "".join(test) not in _CHECKING:
            return True  # `if not TYPE_CHECKING:` is an `if` as any other
        return _body(tokens, _width(m.group("indent")), offset, typed, text)
    except (tokenize.TokenError, SyntaxError, StopIteration):
        return False


def _test(tokens: Iterator[tokenize.TokenInfo]) -> list[str] | None:
    """The parts of a header's test when it is a dotted name (parentheses and line breaks aside), its tokens
    read up to its colon; None when it is something else."""
    parts: list[str] = []
    for tok in tokens:
        if tok.type in _SKIPPED or tok.type == tokenize.INDENT or tok.string in ("if", "elif") and not parts:
            continue
        if tok.type == tokenize.OP and tok.string in ("(", ")"):
            continue
        if tok.type == tokenize.OP and tok.string == ":":
            return parts
        if tok.type == tokenize.NAME or tok.type == tokenize.OP and tok.string == ".":
            parts.append(tok.string)
            continue
        return None
    return None


def _body(
    tokens: Iterator[tokenize.TokenInfo],
    indent: int,
    offset: Callable[[int, int], int],
    typed: list[tuple[int, int]],
    text: str,
) -> bool:
    """Note in ``typed`` the body after a header's colon: the rest of the line, or the lines after it whose
    logical lines start deeper than the header (``indent``)."""
    first = next(tokens)
    while first.type == tokenize.COMMENT:
        first = next(tokens)
    if first.type != tokenize.NEWLINE:  # `if TYPE_CHECKING: import a; import b`
        begin = offset(*first.start)
        for tok in tokens:
            if tok.type == tokenize.NEWLINE or tok.type == tokenize.ENDMARKER:
                typed.append((begin, offset(*tok.end)))
                return True
        return False
    begin, line_start = offset(*first.end), True
    try:
        for tok in tokens:
            if tok.type == tokenize.ENDMARKER:
                typed.append((begin, len(text)))
                return True
            if tok.type == tokenize.NEWLINE:
                line_start = True
                continue
            if tok.type in _SKIPPED or tok.type in (tokenize.INDENT, tokenize.DEDENT) or not line_start:
                continue
            line_start = False
            at = offset(tok.start[0], 0)
            if _width(text[at : at + tok.start[1]]) <= indent:
                typed.append((begin, at))
                return True
    except IndentationError as exc:  # a line dedented past the header, to a level before the tokens began
        if exc.lineno is None:
            return False
        typed.append((begin, offset(exc.lineno, 0)))
        return True
    return False


_SKIPPED = (tokenize.NL, tokenize.COMMENT)


def _f_prefix(text: str, quote: int) -> bool:
    """Whether the string whose quote is at ``quote`` has an ``f`` among the (at most two) prefix letters
    before it (a keyword or a name ending in ``f`` before a string counts too: it only costs a check)."""
    return text[quote - 1] in "fF" or text[quote - 1] in "rR" and text[quote - 2] in "fF"


def _fields_close(text: str, start: int, end: int) -> bool:
    """Whether every replacement field of the f-string ``text[start:end]`` (its quotes as 3.11 delimits it)
    closes inside it, its brackets and the strings it holds counted: where a field holds the f-string's own
    quote (Python 3.12), the string ends early, inside a field, and the answer is False. A comment or a line
    break in a field, or a quote in a format spec, is False too (it cannot be told)."""
    q = 3 if text.startswith(text[start] * 3, start) else 1
    body, i, depth, quote = text[start + q : end - q], 0, 0, ""
    n = len(body)
    while i < n:
        c = body[i]
        if c == "\\":
            i += 2
            continue
        if quote:
            if body.startswith(quote, i):
                i, quote = i + len(quote), ""
                continue
        elif depth == 0:
            if c in "{}":
                if body.startswith(c, i + 1):  # {{ and }}: the characters themselves
                    i += 2
                    continue
                if c == "}":
                    return False
                depth = 1
        elif c in "'\"":
            quote = c * 3 if body.startswith(c * 3, i) else c
            i += len(quote)
            continue
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "#" or c == "\n":
            return False
        i += 1
    return depth == 0 and not quote


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
