"""Which nodes a selector picks (see ``igg.models.rules`` for the forms).

A name pattern without glob characters is a dotted name that picks the node of that name and every node under
it (``shop.api`` picks ``shop.api``, ``shop.api.v1`` and ``shop.api.v1.Handler.get``, not ``shop.apiary``):
import-linter reads a module the same way. With ``*``, ``?`` or ``[`` it is a glob over the whole dotted name
(``*`` crosses dots: ``shop.api*`` also picks ``shop.apiary``).
"""

from __future__ import annotations

from collections.abc import Iterable
from fnmatch import fnmatchcase

from igg.models.rules import NodeSelector, Selector
from igg.rules.depgraph import DepGraph, Node

GLOB_CHARS = frozenset("*?[")


def name_matches(name: str, pattern: str) -> bool:
    """Whether a dotted ``name`` is picked by ``pattern`` (a dotted name or a glob)."""
    if GLOB_CHARS.isdisjoint(pattern):
        return name == pattern or name.startswith(pattern + ".")
    return fnmatchcase(name, pattern)


def node_matches(node: Node, selector: str | NodeSelector) -> bool:
    """Whether one selector (a pattern or a ``NodeSelector``) picks ``node``."""
    if isinstance(selector, str):
        return name_matches(node.name, selector)
    if selector.type is not None:
        types = [selector.type] if isinstance(selector.type, str) else selector.type
        if node.type not in types:
            return False
    if selector.external is not None and node.external != selector.external:
        return False
    if selector.name is not None and not name_matches(node.name, selector.name):
        return False
    return selector.path is None or (node.file is not None and fnmatchcase(node.file, selector.path))


def matches(node: Node, selector: Selector) -> bool:
    """Whether ``selector`` (one, or a list: their union) picks ``node``."""
    if isinstance(selector, list):
        return any(node_matches(node, s) for s in selector)
    return node_matches(node, selector)


def pick(graph: DepGraph, selector: Selector, among: Iterable[str] | None = None) -> set[str]:
    """The ids of the nodes of ``graph`` (or of ``among``) that ``selector`` picks."""
    ids = graph.nodes if among is None else among
    return {i for i in ids if i in graph.nodes and matches(graph.nodes[i], selector)}


def describe(selector: Selector | None) -> str:
    """A selector as a person reads it in a message."""
    if selector is None:
        return "nothing"
    if isinstance(selector, list):
        return " or ".join(describe(s) for s in selector)
    if isinstance(selector, str):
        return selector
    parts = [f"{k}={v}" for k, v in selector.model_dump(exclude_none=True).items()]
    return "{" + ", ".join(parts) + "}"
