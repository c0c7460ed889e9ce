"""``igg map-code PATH...``: map source trees into a typed dependency graph, offline by default.

Walks the trees (honouring .gitignore; skipping vendored, generated and binary files, and saying which and
why), parses Python (ast) and Java (tree-sitter) files on all CPUs, and builds the graph through the same
loop, validation and limits as every agent: ``--agent code`` (default) is static analysis, no network;
``llm`` reads the files as context chunks; ``hybrid`` seeds the graph with the static pass and lets the
LLM add what static analysis cannot see. LLM proposals about symbols the sources lack are rejected
(UNGROUNDED_SYMBOL). The schema is ``schemas/code-graph.json`` unless ``--schema`` names your copy.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

from igg.codemap import AGENT_MODES
from igg.codemap.language import MODULES as LANGUAGE_NAMES
from igg.codemap.language import TITLES, check_languages
from igg.codemap.walk import DEFAULT_MAX_BYTES
from igg.errors import Problem, RequestInvalid
from igg.interfaces.cli.common import add_run_options, export_line, export_specs, setup_logging
from igg.interfaces.cli.keep import add_keep_option
from igg.interfaces.cli.targets import check_export_targets
from igg.store import resolve_store_path
from igg.store.location import sidecar_path, store_exists, store_text

if TYPE_CHECKING:
    from igg.codemap.facts import FileFacts
    from igg.codemap.walk import WalkResult

TITLE = "igg map-code"
"""The heading of the run's progress bar and summary table."""
ANOTHER_ID = "give another --session ID"
"""How map-code takes another session id (in the refusal of an id the store already holds)."""

MAX_NODES = 200_000
MAX_EDGES = 1_000_000
"""A fresh map's limits when ``--max-nodes``/``--max-edges`` are not given (an update keeps its session's)."""
SHOW_SKIPPED = 20
SHOW_PARTIAL = 5
"""Files with syntax errors listed in the summary table (stderr lists up to SHOW_SKIPPED)."""
"""Skipped paths listed on stderr before the run (all of them are in the --json summary)."""


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "map-code",
        help="map source trees into a code dependency graph",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="source directories or files")
    add_run_options(p, default_agent="code")
    add_keep_option(p)
    for action in p._actions:  # map-code accepts its own agents only: say exactly which
        if "--agent" in action.option_strings:
            action.choices = AGENT_MODES
            action.help = (
                "code (static analysis, offline; the default), llm or hybrid (static pass, then the "
                "LLM; both need OPENAI_API_KEY or OPENAI_BASE_URL)"
            )
    p.add_argument(
        "--schema",
        type=Path,
        metavar="FILE",
        help="a code schema (copy schemas/code-graph.json and edit it); default: the built-in one",
    )
    p.add_argument("--session", metavar="ID", help="the session id (default: generated)")
    p.add_argument("--goal", help="the goal shown to an LLM agent (default: map the code dependencies)")
    p.add_argument(
        "--max-nodes",
        type=int,
        metavar="N",
        help="graph size limit (default 200000); a tree whose map needs more is refused, never cut short",
    )
    p.add_argument(
        "--max-edges", type=int, metavar="N", help="graph size limit (default 1000000), as --max-nodes"
    )
    p.add_argument(
        "--max-iterations",
        type=int,
        metavar="N",
        help="iteration guard (default: enough for one file per iteration)",
    )
    _reading_options(p)
    _mode_options(p)
    p.set_defaults(handler=run_command)


