"""One function per job, for every interface: the CLI, the MCP server and the HTTP API all call these.

* ``run_request`` / ``arun_request``: run a request with an agent to its stop reason, keeping it where asked
  (a session store, an output directory, any other ``Recorder``), then perform the exports;
* ``continue_session`` / ``acontinue_session``: resume an interrupted stored session where it left off;
* ``map_code``: map source trees into a code graph (walk, parse, link, then the static pass as one planned
  step, ``igg.mapping.static``, or ``run_request`` for an LLM agent and a resumed map);
* ``update_code_map``: re-map changed trees into their stored map, with the outputs a fresh map writes;
* ``export_result`` and ``export_session``: export a finished run's graph, or a stored session's;
* ``check``: judge dependency rules (``igg.toml``) on a source tree or a stored session, against a commit;
* ``cycles``: the cycles of a tree's or a session's dependencies at a level, with the edges that break each;
* ``dependency_changes``: what a commit range added to and removed from a tree's dependencies.

The last three are the dependency-rule jobs of ``igg.mapping.rule_jobs``, served from here unchanged.

A run's exports never raise: a failed export is in ``RunResult.export_error`` (and each export's summary,
``ok`` true or false, in ``RunResult.exports``), so the caller still gets the run's summary. Everything else
a caller did wrong raises an ``IGGError``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

from igg.agents.base import AnyAgent, capabilities
from igg.engine.loop import EventHandler, RunOptions, arun, run
from igg.errors import ExportError, ExportsFailed, IGGError, Problem, RequestInvalid, SessionRefused
from igg.export.spec import ExportSpec, perform_exports
from igg.mapping.rule_jobs import check, cycles, dependency_changes
from igg.models.request import Request
from igg.persistence import Recorder
from igg.persistence.rundir import RunDirectory, document_metadata
from igg.record.records import RunResult
from igg.store.recorder import SessionRecorder, resume_point
from igg.store.store import SessionStore, StoreLike

if TYPE_CHECKING:
    from igg.mapping.prepare import CodeMap
    from igg.mapping.update import UpdateResult


def open_store(store: StoreLike) -> SessionStore:
    """The ``SessionStore`` for a store or a path."""
    return store if isinstance(store, SessionStore) else SessionStore(store)


@contextmanager
def _opened(store: StoreLike) -> Iterator[SessionStore]:
    """``open_store``, closed at the block's end when it was opened here (a ``SessionStore`` given is the
    caller's): a PostgreSQL store left to the collector has its pool closed from one of the pool's own
    threads."""
    db = open_store(store)
    try:
        yield db
    finally:
        if db is not store:
            db.close()


def review_needs_a_store(
    request: Request, store: StoreLike | None, recorders: Sequence[Recorder] = ()
) -> None:
    """``config.review`` stops a run with its plan waiting: a plan nobody keeps could never be decided (a
    caller passing its own recorders keeps it there)."""
    if request.config.review and store is None and not recorders:
        raise RequestInvalid(
            [
                Problem(
                    "config.review",
                    "a run with review before apply needs a session store to "
                    "keep its plan for the reviewer: pass --store PATH (igg run keeps one by "
                    "default unless given --no-store, --out or --export), or set review to "
                    "false",
                )
            ],
            source=f"request {request.session_id!r}",
        )


def _recorders(
    *,
    store: StoreLike | None,
    agent_name: str | None,
    force: bool,
    resume: bool,
    out: Path | None,
    recorders: Sequence[Recorder],
    session_options: Mapping[str, Any] | None = None,
) -> tuple[list[Recorder], RunDirectory | None]:
    chain: list[Recorder] = []
    if store is not None:  # first: a refused session stops the run before anything is written
        chain.append(
            SessionRecorder(
                open_store(store), agent=agent_name, force=force, resume=resume, options=session_options
            )
        )
    chain.extend(recorders)
    directory = RunDirectory(out) if out is not None else None
    if directory is not None:
        chain.append(directory)
    return chain, directory


def _close_opened(store: StoreLike | None, chain: Sequence[Recorder]) -> None:
    """Close the store ``_recorders`` opened from a path or URL for ``chain``'s first recorder (a
    ``SessionStore`` given is the caller's to close): a PostgreSQL store left to the collector has its pool
    closed from one of the pool's own threads."""
    if store is not None and not isinstance(store, SessionStore) and chain:
        first = chain[0]
        if isinstance(first, SessionRecorder):
            first.store.close()


