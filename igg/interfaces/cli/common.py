"""Options and plumbing shared by the commands that run or continue a session (``run``, ``resume``,
``map-code``).

``add_run_options(parser)`` adds ``--agent``, ``--out DIR``, ``--store PATH``, ``--export FORMAT[:TARGET]``
(repeatable), ``--json`` and ``--log-format``; ``execute(args, request, agent, **loop_options)`` runs the
loop with the log, the live progress view, the output directory and the store attached, performs the
exports and prints the summary (one JSON object on stdout with ``--json``). It returns the exit code.

A run is kept in the session store (``igg.store``) when ``--store PATH`` is given or ``$IGG_STORE`` is set.
``--export`` specs are parsed before the run (``igg.export.parse_export_spec``) and performed after it
(``perform_exports``); a failed export still prints the summary, then exits 1.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from igg.errors import IGGError, Problem, RequestInvalid, SessionExists
from igg.record.logs import LOG_FORMATS, EventLogger, configure_logging

if TYPE_CHECKING:  # the models and the agents load when a run starts, not when its options are registered
    from igg.agents.base import AnyAgent
    from igg.interfaces.cli.keep import Keeping
    from igg.models.request import Request
    from igg.persistence import Recorder
    from igg.record.records import Event, RunResult


def add_run_options(parser: argparse.ArgumentParser, *, default_agent: str = "auto") -> None:
    """The options every run command shares."""
    parser.add_argument(
        "--agent",
        default=default_agent,
        metavar="AGENT",
        help=f"auto, llm, local, code, hybrid or script:PATH (default {default_agent})",
    )
    parser.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help="write graph.json, records.jsonl, transcript.jsonl and summary.json here",
    )
    parser.add_argument(
        "--store",
        metavar="LOCATION",  # text: a postgresql:// URL is no Path
        help="keep the session in this store (an SQLite file, or postgresql://USER@HOST/DATABASE; "
        "default: $IGG_STORE when set; else a run "
        "given no --out or --export is kept in ./.igg/sessions.sqlite if it exists, else in the "
        "default store $IGG_HOME/sessions.sqlite or ~/.local/share/igg/sessions.sqlite)",
    )
    parser.add_argument(
        "--force", action="store_true", help="start over a stored session that has the same session_id"
    )
    parser.add_argument(
        "--export",
        action="append",
        default=[],
        metavar="FORMAT[:TARGET]",
        help="export the final graph (repeatable), e.g. graphml:out/graph.graphml",
    )
    parser.add_argument(
        "--provenance",
        action="store_true",
        help="carry provenance (created/updated iteration, context chunk) into JSON and GraphML exports",
    )
    parser.add_argument(
        "--sync-each-iteration",
        action="store_true",
        help="with --export neo4j[:URI] and a store: push every committed iteration into Neo4j as "
        "it lands (a delta from the journal), not only the final graph",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON summary object on stdout")
    parser.add_argument(
        "--log-format",
        choices=LOG_FORMATS,
        default="console",
        help="log lines on stderr: console (default) or json",
    )
    add_verbosity_options(parser)


def add_verbosity_options(parser: argparse.ArgumentParser) -> None:
    """``-v``/``--log-level``/``--quiet``: how much a command says on standard error."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        help="log lines on stderr: one per iteration (-v), every rejection too (-vv)",
    )
    group.add_argument("--log-level", choices=LOG_LEVELS, default=None, help="log level on stderr")
    group.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="errors only: no progress, no log lines, no summary table (--json still prints)",
    )


LOG_LEVELS = ("debug", "info", "warning", "error")


def log_level(args: argparse.Namespace, *, unasked: str | None = None) -> str:
    """The level the options ask for. Unasked (``unasked`` None), a person at a terminal sees the progress bar
    and the summary (warnings and errors only); piped or with ``--log-format json``, the log lines are the
    progress output. Commands without progress (``igg export``) pass ``unasked="warning"``."""
    if getattr(args, "log_level", None):
        return str(args.log_level)
    if getattr(args, "quiet", False):
        return "error"
    verbose = int(getattr(args, "verbose", 0) or 0)
    if verbose:
        return "debug" if verbose > 1 else "info"
    if unasked is not None:
        return unasked
    if getattr(args, "log_format", "console") == "json" or not sys.stderr.isatty():
        return "info"
    return "warning"