def _reading_options(p: argparse.ArgumentParser) -> None:
    """How the sources are read: the processes or cluster that parse, the files and languages read."""
    p.add_argument("--jobs", type=int, metavar="N", help="parse processes (default: the CPUs)")
    p.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help=(
            "parse on the Dask cluster at tcp://HOST:PORT (or 'local' for one on this machine) instead "
            "of local processes; needs igg[dask]"
        ),
    )
    p.add_argument(
        "--max-file-bytes",
        type=int,
        default=DEFAULT_MAX_BYTES,
        metavar="N",
        help=f"skip larger files as likely generated (default {DEFAULT_MAX_BYTES})",
    )
    p.add_argument(
        "--languages",
        metavar="LIST",
        help=f"the languages to read, comma-separated (default: all of them: {','.join(LANGUAGE_NAMES)})",
    )
    p.add_argument(
        "--package-prefix",
        metavar="NAME",
        help=(
            "name every Python module under this package (e.g. google for a folder of the google "
            "namespace), where neither the folders nor the tree's own imports say it"
        ),
    )


def _mode_options(p: argparse.ArgumentParser) -> None:
    """The modes other than a fresh map: updating a stored map, reporting a change, resuming."""
    p.add_argument(
        "--update",
        action="store_true",
        help=(
            "re-map into the map-code session of --store (--session ID, default: the latest): only "
            "files whose content changed are parsed again; the difference is one new step"
        ),
    )
    p.add_argument(
        "--since",
        metavar="REF",
        help=(
            "report the dependencies (module and package level, with their lines) the change from this "
            "git commit to the work tree added and removed; only files the facts cache beside --store "
            "lacks are parsed; maps nothing into a session"
        ),
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help=(
            "continue the interrupted session --session ID in --store (the sources are read again; "
            "what the graph already holds is not proposed twice)"
        ),
    )


def run_command(args: argparse.Namespace) -> int:
    from igg.interfaces.cli.common import present, store_path
    from igg.interfaces.cli.keep import keeping

    setup_logging(args)
    if args.agent not in AGENT_MODES:
        raise RequestInvalid(
            [Problem("--agent", f"{args.agent!r}: map-code agents are {', '.join(AGENT_MODES)}")],
            source="the command line",
        )
    args.languages = check_languages(args.languages)
    if args.since is not None:  # an empty value (an unset CI variable) is refused, not a plain map
        return _since(args)
    if args.update:
        return _update(args)
    specs = export_specs(args)
    check_export_targets(specs, args.out)  # before the walk and the parse, not after them
    if args.resume:
        _check_resume(args)
    keep = keeping(args, args.session, explicit_store=store_path(args))  # the one store rule
    recorders: list[Any] = []
    store: Any = keep.store
    if getattr(args, "sync_each_iteration", False):
        from igg.interfaces.cli.export_sync import sync_each_iteration

        syncer, specs = sync_each_iteration(specs, keep.store)
        store = syncer.store  # opened once: the run and the recorder keeping the target in step share it
        recorders.append(syncer)
    captured: dict[str, Any] = {}
    views: list[Any] = []

    def job(on_event: Any, witness: Any) -> Any:
        result, summary = _map(
            args, keep, store, specs, [*recorders, witness], on_event, views[0] if views else None
        )
        captured.update(summary)
        return result

    def rows(table: Any) -> None:
        if captured:
            _summary_rows(table, captured)

    return present(
        args,
        job,
        keep=keep,
        session_id=args.session or "",
        summary_extra=lambda _: {"map_code": captured},
        title=TITLE,
        another_id=ANOTHER_ID,
        summary_rows=rows,
        on_view=views.append,
        agent=_static_pass() if args.agent == "code" else None,
    )


