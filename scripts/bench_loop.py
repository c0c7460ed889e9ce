"""Loop overhead per iteration (everything but the agent call) at 1,000 nodes, against a baseline.

The baseline, measured in the same process, is the least any loop must do per iteration: read the response
and apply its actions (``read_response`` + ``Actor.apply``) on the same graph. The loop adds the observation
(rendering within the token budget), parsing, the iteration record, events, stop checks and completeness.
Target (issue 11): loop overhead under 2 ms per iteration at 1,000 nodes.

    python scripts/bench_loop.py [--nodes 1000] [--iterations 200] [--actions 5]
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from igg.act import Actor  # noqa: E402
from igg.engine.loop import run  # noqa: E402
from igg.models.actions import read_response  # noqa: E402
from igg.persistence.rundir import RunDirectory  # noqa: E402
from igg.record.logs import configure_logging  # noqa: E402
from igg.request.load import build_state, load_request  # noqa: E402


def request_with_graph(nodes: int, iterations: int) -> dict:
    payload = json.loads((ROOT / "fixtures" / "auth" / "request.json").read_text())
    payload["config"]["max_iterations"] = iterations
    payload["config"]["stuck_after"] = iterations + 1
    payload["config"]["constraints"].update(
        max_nodes=nodes * 10, max_edges=nodes * 20, max_actions_per_response=50
    )
    classes = [
        {"id": f"c{i}", "type": "Class", "properties": {"name": f"Class{i}", "package": f"com.app.p{i % 17}"}}
        for i in range(nodes)
    ]
    edges = [
        {"id": f"e{i}", "type": "CALLS", "from": f"c{i}", "to": f"c{(i * 7 + 1) % nodes}"}
        for i in range(nodes)
        if (i * 7 + 1) % nodes != i
    ]
    payload["seed_data"] = {"nodes": classes, "edges": edges}
    return payload


def responses(iterations: int, per_turn: int) -> list[dict]:
    out = []
    for it in range(iterations):
        actions = []
        for k in range(per_turn - 1):
            actions.append(
                {
                    "type": "ADD_NODE",
                    "label": "Method",
                    "properties": {"name": f"m{it}_{k}", "signature": f"Class{it}.m{it}_{k}(): void"},
                }
            )
        actions.append(
            {
                "type": "ADD_EDGE",
                "label": "CALLS",
                "from": {"name": f"Class{it}"},
                "to": {"name": f"m{it}_0", "signature": f"Class{it}.m{it}_0(): void"},
            }
        )
        out.append({"reasoning": f"iteration {it}", "actions": actions})
    return out


def baseline(payload: dict, turns: list[dict]) -> float:
    """ms per iteration of read_response + Actor.apply alone."""
    request = load_request(payload)
    state, _ = build_state(request)
    actor = Actor(state.schema, request.config.constraints, request.config.apply_mode)
    t0 = time.perf_counter()
    for i, turn in enumerate(turns, 1):
        state.iteration = i
        actor.apply(state, read_response(turn).items)
        state.take_journal()
    return (time.perf_counter() - t0) * 1000 / len(turns)


def loop_overhead(payload: dict, turns: list[dict], out_dir: Path | None) -> tuple[float, float, int]:
    """(ms per iteration outside the agent call, ms per iteration of observation rendering, graph size)."""
    request = load_request(payload)
    agent_ms = 0.0

    def agent(obs):
        nonlocal agent_ms
        t = time.perf_counter()
        value = turns[obs.iteration - 1]
        agent_ms += (time.perf_counter() - t) * 1000
        return value

    recorder = RunDirectory(out_dir) if out_dir else None
    t0 = time.perf_counter()
    result = run(request, agent, recorder=recorder)
    total = (time.perf_counter() - t0) * 1000
    n = len(result.records)
    observe = statistics.mean(r.timings_ms["observe"] for r in result.records)
    return (total - agent_ms) / n, observe, result.state.node_count


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--actions", type=int, default=5, help="actions per agent turn")
    args = parser.parse_args()
    configure_logging(level="warning")  # library log lines on standard error, never among the figures
    payload = request_with_graph(args.nodes, args.iterations)
    turns = responses(args.iterations, args.actions)
    gc.collect()
    base = min(baseline(payload, turns) for _ in range(3))
    plain = min(loop_overhead(payload, turns, None) for _ in range(3))
    with tempfile.TemporaryDirectory() as tmp:
        with_out = min(loop_overhead(payload, turns, Path(tmp) / f"out{i}") for i in range(3))
    print(
        f"graph: {args.nodes} seed nodes (+{args.actions - 1} per iteration, {plain[2]} at the end), "
        f"{args.iterations} iterations, {args.actions} actions per turn"
    )
    print(f"baseline  read_response + Actor.apply:        {base:7.3f} ms/iteration")
    print(
        f"loop      everything but the agent call:      {plain[0]:7.3f} ms/iteration "
        f"({plain[0] / base:5.1f}x baseline; observation {plain[1]:.3f} ms)"
    )
    print(f"          of which the loop itself (no render): {plain[0] - plain[1]:7.3f} ms/iteration")
    print(
        f"loop      with --out (records, transcript):   {with_out[0]:7.3f} ms/iteration "
        f"({with_out[0] / base:5.1f}x baseline)"
    )
    verdict = "met" if plain[0] < 2.0 else "MISSED"
    print(
        f"target    loop overhead < 2 ms/iteration at 1,000 nodes (issue 11): {verdict}"
        + ("" if args.nodes == 1000 else f" (measured at {args.nodes} nodes)")
    )


if __name__ == "__main__":
    main()
