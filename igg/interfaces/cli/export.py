"""``igg export GRAPH.json --format FORMAT [--output PATH]``: export a saved IGG document (or node-link JSON).

``igg export SESSION --store PATH --format FORMAT [--iteration N] [--provenance]`` exports a stored session's
graph instead (as it stands, or as it was after iteration N). ``--provenance`` carries each node's and edge's
provenance (the iteration that created it, the last that updated it, the context chunk) into JSON and GraphML.

Formats: graphml, json, nodelink, neo4j, cypher, mermaid, html (a self-contained page drawing the graph; see
``igg view``), gexf (Gephi), nt, ttl, jsonld (RDF; ``--base-iri``; ttl and jsonld need the ``rdf`` extra). IGG
reads back only its own JSON document and node-link JSON: GEXF and RDF are written, never read. ``--types
Module,Package`` draws only those node types in the Mermaid chart, ``--top N`` how many of the most connected
nodes a summarized chart shows. ``--format neo4j`` connects to ``--uri`` or ``NEO4J_URI``, with
``NEO4J_USERNAME``/``NEO4J_PASSWORD`` (the password only ever from the environment) and ``--database`` or
``NEO4J_DATABASE``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from igg.errors import ExportError, ExportsFailed, IGGError, Problem, RequestInvalid
from igg.export.spec import DEFAULT_FILES, FORMATS, ExportSpec, perform_exports
from igg.interfaces.cli.common import add_time_options, add_verbosity_options, setup_logging, state_as_of
from igg.interfaces.cli.neo4j_lines import print_neo4j_details, print_plan_lines
from igg.interfaces.cli.targets import unwritable
from igg.io.inputs import STDIN

if TYPE_CHECKING:  # the graph, its models and the neo4j driver load when the command runs
    from igg.export.neo4j.settings import Neo4jSettings
    from igg.graph.state import GraphState
    from igg.models.schema import Schema


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "export",
        help="export a saved graph (GraphML, JSON, Neo4j, Cypher, Mermaid, HTML)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "graph",
        help=(
            "an IGG graph document (what --out or --export json writes) or node-link JSON "
            "('-' reads it from standard input); with --store, a session id"
        ),
    )
    p.add_argument("--format", "-f", required=True, choices=FORMATS, help="the export format")
    p.add_argument(
        "--output",
        "-o",
        type=Path,
        help=(
            "output file, '-' for stdout (default: beside the input, e.g. run.graphml; stdout when the "
            "input is '-')"
        ),
    )
    p.add_argument("--json", action="store_true", help="print the export summary as JSON")
    add_verbosity_options(p)
    _session_options(p.add_argument_group("sessions"))
    _chart_options(p.add_argument_group("mermaid"))
    _neo4j_options(p.add_argument_group("neo4j"))
    rdf = p.add_argument_group("rdf")
    rdf.add_argument(
        "--base-iri",
        metavar="IRI",
        help="base of every IRI the nt/ttl/jsonld export mints (default urn:igg:)",
    )
    p.set_defaults(handler=run)


def _session_options(sessions: argparse._ArgumentGroup) -> None:
    """A stored session as the source: the store, the iteration or time, provenance."""
    sessions.add_argument(
        "--store",
        metavar="LOCATION",
        help=(
            "export the session GRAPH from this session store (the "
            "store is also used, without --store, when GRAPH is no file but the store the session "
            "commands read ($IGG_STORE, ./.igg/sessions.sqlite or the default store) holds it)"
        ),
    )
    sessions.add_argument("--iteration", type=int, metavar="N", help="the graph as it was after iteration N")
    add_time_options(sessions)
    sessions.add_argument(
        "--provenance",
        action="store_true",
        help=(
            "carry provenance (created/updated iteration, chunk) into JSON and GraphML, "
            "and into Neo4j as igg_session, igg_created, igg_updated, igg_chunk"
        ),
    )


def _chart_options(chart: argparse._ArgumentGroup) -> None:
    """Mermaid's: the node types drawn, the size of a summarized chart."""
    chart.add_argument(
        "--types",
        metavar="TYPE[,TYPE...]",
        help="draw only these node types (and the edges between them), e.g. --types Module",
    )
    chart.add_argument(
        "--top",
        type=int,
        metavar="N",
        help=(
            "a summarized chart (beyond 60 nodes or 120 edges) draws the N most connected nodes (default 20)"
        ),
    )


