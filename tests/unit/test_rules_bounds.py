"""Bounded work for ``check`` (issue 47): whatever rules a client sends, one check reports at most
``MAX_VIOLATIONS`` violations of ``MAX_HOPS`` edges in all and visits at most ``MAX_VISITS`` nodes and edges,
and says ``truncated`` when it stopped there; selector lists are bounded (``MAX_LISTED``). The fast paths that
make lists and transitive rules cheap (each part picked once, one pass over the edges, one search per
source) are pinned to the pair-by-pair definition by property tests."""

from __future__ import annotations

from collections import deque
from itertools import product
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from igg.errors import WorkspaceError
from igg.models.rules import MAX_LISTED, ForbiddenRule
from igg.rules.bounds import MAX_HOPS, MAX_VIOLATIONS, CheckBounds
from igg.rules.chains import Adjacency, shortest_chains
from igg.rules.check import check
from igg.rules.depgraph import DepGraph, Edge, Node
from igg.rules.select import pick
from igg.store import SessionStore, StoreSessions
from igg.workspace import Workspace
from igg.workspace.ops import CheckInput


def workspace(tmp_path: Path) -> Workspace:
    return Workspace(StoreSessions(SessionStore(tmp_path / "s.sqlite")), output_dir=tmp_path)


def module_graph(
    ws: Workspace, nodes: list[dict[str, Any]], edges: list[tuple[str, str]], node_type: str = "Module"
) -> str:
    """A session whose seed is ``nodes`` (properties of ``node_type``) and IMPORTS ``edges`` between names."""
    seed = {
        "nodes": [{"id": f"n{i}", "type": node_type, "properties": p} for i, p in enumerate(nodes)],
        "edges": [],
    }
    ids = {p["name"]: f"n{i}" for i, p in enumerate(nodes)}
    seed["edges"] = [
        {"id": f"e{k}", "type": "IMPORTS", "from": ids[a], "to": ids[b], "properties": {}}
        for k, (a, b) in enumerate(edges)
    ]
    return ws.start(
        {
            "session_id": "bounds",
            "goal_prompt": "rules",
            "seed_data": seed,
            "config": {
                "constraints": {"max_nodes": 10_000, "max_edges": 20_000},
                "schema": {"node_types": [node_type], "edge_types": ["IMPORTS"]},
            },
        }
    )["session_id"]


def ladder(ends: int, middle: int) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    """``ends`` modules d.* all importing a chain of ``middle`` modules m.* that imports ``ends`` modules u.*:
    ends x ends (downstream, upstream) pairs, each joined by a chain of middle + 1 edges."""
    names = (
        [f"d.{i:03}" for i in range(ends)]
        + [f"m.{i:03}" for i in range(middle)]
        + [f"u.{i:03}" for i in range(ends)]
    )
    edges = [(f"d.{i:03}", "m.000") for i in range(ends)]
    edges += [(f"m.{i:03}", f"m.{i + 1:03}") for i in range(middle - 1)]
    edges += [(f"m.{middle - 1:03}", f"u.{i:03}") for i in range(ends)]
    return [{"name": n, "path": n.replace(".", "/") + ".py"} for n in names], edges


def test_a_transitive_rule_with_thousands_of_long_chains_stops_at_its_bounds_and_says_truncated(tmp_path):
    """Issue 47: a 320-node graph made one forbidden rule report 3,600 chains of 201 hops (+870 MB)."""
    nodes, edges = ladder(60, 200)
    ws = workspace(tmp_path)
    sid = module_graph(ws, nodes, edges)
    rule = {"name": "d-not-u", "kind": "forbidden", "from": "d", "to": "u", "transitive": True}
    report = ws.check(CheckInput(session_id=sid, rules=[rule])).model_dump()
    assert report["truncated"] is True and report["failed"] is True
    hops = sum(len(v["path"]) for v in report["violations"])
    assert 1 <= len(report["violations"]) <= MAX_VIOLATIONS and hops <= MAX_HOPS
    assert all(len(v["path"]) == 201 for v in report["violations"])
    assert report["rules"][0]["violations"] == len(report["violations"])  # a lower bound of 3,600
    small = ws.check(
        CheckInput(session_id=sid, rules=[{**rule, "from": "d.000", "to": "u.000"}])
    ).model_dump()
    assert small["truncated"] is False and len(small["violations"]) == 1


