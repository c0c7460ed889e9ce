"""Benchmark the exporters against their baselines, measured in the same process.

    python scripts/bench_export.py [--nodes 100000] [--edges 200000] [--skip-neo4j|--skip-files] [--sample 3000]

- GraphML: ``igg.export.write_graphml`` vs ``networkx.write_graphml_lxml`` on the same graph with flat
  attributes (the flattening is done before timing, which favours networkx).
- JSON: ``igg.export.write_json`` vs ``networkx.node_link_data`` + ``json.dumps`` (both written to a file).
- Neo4j: ``igg.export.export_neo4j`` (constraints, then batched UNWIND ... MERGE) into an empty scope vs one
  auto-commit MERGE per element, against a Bolt server: NEO4J_URI when set, else an ArcadeDB started here
  (arcadedb-embedded, the suite's Bolt server). The per-element path runs on a sample of ``--sample``
  elements and its rate is extrapolated to the whole graph (it would take many minutes in full). Then the
  re-export of the unchanged graph (reads the scope, writes nothing), the export plan of the unchanged graph,
  and a re-export after changing 1% of the nodes.

Targets (issue 11, issue 13): GraphML >= 2x faster than networkx's lxml writer; IGG JSON >= 4x faster than
node_link_data + json.dumps; Neo4j >= 20,000 elements/s first export, >= 20x the per-element path, re-export at
least as fast as the first export. Log lines go to standard error (warnings only).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from igg.export import export_neo4j, write_graphml, write_json  # noqa: E402
from igg.export.neo4j import BoltSession, Neo4jSettings, plan_neo4j  # noqa: E402
from igg.graph.state import GraphState  # noqa: E402
from igg.models.schema import Schema  # noqa: E402
from igg.record.logs import configure_logging  # noqa: E402


def build(n_nodes: int, n_edges: int, seed: int = 7) -> GraphState:
    """A code-like graph: classes and methods with string/int/float/bool/list properties."""
    rng = random.Random(seed)
    schema = Schema(node_types=["Class", "Method"], edge_types=["CALLS", "DECLARES"],
                    identity_keys={"Method": ["name", "signature"]})
    state = GraphState(schema.compile())
    ids = []
    for i in range(n_nodes):
        if i % 4 == 0:
            props = {"name": f"com.app.mod{i % 97}.Class{i}", "package": f"com.app.mod{i % 97}",
                     "lines": rng.randint(10, 2000), "public": bool(i % 3), "tags": ["svc", f"t{i % 7}"]}
            ids.append(state.add_node("Class", props))
        else:
            props = {"name": f"method{i}", "signature": f"(String, int) -> R{i % 13}",
                     "complexity": rng.random() * 10, "doc": "Computes the thing. " * (1 + i % 3)}
            ids.append(state.add_node("Method", props))
    made = 0
    while made < n_edges:
        u, v = rng.choice(ids), rng.choice(ids)
        t = "CALLS" if made % 3 else "DECLARES"
        if u == v or state.edge_between(u, t, v):
            continue
        state.add_edge(u, t, v, {"weight": rng.randint(1, 9)} if t == "CALLS" else {})
        made += 1
    state.take_journal()
    return state


def timed(fn, repeat: int = 1) -> float:
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def row(name: str, seconds: float, elements: int, size: int | None = None) -> None:
    mb = f"{size / 1e6:8.1f} MB" if size is not None else " " * 11
    print(f"  {name:<44} {seconds:8.2f} s {mb} {elements / seconds:>12,.0f} elements/s")


def _verdict(met: bool) -> str:
    return "met" if met else "MISSED"


def bench_files(state: GraphState, tmp: Path, repeat: int) -> None:
    elements = state.node_count + state.edge_count
    flat = nx.MultiDiGraph()
    for n, d in state.graph.nodes(data=True):
        flat.add_node(n, igg_type=d["type"], **{k: json.dumps(v) if isinstance(v, list) else v
                                                 for k, v in d["properties"].items()})
    for k, u, v, d in state.edges():
        flat.add_edge(u, v, key=k, igg_type=d["type"], **d["properties"])

    ours, theirs = tmp / "igg.graphml", tmp / "nx.graphml"
    t_ours = timed(lambda: write_graphml(state, str(ours)), repeat)
    t_nx = timed(lambda: nx.write_graphml_lxml(flat, str(theirs)), repeat)
    print("GraphML")
    row("igg write_graphml", t_ours, elements, ours.stat().st_size)
    row("networkx write_graphml_lxml (flat graph)", t_nx, elements, theirs.stat().st_size)
    print(f"  ratio: igg is {t_nx / t_ours:.2f}x networkx (target >= 2.0: {_verdict(t_nx / t_ours >= 2.0)})")

    ours, theirs = tmp / "igg.json", tmp / "nx.json"

    def baseline() -> None:
        theirs.write_text(json.dumps(nx.node_link_data(state.graph, edges="edges")))

    t_ours = timed(lambda: write_json(state, ours), repeat)
    t_nx = timed(baseline, repeat)
    print("JSON")
    row("igg write_json (IGG document)", t_ours, elements, ours.stat().st_size)
    row("networkx node_link_data + json.dumps", t_nx, elements, theirs.stat().st_size)
    print(f"  ratio: igg is {t_nx / t_ours:.2f}x networkx (target >= 4.0: {_verdict(t_nx / t_ours >= 4.0)})")


def per_element(settings: Neo4jSettings, state: GraphState, scope: str, sample: int) -> tuple[float, int]:
    """One auto-commit MERGE per element on the first ``sample`` elements; returns (seconds, elements)."""
    ident = state.schema.identity_keys
    nodes = state.graph._node
    node_ids = list(nodes)[: sample // 3]
    chosen = set(node_ids)
    edges = [(k, u, v, d) for k, u, v, d in state.edges() if u in chosen and v in chosen][: sample - len(node_ids)]
    with BoltSession(settings) as bolt:
        session = bolt._session
        start = time.perf_counter()
        for n in node_ids:
            t, props = nodes[n]["type"], nodes[n]["properties"]
            keys = ", ".join(f"`{k}`: $k{i}" for i, k in enumerate(ident[t]))
            params = {f"k{i}": props[k] for i, k in enumerate(ident[t])}
            session.run(f"MERGE (n:`{t}` {{{keys}, igg_scope: $scope}}) SET n = $p, n.igg_scope = $scope",
                        {**params, "p": props, "scope": scope}).consume()
        for _, u, v, d in edges:
            tu, tv = nodes[u]["type"], nodes[v]["type"]
            pu, pv = nodes[u]["properties"], nodes[v]["properties"]
            a = ", ".join(f"`{k}`: $a{i}" for i, k in enumerate(ident[tu]))
            b = ", ".join(f"`{k}`: $b{i}" for i, k in enumerate(ident[tv]))
            params = {**{f"a{i}": pu[k] for i, k in enumerate(ident[tu])},
                      **{f"b{i}": pv[k] for i, k in enumerate(ident[tv])}}
            session.run(f"MATCH (a:`{tu}` {{{a}, igg_scope: $scope}}) MATCH (b:`{tv}` {{{b}, igg_scope: $scope}}) "
                        f"MERGE (a)-[e:`{d['type']}`]->(b) SET e = $p, e.igg_scope = $scope",
                        {**params, "p": d["properties"], "scope": scope}).consume()
        return time.perf_counter() - start, len(node_ids) + len(edges)


def bench_neo4j(state: GraphState, tmp: Path, sample: int, batch_size: int) -> None:
    elements = state.node_count + state.edge_count
    server = None
    if os.environ.get("NEO4J_URI"):
        settings = Neo4jSettings.from_env()
    else:
        from tests.support.arcadedb import start_arcadedb

        start = time.perf_counter()
        server = start_arcadedb(tmp, heap="4g")
        print(f"(ArcadeDB with Bolt started in {time.perf_counter() - start:.1f} s)")
        settings = Neo4jSettings.from_env(server.env, uri=server.uri, max_retry_time=60)
    try:
        scope = f"bench-{os.getpid()}"
        start = time.perf_counter()
        summary = export_neo4j(state, settings=settings, scope=scope, batch_size=batch_size)
        t_batched = time.perf_counter() - start
        start = time.perf_counter()
        again = export_neo4j(state, settings=settings, scope=scope, batch_size=batch_size)
        t_again = time.perf_counter() - start
        start = time.perf_counter()
        plan = plan_neo4j(state, settings=settings, scope=scope)
        t_plan = time.perf_counter() - start
        changed = list(state.graph)[:: 100]
        for n in changed:
            props = state.graph._node[n]["properties"]
            state.graph._node[n]["properties"] = {**props, "bench_touch": 1}
        start = time.perf_counter()
        touched = export_neo4j(state, settings=settings, scope=scope, batch_size=batch_size)
        t_touched = time.perf_counter() - start
        t_sample, n_sample = per_element(settings, state, scope + "-single", sample)
        t_single = t_sample / n_sample * elements
        print(f"Neo4j ({summary['server']} at {summary['target']}, batch_size={batch_size}, "
              f"{summary['statements']} statements; constraints: {summary['constraints']['capability']})")
        row("igg export_neo4j, first export (batched UNWIND MERGE)", t_batched, elements)
        row("igg export_neo4j again, unchanged graph (writes 0)", t_again, elements)
        row("igg plan_neo4j, unchanged graph", t_plan, elements)
        row(f"igg export_neo4j after changing {len(changed):,} nodes", t_touched, elements)
        row(f"one MERGE per element (rate of {n_sample:,} sampled, extrapolated)", t_single, elements)
        print(f"  phases of the first export (s): {summary['timings']}")
        print(f"  phases of the re-export (s): {again['timings']}")
        assert again["batches"] == 0 and plan["counts"]["nodes"]["unchanged"] == state.node_count
        assert touched["changes"]["nodes"]["update"] == len(changed)
        print(f"  ratio: batched is {t_single / t_batched:.1f}x per-element (target >= 20); "
              f"{elements / t_batched:,.0f} elements/s first export (target >= 20,000); re-export "
              f"{t_batched / t_again:.1f}x the first (target >= 1)")
        with BoltSession(settings) as bolt:
            bolt.run("MATCH (n) WHERE n.igg_scope STARTS WITH $s DETACH DELETE n", s=scope)
    finally:
        if server is not None:
            from tests.support.arcadedb import stop

            stop(server)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=100_000)
    parser.add_argument("--edges", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=2, help="file benchmarks: best of N")
    parser.add_argument("--sample", type=int, default=3000, help="elements for the per-element Neo4j path")
    parser.add_argument("--batch-size", type=int, default=10_000)
    parser.add_argument("--skip-neo4j", action="store_true")
    parser.add_argument("--skip-files", action="store_true", help="only the Neo4j benchmark")
    args = parser.parse_args()
    configure_logging(level="warning")  # library log lines on standard error, never among the figures
    start = time.perf_counter()
    state = build(args.nodes, args.edges)
    print(f"graph: {state.node_count:,} nodes, {state.edge_count:,} edges (built in "
          f"{time.perf_counter() - start:.1f} s)")
    with tempfile.TemporaryDirectory() as tmp:
        if not args.skip_files:
            bench_files(state, Path(tmp), args.repeat)
        if not args.skip_neo4j:
            bench_neo4j(state, Path(tmp), args.sample, args.batch_size)


if __name__ == "__main__":
    main()
