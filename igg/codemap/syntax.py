"""What the tree-sitter languages share about a parse tree: where its first syntax error is."""

from __future__ import annotations

from typing import Any


def first_error_line(root: Any) -> int | None:
    """The 1-based line of the first ERROR or MISSING node of a tree-sitter tree, depth first (None: none)."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            return int(node.start_point[0]) + 1
        stack.extend(reversed([c for c in node.children if c.has_error or c.is_missing]))
    return None


__all__ = ["first_error_line"]
