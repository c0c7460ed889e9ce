"""Benchmark ``igg batch``: sessions/s serial (one process) vs a local Dask cluster, and what the cluster
adds.

Two workloads, each committed to a fresh session store:

* **requests**: 100 sessions of the bundled auth request replayed with its transcript (12 iterations each);
* **trees**: 20 generated source trees (``gen_code_tree``, 40 files each) mapped by the code agent.

Baseline, in this process: each session run by the loop with the store's recorder attached, one after another
(what ``igg run --store`` / ``igg map-code --store`` do), with the store synced as the batch syncs it
(``synchronous=NORMAL``, the batch default; then again with ``FULL``, ``igg run``'s and ``--durable``'s). Then
the same sessions through ``igg.batch`` on a ``LocalCluster``: with 1 worker (no parallelism: the difference
per session is what the cluster adds: pickling the job and the outcome, scheduling, replaying the mutations
into the store on the client) and with 2 workers (the speed-up; on 2 cores expect at most 2x, less since the
client shares them).

The "client commit only" line times the client's share alone (rebuilding each graph from the outcome's
mutations and committing it to the store): the ceiling of one store, whatever the number of workers.

Usage: ``python scripts/bench_batch.py [--sessions 100] [--trees 20] [--tree-files 40]``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gen_code_tree import generate  # noqa: E402

from igg.batch.service import STORE_SYNC  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
AUTH = ROOT / "fixtures" / "auth"


def _quiet() -> None:
    import logging

    import structlog

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    logging.getLogger("distributed").setLevel(logging.ERROR)


def request_folder(where: Path, n: int) -> Path:
    folder = where / "requests"
    folder.mkdir()
    payload = json.loads((AUTH / "request.json").read_text())
    for i in range(n):
        payload["session_id"] = f"bench-{i:03}"
        (folder / f"r{i:03}.json").write_text(json.dumps(payload))
    return folder


def trees(where: Path, n: int, files: int) -> list[Path]:
    out = []
    for i in range(n):
        tree = where / f"tree{i:02}"
        generate(tree, files=files, packages=4, seed=i)
        out.append(tree)
    return out


def serial_requests(folder: Path, store_path: Path, sync: str) -> float:
    import igg
    from igg.batch import request_jobs
    from igg.store import SessionRecorder, SessionStore

    jobs = request_jobs([folder], agent=f"script:{AUTH / 'transcript.jsonl'}")
    store = SessionStore(store_path, synchronous=sync)
    started = time.perf_counter()
    for job in jobs:
        agent = igg.ScriptedAgent(job.turns or [])
        igg.run(job.request, agent, recorder=SessionRecorder(store, agent=job.agent))
    took = time.perf_counter() - started
    store.close()
    return took


def serial_trees(paths: list[Path], store_path: Path, sync: str) -> float:
    from igg.service import map_code
    from igg.store import SessionStore

    store = SessionStore(store_path, synchronous=sync)
    started = time.perf_counter()
    for i, tree in enumerate(paths):
        map_code([tree], store=store, session_id=f"tree-{i:02}", jobs=1)
    took = time.perf_counter() - started
    store.close()
    return took


def commit_only(folder: Path, store_path: Path, sync: str) -> float:
    """The one writer's share: committing outcomes (run beforehand, in this process) into a fresh store."""
    from igg.batch import SessionWriter, request_jobs, run_session
    from igg.store import SessionStore

    jobs = request_jobs([folder], agent=f"script:{AUTH / 'transcript.jsonl'}")
    outcomes = [run_session(job) for job in jobs]
    writer = SessionWriter(store=SessionStore(store_path, synchronous=sync))
    started = time.perf_counter()
    for job, outcome in zip(jobs, outcomes, strict=True):
        writer.commit(outcome, agent=job.agent)
    took = time.perf_counter() - started
    writer.store.close()
    return took


def _warm() -> None:
    import igg.agents.code  # noqa: F401
    import igg.agents.scripted  # noqa: F401
    import igg.batch.tasks  # noqa: F401
    import igg.service  # noqa: F401


def on_cluster(
    kind: str, inputs: list[Path], store_path: Path, workers: int, durable: bool
) -> tuple[float, Any]:
    from igg.batch import map_trees, open_cluster, run_requests

    with open_cluster("local", workers=workers) as (client, _info):
        client.run(_warm)  # the workers' first imports are not the batch's cost
        started = time.perf_counter()
        if kind == "requests":
            report = run_requests(
                inputs,
                agent=f"script:{AUTH / 'transcript.jsonl'}",
                store=store_path,
                client=client,
                durable=durable,
            )
        else:
            report = map_trees(inputs, store=store_path, client=client, durable=durable)
        took = time.perf_counter() - started
    assert report.count("done") == len(report.sessions), report.to_dict()
    return took, report


def line(label: str, n: int, seconds: float, base: float | None) -> str:
    rate = n / seconds
    text = f"{label:<34} {rate:8.1f} sessions/s  ({seconds:6.2f} s)"
    if base is not None:
        text += f"   speed-up x{base / seconds:4.2f}   per session {1000 * (seconds - base) / n:+6.1f} ms"
    return text


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sessions", type=int, default=100)
    parser.add_argument("--trees", type=int, default=20)
    parser.add_argument("--tree-files", type=int, default=40)
    args = parser.parse_args()
    _quiet()
    print(
        f"{os.cpu_count()} CPUs; requests: {args.sessions} sessions of the auth request (12 iterations each);"
        f" trees: {args.trees} generated trees of {args.tree_files} files"
    )
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        folder = request_folder(where, args.sessions)
        paths = trees(where, args.trees, args.tree_files)
        for kind, n, inputs in (("requests", args.sessions, [folder]), ("trees", args.trees, paths)):
            for durable in (False, True):
                sync = "FULL" if durable else STORE_SYNC
                tag = f"{kind}, store {sync}"
                serial = serial_requests if kind == "requests" else serial_trees
                base = serial(
                    folder if kind == "requests" else paths, where / f"{kind}-{sync}-serial.sqlite", sync
                )
                print(line(f"{tag}: serial, one process", n, base, None))
                if kind == "requests":
                    took = commit_only(folder, where / f"commit-{sync}.sqlite", sync)
                    print(line(f"{tag}: client commit only", n, took, None) + "   (one writer's ceiling)")
                for workers in (1, 2) if not durable else (2,):
                    took, _ = on_cluster(
                        kind, inputs, where / f"{kind}-{sync}-{workers}.sqlite", workers, durable
                    )
                    print(line(f"{tag}: local cluster, {workers} worker{'s' * (workers > 1)}", n, took, base))
    return 0


if __name__ == "__main__":
    sys.exit(main())
