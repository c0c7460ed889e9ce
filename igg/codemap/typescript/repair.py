"""Valid TypeScript the ``tree-sitter-typescript`` grammar (0.23.2, the newest wheel) does not parse,
rewritten to what it parses before the file is read again: the file is otherwise partial, and tree-sitter's
recovery often swallows every declaration after the error.

Each rewrite keeps every byte offset and line (a same-length substitution), so positions, columns and the
text of every other node are the source's:

- a generic call or construct signature on its own line after a member without a separator (``(): S`` then
  ``<U>(s: U): U`` in an interface or a type literal): the grammar reads the ``<`` as continuing the member's
  type; a ``;`` replaces the indentation character before the ``<``;
- ``export type * from './x'`` (and ``export type * as ns from``): ``type`` blanked; the re-export is marked
  type-only again afterwards (``type_only_lines``);
- a member named ``in`` after a member without a separator (``a?: T`` then ``in?: T``): the grammar reads
  ``in`` as the operator; a ``;`` replaces the indentation character before it;
- ``typeof import('x')`` as a call's type argument (``f<typeof import('x')>()``): the ``<``/``>`` become
  ``(``/``)``, so ``import('x')`` is still read (as the dynamic import it names), and the call to ``f``
  with it.

Only files whose first parse has errors are rewritten, and a rewrite is kept only when the new parse has fewer
syntax errors (a file that is really broken keeps its first parse). The rewrites that add a ``;`` only touch
lines inside a syntax error of the first parse or after one with only comments between (a JSX element on its
own line in a valid ``.tsx`` file is left alone).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

_EXPORT_TYPE_STAR = re.compile(rb"\bexport\s+(type)\s+\*")
_TYPEOF_IMPORT = re.compile(
    rb"[\w$)\]](<)\s*typeof\s+import\s*\(\s*(?:'[^'\n]*'|\"[^\"\n]*\")\s*\)[\w$.]*\s*(>)\s*\("
)
_MEMBER_LINE = re.compile(rb"(?m)^[ \t]*[ \t](?=<[ \t]*(?:[A-Za-z_$][\w$]*|\n)|in[ \t]*\??[ \t]*:)")
ROUNDS = 3
"""Repair rounds at most (a fixed error can reveal the next one of a run of signatures)."""


def error_count(root: Any) -> int:
    """The ERROR and MISSING nodes of a tree (their count, outermost only)."""
    count, stack = 0, [root]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            count += 1
            continue
        stack.extend(c for c in node.children if c.has_error or c.is_missing)
    return count


def _error_spans(root: Any) -> list[tuple[int, int]]:
    """The byte ranges of the ERROR and MISSING nodes."""
    spans, stack = [], [root]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            spans.append((node.start_byte, node.end_byte))
        stack.extend(c for c in node.children if c.has_error or c.is_missing)
    return spans


_GAP = re.compile(rb"(?:\s|//[^\n]*|/\*.*?\*/)*", re.DOTALL)
"""Whitespace and comments."""


def _near(source: bytes, spans: list[tuple[int, int]], at: int) -> bool:
    """Whether offset ``at`` is inside an error or after one with only whitespace and comments between."""
    for start, end in spans:
        if start <= at <= end:
            return True
        if end < at and _GAP.match(source, end, at).end() == at:  # type: ignore[union-attr]
            return True
    return False


def _rewrite(source: bytes, root: Any) -> tuple[bytes, set[int]]:
    """The source with every rewrite of the module doc made, and the lines (1-based) of the re-exports made
    ``export *`` from ``export type *``."""
    data = bytearray(source)
    type_only: set[int] = set()
    for m in _EXPORT_TYPE_STAR.finditer(source):
        data[m.start(1) : m.end(1)] = b"    "
        type_only.add(source.count(b"\n", 0, m.start()) + 1)
    for m in _TYPEOF_IMPORT.finditer(source):
        data[m.start(1)], data[m.start(2)] = ord("("), ord(")")
    spans = _error_spans(root)
    for m in _MEMBER_LINE.finditer(source):
        if _near(source, spans, m.end()):
            data[m.end() - 1] = ord(";")
    return bytes(data), type_only


def repaired(source: bytes, tree: Any, parse: Callable[[bytes], Any]) -> tuple[bytes, Any, set[int]]:
    """``source`` and its ``tree`` (parsed by ``parse``) repaired as the module doc says: the source and tree
    read, and the lines of re-exports to mark type-only. Unchanged when the tree has no error or no rewrite
    lowers the count of errors."""
    if not tree.root_node.has_error:
        return source, tree, set()
    best, best_tree, lines, errors = source, tree, set[int](), error_count(tree.root_node)
    for _ in range(ROUNDS):
        text, marked = _rewrite(best, best_tree.root_node)
        if text == best:
            break
        again = parse(text)
        found = error_count(again.root_node) if again.root_node.has_error else 0
        if found >= errors:
            break
        best, best_tree, lines, errors = text, again, lines | marked, found
        if not found:
            break
    return best, best_tree, lines


__all__ = ["ROUNDS", "error_count", "repaired"]
