"""Rules judged on a source tree or a stored session, against a baseline commit when asked (``igg check``).

``run_check`` reads the target's graph (a tree through the facts cache, ``igg.mapping.since.tree_state``,
mapped only as far as the rules read: ``tree_graph``; a session through
``igg.mapping.depgraph.session_depgraph``), runs the rules (``igg.rules.check``) and, with
``since``, judges the tree at that commit too: a violation whose key the baseline also breaks is *known*,
the others *new*, and the dependencies the change added and removed are listed. With ``new_only`` (the
ratchet) only new violations fail the check; without it every error-severity violation does. A check of a
graph a run kept (``igg.mapping.kept``) keeps the keys of its violations beside it, and a later check whose
baseline is that graph (each commit checked in turn) takes them instead of checking it again.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from igg.codemap.cache import FactsCache
from igg.codemap.language import Reads
from igg.codemap.schema import load_code_schema
from igg.errors import Problem, RequestInvalid
from igg.graph.collector import collector_paused
from igg.mapping import kept
from igg.mapping.changes import changes
from igg.mapping.depgraph import session_depgraph
from igg.mapping.since import TreeState, check_ref, ref_state, tree_state
from igg.models.rules import AcyclicRule, Rule
from igg.rules.bounds import CheckBounds
from igg.rules.check import check
from igg.rules.depgraph import DepGraph
from igg.rules.load import find_rules_file, load_rules
from igg.rules.reads import needed_reads
from igg.rules.report import CheckReport, RuleSummary, Violation
from igg.rules.select import refuse_unmatched, unmatched


def resolve_rules(
    rules: Sequence[Rule] | Path | None, paths: Sequence[Path], edge_types: Sequence[str]
) -> list[Rule]:
    """The rules given, or read from the file given, or from the first rules file in the first path (when a
    folder) or the working directory; ``RequestInvalid`` when there is none."""
    if rules is not None and not isinstance(rules, Path):
        return list(rules)
    path = rules
    if path is None:
        folders = [p for p in paths[:1] if p.is_dir()] + [Path.cwd()]
        path = find_rules_file(folders)
        if path is None:
            raise RequestInvalid(
                [
                    Problem(
                        "--rules",
                        "no rules file: write igg.toml (or [tool.igg] in pyproject.toml) "
                        f"in {folders[0]} with [[rules]] tables, or name one with --rules FILE "
                        "(see docs/rules.md)",
                    )
                ],
                source="the command line",
            )
    return load_rules(path, edge_types=edge_types)


@collector_paused()
def run_check(
    rules: Sequence[Rule] | Path | None,
    *,
    paths: Sequence[Path] = (),
    store: str | Path | None = None,
    session: str | None = None,
    since: str | None = None,
    new_only: bool = False,
    cache: FactsCache | None = None,
    schema: str | Path | None = None,
    package_prefix: str | None = None,
    reads: Reads | None = None,
) -> CheckReport:
    """Judge ``rules`` on ``paths`` (or on ``session`` of ``store``); see the module doc. ``reads``: how far a
    tree is mapped (default: as far as the rules read, ``tree_graph``; ``all`` maps it in full)."""
    if new_only and since is None:
        needs = "needs --since REF: the commit whose violations are known (e.g. --since origin/main)"
        raise RequestInvalid([Problem("--new-only", needs)], source="the command line")
    if session is not None and since is not None:
        raise RequestInvalid(
            [Problem("--since", "compares two commits of a source tree: give a PATH, not a session")],
            source="the command line",
        )
    if since is not None:
        check_ref(since)
        cache = cache or FactsCache(None)  # each unchanged file parsed once, for whichever state asks first
    if session is not None:
        if store is None:
            raise RequestInvalid(
                [Problem("SESSION", "needs the store that holds it (--store PATH)")],
                source="the command line",
            )
        was_kept: bool | None = None
        graph, state = session_depgraph(store, session)
        the_rules = resolve_rules(rules, paths, sorted(state.schema.edge_types))
        target = f"session {session}"
    else:
        the_rules = resolve_rules(rules, paths, load_code_schema(schema).edge_types)
        head, reads = tree_graph(
            paths, cache, the_rules, schema=schema, package_prefix=package_prefix, reads=reads
        )
        graph = head.graph
        was_kept = head.kept if kept.usable(list(paths), cache, reads, schema) else None
        target = ", ".join(map(str, paths))
    bounds = CheckBounds.for_command_line()
    refuse_unmatched(graph, the_rules, bounds=bounds)
    violations = check(graph, the_rules, bounds)
    truncated = bounds.truncated
    report = CheckReport(
        target=target,
        rules=[],
        violations=violations,
        failed=False,
        since=since,
        new_only=new_only,
        nodes=len(graph.nodes),
        edges=len(graph.edges),
        reads=reads if session is None else None,
        kept=was_kept,
    )
    if since is not None:
        assert cache is not None  # made above when none was given: the two states share it
        base = ref_state(
            paths, since, cache, schema=schema, package_prefix=package_prefix, reads=reads, head=head
        )
        report.baseline = (
            "same" if base is head else "kept" if base.kept else "relinked" if base.relinked else "mapped"
        )
        known = _known(base, head, violations, the_rules, cache)
        _mark_known(violations, known[0])
        bounds.truncated |= known[1]
        if base is not head:
            report.added, report.removed = changes(base.graph, graph, _spliced(head, base))
    if session is None and head.kept_as is not None and cache is not None:
        kept.keep_known(cache, head.kept_as, the_rules, violations, truncated)
    report.truncated = bounds.truncated
    return _summed(report, the_rules)


def tree_graph(
    paths: Sequence[Path],
    cache: FactsCache | None,
    rules: Sequence[Rule],
    *,
    schema: str | Path | None = None,
    package_prefix: str | None = None,
    reads: Reads | None = None,
) -> tuple[TreeState, Reads]:
    """The rules' graph of ``paths`` mapped only as far as ``rules`` read (``igg.rules.reads.needed_reads``:
    imports only, imports and tables, or all), and how far that was.

    Falls back to the full map with a schema of the user's (which may place symbols elsewhere), and when a
    selector picks nothing in the lighter graph (it may name a class or a function: the full map has it, or
    the check refuses the selector with the full graph's names). ``reads`` given: that, with no fallback."""
    if reads is not None:
        return kept_or_mapped(paths, cache, schema=schema, package_prefix=package_prefix, reads=reads), reads
    reads = needed_reads(rules) if schema is None else "all"
    state = kept_or_mapped(paths, cache, schema=schema, package_prefix=package_prefix, reads=reads)
    if reads != "all" and unmatched(state.graph, rules, CheckBounds.for_command_line()):
        reads = "all"
        state = tree_state(paths, cache, schema=schema, package_prefix=package_prefix)
    return state, reads


def kept_or_mapped(
    paths: Sequence[Path],
    cache: FactsCache | None,
    *,
    schema: str | Path | None = None,
    package_prefix: str | None = None,
    reads: Reads = "all",
) -> TreeState:
    """The state of ``paths`` kept by the last run when it still holds (``igg.mapping.kept``), else mapped
    (``tree_state``) and kept for the next run (``cache`` None: mapped, each file parsed)."""
    paths = list(paths)
    if cache is None or not kept.usable(paths, cache, reads, schema):
        return tree_state(paths, cache, schema=schema, package_prefix=package_prefix, reads=reads)
    state = kept.kept_state(paths, cache, reads=reads, package_prefix=package_prefix)
    if state is None:
        state = tree_state(paths, cache, package_prefix=package_prefix, reads=reads)
        kept.keep(paths, cache, state, package_prefix=package_prefix)
    return state


def _known(
    base: TreeState, head: TreeState, violations: list[Violation], rules: Sequence[Rule], cache: FactsCache
) -> kept.Known:
    """The keys of the violations ``rules`` find on ``base``, and whether that check stopped at a bound: those
    on ``head`` when its files give that graph (``same_at_commit``), those a check found on a graph it kept
    (each commit checked in turn: ``kept.known_keys``), else those of a check of it now."""
    if base is head:
        return {v.key for v in violations}, False
    known = kept.known_keys(cache, base.kept_as, rules) if base.kept_as else None
    if known is None:
        bounds = CheckBounds.for_command_line()
        found = check(base.graph, rules, bounds)
        known = ({v.key for v in found}, bounds.truncated)
    return known


def _spliced(head: TreeState, base: TreeState) -> set[str] | None:
    """The modules whose edges out alone differ between ``base``, the kept graph ``head`` was linked again
    from, and ``head``'s: those of the files its splice linked again, added or removed (``TreeState.spliced``:
    ``igg.mapping.spliced``); None when ``head`` was linked otherwise."""
    if head.spliced is None or head.linked_from is None or head.linked_from[0] is not base.graph:
        return None
    return {
        n.id
        for graph in (head.graph, base.graph)
        for n in graph.nodes.values()
        if n.type == "Module" and n.file in head.spliced
    }


def _mark_known(violations: list[Violation], known: set[str]) -> None:
    for v in violations:
        v.status = "known" if v.key in known else "new"


def _summed(report: CheckReport, rules: Sequence[Rule]) -> CheckReport:
    counts: dict[str, int] = {}
    for v in report.violations:
        counts[v.rule] = counts.get(v.rule, 0) + 1
    report.rules = [
        RuleSummary(
            name=r.name,
            kind=r.kind,
            severity=r.severity,
            description=r.description,
            violations=counts.get(r.name, 0),
        )
        for r in rules
    ]
    report.failed = any(
        v.severity == "error" and (not report.new_only or v.status == "new") for v in report.violations
    )
    return report


def cycles_rule(
    level: str,
    edges: Sequence[str] | None,
    select: str | None,
    external: bool = False,
    exclude_type_checking: bool = False,
) -> AcyclicRule:
    """The ``acyclic`` rule ``igg cycles`` runs: every cycle at ``level`` among ``select``."""
    from igg.rules.cycles import DEFAULT_EDGES

    return AcyclicRule(
        name=f"cycles-{level}",
        kind="acyclic",
        level=level,  # type: ignore[arg-type]
        select=select or "*",
        edges=list(edges or DEFAULT_EDGES[level]),
        external=external,
        exclude_type_checking_imports=exclude_type_checking,
    )


@collector_paused()
def graph_of(
    *,
    paths: Sequence[Path] = (),
    store: str | Path | None = None,
    session: str | None = None,
    cache: FactsCache | None = None,
    reads: Reads = "all",
) -> DepGraph:
    """The rules' graph of ``paths`` (mapped only as far as ``reads``, ``igg.rules.reads``) or of ``session``
    of ``store``."""
    if session is not None:
        if store is None:
            raise RequestInvalid(
                [Problem("SESSION", "needs the store that holds it (--store PATH)")],
                source="the command line",
            )
        return session_depgraph(store, session)[0]
    return kept_or_mapped(paths, cache, reads=reads).graph