def _map(
    args: argparse.Namespace,
    keep: Any,
    store: Any,
    specs: list[Any],
    recorders: list[Any],
    on_event: Any,
    view: Any,
) -> tuple[Any, dict[str, Any]]:
    """``igg.service.map_code`` with the command's options: the facts cache beside the store (for a later
    ``--update``), the parse executor of ``--scheduler``, the parse progress on the run's progress view; the
    skipped and partial files are listed once the trees are parsed, before the run."""
    from igg.codemap.cache import FactsCache
    from igg.service import map_code

    with ExitStack() as stack:
        cache = (
            FactsCache(sidecar_path(resolve_store_path(keep.store), ".codefacts"))
            if keep.store and args.agent == "code"
            else None
        )
        if cache is not None:
            stack.callback(cache.close)
        executor, jobs = None, args.jobs
        if args.scheduler:  # the files travel to the workers: they need not see this file system
            from igg.batch.cluster import parse_executor

            executor, jobs = stack.enter_context(parse_executor(args.scheduler))

        def prepared(codemap: Any) -> None:
            stack.close()  # the cache and the cluster serve the parse only
            _report_skipped(codemap.walk)
            _report_partial(codemap.facts)

        return map_code(
            args.paths,
            agent=args.agent,
            store=store,
            session_id=args.session,
            resume=args.resume,
            force=keep.force,
            out=args.out,
            exports=specs,
            provenance=getattr(args, "provenance", False),
            on_event=on_event,
            recorders=recorders,
            on_prepared=prepared,
            schema=args.schema,
            goal=args.goal,
            max_nodes=MAX_NODES if args.max_nodes is None else args.max_nodes,
            max_edges=MAX_EDGES if args.max_edges is None else args.max_edges,
            max_iterations=args.max_iterations,
            max_bytes=args.max_file_bytes,
            package_prefix=args.package_prefix,
            chosen=args.languages,
            jobs=jobs,
            executor=executor,
            cache=cache,
            on_walked=getattr(view, "walked", None),
            on_parsed=getattr(view, "parsed", None),
        )


def _static_pass() -> Any:
    """What stands for the static agent in the progress view: it reads the graph itself, nobody is "asked"."""
    from igg.agents.base import AgentCapabilities

    class StaticPass(AgentCapabilities):
        @property
        def reads_markdown(self) -> bool:
            return False

        def __call__(self, observation: Any) -> Any:
            raise NotImplementedError("only stands for the static agent in the progress view")

    return StaticPass()


def _check_resume(args: argparse.Namespace) -> None:
    path = resolve_store_path(args.store)  # the store every session command reads (igg.store)
    if not store_exists(path):
        raise RequestInvalid(
            [
                Problem(
                    "--resume",
                    f"needs the store of the session: there is none at {path}; name "
                    "it with --store PATH (or $IGG_STORE)",
                )
            ],
            source="the command line",
        )
    if not args.session:
        raise RequestInvalid(
            [Problem("--resume", "needs --session ID, the session to continue")], source="the command line"
        )


def _since(args: argparse.Namespace) -> int:
    from igg.service import dependency_changes

    explicit = args.store or os.environ.get("IGG_STORE")
    added, removed = dependency_changes(
        args.paths,
        args.since,
        store=store_text(resolve_store_path(args.store)) if explicit else None,
        package_prefix=args.package_prefix,
    )
    if args.json:
        print(
            json.dumps(
                {
                    "since": args.since,
                    "added": [c.model_dump() for c in added],
                    "removed": [c.model_dump() for c in removed],
                }
            )
        )
        return 0
    from igg.rules.github import plain

    for mark, found in (("+", added), ("-", removed)):
        for c in found:  # names and files escaped: this listing lands in CI logs
            where = ", ".join(plain(h.where()) for h in c.edges[:3]) + (", ..." if len(c.edges) > 3 else "")
            print(f"{mark} {c.level} {plain(c.source)} -> {plain(c.target)} ({where})")
    print(
        f"since {plain(args.since)}: {len(added)} dependencies added, {len(removed)} removed (module and"
        " package level)"
    )
    return 0


