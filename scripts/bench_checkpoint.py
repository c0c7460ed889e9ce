"""Benchmark: the session store's checkpoint cost per iteration at 1,000 and 50,000 nodes.

For each graph size it builds a graph of N nodes and N edges, records it as a session, then times
``SessionRecorder.record`` (one durable transaction: the iteration record and its mutations) over iterations
of 20 actions each (the graph keeps its size). Beside it, in the same process, the baseline: serializing the
whole graph once (what a full copy per iteration would cost). The checkpoint must not grow with the graph:
compare the per-iteration cost across sizes, and its ratio to the baseline. Periodic snapshots are amortized:
their cost (encoding the graph as the SQLite store keeps it, compressed) is shown spread over the mutations
between two of them.

    python scripts/bench_checkpoint.py [--sizes 1000,50000] [--iterations 200] [--dir DIR] [--synchronous
    FULL]

The durable setting (FULL: an fsync per commit) is measured beside synchronous=OFF, which shows the store's
own work without the disk's flush (fsync times on a shared machine are noisy).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from igg.act import Actor
from igg.models.actions import read_response
from igg.record.records import IterationRecord
from igg.request.load import build_state, load_request
from igg.store import SessionRecorder, SessionStore
from igg.store.codec import dumps, snapshot_blob, snapshot_of
from igg.store.recorder import SNAPSHOT_MIN_MUTATIONS

ACTIONS_PER_ITERATION = 20
"""5 ADD_NODE, 5 ADD_EDGE, 5 UPDATE_NODE, 5 DELETE_NODE: the graph keeps its size."""


def make_request(session_id: str, n: int):
    return load_request(
        {
            "session_id": session_id,
            "goal_prompt": "bench",
            "config": {
                "max_iterations": 100_000,
                "constraints": {
                    "max_nodes": 2 * n + 100_000,
                    "max_edges": 2 * n + 100_000,
                    "max_actions_per_response": 2 * n + 10,
                },
                "schema": {
                    "node_types": ["Class", "Method"],
                    "edge_types": ["CALLS"],
                    "required_attributes": {"Class": ["name", "package"]},
                },
            },
        }
    )


def build_actions(start: int, count: int) -> list[dict]:
    """``count`` new classes, each calling the previous one."""
    actions: list[dict] = []
    for i in range(start, start + count):
        actions.append(
            {
                "type": "ADD_NODE",
                "label": "Class",
                "properties": {"name": f"C{i}", "package": "com.example.bench", "doc": "x" * 40},
            }
        )
        if i > 0:
            actions.append(
                {"type": "ADD_EDGE", "label": "CALLS", "from": {"name": f"C{i}"}, "to": {"name": f"C{i - 1}"}}
            )
    return actions


def step_actions(size: int, k: int) -> list[dict]:
    """One iteration at a steady graph size: 5 classes added (with their edges), 5 old ones updated, 5
    deleted."""
    first = size + 5 * k
    actions = build_actions(first, 5)
    actions += [
        {"type": "UPDATE_NODE", "node": {"name": f"C{5 * k + j + 5}"}, "properties": {"doc": f"v{k}"}}
        for j in range(5)
    ]
    actions += [{"type": "DELETE_NODE", "node": {"name": f"C{5 * k + j}"}} for j in range(5)]
    return actions


def iterate(
    actor: Actor, state, recorder: SessionRecorder, iteration: int, actions: list[dict]
) -> tuple[float, int]:
    """Apply one iteration's actions, then time only its checkpoint; returns (seconds, mutations)."""
    state.iteration = iteration
    verdicts = actor.apply(state, read_response({"reasoning": "bench", "actions": actions}).items)
    record = IterationRecord(
        iteration=iteration,
        observation_chars=24_000,
        observation_tokens=6000,
        raw_output=json.dumps({"reasoning": "bench", "actions": actions}),
        reasoning="bench",
        actions=actions,
        verdicts=verdicts,
        mutations=state.take_journal(),
        usage={"prompt_tokens": 6000, "completion_tokens": 800, "total_tokens": 6800},
        timings_ms={"total": 1.0},
    )
    start = time.perf_counter()
    recorder.record(record)
    return time.perf_counter() - start, len(record.mutations)


