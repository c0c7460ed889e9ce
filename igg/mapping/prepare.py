"""Mapping source trees into a code graph: walk -> parse (concurrently) -> link -> request -> the loop.

``prepare(paths)`` walks the trees (``.gitignore`` honoured; vendored and binary files skipped with a reason,
generated Python files read as their module and imports only), parses every file on a process pool, links the
facts across files and builds a request over the code schema (``schemas/code-graph.json`` or the user's copy)
whose ``context_data`` holds the files behind ``// File: path`` markers, so a stored session is self-contained
and the LLM agent can read the files as context chunks. ``code_agent(mode, codemap)`` is the agent;
``igg.service.map_code`` runs it all through the same loop, validation and limits as any other agent;
``summary`` adds files read and skipped, nodes and edges by type, and times to the run's result.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from igg.act.apply import collector_paused
from igg.act.difference import Difference
from igg.agents.code.mapping import SchemaFit
from igg.codemap import AGENT_MODES
from igg.codemap import language as languages
from igg.codemap.cache import FactsCache, content_hash
from igg.codemap.facts import FileFacts, mentioned_names
from igg.codemap.language import Reads
from igg.codemap.link import CodeModel, link
from igg.codemap.model import KeptCalls
from igg.codemap.schema import load_code_schema
from igg.codemap.sources import SourceFile, analyze, with_modules
from igg.codemap.walk import DEFAULT_MAX_BYTES, WalkResult, walk
from igg.errors import Problem, RequestInvalid
from igg.mapping.limits import check_map_size
from igg.mapping.trees import existing_paths, git_commit_soon
from igg.models.request import Request
from igg.models.schema import Schema
from igg.record.logs import get_logger
from igg.request.load import load_request

log = get_logger("igg.code")

FILES_PER_TURN = 1_000_000
"""The static agent fills each turn up to the action cap, whatever the number of files (fewer iterations)."""
POOL_THRESHOLD = 64
"""Fewer files than this are parsed in-process (a process pool costs more than it saves)."""


@dataclass(kw_only=True)
class CodeMap:
    """A prepared mapping: the walk, the facts of every file, the linked model and the request."""

    paths: list[Path]
    walk: WalkResult
    facts: list[FileFacts]
    model: CodeModel
    request: Request
    seconds: dict[str, float] = field(default_factory=dict)
    """walk, parse and link times."""
    jobs: int = 1
    """Processes that parsed the files."""
    git_commit: str | None = None
    """The commit checked out where the first path lies (``+dirty`` with uncommitted changes), if a git
    tree."""
    keys: list[tuple[str | None, str]] = field(default_factory=list)
    """Each file's module name as its language named it and the key of its facts in the cache, in the walk's
    order (empty without a cache: ``parse_all``)."""
    plan: Difference | None = field(default=None, repr=False)
    """A fresh static map's graph, planned as the difference from the empty graph by its limit check
    (``code_agent``: ``igg.mapping.limits.check_map_size``), which the static pass applies as planned
    (``igg.mapping.static``); None before that check, and once taken."""
    census: bytes | None = field(default=None, repr=False)
    """A fresh static map's census of its symbols (``SchemaFit.census``), kept in the tree's index."""
    _kept: tuple[int, list[dict[str, Any]]] | None = field(default=None, init=False, repr=False)
    """What ``let_go`` kept of the facts: the lines read and the files read only in part."""

    def lines(self) -> int:
        """The lines of the files read."""
        return self._kept[0] if self._kept is not None else sum(f.lines for f in self.facts)

    def partial_files(self) -> list[dict[str, Any]]:
        """The files read only in part: ``{"path", "line", "error"}`` each."""
        if self._kept is not None:
            return self._kept[1]
        return [{"path": f.path, "line": f.error_line, "error": f.error} for f in self.facts if f.error]

    def let_go_of_facts(self) -> None:
        """Let go of the facts once the model is linked from them (a code map's, after ``on_prepared``: the
        static agent reads the model): the list is emptied in place, so what comes next reuses its memory.
        What the summary reports of them is kept (``lines``, ``partial_files``)."""
        if self._kept is None:
            self._kept = (self.lines(), self.partial_files())
        self.facts.clear()

    def let_go(self) -> None:
        """Let go of the facts and the linked model, once the static pass has planned its graph from them: the
        lists and tables are emptied in place, as the agent and its schema fit share them, so the graph's
        apply reuses their memory (with the facts, a third of the process's at 50,000 files)."""
        self.let_go_of_facts()
        self.plan = None
        self.model.symbols.clear()
        self.model.files.clear()
        self.model.shared.clear()

    def session_options(self) -> dict[str, Any]:
        """What a stored session of this map keeps beside its request: the git commit it maps, and the files
        read only in part or skipped, each with its reason."""
        options: dict[str, Any] = {"git_commit": self.git_commit} if self.git_commit else {}
        partial = self.partial_files()
        if partial:
            options["partial_files"] = partial
        if self.walk.skipped:
            options["skipped_files"] = [{"path": s.path, "reason": s.reason} for s in self.walk.skipped]
        return options


def _parse_batch(batch: Sequence[SourceFile], named: bool = False, reads: Reads = "all") -> list[FileFacts]:
    with collector_paused():
        out = [analyze(s, reads=reads) for s in batch]
        if named:
            for f in out:
                if reads == "imports" and _lighter(f.language):
                    continue  # kept under keys of their own (``FactsCache.key``), which --update never reads
                try:
                    f.names = mentioned_names(f)
                except (Exception, RecursionError):  # noqa: BLE001 - without names, --update links every file
                    f.names = None
        return out


def parse_all(
    files: Sequence[SourceFile],
    *,
    jobs: int | None = None,
    on_parsed: Callable[[int], Any] | None = None,
    executor: Executor | None = None,
    cache: FactsCache | None = None,
    counts: dict[str, int] | None = None,
    parsed: list[str] | None = None,
    named: bool = False,
    bodies: bool = True,
    reads: Reads = "all",
    keys: list[tuple[str | None, str]] | None = None,
) -> tuple[list[FileFacts], int]:
    """The facts of every file, in order, parsed on ``jobs`` processes (default: the CPUs); calls
    ``on_parsed(n)`` as batches of ``n`` files finish. Returns the facts and the process count used.

    ``executor`` (e.g. a Dask cluster's, see ``igg.batch.cluster.parse_executor``) parses the batches
    instead of a local process pool, whatever the number of files; ``jobs`` is then its worker count.
    With ``cache``, files whose content it knows are not parsed again (``counts``: parsed, cached; ``parsed``:
    the paths of the files parsed, appended; the facts parsed then carry ``names``, as ``named`` asks;
    ``bodies=False``: the facts taken from the cache lack their bodies, see ``FactsCache.get_many``).
    ``reads="imports"``: each file's imports alone (``Language.imports``; cached under keys of their own when
    its language reads less for them, see ``FactsCache.key``; ``keys``: each file's module name as its
    language named it and its key, appended)."""
    files = with_modules(files)
    if cache is not None:
        shas = [content_hash(f.text) for f in files]
        made = [FactsCache.key(f.path, f.module, sha, reads) for f, sha in zip(files, shas, strict=True)]
        known = cache.get_many(made, bodies=bodies)
        if reads == "imports":
            _full_facts(files, shas, made, known, cache, bodies)
        if keys is not None:
            keys.extend(zip((f.module for f in files), made, strict=True))
        todo = [f for f, k in zip(files, known, strict=True) if k is None]
        if parsed is not None:
            parsed.extend(f.path for f in todo)
        new, used = parse_all(
            todo, jobs=jobs, on_parsed=on_parsed, executor=executor, named=True, reads=reads
        )
        cache.put_many(
            (k, p)
            for k, p in zip((k for k, c in zip(made, known, strict=True) if c is None), new, strict=True)
        )
        fresh = iter(new)
        if counts is not None:
            counts.update(parsed=len(todo), cached=len(files) - len(todo))
        return [c if c is not None else next(fresh) for c in known], used
    if counts is not None:
        counts.update(parsed=len(files), cached=0)
    if parsed is not None:
        parsed.extend(f.path for f in files)
    return _parse_files(files, jobs or os.cpu_count() or 1, on_parsed, executor, named, reads)


def _parse_files(
    files: Sequence[SourceFile],
    jobs: int,
    on_parsed: Callable[[int], Any] | None,
    executor: Executor | None,
    named: bool,
    reads: Reads,
) -> tuple[list[FileFacts], int]:
    """``parse_all`` without a cache: on ``executor``, on a process pool, or here (few files, one job, or an
    imports-only read of files whose language scans them: ``Language.scans_imports``, the rest parsed as
    usual)."""
    if executor is not None:
        return _parse_on(executor, files, jobs, on_parsed, named, reads), jobs
    if reads == "imports" and len(files) >= POOL_THRESHOLD and jobs > 1:
        scanned = _scanned(files)
        if any(scanned):
            rest, used = _parse_files(
                [f for f, s in zip(files, scanned, strict=True) if not s], jobs, on_parsed, None, named, reads
            )
            here = iter(
                _parse_here([f for f, s in zip(files, scanned, strict=True) if s], named, reads, on_parsed)
            )
            there = iter(rest)
            return [next(here) if s else next(there) for s in scanned], used
    if jobs <= 1 or len(files) < POOL_THRESHOLD:
        return _parse_here(files, named, reads, on_parsed), 1
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        return _parse_on(pool, files, jobs, on_parsed, named, reads), jobs


def _parse_here(
    files: Sequence[SourceFile], named: bool, reads: Reads, on_parsed: Callable[[int], Any] | None
) -> list[FileFacts]:
    out: list[FileFacts] = []
    for s in files:
        out.extend(_parse_batch([s], named, reads))
        if on_parsed is not None:
            on_parsed(1)
    return out


def _scanned(files: Sequence[SourceFile]) -> list[bool]:
    """Whether each file is of a language whose imports alone are read without a parse
    (``Language.scans_imports``)."""
    scans: dict[str | None, bool] = {}
    out: list[bool] = []
    for f in files:
        name = languages.language_of(f.path)
        known = scans.get(name)
        if known is None:
            known = scans[name] = name is not None and languages.get(name).scans_imports
        out.append(known)
    return out


def _full_facts(
    files: Sequence[SourceFile],
    shas: Sequence[str],
    made: list[str],
    known: list[FileFacts | None],
    cache: FactsCache,
    bodies: bool,
) -> None:
    """For each file whose imports alone the cache lacks (a language that reads less for them:
    ``Language.lighter_imports``), its full facts when the cache has them (a map made them): linked for their
    imports, they make what the imports alone make (``tests/unit/test_rules_reads.py``). ``made`` and
    ``known`` are filled in place with their keys and facts."""
    missing = [
        (i, FactsCache.key(files[i].path, files[i].module, shas[i])) for i, k in enumerate(known) if k is None
    ]
    missing = [(i, full) for i, full in missing if full != made[i]]
    if not missing:
        return
    for (i, full), found in zip(missing, cache.get_many([k for _, k in missing], bodies=bodies), strict=True):
        if found is not None:
            made[i], known[i] = full, imports_view(found)


def imports_view(f: FileFacts) -> FileFacts:
    """Full facts ``f`` as an imports-only link reads them: for a language whose imports alone read less
    (``Language.lighter_imports``), without the declarations its imports do not read (half the memory); the
    others' imports read their full facts."""
    if not _lighter(f.language):
        return f
    return replace(f, types=[], callables=[], flow=None, names=None)


def _lighter(language: str) -> bool:
    """Whether ``language`` is one IGG reads whose imports alone read less than its analysis
    (``Language.lighter_imports``)."""
    return language in languages.names() and languages.get(language).lighter_imports


def _parse_on(
    executor: Executor,
    files: Sequence[SourceFile],
    jobs: int,
    on_parsed: Callable[[int], Any] | None,
    named: bool = False,
    reads: Reads = "all",
) -> list[FileFacts]:
    size = max(8, min(64, len(files) // (jobs * 4) or 1))
    batches = [files[i : i + size] for i in range(0, len(files), size)]
    results: list[list[FileFacts] | None] = [None] * len(batches)
    futures = {executor.submit(_parse_batch, b, named, reads): i for i, b in enumerate(batches)}
    for future in as_completed(futures):
        i = futures[future]
        try:
            results[i] = future.result()
        except Exception as exc:  # noqa: BLE001 - a process that died (or a worker lost): its files alone again
            results[i] = _parse_alone(batches[i], named, exc, reads)
        if on_parsed is not None:
            on_parsed(len(batches[i]))
    return [f for batch in results for f in batch or ()]


def _parse_alone(
    batch: Sequence[SourceFile], named: bool, exc: BaseException, reads: Reads = "all"
) -> list[FileFacts]:
    """The files of a batch whose parse process failed (``exc``), each parsed in a process of its own, so that
    the file that kills a process (a crash in a parser's native code) is the one left partial."""
    from igg.codemap.guard import header_facts

    out: list[FileFacts] = []
    pool: ProcessPoolExecutor | None = None
    try:
        for source in batch:
            pool = pool or ProcessPoolExecutor(max_workers=1)
            try:
                out.extend(pool.submit(_parse_batch, [source], named, reads).result())
                continue
            except Exception as again:  # noqa: BLE001 - this file is the one
                pool.shutdown(wait=False, cancel_futures=True)
                pool, reason = None, f"{type(again).__name__}: {again}"[:200]
            facts = header_facts(
                source.path, source.text, source.module, source.language or languages.names()[0]
            )
            facts.error = (
                f"partial: its parse process failed ({reason}); only its module and imports were read"
            )
            facts.sha = content_hash(source.text)
            out.append(facts)
    finally:
        if pool is not None:
            pool.shutdown(wait=True)
    log.warning("parse_batch_retried", files=len(batch), error=f"{type(exc).__name__}: {exc}"[:200])
    return out


def context_of(files: Sequence[SourceFile]) -> str:
    """The files as one context, each behind a ``File:`` marker in its language's line comment (``// File:``
    before a Java file, ``# File:`` before a Python one)."""
    parts = []
    for s in files:
        mark = languages.get(s.language).comment if s.language is not None else "//"
        parts.append(f"{mark} File: {s.path}\n{s.text if s.text.endswith(chr(10)) else s.text + chr(10)}")
    return "".join(parts)


@collector_paused()
def prepare(
    paths: Sequence[Path],
    *,
    agent: str = "code",
    schema: str | Path | None = None,
    session_id: str | None = None,
    goal: str | None = None,
    max_nodes: int = 200_000,
    max_edges: int = 1_000_000,
    max_iterations: int | None = None,
    max_actions: int = 500,
    max_bytes: int = DEFAULT_MAX_BYTES,
    jobs: int | None = None,
    executor: Executor | None = None,
    cache: FactsCache | None = None,
    package_prefix: str | None = None,
    environ: Mapping[str, str] | None = None,
    chosen: Sequence[str] | None = None,
    on_walked: Callable[[WalkResult], Any] | None = None,
    on_parsed: Callable[[int], Any] | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> CodeMap:
    """Walk, parse and link the trees under ``paths`` and build the request (see the module doc).

    ``executor`` parses on it instead of a local process pool (see ``parse_all``); ``chosen``: the languages
    to read (``--languages``; default: every one). Raises ``RequestInvalid`` for a path that does not exist, a
    tree without source files of those languages, an unknown agent mode or language, or a schema that is not
    valid.
    """
    _check_agent(agent, environ)
    paths = existing_paths(paths)
    check_package_prefix(package_prefix)
    chosen = languages.check_languages(chosen)
    code_schema = load_code_schema(schema)
    commit = git_commit_soon(paths)
    started = clock()
    walked = walk(paths, max_bytes=max_bytes, package_prefix=package_prefix, chosen=chosen, listings=True)
    seconds = {"walk": clock() - started}
    if on_walked is not None:
        on_walked(walked)
    _check_sources(walked, chosen, paths)
    mark = clock()
    keys: list[tuple[str | None, str]] = []
    facts, used = parse_all(
        walked.files, jobs=jobs, on_parsed=on_parsed, executor=executor, cache=cache, keys=keys
    )
    seconds["parse"] = clock() - mark
    mark = clock()
    model = link(facts, calls=KeptCalls())  # kept beside a store (``igg.codemap.treeindex``) for updates
    seconds["link"] = clock() - mark
    if max_iterations is None:
        max_iterations = _iterations_needed(len(walked.files), model, max_actions, agent)
    limits = {"max_nodes": max_nodes, "max_edges": max_edges, "max_actions_per_response": max_actions}
    payload = _payload(goal or _goal(paths), walked, code_schema, max_iterations, limits, agent)
    if session_id:
        payload["session_id"] = session_id
    request = load_request(payload, source_name="map-code request")
    return CodeMap(
        paths=paths,
        walk=walked,
        facts=facts,
        keys=keys,
        model=model,
        request=request,
        seconds=seconds,
        jobs=used,
        git_commit=commit(),
    )


def _payload(
    goal: str, walked: WalkResult, schema: Schema, max_iterations: int, limits: dict[str, int], agent: str
) -> dict[str, Any]:
    """The map-code request's payload: the goal, the files as context, the code schema and the limits."""
    return {
        "goal_prompt": goal,
        "context_data": context_of(walked.files),
        "config": {
            "max_iterations": max(1, min(max_iterations, 100_000)),
            "schema": schema.model_dump(by_alias=True, exclude_defaults=True),
            "constraints": {
                **limits,
                # a recursive callable calls itself: the one self-loop a code map draws
                "allow_self_loops": ["CALLS"] if "CALLS" in schema.edge_types else False,
                # static identities are exact (Outer.Inner, owner + signature): near-duplicate names
                # (get/get_all, User/Users) are distinct symbols, never a typo to guard against
                "duplicates": {"policy": "off" if agent == "code" else "warn"},
            },
        },
    }


def _check_agent(agent: str, environ: Mapping[str, str] | None) -> None:
    """Refuse an agent mode map-code does not run, or an LLM one without its endpoint (before any work)."""
    if agent not in AGENT_MODES:
        raise RequestInvalid(
            [Problem("--agent", f"{agent!r}: map-code agents are {', '.join(AGENT_MODES)}")],
            source="the command line",
        )
    if agent in ("llm", "hybrid"):  # both need the endpoint: say so before any work
        from igg.agents.llm_settings import LLMSettings

        LLMSettings.from_env(environ=environ)


def _check_sources(walked: WalkResult, chosen: Sequence[str], paths: Sequence[Path]) -> None:
    """Refuse (``RequestInvalid``) a walk that found no source file of the languages read."""
    if not any(not languages.is_config(f.path) for f in walked.files):
        others = ", ".join(f"{n} {s}" for s, n in walked.other.most_common(5)) or "none"
        raise RequestInvalid(
            [
                Problem(
                    "PATH",
                    f"no {languages.spoken(chosen)} source files under "
                    f"{', '.join(map(str, paths))} "
                    f"({len(walked.skipped)} skipped; other files: {others})",
                )
            ],
            source="the command line",
        )


def _iterations_needed(files: int, model: CodeModel, max_actions: int, agent: str) -> int:
    """The iteration guard by default: a turn per file, per ``max_actions`` relations and per as many
    symbols, and ten more; for an LLM agent, two turns per file at least."""
    per_turn = max(1, max_actions)
    needed = files + model.relation_count() // per_turn + len(model.symbols) // per_turn + 10
    if agent != "code":
        needed = max(needed, 2 * files + 20)
    return needed


def _goal(paths: Sequence[Path]) -> str:
    """The goal of a map of ``paths`` shown to an LLM agent by default."""
    shown = ", ".join(str(p) for p in paths)
    return (
        f"Map the code dependencies of {shown}: packages, modules, classes, interfaces, "
        "enums, methods and functions; calls, inheritance, imports and database tables."
    )


def check_package_prefix(prefix: str | None) -> None:
    """Raise ``RequestInvalid`` unless ``prefix`` is None or a dotted Python name (``google``,
    ``azure.mgmt``)."""
    if prefix is not None and not all(part.isidentifier() for part in prefix.split(".")):
        raise RequestInvalid(
            [
                Problem(
                    "--package-prefix",
                    f"{prefix!r} is not a dotted Python name (such as google or azure.mgmt)",
                )
            ],
            source="the command line",
        )


def code_agent(
    mode: str, codemap: CodeMap, environ: Mapping[str, str] | None = None, *, fresh: bool = True
) -> Any:
    """The agent for ``mode``: ``code`` reuses the parsed facts; ``llm``/``hybrid`` read the files as context
    chunks and carry the grounding rule (``validation_rules()``). For a ``fresh`` static map (not a resumed
    one, whose limits are the stored session's), the graph it will build is checked against the request's
    limits first (``igg.mapping.limits.check_map_size``: refused whole, never cut short)."""
    from igg.agents.code.agent import CodeAgent
    from igg.agents.code.hybrid import create_agent

    if mode == "code":
        if not fresh:
            return CodeAgent(model=codemap.model, files_per_turn=FILES_PER_TURN)
        config = codemap.request.config
        fit = SchemaFit(codemap.model, config.schema_.compile())
        codemap.plan = check_map_size(fit, config.constraints)
        codemap.census = fit.census()
        return CodeAgent(model=codemap.model, fit=fit, files_per_turn=FILES_PER_TURN)
    agent = create_agent(codemap.request, mode, environ=environ, sources=codemap.walk.files)
    if mode == "hybrid":
        agent.static.model = codemap.model
    return agent


def summary(
    codemap: CodeMap, result: Any, agent: Any = None, run_seconds: float | None = None
) -> dict[str, Any]:
    """What ``igg map-code`` reports beyond a run's summary: files, graph by type, times and rates."""
    walked = codemap.walk
    nodes, edges = result.state.counts_by_type()
    seconds = dict(codemap.seconds)
    if run_seconds is not None:
        seconds["run"] = run_seconds
    seconds["total"] = sum(seconds.values())
    total = seconds["total"] or 1e-9
    out: dict[str, Any] = {
        "git_commit": codemap.git_commit,
        "files": {
            "read": len(walked.files),
            "by_language": files_by_language(walked.files),
            "skipped": len(walked.skipped),
            "skipped_by_reason": walked.skipped_by_reason(),
            "skipped_paths": [{"path": s.path, "reason": s.reason} for s in walked.skipped],
            "generated_paths": [{"path": s.path, "reason": s.reason} for s in walked.generated],
            "other_languages": dict(walked.other.most_common()),
            "lines": codemap.lines(),
            "bytes": walked.bytes_read,
            "partial": codemap.partial_files(),
            "parse_processes": codemap.jobs,
        },
        "graph": {
            "nodes_by_type": {t: n for t, n in nodes.items() if n},
            "edges_by_type": {t: n for t, n in edges.items() if n},
        },
        "seconds": {k: round(v, 3) for k, v in seconds.items()},
        "rates": {
            "files_per_second": round(len(walked.files) / total, 1),
            "elements_per_second": round((result.state.node_count + result.state.edge_count) / total, 1),
        },
    }
    if agent is not None:
        static = getattr(agent, "static", agent)
        if hasattr(static, "summary"):
            out["static_analysis"] = static.summary()
    return out


def files_by_language(files: Sequence[SourceFile]) -> dict[str, int]:
    """How many files of each language a map read (configuration files such as ``tsconfig.json`` included), in
    the registry's order."""
    counts: dict[str, int] = {}
    for f in files:
        if f.language is not None:
            counts[f.language] = counts.get(f.language, 0) + 1
    return {name: counts[name] for name in languages.names() if name in counts}
