"""Benchmark: validate + apply 100,000 mixed actions (half nodes, half edges) vs raw networkx.

Prints actions/s and the ratio to raw ``MultiDiGraph.add_node``/``add_edge`` building the same graph without
validation, both measured in this process (machines here are noisy: compare ratios, not absolute times).
"Reading from dicts" reads the actions the way the loop reads an agent's decoded response
(``igg.agents.parsing.read_value``), then validates and applies them. Targets (issue 11): validate+apply
within 2x raw networkx, reading from dicts within 2.5x, both with the near-duplicate guard off (``--duplicates
off``, the default; the guard's own cost is the second comparison). Issue 16: the guard on within 1.5x of it
off at 100,000 nodes. Issue 30: with evidence on every action (a quote of the context, located under
``grounding: required``) within 1.3x of the same responses without evidence; the responses follow the context
chunk by chunk, as the loop shows them. Library log lines go to standard error.

    python scripts/bench_apply.py [--actions N] [--repeat R] [--duplicates off|warn|reject] [--cpu]
                                  [--guard-nodes N] [--evidence-nodes N]
"""

from __future__ import annotations

import argparse
import bisect
import gc
import time

import networkx as nx

from igg.act import Actor
from igg.agents.parsing import read_value
from igg.models.actions import read_action
from igg.record.logs import configure_logging
from igg.request.load import build_state, load_request
from igg.session import Session


def make_request(n: int, duplicates: str = "reject"):
    return load_request(
        {
            "goal_prompt": "bench",
            "config": {
                "max_iterations": 1,
                "constraints": {
                    "max_nodes": n,
                    "max_edges": n,
                    "max_actions_per_response": 2 * n,
                    "duplicates": {"policy": duplicates},
                },
                "schema": {
                    "node_types": ["Class", "Method"],
                    "edge_types": ["CALLS", "CONTAINS"],
                    "required_attributes": {"Class": ["name", "package"]},
                },
            },
        }
    )


def make_actions(n_nodes: int) -> list[dict]:
    actions: list[dict] = []
    for i in range(n_nodes):
        if i % 2:
            actions.append(
                {"type": "ADD_NODE", "label": "Method", "properties": {"name": f"m{i}", "signature": "()"}}
            )
        else:
            actions.append(
                {"type": "ADD_NODE", "label": "Class", "properties": {"name": f"C{i}", "package": "p"}}
            )
    names = [a["properties"]["name"] for a in actions]
    for i in range(n_nodes):
        src, dst = names[i], names[(i * 7 + 1) % n_nodes]
        label = "CALLS" if i % 3 else "CONTAINS"
        actions.append({"type": "ADD_EDGE", "label": label, "from": {"name": src}, "to": {"name": dst}})
    return actions


_KINDS = [
    "Service",
    "Controller",
    "Repository",
    "Factory",
    "Handler",
    "Manager",
    "Client",
    "Adapter",
    "Impl",
    "Config",
    "Util",
    "Test",
]


def _vocabulary(size: int = 600) -> list[str]:
    """Pronounceable pseudo-words of 4-8 letters (a code base's vocabulary: accounts, ledgers, tokens,
    ...)."""
    import random

    rng = random.Random(16)
    consonants, vowels = "bcdfghklmnprstvz", "aeiou"
    words: set[str] = set()
    while len(words) < size:
        n = rng.randint(2, 4)
        words.add("".join(rng.choice(consonants) + rng.choice(vowels) for _ in range(n))[: rng.randint(4, 8)])
    return sorted(words)


def make_guard_actions(n_nodes: int) -> list[dict]:
    """Class names as a code base has them: two or three vocabulary words and a kind, camelCase, many shared
    words and suffixes, so the guard's indexes do real work. Then one edge per node."""
    import random

    from igg.graph.duplicates import NearDuplicateIndex
    from igg.models.schema import Schema

    rng = random.Random(7)
    vocabulary = _vocabulary()
    names: dict[str, None] = {}
    index = NearDuplicateIndex(Schema(node_types=["Class"]).compile())  # keep only names the guard accepts
    while len(names) < n_nodes:
        words = rng.sample(vocabulary, rng.choice((2, 2, 3)))
        name = "".join(w.title() for w in words) + rng.choice(_KINDS)
        if name not in names and not index.candidates("Class", {"name": name}):
            index.add(name, "Class", {"name": name})
            names[name] = None
    actions: list[dict] = [
        {"type": "ADD_NODE", "label": "Class", "properties": {"name": name, "package": "p"}} for name in names
    ]
    order = list(names)
    for i in range(n_nodes):
        actions.append(
            {
                "type": "ADD_EDGE",
                "label": "CALLS",
                "from": {"name": order[i]},
                "to": {"name": order[(i * 7 + 1) % n_nodes]},
            }
        )
    return actions


