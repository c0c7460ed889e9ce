"""The dependency-rule jobs on a source tree or a stored map, which ``igg.service`` serves to every interface:
``check`` (``igg check``), ``cycles`` (``igg cycles``), ``dependency_changes`` (``igg map-code --since``).

Each reads a tree through the facts cache kept beside the store (``facts_cache``: a later job parses only
what changed), or a stored session's graph, and hands it to ``igg.mapping.checking`` or
``igg.mapping.since``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from igg.store.location import resolve_store_path, sidecar_path, store_text
from igg.store.store import SessionStore, StoreLike

if TYPE_CHECKING:
    from igg.models.rules import Rule
    from igg.rules.report import CheckReport, DependencyChange, Violation


def facts_cache(store: StoreLike | None) -> Any:
    """The facts cache beside ``store`` (in memory without one): a later check parses only what changed."""
    from igg.codemap.cache import FactsCache

    if store is None:
        return FactsCache(None)
    location = store.location if isinstance(store, SessionStore) else resolve_store_path(store)
    return FactsCache(sidecar_path(location, ".codefacts"))  # beside a file; a local file for PostgreSQL


def store_text_of(store: StoreLike) -> str:
    """The store as text that opens it again (a PostgreSQL URL with its password: never print it)."""
    return store_text(store.location if isinstance(store, SessionStore) else resolve_store_path(store))


def check(
    paths: Sequence[Path] = (),
    *,
    rules: Sequence[Rule] | Path | None = None,
    session: str | None = None,
    store: StoreLike | None = None,
    since: str | None = None,
    new_only: bool = False,
    schema: str | Path | None = None,
    package_prefix: str | None = None,
) -> CheckReport:
    """Judge ``rules`` (the rules themselves, a rules file, or None for ``igg.toml``/``pyproject.toml`` in the
    first path or the working directory) on the source trees ``paths`` or on ``session`` of ``store``.

    ``since`` (a git ref): judge the trees at that commit too, marking violations it shares as known, and
    list the dependencies the change added and removed; ``new_only``: only new violations fail. For paths,
    ``store`` names where the facts cache lives (beside it). Raises ``RequestInvalid`` for a bad rules file
    (each problem naming the rule and field), a missing path or an unknown ref."""
    from igg.mapping.checking import run_check

    cache = facts_cache(store) if session is None else None
    try:
        store_path = store_text_of(store) if store is not None else None
        return run_check(
            rules,
            paths=list(paths),
            store=store_path,
            session=session,
            since=since,
            new_only=new_only,
            cache=cache,
            schema=schema,
            package_prefix=package_prefix,
        )
    finally:
        if cache is not None:
            cache.close()


def cycles(
    paths: Sequence[Path] = (),
    *,
    session: str | None = None,
    store: StoreLike | None = None,
    level: str = "module",
    edges: Sequence[str] | None = None,
    select: str | None = None,
    external: bool = False,
    exclude_type_checking: bool = False,
) -> list[Violation]:
    """The cycles at ``level`` (module, package or type) over ``edges`` among the nodes ``select`` picks, each
    as the ``acyclic`` rule reports it: its members, one cycle's edges, and the edges whose removal breaks it.
    ``exclude_type_checking``: type-only imports (``if TYPE_CHECKING:``, ``import type``) left out. A tree is
    mapped only as far as the rule reads (``igg.rules.reads``: its imports, at the module and package levels
    over IMPORTS)."""
    from igg.mapping.checking import cycles_rule, graph_of
    from igg.rules.bounds import CheckBounds
    from igg.rules.check import check_rule
    from igg.rules.reads import rule_reads

    rule = cycles_rule(level, edges, select, external, exclude_type_checking)
    cache = facts_cache(store) if session is None else None
    try:
        store_path = store_text_of(store) if store is not None else None
        graph = graph_of(
            paths=list(paths), store=store_path, session=session, cache=cache, reads=rule_reads(rule)
        )
    finally:
        if cache is not None:
            cache.close()
    return check_rule(graph, rule, CheckBounds.for_command_line())


def dependency_changes(
    paths: Sequence[Path], since: str, *, store: StoreLike | None = None, package_prefix: str | None = None
) -> tuple[list[DependencyChange], list[DependencyChange]]:
    """(added, removed): the module- and package-level dependencies the change from the commit ``since`` to
    the work tree added and removed, with the statements behind each (``igg map-code PATH --since REF``)."""
    from igg.mapping.changes import changes
    from igg.mapping.since import check_ref, ref_state, tree_state

    check_ref(since)
    cache = facts_cache(store)
    try:
        head = tree_state(paths, cache, package_prefix=package_prefix)
        base = ref_state(paths, since, cache, package_prefix=package_prefix)
    finally:
        cache.close()
    return changes(base.graph, head.graph)