def export_result(
    result: RunResult,
    request: Request,
    specs: Sequence[ExportSpec],
    *,
    out_dir: Path | None = None,
    provenance: bool = False,
    directory: RunDirectory | None = None,
) -> RunResult:
    """Perform ``specs`` on the run's final graph into ``result.exports`` (a failure into
    ``result.export_error``); rewrites the output directory's summary when there is one."""
    if not specs:
        return result
    iterations = None
    if any(spec.format == "html" for spec in specs):
        from igg.view.data import iteration_summary  # only a page needs it (and its import of the grouping)

        iterations = [iteration_summary(r.to_dict()) for r in result.records]
    try:
        result.exports = [
            *result.exports,
            *perform_exports(
                result.state,
                specs,
                schema=request.config.schema_,
                metadata=document_metadata(request, result),
                out_dir=out_dir,
                provenance=provenance,
                iterations=iterations,
            ),
        ]
    except ExportError as exc:
        result.export_error = exc
        result.exports = [*result.exports, *(exc.summaries if isinstance(exc, ExportsFailed) else [])]
    if directory is not None:
        directory.write_result(result)
    return result


def run_request(
    request: Request,
    agent: AnyAgent,
    *,
    store: StoreLike | None = None,
    agent_name: str | None = None,
    force: bool = False,
    resume: bool = False,
    out: Path | None = None,
    exports: Sequence[ExportSpec] = (),
    provenance: bool = False,
    export_dir: Path | None = None,
    recorders: Sequence[Recorder] = (),
    on_event: EventHandler | None = None,
    session_options: Mapping[str, Any] | None = None,
    **loop_options: Unpack[RunOptions],
) -> RunResult:
    """Run ``request`` with ``agent`` to its stop reason, then export.

    ``store``: keep the session there (``agent_name`` is recorded for ``resume``; ``force`` replaces a session
    of the same id; ``resume`` takes over the stored one instead of creating it). ``out``: write the run's
    files there (``igg.persistence.rundir``). ``exports`` run after the run; their files default to
    ``export_dir`` (else ``out``, else the working directory). ``recorders`` are kept too; ``on_event`` sees
    every event; ``loop_options`` go to ``igg.engine.loop.Loop`` (``state``, ``records``, ... to continue).
    ``session_options`` are kept with a new stored session (e.g. map-code's ``git_commit``).
    """
    review_needs_a_store(request, store, recorders)
    chain, directory = _recorders(
        store=store,
        agent_name=agent_name,
        force=force,
        resume=resume,
        out=out,
        recorders=recorders,
        session_options=session_options,
    )
    try:
        result = run(request, agent, on_event=on_event, recorder=chain, **loop_options)
    finally:
        _close_opened(store, chain)
    return export_result(
        result, request, exports, out_dir=export_dir or out, provenance=provenance, directory=directory
    )


async def arun_request(
    request: Request,
    agent: AnyAgent,
    *,
    store: StoreLike | None = None,
    agent_name: str | None = None,
    force: bool = False,
    resume: bool = False,
    out: Path | None = None,
    exports: Sequence[ExportSpec] = (),
    provenance: bool = False,
    export_dir: Path | None = None,
    recorders: Sequence[Recorder] = (),
    on_event: EventHandler | None = None,
    **loop_options: Unpack[RunOptions],
) -> RunResult:
    """``run_request`` for event loops (sync and async agents; ``on_event`` may be async)."""
    import asyncio

    session = loop_options.get("session")
    review_needs_a_store(request, store, [*recorders, *(session.recorders if session is not None else [])])
    chain, directory = _recorders(
        store=store, agent_name=agent_name, force=force, resume=resume, out=out, recorders=recorders
    )
    try:
        result = await arun(request, agent, on_event=on_event, recorder=chain, **loop_options)
    finally:
        _close_opened(store, chain)
    return await asyncio.to_thread(
        export_result,
        result,
        request,
        exports,
        out_dir=export_dir or out,
        provenance=provenance,
        directory=directory,
    )