def run_igg(raw: list[dict], parse: bool, duplicates: str = "reject") -> tuple[float, int]:
    request = make_request(len(raw), duplicates)
    state, _ = build_state(request)
    actor = Actor(state.schema, request.config.constraints)
    items = [] if parse else [read_action(a) for a in raw]
    gc.collect()
    start = CLOCK()
    if parse:  # as the loop reads an agent's decoded response whose JSON text held no lone surrogate
        items = read_value({"reasoning": "", "actions": raw}, encodable=True).items
    verdicts = actor.apply(state, items)
    elapsed = CLOCK() - start
    return elapsed, sum(v.accepted for v in verdicts)


def make_grounded(n_nodes: int) -> tuple[str, list[dict]]:
    """A context stating every fact (one sentence per node and per edge) and the actions, each quoting its
    sentence (``evidence``)."""
    actions = make_actions(n_nodes)
    lines = []
    for a in actions:
        if a["type"] == "ADD_NODE":
            sentence = (
                f"The {a['label'].lower()} {a['properties']['name']} is declared in module {len(lines) % 97}."
            )
        else:
            sentence = f"Here {a['from']['name']} {a['label'].lower()} {a['to']['name']} when it starts."
        lines.append(sentence)
        a["evidence"] = [sentence]
    return "\n".join(lines) + "\n", actions


def run_grounded(context: str, raw: list[dict], evidence: bool) -> tuple[float, int]:
    """The actions as the loop would apply them: one response per context chunk (the chunk its facts'
    sentences are in), through a Session's actor; with their evidence under ``required``, or without it under
    ``off``."""
    request = make_request(len(raw), "off")
    request = request.model_copy(
        update={
            "context_data": context,
            "config": request.config.model_copy(update={"grounding": "required" if evidence else "off"}),
        }
    )
    session = Session(request)
    chunks = session.actor.grounder.chunks
    starts = [chunks.bounds(i)[0] for i in range(len(chunks))]
    responses: dict[int, list[dict]] = {}
    at = 0
    for a in raw:
        chunk = bisect.bisect_right(starts, at) - 1
        at += len(a["evidence"][0]) + 1
        responses.setdefault(chunk, []).append(
            a if evidence else {k: v for k, v in a.items() if k != "evidence"}
        )
    accepted = 0
    gc.collect()
    start = CLOCK()
    for cursor, actions in sorted(responses.items()):
        items = read_value({"reasoning": "", "actions": actions}, encodable=True).items
        accepted += sum(v.accepted for v in session.actor.apply(session.state, items, cursor=cursor))
    return CLOCK() - start, accepted


def run_networkx(raw: list[dict]) -> float:
    g = nx.MultiDiGraph()
    gc.collect()
    start = CLOCK()
    ids: dict[str, str] = {}
    for i, a in enumerate(raw):
        if a["type"] == "ADD_NODE":
            nid = f"n{i}"
            ids[a["properties"]["name"]] = nid
            g.add_node(nid, type=a["label"], properties=a["properties"])
        else:
            g.add_edge(ids[a["from"]["name"]], ids[a["to"]["name"]], type=a["label"], properties={})
    return CLOCK() - start


def _verdict(met: bool) -> str:
    return "met" if met else "MISSED"


CLOCK = time.perf_counter
"""What the runs are timed with: wall time, or this process's CPU time with ``--cpu`` (steadier on a machine
other work keeps busy: time spent waiting for a core is not counted, for either side of a ratio)."""