def setup_logging(args: argparse.Namespace, *, unasked: str | None = None) -> None:
    """Configure logging from the command line (entry points only); ``unasked`` as for ``log_level``."""
    configure_logging(
        getattr(args, "log_format", "console"), level=log_level(args, unasked=unasked), when_needed=True
    )


def export_specs(args: argparse.Namespace) -> list[Any]:
    """The parsed ``--export`` specs (checked before the run starts, so a typo costs nothing)."""
    if not args.export:
        return []
    exporter = _optional_module("igg.export", "--export", "the exporters")
    specs = []
    problems = []
    for text in args.export:
        try:
            specs.append(exporter.parse_export_spec(text))
        except RequestInvalid as exc:
            problems += exc.problems
        except (IGGError, ValueError) as exc:
            problems.append(Problem("--export", f"{text!r}: {exc}"))
    if problems:
        raise RequestInvalid(problems, source="the command line")
    return specs


def is_session_id(text: str) -> bool:
    """Whether ``text`` can be a session id (``igg.workspace.inputs.SESSION_ID_PATTERN``): a command argument
    that cannot (``out/graph.json``, with a slash) is a path, and a missing path is said to be one."""
    from igg.workspace.inputs import SESSION_ID_PATTERN

    return re.fullmatch(SESSION_ID_PATTERN, text) is not None


def store_path(args: argparse.Namespace) -> str | None:
    """The store for ``--store PATH`` or ``$IGG_STORE`` (None when neither is set)."""
    path = args.store or os.environ.get("IGG_STORE")
    return str(path) if path else None


def execute(
    args: argparse.Namespace,
    request: Request,
    agent: AnyAgent,
    *,
    specs: list[Any] | None = None,
    recorders: list[Recorder] | None = None,
    resume: bool = False,
    summary_extra: Callable[[RunResult], dict[str, Any]] | None = None,
    title: str = "igg run",
    another_id: str = "give the request another session_id",
    summary_rows: Callable[[Any], None] | None = None,
    **loop_options: Any,
) -> int:
    """Run ``agent`` on ``request`` with the shared options through ``igg.service.run_request``; print the
    summary; the exit code (``igg.interfaces.codes.run_exit_code``: 0 for a graceful stop, 1 for
    ``agent_error`` or a failed export; 130 when interrupted, see ``igg.interfaces.cli.keep``).

    ``loop_options`` go to the loop (``state``, ``records``, ... to continue a session); ``resume`` makes the
    store recorder claim the stored session instead of creating it; ``summary_extra(result)`` returns keys a
    command adds to the ``--json`` summary (e.g. ``map_code``: files read and skipped); ``title`` heads the
    summary table and the progress bar; ``another_id`` says how the command takes another session id (in
    the refusal of an id the store already holds).
    """
    from igg.interfaces.cli.keep import keeping
    from igg.interfaces.cli.targets import check_export_targets
    from igg.service import review_needs_a_store, run_request

    specs = export_specs(args) if specs is None else specs
    check_export_targets(specs, args.out)
    keep = keeping(args, request.session_id, explicit_store=store_path(args))
    review_needs_a_store(request, keep.store)
    store: Any = keep.store
    if getattr(args, "sync_each_iteration", False):
        from igg.interfaces.cli.export_sync import sync_each_iteration

        syncer, specs = sync_each_iteration(specs, keep.store)
        store = syncer.store  # opened once: the run and the recorder keeping the target in step share it
        recorders = [*(recorders or ()), syncer]

    def job(on_event: Callable[[Event], None], witness: Recorder) -> RunResult:
        return run_request(
            request,
            agent,
            store=store,
            agent_name=args.agent,
            force=keep.force,
            resume=resume,
            out=args.out,
            exports=specs,
            provenance=getattr(args, "provenance", False),
            recorders=[*(recorders or ()), witness],
            on_event=on_event,
            **loop_options,
        )

    return present(
        args,
        job,
        keep=keep,
        session_id=request.session_id or "",
        summary_extra=summary_extra,
        title=title,
        agent=agent,
        another_id=another_id,
        summary_rows=summary_rows,
    )