def _continued(
    store: SessionStore,
    session_id: str,
    agent: AnyAgent | str | None,
    make: Callable[[str, Request], AnyAgent] | None,
) -> tuple[AnyAgent, str, dict[str, Any]]:
    point = resume_point(store, session_id)
    if agent is None:
        if not point.agent:
            raise SessionRefused(
                f"session {session_id!r} does not name its agent; pass one (--agent on the command line)",
                session_id=session_id,
            )
        agent = point.agent
    name = agent if isinstance(agent, str) else (point.agent or type(agent).__name__)
    if isinstance(agent, str):
        from igg.agents.registry import make_agent

        agent = (make or make_agent)(agent, point.request)
    capabilities(agent).count_spent(point.spent)  # a budget spans the whole session, not one process
    options = {
        "state": point.state,
        "records": point.records,
        "start_iteration": point.next_iteration,
        "chunk_cursor": point.chunk_cursor,
        "notes": point.notes,
        "request": point.request,
        "plans": point.plans,
    }
    return agent, name, options


def continue_session(
    store: StoreLike,
    session_id: str,
    *,
    agent: AnyAgent | str | None = None,
    force: bool = False,
    out: Path | None = None,
    exports: Sequence[ExportSpec] = (),
    provenance: bool = False,
    on_event: EventHandler | None = None,
    recorders: Sequence[Recorder] = (),
    make_agent: Callable[[str, Request], AnyAgent] | None = None,
) -> RunResult:
    """Resume the interrupted session ``session_id`` of ``store`` at its first uncommitted iteration.

    ``agent``: an agent, an agent spec (``script:PATH``, ``llm``, ...) or None for the one the session was
    started with. ``force`` takes over a session whose writer looks alive. The rest as for ``run_request``.
    """
    with _opened(store) as db:
        the_agent, name, options = _continued(db, session_id, agent, make_agent)
        request = options.pop("request")
        return run_request(
            request,
            the_agent,
            store=db,
            agent_name=name,
            force=force,
            resume=True,
            out=out,
            exports=exports,
            provenance=provenance,
            on_event=on_event,
            recorders=recorders,
            **options,
        )


async def acontinue_session(
    store: StoreLike,
    session_id: str,
    *,
    agent: AnyAgent | str | None = None,
    force: bool = False,
    out: Path | None = None,
    exports: Sequence[ExportSpec] = (),
    provenance: bool = False,
    on_event: EventHandler | None = None,
    recorders: Sequence[Recorder] = (),
    make_agent: Callable[[str, Request], AnyAgent] | None = None,
) -> RunResult:
    """``continue_session`` for event loops."""
    import asyncio

    with _opened(store) as db:
        the_agent, name, options = await asyncio.to_thread(_continued, db, session_id, agent, make_agent)
        request = options.pop("request")
        return await arun_request(
            request,
            the_agent,
            store=db,
            agent_name=name,
            force=force,
            resume=True,
            out=out,
            exports=exports,
            provenance=provenance,
            on_event=on_event,
            recorders=recorders,
            **options,
        )


