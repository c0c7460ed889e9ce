"""The rules' graph (``igg.rules.depgraph``) of a source tree or a stored map, with each edge's source line.

A fresh map's graph is what ``SchemaFit`` places of the linked model (``igg.mapping.difference.desired_graph``
relies on the same): ``model_graph`` builds the rules' view straight from it, without running the loop, so
``igg check PATH`` costs a walk, the parse of what the facts cache lacks, and a link.
``tests/test_rules_graph.py`` pins it to the graph ``igg map-code`` builds.

A map's edges carry their sites (``file``, ``line``: ``igg.codemap.model.site_properties``), which the rules'
graph reads as they are. A map made before edges had sites has none: ``state_lines`` locates the edges of such
a ``GraphState`` from the model of the same sources; ``session_depgraph`` does it for a stored session by
reading the facts of its files again (from the facts cache beside the store, else by parsing the files its
request keeps).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from igg.agents.code.mapping import SchemaFit
from igg.codemap.cache import FactsCache
from igg.codemap.link import CodeModel, Relation, link
from igg.codemap.sources import MARKER_RE, SourceFile
from igg.graph.state import GraphState
from igg.mapping.prepare import parse_all
from igg.models.schema import CompiledSchema
from igg.rules.depgraph import DepGraph, Edge, Lines, from_state, make_node
from igg.store.location import resolve_store_path, sidecar_path
from igg.store.store import SessionStore

EdgeKey = tuple[str, tuple[str, tuple[Any, ...]], tuple[str, tuple[Any, ...]]]
"""(edge type, (source type, identity), (target type, identity))."""


def _placed_relations(fit: SchemaFit) -> Iterator[tuple[str, Relation, str]]:
    """(file path, relation, edge type) for every edge a fresh map of ``fit``'s model proposes."""
    for plan in fit.model.files:
        for r in plan.relations:
            for rel in (r, fit.lifted(r)):
                if rel is None or fit.loops_back(rel):
                    continue
                label = fit.edge_label(rel)
                if label is not None:
                    yield plan.path, rel, label


def model_graph(model: CodeModel, schema: CompiledSchema, paths: Collection[str] | None = None) -> DepGraph:
    """The rules' graph of the map ``model`` gives in ``schema``: its nodes and edges, each edge at its first
    site (in source order, as the map's edge has it). ``paths``: the edges of those files alone, and the
    nodes of their symbols and of their edges' ends (a model linked with ``only=paths``:
    ``igg.mapping.spliced``)."""
    ends: set[str] | None = None
    if paths is not None:
        plans = [plan for plan in model.files if plan.path in paths]
        ends = {key for plan in plans for key in plan.symbols}
        ends.update(end for plan in plans for r in plan.relations for end in (r.source, r.target))
    fit = SchemaFit(model, schema, only=ends)
    graph = DepGraph()
    for key, placed in fit.placed.items():
        graph.add_node(make_node(key, placed.label, placed.properties))
    sites = fit.edge_properties()  # the first site, as the map's edge carries it
    for path, rel, label in _placed_relations(fit):
        if paths is not None and path not in paths:
            continue
        first = sites.get((label, rel.source, rel.target))
        graph.add_edge(
            Edge(
                rel.source,
                label,
                rel.target,
                file=first["file"] if first else path,
                line=first["line"] if first else rel.line or None,
                type_checking=first is not None and first.get("type_checking") is True,
            )
        )
    return graph


def state_lines(state: GraphState, model: CodeModel) -> Lines:
    """Locates the edges of ``state`` (a map of the sources ``model`` was linked from) at their statements."""
    return lines_at(state, edge_sites(model, state.schema))


Sites = dict[EdgeKey, tuple[str, int]]
"""Each edge a map of a model proposes, by its type and its ends' identities -> (file, line) of its first
site."""


@dataclass(kw_only=True)
class SitesMemo:
    """The edge sites of one session's context, kept between checks: its context never changes, the modules
    its graph names may (``key``: the files located and their module names)."""

    key: tuple[tuple[str, str | None], ...] | None = None
    sites: Sites = field(default_factory=dict)


