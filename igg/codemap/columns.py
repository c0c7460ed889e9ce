"""Columns as people count them: parsers give a position's column in UTF-8 bytes (Python's ``ast``
``col_offset`` and tree-sitter's ``start_point`` alike); a site's column (``igg.codemap.model.Site``) counts
characters, 1-based, as editors and ``grep -n`` readers do. Only lines holding a non-ASCII character differ."""

from __future__ import annotations

from typing import Any


class Columns:
    """The 1-based character column of a byte offset in one line of one file's text."""

    __slots__ = ("_lines", "_text")

    def __init__(self, text: str) -> None:
        self._text: str | None = None if text.isascii() else text
        self._lines: list[bytes] | None = None

    def __call__(self, line: int, offset: int) -> int:
        """The column of byte ``offset`` (0-based) in line ``line`` (1-based)."""
        if self._text is None or offset <= 0:
            return offset + 1
        if self._lines is None:
            self._lines = self._text.encode("utf-8", "surrogatepass").split(b"\n")
        if not 0 < line <= len(self._lines):
            return offset + 1
        return len(self._lines[line - 1][:offset].decode("utf-8", "surrogatepass")) + 1

    def at(self, node: Any) -> tuple[int, int]:
        """(line, column) where a tree-sitter node starts, both 1-based."""
        row, offset = node.start_point
        return row + 1, self(row + 1, offset)


__all__ = ["Columns"]


def position(text: str, offset: int) -> tuple[int, int]:
    """(line, column), both 1-based, of the first character at or after character ``offset`` of ``text`` that
    is no whitespace (where a statement a pattern found starts)."""
    n = len(text)
    while offset < n and text[offset].isspace():
        offset += 1
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1
