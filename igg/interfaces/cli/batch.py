"""``igg batch REQUESTS...`` and ``igg batch map-code DIR...``: many independent sessions on a Dask cluster.

REQUESTS are request files (*.json), JSON Lines files of requests (*.jsonl) and folders of request files;
``map-code DIR...`` maps each source tree as its own session. Sessions run on the cluster whose scheduler is
``--scheduler tcp://HOST:PORT`` (else ``$DASK_SCHEDULER_ADDRESS``), or on a local cluster of ``--workers``
processes. Workers run the sessions in memory; this process is the session store's only writer: it commits
each session as it ends, writes ``--out DIR/<session_id>/`` and performs the exports. Sessions already
finished in the store are skipped (``--force`` runs them again), interrupted ones are continued. A worker
that dies mid-session loses nothing: its sessions run again on the other workers.

Exit 0 when every session ran (whatever its stop reason), 1 when a session or an export failed, 2 for
invalid input (every bad request file or line is listed before anything runs). Needs ``igg[dask]``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from igg.codemap.walk import DEFAULT_MAX_BYTES
from igg.errors import Problem, RequestInvalid
from igg.interfaces.cli.common import setup_logging
from igg.interfaces.cli.storecli import STORE_HELP, table
from igg.record.logs import LOG_FORMATS

MAP_CODE = "map-code"


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "batch",
        help="run many requests or map many source trees on a Dask cluster",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        usage="igg batch [options] REQUESTS...\n       igg batch map-code [options] DIR...",
    )
    p.add_argument(
        "inputs",
        nargs="+",
        metavar="REQUESTS",
        help="request files, JSON Lines files of requests, folders of request files; or map-code DIR...",
    )
    _cluster_options(p)
    _output_options(p)
    _tree_options(p.add_argument_group("map-code"))
    p.set_defaults(handler=run_command)


def _cluster_options(p: argparse.ArgumentParser) -> None:
    """Where the sessions run: the cluster, its workers, the agent."""
    p.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help=(
            "the Dask scheduler, tcp://HOST:PORT (default: $DASK_SCHEDULER_ADDRESS, else a local "
            "cluster; 'local' forces one)"
        ),
    )
    p.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help=(
            "worker processes of the local cluster (default: the CPUs); with --scheduler, the workers "
            "to wait for (default 1)"
        ),
    )
    p.add_argument(
        "--agent",
        metavar="AGENT",
        help=(
            "auto (default for requests), llm, code (default for map-code), hybrid, or script:PATH "
            "(a transcript, or a folder of <session_id>.jsonl / <request stem>.jsonl)"
        ),
    )


def _output_options(p: argparse.ArgumentParser) -> None:
    """Where the sessions go: the store, files, exports; and what the command prints."""
    p.add_argument("--store", metavar="LOCATION", help=STORE_HELP)
    p.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help=(
            "each session's graph.json, records.jsonl, transcript.jsonl and summary.json in DIR/<session_id>/"
        ),
    )
    p.add_argument(
        "--export",
        action="append",
        default=[],
        metavar="FORMAT[:TARGET]",
        help="export each session's graph (repeatable); a file TARGET needs {session_id}, or use --out",
    )
    p.add_argument("--provenance", action="store_true", help="carry provenance into JSON and GraphML exports")
    p.add_argument(
        "--force", action="store_true", help="run sessions again that the store already holds, replacing them"
    )
    p.add_argument(
        "--durable",
        action="store_true",
        help=(
            "fsync every iteration's commit as igg run does (slower; by default the store is synced "
            "when the batch ends, and a power cut can only lose sessions that the next run redoes)"
        ),
    )
    p.add_argument(
        "--json", action="store_true", help="print one JSON object: counts and every session's summary"
    )
    p.add_argument(
        "--log-format",
        choices=LOG_FORMATS,
        default="console",
        help="log lines on stderr: console (default) or json",
    )


def _tree_options(trees: argparse._ArgumentGroup) -> None:
    """The options of ``igg batch map-code``: the schema and the limits per tree."""
    trees.add_argument(
        "--schema", type=Path, metavar="FILE", help="a code schema (default: the built-in one)"
    )
    trees.add_argument(
        "--max-nodes", type=int, default=200_000, metavar="N", help="graph size limit per tree"
    )
    trees.add_argument(
        "--max-edges", type=int, default=1_000_000, metavar="N", help="graph size limit per tree"
    )
    trees.add_argument(
        "--max-file-bytes",
        type=int,
        default=DEFAULT_MAX_BYTES,
        metavar="N",
        help=f"skip larger files (default {DEFAULT_MAX_BYTES})",
    )


def run_command(args: argparse.Namespace) -> int:
    setup_logging(args)
    from igg.batch import map_trees, require_distributed, run_requests

    require_distributed()  # before any work: say what to install
    if args.workers is not None and args.workers < 1:
        raise RequestInvalid(
            [Problem("--workers", f"{args.workers}: give 1 or more")], source="the command line"
        )
    trees = args.inputs[0] == MAP_CODE
    inputs = args.inputs[1:] if trees else args.inputs
    if not inputs:
        raise RequestInvalid(
            [Problem("DIR", "igg batch map-code needs one or more source trees")], source="the command line"
        )
    common: dict[str, Any] = {
        "scheduler": args.scheduler,
        "workers": args.workers,
        "store": args.store,
        "out": args.out,
        "exports": args.export,
        "provenance": args.provenance,
        "force": args.force,
        "durable": args.durable,
    }
    with _BatchProgress() as progress:
        if trees:
            options = {
                "schema": args.schema,
                "max_nodes": args.max_nodes,
                "max_edges": args.max_edges,
                "max_bytes": args.max_file_bytes,
            }
            report = map_trees(
                inputs, agent=args.agent or "code", options=options, on_session=progress, **common
            )
        else:
            report = run_requests(inputs, agent=args.agent or "auto", on_session=progress, **common)
    if args.json:
        sys.stdout.write(json.dumps(report.to_dict(), ensure_ascii=False) + "\n")
    else:
        _print_report(report)
    return 0 if report.ok else 1


def _print_report(report: Any) -> None:
    cluster = report.cluster
    where = (
        f"a local cluster of {cluster.workers} workers"
        if cluster.local
        else f"{cluster.scheduler} ({cluster.workers} workers)"
    )
    print(
        f"igg batch: {len(report.sessions)} sessions: {report.count('done')} done, {report.count('failed')} "
        f"failed, {report.count('skipped')} skipped; on {where}; store {report.store}"
    )
    rows = []
    for s in report.sessions:
        summary = s.summary or {}
        rows.append(
            [
                s.session_id,
                s.status,
                summary.get("stop_reason", "-"),
                summary.get("iterations", "-"),
                summary.get("nodes", "-"),
                summary.get("edges", "-"),
                s.source,
            ]
        )
    print(table(["SESSION", "STATUS", "STOP", "ITER", "NODES", "EDGES", "SOURCE"], rows))
    for s in report.sessions:
        if s.error:
            print(f"igg batch: {s.session_id}: {s.error}", file=sys.stderr)


class _BatchProgress:
    """A progress bar of sessions done/failed on stderr when it is a terminal (log lines otherwise)."""

    def __init__(self) -> None:
        self.enabled = sys.stderr.isatty()
        self._progress: Any = None
        self._task: Any = None
        self._counts = {"done": 0, "failed": 0, "skipped": 0}

    def __enter__(self) -> _BatchProgress:
        if self.enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self._progress = Progress(
                TextColumn("[bold]igg batch"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[status]}"),
                TimeElapsedColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self._progress.__enter__()
            self._task = self._progress.add_task("sessions", total=None, status="starting the cluster")
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._progress is not None:
            self._progress.__exit__(*exc)

    def __call__(self, report: Any, finished: int, total: int) -> None:
        self._counts[report.status] = self._counts.get(report.status, 0) + 1
        if self._progress is not None:
            c = self._counts
            self._progress.update(
                self._task,
                completed=finished,
                total=total,
                status=f"done {c['done']} · failed {c['failed']} · skipped {c['skipped']}",
            )