def _neo4j_options(neo: argparse._ArgumentGroup) -> None:
    """Neo4j's: the server, the scope, batches, and planning, diffing or following a stored session."""
    neo.add_argument("--uri", help="Bolt URI, e.g. bolt://localhost:7687 (default: NEO4J_URI)")
    neo.add_argument(
        "--user", help="user name (default: NEO4J_USERNAME); the password comes from NEO4J_PASSWORD"
    )
    neo.add_argument("--database", help="database name (default: NEO4J_DATABASE or the server's default)")
    neo.add_argument("--scope", help="export scope stored as igg_scope (default: the graph's session_id)")
    neo.add_argument("--batch-size", type=int, default=5000, help="rows per transaction (default 5000)")
    neo.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        help="seconds to connect and finish the Bolt handshake before a retry (default 10)",
    )
    neo.add_argument(
        "--plan",
        action="store_true",
        help=(
            "print what the export would create, update and delete in the scope; write nothing (for a "
            "stored session: the delta since its last export there, or the full diff and why)"
        ),
    )
    neo.add_argument(
        "--full",
        action="store_true",
        help=(
            "a stored session: read and diff the whole scope even when a delta from the journal would "
            "do (a delta is used when the scope still holds what IGG last wrote there)"
        ),
    )
    neo.add_argument(
        "--follow",
        action="store_true",
        help=(
            "a stored session: push every committed step as it lands; ends when the session has "
            "finished and its last step is in Neo4j (Ctrl-C stops earlier)"
        ),
    )
    neo.add_argument(
        "--interval",
        type=float,
        default=1.0,
        metavar="SECONDS",
        help="--follow: how often to look for new steps (default 1)",
    )


def load_source(args: argparse.Namespace) -> tuple[GraphState, Schema | None, dict[str, Any]]:
    """The graph to export, its schema and metadata, from the command's source argument: the one place that
    knows where graphs come from."""
    if from_store(args):
        from igg.store.session_graph import session_graph

        return session_graph(
            args.store, args.graph, iteration=args.iteration, as_of=args.as_of, known_at=args.known_at
        )
    for option, value in (("--iteration", args.iteration), ("--known-at", args.known_at)):
        if value is not None:
            raise RequestInvalid(
                [Problem(option, "applies to a stored session only (use --store PATH)")],
                source="the command line",
            )
    from igg.export.load import document_to_state, load_document

    refuse_unreadable(str(args.graph))
    doc = load_document(args.graph)
    state = document_to_state(doc, source=str(args.graph))
    return state_as_of(state, args.as_of), doc.schema_, dict(doc.metadata)


WRITE_ONLY = {
    ".gexf": "GEXF",
    ".nt": "N-Triples",
    ".ttl": "Turtle",
    ".jsonld": "JSON-LD",
    ".graphml": "GraphML",
    ".cypher": "Cypher",
    ".mmd": "Mermaid",
    ".html": "HTML",
}
"""Files IGG writes but never reads back as a graph (they cannot carry everything a session holds)."""


def refuse_unreadable(source: str) -> None:
    """Raise ``RequestInvalid`` for a GRAPH IGG cannot round-trip (RDF, GEXF, ...), saying what it reads."""
    kind = WRITE_ONLY.get(Path(source).suffix.lower())
    if kind is not None:
        raise RequestInvalid(
            [
                Problem(
                    "GRAPH",
                    f"{source} looks like {kind}, which IGG writes but does not read back "
                    "(it would not round-trip the schema, identities and provenance); export from "
                    "the IGG JSON document (--export json) or the stored session instead",
                )
            ],
            source="the command line",
        )


def stored_iterations(args: argparse.Namespace) -> list[dict[str, Any]] | None:
    """The iterations panel of an html page drawn from a stored session (as ``igg view --export`` has it)."""
    if args.format != "html" or not from_store(args):
        return None
    from igg.store import SessionStore, resolve_store_path
    from igg.view.data import iteration_summaries

    store = SessionStore(resolve_store_path(args.store))
    try:
        steps = store.steps(args.graph)
    finally:
        store.close()
    return iteration_summaries(steps, args.iteration)


def from_store(args: argparse.Namespace) -> bool:
    """Whether GRAPH names a stored session: with ``--store``, or when it is no file and the default store
    (``igg.store.resolve_store_path``) exists."""
    from igg.interfaces.cli.common import is_session_id

    if args.graph != STDIN and not Path(args.graph).exists() and not is_session_id(args.graph):
        return False  # out/graph.json: a path that is not there, never a session id
    if getattr(args, "store", None):
        return True
    from igg.store import resolve_store_path
    from igg.store.location import store_exists, store_text

    if args.graph == STDIN or Path(args.graph).exists() or not store_exists(resolve_store_path(None)):
        return False
    args.store = store_text(resolve_store_path(None))
    return True