def _update(args: argparse.Namespace) -> int:
    path = resolve_store_path(args.store)  # the store every session command reads (igg.store)
    if not (args.store or os.environ.get("IGG_STORE")) and not store_exists(path):
        raise RequestInvalid(
            [
                Problem(
                    "--update",
                    f"needs the store of the session: there is none at {path}; "
                    "name it with --store PATH (or $IGG_STORE)",
                )
            ],
            source="the command line",
        )
    given = [
        o for o, v in (("--max-nodes", args.max_nodes), ("--max-edges", args.max_edges)) if v is not None
    ]
    if given:  # one limit rule: an update is judged by the limits its session was mapped with
        raise RequestInvalid(
            [
                Problem(
                    option,
                    "--update keeps the limits the session was mapped with (igg show SESSION lists them); "
                    f"to map with other limits, map the tree again into a new session with {option} N",
                )
                for option in given
            ],
            source="the command line",
        )
    specs = export_specs(args)
    check_export_targets(specs, args.out)  # before the walk and the parse, not after them
    options: dict[str, Any] = {
        "session_id": args.session,
        "max_bytes": args.max_file_bytes,
        "jobs": args.jobs,
        "package_prefix": args.package_prefix,
        "chosen": args.languages,
    }
    if args.out is None and not specs:  # nothing to write after it: the update alone, which starts light
        from igg.mapping.update import update_map

        result = update_map(args.paths, store_text(path), **options)
    else:
        from igg.service import update_code_map

        result = update_code_map(
            args.paths,
            store_text(path),
            out=args.out,
            exports=specs,
            provenance=getattr(args, "provenance", False),
            **options,
        )
    code = 1 if result.export_error is not None else 0
    if result.export_error is not None:
        print(f"igg: {result.export_error}", file=sys.stderr)
    if args.json:
        print(json.dumps(result.to_dict()))
        return code
    if getattr(args, "quiet", False):
        return code
    _print_update(result)
    return code


def _print_update(result: Any) -> None:
    from rich.console import Console
    from rich.table import Table

    files, graph = result.files, result.graph
    table = Table(title=f"igg map-code --update {result.session_id}", show_header=False, title_justify="left")
    table.add_column("", style="bold")
    table.add_column("")
    table.add_row(
        "step",
        f"{result.step} (iteration {result.iteration})"
        + (f", git {result.git_commit}" if result.git_commit else ""),
    )
    table.add_row(
        "files", f"{files['read']} read: {files['reparsed']} re-parsed, {files['unchanged']} unchanged"
    )
    table.add_row(
        "changed",
        f"{len(files['added'])} added, {len(files['changed'])} changed, "
        f"{len(files['removed'])} removed, {len(files['renamed'])} renamed",
    )
    linked = files["relinked"]
    table.add_row(
        "linked",
        (
            "nothing changed"
            if not files["added"] and not files["removed"] and not files["changed"]
            else "none: the changed files kept their facts, moved in order at most"
            if not linked and not files["removed"]
            else "none: no file named what the files removed declared, nor imported their paths"
            if not linked
            else (
                f"{linked} of {files['read']}: the changed files and those naming what changed "
                "(with a file that came or went, the files naming it or importing its path; when Python "
                "calls or bindings changed, every Python file or those whose calls changed)"
                if linked < files["read"]
                else (
                    f"all {linked}: files came or went, or an import, a supertype, "
                    "a module or a Python file's calls or bindings changed"
                )
            )
        ),
    )
    table.add_row(
        "graph",
        f"nodes +{graph['nodes_added']} -{graph['nodes_removed']} ~{graph['nodes_changed']}, "
        f"edges +{graph['edges_added']} -{graph['edges_removed']} ~{graph['edges_changed']}; "
        f"now {graph['nodes']} nodes, "
        f"{graph['edges']} edges",
    )
    for export in result.exports:
        table.add_row("export", export_line(export))
    Console(soft_wrap=False).print(table)