def main() -> None:
    global CLOCK
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--actions", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--duplicates",
        choices=("off", "warn", "reject"),
        default="off",
        help="the near-duplicate guard's policy for the networkx comparison (default: off)",
    )
    ap.add_argument(
        "--guard-nodes",
        type=int,
        default=100_000,
        help="nodes of the near-duplicate guard comparison (0 skips it)",
    )
    ap.add_argument(
        "--evidence-nodes",
        type=int,
        default=20_000,
        help="nodes of the evidence comparison (as many edges; 0 skips it)",
    )
    ap.add_argument("--cpu", action="store_true", help="time with process CPU time instead of wall time")
    args = ap.parse_args()
    if args.cpu:
        CLOCK = time.process_time
    configure_logging(level="warning")  # library log lines on standard error, never among the figures
    raw = make_actions(args.actions // 2)
    nx_best = min(run_networkx(raw) for _ in range(args.repeat))
    apply_runs = [run_igg(raw, parse=False, duplicates=args.duplicates) for _ in range(args.repeat)]
    full_runs = [run_igg(raw, parse=True, duplicates=args.duplicates) for _ in range(args.repeat)]
    apply_best, accepted = min(apply_runs)
    full_best, _ = min(full_runs)
    n = len(raw)
    assert accepted == n, f"only {accepted} of {n} actions accepted"
    print(
        f"actions: {n} ({n // 2} ADD_NODE, {n // 2} ADD_EDGE), best of {args.repeat}, "
        f"near-duplicate guard {args.duplicates}, {'CPU' if args.cpu else 'wall'} time"
    )
    print(f"raw networkx add_node/add_edge : {nx_best:7.3f} s  {n / nx_best:10,.0f} actions/s")
    print(
        f"igg validate+apply (parsed)    : {apply_best:7.3f} s  {n / apply_best:10,.0f} actions/s  "
        f"ratio {apply_best / nx_best:4.2f}x networkx (target <= 2x: {_verdict(apply_best / nx_best <= 2)})"
    )
    print(
        f"igg read+validate+apply (dicts): {full_best:7.3f} s  {n / full_best:10,.0f} actions/s  "
        f"ratio {full_best / nx_best:4.2f}x networkx (target <= 2.5x: {_verdict(full_best / nx_best <= 2.5)})"
    )
    if args.guard_nodes:
        guard_raw = make_guard_actions(args.guard_nodes)
        n = len(guard_raw)
        # off and on alternate, so a change of the machine's load touches both sides alike
        off_runs, on_runs, off_full_runs, on_full_runs = [], [], [], []
        for _ in range(args.repeat):
            off_runs.append(run_igg(guard_raw, parse=False, duplicates="off")[0])
            on_runs.append(run_igg(guard_raw, parse=False, duplicates="reject"))
        for _ in range(args.repeat):
            off_full_runs.append(run_igg(guard_raw, parse=True, duplicates="off")[0])
            on_full_runs.append(run_igg(guard_raw, parse=True, duplicates="reject")[0])
        off, (on, accepted) = min(off_runs), min(on_runs)
        off_full, on_full = min(off_full_runs), min(on_full_runs)
        assert accepted == n, f"guard on: only {accepted} of {n} actions accepted"
        print(f"near-duplicate guard, {args.guard_nodes:,} nodes + {n - args.guard_nodes:,} edges:")
        print(
            f"  validate+apply (parsed)     : off {off:6.3f} s, on {on:6.3f} s  ratio {on / off:4.2f}x "
            f"(target <= 1.5x: {_verdict(on / off <= 1.5)})"
        )
        print(
            f"  read+validate+apply (dicts) : off {off_full:6.3f} s, on {on_full:6.3f} s  ratio "
            f"{on_full / off_full:4.2f}x"
        )
    if args.evidence_nodes:
        context, grounded = make_grounded(args.evidence_nodes // 2)
        without_runs, with_runs = [], []
        for _ in range(args.repeat):  # alternating, as above
            without_runs.append(run_grounded(context, grounded, evidence=False))
            with_runs.append(run_grounded(context, grounded, evidence=True))
        (without, ok_without), (with_, ok_with) = min(without_runs), min(with_runs)
        assert ok_without == ok_with == len(grounded), (ok_without, ok_with, len(grounded))
        print(
            f"evidence on every action, {len(grounded):,} actions over a {len(context):,}-character context, "
            "one response per chunk:"
        )
        print(
            f"  read+validate+apply (dicts) : without {without:6.3f} s, with {with_:6.3f} s  ratio "
            f"{with_ / without:4.2f}x (target <= 1.3x: {_verdict(with_ / without <= 1.3)})"
        )


if __name__ == "__main__":
    main()
