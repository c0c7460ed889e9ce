"""The batch jobs as two functions: ``run_requests`` (many requests) and ``map_trees`` (many source trees).

Each reads and checks its inputs on the client (``igg.batch.jobs``), opens the cluster
(``igg.batch.cluster``: ``scheduler`` or ``$DASK_SCHEDULER_ADDRESS``, else a local one), runs the sessions
(``igg.batch.runner``) and commits them to the store from the client (``igg.batch.persist``). The
``igg batch`` command is a thin adapter over these.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from igg.batch.cluster import open_cluster, require_distributed, scheduler_address
from igg.batch.jobs import request_jobs, tree_jobs
from igg.batch.persist import SessionWriter, check_export_targets
from igg.batch.runner import BatchReport, Job, SessionHandler, run_batch
from igg.export import ExportSpec, parse_export_spec
from igg.store import SessionStore, resolve_store_path
from igg.store.location import StoreArg

STORE_SYNC = "NORMAL"
"""How the batch's writer syncs the store: SQLite's WAL with ``synchronous=NORMAL`` commits without an fsync
per iteration (6x faster on this machine's disk); a power cut may lose the last commits, never corrupt the
store, and a lost session simply runs again (or continues) in the next run of the batch. The store is synced
at SQLite's WAL checkpoints and when the batch closes it. ``durable=True`` (``--durable``) uses ``FULL``, as
``igg run`` does."""


def run_requests(
    inputs: Sequence[str | Path],
    *,
    agent: str = "auto",
    scheduler: str | None = None,
    workers: int | None = None,
    store: StoreArg | None = None,
    out: str | Path | None = None,
    exports: Sequence[str | ExportSpec] = (),
    provenance: bool = False,
    force: bool = False,
    durable: bool = False,
    on_session: SessionHandler | None = None,
    client: Any = None,
) -> BatchReport:
    """Run every request in ``inputs`` (request files, JSON Lines files, folders) as its own session.

    ``agent`` is an ``--agent`` spec (``script:PATH`` may name a folder of per-session transcripts); the
    store is ``store`` (an SQLite file or a ``postgresql://`` URL), else ``$IGG_STORE``, else
    ``.igg/sessions.sqlite``. ``client`` runs the batch on an
    already connected ``distributed.Client`` instead of opening one. ``durable`` syncs every iteration's
    commit to disk as ``igg run`` does (see ``STORE_SYNC``).
    """
    jobs: list[Job] = list(request_jobs(inputs, agent=agent))
    return _run(
        jobs,
        scheduler=scheduler,
        workers=workers,
        store=store,
        out=out,
        exports=exports,
        provenance=provenance,
        force=force,
        durable=durable,
        on_session=on_session,
        client=client,
    )


def map_trees(
    paths: Sequence[str | Path],
    *,
    agent: str = "code",
    options: dict[str, Any] | None = None,
    scheduler: str | None = None,
    workers: int | None = None,
    store: StoreArg | None = None,
    out: str | Path | None = None,
    exports: Sequence[str | ExportSpec] = (),
    provenance: bool = False,
    force: bool = False,
    durable: bool = False,
    on_session: SessionHandler | None = None,
    client: Any = None,
) -> BatchReport:
    """Map every tree in ``paths`` as its own session (``igg map-code`` each, on the workers); ``options``
    go to ``igg.mapping.prepare.prepare`` (``schema``, ``max_nodes``, ``max_edges``, ``max_bytes``, ...)."""
    jobs: list[Job] = list(tree_jobs(paths, agent=agent, options=options))
    return _run(
        jobs,
        scheduler=scheduler,
        workers=workers,
        store=store,
        out=out,
        exports=exports,
        provenance=provenance,
        force=force,
        durable=durable,
        on_session=on_session,
        client=client,
    )


def _run(
    jobs: list[Job],
    *,
    scheduler: str | None,
    workers: int | None,
    store: StoreArg | None,
    out: str | Path | None,
    exports: Sequence[str | ExportSpec],
    provenance: bool,
    force: bool,
    durable: bool,
    on_session: SessionHandler | None,
    client: Any,
) -> BatchReport:
    specs = [s if isinstance(s, ExportSpec) else parse_export_spec(s) for s in exports]
    out_dir = Path(out) if out is not None else None
    check_export_targets(specs, out_dir=out_dir, sessions=len(jobs))
    if client is None:  # before the store is created: a typo in the address costs nothing
        require_distributed()
        scheduler_address(scheduler)
    sync = "FULL" if durable else STORE_SYNC
    writer = SessionWriter(
        store=SessionStore(resolve_store_path(store), synchronous=sync),
        out_dir=out_dir,
        specs=specs,
        provenance=provenance,
        force=force,
    )
    try:
        if client is not None:
            return run_batch(jobs, client=client, writer=writer, on_session=on_session)
        with open_cluster(scheduler, workers=workers) as (connected, info):
            return run_batch(jobs, client=connected, writer=writer, cluster=info, on_session=on_session)
    finally:
        writer.store.close()