def present(
    args: argparse.Namespace,
    job: Callable[[Callable[[Event], None], Recorder], RunResult],
    *,
    keep: Keeping,
    session_id: str,
    summary_extra: Callable[[RunResult], dict[str, Any]] | None = None,
    title: str = "igg run",
    agent: Any = None,
    another_id: str = "give the request another session_id",
    summary_rows: Callable[[Any], None] | None = None,
    on_view: Callable[[Any], object] | None = None,
) -> int:
    """Run ``job(on_event, witness)`` (one ``igg.service`` call, keeping the ``witness`` recorder) with the
    progress view and the event log; print the summary; the exit code (see ``execute``). Shared by every
    command that runs a session (``igg run``, ``igg map-code``, ``igg resume``). ``on_view(view)`` gets the
    progress view before the job starts (``igg map-code`` shows its parse on it)."""
    from igg.interfaces.cli.keep import Witness, announce, interrupted, session_exists
    from igg.interfaces.cli.progress import ProgressView
    from igg.interfaces.codes import run_exit_code

    witness = Witness()
    logger = EventLogger()
    quiet = bool(getattr(args, "quiet", False))
    started: dict[str, Any] = {}
    try:
        with ProgressView(enabled=False if quiet else None, title=title, agent=agent) as view:
            if on_view is not None:
                on_view(view)

            def on_event(event: Event) -> None:
                if event.kind == "run_started":
                    started.update(event.data)
                logger(event)
                view(event)

            result = job(on_event, witness)
    except KeyboardInterrupt:
        return interrupted(args, witness, keep, session_id)
    except SessionExists as exc:
        if keep.store is None or exc.session_id is None:
            raise
        raise session_exists(args, exc.session_id, keep.store, another=another_id) from None
    extra = summary_extra(result) if summary_extra is not None else None
    if args.json or not quiet:
        print_summary(
            result,
            max_iterations=started.get("max_iterations"),
            as_json=args.json,
            out=args.out,
            extra=extra,
            title=title,
            rows=summary_rows,
            store=keep.store,
        )
    if not quiet:
        announce(keep, result.session_id, log_format=getattr(args, "log_format", "console"))
    if result.export_error is not None:
        print(f"igg: {result.export_error}", file=sys.stderr)
    return run_exit_code(result.stop_reason, export_failed=result.export_error is not None)


