"""Big graphs in the viewer, as a person sees them: generated 10k- and 100k-node code maps in a real headless
Chromium.

The export opens aggregated: groups (packages, then modules) with their sizes in the accessible list, the
drawing in distinct colours (one per top-level package, counted on a screenshot's pixels), CONTAINS hidden. A
group expands and collapses, a node found by the search shows its neighbourhood, a path to another node, and
what depends on it, each checked against the same walk done here over the graph. First-render times are
recorded in ``test-artifacts/view/first-render.txt`` (``scripts/bench_view.py`` measures them; no test asserts
a time).
"""

from __future__ import annotations

import json
import re
from collections import deque
from pathlib import Path
from typing import Any

import networkx as nx
import pytest

from igg.export.html import write_html
from igg.graph.state import GraphState
from igg.view.data import graph_payload, node_label
from tests.integration.test_view_export import offline
from tests.support.bigcode import code_map
from tests.support.browser import ARTIFACTS
from tests.support.png import colour_regions

pytest_plugins = ["tests.support.browser"]

GROUP_COLORS = [
    "#3b6fb6",
    "#e07b24",
    "#3f9a4a",
    "#d1423f",
    "#5fb0aa",
    "#d9b626",
    "#9b5fa0",
    "#f08aa0",
    "#8a6248",
    "#1f7f8c",
    "#7fb2e0",
    "#8cc06f",
    "#c45584",
    "#a88a1c",
    "#4d4d99",
    "#d4884a",
    "#5d8f3a",
    "#b0417a",
]
"""The page's group palette (viewer.js GROUP_COLORS): each top-level package's groups are drawn in one."""