def map_code(
    paths: Sequence[Path],
    *,
    agent: str = "code",
    store: StoreLike | None = None,
    session_id: str | None = None,
    resume: bool = False,
    force: bool = False,
    out: Path | None = None,
    exports: Sequence[ExportSpec] = (),
    provenance: bool = False,
    environ: Mapping[str, str] | None = None,
    on_event: EventHandler | None = None,
    recorders: Sequence[Recorder] = (),
    on_prepared: Callable[[CodeMap], object] | None = None,
    clock: Callable[[], float] = time.perf_counter,
    **prepare_options: Any,
) -> tuple[RunResult, dict[str, Any]]:
    """Map source trees with ``agent`` (code, llm or hybrid) through the loop; returns the run result and the
    map-code summary (files, graph by type, times). ``resume`` continues the interrupted session
    ``session_id`` of ``store`` (the sources are read again; what the graph holds is not proposed twice).
    ``prepare_options`` go to ``igg.mapping.prepare.prepare`` (schema, goal, limits, jobs, languages, facts
    cache, parse executor, progress callbacks, ...); ``on_prepared(codemap)`` is called once the trees are
    walked, parsed and linked, before the run (``igg map-code`` lists the skipped and partial files then;
    with the code agent, the facts are let go of after it, and a fresh map lets go of the linked model once
    its graph is planned: ``CodeMap.let_go``);
    ``recorders`` watch the run as in ``run_request``. This is the one pipeline of a code map: the command
    line, the batch workers and the Python API all run it."""
    from contextlib import nullcontext

    from igg.act.apply import collector_paused
    from igg.mapping.prepare import code_agent, prepare, summary

    # the static pass allocates without cycles: no collector passes over the growing graph, and one pause from
    # the parse to the end of the run, not one per phase: each resume would pass over all the facts once more
    # (an LLM run, with its network I/O and long waits, keeps the collector during its run)
    with collector_paused() if agent == "code" else nullcontext():
        codemap = prepare(
            paths, agent=agent, session_id=session_id, clock=clock, environ=environ, **prepare_options
        )
        _keep_for_checks(codemap, prepare_options, clock)  # before on_prepared, which may close the cache
        if on_prepared is not None:
            on_prepared(codemap)
        if agent == "code":  # the code agent reads the linked model, not the facts
            codemap.let_go_of_facts()
        run_started = clock()  # the run's phase counts placing the model in the schema and planning the graph
        the_agent = code_agent(agent, codemap, environ, fresh=not resume)
        result, static = _map_run(
            codemap,
            the_agent,
            agent=agent,
            store=store,
            session_id=session_id,
            resume=resume,
            force=force,
            out=out,
            exports=exports,
            provenance=provenance,
            on_event=on_event,
            recorders=recorders,
        )
    if agent == "code" and store is not None and result.stop_reason == "finished":
        from igg.mapping.updated import index_map

        with _opened(store) as db:
            index_map(db, result, codemap, prepare_options)
    out_summary = summary(codemap, result, the_agent if static is None else None, clock() - run_started)
    if static is not None:
        out_summary["static_analysis"] = static
    return result, out_summary


def _keep_for_checks(codemap: CodeMap, options: dict[str, Any], clock: Callable[[], float]) -> None:
    """Keep the tree's graph of imports for the next ``igg check``/``igg cycles`` of it, when the map read a
    facts cache on disk (``--store``) and every language (``igg.mapping.kept.keep_mapped``: in the code
    schema, as a check places it, whatever the map's); its time is the summary's ``seconds.keep``."""
    from igg.codemap import language as languages
    from igg.codemap.walk import DEFAULT_MAX_BYTES
    from igg.mapping import kept

    cache = options.get("cache")
    if cache is None:
        return
    if languages.check_languages(options.get("chosen")) != languages.check_languages(None):
        return
    started = clock()
    if kept.keep_mapped(
        codemap.paths,
        cache,
        codemap.walk,
        codemap.facts,
        codemap.keys,
        package_prefix=options.get("package_prefix"),
        max_bytes=options.get("max_bytes", DEFAULT_MAX_BYTES),
    ):
        codemap.seconds["keep"] = clock() - started


