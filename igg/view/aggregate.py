"""Groups for big graphs: what the viewer draws instead of every node (computed once, on the server or at
export).

Above ``AGGREGATE_ABOVE`` nodes the page starts aggregated: it draws groups, each as one node sized by its
member count, with one edge bundle per pair of groups weighted by the number of edges under it, and a person
expands a group to see its members (and collapses it back). The groups come from the graph itself:

- ``contains`` (code maps and any graph with a containment tree): every node with ``CONTAINS`` children is a
  group of its descendants: packages hold modules, modules hold classes, classes hold methods. The group *is*
  that node (the package draws as the package, sized by what it holds). A node's parent is the source of its
  first incoming ``CONTAINS`` edge; a containment cycle (bad input) is cut where it closes.
- ``community`` (other graphs): Louvain communities (networkx, fixed seed, so the same graph gives the same
  groups), each a synthetic group named after its most connected member; a big community is split again
  into its own communities, so it opens onto parts rather than hundreds of nodes.

HTTP routes (``Route`` nodes) are grouped by the service that handles them (``routes of orders``), so the
aggregated page shows the requests between services. Either way, top-level nodes without a group are gathered
by type when there are more than ``LOOSE_LIMIT`` of them (one ``DatabaseTable (ungrouped)`` group instead of
5,000 loose discs). Every node keeps its parent in the payload (``parent``), so a node added later (a growing
session) joins its group on the page.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Literal

import networkx as nx

from igg.graph.state import GraphState

AGGREGATE_ABOVE = 400
"""Node count above which the page opens aggregated (a person can still show every node)."""

CONTAINMENT = "CONTAINS"
"""The edge type that builds the group tree when a graph has one."""

LOOSE_LIMIT = 40
"""Top-level nodes without a group beyond this count are gathered into one group per node type."""

SPLIT_ABOVE = 150
"""A community with more members than this is split into its own communities (one level more)."""

SPLIT_DEPTH = 3
"""Levels of communities at most (a community, its parts, theirs)."""

COMMUNITY_EDGE_LIMIT = 500_000
"""Louvain runs up to this many edges; past it (seconds of CPU per payload) nodes are grouped by type."""

GroupKind = Literal["contains", "community", "type"]
"""How a group was made: a containing node, a Louvain community, or the loose nodes of one type."""


@dataclass(kw_only=True)
class Grouping:
    """How a graph is grouped for drawing."""

    kind: Literal["contains", "community", "none"]
    """``contains``: the containment tree; ``community``: Louvain; ``none``: no groups but loose ones by
    type."""
    aggregate: bool
    """Whether the page opens aggregated (more than ``AGGREGATE_ABOVE`` nodes and some group)."""
    groups: list[dict[str, Any]] = field(default_factory=list)
    """``{"id", "label", "kind", "size"}`` and ``"parent"`` when inside another group; biggest first. ``size``
    counts every node under the group, at any depth."""
    parents: dict[str, str] = field(default_factory=dict)
    """Each grouped node's group (what the payload writes as the node's ``parent``)."""

    def to_payload(self) -> dict[str, Any]:
        """The payload's ``grouping`` (the parents travel with the nodes)."""
        return {
            "kind": self.kind,
            "aggregate": self.aggregate,
            "threshold": AGGREGATE_ABOVE,
            "groups": self.groups,
        }


def grouping(
    state: GraphState, labels: dict[str, str], degrees: dict[str, int], *, communities_too: bool = True
) -> Grouping:
    """The groups ``state`` is drawn as; ``labels`` and ``degrees`` are the payload's (computed once by the
    caller).

    ``communities_too=False`` leaves Louvain out (seconds on tens of thousands of edges): a graph that would
    be grouped into communities comes back as ``community`` with no groups. A live page that already has its
    communities asks for that on each refresh: it keeps its own and puts new nodes with their neighbours.
    """
    n = state.node_count
    parents: dict[str, str] = {}
    groups: dict[str, dict[str, Any]] = {}
    kind: Literal["contains", "community", "none"] = "none"
    if n > 0:
        parents = containment_parents(state)
        if parents and len(parents) >= n // 3:
            kind = "contains"
            for parent in parents.values():
                if parent not in groups:
                    groups[parent] = {"id": parent, "label": labels.get(parent, parent), "kind": "contains"}
        elif n > AGGREGATE_ABOVE and state.edge_count <= COMMUNITY_EDGE_LIMIT:
            if not communities_too:
                return Grouping(kind="community", aggregate=True)
            kind = "community"
            parents = {}
            graph = undirected(state)
            _community_groups(graph, communities(graph), None, 1, labels, degrees, groups, parents)
    _gather_routes(state, parents, groups)
    _gather_loose(state, parents, groups)
    for g in groups.values():
        if g["id"] in parents:
            g["parent"] = parents[g["id"]]
    _sizes(parents, groups)
    return Grouping(
        kind=kind,
        aggregate=n > AGGREGATE_ABOVE and bool(groups),
        parents=parents,
        groups=sorted(groups.values(), key=lambda g: (-g["size"], g["id"])),
    )


