"""The groups a big graph is drawn as (igg/view/aggregate.py), computed with the viewer's payload."""

from __future__ import annotations

import random

from igg.graph.state import GraphState
from igg.models.schema import Schema
from igg.view.aggregate import AGGREGATE_ABOVE, LOOSE_LIMIT, containment_parents
from igg.view.data import graph_payload
from tests.support.bigcode import code_map


def plain_state(node_types: list[str], edge_types: list[str]) -> GraphState:
    return GraphState(Schema(node_types=node_types, edge_types=edge_types).compile())


def test_a_code_map_is_grouped_by_its_containment_tree_with_sizes_counting_every_descendant():
    payload = graph_payload(code_map(2_000))
    grouping, nodes = payload["grouping"], {n["id"]: n for n in payload["nodes"]}
    assert grouping["kind"] == "contains" and grouping["aggregate"] is True  # 2,000 > AGGREGATE_ABOVE
    groups = {g["id"]: g for g in grouping["groups"]}
    top = next(g for g in grouping["groups"] if nodes[g["id"]]["label"] == "pkg0")
    assert "parent" not in top and top["kind"] == "contains"
    under = [n for n in nodes if _ancestors(nodes, n, top["id"])]
    assert top["size"] == len(under)  # every node below pkg0, at any depth
    method = next(n for n in payload["nodes"] if n["type"] == "Method")
    owner = nodes[method["parent"]]
    assert owner["type"] == "Class" and groups[owner["id"]]["parent"] == owner["parent"]
    assert [g["size"] for g in grouping["groups"]] == sorted(
        (g["size"] for g in grouping["groups"]), reverse=True
    )


def _ancestors(nodes: dict[str, dict], node: str, wanted: str) -> bool:
    parent = nodes[node].get("parent")
    while parent is not None:
        if parent == wanted:
            return True
        parent = nodes[parent].get("parent")
    return False


def test_a_small_graph_is_drawn_whole_and_a_containment_cycle_is_cut():
    state = plain_state(["Package"], ["CONTAINS"])
    a, b, c = (state.add_node("Package", {"name": x}) for x in "abc")
    state.add_edge(a, "CONTAINS", b, {})
    state.add_edge(b, "CONTAINS", c, {})
    state.add_edge(c, "CONTAINS", a, {})  # bad input: a cycle
    parents = containment_parents(state)
    assert len(parents) == 2 and len(set(parents) | set(parents.values())) == 3
    payload = graph_payload(state)
    assert payload["grouping"]["aggregate"] is False  # 3 nodes: below AGGREGATE_ABOVE, drawn whole
    roots = [n for n in payload["nodes"] if "parent" not in n]
    assert len(roots) == 1


def test_other_graphs_are_grouped_into_louvain_communities_named_after_their_hub_big_ones_split():
    rng = random.Random(3)
    state = plain_state(["Person"], ["KNOWS"])
    blocks = [
        [state.add_node("Person", {"name": f"b{b}-{i}"}) for i in range(AGGREGATE_ABOVE // 2 + 20)]
        for b in range(2)
    ]
    for block in blocks:
        for u in block:
            for v in rng.sample(block, 6):
                if u != v and state.edge_between(u, "KNOWS", v) is None:
                    state.add_edge(u, "KNOWS", v, {})
    state.add_edge(blocks[0][0], "KNOWS", blocks[1][0], {})
    payload = graph_payload(state)
    grouping = payload["grouping"]
    assert grouping["kind"] == "community" and grouping["aggregate"] is True
    block_of = {n: i for i, block in enumerate(blocks) for n in block}
    members: dict[str, set[int]] = {}
    for n in payload["nodes"]:
        members.setdefault(n["parent"], set()).add(block_of[n["id"]])
    assert all(len(blocks_in) == 1 for blocks_in in members.values())  # no community spans the two blocks
    assert all(g["label"].startswith("around b") and g["kind"] == "community" for g in grouping["groups"])
    assert sum(g["size"] for g in grouping["groups"] if "parent" not in g) == state.node_count
    parts = [
        g for g in grouping["groups"] if "parent" in g
    ]  # a block of 220 (> SPLIT_ABOVE) opens onto its parts
    assert parts and all(g["id"].startswith(g["parent"] + ".") for g in parts)
    again = graph_payload(state)["grouping"]["groups"]
    assert again == grouping["groups"]  # a fixed seed: the same graph, the same groups
    kept = graph_payload(state, communities=False)  # a refreshing live page keeps its own communities
    assert kept["grouping"] == {
        "kind": "community",
        "aggregate": True,
        "threshold": AGGREGATE_ABOVE,
        "groups": [],
    }
    assert not any("parent" in n for n in kept["nodes"])


def test_many_top_level_nodes_without_a_container_are_gathered_by_type():
    state = plain_state(["Package", "Module", "DatabaseTable"], ["CONTAINS"])
    p = state.add_node("Package", {"name": "p"})
    for i in range(3):
        state.add_edge(p, "CONTAINS", state.add_node("Module", {"name": f"m{i}"}), {})
    for i in range(LOOSE_LIMIT + 1):
        state.add_node("DatabaseTable", {"name": f"t{i}"})
    grouping = graph_payload(state)["grouping"]
    tables = next(g for g in grouping["groups"] if g["id"] == "type:DatabaseTable")
    assert tables == {
        "id": "type:DatabaseTable",
        "label": "DatabaseTable (ungrouped)",
        "kind": "type",
        "size": LOOSE_LIMIT + 1,
    }