def _map_run(
    codemap: CodeMap,
    the_agent: Any,
    *,
    agent: str,
    store: StoreLike | None,
    session_id: str | None,
    resume: bool,
    force: bool,
    out: Path | None,
    exports: Sequence[ExportSpec],
    provenance: bool,
    on_event: EventHandler | None,
    recorders: Sequence[Recorder],
) -> tuple[RunResult, dict[str, Any] | None]:
    """The run of a code map, and the static pass's own summary (None for a run through the loop): a fresh
    static map is one planned step (``igg.mapping.static``); an LLM or hybrid map, and a resumed one, run
    through the loop."""
    if agent == "code" and not resume:
        from igg.mapping.static import static_map

        chain, directory = _recorders(
            store=store,
            agent_name="code",
            force=force,
            resume=False,
            out=out,
            recorders=recorders,
            session_options=codemap.session_options(),
        )
        try:
            result, static = static_map(codemap, the_agent.fit, recorders=chain, on_event=on_event)
        finally:
            _close_opened(store, chain)
        kept = export_result(
            result, codemap.request, exports, out_dir=out, provenance=provenance, directory=directory
        )
        return kept, static
    if resume:
        if store is None or not session_id:
            raise RequestInvalid([Problem("resume", "needs the store and the session id")], source="map_code")
        return (
            continue_session(
                store,
                session_id,
                agent=the_agent,
                force=force,
                out=out,
                exports=exports,
                provenance=provenance,
                on_event=on_event,
                recorders=recorders,
            ),
            None,
        )
    looped = run_request(
        codemap.request,
        the_agent,
        store=store,
        agent_name=agent,
        force=force,
        out=out,
        exports=exports,
        provenance=provenance,
        on_event=on_event,
        recorders=recorders,
        session_options=codemap.session_options(),
    )
    return looped, None


def export_session(
    store: StoreLike,
    session_id: str,
    specs: Sequence[ExportSpec],
    *,
    iteration: int | None = None,
    out_dir: Path | None = None,
    provenance: bool = False,
) -> list[dict[str, Any]]:
    """Export a stored session's graph (as it stands, or after ``iteration``); one summary per export.
    Raises ``ExportsFailed`` (with ``.summaries``) when any export fails."""
    from igg.store.session_graph import session_graph

    state, schema, metadata = session_graph(
        store if not isinstance(store, SessionStore) else store.location, session_id, iteration=iteration
    )
    return perform_exports(
        state, specs, schema=schema, metadata=metadata, out_dir=out_dir, provenance=provenance
    )


def update_code_map(
    paths: Sequence[Path],
    store: str | Path,
    *,
    session_id: str | None = None,
    out: Path | None = None,
    exports: Sequence[ExportSpec] = (),
    provenance: bool = False,
    **update_options: Any,
) -> UpdateResult:
    """Re-map ``paths`` into their stored map-code session (``igg.mapping.update.update_map``, which takes
    ``update_options``), then write what a fresh map writes: ``out``'s ``graph.json`` and ``summary.json``,
    and the ``exports`` of the updated graph (their files default to ``out``, else the working directory). A
    failed export is in the result's ``export_error``; the update itself stays committed."""
    from igg.io.files import write_file
    from igg.mapping.update import update_map
    from igg.store.session_graph import session_graph

    result = update_map(paths, store, session_id=session_id, **update_options)
    if out is not None:
        state, schema, metadata = session_graph(store, result.session_id)
        document = state.to_document(schema, metadata=metadata, provenance=True)
        try:
            out.mkdir(parents=True, exist_ok=True)
            write_file(
                out / "graph.json",
                document.model_dump_json(by_alias=True, exclude_none=True, indent=1).encode("utf-8"),
            )
            write_file(
                out / "summary.json", (json.dumps(result.to_dict(), ensure_ascii=False) + "\n").encode()
            )
        except OSError as exc:
            raise IGGError(f"cannot write the output directory {out}: {exc.strerror or exc}") from None
    if exports:
        try:
            result.exports = export_session(
                store, result.session_id, exports, out_dir=out, provenance=provenance
            )
        except ExportError as exc:
            result.export_error = exc
            result.exports = list(exc.summaries) if isinstance(exc, ExportsFailed) else []
    return result


__all__ = [
    "StoreLike",
    "check",
    "cycles",
    "dependency_changes",
    "acontinue_session",
    "arun_request",
    "continue_session",
    "export_result",
    "export_session",
    "map_code",
    "open_store",
    "run_request",
    "update_code_map",
]