def containment_parents(state: GraphState) -> dict[str, str]:
    """Each contained node's container (the source of its first incoming ``CONTAINS`` edge), cycles cut."""
    parents: dict[str, str] = {}
    for _, u, v, d in state.edges():
        if d["type"] == CONTAINMENT and v not in parents and u != v:
            parents[v] = u
    # cut a cycle where it closes: walk up from each node; a node met twice on one walk loses its parent
    settled: set[str] = set()
    for start in list(parents):
        walk: list[str] = []
        on_walk: set[str] = set()
        node: str | None = start
        while node is not None and node not in settled:
            if node in on_walk:
                parents.pop(node, None)
                break
            walk.append(node)
            on_walk.add(node)
            node = parents.get(node)
        settled.update(walk)
    return parents


def undirected(state: GraphState) -> nx.Graph[str]:
    """The graph without directions, parallel edges counted as the edge's weight, self-loops left out."""
    g: nx.Graph[str] = nx.Graph()
    g.add_nodes_from(n for n in state.graph.nodes)
    for _, u, v, _d in state.edges():
        if u != v:
            w = g.get_edge_data(u, v, default={"weight": 0})["weight"]
            g.add_edge(u, v, weight=w + 1)
    return g


def communities(graph: nx.Graph[str]) -> list[set[str]]:
    """Louvain communities (seed 0: the same graph gives the same groups), largest first."""
    found = nx.community.louvain_communities(graph, weight="weight", seed=0)
    return sorted((set(c) for c in found), key=lambda c: (-len(c), min(c)))


def _community_groups(
    graph: nx.Graph[str],
    found: list[set[str]],
    parent: str | None,
    depth: int,
    labels: dict[str, str],
    degrees: dict[str, int],
    groups: dict[str, dict[str, Any]],
    parents: dict[str, str],
) -> None:
    """One group per community of two or more; a community above ``SPLIT_ABOVE`` is split again (Louvain on
    its own edges), down to ``SPLIT_DEPTH`` levels, so opening a big community shows its parts, not all its
    nodes."""
    for index, members in enumerate(found):
        if len(members) < 2:
            continue
        gid = f"group:{index + 1}" if parent is None else f"{parent}.{index + 1}"
        hub = max(members, key=lambda m: (degrees.get(m, 0), m))
        groups[gid] = {"id": gid, "label": f"around {labels.get(hub, hub)}", "kind": "community"}
        if parent is not None:
            parents[gid] = parent
        inner = (
            communities(graph.subgraph(members)) if len(members) > SPLIT_ABOVE and depth < SPLIT_DEPTH else []
        )
        if len(inner) > 1:
            _community_groups(graph, inner, gid, depth + 1, labels, degrees, groups, parents)
            for m in members:  # nodes the split left alone stay in the community itself
                parents.setdefault(m, gid)
        else:
            for m in members:
                parents[m] = gid


def _gather_routes(state: GraphState, parents: dict[str, str], groups: dict[str, dict[str, Any]]) -> None:
    """HTTP routes (``Route`` nodes, which nothing CONTAINS) grouped by the service that handles them:
    aggregated, the page draws the requests between services as bundles from the callers' groups to the
    services' routes."""
    for n in state.graph.nodes:
        if n in parents or state.node_type(n) != "Route":
            continue
        service = str(state.node_properties(n).get("service", ""))
        gid = f"service:{service}"
        if gid not in groups:
            groups[gid] = {"id": gid, "label": f"routes of {service}", "kind": "service"}
        parents[n] = gid


def _gather_loose(state: GraphState, parents: dict[str, str], groups: dict[str, dict[str, Any]]) -> None:
    """Top-level nodes that are no group: one ``type`` group per node type when there are too many."""
    loose = [n for n in state.graph.nodes if n not in parents and n not in groups]
    if len(loose) <= LOOSE_LIMIT:
        return
    by_type: defaultdict[str, list[str]] = defaultdict(list)
    for n in loose:
        by_type[state.node_type(n)].append(n)
    for node_type, members in sorted(by_type.items()):
        if len(members) < 2:
            continue
        gid = f"type:{node_type}"
        groups[gid] = {"id": gid, "label": f"{node_type} (ungrouped)", "kind": "type"}
        for m in members:
            parents[m] = gid


def _sizes(parents: dict[str, str], groups: dict[str, dict[str, Any]]) -> None:
    """Each group's ``size``: every node under it, at any depth (the container itself and sub-groups that are
    no node, such as a community's parts, not counted)."""
    size: Counter[str] = Counter()
    for child in parents:
        if child in groups and groups[child]["kind"] != "contains":
            continue  # a synthetic group is no node
        node: str | None = parents[child]
        hops = 0
        while node is not None and hops <= len(parents):
            size[node] += 1
            node = parents.get(node)
            hops += 1
    for gid, g in groups.items():
        g["size"] = size[gid]
