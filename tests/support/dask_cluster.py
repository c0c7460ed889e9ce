"""A real Dask cluster for tests: one ``dask scheduler`` and two ``dask worker`` processes on loopback.

``dask_cluster`` (a session fixture; its tests share one xdist worker, as ``SHARED_SERVERS`` in
``tests/conftest.py`` says) starts the scheduler on a free loopback port and two workers with one thread each,
each under a nanny (so a worker killed with ``kill -9`` is replaced, as in production), and stops them
afterwards.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

WORKERS = 2
READY_SECONDS = 90.0


@dataclass
class DaskCluster:
    """A running scheduler and its workers."""

    address: str
    scheduler: subprocess.Popen[bytes]
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)
    log_dir: Path | None = None

    def client(self) -> Any:
        """A new ``distributed.Client`` connected to the scheduler (close it after use)."""
        from distributed import Client

        return Client(self.address, timeout=30)

    def wait_ready(self, n: int = WORKERS) -> None:
        """Wait until ``n`` workers are connected (e.g. after a killed worker was replaced by its nanny)."""
        with self.client() as c:
            c.wait_for_workers(n, timeout=READY_SECONDS)

    def logs(self) -> str:
        """The processes' log output so far (for failure messages)."""
        if self.log_dir is None:
            return ""
        return "\n".join(
            f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}" for p in sorted(self.log_dir.iterdir())
        )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _dask() -> list[str]:
    exe = Path(sys.executable).parent / "dask"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "dask"]


def start_cluster(log_dir: Path, workers: int = WORKERS) -> DaskCluster:
    """Start a scheduler and ``workers`` workers (one thread each) on loopback; wait until all are
    connected."""
    port = free_port()
    address = f"tcp://127.0.0.1:{port}"
    log_dir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env.pop("DASK_SCHEDULER_ADDRESS", None)
    scheduler = subprocess.Popen(
        [*_dask(), "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
        stdout=subprocess.DEVNULL,
        stderr=open(log_dir / "scheduler.log", "wb"),
        env=env,
    )
    cluster = DaskCluster(address=address, scheduler=scheduler, log_dir=log_dir)
    for i in range(workers):
        cluster.workers.append(
            subprocess.Popen(
                [
                    *_dask(),
                    "worker",
                    address,
                    "--host",
                    "127.0.0.1",
                    "--nthreads",
                    "1",
                    "--no-dashboard",
                    "--death-timeout",
                    "60",
                    "--nanny",
                    "--local-directory",
                    str(log_dir / f"worker-{i}"),
                    "--name",
                    f"w{i}",
                ],
                stdout=subprocess.DEVNULL,
                stderr=open(log_dir / f"worker-{i}.log", "wb"),
                env=env,
            )
        )
    try:
        deadline = time.monotonic() + READY_SECONDS
        while time.monotonic() < deadline:
            if scheduler.poll() is not None:
                raise RuntimeError(f"dask scheduler exited with {scheduler.returncode}\n{cluster.logs()}")
            try:
                cluster.wait_ready(workers)
                return cluster
            except OSError:
                time.sleep(0.2)
        raise RuntimeError(f"the Dask cluster was not ready in {READY_SECONDS} s\n{cluster.logs()}")
    except BaseException:
        stop_cluster(cluster)
        raise


def stop_cluster(cluster: DaskCluster) -> None:
    """Stop the workers (their nannies stop the worker processes), then the scheduler."""
    for p in [*cluster.workers, cluster.scheduler]:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in [*cluster.workers, cluster.scheduler]:
        try:
            p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


@pytest.fixture(scope="session")
def dask_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaskCluster]:
    """A real scheduler and two workers on loopback ports for the whole test session."""
    cluster = start_cluster(tmp_path_factory.mktemp("dask"))
    try:
        yield cluster
    finally:
        stop_cluster(cluster)