def write_stdout(
    state: GraphState,
    fmt: str,
    schema: Schema | None,
    metadata: dict[str, Any],
    scope: str | None,
    provenance: bool = False,
    base_iri: str | None = None,
    iterations: list[dict[str, Any]] | None = None,
) -> None:
    """``--output -``: the export on standard output."""
    from igg.export import write_cypher, write_graphml, write_json, write_mermaid, write_node_link
    from igg.export.spec import BINARY_WRITERS, write_binary

    if fmt in BINARY_WRITERS:
        write_binary(state, fmt, sys.stdout.buffer, metadata=metadata, base_iri=base_iri)
    elif fmt == "graphml":
        write_graphml(state, sys.stdout.buffer, metadata=metadata, schema=schema, provenance=provenance)
    elif fmt == "json":
        write_json(state, sys.stdout, schema=schema, metadata=metadata, provenance=provenance)
    elif fmt == "nodelink":
        write_node_link(state, sys.stdout, schema=schema, metadata=metadata)
    elif fmt == "cypher":
        write_cypher(state, sys.stdout, scope=scope or str(metadata.get("session_id") or "igg"))
    elif fmt == "html":
        from igg.export.html import write_html

        write_html(state, sys.stdout, metadata=metadata, iterations=iterations)
    else:
        write_mermaid(state, sys.stdout)
    sys.stdout.flush()


def default_output(source: Path, fmt: str) -> str:
    """``run.json`` -> ``run.graphml``, ``run.export.json``, ``run.nodelink.json``, ``run.cypher``,
    ``run.mmd``."""
    suffix = {"json": ".export.json"}.get(fmt, DEFAULT_FILES.get(fmt, "").removeprefix("graph"))
    stem = source.name.removesuffix(".json")
    return str(source.with_name(stem + suffix))


def run(args: argparse.Namespace) -> int:
    problem = refused_options(args)
    if problem is not None:
        print(f"igg: {problem}", file=sys.stderr)
        return 2
    setup_logging(args, unasked="warning")  # stdout is for results; log lines on stderr only when asked
    if args.format == "neo4j" and args.iteration is None and from_store(args):
        from igg.interfaces.cli.export_sync import run_session_neo4j  # loads the store only when asked

        return run_session_neo4j(args)
    session_only = _session_only(args)
    if session_only:
        print(
            f"igg: {' and '.join(session_only)} {'apply' if len(session_only) > 1 else 'applies'} to a stored"
            " session (give SESSION and --store)",
            file=sys.stderr,
        )
        return 2
    state, schema, metadata = load_source(args)
    if args.graph == STDIN and not args.store and args.output is None:
        args.output = Path(STDIN)  # nothing to write beside: standard input in, standard output out
    if args.types is not None or args.top is not None:
        return _chosen_mermaid(args, state)
    if str(args.output) == "-" and args.format != "neo4j":
        try:
            write_stdout(
                state,
                args.format,
                schema,
                metadata,
                args.scope,
                args.provenance,
                args.base_iri,
                iterations=stored_iterations(args),
            )
        except ExportError as exc:
            raise IGGError(str(exc)) from None
        return 0
    return export_to_target(args, state, schema, metadata)


def _session_only(args: argparse.Namespace) -> list[str]:
    """The options given that apply to a stored session's Neo4j export only."""
    return [flag for flag, on in (("--full", args.full), ("--follow", args.follow)) if on]


def refused_options(args: argparse.Namespace) -> str | None:
    """Why these options do not go together (the message after ``igg: ``), or None."""
    if args.base_iri is not None and args.format not in ("nt", "ttl", "jsonld"):
        return "--base-iri applies to --format nt, ttl and jsonld only"
    if args.base_iri is not None:
        from igg.export.rdf import check_base

        try:
            check_base(args.base_iri)
        except ExportError as exc:
            return str(exc)
    if args.plan and args.format != "neo4j":
        return "--plan applies to --format neo4j only"
    session_only = _session_only(args)
    if session_only and (args.format != "neo4j" or args.iteration is not None):
        return (
            f"{' and '.join(session_only)} {'apply' if len(session_only) > 1 else 'applies'} to --format"
            " neo4j of a stored session's latest graph only (not with --iteration)"
        )
    if args.follow and args.plan:
        return "--follow and --plan do not go together"
    if args.interval <= 0:
        return "--interval must be positive"
    if args.format == "neo4j":
        if args.output is not None:
            return "--output does not apply to --format neo4j; use --uri (or NEO4J_URI)"
        if args.uri:
            from igg.export.neo4j.settings import check_uri

            try:
                check_uri(args.uri)
            except ExportError as exc:
                return str(exc)
        if args.batch_size < 1 or args.timeout <= 0:
            return "--batch-size must be at least 1 and --timeout positive"
    if (args.types is not None or args.top is not None) and args.format != "mermaid":
        return "--types and --top apply to --format mermaid only"
    if args.top is not None and args.top < 0:
        return "--top must be 0 or more"
    return None


