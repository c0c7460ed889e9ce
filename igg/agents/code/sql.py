"""Tables read and written by SQL found in string literals.

A string counts as SQL only when it starts (after whitespace or an opening parenthesis) with SELECT, WITH,
INSERT, UPDATE, DELETE or MERGE and has that statement's shape (``SELECT … FROM t``, ``INSERT INTO t``,
``UPDATE t SET``, ``DELETE FROM t``, ``MERGE INTO t USING s``); a statement keyword in lower case counts only
when the string also has a SQL mark (``* ? = : , ;`` or WHERE/JOIN/ORDER BY/GROUP BY/LIMIT/VALUES/SET), so
prose such as "select a user from the list" is not mistaken for a query. CTE names (``WITH x AS``) are not
tables. Table names are lowercased (SQL identifiers are case-insensitive);
quotes, backticks and brackets are dropped; a schema prefix is kept (``auth.users``).
"""

from __future__ import annotations

import re

from igg.agents.code.facts import SqlRef

_NAME = r"[`\"\[]?[A-Za-z_][\w$]*[`\"\]]?(?:\.[`\"\[]?[A-Za-z_][\w$]*[`\"\]]?)?"
_START = re.compile(r"^\s*\(?\s*(SELECT|WITH|INSERT|UPDATE|DELETE|MERGE)\b", re.IGNORECASE)
_KEYWORDS = (r"(?!(?:JOIN|WHERE|ON|INNER|LEFT|RIGHT|FULL|CROSS|OUTER|NATURAL|ORDER|GROUP|LIMIT|HAVING|UNION|SET|"
             r"USING|WHEN|VALUES|WINDOW|FOR|RETURNING|OFFSET|FETCH)\b)")
_ALIAS = rf"(?:\s+(?:AS\s+)?{_KEYWORDS}\w+)?"
_FROM = re.compile(rf"\b(?:FROM|JOIN)\s+({_NAME}{_ALIAS}(?:\s*,\s*{_NAME}{_ALIAS})*)", re.IGNORECASE)
_INSERT = re.compile(rf"\bINSERT\s+(?:INTO\s+)?({_NAME})", re.IGNORECASE)
_UPDATE = re.compile(rf"^\s*\(?\s*UPDATE\s+({_NAME}){_ALIAS}\s+SET\b", re.IGNORECASE)
_DELETE = re.compile(rf"\bDELETE\s+FROM\s+({_NAME})", re.IGNORECASE)
_MERGE = re.compile(rf"\bMERGE\s+INTO\s+({_NAME}){_ALIAS}\s+USING\s+({_NAME})?", re.IGNORECASE)
_ONE = re.compile(_NAME)
_MARKS = re.compile(r"[*?=:,;]|\b(?:WHERE|JOIN|ORDER\s+BY|GROUP\s+BY|LIMIT|VALUES|SET)\b", re.IGNORECASE)
_CTE = re.compile(r"(?:\bWITH|,)\s*(?:RECURSIVE\s+)?([A-Za-z_]\w*)\s+AS\s*\(", re.IGNORECASE)
_NOT_TABLES = frozenset({"select", "dual", "values", "lateral", "unnest", "table", "where", "set", "on"})


def _clean(name: str) -> str:
    return re.sub(r"[`\"\[\]]", "", name).lower()


def _names(group: str) -> list[str]:
    """Table names of a FROM list such as ``users u, roles AS r``."""
    out = []
    for part in group.split(","):
        m = _ONE.match(part.strip())
        if m:
            out.append(_clean(m.group(0)))
    return out


def tables_in(text: str, line: int = 0) -> list[SqlRef]:
    """The tables a SQL string reads and writes, in order of appearance, without repeats."""
    start = _START.match(text)
    if not start:
        return []
    statement = start.group(1).upper()
    if not start.group(1).isupper() and not _MARKS.search(text):
        return []
    ctes = {m.group(1).lower() for m in _CTE.finditer(text)} if statement == "WITH" else set()
    found: list[SqlRef] = []
    written: set[str] = set()

    def add(table: str, op: str, stmt: str) -> None:
        if table in _NOT_TABLES or table.split(".")[-1] in _NOT_TABLES or table in ctes:
            return
        if op == "read" and table in written:
            return  # DELETE FROM t / MERGE ... already counted as a write
        if any(r.table == table and r.op == op for r in found):
            return
        if op == "write":
            written.add(table)
        found.append(SqlRef(table=table, op=op, statement=stmt, line=line))  # type: ignore[arg-type]

    if statement == "MERGE":
        m = _MERGE.search(text)
        if not m:
            return []
        add(_clean(m.group(1)), "write", "MERGE")
        if m.group(2):
            add(_clean(m.group(2)), "read", "MERGE")
    elif statement == "INSERT":
        m = _INSERT.search(text)
        if not m:
            return []
        add(_clean(m.group(1)), "write", "INSERT")
    elif statement == "UPDATE":
        m = _UPDATE.match(text)
        if not m:
            return []
        add(_clean(m.group(1)), "write", "UPDATE")
    elif statement == "DELETE":
        m = _DELETE.search(text)
        if not m:
            return []
        add(_clean(m.group(1)), "write", "DELETE")
    elif not re.search(r"\bFROM\b", text, re.IGNORECASE):
        return []  # SELECT/WITH without FROM is not a table read (or not SQL)
    # reads: every FROM/JOIN list (sub-selects, INSERT ... SELECT, UPDATE ... FROM)
    for m in _FROM.finditer(text):
        if statement == "DELETE" and text[: m.start()].strip().upper().endswith("DELETE"):
            continue
        for table in _names(m.group(1)):
            add(table, "read", statement if statement != "WITH" else "SELECT")
    return found