def edge_sites(model: CodeModel, schema: CompiledSchema) -> Sites:
    """The sites of every edge a map of ``model`` in ``schema`` proposes (the costly half of
    ``state_lines``)."""
    fit = SchemaFit(model, schema)
    found: Sites = {}
    sites = fit.edge_properties()
    for path, rel, label in _placed_relations(fit):
        a, b = fit.placed[rel.source], fit.placed[rel.target]
        first = sites.get((label, rel.source, rel.target))
        found.setdefault(
            (label, (a.label, a.identity), (b.label, b.identity)),
            (first["file"], first["line"]) if first else (path, rel.line),
        )
    return found


def lines_at(state: GraphState, found: Sites) -> Lines:
    """Locates the edges of ``state`` at the sites ``found`` (by their type and their ends' identities)."""
    identities: dict[str, tuple[str, tuple[Any, ...]] | None] = {}

    def identity(node_id: str) -> tuple[str, tuple[Any, ...]] | None:
        if node_id not in identities:
            label = state.node_type(node_id)
            ident = state.identity(label, state.node_properties(node_id))
            identities[node_id] = (label, ident) if ident is not None else None
        return identities[node_id]

    def lines(source: str, edge_type: str, target: str) -> tuple[str, int] | None:
        a, b = identity(source), identity(target)
        return found.get((edge_type, a, b)) if a is not None and b is not None else None

    return lines


def context_files(context: str) -> list[SourceFile]:
    """The files of a map-code request's context exactly as they were read (``split_context`` trims blank
    lines at a file's ends, which would move every line number; ``prepare.context_of`` wrote each file whole
    after its marker line, with a newline added when it lacked a final one)."""
    marks = list(MARKER_RE.finditer(context))
    files = []
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(context)
        files.append(SourceFile(m.group(1).strip(), context[m.end() + 1 : end]))
    return files


def session_depgraph(store: str | Path, session_id: str) -> tuple[DepGraph, GraphState]:
    """The rules' graph of a stored session, its edges located from the facts of the files it mapped (none
    when its request keeps no files, e.g. a graph an LLM built from prose)."""
    db = SessionStore(store)
    try:
        request, state, _ = db.load_state(session_id)
    finally:
        db.close()
    cache_file = sidecar_path(resolve_store_path(store), ".codefacts")
    cache = FactsCache(cache_file) if cache_file.exists() else None
    try:
        return located_graph(state, request.context_data or "", cache), state
    finally:
        if cache is not None:
            cache.close()


def located_graph(
    state: GraphState, context: str, cache: FactsCache | None = None, memo: SitesMemo | None = None
) -> DepGraph:
    """The rules' graph of ``state``, its edges located by their own sites, or (a map made before edges had
    sites) from the facts of the files in ``context`` (the request's context of a map-code session; facts from
    ``cache`` when it knows them; the sites from ``memo`` when it holds those of the same files, else kept
    there: a server's check links a session's context once, not on every call)."""
    if all(d["type"] == "CONTAINS" or "line" in d["properties"] for _, _, _, d in state.edges()):
        return from_state(state)  # every edge says where it comes from: nothing to parse
    # any graph may have a Module type (an agent's knowledge graph), with or without a path
    modules = {
        str(p["path"]): p.get("name")
        for p in (state.node_properties(n) for n in state.nodes_of_type("Module"))
        if p.get("path")
    }
    sources = [
        SourceFile(f.path, f.text, modules[f.path]) for f in context_files(context) if f.path in modules
    ]
    if not sources:
        return from_state(state)
    key = tuple((s.path, s.module) for s in sources)
    if memo is not None and memo.key == key:
        return from_state(state, lines_at(state, memo.sites))
    facts, _ = parse_all(sources, cache=cache, bodies=True)
    sites = edge_sites(link(facts), state.schema)
    if memo is not None:
        memo.key, memo.sites = key, sites
    return from_state(state, lines_at(state, sites))
