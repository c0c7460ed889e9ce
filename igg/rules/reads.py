"""What of a source tree a set of rules reads: imports only, imports and tables, or the full code map.

``igg check PATH`` and ``igg cycles PATH`` map the tree only as far as their rules need (``igg.codemap.link``
and each language's analyzer have a mode per value of ``Reads``). A rule over ``IMPORTS`` edges at the
module or package level reads the modules, the packages and their imports; one over ``READS_FROM`` or
``WRITES_TO`` also reads the tables, with the functions, methods and types whose SQL names them. Anything
else (calls, supertypes, ``IMPORTS_SYMBOL``, the ``type`` and ``service`` levels, HTTP routes, a selector
naming a node type the lighter graph lacks) needs the full map, and so does a check whose selectors pick
nothing in the lighter graph (``igg.mapping.checking`` tries the full map before refusing them).
"""

from __future__ import annotations

from collections.abc import Iterable

from igg.codemap.language import READS, Reads
from igg.models.rules import (
    AcyclicRule,
    AllowedOnlyRule,
    ForbiddenRule,
    IndependenceRule,
    LayersRule,
    NodeSelector,
    Rule,
    Selector,
)

IMPORT_EDGES = frozenset({"IMPORTS"})
"""The edge types an ``imports`` graph holds (besides CONTAINS)."""
TABLE_EDGES = frozenset({"IMPORTS", "READS_FROM", "WRITES_TO"})
"""The edge types a ``tables`` graph holds (besides CONTAINS)."""
IMPORT_NODES = frozenset({"Module", "Package"})
"""The node types an ``imports`` graph holds."""
TABLE_NODES = frozenset(
    {"Module", "Package", "Class", "Interface", "Enum", "Method", "Function", "DatabaseTable"}
)
"""The node types a ``tables`` graph holds."""


def _selector_types(selector: Selector | None) -> set[str]:
    """The node types a selector names (empty: it names none, so any graph can answer it)."""
    items = selector if isinstance(selector, list) else [selector]
    types: set[str] = set()
    for item in items:
        if isinstance(item, NodeSelector) and item.type is not None:
            types.update([item.type] if isinstance(item.type, str) else item.type)
    return types


def _named_types(rule: Rule) -> set[str]:
    """Every node type a selector of ``rule`` names."""
    if isinstance(rule, ForbiddenRule):
        return _selector_types(rule.from_) | _selector_types(rule.to) | _selector_types(rule.through)
    if isinstance(rule, AllowedOnlyRule):
        return _selector_types(rule.from_) | _selector_types(rule.to)
    if isinstance(rule, IndependenceRule):
        return _selector_types(list(rule.modules))
    if isinstance(rule, AcyclicRule):
        return _selector_types(rule.select)
    return set()  # layers: name patterns only


def rule_reads(rule: Rule) -> Reads:
    """The least of a tree that judges ``rule`` as the full map would."""
    if not isinstance(rule, ForbiddenRule | LayersRule | IndependenceRule | AcyclicRule | AllowedOnlyRule):
        return "all"  # the route rules read HANDLES and REQUESTS
    if isinstance(rule, AcyclicRule) and rule.level not in ("module", "package"):
        return "all"
    edges, types = set(rule.edges), _named_types(rule)
    if edges <= IMPORT_EDGES and types <= IMPORT_NODES:
        return "imports"
    if edges <= TABLE_EDGES and types <= TABLE_NODES:
        return "tables"
    return "all"


def needed_reads(rules: Iterable[Rule]) -> Reads:
    """The least of a tree that judges every rule of ``rules`` (``imports`` when there are none)."""
    return max((rule_reads(r) for r in rules), key=READS.index, default="imports")


__all__ = [
    "IMPORT_EDGES",
    "IMPORT_NODES",
    "READS",
    "TABLE_EDGES",
    "TABLE_NODES",
    "Reads",
    "needed_reads",
    "rule_reads",
]
