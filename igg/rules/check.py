"""Each rule kind judged on a ``DepGraph``: the violations it finds, each with its path of edges.

``check(graph, rules)`` runs the rules in order. Direct rules report one violation per offending edge;
``transitive`` ones one per chain, found as import-linter finds them (``igg.rules.chains``), so the two tools'
verdicts can be compared chain for chain; ``acyclic`` one per strongly connected component
(``igg.rules.cycles``). A node picked by two parts of a rule (two layers, two independent modules) belongs to
the first.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import permutations

from igg.models.rules import (
    AcyclicRule,
    AllowedOnlyRule,
    ForbiddenRule,
    IndependenceRule,
    LayerGroup,
    LayersRule,
    Rule,
)
from igg.rules.chains import Adjacency, Chain, routes, shortest_chains
from igg.rules.cycles import find_cycles, level_graph
from igg.rules.depgraph import DepGraph, Edge
from igg.rules.report import Hop, Violation
from igg.rules.select import describe, pick

Part = tuple[str, set[str], bool]
"""A part of a layered or independence rule: its label, its nodes, and whether its siblings are independent."""


def check(graph: DepGraph, rules: Sequence[Rule]) -> list[Violation]:
    """Every violation of ``rules`` in ``graph``, rule by rule."""
    out: list[Violation] = []
    for rule in rules:
        out.extend(check_rule(graph, rule))
    return out


def check_rule(graph: DepGraph, rule: Rule) -> list[Violation]:
    """The violations of one rule."""
    if rule.exclude_type_checking_imports:
        graph = graph.without_type_checking()
    if isinstance(rule, ForbiddenRule):
        return _forbidden(graph, rule)
    if isinstance(rule, LayersRule):
        return _layers(graph, rule)
    if isinstance(rule, IndependenceRule):
        return _independence(graph, rule)
    if isinstance(rule, AcyclicRule):
        return _acyclic(graph, rule)
    return _allowed_only(graph, rule)


def hop(graph: DepGraph, edge: Edge) -> Hop:
    """An edge as a violation shows it."""
    return Hop(source=graph.name(edge.source), target=graph.name(edge.target), edge=edge.type, file=edge.file,
               line=edge.line, type_checking=edge.type_checking)


def type_only_note(hops: Sequence[Hop]) -> str:
    """What a violation's message adds when some of its edges are type-only imports (empty when none is)."""
    typed = [h for h in hops if h.type_checking]
    if not typed:
        return ""
    which = "it is a type-only import" if len(hops) == 1 else (
        f"{len(typed)} of its {len(hops)} edges {'is a type-only import' if len(typed) == 1 else 'are type-only imports'}")
    return f" ({which}; exclude_type_checking_imports = true leaves those out)"


def _chain_hops(graph: DepGraph, chain: Chain, types: Sequence[str]) -> list[Hop]:
    hops = []
    for a, b in zip(chain, chain[1:], strict=False):
        edge = next(graph.edges[(a, t, b)] for t in types if (a, t, b) in graph.edges)
        hops.append(hop(graph, edge))
    return hops


def _violation(graph: DepGraph, rule: Rule, chain: Chain, message: str) -> Violation:
    hops = _chain_hops(graph, chain, rule.edges)
    names = "->".join(graph.name(n) for n in chain)
    return Violation(rule=rule.name, kind=rule.kind, severity=rule.severity, message=message + type_only_note(hops),
                     path=hops,
                     key=f"{rule.name}|{names}")


def _groups(selector: object) -> list[object]:
    return list(selector) if isinstance(selector, list) else [selector]


def _forbidden(graph: DepGraph, rule: ForbiddenRule) -> list[Violation]:
    out: list[Violation] = []
    seen: set[Chain] = set()
    allowed = pick(graph, rule.through) if rule.through is not None else set()
    adj = Adjacency.of(graph, rule.edges, without=allowed) if rule.transitive else None
    for source_part in _groups(rule.from_):
        for target_part in _groups(rule.to):
            sources = pick(graph, source_part)  # type: ignore[arg-type]
            targets = pick(graph, target_part)  # type: ignore[arg-type]
            sources, targets = sources - targets, targets - sources  # a node in both is neither (overlap)
            for chain in _chains(graph, rule.edges, sources, targets, adj):
                if chain in seen:
                    continue
                seen.add(chain)
                first, last = graph.name(chain[0]), graph.name(chain[-1])
                how = "imports" if len(chain) == 2 else f"reaches (through {len(chain) - 2} more)"
                out.append(_violation(graph, rule, chain, f"{first} {how} {last}: {describe(source_part)} may not "  # type: ignore[arg-type]
                                      f"depend on {describe(target_part)}"))  # type: ignore[arg-type]
    return out


def _chains(graph: DepGraph, types: Sequence[str], sources: set[str], targets: set[str],
            adj: Adjacency | None) -> Iterator[Chain]:
    if adj is not None:
        yield from shortest_chains(adj, sources, targets, graph.name)
        return
    for e in graph.of_types(types):
        if e.source in sources and e.target in targets:
            yield (e.source, e.target)


