"""Where batch work runs: a Dask cluster's scheduler, or a ``LocalCluster`` started for the batch.

``open_cluster(address)`` connects to the scheduler at ``address`` (``tcp://HOST:PORT``), else at
``$DASK_SCHEDULER_ADDRESS``, else starts a ``LocalCluster`` of worker processes on loopback (one thread
each: IGG's loop is pure Python, so threads would share one core) and stops it afterwards. Dask is an
optional dependency (``pip install 'igg[dask]'``); without it ``require_distributed`` says what to install.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from concurrent.futures import Executor
from contextlib import contextmanager
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from igg.errors import IGGError, Problem, RequestInvalid
from igg.record.logs import get_logger

LOCAL = "local"
"""``--scheduler local``: start a local cluster even when ``$DASK_SCHEDULER_ADDRESS`` is set."""
SCHEDULER_ENV = "DASK_SCHEDULER_ADDRESS"
"""Environment variable naming the scheduler when ``--scheduler`` is not given (Dask's own name for it)."""
INSTALL_HINT = "pip install 'distributed>=2024.8' (the dask extra)"
CONNECT_TIMEOUT = 20.0
"""Seconds to wait for a remote scheduler to answer."""

LOCAL_WORKER_CONFIG: dict[str, Any] = {"distributed.worker.profile.enabled": False}
"""Dask settings of the workers of a local cluster: no statistical profiler (it samples every thread's stack
every 10 ms, a measurable tax on IGG's pure-Python loop). Remote workers: set
``DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED=False`` where they start."""

_ADDRESS = re.compile(r"^(?:(tcp|tls|inproc|ws|wss)://)?[\w.\-\[\]:]+:\d{1,5}$")
log = get_logger("igg.batch")


def require_distributed() -> ModuleType:
    """The ``distributed`` package, or an ``IGGError`` saying how to install it."""
    try:
        import distributed
    except ModuleNotFoundError as exc:
        if exc.name not in ("distributed", "dask"):
            raise
        raise IGGError(
            f"running on a Dask cluster needs the optional dependency 'distributed': {INSTALL_HINT}"
        ) from None
    return distributed


@dataclass(frozen=True, slots=True)
class ClusterInfo:
    """The cluster a batch ran on."""

    scheduler: str
    """The scheduler's address."""
    workers: int
    threads: int
    """Worker threads in total: how many sessions run at once."""
    local: bool
    """True for a ``LocalCluster`` started (and stopped) by IGG."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "scheduler": self.scheduler,
            "workers": self.workers,
            "threads": self.threads,
            "local": self.local,
        }


def scheduler_address(address: str | None, environ: Mapping[str, str] | None = None) -> str | None:
    """``address``, else ``$DASK_SCHEDULER_ADDRESS``, else None (a local cluster); checked for its form."""
    env = os.environ if environ is None else environ
    if address == LOCAL:
        return None
    chosen = address or env.get(SCHEDULER_ENV) or None
    if chosen is None:
        return None
    chosen = chosen.strip()
    if not _ADDRESS.match(chosen):
        where = "--scheduler" if address else f"${SCHEDULER_ENV}"
        raise RequestInvalid(
            [
                Problem(
                    where,
                    f"{chosen!r} is not a scheduler address; give tcp://HOST:PORT, "
                    "e.g. tcp://10.0.0.5:8786 (what `dask scheduler` prints), "
                    f"or {LOCAL} for a cluster on this machine",
                )
            ],
            source="the command line",
        )
    return chosen if "://" in chosen else f"tcp://{chosen}"


@contextmanager
def open_cluster(
    address: str | None = None, *, workers: int | None = None, environ: Mapping[str, str] | None = None
) -> Iterator[tuple[Any, ClusterInfo]]:
    """A connected ``distributed.Client`` and what it is connected to (see the module doc).

    ``workers`` sizes a local cluster (default: the CPUs); with a scheduler address it is the number of
    workers to wait for (default: at least one).
    """
    distributed = require_distributed()
    chosen = scheduler_address(address, environ)
    cluster: Any = None
    if chosen is None:
        import dask

        n = workers or os.cpu_count() or 1
        with dask.config.set(LOCAL_WORKER_CONFIG):  # the nannies hand this configuration to their workers
            # no dashboard; the scheduler's small HTTP server (health, metrics) on a free loopback port, never
            # the default :8787 on every interface (taken by another cluster, it would warn into the output)
            cluster = distributed.LocalCluster(
                n_workers=n,
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address=None,
                scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
            )
        client = distributed.Client(cluster)
    else:
        try:
            client = distributed.Client(chosen, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError) as exc:
            raise IGGError(
                f"cannot reach the Dask scheduler at {chosen}: {exc}; start one with `dask scheduler` "
                "and workers with `dask worker ADDRESS`, or leave out --scheduler (and "
                f"${SCHEDULER_ENV}) to run on this machine"
            ) from None
    try:
        if chosen is not None:
            client.wait_for_workers(workers or 1, timeout=CONNECT_TIMEOUT * 3)
        info = describe(client, local=cluster is not None)
        log.info("cluster_connected", **info.to_dict())
        yield client, info
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def describe(client: Any, *, local: bool = False) -> ClusterInfo:
    """The scheduler address and worker counts a client sees now."""
    workers = client.scheduler_info()["workers"]
    return ClusterInfo(
        scheduler=str(client.scheduler.address),
        workers=len(workers),
        threads=sum(int(w.get("nthreads", 1)) for w in workers.values()),
        local=local,
    )


@contextmanager
def parse_executor(address: str | None, *, workers: int | None = None) -> Iterator[tuple[Executor, int]]:
    """A ``concurrent.futures.Executor`` whose tasks run on the cluster at ``address`` (as ``open_cluster``),
    and the number of worker threads: what ``igg map-code --scheduler`` parses the files with."""
    with open_cluster(address, workers=workers) as (client, info):
        yield client.get_executor(), info.threads
