"""Each rule kind judged on a ``DepGraph``: the violations it finds, each with its path of edges.

``check(graph, rules)`` runs the rules in order. Direct rules report one violation per offending edge;
``transitive`` ones one per chain, found as import-linter finds them (``igg.rules.chains``), so the two tools'
verdicts can be compared chain for chain; ``acyclic`` one per strongly connected component
(``igg.rules.cycles``). A node picked by two parts of a rule (two layers, two independent modules) belongs to
the first. The work is bounded (``igg.rules.bounds.CheckBounds``): a check stops at its bounds and says so.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from fnmatch import fnmatchcase
from itertools import permutations

from igg.models.rules import (
    AcyclicRule,
    AllowedOnlyRule,
    ForbiddenRule,
    IndependenceRule,
    LayerGroup,
    LayersRule,
    Rule,
    UnknownRouteRule,
    UnusedRouteRule,
)
from igg.rules.bounds import BoundReached, CheckBounds
from igg.rules.chains import Adjacency, Chain, routes, shortest_chains
from igg.rules.cycles import find_cycles, level_graph
from igg.rules.depgraph import DepGraph, Edge
from igg.rules.report import Hop, Violation
from igg.rules.select import describe, parts, pick

Part = tuple[str, set[str], bool]
"""A part of a layered or independence rule: its label, its nodes, and whether its siblings are
independent."""


def check(graph: DepGraph, rules: Sequence[Rule], bounds: CheckBounds | None = None) -> list[Violation]:
    """Every violation of ``rules`` in ``graph``, rule by rule, within ``bounds`` (default: a server's); when
    a bound is reached the check stops there and ``bounds.truncated`` says so."""
    bounds = bounds if bounds is not None else CheckBounds()
    out: list[Violation] = []
    try:
        for rule in rules:
            for violation in _rule(graph, rule, bounds):  # each kept as it comes: a bound may stop the rule
                out.append(violation)
    except BoundReached:
        pass
    return out


def check_rule(graph: DepGraph, rule: Rule, bounds: CheckBounds | None = None) -> list[Violation]:
    """The violations of one rule (within ``bounds``, as ``check``)."""
    return check(graph, [rule], bounds)


def _rule(graph: DepGraph, rule: Rule, bounds: CheckBounds) -> Iterator[Violation]:
    if rule.exclude_type_checking_imports:
        graph = graph.without_type_checking()
    if isinstance(rule, ForbiddenRule):
        return _forbidden(graph, rule, bounds)
    if isinstance(rule, LayersRule):
        return _layers(graph, rule, bounds)
    if isinstance(rule, IndependenceRule):
        return _independence(graph, rule, bounds)
    if isinstance(rule, AcyclicRule):
        return _acyclic(graph, rule, bounds)
    if isinstance(rule, UnusedRouteRule | UnknownRouteRule):
        return _routes(graph, rule, bounds)
    return _allowed_only(graph, rule, bounds)


def hop(graph: DepGraph, edge: Edge) -> Hop:
    """An edge as a violation shows it."""
    return Hop(
        source=graph.name(edge.source),
        target=graph.name(edge.target),
        edge=edge.type,
        file=edge.file,
        line=edge.line,
        type_checking=edge.type_checking,
    )


def type_only_note(hops: Sequence[Hop]) -> str:
    """What a violation's message adds when some of its edges are type-only imports (empty when none is)."""
    typed = [h for h in hops if h.type_checking]
    if not typed:
        return ""
    which = (
        "it is a type-only import"
        if len(hops) == 1
        else (
            f"{len(typed)} of its {len(hops)} edges"
            f" {'is a type-only import' if len(typed) == 1 else 'are type-only imports'}"
        )
    )
    return f" ({which}; exclude_type_checking_imports = true leaves those out)"


def _chain_hops(graph: DepGraph, chain: Chain, types: Sequence[str]) -> list[Hop]:
    hops = []
    for a, b in zip(chain, chain[1:], strict=False):
        edge = next(graph.edges[(a, t, b)] for t in types if (a, t, b) in graph.edges)
        hops.append(hop(graph, edge))
    return hops


def _violation(graph: DepGraph, rule: Rule, chain: Chain, message: str, bounds: CheckBounds) -> Violation:
    bounds.admit(len(chain) - 1)
    hops = _chain_hops(graph, chain, rule.edges)
    names = "->".join(graph.name(n) for n in chain)
    return Violation(
        rule=rule.name,
        kind=rule.kind,
        severity=rule.severity,
        message=message + type_only_note(hops),
        path=hops,
        key=f"{rule.name}|{names}",
    )


def _forbidden(graph: DepGraph, rule: ForbiddenRule, bounds: CheckBounds) -> Iterator[Violation]:
    seen: set[Chain] = set()
    if rule.through is not None:
        bounds.visit(len(graph.nodes) * len(parts(rule.through)))
    allowed = pick(graph, rule.through) if rule.through is not None else set()
    adj = Adjacency.of(graph, rule.edges, without=allowed, visit=bounds.visit) if rule.transitive else None
    source_parts, target_parts = parts(rule.from_), parts(rule.to)
    # each part picked once, not once per pair of parts (300 x 300 globs once cost seconds)
    bounds.visit(len(graph.nodes) * (len(source_parts) + len(target_parts)))
    picked_sources = [pick(graph, part) for part in source_parts]
    picked_targets = [pick(graph, part) for part in target_parts]
    found = (
        _transitive_chains(graph, picked_sources, picked_targets, adj, bounds)
        if adj is not None
        else _direct_chains(graph, rule.edges, picked_sources, picked_targets, bounds)
    )
    for i, j, chain in found:
        if chain in seen:
            continue
        seen.add(chain)
        source_part, target_part = source_parts[i], target_parts[j]
        first, last = graph.name(chain[0]), graph.name(chain[-1])
        how = (
            ("requests" if (chain[0], "REQUESTS", chain[1]) in graph.edges else "imports")
            if len(chain) == 2
            else (f"reaches (through {len(chain) - 2} more)")
        )
        yield _violation(
            graph,
            rule,
            chain,
            f"{first} {how} {last}: {describe(source_part)} may not depend on {describe(target_part)}",
            bounds,
        )


def _transitive_chains(
    graph: DepGraph,
    picked_sources: list[set[str]],
    picked_targets: list[set[str]],
    adj: Adjacency,
    bounds: CheckBounds,
) -> Iterator[tuple[int, int, Chain]]:
    """(source part, target part, chain) of a transitive rule, pair of parts by pair in order."""
    for i, picked_source in enumerate(picked_sources):
        for j, picked_target in enumerate(picked_targets):
            bounds.visit(1 + len(picked_source) + len(picked_target))
            sources, targets = (
                picked_source - picked_target,
                picked_target - picked_source,
            )  # a node in both is neither
            for chain in shortest_chains(adj, sources, targets, graph.name, bounds.visit):
                yield i, j, chain


def _direct_chains(
    graph: DepGraph,
    types: Sequence[str],
    picked_sources: list[set[str]],
    picked_targets: list[set[str]],
    bounds: CheckBounds,
) -> Iterator[tuple[int, int, Chain]]:
    """(source part, target part, edge) of a direct rule, in the order the pairs of parts list them: one pass
    over the edges, each given to the first pair that forbids it (the only one its violation names)."""
    in_source: dict[str, list[int]] = {}
    in_target: dict[str, list[int]] = {}
    for i, nodes in enumerate(picked_sources):
        for n in nodes:
            in_source.setdefault(n, []).append(i)
    for j, nodes in enumerate(picked_targets):
        for n in nodes:
            in_target.setdefault(n, []).append(j)
    edges = graph.of_types(types)
    bounds.visit(len(edges))
    found: list[tuple[int, int, int, Chain]] = []
    for k, e in enumerate(edges):
        if e.source not in in_source or e.target not in in_target:
            continue
        pair = _first_pair(
            in_source[e.source],
            in_target[e.target],
            set(in_target.get(e.source, ())),
            set(in_source.get(e.target, ())),
            bounds,
        )
        if pair is not None:
            found.append((*pair, k, (e.source, e.target)))
    for i, j, _, chain in sorted(found, key=lambda f: f[:3]):
        yield i, j, chain


def _first_pair(
    sources: Sequence[int],
    targets: Sequence[int],
    source_in_targets: set[int],
    target_in_sources: set[int],
    bounds: CheckBounds,
) -> tuple[int, int] | None:
    """The first (source part, target part) whose sets, less their overlap, hold an edge's two ends."""
    for i in sources:
        if i in target_in_sources:
            continue
        for j in targets:
            bounds.visit(1)
            if j not in source_in_targets:
                return i, j
    return None


def _layers(graph: DepGraph, rule: LayersRule, bounds: CheckBounds) -> Iterator[Violation]:
    for container in rule.containers or [""]:
        parts = _layer_parts(graph, rule, container, bounds)
        yield from _ordered(graph, rule, parts, bounds)


def _layer_parts(graph: DepGraph, rule: LayersRule, container: str, bounds: CheckBounds) -> list[list[Part]]:
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
            bounds.visit(len(graph.nodes))
            nodes = pick(graph, prefix + name) - placed
            placed |= nodes
            parts.append((prefix + name, nodes, independent))
        layers.append(parts)
    return layers


def _ordered(
    graph: DepGraph, rule: LayersRule | IndependenceRule, layers: list[list[Part]], bounds: CheckBounds
) -> Iterator[Violation]:
    """Violations of ``layers`` (highest first): lower to higher, and between independent siblings."""
    every: set[str] = set()
    for layer in layers:
        for part in layer:
            every |= part[1]
    for (low_name, lows, _), (high_name, highs, _), why in _pairs(rule, layers):
        bounds.visit(1)  # 64 layers of 64 siblings make 8 million pairs: each one counts
        if not lows or not highs:
            continue
        bounds.visit(len(every))
        for chain in _pair_chains(graph, rule, lows, highs, every - lows - highs, bounds):
            first, last = graph.name(chain[0]), graph.name(chain[-1])
            how = (
                ("requests" if (chain[0], "REQUESTS", chain[1]) in graph.edges else "imports")
                if len(chain) == 2
                else (f"reaches (through {len(chain) - 2} more)")
            )
            yield _violation(
                graph,
                rule,
                chain,
                f"{first} {how} {last}: {low_name} may not depend on {high_name}, {why}",
                bounds,
            )


def _pairs(rule: LayersRule | IndependenceRule, layers: list[list[Part]]) -> Iterator[tuple[Part, Part, str]]:
    """(lower, higher, why) of ``layers``, one at a time: a lower layer's part and a higher one's, then the
    independent siblings of each layer."""
    for i, upper in enumerate(layers):
        for lower_layer in layers[i + 1 :]:
            for low in lower_layer:
                for high in upper:
                    yield low, high, "a higher layer"
        if upper and upper[0][2]:
            for a, b in permutations(upper, 2):
                yield a, b, "an independent sibling" if isinstance(rule, LayersRule) else "independent of it"


def _pair_chains(
    graph: DepGraph,
    rule: LayersRule | IndependenceRule,
    low: set[str],
    high: set[str],
    others: set[str],
    bounds: CheckBounds,
) -> list[Chain]:
    if rule.transitive:
        return routes(
            Adjacency.of(graph, rule.edges, without=others, visit=bounds.visit),
            low,
            high,
            graph.name,
            bounds.visit,
        )
    edges = graph.of_types(rule.edges)
    bounds.visit(len(edges))
    return [(e.source, e.target) for e in edges if e.source in low and e.target in high]


def _independence(graph: DepGraph, rule: IndependenceRule, bounds: CheckBounds) -> Iterator[Violation]:
    placed: set[str] = set()
    parts: list[Part] = []
    for selector in rule.modules:
        bounds.visit(len(graph.nodes))
        nodes = pick(graph, selector) - placed
        placed |= nodes
        parts.append((describe(selector), nodes, True))
    return _ordered(graph, rule, [parts], bounds)


CUT_SHOWN = 3
"""Dependencies of a cycle's cut named in its one-line message (all of them are in ``breaking_edges``)."""


def _acyclic(graph: DepGraph, rule: AcyclicRule, bounds: CheckBounds) -> Iterator[Violation]:
    bounds.visit(len(graph.nodes) * (1 + len(parts(rule.select))) + len(graph.edges))
    level = level_graph(graph, rule.level, rule.edges, external=rule.external)
    among = (
        pick(graph, rule.select, among=level.names)
        if rule.level != "service"
        else {
            n
            for n, name in level.names.items()
            for s in parts(rule.select)
            if isinstance(s, str) and fnmatchcase(name, s)
        }
    )
    for cycle in find_cycles(level, among):
        bounds.admit(len(cycle.path) - 1 + sum(len(level.edges[arc]) for arc in cycle.breaking))
        name = level.names.__getitem__
        hops = [hop(graph, level.edges[(a, b)][0]) for a, b in zip(cycle.path, cycle.path[1:], strict=False)]
        breaking = [hop(graph, e) for arc in cycle.breaking for e in level.edges[arc]]
        members = [name(m) for m in cycle.members]
        shown = ", ".join(members[:6]) + (f" and {len(members) - 6} more" if len(members) > 6 else "")
        arcs = [f"{name(a)} -> {name(b)}" for a, b in cycle.breaking]
        # a big cycle's cut is listed edge by edge with its lines (breaking_edges): the message names a few
        cut = (
            "; ".join(arcs)
            if len(arcs) <= CUT_SHOWN
            else (
                f"these {len(arcs)} dependencies ({'; '.join(arcs[:CUT_SHOWN])}; and {len(arcs) - CUT_SHOWN}"
                " more)"
            )
        )
        yield Violation(
            rule=rule.name,
            kind=rule.kind,
            severity=rule.severity,
            message=(
                f"{len(members)} {rule.level}s depend on each other in a cycle ({shown}); "
                f"removing {cut} breaks it{type_only_note(hops)}"
            ),
            path=hops,
            breaking_edges=breaking,
            key=f"{rule.name}|cycle|{','.join(members)}",
        )


def _allowed_only(graph: DepGraph, rule: AllowedOnlyRule, bounds: CheckBounds) -> Iterator[Violation]:
    edges = graph.of_types(rule.edges)
    bounds.visit(len(graph.nodes) * (len(parts(rule.from_)) + len(parts(rule.to))) + len(edges))
    sources = pick(graph, rule.from_)
    allowed = pick(graph, rule.to) | sources
    for e in edges:
        if e.source in sources and e.target not in allowed:
            yield _violation(
                graph,
                rule,
                (e.source, e.target),
                f"{graph.name(e.source)} depends on {graph.name(e.target)} ({e.type}): "
                f"{describe(rule.from_)} may depend only on {describe(rule.to)}",
                bounds,
            )


def _routes(
    graph: DepGraph, rule: UnusedRouteRule | UnknownRouteRule, bounds: CheckBounds
) -> Iterator[Violation]:
    """unused_route: a route the tree HANDLES that nothing REQUESTS; unknown_route: a REQUESTS edge to a route
    nothing HANDLES (each among ``select``: the routes, the callers)."""
    bounds.visit(len(graph.nodes) * len(parts(rule.select)) + len(graph.edges))
    picked = pick(graph, rule.select) if "select" in rule.model_fields_set else set(graph.nodes)
    handled: dict[str, Edge] = {}
    requested: dict[str, list[Edge]] = {}
    for e in graph.of_types(("HANDLES", "REQUESTS")):
        if e.type == "HANDLES":
            handled.setdefault(e.target, e)
        else:
            requested.setdefault(e.target, []).append(e)
    if isinstance(rule, UnusedRouteRule):
        for route, e in handled.items():
            if route not in requested and route in picked:
                bounds.admit(1)
                yield Violation(
                    rule=rule.name,
                    kind=rule.kind,
                    severity=rule.severity,
                    path=[hop(graph, e)],
                    message=(
                        f"{graph.name(route)} is handled by {graph.name(e.source)} but no code of the "
                        "tree requests it"
                    ),
                    key=f"{rule.name}|{graph.name(route)}",
                )
        return
    for route, edges in requested.items():
        if route in handled:
            continue
        for e in edges:
            if e.source in picked:
                bounds.admit(1)
                yield Violation(
                    rule=rule.name,
                    kind=rule.kind,
                    severity=rule.severity,
                    path=[hop(graph, e)],
                    message=(
                        f"{graph.name(e.source)} requests {graph.name(route)}, which no route of the "
                        "tree handles"
                    ),
                    key=f"{rule.name}|{graph.name(e.source)}->{graph.name(route)}",
                )
