"""What a planned difference counts (``igg.act.difference``), by name: an update's result and its stored step
report these, whether or not anything was applied (``igg.mapping.update`` reports them for a tree with no
change without importing the act step)."""

COUNTS = ("nodes_added", "nodes_removed", "nodes_changed", "edges_added", "edges_removed", "edges_changed")
"""What a difference counts."""

__all__ = ["COUNTS"]
