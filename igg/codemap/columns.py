"""Columns as people count them: parsers give a position's column in UTF-8 bytes (Python's ``ast``
``col_offset`` and tree-sitter's ``start_point`` alike); a site's column (``igg.codemap.model.Site``) counts
characters, 1-based, as editors and ``grep -n`` readers do. Only lines holding a non-ASCII character
differ."""

from __future__ import annotations

from typing import Any


class Columns:
    """The 1-based character column of a byte offset in one line of one file's text."""

    __slots__ = ("_lines",)

    def __init__(self, text: str) -> None:
        # an ASCII file (most) needs nothing; another is split into its lines' bytes once
        self._lines: list[bytes] | None = (
            None if text.isascii() else text.encode("utf-8", "surrogatepass").split(b"\n")
        )

    def __call__(self, line: int, offset: int) -> int:
        """The column of byte ``offset`` (0-based) in line ``line`` (1-based)."""
        lines = self._lines
        if lines is None or offset <= 0 or not 0 < line <= len(lines):
            return offset + 1
        raw = lines[line - 1]
        if raw.isascii():
            return offset + 1
        return len(raw[:offset].decode("utf-8", "surrogatepass")) + 1

    def at(self, node: Any) -> tuple[int, int]:
        """(line, column) where a tree-sitter node starts, both 1-based."""
        row, offset = node.start_point
        if self._lines is None:
            return row + 1, offset + 1
        return row + 1, self(row + 1, offset)


__all__ = ["Columns"]


def position(text: str, offset: int) -> tuple[int, int]:
    """(line, column), both 1-based, of the first character at or after character ``offset`` of ``text`` that
    is no whitespace (where a statement a pattern found starts)."""
    n = len(text)
    while offset < n and text[offset].isspace():
        offset += 1
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1