def bench(size: int, iterations: int, directory: Path, synchronous: str) -> dict[str, float]:
    store = SessionStore(directory / f"bench-{size}-{synchronous}.sqlite", synchronous=synchronous)
    request = make_request(f"bench-{size}", size)
    state, _ = build_state(request)
    actor = Actor(state.schema, request.config.constraints)
    recorder = SessionRecorder(store, force=True)
    recorder.begin(request, state)
    iterate(actor, state, recorder, 1, build_actions(0, size))  # the graph of `size` nodes, one big step
    store.db.connection().execute("PRAGMA wal_checkpoint(TRUNCATE)")  # settle the setup's writes first
    os.sync()
    times = []
    counts = []
    for k in range(iterations):
        elapsed, count = iterate(actor, state, recorder, k + 2, step_actions(size, k))
        times.append(elapsed)
        counts.append(count)
    mutations = statistics.fmean(counts)
    start = time.perf_counter()
    whole = dumps(snapshot_of(state))
    full_copy = time.perf_counter() - start
    start = time.perf_counter()
    snapshot_blob(state)  # what the SQLite store writes as a snapshot: the same JSON, compressed
    snapshot = time.perf_counter() - start
    mutations_between = max(SNAPSHOT_MIN_MUTATIONS, state.node_count + state.edge_count)
    store.close()
    return {
        "nodes": state.node_count,
        "edges": state.edge_count,
        "median": statistics.median(times),
        "p95": sorted(times)[int(0.95 * len(times))],
        "mean": statistics.fmean(times),
        "full": full_copy,
        "bytes": len(whole),
        "mutations": mutations,
        "amortized": snapshot * mutations / mutations_between,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,50000")
    ap.add_argument("--iterations", type=int, default=200)
    ap.add_argument("--dir", type=Path, default=None, help="where the store files go (default: a temp dir)")
    ap.add_argument(
        "--synchronous",
        default="FULL",
        choices=["FULL", "NORMAL", "OFF"],
        help="the durable setting measured (the store's default is FULL); OFF is measured beside it",
    )
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    modes = [args.synchronous] + (["OFF"] if args.synchronous != "OFF" else [])
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        results = {mode: [bench(n, args.iterations, Path(tmp), mode) for n in sizes] for mode in modes}
    first = results[modes[0]][0]
    print(
        f"checkpoint = one SQLite transaction per iteration ({ACTIONS_PER_ITERATION} actions, "
        f"{first['mutations']:.0f} mutations), {args.iterations} iterations per size; "
        "baseline = serializing the whole graph once"
    )
    print(
        f"{'sync':>6} {'nodes':>8} {'edges':>8} {'median ms':>10} {'p95 ms':>8} {'mean ms':>8} |"
        f" {'full copy ms':>12} {'full copy MB':>12} {'full/ckpt':>9} | {'snapshot amortized ms':>21}"
    )
    for mode in modes:
        for r in results[mode]:
            print(
                f"{mode:>6} {r['nodes']:>8,} {r['edges']:>8,} {r['median'] * 1e3:>10.3f}"
                f" {r['p95'] * 1e3:>8.3f} {r['mean'] * 1e3:>8.3f} | {r['full'] * 1e3:>12.1f}"
                f" {r['bytes'] / 1e6:>12.2f} {r['full'] / r['median']:>8.0f}x | {r['amortized'] * 1e3:>21.3f}"
            )
    for mode in modes:
        if len(sizes) > 1:
            small, big = results[mode][0], results[mode][-1]
            print(
                f"{mode}: checkpoint growth {small['nodes']:,} -> {big['nodes']:,} nodes: "
                f"{big['median'] / small['median']:.2f}x (graph {big['nodes'] / small['nodes']:.0f}x; "
                f"a full copy grows {big['full'] / small['full']:.0f}x)"
            )


if __name__ == "__main__":
    main()