def _summary_rows(table: Any, s: dict[str, Any]) -> None:
    """map-code's rows of the run's summary table: files, the graph by type, times and rates."""
    files, graph, secs = s["files"], s["graph"], s["seconds"]
    skipped = ", ".join(f"{n} {why}" for why, n in files["skipped_by_reason"].items())
    table.add_row(
        "files",
        f"{files['read']} read ({files['lines']:,} lines), {files['skipped']} skipped"
        + (f": {skipped}" if skipped else ""),
    )
    if len(files.get("by_language", {})) > 1:
        table.add_row(
            "languages", ", ".join(f"{TITLES.get(n, n)} {count}" for n, count in files["by_language"].items())
        )
    if s.get("git_commit"):
        table.add_row("git", s["git_commit"])
    if files["other_languages"]:
        table.add_row(
            "not mapped", ", ".join(f"{n} {suffix}" for suffix, n in files["other_languages"].items())
        )
    if files["partial"]:
        shown = [
            _where(p["path"], p.get("line")) + f": {p['error']}" for p in files["partial"][:SHOW_PARTIAL]
        ]
        if len(files["partial"]) > SHOW_PARTIAL:
            shown.append(
                f"... and {len(files['partial']) - SHOW_PARTIAL} more (in --json's map_code.files.partial)"
            )
        count = len(files["partial"])
        table.add_row(f"partial ({count})", "\n".join(shown))
    table.add_row("nodes", ", ".join(f"{t} {n}" for t, n in graph["nodes_by_type"].items()) or "none")
    table.add_row("edges", ", ".join(f"{t} {n}" for t, n in graph["edges_by_type"].items()) or "none")
    left = s.get("static_analysis", {}).get("skipped", {})
    if left:
        table.add_row("not proposed", "; ".join(f"{n} {why}" for why, n in left.items()))
    table.add_row(
        "time",
        f"{secs['total']:.2f} s (walk {secs['walk']:.2f}, parse {secs['parse']:.2f} on "
        f"{files['parse_processes']} process{'es' if files['parse_processes'] > 1 else ''}, "
        f"link {secs['link']:.2f}, run {secs.get('run', 0):.2f})",
    )
    table.add_row(
        "rate",
        f"{s['rates']['files_per_second']:,} files/s, {s['rates']['elements_per_second']:,} nodes+edges/s",
    )


def _where(path: str, line: int | None) -> str:
    return f"{path}:{line}" if line else path


def _report_partial(facts: Sequence[FileFacts]) -> None:
    """Files that did not parse (syntax errors), as ``path:line: message`` on stderr, like the skipped
    ones."""
    partial = [f for f in facts if f.error]
    if not partial:
        return
    print(
        f"igg map-code: {len(partial)} file{'s' * (len(partial) > 1)} did not parse cleanly (their facts are "
        "partial):",
        file=sys.stderr,
    )
    from igg.rules.github import plain

    for f in partial[:SHOW_SKIPPED]:  # file names and messages escaped: this lands in CI logs
        print(f"  {plain(_where(f.path, f.error_line))}: {plain(f.error or '')}", file=sys.stderr)
    if len(partial) > SHOW_SKIPPED:
        print(
            f"  ... and {len(partial) - SHOW_SKIPPED} more (all of them are in --json's"
            " map_code.files.partial)",
            file=sys.stderr,
        )


def _report_skipped(walked: WalkResult) -> None:
    from igg.rules.github import plain

    for shown, header in (
        (walked.skipped, f"read {len(walked.files)} files; skipped {len(walked.skipped)}"),
        (
            walked.generated,
            f"{len(walked.generated)} generated Python files read as their module and imports only",
        ),
    ):
        if not shown:
            continue
        print(f"igg map-code: {header}:", file=sys.stderr)
        for s in shown[:SHOW_SKIPPED]:  # file names escaped: this lands in CI logs
            print(f"  {plain(s.path)}: {plain(s.reason)}", file=sys.stderr)
        if len(shown) > SHOW_SKIPPED:
            print(
                f"  ... and {len(shown) - SHOW_SKIPPED} more (all of them are in --json's map_code.files)",
                file=sys.stderr,
            )
