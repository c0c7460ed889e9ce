"""Benchmark: budgeted queries (neighbours, path, find) on a 100,000-node, 200,000-edge graph.

Prints the median time of each query and, as the same-process baseline, the bare networkx call that answers
the same question without budgeting or rendering (``single_source_shortest_path_length`` with a cutoff,
``bidirectional_shortest_path``, a list comprehension over the nodes). Target (issue 16): every answer < 20 ms
at 100,000 nodes. A filter on a property that is not an identity key is answered from a property index built
on the first such question (its build time is printed apart) and kept up to date by every mutation after.

    python scripts/bench_query.py [--nodes N] [--repeat R]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import networkx as nx

from igg.observe.query import run_query
from igg.request.load import build_state, load_request


def build(n: int):
    request = load_request(
        {
            "goal_prompt": "bench",
            "config": {
                "max_iterations": 1,
                "constraints": {"max_nodes": n, "max_edges": 2 * n, "duplicates": {"policy": "off"}},
                "schema": {"node_types": ["Class"], "edge_types": ["CALLS", "USES"]},
            },
        }
    )
    state, _ = build_state(request)
    for i in range(n):
        state.add_node("Class", {"name": f"C{i}", "package": f"p{i % 100}", "lines": i % 500})
    for i in range(n):
        state.add_edge(f"n{i + 1}", "CALLS", f"n{(i * 7 + 1) % n + 1}", {})
        state.add_edge(f"n{i + 1}", "USES", f"n{(i * 13 + 5) % n + 1}", {})
    state.take_journal()
    return state


def median_ms(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=21)
    args = ap.parse_args()
    n = args.nodes
    state = build(n)
    g = state.graph
    undirected = g.to_undirected(as_view=True)
    far = f"C{n // 2 + 17}"
    far_id = state.find_nodes({"name": far})[0]
    cases: list[tuple[str, dict, Callable[[], object]]] = [
        (
            "neighbours depth 1",
            {"query": "neighbours", "node": {"name": "C42"}},
            lambda: nx.single_source_shortest_path_length(undirected, "n43", cutoff=1),
        ),
        (
            "neighbours depth 3",
            {"query": "neighbours", "node": {"name": "C42"}, "depth": 3},
            lambda: nx.single_source_shortest_path_length(undirected, "n43", cutoff=3),
        ),
        (
            "path (forwards)",
            {"query": "path", "from": {"name": "C42"}, "to": {"name": far}},
            lambda: nx.bidirectional_shortest_path(g, "n43", far_id),
        ),
        (
            "find by identity",
            {"query": "find", "label": "Class", "where": {"name": far}},
            lambda: [k for k, d in g.nodes(data=True) if d["properties"].get("name") == far],
        ),
        (
            "find by filter (index)",
            {"query": "find", "label": "Class", "where": {"lines": {"gt": 490}}},
            lambda: [k for k, d in g.nodes(data=True) if d["properties"].get("lines", 0) > 490],
        ),
    ]
    print(f"graph: {n:,} nodes, {state.edge_count:,} edges; median of {args.repeat} runs")
    worst = 0.0
    for name, query, baseline in cases:
        start = time.perf_counter()
        answer = run_query(state, query)
        first_ms = (time.perf_counter() - start) * 1000
        ours = median_ms(lambda q=query: run_query(state, q), args.repeat)
        base = median_ms(baseline, max(3, args.repeat // 3))
        worst = max(worst, ours)
        print(
            f"{name:24s}: {ours:7.2f} ms  ({answer.tokens:4d} tokens, {len(answer.nodes):3d} nodes shown, "
            f"{answer.omitted_nodes:6,d} left out)  networkx {base:8.2f} ms  ratio {ours / base:5.2f}x"
        )
        if "(index)" in name:
            print(f"{'':24s}  the first one, which built the property index: {first_ms:.2f} ms")
    print(f"slowest answer: {worst:.2f} ms (target < 20 ms)")


if __name__ == "__main__":
    main()
