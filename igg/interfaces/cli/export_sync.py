"""``igg export SESSION --format neo4j [--plan|--full|--follow]``: a stored session kept in step with Neo4j.

The export of a stored session's latest graph goes through ``igg.export.neo4j.sync``: a delta from the journal
when the scope still holds what IGG last wrote there, else the read-and-diff export (the output says which,
and why). ``--follow`` pushes every committed step as it lands (``igg.export.neo4j.follow``).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from igg.errors import ExportError, IGGError, Problem, RequestInvalid
from igg.export.neo4j.follow import SyncRecorder, follow
from igg.export.neo4j.settings import Neo4jSettings
from igg.export.neo4j.sync import plan_sync, session_point, sync_neo4j
from igg.interfaces.cli.neo4j_lines import print_neo4j_details, print_plan_lines
from igg.store.store import SessionStore


def run_session_neo4j(args: argparse.Namespace) -> int:
    """Export, plan or follow the session GRAPH of ``--store`` into Neo4j; the exit code."""
    settings = Neo4jSettings.from_env(
        uri=args.uri,
        username=args.user,
        database=args.database,
        connection_timeout=args.timeout,
        acquisition_timeout=args.timeout,
    )
    store = SessionStore(args.store)
    try:
        store.session(args.graph)  # the helpful error for an unknown session
        if args.follow:
            return _follow(args, store, settings)
        point = session_point(store, args.graph)
        if args.plan:
            plan = plan_sync(
                point, settings=settings, scope=args.scope, provenance=args.provenance, full=args.full
            )
            if args.json:
                print(json.dumps(plan))
            else:
                print(
                    f"plan for scope {plan['scope']!r} on {plan['server']} at {plan['target']} (nothing"
                    " written): " + mode_line(plan)
                )
                print_plan_lines(plan)
            return 0
        summary = sync_neo4j(
            point,
            settings=settings,
            scope=args.scope,
            batch_size=args.batch_size,
            provenance=args.provenance,
            full=args.full,
        )
        summary["ok"] = True
        if args.json:
            print(json.dumps({"exports": [summary]}))
        elif not args.quiet:
            print_sync(summary)
        return 0
    except ExportError as exc:
        if args.json and not args.plan:
            print(json.dumps({"exports": [{"format": "neo4j", "ok": False, "error": str(exc)}]}))
        raise IGGError(str(exc)) from None
    finally:
        store.close()


def mode_line(s: dict[str, Any]) -> str:
    """``delta since step 3 (journal)`` or ``full read-and-diff: <why>``."""
    if s["mode"] == "delta":
        return f"delta from the journal, steps {s['since_step']} -> {s['step']}"
    return f"full read-and-diff (no delta: {s['fallback']})"


def print_sync(s: dict[str, Any]) -> None:
    """One export of a session, as lines."""
    print(
        f"neo4j: {s['target']} ({s['nodes']} nodes, {s['edges']} edges, scope {s['scope']!r} on"
        f" {s['server']}, {s['seconds']} s)"
    )
    print(f"  {mode_line(s)}")
    print_neo4j_details(s)
    for warning in s.get("warnings", []):
        print(f"  warning: {warning}", file=sys.stderr)


def _follow(args: argparse.Namespace, store: SessionStore, settings: Neo4jSettings) -> int:
    def on_sync(s: dict[str, Any]) -> None:
        if args.json:
            print(json.dumps({**s, "ok": True}), flush=True)
        elif not args.quiet:
            changes = s.get("changes") or {}
            done = ", ".join(f"{k} +{c['create']} ~{c['update']} -{c['delete']}" for k, c in changes.items())
            print(
                f"step {s['step']} (iteration {s['iteration']}): {s['mode']}, {done}, {s['seconds']} s"
                + (f" (no delta: {s['fallback']})" if s["fallback"] else ""),
                flush=True,
            )

    try:
        follow(
            store,
            args.graph,
            settings=settings,
            scope=args.scope,
            batch_size=args.batch_size,
            provenance=args.provenance,
            interval=args.interval,
            on_sync=on_sync,
        )
    except KeyboardInterrupt:
        print("igg: stopped following (the target holds the last step pushed)", file=sys.stderr)
        return 130
    return 0


def sync_each_iteration(specs: list[Any], store: SessionStore | str | None) -> tuple[SyncRecorder, list[Any]]:
    """``--sync-each-iteration``: the recorder that pushes every committed iteration to the ``neo4j`` export's
    target, and the other exports (performed after the run as usual). ``RequestInvalid`` without a store or a
    neo4j export. ``store``: the run's store, opened or named (then the recorder opens it); the run writes
    through the same one (``recorder.store``), so a command opens its store once."""
    neo = [spec for spec in specs if spec.format == "neo4j"]
    problems = []
    if len(neo) != 1:
        problems.append(
            Problem(
                "--sync-each-iteration",
                f"needs exactly one --export neo4j[:URI] (the target to keep in step); got {len(neo)}",
            )
        )
    if store is None:
        problems.append(
            Problem(
                "--sync-each-iteration",
                "needs the session in a store (--store PATH or IGG_STORE): "
                "the delta of each iteration comes from its journal",
            )
        )
    if problems:
        raise RequestInvalid(problems, source="the command line")
    assert store is not None
    settings = Neo4jSettings.from_env()
    if neo[0].target:
        settings = Neo4jSettings(**{**settings.__dict__, "uri": neo[0].target})
    recorder = SyncRecorder(
        store if isinstance(store, SessionStore) else SessionStore(store), settings=settings
    )
    return recorder, [spec for spec in specs if spec.format != "neo4j"]
