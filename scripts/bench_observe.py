"""Benchmark: observation size and build time at 50, 5,000 and 100,000 nodes vs a naive full markdown dump.

For each graph size, renders the observation (default budget 6,000 estimated tokens, the current context
chunk mentioning a few nodes, a focus reference, recent updates) and a naive dump of the whole graph as
markdown tables (one row per node, one per edge), both measured in this process, and prints estimated
tokens, milliseconds and the ratios. Targets (issue 3): never above the budget; under 50 ms at 100,000
nodes. Tokens are IGG's conservative character-based estimate (``igg.observe.tokens``).

    python scripts/bench_observe.py [--sizes 50,5000,100000] [--budget 6000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import gc
import time

from igg.models.verdicts import ErrorCode, Verdict
from igg.observe import Chunk, estimate_tokens, open_todos, render_observation
from igg.request.load import build_state, load_request

SCHEMA = {
    "node_types": ["Class", "Interface", "Method", "DatabaseTable"],
    "edge_types": ["CALLS", "IMPLEMENTS", "READS_FROM", "WRITES_TO"],
    "required_attributes": {"Class": ["name", "package"], "Method": ["name", "signature"]},
    "identity_keys": {"Method": ["name", "signature"]},
    "completeness": [
        {"rule": "min_edges", "node_type": "Interface", "edge_type": "IMPLEMENTS", "direction": "in"}
    ],
}


def make_graph(n: int, budget: int):
    """A code-like graph: classes, methods (two per class), interfaces, tables; ~2 edges per node."""
    request = load_request(
        {
            "goal_prompt": "Map out the dependencies of the authentication module.",
            "config": {
                "constraints": {"max_nodes": n + 10, "max_edges": 4 * n + 10},
                "schema": SCHEMA,
                "observation": {"token_budget": budget},
            },
        }
    )
    state, _ = build_state(request)
    classes, methods, others = [], [], []
    for i in range(n):
        kind = i % 10
        if kind < 3:
            classes.append(state.add_node("Class", {"name": f"Class{i}", "package": f"com.app.mod{i % 37}"}))
        elif kind < 9:
            methods.append(
                state.add_node("Method", {"name": f"method{i}", "signature": f"(String, int{i % 5})"})
            )
        elif i % 20 == 9:
            others.append(state.add_node("Interface", {"name": f"IFace{i}"}))
        else:
            others.append(state.add_node("DatabaseTable", {"name": f"table_{i}"}))
    for j, m in enumerate(methods):
        state.add_edge(m, "CALLS", methods[(j * 7 + 3) % len(methods)], {}) if len(methods) > 1 else None
        (
            state.add_edge(classes[j % len(classes)], "CALLS", m, {})
            if state.edge_between(classes[j % len(classes)], "CALLS", m) is None
            else None
        )
    for j, o in enumerate(others):
        t = state.node_type(o)
        c = classes[(j * 13) % len(classes)]
        if t == "Interface":
            state.add_edge(c, "IMPLEMENTS", o, {})
        else:
            state.add_edge(c, "READS_FROM", o, {})
    for m in methods[-20:]:
        state.update_node(m, {"doc": "recently documented"})
    return request, state, classes


def naive_dump(state) -> str:
    """The whole graph as two markdown tables (what a prompt would hold without IGG's observation)."""
    rows = ["| id | type | properties |", "|---|---|---|"]
    for n, d in state.graph.nodes(data=True):
        props = ", ".join(f"{k}: {v}" for k, v in d["properties"].items())
        rows.append(f"| {n} | {d['type']} | {props} |")
    rows += ["", "| from | type | to |", "|---|---|---|"]
    nodes = state.graph._node
    for _, u, v, d in state.edges():
        rows.append(f"| {nodes[u]['properties']['name']} | {d['type']} | {nodes[v]['properties']['name']} |")
    return "\n".join(rows)


def best_ms(fn, repeat: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - start) * 1000)
    return min(times), result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="50,5000,100000")
    ap.add_argument("--budget", type=int, default=6000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    print(f"observation budget {args.budget:,} estimated tokens; best of {args.repeat}")
    print(
        f"{'nodes':>8} {'edges':>8} | {'obs tokens':>10} {'obs ms':>7} | {'dump tokens':>11} {'dump ms':>8} |"
        f" {'tokens ratio':>12} {'time ratio':>10} | {'todos ms':>8} | tokens/element"
    )
    for n in (int(s) for s in args.sizes.split(",")):
        request, state, classes = make_graph(n, args.budget)
        name = state.node_properties(classes[len(classes) // 2])["name"]
        chunk = Chunk(
            index=2,
            count=12,
            label="src/auth/AuthService.java",
            text=f"class AuthService {{ {name} helper; method{n // 2 + 3}(); Class3.run(); }}",
        )
        verdicts = [
            Verdict(0, "ADD_NODE", True, None, "added"),
            Verdict(1, "ADD_EDGE", False, ErrorCode.NODE_NOT_FOUND, "no node matches {'name': 'Clas3'}"),
        ]
        todos_ms, todos = best_ms(lambda s=state, r=request: open_todos(s, r.config.schema_), args.repeat)

        def observe(request=request, state=state, chunk=chunk, verdicts=verdicts, todos=todos):
            return render_observation(
                request=request,
                state=state,
                iteration=4,
                last_verdicts=verdicts,
                last_error=None,
                chunk=chunk,
                todos=todos,
                focus=[{"name": "Class0"}],
            )

        obs_ms, (text, tokens) = best_ms(observe, args.repeat)
        assert tokens == estimate_tokens(text) <= args.budget, (tokens, args.budget)
        dump_ms, dump = best_ms(lambda state=state: naive_dump(state), max(1, args.repeat // 2))
        dump_tokens = estimate_tokens(dump)
        graph = text.split("\n## Graph\n", 1)[1].rsplit("\n## Response format", 1)[0]
        whole = "Shown:" not in graph
        per_element = (
            f"{estimate_tokens(graph) / (state.node_count + state.edge_count):.1f} vs "
            f"{dump_tokens / (state.node_count + state.edge_count):.1f}"
            if whole
            else "(cut)"
        )
        print(
            f"{state.node_count:>8,} {state.edge_count:>8,} | {tokens:>10,} {obs_ms:>7.1f} |"
            f" {dump_tokens:>11,} {dump_ms:>8.1f} | {tokens / dump_tokens:>11.3f}x {obs_ms / dump_ms:>9.3f}x"
            f" | {todos_ms:>8.1f} | {per_element}"
        )
    print("targets: obs tokens <= budget at every size (asserted); obs ms < 50 at 100,000 nodes")
    print(
        "tokens/element: graph section tokens per node+edge when the whole graph is shown, vs the table dump"
    )


if __name__ == "__main__":
    main()