def test_many_direct_violations_stop_at_the_violation_bound(tmp_path):
    nodes = [{"name": f"a.{i}", "path": f"a/{i}.py"} for i in range(40)] + [
        {"name": f"b.{i}", "path": f"b/{i}.py"} for i in range(40)
    ]
    edges = [(f"a.{i}", f"b.{j}") for i in range(40) for j in range(40)]  # 1,600 direct violations
    ws = workspace(tmp_path)
    sid = module_graph(ws, nodes, edges)
    report = ws.check(
        CheckInput(session_id=sid, rules=[{"name": "r", "kind": "forbidden", "from": "a", "to": "b"}])
    ).model_dump()
    assert report["truncated"] is True and len(report["violations"]) == MAX_VIOLATIONS


def test_selector_lists_longer_than_the_bound_are_refused_naming_the_field(tmp_path):
    """Issue 47: 300 x 300 globs in a 5 kB body cost 2.8 s (3,000 x 3,000: minutes)."""
    ws = workspace(tmp_path)
    sid = module_graph(ws, [{"name": "a", "path": "a.py"}, {"name": "b", "path": "b.py"}], [("a", "b")])
    globs = [f"x{i}*" for i in range(300)]
    for rule in (
        {"name": "wide", "kind": "forbidden", "from": globs, "to": globs},
        {"name": "wide", "kind": "layers", "layers": ["a", globs]},
        {"name": "wide", "kind": "independence", "modules": globs},
        {"name": "wide", "kind": "forbidden", "from": {"type": ["Module"] * 300}, "to": "b"},
    ):
        with pytest.raises(WorkspaceError) as refused:
            ws.check(CheckInput(session_id=sid, rules=[rule]))
        assert refused.value.code == "INVALID_RULES"
        assert f"at most {MAX_LISTED} items, got 300: split the rule into several" in refused.value.message
    # every item picks a node (one that picks none is refused: it could never fail); a and b first, so the
    # violation is reported for that pair of parts
    at_bound = ["a", "b"] + [f"a{'*' * (i + 1)}" for i in range(MAX_LISTED - 2)]
    report = ws.check(
        CheckInput(
            session_id=sid, rules=[{"name": "ok", "kind": "forbidden", "from": at_bound, "to": at_bound}]
        )
    ).model_dump()
    assert report["truncated"] is False
    assert [v["message"] for v in report["violations"]] == ["a imports b: a may not depend on b"]


def test_check_on_a_knowledge_graph_with_a_module_type_without_path(tmp_path):
    """Issue 47: any agent's graph may have a ``Module`` type; one without ``path`` made check answer HTTP 500
    (a KeyError where the edges are located)."""
    ws = workspace(tmp_path)
    sid = module_graph(ws, [{"name": "billing"}, {"name": "ledger"}], [("billing", "ledger")])
    report = ws.check(
        CheckInput(
            session_id=sid, rules=[{"name": "r", "kind": "forbidden", "from": "billing", "to": "ledger"}]
        )
    ).model_dump()
    assert [(h["source"], h["target"], h["file"]) for v in report["violations"] for h in v["path"]] == [
        ("billing", "ledger", None)
    ]


# ---- the fast paths, pinned to the definition -----------------------------------------------------------

NAMES = ["a", "a.x", "a.y", "b", "b.x", "c", "c.x", "d"]
_selector = st.one_of(
    st.sampled_from([*NAMES, "*.x", "a*", "[bc]*"]),
    st.lists(st.sampled_from([*NAMES, "*.x", "a*"]), min_size=1, max_size=4),
)


def small_graph(edges: list[tuple[int, int]]) -> DepGraph:
    graph = DepGraph()
    for i, name in enumerate(NAMES):
        graph.add_node(Node(id=f"n{i}", type="Module", name=name, file=f"{name}.py"))
    for a, b in edges:
        if a != b:
            graph.add_edge(Edge(f"n{a}", "IMPORTS", f"n{b}", file=f"{NAMES[a]}.py", line=1))
    return graph


def _bfs(adj: Adjacency, start: str, goal: str, blocked: set[str]) -> tuple[str, ...] | None:
    """The definition: a shortest chain from ``start`` to ``goal`` alone, inner nodes outside ``blocked``."""
    parent: dict[str, str | None] = {start: None}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for nxt in adj.succ.get(node, ()):
            if nxt in parent:
                continue
            parent[nxt] = node
            if nxt == goal:
                chain: list[str] = [nxt]
                back: str | None = node
                while back is not None:
                    chain.append(back)
                    back = parent[back]
                return tuple(reversed(chain))
            if nxt not in blocked:
                queue.append(nxt)
    return None


