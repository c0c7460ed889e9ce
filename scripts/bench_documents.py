"""Benchmark: documents as sources (issue 42). What an update costs beside a fresh build, and what retracting
one document costs as the corpus grows.

1. A corpus of N documents (default 1,000; each names a few people, their city and who knows whom, some
   shared with other documents) is built fresh with the scripted agent answering by document (``fresh``: IGG's
   own cost, the agent's answers free), and once more into a new session with every answer from the cache
   (``fresh, cached``).
2. 1% of the documents change; ``igg run --documents --update`` brings the session in step (``update``: the
   changed documents asked again, the rest from the cache). The figure is update / fresh, same run.
3. At N and 10 N documents, one document is retracted from a loaded session (``retract_document``; the
   session's document index built, as a live workspace session keeps it): the time of planning, applying and
   committing that step, and the mutations it made, with their ratio between sizes.

    python scripts/bench_documents.py [--docs 1000] [--scale 10] [--dir DIR]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import structlog

from igg.agents.scripted import ScriptedAgent
from igg.documents.build import build_documents, load_session
from igg.documents.index import index_of
from igg.documents.retract import retract_document
from igg.request.load import load_request
from igg.store import SessionStore

REQUEST = {
    "session_id": "bench",
    "goal_prompt": "Who knows whom, and where they live.",
    "config": {
        "max_iterations": 10,
        "constraints": {"max_nodes": 1_000_000, "max_edges": 1_000_000},
        "schema": {"node_types": ["Person", "City"], "edge_types": ["KNOWS", "LIVES_IN"]},
    },
}


def answer(i: int, version: int) -> list[dict[str, Any]]:
    rnd = random.Random(f"{i}:{version}")
    people = [f"person{i}-{k}" for k in range(3)] + [f"person{rnd.randrange(max(i, 1))}-0"]
    city = f"city{rnd.randrange(50)}"
    acts: list[dict[str, Any]] = [
        {"type": "ADD_NODE", "label": "Person", "properties": {"name": p, "age": rnd.randrange(20, 80)}}
        for p in people
    ]
    acts.append({"type": "ADD_NODE", "label": "City", "properties": {"name": city}})
    acts += [
        {"type": "ADD_EDGE", "label": "KNOWS", "from": {"name": a}, "to": {"name": b}}
        for a, b in zip(people, people[1:], strict=False)
    ]
    acts.append({"type": "ADD_EDGE", "label": "LIVES_IN", "from": {"name": people[0]}, "to": {"name": city}})
    return acts


def corpus(folder: Path, versions: dict[int, int]) -> ScriptedAgent:
    rows = [
        json.dumps({"id": f"doc{i:06d}", "text": f"Document {i}, version {v}."}) for i, v in versions.items()
    ]
    (folder / "corpus.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return ScriptedAgent([{"document": f"doc{i:06d}", "actions": answer(i, v)} for i, v in versions.items()])


def timed(call: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    out = call()
    return time.perf_counter() - start, out


def update_ratio(folder: Path, n: int) -> dict[str, Any]:
    versions = dict.fromkeys(range(n), 0)
    request = load_request(REQUEST)
    store = folder / "update.sqlite"
    agent = corpus(folder, versions)
    fresh, built = timed(
        lambda: build_documents(request, agent, [folder / "corpus.jsonl"], store, agent_name="script")
    )
    cached, _ = timed(
        lambda: build_documents(
            request, agent, [folder / "corpus.jsonl"], store, agent_name="script", session_id="again"
        )
    )
    for i in random.Random(1).sample(range(n), max(1, n // 100)):
        versions[i] = 1
    agent = corpus(folder, versions)
    update, done = timed(
        lambda: build_documents(
            request,
            agent,
            [folder / "corpus.jsonl"],
            store,
            agent_name="script",
            session_id="bench",
            update=True,
        )
    )
    return {
        "documents": n,
        "facts": built.graph,
        "fresh_s": round(fresh, 3),
        "fresh_cached_s": round(cached, 3),
        "update_s": round(update, 3),
        "update_agent_calls": done.agent_calls,
        "update_over_fresh": round(update / fresh, 4),
        "update_over_fresh_cached": round(update / cached, 4),
        "update_phases_s": {k: round(v, 3) for k, v in done.seconds.items()},
    }


def retraction(folder: Path, n: int, repeats: int = 9) -> dict[str, Any]:
    request = load_request(REQUEST)
    store = folder / f"retract{n}.sqlite"
    build_documents(
        request,
        corpus(folder, dict.fromkeys(range(n), 0)),
        [folder / "corpus.jsonl"],
        store,
        agent_name="script",
    )
    times, mutations = [], []
    for k in range(repeats):
        session = load_session(SessionStore(store), "bench")
        index_of(session.state)  # a live session's document index (the workspace keeps it): built once, kept
        doc = f"doc{(k * 7919) % n:06d}"
        took, done = timed(lambda: retract_document(session, doc))  # noqa: B023 - called at once
        times.append(took)
        mutations.append(sum(done["changes"].values()))
    return {
        "documents": n,
        "retract_ms_median": round(statistics.median(times) * 1000, 2),
        "retract_ms_min": round(min(times) * 1000, 2),
        "retract_ms": [round(t * 1000, 2) for t in times],
        "mutations": mutations,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--scale", type=int, default=10)
    parser.add_argument("--dir", type=Path)
    args = parser.parse_args()
    structlog.configure(logger_factory=structlog.ReturnLoggerFactory())  # the figures alone on stdout
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        root = Path(tmp)
        out: dict[str, Any] = {}
        (root / "u").mkdir()
        out["update"] = update_ratio(root / "u", args.docs)
        small, big = root / "small", root / "big"
        small.mkdir()
        big.mkdir()
        out["retract_small"] = retraction(small, args.docs)
        out["retract_big"] = retraction(big, args.docs * args.scale)
        out["retract_big_over_small"] = round(
            out["retract_big"]["retract_ms_median"] / out["retract_small"]["retract_ms_median"], 2
        )
        out["retract_big_over_small_min"] = round(
            out["retract_big"]["retract_ms_min"] / out["retract_small"]["retract_ms_min"], 2
        )
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