def print_summary(
    result: RunResult,
    *,
    max_iterations: int | None = None,
    as_json: bool,
    out: Path | None = None,
    extra: dict[str, Any] | None = None,
    title: str = "igg run",
    rows: Callable[[Any], None] | None = None,
    store: str | Path | None = None,
) -> None:
    """The end-of-run summary on stdout: one JSON object (with ``extra``'s keys), or a readable table (with
    the rows ``rows(table)`` adds: a command's own, such as map-code's files and graph by type)."""
    summary = result.summary()
    if as_json:
        summary.update(extra or {})
        sys.stdout.write(json.dumps(summary, ensure_ascii=False) + "\n")
        return
    from rich.console import Console
    from rich.table import Table

    actions = summary["actions"]
    table = Table(title=f"{title} {summary['session_id']}", show_header=False, title_justify="left")
    table.add_column("", style="bold")
    table.add_column("")
    table.add_row(
        "stop reason", summary["stop_reason"] + (f" ({summary['error']})" if summary.get("error") else "")
    )
    table.add_row(
        "iterations", f"{summary['iterations']}" + (f" of {max_iterations}" if max_iterations else "")
    )
    table.add_row(
        "graph", f"nodes {summary['nodes']}/{result.max_nodes}, edges {summary['edges']}/{result.max_edges}"
    )
    table.add_row(
        "actions",
        f"{actions['proposed']} proposed, {actions['accepted']} accepted, {actions['rejected']} rejected",
    )
    for code, count in actions["rejected_by_code"].items():
        table.add_row("", f"{code}: {count}")
    for code, count in summary["invalid_turns"].items():
        table.add_row("invalid turns", f"{code}: {count}")
    if summary["truncated_turns"]:
        table.add_row("truncated turns", str(summary["truncated_turns"]))
    tokens = summary["tokens"]
    if tokens["total"]:
        table.add_row(
            "tokens",
            f"{tokens['total']} ({tokens['prompt']} prompt + {tokens['completion']} completion"
            f"{', estimated' if tokens['estimated'] else ''})"
            + (f", cost {tokens['cost']:.6f}" if tokens.get("cost") is not None else ""),
        )
    table.add_row("open to-dos", "; ".join(summary["open_todos"]) or "none")
    grounding = summary["grounding"]
    if grounding["grounded"] or grounding["ungrounded"]:
        table.add_row(
            "grounding",
            f"{grounding['grounded']} grounded, {grounding['ungrounded']} ungrounded, "
            f"{grounding['unverified']} unverified facts",
        )
    if summary.get("review"):
        plan = summary["review"]
        where = ["--store", str(store)] if store is not None else []
        review = shlex.join(["igg", "review", summary["session_id"], *where])
        resume = shlex.join(["igg", "resume", summary["session_id"], *where])
        table.add_row(
            "review",
            f"plan {plan.get('plan_id', '')} (iteration {plan['iteration']}: {plan['accepted']} "
            f"actions would apply, {plan['rejected']} rejected) waits: {review}, then {resume}",
        )
    if summary["pruned"]:
        table.add_row("pruned", ", ".join(f"{p['type']} {p['id']}" for p in summary["pruned"]))
    for export in summary["exports"]:
        table.add_row("export", export_line(export))
    if out is not None:
        table.add_row("output", str(out))
    if rows is not None:
        rows(table)
    Console(soft_wrap=False).print(table)


def export_line(export: dict[str, Any]) -> str:
    """One export as a person reads it: ``graphml out/g.graphml: nodes 27, edges 29``."""
    head = " ".join(str(export[k]) for k in ("format", "target", "path") if export.get(k) not in (None, ""))
    if export.get("ok") is False:
        return f"{head}: FAILED: {export.get('error', 'unknown error')}"
    rest = ", ".join(
        f"{k.replace('_', ' ')} {v}"
        for k, v in export.items()
        if k not in ("format", "target", "path", "ok", "seconds") and not isinstance(v, dict | list)
    )
    return f"{head}: {rest}" if rest else head


def _optional_module(name: str, option: str, what: str) -> Any:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise
        raise IGGError(
            f"{option} is not available in this installation ({what}, module {name}, are missing)"
        ) from None


def add_time_options(parser: Any) -> None:
    """``--as-of TIME`` and ``--known-at TIME`` (a parser or an argument group): the graph in valid time, and
    as the journal held it (``igg.store.session_graph``)."""
    parser.add_argument(
        "--as-of",
        metavar="TIME",
        help="only the facts valid at TIME (ISO 8601: 2024, 2024-03-05, 2024-03-05T10:00:00Z)",
    )
    parser.add_argument(
        "--known-at",
        metavar="TIME",
        help="the graph as IGG had been told it by TIME (the journal's time; a stored session)",
    )


def state_as_of(state: Any, as_of: str | None) -> Any:
    """``state`` itself, or (``--as-of``) the facts of it valid then."""
    if as_of is None:
        return state
    from igg.graph.asof import as_of as sliced
    from igg.store.session_graph import time_arg

    at = time_arg("--as-of", as_of)
    assert at is not None
    return sliced(state, at)