def reference(graph: DepGraph, rule: ForbiddenRule) -> list[tuple[str, tuple[str, ...]]]:
    """(message, chain) of a forbidden rule pair of parts by pair, each part picked for each pair, one search
    per (downstream, upstream) pair: the rule as written, before its work was bounded."""
    parts = [rule.from_] if not isinstance(rule.from_, list) else rule.from_
    targets = [rule.to] if not isinstance(rule.to, list) else rule.to
    adj = Adjacency.of(graph, rule.edges) if rule.transitive else None
    out, seen = [], set()
    for sp, tp in product(parts, targets):
        s, t = pick(graph, sp), pick(graph, tp)
        s, t = s - t, t - s
        if adj is None:
            chains = [
                (e.source, e.target) for e in graph.of_types(rule.edges) if e.source in s and e.target in t
            ]
        else:
            chains = []
            for d in sorted(s, key=graph.name):
                for u in sorted(t, key=graph.name):
                    found = _bfs(adj, d, u, (s | t) - {d, u})
                    if found is not None:
                        chains.append(found)
        for chain in chains:
            if chain not in seen:
                seen.add(chain)
                out.append((f"{sp}|{tp}", chain))
    return out


@settings(max_examples=200, deadline=None)
@given(
    edges=st.lists(st.tuples(st.integers(0, len(NAMES) - 1), st.integers(0, len(NAMES) - 1)), max_size=20),
    source=_selector,
    target=_selector,
    transitive=st.booleans(),
)
def test_forbidden_rules_find_what_the_pair_by_pair_definition_finds(edges, source, target, transitive):
    graph = small_graph(edges)
    rule = ForbiddenRule(name="r", kind="forbidden", from_=source, to=target, transitive=transitive)
    found = check(graph, [rule])
    expected = reference(graph, rule)
    assert [tuple(n for n in v.key.split("|")[1].split("->")) for v in found] == [
        tuple(graph.name(n) for n in chain) for _, chain in expected
    ]


@settings(max_examples=200, deadline=None)
@given(
    edges=st.lists(st.tuples(st.integers(0, len(NAMES) - 1), st.integers(0, len(NAMES) - 1)), max_size=24),
    down=st.sets(st.integers(0, len(NAMES) - 1), max_size=4),
    up=st.sets(st.integers(0, len(NAMES) - 1), max_size=4),
)
def test_one_search_per_source_finds_each_pairs_own_shortest_chain(edges, down, up):
    graph = small_graph(edges)
    adj = Adjacency.of(graph, ["IMPORTS"])
    d, u = {f"n{i}" for i in down - up}, {f"n{i}" for i in up - down}
    expected = [
        c
        for a in sorted(d, key=graph.name)
        for b in sorted(u, key=graph.name)
        if (c := _bfs(adj, a, b, (d | u) - {a, b})) is not None
    ]
    assert list(shortest_chains(adj, d, u, graph.name)) == expected


def test_a_check_counts_its_visits_and_stops_when_they_are_spent():
    graph = small_graph([(i, j) for i in range(len(NAMES)) for j in range(len(NAMES))])
    rule = ForbiddenRule(name="r", kind="forbidden", from_="[abc]*", to="d", transitive=True)
    bounds = CheckBounds(visits=10)
    assert check(graph, [rule], bounds) == [] and bounds.truncated
    bounds = CheckBounds()
    assert check(graph, [rule], bounds) and not bounds.truncated


@pytest.mark.parametrize("depth", [50, 5000])
def test_a_deeply_nested_rules_file_exits_2_naming_the_problem(tmp_path, capsys, depth):
    """Issue 47: a deeply nested rules file raised RecursionError (a traceback, exit 1)."""
    from igg.interfaces.cli import main

    (tmp_path / "a.py").write_text("import os\n", encoding="utf-8")
    rules = tmp_path / "igg.toml"
    rules.write_text(
        '[[rules]]\nname = "deep"\nkind = "forbidden"\nto = "b"\nfrom = '
        + "[" * depth
        + '"a"'
        + "]" * depth
        + "\n",
        encoding="utf-8",
    )
    assert main(["check", str(tmp_path), "--rules", str(rules)]) == 2
    err = capsys.readouterr().err
    assert "nested" in err and "Traceback" not in err