def export_to_target(
    args: argparse.Namespace, state: GraphState, schema: Schema | None, metadata: dict[str, Any]
) -> int:
    """Export to the file ``--output`` names (or the default beside the source), or to Neo4j; print the
    summaries."""
    settings = None
    source = Path(f"{args.graph}.json") if args.store else Path(args.graph)  # a session: SESSION.graphml, ...
    target: str | None = str(args.output) if args.output is not None else default_output(source, args.format)
    if (
        args.format != "neo4j"
        and not args.store
        and target is not None
        and Path(target).resolve() == Path(args.graph).resolve()
    ):
        print(f"igg: refusing to overwrite the input {args.graph}; give another --output", file=sys.stderr)
        return 2
    if args.format != "neo4j" and target is not None:
        reason = unwritable(Path(target), DEFAULT_FILES.get(args.format, "graph.json"))
        if reason:
            print(f"igg: --output {reason}", file=sys.stderr)
            return 2
    if args.format == "neo4j":
        from igg.export.neo4j.settings import Neo4jSettings

        settings = Neo4jSettings.from_env(
            uri=args.uri,
            username=args.user,
            database=args.database,
            connection_timeout=args.timeout,
            acquisition_timeout=args.timeout,
        )
        target = None
        if args.plan:
            return print_plan(args, state, metadata, settings)
    try:
        summaries = perform_exports(
            state,
            [ExportSpec(args.format, target)],
            schema=schema,
            metadata=metadata,
            scope=args.scope,
            neo4j_settings=settings,
            provenance=args.provenance,
            batch_size=args.batch_size,
            base_iri=args.base_iri,
            iterations=stored_iterations(args),
        )
    except ExportsFailed as exc:
        if args.json:
            print(json.dumps({"exports": exc.summaries}))
        raise IGGError(exc.reasons) from None
    print_summaries(args, summaries)
    return 0


def print_summaries(args: argparse.Namespace, summaries: list[dict[str, Any]]) -> None:
    """One line per export (``--json``: the summaries as JSON; ``--quiet``: nothing), warnings on stderr."""
    if args.json:
        print(json.dumps({"exports": summaries}))
    elif not args.quiet:
        for s in summaries:
            extra = (
                f", {s['bytes']:,} bytes"
                if "bytes" in s
                else f", scope {s.get('scope')!r} on {s.get('server')}"
            )
            print(
                f"{s['format']}: {s['target']} ({s['nodes']} nodes, {s['edges']} edges{extra},"
                f" {s['seconds']} s)"
            )
            if s["format"] == "neo4j":
                print_neo4j_details(s)
            for warning in s.get("warnings", []):
                print(f"  warning: {warning}", file=sys.stderr)


def print_plan(
    args: argparse.Namespace, state: GraphState, metadata: dict[str, Any], settings: Neo4jSettings
) -> int:
    """``--plan``: what a Neo4j export would change in its scope, written nowhere."""
    from igg.export.neo4j.bolt import plan_neo4j

    session = str(metadata.get("session_id") or "igg")
    scope = args.scope or session
    try:
        plan = plan_neo4j(
            state, settings=settings, scope=scope, provenance=session if args.provenance else None
        )
    except ExportError as exc:
        raise IGGError(str(exc)) from None
    if args.json:
        print(json.dumps(plan))
        return 0
    print(f"plan for scope {scope!r} on {plan['server']} at {plan['target']} (nothing written)")
    print_plan_lines(plan)
    if plan.get("conflicts"):
        sys.stdout.flush()  # the plan first, then why it cannot go ahead
        print(
            f"igg: the export would stop before writing anything: {len(plan['conflicts'])} conflicting "
            "constraint(s) (listed above, each with its fix)",
            file=sys.stderr,
        )
        return 1
    return 0


def _chosen_mermaid(args: argparse.Namespace, state: GraphState) -> int:
    """``--format mermaid`` with ``--types``/``--top``: the chart of the chosen node types."""
    from igg.export.mermaid import DEFAULT_TOP, write_mermaid

    types = [t.strip() for t in args.types.split(",") if t.strip()] if args.types is not None else None
    top = args.top if args.top is not None else DEFAULT_TOP
    try:
        if str(args.output) == "-":
            write_mermaid(state, sys.stdout, node_types=types, top=top)
            sys.stdout.flush()
            return 0
        source = Path(f"{args.graph}.json") if args.store else Path(args.graph)
        target = str(args.output) if args.output is not None else default_output(source, "mermaid")
        summary = write_mermaid(state, target, node_types=types, top=top)
    except ExportError as exc:
        print(f"igg: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        raise IGGError(f"cannot write mermaid to {args.output}: {exc.strerror or exc}") from None
    summary = {"format": "mermaid", "target": target, **summary}
    if args.json:
        print(json.dumps({"exports": [summary]}))
    else:
        print(
            f"mermaid: {target} ({summary['drawn_nodes']} of {summary['nodes']} nodes drawn, "
            f"{summary['bytes']:,} bytes)"
        )
    return 0