def _layers(graph: DepGraph, rule: LayersRule) -> list[Violation]:
    out: list[Violation] = []
    for container in rule.containers or [""]:
        parts = _layer_parts(graph, rule, container)
        out.extend(_ordered(graph, rule, parts))
    return out


def _layer_parts(graph: DepGraph, rule: LayersRule, container: str) -> list[list[Part]]:
    """Each layer's parts (siblings) with their nodes; a node already placed stays in its first part."""
    prefix = f"{container}." if container else ""
    placed: set[str] = set()
    layers: list[list[Part]] = []
    for layer in rule.layers:
        if isinstance(layer, LayerGroup):
            names, independent = layer.siblings, layer.independent
        elif isinstance(layer, list):
            names, independent = layer, True
        else:
            names, independent = [layer], True
        parts: list[Part] = []
        for name in names:
            nodes = pick(graph, prefix + name) - placed
            placed |= nodes
            parts.append((prefix + name, nodes, independent))
        layers.append(parts)
    return layers


def _ordered(graph: DepGraph, rule: LayersRule | IndependenceRule, layers: list[list[Part]]) -> list[Violation]:
    """Violations of ``layers`` (highest first): lower to higher, and between independent siblings."""
    pairs: list[tuple[Part, Part, str]] = []  # (lower, higher, why)
    for i, upper in enumerate(layers):
        for lower_layer in layers[i + 1:]:
            for low in lower_layer:
                for high in upper:
                    pairs.append((low, high, "a higher layer"))
        if upper and upper[0][2]:
            for a, b in permutations(upper, 2):
                pairs.append((a, b, "an independent sibling" if isinstance(rule, LayersRule) else
                              "independent of it"))
    every: set[str] = set()
    for layer in layers:
        for part in layer:
            every |= part[1]
    out: list[Violation] = []
    for (low_name, lows, _), (high_name, highs, _), why in pairs:
        if not lows or not highs:
            continue
        for chain in _pair_chains(graph, rule, lows, highs, every - lows - highs):
            first, last = graph.name(chain[0]), graph.name(chain[-1])
            how = "imports" if len(chain) == 2 else f"reaches (through {len(chain) - 2} more)"
            out.append(_violation(graph, rule, chain, f"{first} {how} {last}: {low_name} may not depend on "
                                  f"{high_name}, {why}"))
    return out


def _pair_chains(graph: DepGraph, rule: LayersRule | IndependenceRule, low: set[str], high: set[str],
                 others: set[str]) -> list[Chain]:
    if rule.transitive:
        return routes(Adjacency.of(graph, rule.edges, without=others), low, high, graph.name)
    return [(e.source, e.target) for e in graph.of_types(rule.edges) if e.source in low and e.target in high]


def _independence(graph: DepGraph, rule: IndependenceRule) -> list[Violation]:
    placed: set[str] = set()
    parts: list[Part] = []
    for selector in rule.modules:
        nodes = pick(graph, selector) - placed
        placed |= nodes
        parts.append((describe(selector), nodes, True))
    return _ordered(graph, rule, [parts])


CUT_SHOWN = 3
"""Dependencies of a cycle's cut named in its one-line message (all of them are in ``breaking_edges``)."""


def _acyclic(graph: DepGraph, rule: AcyclicRule) -> list[Violation]:
    level = level_graph(graph, rule.level, rule.edges, external=rule.external)
    among = pick(graph, rule.select, among=level.names)
    out = []
    for cycle in find_cycles(level, among):
        name = level.names.__getitem__
        hops = [hop(graph, level.edges[(a, b)][0]) for a, b in zip(cycle.path, cycle.path[1:], strict=False)]
        breaking = [hop(graph, e) for arc in cycle.breaking for e in level.edges[arc]]
        members = [name(m) for m in cycle.members]
        shown = ", ".join(members[:6]) + (f" and {len(members) - 6} more" if len(members) > 6 else "")
        arcs = [f"{name(a)} -> {name(b)}" for a, b in cycle.breaking]
        # a big cycle's cut is listed edge by edge with its lines (breaking_edges): the message names a few
        cut = "; ".join(arcs) if len(arcs) <= CUT_SHOWN else (
            f"these {len(arcs)} dependencies ({'; '.join(arcs[:CUT_SHOWN])}; and {len(arcs) - CUT_SHOWN} more)")
        out.append(Violation(rule=rule.name, kind=rule.kind, severity=rule.severity,
                             message=f"{len(members)} {rule.level}s depend on each other in a cycle ({shown}); "
                                     f"removing {cut} breaks it{type_only_note(hops)}", path=hops,
                             breaking_edges=breaking,
                             key=f"{rule.name}|cycle|{','.join(members)}"))
    return out


def _allowed_only(graph: DepGraph, rule: AllowedOnlyRule) -> list[Violation]:
    sources = pick(graph, rule.from_)
    allowed = pick(graph, rule.to) | sources
    out = []
    for e in graph.of_types(rule.edges):
        if e.source in sources and e.target not in allowed:
            out.append(_violation(graph, rule, (e.source, e.target),
                                  f"{graph.name(e.source)} depends on {graph.name(e.target)} ({e.type}): "
                                  f"{describe(rule.from_)} may depend only on {describe(rule.to)}"))
    return out

