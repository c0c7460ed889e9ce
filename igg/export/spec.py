"""Export specs (``FORMAT[:TARGET]``, as ``igg run --export`` takes them) and running a list of them.

Formats and their default file under ``out_dir``:

| format | default target | what |
|---|---|---|
| ``graphml`` | ``graph.graphml`` | GraphML (Gephi, yEd, networkx, igraph) |
| ``json`` | ``graph.json`` | IGG's document, the ``seed_data`` format |
| ``nodelink`` | ``graph.nodelink.json`` | networkx node-link JSON |
| ``neo4j`` | ``NEO4J_URI`` | a Bolt server; TARGET is an optional ``bolt://`` or ``neo4j://`` URI |
| ``cypher`` | ``graph.cypher`` | a script for ``cypher-shell -f`` |
| ``mermaid`` | ``graph.mmd`` | a Mermaid flowchart |
| ``html`` | ``graph.html`` | a self-contained page drawing the graph (``igg view``'s viewer, offline) |
| ``gexf`` | ``graph.gexf`` | GEXF 1.2 for Gephi, attributes typed (``igg.export.gexf``) |
| ``nt`` | ``graph.nt`` | RDF N-Triples, streamed (``igg.export.rdf``: the mapping) |
| ``ttl`` | ``graph.ttl`` | RDF Turtle (rdflib: the ``rdf`` extra) |
| ``jsonld`` | ``graph.jsonld`` | RDF JSON-LD (rdflib: the ``rdf`` extra) |

RDF formats take a base IRI (``base_iri``, default ``urn:igg:``).
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

from igg.errors import ExportError, ExportsFailed, IGGError
from igg.record.logs import get_logger

if TYPE_CHECKING:  # the graph and its models: annotations only (the formats load without them)
    from igg.export.neo4j.settings import Neo4jSettings
    from igg.graph.state import GraphState
    from igg.models.schema import Schema

log = get_logger("igg.export")

ExportFormat = Literal[
    "graphml", "json", "nodelink", "neo4j", "cypher", "mermaid", "html", "gexf", "nt", "ttl", "jsonld"
]
FORMATS: tuple[str, ...] = get_args(ExportFormat)
DEFAULT_FILES = {
    "graphml": "graph.graphml",
    "json": "graph.json",
    "nodelink": "graph.nodelink.json",
    "cypher": "graph.cypher",
    "mermaid": "graph.mmd",
    "html": "graph.html",
    "gexf": "graph.gexf",
    "nt": "graph.nt",
    "ttl": "graph.ttl",
    "jsonld": "graph.jsonld",
}


@dataclass(frozen=True, slots=True)
class ExportSpec:
    """One export: a format and an optional target (a file path, or for ``neo4j`` a Bolt URI)."""

    format: ExportFormat
    target: str | None = None
    base: Path | None = None
    """When set, ``target`` is an untrusted name written strictly inside this directory (``igg.io.files``:
    no symlinked directories, no hidden or control-character names); a client chose it."""

    def __str__(self) -> str:
        return self.format if self.target is None else f"{self.format}:{self.target}"


RDFLIB_FORMATS = ("ttl", "jsonld")
"""Formats written through rdflib (the ``rdf`` extra)."""


def parse_export_spec(text: str) -> ExportSpec:
    """Parse ``FORMAT[:TARGET]``; raises ``IGGError`` naming the accepted formats."""
    if not isinstance(text, str) or not text.strip():
        raise IGGError(f"empty export spec; use FORMAT[:TARGET] with FORMAT one of {', '.join(FORMATS)}")
    fmt, sep, target = text.strip().partition(":")
    fmt = fmt.lower()
    if fmt not in FORMATS:
        raise IGGError(
            f"unknown export format {fmt!r} in {text!r}; use FORMAT[:TARGET] with FORMAT one of "
            f"{', '.join(FORMATS)} (e.g. graphml:out/graph.graphml, neo4j:bolt://localhost:7687)"
        )
    if sep and not target:
        raise IGGError(f"export spec {text!r} has an empty target after ':'; give a path (or omit the ':')")
    if fmt in RDFLIB_FORMATS and importlib.util.find_spec("rdflib") is None:  # before a run spends its tokens
        raise IGGError(
            f"export spec {text!r}: Turtle and JSON-LD need rdflib, which is not installed: "
            "pip install 'rdflib>=7.0' (the rdf extra), or export nt, which does not"
        )
    if fmt == "neo4j" and target:
        from igg.export.neo4j.settings import check_uri

        try:
            check_uri(target)
        except ExportError as exc:
            raise IGGError(f"export spec {text!r}: {exc}") from None
    return ExportSpec(fmt, target or None)  # type: ignore[arg-type]


def perform_exports(
    state: GraphState,
    specs: Sequence[ExportSpec],
    *,
    schema: Schema | None = None,
    metadata: dict[str, Any] | None = None,
    out_dir: Path | None = None,
    provenance: bool = False,
    scope: str | None = None,
    neo4j_settings: Neo4jSettings | None = None,
    batch_size: int = 5000,
    base_iri: str | None = None,
    iterations: list[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """Run every export; returns one summary per export (format, target, nodes, edges, seconds, ...).

    File targets default to ``out_dir/graph.<ext>`` (``out_dir`` defaults to the current directory). Neo4j
    settings come from the spec's URI, ``neo4j_settings`` (a ``Neo4jSettings``) and ``NEO4J_*``; the scope
    defaults to ``metadata["session_id"]``. Every export is attempted; when any fails, ``ExportError`` is
    raised naming each failure (``ExportsFailed``: ``failures``, and ``summaries`` of all of them, ``ok``
    true/false). ``iterations`` (summaries, ``igg.view.data.iteration_summary``) fill the html page's
    iterations panel.
    """
    summaries: list[dict[str, Any]] = []
    failures: list[tuple[str, str]] = []
    for spec in specs:
        started = time.perf_counter()
        try:
            summary = _perform(
                state,
                spec,
                schema=schema,
                metadata=metadata or {},
                out_dir=out_dir,
                provenance=provenance,
                scope=scope,
                neo4j_settings=neo4j_settings,
                batch_size=batch_size,
                base_iri=base_iri,
                iterations=iterations,
            )
        except IGGError as exc:
            failures.append((spec.format, str(exc)))
            summaries.append({"format": spec.format, "target": spec.target, "ok": False, "error": str(exc)})
            # info, not a warning: ExportsFailed carries the error to the caller, which reports it (the CLI
            # as its one error line, a run in its summary and exit code); a warning would print it twice
            log.info("export_failed", format=spec.format, error=str(exc))
            continue
        summary.setdefault("seconds", round(time.perf_counter() - started, 3))
        summary["ok"] = True
        summaries.append(summary)
        log.info(
            "export_written",
            format=spec.format,
            target=summary.get("target"),
            nodes=summary.get("nodes"),
            edges=summary.get("edges"),
            seconds=summary["seconds"],
        )
    if failures:
        raise ExportsFailed(failures, summaries)
    return summaries


def _perform(
    state: GraphState,
    spec: ExportSpec,
    *,
    schema: Schema | None,
    metadata: dict[str, Any],
    out_dir: Path | None,
    provenance: bool,
    scope: str | None,
    neo4j_settings: Neo4jSettings | None,
    batch_size: int,
    base_iri: str | None = None,
    iterations: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    from igg.export import cypher_script, document, graphml, html, mermaid
    from igg.export.neo4j import bolt as neo
    from igg.export.neo4j.settings import Neo4jSettings

    run_scope = scope or str(metadata.get("session_id") or "igg")
    if spec.format == "neo4j":
        settings = neo4j_settings if neo4j_settings is not None else Neo4jSettings.from_env()
        if spec.target:
            settings = Neo4jSettings(**{**settings.__dict__, "uri": spec.target})
        session = str(metadata.get("session_id") or run_scope)
        return neo.export_neo4j(
            state,
            settings=settings,
            scope=run_scope,
            batch_size=batch_size,
            provenance=session if provenance else None,
        )
    if spec.base is not None and spec.target:
        return _perform_inside(
            state,
            spec,
            spec.base,
            spec.target,
            schema=schema,
            metadata=metadata,
            provenance=provenance,
            scope=run_scope,
            base_iri=base_iri,
            iterations=iterations,
        )
    path = Path(spec.target) if spec.target else (out_dir or Path.cwd()) / DEFAULT_FILES[spec.format]
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if spec.format in BINARY_WRITERS:
            result = write_binary(state, spec.format, str(path), metadata=metadata, base_iri=base_iri)
        elif spec.format == "graphml":
            result = graphml.write_graphml(
                state, str(path), metadata=metadata, schema=schema, provenance=provenance
            )
        elif spec.format == "json":
            result = document.write_json(state, path, schema=schema, metadata=metadata, provenance=provenance)
        elif spec.format == "nodelink":
            result = document.write_node_link(state, path, schema=schema, metadata=metadata)
        elif spec.format == "cypher":
            result = cypher_script.write_cypher(state, path, scope=run_scope)
        elif spec.format == "html":
            result = html.write_html(state, path, metadata=metadata, iterations=iterations)
        else:
            result = mermaid.write_mermaid(state, path)
    except OSError as exc:
        raise ExportError(f"cannot write {spec.format} to {path}: {exc.strerror or exc}") from None
    result.setdefault("bytes", path.stat().st_size)
    return {"format": spec.format, "target": str(path), **result}


def _perform_inside(
    state: GraphState,
    spec: ExportSpec,
    base: Path,
    name: str,
    *,
    schema: Schema | None,
    metadata: dict[str, Any],
    provenance: bool,
    scope: str,
    base_iri: str | None = None,
    iterations: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A file export to an untrusted ``name`` under ``base``: written through
    ``igg.io.files.open_for_write``."""
    import io

    from igg.export import cypher_script, document, graphml, html, mermaid
    from igg.io.files import open_for_write

    with open_for_write(name, base=base) as raw:
        if spec.format in BINARY_WRITERS:
            result = write_binary(state, spec.format, raw, metadata=metadata, base_iri=base_iri)
        elif spec.format == "graphml":
            result = graphml.write_graphml(
                state, raw, metadata=metadata, schema=schema, provenance=provenance
            )
        elif spec.format == "json":
            result = document.write_json(state, raw, schema=schema, metadata=metadata, provenance=provenance)
        elif spec.format == "nodelink":
            result = document.write_node_link(state, raw, schema=schema, metadata=metadata)
        else:
            text = io.TextIOWrapper(raw, encoding="utf-8", newline="")
            if spec.format == "cypher":
                result = cypher_script.write_cypher(state, text, scope=scope)
            elif spec.format == "html":
                result = html.write_html(state, text, metadata=metadata, iterations=iterations)
            else:
                result = mermaid.write_mermaid(state, text)
            text.flush()
            text.detach()  # the safe writer closes the file itself
        written = raw.tell()
    result.setdefault("bytes", written)
    return {"format": spec.format, "target": str(base / name), **result}


BINARY_WRITERS = ("gexf", "nt", "ttl", "jsonld")
"""Formats written by ``write_binary`` (to a path or a binary file)."""


def write_binary(
    state: GraphState,
    fmt: str,
    target: Any,
    *,
    metadata: dict[str, Any] | None = None,
    base_iri: str | None = None,
) -> dict[str, Any]:
    """GEXF or RDF (``BINARY_WRITERS``) to a path or a binary file object; returns the writer's summary."""
    from igg.export import gexf, rdf

    if fmt == "gexf":
        return gexf.write_gexf(state, target, metadata=metadata)
    base = rdf.check_base(base_iri or rdf.DEFAULT_BASE)
    if fmt == "nt":
        return rdf.write_ntriples(state, target, base=base)
    return rdf.write_rdflib(state, target, fmt, base=base)