@pytest.fixture(scope="module")
def big10k(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A generated 10,000-node code map and its HTML export."""
    state = code_map(10_000)
    path = tmp_path_factory.mktemp("big") / "code10k.html"
    write_html(state, path)
    return {"state": state, "html": path}


def open_export(page: Any, path: Path, label: str) -> float:
    """Open an export offline and wait for its first frame; returns (and records) the page's first-render
    mark."""
    offline(page)
    page.page.goto(
        path.as_uri() + "#nolayout"
    )  # the force layout would only move the pixels under the checks
    page.wait_ready(timeout_ms=120_000)
    ms = float(page.page.evaluate("() => window.iggView.firstRenderMs"))
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with (ARTIFACTS / "first-render.txt").open("a", encoding="utf-8") as out:
        out.write(f"{label}: first render {ms:.0f} ms\n")
    return ms


def group_labels(page: Any) -> list[str]:
    return [str(t) for t in page.page.locator("#node-list button[data-group] .label").all_inner_texts()]


def canvas_colours(page: Any) -> dict[str, int]:
    """Pixels per group colour in a screenshot of the drawing."""
    return dict(colour_regions(page.page.locator("#canvas").screenshot(), GROUP_COLORS))


def undirected(state: GraphState) -> nx.Graph:
    g: nx.Graph = nx.Graph()
    g.add_nodes_from(state.graph.nodes)
    g.add_edges_from((u, v) for _, u, v, _ in state.edges())
    return g


def test_a_10k_code_map_opens_as_labelled_groups_in_distinct_colours(page, big10k):
    open_export(page, big10k["html"], "10k-node code map")
    p = page.page
    labels = group_labels(page)
    assert len(labels) >= 20, labels
    assert all(re.fullmatch(r"pkg\d+\.sub\d|pkg\d+/sub\d/mod\d+\.py", t) for t in labels), labels
    assert re.fullmatch(
        r"\d+ groups and \d+ nodes shown of 10,000 nodes", p.locator("#node-count").inner_text()
    )
    assert p.locator("#crumbs").inner_text().startswith("All groups")
    assert not p.locator("#edge-types input[data-type=CONTAINS]").is_checked()  # hidden by default
    assert p.locator("#edge-types input[data-type=CALLS]").is_checked()
    colours = canvas_colours(page)
    regions = [c for c, n in colours.items() if n >= 150]
    assert len(regions) >= 5, colours  # one colour per top-level package (6 of them), not one solid disc
    assert max(colours.values()) < 0.5 * sum(colours.values()), colours
    page.shot("big-10k-groups")

    p.check("#edge-types input[data-type=CONTAINS]")  # a person's choice is remembered in this browser
    p.reload()
    page.wait_ready(timeout_ms=120_000)
    assert p.locator("#edge-types input[data-type=CONTAINS]").is_checked()
    assert page.errors == []


def test_every_node_drawn_at_10k_uses_thin_edges_and_a_selected_node_gets_its_width_back(page, big10k):
    """The Groups button draws all 10,000 nodes and their edges (past 5,000: one-pixel lines, compiled on
    that redraw); a selected node's edges are drawn wide again, and the groups come back."""
    open_export(page, big10k["html"], "10k-node code map")
    p = page.page
    p.click("#groups-toggle")
    p.wait_for_function("() => window.iggView.graph.order === 10000", timeout=60_000)
    drawn = p.evaluate(
        """() => { const v = window.iggView, kinds = {};
          v.graph.forEachEdge((e, a) => { if (!a.hidden) { kinds[a.type] = (kinds[a.type] || 0) + 1; } });
          return { kinds, edges: v.drawn.edges, thin: v.drawn.thin,
            programs: Object.keys(v.renderer.getSetting("edgeProgramClasses")).sort() }; }"""
    )
    assert drawn["thin"] and drawn["edges"] > 5000 and drawn["kinds"] == {"thin": drawn["edges"]}, drawn
    assert drawn["programs"] == ["arrow", "line", "thin"]
    node = p.evaluate(
        "() => { const g = window.iggView.graph; return g.source(g.findEdge((e, a) => !a.hidden)); }"
    )
    p.evaluate("(node) => window.iggView.renderer.emit('clickNode', { node })", node)
    shown = p.evaluate(
        """(node) => { const v = window.iggView, out = [];
          v.graph.forEachEdge(node, (e) => {
            const d = v.renderer.getEdgeDisplayData(e);
            if (d && !d.hidden) { out.push(d.type); }
          });
          return out; }""",
        node,
    )
    assert shown and set(shown) == {"line"}, shown
    p.click("#groups-toggle")
    p.wait_for_function("() => window.iggView.graph.order < 200", timeout=60_000)
    assert page.errors == []


def test_a_group_expands_to_its_members_and_collapses_back(page, big10k):
    open_export(page, big10k["html"], "10k-node code map")
    p = page.page
    first = p.locator("#node-list li.group").first
    group_id = first.locator("button[data-group]").get_attribute("data-group")
    name = first.locator(".label").inner_text()
    state: GraphState = big10k["state"]
    members = {
        state.node_properties(v).get("path")
        for _, u, v, d in state.edges()
        if u == group_id and d["type"] == "CONTAINS"
    }
    first.locator("button.expand").click()
    p.wait_for_selector(f"#node-list button[data-node='{group_id}']")
    assert name not in group_labels(page)
    opened = {t for t in group_labels(page) if t.startswith(name.replace(".", "/") + "/")}
    assert opened == members  # its modules, each a group of its own now
    assert p.locator("#crumbs button[aria-current=true]").inner_text() == name
    p.wait_for_function(
        "() => document.querySelector('#layout-progress').value > 0"
    )  # ForceAtlas2 in a worker
    assert p.locator("#layout-text").inner_text().startswith("Refining the layout")
    page.shot("big-10k-expanded")

    p.click(f"#node-list button[data-node='{group_id}']")
    p.click("#group-collapse")
    p.wait_for_selector(f"#node-list button[data-group='{group_id}']")
    assert name in group_labels(page) and not (opened & set(group_labels(page)))
    page.shot("big-10k-collapsed")
    assert page.errors == []


def pick(state: GraphState, node_type: str, degree_at_least: int) -> str:
    return next(n for n in state.nodes_of_type(node_type) if state.degree(n) >= degree_at_least)


def label_of(state: GraphState, node_id: str) -> str:
    return node_label(state, node_id)


def focus_items(page: Any) -> set[str]:
    return set(page.page.evaluate("() => window.iggView.focus.items"))


def test_neighbourhood_path_and_dependents_focus_through_the_ui(page, big10k):
    state: GraphState = big10k["state"]
    graph = undirected(state)
    open_export(page, big10k["html"], "10k-node code map")
    p = page.page
    start = pick(state, "Class", 4)
    p.fill("#search", label_of(state, start))
    p.click(f"#node-list button[data-node='{start}']")  # hidden in a closed group: its groups open
    assert p.locator("#details h2").inner_text() == label_of(state, start)

    p.select_option("#focus-depth", "2")
    p.click("#focus-neighbours")
    p.wait_for_selector("#focus-bar:not([hidden])")
    near = set(nx.single_source_shortest_path_length(graph, start, cutoff=2))
    shown = focus_items(page)
    assert start in shown and shown <= near
    assert (
        shown == near
        if len(near) <= 300
        else len(shown) == 300 and "left out" in p.locator("#focus-bar").inner_text()
    )
    assert "2-hop neighbourhood of" in p.locator("#focus-bar").inner_text()
    page.shot("big-10k-neighbourhood")

    p.click(f"#node-list button[data-node='{start}']")
    hops_from_start = nx.single_source_shortest_path_length(graph, start, cutoff=4)
    goal = next(
        n for n in state.nodes_of_type("Module") if hops_from_start.get(n) == 4 and state.degree(n) >= 3
    )
    p.fill("#path-to", label_of(state, goal))
    p.click("#focus-path")
    p.wait_for_function("() => document.querySelector('#focus-bar').textContent.includes('Path from')")
    hops = nx.shortest_path_length(graph, start, goal)
    assert f"({hops} edges)" in p.locator("#focus-bar").inner_text()
    path = list(p.evaluate("() => window.iggView.focus.items"))
    assert len(path) == hops + 1 and path[0] == start and path[-1] == goal
    assert all(graph.has_edge(a, b) for a, b in zip(path, path[1:], strict=False))
    page.shot("big-10k-path")

    p.click("#focus-back")
    p.wait_for_selector("#focus-bar", state="hidden")
    p.fill("#search", label_of(state, goal))
    p.click(f"#node-list button[data-node='{goal}']")
    p.click("#focus-dependents")
    p.wait_for_function("() => document.querySelector('#focus-bar').textContent.includes('What depends on')")
    dependents = {goal}
    frontier = deque([(goal, 0)])
    while frontier:
        node, depth = frontier.popleft()
        if depth == 5:
            continue
        for source, keyed in state.pred[node].items():
            if any(d["type"] != "CONTAINS" for d in keyed.values()) and source not in dependents:
                dependents.add(source)
                frontier.append((source, depth + 1))
    shown = focus_items(page)
    assert goal in shown and shown <= dependents
    assert shown == dependents if len(dependents) <= 300 else len(shown) == 300
    page.shot("big-10k-dependents")
    assert page.errors == []


def test_new_nodes_join_their_group_when_the_graph_grows(page, big10k):
    """What a live refresh does (viewer.js mergeGraph): a method added under a class in a closed group is
    counted in that group, and open groups stay open."""
    open_export(page, big10k["html"], "10k-node code map")
    p = page.page
    state = code_map(10_000)
    owner = pick(state, "Class", 1)
    new = state.add_node("Method", {"name": "grown", "owner": "x", "signature": "grown()"})
    state.add_edge(owner, "CONTAINS", new, {})
    top_group = p.evaluate("id => window.iggView.rep[id]", owner)
    size_before = p.evaluate("g => window.iggView.model.groups[g].size", top_group)
    opened = set(p.evaluate("() => Array.from(window.iggView.expanded)"))
    grown = graph_payload(
        state
    )  # the server's payload after the growth; the page's own copy plus what is new
    added = {"node": next(n for n in grown["nodes"] if n["id"] == new), "edge": grown["edges"][-1]}
    assert added["node"]["parent"] == owner and added["edge"]["target"] == new
    p.evaluate(
        """added => { const p = Object.assign({}, window.iggView.payload);
        p.nodes = p.nodes.concat([added.node]); p.edges = p.edges.concat([added.edge]);
        window.iggView.merge(p); }""",
        json.loads(json.dumps(added)),
    )
    assert p.evaluate("id => window.iggView.rep[id]", new) == top_group
    assert p.evaluate("g => window.iggView.model.groups[g].size", top_group) == size_before + 1
    assert set(p.evaluate("() => Array.from(window.iggView.expanded)")) == opened
    assert page.errors == []


def test_a_100k_code_map_export_opens_as_groups(page, tmp_path):
    state = code_map(100_000)
    path = tmp_path / "code100k.html"
    summary = write_html(state, path)
    assert summary["nodes"] == 100_000
    assert not re.search(
        r"<script[^>]+src=", path.read_text(encoding="utf-8")[:200_000]
    )  # one self-contained file
    open_export(page, path, "100k-node code map")
    labels = group_labels(page)
    assert len(labels) >= 40 and all(
        re.fullmatch(r"pkg\d+\.sub\d|pkg\d+/sub\d/mod\d+\.py", t) for t in labels
    )
    assert "of 100,000 nodes" in page.page.locator("#node-count").inner_text()
    assert page.page.evaluate("() => window.iggView.graph.order") <= 200  # groups drawn, not 100k discs
    # every bundle is drawn; past 5,000 the 500 heaviest keep their width, the others are one-pixel lines
    edges = page.page.evaluate(
        """() => { const g = window.iggView.graph, out = [];
          g.forEachEdge((e, a) => {
            if (!a.hidden) { out.push([a.bundle ? a.bundle.count : 1, a.type || ""]); }
          });
          return out; }"""
    )
    assert len(edges) == page.page.evaluate("() => window.iggView.drawn.edges") > 5000
    wide = sorted((count for count, kind in edges if kind != "thin"), reverse=True)
    assert len(wide) == 500 and wide[-1] >= max(count for count, kind in edges if kind == "thin")
    colours = canvas_colours(page)
    assert len([c for c, n in colours.items() if n >= 150]) >= 10, colours
    page.shot("big-100k-groups")
    assert page.errors == []


def test_a_graph_without_containment_opens_as_communities_and_a_new_node_joins_its_neighbours(page, tmp_path):
    """Louvain communities (server-side) as groups; when the graph grows the page keeps each known node's
    community, and a new node joins the one most of its neighbours are in, whatever the server renumbered."""
    import random

    from igg.models.schema import Schema

    rng = random.Random(5)
    state = GraphState(Schema(node_types=["Person"], edge_types=["KNOWS"]).compile())
    blocks = [
        [state.add_node("Person", {"name": f"team{b}-person{i}"}) for i in range(220)] for b in range(3)
    ]
    for block in blocks:
        for u in block:
            for v in rng.sample(block, 5):
                if u != v and state.edge_between(u, "KNOWS", v) is None:
                    state.add_edge(u, "KNOWS", v, {})
    path = tmp_path / "people.html"
    write_html(state, path)
    open_export(page, path, "660-node social graph")
    p = page.page
    labels = group_labels(page)
    assert len(labels) >= 3 and all(t.startswith("around team") for t in labels), labels
    colours = canvas_colours(page)
    assert len([c for c, n in colours.items() if n >= 150]) >= 3, colours
    page.shot("big-communities")

    # the friends' community part (a community of 220 is split into parts) and the community around it
    part = p.evaluate("id => window.iggView.model.parent[id]", blocks[1][0])
    friends = [n for n in blocks[1] if p.evaluate("id => window.iggView.model.parent[id]", n) == part][:4]
    community = p.evaluate("id => window.iggView.model.top[id]", part)
    sizes = p.evaluate("gs => gs.map(g => window.iggView.model.groups[g].size)", [part, community])
    new = state.add_node("Person", {"name": "newcomer"})
    for f in friends:
        state.add_edge(new, "KNOWS", f, {})
    # what a live refresh gets: the payload without Louvain (the page keeps its own communities)
    grown = graph_payload(state, communities=False)
    assert grown["grouping"]["kind"] == "community" and not any("parent" in n for n in grown["nodes"])
    p.evaluate("payload => window.iggView.merge(payload)", json.loads(json.dumps(grown)))
    assert p.evaluate("id => window.iggView.model.parent[id]", new) == part
    assert p.evaluate("gs => gs.map(g => window.iggView.model.groups[g].size)", [part, community]) == [
        sizes[0] + 1,
        sizes[1] + 1,
    ]
    assert page.errors == []


def test_a_payload_with_bad_groups_still_draws(page, tmp_path):
    """One bad entry never stops the page: unknown parents, a parent cycle, a duplicate node, an edge to
    nowhere and malformed group entries are passed over; everything else is drawn and listed."""
    from igg.view.page import render_page

    nodes = [
        {"id": f"n{i}", "type": "Thing", "label": f"thing {i}", "properties": {}, "provenance": {}}
        for i in range(6)
    ]
    nodes[0]["parent"] = "nowhere"
    nodes[1]["parent"], nodes[2]["parent"] = "n2", "n1"  # a cycle
    nodes.append(dict(nodes[3]))  # the same id twice
    payload = {
        "version": 2,
        "meta": {"nodes": 6, "edges": 2},
        "node_types": ["Thing"],
        "edge_types": ["R"],
        "identity_keys": {"Thing": ["name"]},
        "iterations": [],
        "nodes": nodes + [None],
        "edges": [
            {"id": "e1", "type": "R", "source": "n3", "target": "n4", "properties": {}, "provenance": {}},
            {"id": "e2", "type": "R", "source": "n4", "target": "ghost", "properties": {}, "provenance": {}},
        ],
        "grouping": {
            "kind": "contains",
            "aggregate": True,
            "groups": [
                None,
                {"label": "no id"},
                {"id": "n1", "label": "one", "kind": "contains", "size": 1},
                {"id": "n2", "label": "two", "kind": "contains", "size": 1, "parent": "n2"},
            ],
        },
    }
    path = tmp_path / "bad.html"
    path.write_text(render_page("static", payload=payload), encoding="utf-8")
    open_export(page, path, "bad payload")
    listed = sorted(page.node_names())
    assert {"thing 0", "thing 3", "thing 4", "thing 5"} <= set(listed) and len(listed) >= 5
    assert page.page.evaluate("() => window.iggView.graph.hasEdge('e1')") is True
    assert page.errors == []


FUZZ = """seed => {
  let s = seed >>> 0;
  const rnd = n => { s = (s + 0x6D2B79F5) >>> 0; let t = s; t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n); };
  const M = window.iggModel, problems = [];
  for (let round = 0; round < 1500; round++) {
    const n = 1 + rnd(30), nodes = [], groups = [], edges = [];
    for (let i = 0; i < n; i++) {
      const node = {id: "n" + rnd(n + 3), type: "T", label: "x" + i}, r = rnd(10);
      if (r < 5) node.parent = "n" + rnd(n + 3); else if (r < 7) node.parent = "g" + rnd(4);
      nodes.push(node);
    }
    for (let g = rnd(8); g > 0; g--) {
      const id = rnd(2) ? "n" + rnd(n) : "g" + rnd(4), group = {id: id, label: id, kind: "contains"};
      if (rnd(2)) group.parent = rnd(2) ? "g" + rnd(4) : "n" + rnd(n);
      groups.push(group);
    }
    for (let e = rnd(40); e > 0; e--)
      edges.push({id: "e" + e, type: "R", source: "n" + rnd(n + 2), target: "n" + rnd(n + 2)});
    const payload = {nodes, edges, grouping: {kind: rnd(2) ? "contains" : "community", groups}};
    const m = M.buildModel(payload, M.buildModel(payload, null));
    for (const aggregated of [true, false]) {
      const open = M.autoExpand(m, aggregated, 5 + rnd(20)), pos = {};
      const shown = M.computeVisible(m, aggregated, open);
      M.placeOpen(m, aggregated, open, pos);
      M.placeMissing(m, shown.items, pos);
      for (const id of m.ids)
        if (shown.rep[id] === undefined) problems.push(["no drawn item stands for", id, payload]);
      for (const id of shown.items)
        if (!pos[id] || !isFinite(pos[id].x)) problems.push(["no position for", id, payload]);
      if (!aggregated && shown.items.length !== m.ids.length)
        problems.push(["not every node drawn", payload]);
      const grown = {};  // what a live refresh does for items that arrive with no place yet
      M.placeMissing(m, shown.items, grown);
      for (const id of shown.items)
        if (!grown[id] || !isFinite(grown[id].y)) problems.push(["not placed", id, payload]);
    }
  }
  return problems.slice(0, 3);
}"""


def test_the_graph_model_survives_random_payloads(page, tmp_path):
    """Property: for random payloads (unknown parents, cycles, self-parents, duplicate ids, groups that are
    nodes or not, edges to nowhere) the model builds, every node is drawn or stood for by a drawn group, every
    drawn item has a position, and a graph drawn whole draws every node: in the page's own Chromium,
    seeded."""
    path = tmp_path / "tiny.html"
    w = code_map(60, packages=1)
    write_html(w, path)
    open_export(page, path, "tiny code map")
    assert page.page.evaluate(FUZZ, 20261127) == []
    assert page.errors == []
