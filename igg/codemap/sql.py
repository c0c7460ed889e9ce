"""Tables read and written by SQL found in string literals: a SQL parser (sqlglot) decides what is SQL.

A string is a candidate only when it starts (after whitespace or an opening parenthesis) with SELECT, WITH,
INSERT, UPDATE, DELETE or MERGE; a keyword in lower or mixed case also needs a SQL mark (``* ? = : , ;`` or
WHERE/JOIN/ORDER BY/GROUP BY/LIMIT/VALUES/SET), which keeps sentences such as "select a user from the list"
out cheaply. A candidate counts only when sqlglot parses the whole string as SQL statements (the default
dialect, then MySQL for backticks, T-SQL for brackets, PostgreSQL) and each statement has its shape: a
SELECT reads from at least one table, UPDATE sets columns, INSERT has a target and rows or a query, DELETE
and MERGE name their tables. English such as "Insert non-printing control codes." or "Insert a new
key-value pair" does not parse, so it gives no table. Placeholders (``?``, ``%s``, ``%(name)s``, ``:name``,
``$1``) and template holes (``{name}``, and the holes of an f-string, given as ``?``) are accepted; a table
that is only a hole is not a table.

Which literals are used as queries is the language analysers' part (docstrings and other bare string
statements are never queries). Table names are lowercased (SQL identifiers are case-insensitive); quotes,
backticks and brackets are dropped; a schema prefix is kept (``auth.users``); CTE names are not tables.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

from igg.codemap.facts import SqlRef

_START = re.compile(r"^\s*\(?\s*(SELECT|WITH|INSERT|UPDATE|DELETE|MERGE)\b", re.IGNORECASE)
_MARKS = re.compile(r"[*?=:,;]|\b(?:WHERE|JOIN|ORDER\s+BY|GROUP\s+BY|LIMIT|VALUES|SET)\b", re.IGNORECASE)
_HOLE = "igg_hole_"
_TEMPLATE = re.compile(r"\{[^{}'\"]*\}")
"""``str.format`` / f-string holes: ``{table}``, ``{0}``, ``{}``."""
_PYFORMAT = re.compile(r"%(?:\([A-Za-z_]\w*\))?[sdfr]")
"""DB-API ``format`` / ``pyformat`` placeholders: ``%s``, ``%(name)s``."""
_NUMBERED = re.compile(r"\$\d+")
"""A numbered placeholder (``$1``), which some dialects read as an identifier."""
_STATEMENTS = ("SELECT", "WITH", "INSERT", "UPDATE", "DELETE", "MERGE")


def _prepared(text: str, *, pyformat_holes: bool = False) -> str:
    """The text with template holes as identifiers and DB-API placeholders as ``?`` (what sqlglot reads);
    with ``pyformat_holes``, ``%s`` and ``%(name)s`` are template holes too (``"... WHERE %s" % clause``)."""
    count = 0

    def hole(_: re.Match[str]) -> str:
        nonlocal count
        count += 1
        return f"{_HOLE}{count}"

    text = _TEMPLATE.sub(hole, text)
    return _PYFORMAT.sub(hole if pyformat_holes else "?", text).replace("%%", "%")


def _dialects(text: str) -> list[str | None]:
    dialects: list[str | None] = [None]
    if "`" in text:
        dialects.append("mysql")
    if "[" in text:
        dialects.append("tsql")
    dialects.append("postgres")
    return dialects


def _parse(text: str) -> list[Any] | None:
    """The statements of ``text`` when one dialect parses all of it, else None."""
    import sqlglot
    from sqlglot.errors import ErrorLevel

    _quiet_parser()

    for dialect in _dialects(text):
        try:
            trees = sqlglot.parse(text, read=dialect, error_level=ErrorLevel.RAISE)
        except (Exception, RecursionError):  # noqa: BLE001 - whatever the parser raises (ParseError, TokenError,
            continue  # and TypeError, AttributeError, ... on text it does not expect), the string is not SQL
        statements = [t for t in trees if t is not None]
        if statements:
            return statements
    return None


@functools.cache
def _quiet_parser() -> None:
    """sqlglot logs a warning for each statement it reads as a bare command (``SET CONSTRAINTS ...``): for
    IGG that is a string that is not a query it reads, not something to tell the user."""
    import logging

    logging.getLogger("sqlglot").setLevel(logging.ERROR)


def _name(table: Any) -> str | None:
    """``schema.table`` lowercased, or None for a template hole or a table-valued expression."""
    from sqlglot import exp

    name = table.name
    if (
        not name
        or name.startswith(_HOLE)
        or not any(c.isalnum() for c in name)
        or _NUMBERED.fullmatch(name)
        or isinstance(table.this, exp.Placeholder)
    ):
        return None  # a template hole or a placeholder (``FROM %s``, ``FROM ?``, ``FROM :t``, ``FROM $1``)
    db = table.db
    return (f"{db}.{name}" if db and not db.startswith(_HOLE) else name).lower()


def _target(node: Any) -> Any:
    """The table an INSERT/UPDATE/DELETE/MERGE writes (``INSERT INTO t (a, b)`` wraps it in a schema)."""
    from sqlglot import exp

    while node is not None and not isinstance(node, exp.Table):
        node = node.this if isinstance(node, exp.Schema | exp.Alias) else None
    return node


def _statement_tables(tree: Any) -> tuple[str, list[Any], list[Any]] | None:
    """(statement, tables written, tables read) of one statement that has its shape, else None."""
    from sqlglot import exp

    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    tables = [t for t in tree.find_all(exp.Table) if t.name.lower() not in ctes or t.db]
    written: list[Any] = []
    if isinstance(tree, exp.Insert):
        target = _target(tree.this)
        if target is None or tree.expression is None:
            return None
        statement, written = "INSERT", [target]
    elif isinstance(tree, exp.Update):
        target = _target(tree.this)
        if target is None or not tree.expressions:
            return None
        statement, written = "UPDATE", [target]
    elif isinstance(tree, exp.Delete):
        target = _target(tree.this)
        if target is None:
            return None
        statement, written = "DELETE", [target]
    elif isinstance(tree, exp.Merge):
        target = _target(tree.this)
        if target is None or tree.args.get("using") is None:
            return None
        statement, written = "MERGE", [target]
    elif isinstance(tree, exp.Query):
        if not tables:
            return None  # SELECT 1, SELECT now(): no table read (and prose rarely gets this far)
        statement = "SELECT"
    else:
        return None
    kept = {id(t) for t in written}
    return statement, written, [t for t in tables if id(t) not in kept]


def tables_in(text: str, line: int = 0, column: int = 0) -> list[SqlRef]:
    """The tables a SQL string reads and writes (writes first, then reads in order of appearance), without
    repeats; nothing when the string is not SQL (see the module doc). ``line``/``column``: where the string
    stands."""
    start = _START.match(text)
    if not start:
        return []
    if not start.group(1).isupper() and not _MARKS.search(text):
        return []
    try:
        found = _tables(text)
    except (Exception, RecursionError):  # noqa: BLE001 - SQL detection never fails a file: this is not SQL
        return []
    return [
        SqlRef(table=table, op=op, statement=statement, line=line, column=column)  # type: ignore[arg-type]
        for table, op, statement in found
    ]


def tables_at(text: str, where: Callable[[], tuple[int, int]]) -> list[SqlRef]:
    """``tables_in`` of ``text``, each table at the site ``where()`` gives: (line, column) of the string,
    asked only when the text is SQL (most strings are not)."""
    found = tables_in(text)
    if found:
        line, column = where()
        for ref in found:
            ref.line, ref.column = line, column
    return found


@functools.lru_cache(maxsize=4096)
def _tables(text: str) -> tuple[tuple[str, str, str], ...]:
    """(table, op, statement) of a candidate string; cached, as code repeats its queries."""
    statements = _parse(_prepared(text))
    if statements is None and "%" in text:  # %s may stand for a piece of SQL, not a value: read it as a hole
        statements = _parse(_prepared(text, pyformat_holes=True))
    if statements is None:
        return ()
    try:
        return _tables_of(statements, text)
    except (Exception, RecursionError):  # noqa: BLE001 - a tree of a shape the reading below does not expect
        return ()


def _tables_of(statements: list[Any], text: str) -> tuple[tuple[str, str, str], ...]:
    found: list[tuple[str, str, str]] = []
    lowered = text.lower()

    def add(table: Any, op: str, statement: str) -> None:
        name = _name(table)
        if name is None or any(t == name and (o == op or o == "write") for t, o, _ in found):
            return
        found.append((name, op, statement))

    for tree in statements:
        shaped = _statement_tables(tree)
        if shaped is None:
            return ()  # one statement that is not SQL of a known shape: the string is not a query we read
        statement, written, read = shaped
        for table in written:
            add(table, "write", statement)
        for table in sorted(read, key=lambda t: _position(lowered, t)):
            add(table, "read", statement)
    return tuple(found)


def _position(lowered: str, table: Any) -> int:
    at = lowered.find(table.name.lower())
    return at if at >= 0 else len(lowered)


__all__ = ["tables_at", "tables_in"]