def test_a_truncated_command_line_check_says_so_in_every_output(tmp_path, capsys, monkeypatch):
    """``igg check`` has wider bounds than a server, still finite: past them its text, its GitHub annotations
    and its SARIF say the report is truncated (SARIF valid against the schema)."""
    import json

    import jsonschema

    import igg.rules.bounds as bounds
    from igg.interfaces.cli import main

    monkeypatch.setattr(bounds, "COMMAND_LINE_SCALE", 0.001)  # one violation, five hops, a hundred visits
    for i in range(3):
        (tmp_path / f"a{i}.py").write_text("import b0\nimport b1\n", encoding="utf-8")
        (tmp_path / f"b{i}.py").write_text("x = 1\n", encoding="utf-8")
    (tmp_path / "igg.toml").write_text(
        '[[rules]]\nname = "a-not-b"\nkind = "forbidden"\nfrom = "a*"\nto = "b*"\n', encoding="utf-8"
    )
    assert main(["check", str(tmp_path), "--sarif", str(tmp_path / "out.sarif")]) == 1
    out = capsys.readouterr().out
    assert "igg check stopped at its bounds" in out
    assert main(["check", str(tmp_path), "--format", "github"]) == 1
    assert capsys.readouterr().out.splitlines()[-1].startswith("::warning title=igg check::igg check stopped")
    log = json.loads((tmp_path / "out.sarif").read_text(encoding="utf-8"))
    schema = json.loads(
        (Path(__file__).parents[1] / "sarif" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8")
    )
    jsonschema.Draft4Validator(schema).validate(log)
    (note,) = log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert note["level"] == "warning" and "stopped at its bounds" in note["message"]["text"]


def test_sixty_four_layers_of_sixty_four_siblings_stop_at_the_visit_bound(tmp_path):
    """The same class in another form: 64 layers of 64 siblings are 8 million pairs of parts (once listed
    whole before any was judged: ~600 MB); each pair now counts against the visits, so the check stops and
    says so."""
    ws = workspace(tmp_path)
    sid = module_graph(ws, [{"name": "a"}, {"name": "b"}], [("b", "a")])
    # every sibling picks a node (one that picks none is refused before any pair is made); all but two parts
    # end up empty (a node belongs to the first part that picks it), and still each pair of parts counts
    layers = [{"siblings": [f"a{'*' * (j + 1)}" for j in range(MAX_LISTED)]} for i in range(MAX_LISTED)]
    layers[0]["siblings"][0], layers[1]["siblings"][0] = "a", "b"
    report = ws.check(
        CheckInput(session_id=sid, rules=[{"name": "wide", "kind": "layers", "layers": layers}])
    ).model_dump()
    assert report["truncated"] is True
    assert [v["message"] for v in report["violations"]] == [
        "b imports a: b may not depend on a, a higher layer"
    ]


def test_a_sessions_context_is_linked_once_for_all_its_checks(tmp_path, monkeypatch):
    """The same class again: a check on a session whose edges carry no sites located them by parsing and
    linking every file of its context on every call (1.9 MB of code: a second per 200-byte request). The sites
    are kept with the live session; a change of the modules its graph names links again."""
    import igg.mapping.depgraph as depgraph
    from igg.workspace.ops import ApplyInput

    files = {f"m{i}.py": f"import m{(i + 1) % 3}\n" for i in range(4)}  # m3.py: no module of the graph yet
    context = "".join(f"# File: {path}\n{text}" for path, text in files.items())
    seed = {
        "nodes": [
            {"id": f"n{i}", "type": "Module", "properties": {"name": f"m{i}", "path": f"m{i}.py"}}
            for i in range(3)
        ],
        "edges": [
            {"id": f"e{i}", "type": "IMPORTS", "from": f"n{i}", "to": f"n{(i + 1) % 3}", "properties": {}}
            for i in range(3)
        ],
    }
    ws = workspace(tmp_path)
    ws.start(
        {
            "session_id": "ctx",
            "goal_prompt": "g",
            "context_data": context,
            "seed_data": seed,
            "config": {"schema": {"node_types": ["Module"], "edge_types": ["IMPORTS"]}},
        }
    )
    links: list[int] = []
    real_link = depgraph.link
    monkeypatch.setattr(depgraph, "link", lambda facts: links.append(len(facts)) or real_link(facts))
    rule = {"name": "no-cycles", "kind": "acyclic"}
    first = ws.check(CheckInput(session_id="ctx", rules=[rule])).model_dump()
    again = ws.check(CheckInput(session_id="ctx", rules=[rule])).model_dump()
    assert first["violations"] == again["violations"] and links == [3]
    assert {(h["file"], h["line"]) for v in first["violations"] for h in v["path"]} <= {(p, 1) for p in files}
    added = ws.apply(
        ApplyInput(
            session_id="ctx",
            reasoning="",
            actions=[{"type": "ADD_NODE", "label": "Module", "properties": {"name": "m3", "path": "m3.py"}}],
        )
    )
    assert added.model_dump()["verdicts"][0]["accepted"]
    ws.check(CheckInput(session_id="ctx", rules=[rule]))
    assert links == [3, 4]
