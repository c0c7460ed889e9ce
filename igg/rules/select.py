"""Which nodes a selector picks (see ``igg.models.rules`` for the forms), and the selectors that pick nothing.

A name pattern without glob characters is a name that picks the node of that name and every node under it,
whichever separator the language names with: ``shop.api`` picks ``shop.api``, ``shop.api.v1`` and
``shop.api.v1.Handler.get``, not ``shop.apiary`` (import-linter reads a module the same way); ``lib/helpers``
picks the TypeScript modules ``lib/helpers/isURL`` and ``lib/helpers/isURL.isURL``, not ``lib/helpersX``; a Go
package path ``github.com/urfave/cli/v3`` picks its packages below and their members. With ``*``, ``?`` or
``[`` it is a glob over the whole name (``*`` crosses dots and slashes: ``shop.api*`` also picks
``shop.apiary``).

A selector that picks no node is almost always a typo, and a rule built on it can never fail: ``unmatched``
lists them (``igg check`` refuses such a rule, naming it and the closest names the graph has), as
import-linter refuses a contract naming a module that does not exist.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator
from fnmatch import fnmatchcase

from igg.errors import Problem, RequestInvalid
from igg.models.rules import (
    AcyclicRule,
    AllowedOnlyRule,
    ForbiddenRule,
    IndependenceRule,
    LayerGroup,
    LayersRule,
    NodeSelector,
    Rule,
    Selector,
    UnknownRouteRule,
    UnusedRouteRule,
)
from igg.rules.bounds import BoundReached, CheckBounds
from igg.rules.depgraph import DepGraph, Node
from igg.rules.github import plain

GLOB_CHARS = frozenset("*?[")
SEPARATORS = (".", "/")
"""What separates the parts of a name: Python and Java dots, TypeScript module paths and Go package paths
slashes (a member of ``lib/a`` is ``lib/a.f``)."""


def name_matches(name: str, pattern: str) -> bool:
    """Whether ``name`` is picked by ``pattern`` (a name: the node and everything under it; or a glob)."""
    if GLOB_CHARS.isdisjoint(pattern):
        return name == pattern or (
            name.startswith(pattern)
            and name[len(pattern) : len(pattern) + 1] in SEPARATORS
            and len(name) > len(pattern)
        )
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


def parts(selector: Selector) -> list[str | NodeSelector]:
    """A selector's parts: the items of a list, or the selector itself."""
    return list(selector) if isinstance(selector, list) else [selector]


def _selectors(rule: Rule) -> Iterator[tuple[str, str | NodeSelector]]:
    """(field, selector) for every selector of a rule that, picking nothing, would leave the rule nothing to
    judge: not an exception (``through``, ``allowed_only``'s ``to``: picking nothing makes the rule stricter,
    and a violation shows it), nor a default (``select = "*"``)."""
    if isinstance(rule, ForbiddenRule):
        yield from (("from", s) for s in parts(rule.from_))
        yield from (("to", s) for s in parts(rule.to))
    elif isinstance(rule, AllowedOnlyRule):
        yield from (("from", s) for s in parts(rule.from_))
    elif isinstance(rule, IndependenceRule):
        yield from (("modules", s) for s in rule.modules)
    elif isinstance(rule, AcyclicRule | UnusedRouteRule | UnknownRouteRule):
        if "select" in rule.model_fields_set and not (
            isinstance(rule, AcyclicRule) and rule.level == "service"
        ):
            yield from (("select", s) for s in parts(rule.select))
    elif isinstance(rule, LayersRule):
        for container in rule.containers or [""]:
            prefix = f"{container}." if container else ""
            for layer in rule.layers:
                names = (
                    layer.siblings
                    if isinstance(layer, LayerGroup)
                    else layer
                    if isinstance(layer, list)
                    else [layer]
                )
                yield from (("layers", prefix + name) for name in names)


CLOSEST_FOR = 5
"""Selectors that pick nothing for which the closest names are looked up (the first ones; the rest are
named)."""


def unmatched(
    graph: DepGraph, rules: Iterable[Rule], bounds: CheckBounds | None = None
) -> list[tuple[str, str, str, list[str]]]:
    """(rule name, field, selector as written, the closest names of the graph) for every selector of ``rules``
    that picks no node of ``graph``. Each node a selector is tried on costs a visit of ``bounds`` (a client's
    rules decide the work); once they are spent, the selectors left are not tried (the check stops there
    too)."""
    out: list[tuple[str, str, str, list[str]]] = []
    names: list[str] | None = None
    for rule in rules:
        for where, selector in _selectors(rule):
            scanned, picked = 0, False
            for node in graph.nodes.values():  # a visit per node tried, until one is picked
                scanned += 1
                if node_matches(node, selector):
                    picked = True
                    break
            if bounds is not None:
                try:
                    bounds.visit(scanned)
                except BoundReached:
                    return out
            if picked:
                continue
            if names is None:
                names = sorted({n.name for n in graph.nodes.values()})
            wanted = selector if isinstance(selector, str) else selector.name
            close = _closest(wanted, names) if wanted and len(out) < CLOSEST_FOR else []
            out.append((rule.name, where, describe(selector), close))
    return out


CLOSEST_POOL = 20_000
"""The most names ``_closest`` compares a selector with (those sharing its first characters on a larger
graph)."""


def _closest(wanted: str, names: list[str]) -> list[str]:
    stem = wanted.split("*")[0].split("?")[0].split("[")[0].rstrip("/.")
    pool = names
    if len(pool) > CLOSEST_POOL:
        pool = [n for n in names if n[:3] == stem[:3]][:CLOSEST_POOL]
    below = [n for n in pool if stem and n.startswith(stem)]  # a glob's own stem names, first
    return (below or difflib.get_close_matches(stem or wanted, pool, n=3, cutoff=0.6))[:3]


UNMATCHED_SHOWN = 20
"""Selectors that pick nothing named in the refusal (with how many more there are)."""


def refuse_unmatched(
    graph: DepGraph,
    rules: Iterable[Rule],
    *,
    source: str = "the rules file",
    bounds: CheckBounds | None = None,
) -> None:
    """Raise ``RequestInvalid`` naming the selectors of ``rules`` that pick no node of ``graph`` (the first
    ``UNMATCHED_SHOWN``): such a rule can never fail, so a check built on it would pass by mistake.
    ``bounds``: see ``unmatched``."""
    problems = []
    found = unmatched(graph, rules, bounds)
    for rule, where, selector, close in found[:UNMATCHED_SHOWN]:
        # names from a rules file or the graph reach a CI log: escaped, so none can start a workflow command
        hint = f"; the closest names are {', '.join(map(plain, close))}" if close else ""
        problems.append(
            Problem(
                f"rule {plain(rule)!r}",
                f"{where} = {plain(selector)} matches no node of the graph "
                f"({len(graph.nodes)} nodes){hint}: a rule on it could never fail",
            )
        )
    if len(found) > UNMATCHED_SHOWN:
        problems.append(
            Problem("rules", f"and {len(found) - UNMATCHED_SHOWN} more selectors that match no node")
        )
    if problems:
        raise RequestInvalid(problems, source=source)
