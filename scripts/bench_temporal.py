#!/usr/bin/env python3
"""What valid time costs (issue 43), as same-run ratios against the same work without time.

1. **Apply**: the generated stream (``scripts/gen_temporal.py``: 10,000 shuffled facts over 1,000 entities,
   with supersession) through the act step in responses of 500, against the same facts with their times
   stripped under a schema without ``valid_time``. Target: at most 1.5x.
2. **As-of query**: a 1-hop ``neighbours`` query with ``as_of`` on a graph of 100,000 time-scoped edges
   (median of 200 random people), against the same query without ``as_of``. Target: at most 50 ms.

    python scripts/bench_temporal.py [--facts 10000] [--big 100000]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from gen_temporal import SCHEMA, generate  # noqa: E402

from igg.act.apply import Actor  # noqa: E402
from igg.graph.state import GraphState  # noqa: E402
from igg.models.actions import read_response  # noqa: E402
from igg.models.request import Constraints  # noqa: E402
from igg.models.schema import Schema  # noqa: E402
from igg.observe.query import run_query  # noqa: E402


def applied(
    schema: dict[str, Any], nodes: list[dict[str, Any]], facts: list[dict[str, Any]], size: int
) -> tuple[float, GraphState]:
    """Seconds to apply the node adds and then the facts, ``size`` per response (reading them included)."""
    compiled = Schema.model_validate(schema).compile()
    actor = Actor(
        compiled,
        Constraints(
            max_nodes=len(nodes) + 10,
            max_edges=len(facts) * 2,
            max_actions_per_response=max(size, len(nodes)),
        ),
    )
    state = GraphState(compiled)
    started = time.perf_counter()
    actor.apply(state, read_response({"actions": nodes}, encodable=True).items)
    for i in range(0, len(facts), size):
        actor.apply(state, read_response({"actions": facts[i : i + size]}, encodable=True).items)
    return time.perf_counter() - started, state


def untimed(action: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in action.items() if k not in ("valid_from", "valid_to")}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--big", type=int, default=100_000, help="edges of the as-of query's graph")
    parser.add_argument("--repeat", type=int, default=3, help="best of this many apply runs (default 3)")
    args = parser.parse_args()

    stream = generate(entities=args.facts // 10, facts=args.facts, seed=3)
    plain_schema = {k: v for k, v in SCHEMA.items() if k != "valid_time"}
    plain_facts = [untimed(f) for f in stream.facts]
    timed_s = min(applied(SCHEMA, stream.nodes, stream.facts, 500)[0] for _ in range(args.repeat))
    plain_s = min(applied(plain_schema, stream.nodes, plain_facts, 500)[0] for _ in range(args.repeat))
    print(
        f"apply {len(stream.facts):,} facts in responses of 500: with time and supersession {timed_s:.3f} s, "
        f"without time {plain_s:.3f} s: {timed_s / plain_s:.2f}x (target 1.5x)"
    )

    big = generate(entities=args.big // 10, facts=args.big * 8 // 5, seed=5)  # about 5 edges in 8 facts
    _, state = applied(SCHEMA, big.nodes, big.facts, 5000)
    scoped = sum(1 for _, (_, _, d) in state.edge_rows() if "igg_valid_from" in d["properties"])
    rng = random.Random(1)
    people = [n for n in state.nodes_of_type("Person")]
    picks = [
        (state.node_properties(rng.choice(people))["name"], f"{rng.randint(2000, 2030)}-0{rng.randint(1, 9)}")
        for _ in range(200)
    ]

    def median_ms(with_time: bool) -> float:
        spent = []
        for name, when in picks:
            query: dict[str, Any] = {"query": "neighbours", "node": {"name": name}, "token_budget": 2000}
            if with_time:
                query["as_of"] = when
            started = time.perf_counter()
            run_query(state, query)
            spent.append((time.perf_counter() - started) * 1000)
        return statistics.median(spent)

    median_ms(True)  # warm the caches both ways
    as_of_ms, now_ms = median_ms(True), median_ms(False)
    print(
        f"1-hop neighbours on {state.edge_count:,} edges ({scoped:,} time-scoped), median of {len(picks)}: "
        f"as_of {as_of_ms:.2f} ms (target 50 ms), without as_of {now_ms:.2f} ms: {as_of_ms / now_ms:.2f}x"
    )


if __name__ == "__main__":
    main()
