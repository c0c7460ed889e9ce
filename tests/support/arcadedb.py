"""A real Bolt server for tests and benchmarks: ArcadeDB (PyPI ``arcadedb-embedded``), or Neo4j at NEO4J_URI.

ArcadeDB's Bolt plugin answers the official ``neo4j`` driver as "Neo4j/5.26.0 compatible" and accepts Neo4j 5
schema statements, so the exporter meets it on its default (Neo4j) path. The server runs in a child process
(``python -m tests.support.arcadedb ...``, this module) so its JVM stays out of the test process: the child
starts ``arcadedb_embedded.ArcadeDBServer`` with the Bolt plugin on a free loopback port, creates the
database itself (the ``defaultDatabases`` setting was seen ignored), writes a ready file and serves until its
standard input closes, then stops the server. ArcadeDB writes ``./log`` under its working directory, so the
child runs in the fixture's temporary directory.

``bolt_server`` (a session fixture; its tests share one xdist worker, as ``SHARED_SERVERS`` in
``tests/conftest.py`` says, so one server serves the run) yields a ``BoltServer``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.bolt import BoltServer, free_port

ROOT = Path(__file__).resolve().parents[2]
DATABASE = "igg"
USER = "root"
PASSWORD = "igg-test-password"  # a throw-away server on loopback; ArcadeDB wants a root password
BOLT_PLUGIN = "Bolt:com.arcadedb.bolt.BoltProtocolPlugin"


def start_arcadedb(tmp: Path, *, heap: str = "1g", timeout: float = 180.0) -> BoltServer:
    """Start ArcadeDB with Bolt on a free loopback port in a child process; returns when Bolt answers."""
    last = ""
    for _attempt in range(3):  # a port taken between choosing and binding: choose again
        bolt_port = free_port(set())
        http_port = free_port({bolt_port})
        root = tmp / f"arcadedb-{bolt_port}"
        root.mkdir(parents=True)
        ready = root / "ready"
        log_path = root / "server.log"
        cmd = [
            sys.executable,
            "-m",
            "tests.support.arcadedb",
            "--root",
            str(root),
            "--bolt-port",
            str(bolt_port),
            "--http-port",
            str(http_port),
            "--ready",
            str(ready),
            "--heap",
            heap,
        ]
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        }
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                cmd, stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT, cwd=root, env=env
            )
        server = BoltServer(
            uri=f"bolt://127.0.0.1:{bolt_port}",
            process=process,
            log_path=log_path,
            env={"NEO4J_USERNAME": USER, "NEO4J_PASSWORD": PASSWORD},
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and process.poll() is None and not ready.exists():
            time.sleep(0.1)
        if ready.exists():
            return server
        stop(server)
        last = log_path.read_text(errors="replace")[-3000:]
    raise RuntimeError(f"ArcadeDB did not start its Bolt listener: {last}")


def stop(server: BoltServer) -> None:
    """Stop a server started by ``start_arcadedb``: closing its stdin stops ArcadeDB cleanly."""
    process = server.process
    if process is None or process.poll() is not None:
        return
    try:
        if process.stdin is not None:
            process.stdin.close()
        process.wait(30)
    except subprocess.TimeoutExpired:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


@pytest.fixture(scope="session")
def bolt_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BoltServer]:
    """A Bolt server for the session: Neo4j at NEO4J_URI when set, else an ArcadeDB started here."""
    if os.environ.get("NEO4J_URI"):
        env = {k: v for k, v in os.environ.items() if k.startswith("NEO4J_")}
        yield BoltServer(uri=env["NEO4J_URI"], external=True, env=env)
        return
    server = start_arcadedb(tmp_path_factory.mktemp("arcadedb"))
    try:
        yield server
    finally:
        stop(server)


def serve(argv: list[str] | None = None) -> int:
    """The child process: run ArcadeDB with Bolt on loopback until stdin closes."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", required=True)
    parser.add_argument("--bolt-port", type=int, required=True)
    parser.add_argument("--http-port", type=int, required=True)
    parser.add_argument("--ready", required=True)
    parser.add_argument("--heap", default="1g")
    args = parser.parse_args(argv)
    from arcadedb_embedded.jvm import start_jvm
    from arcadedb_embedded.server import ArcadeDBServer

    start_jvm(heap_size=args.heap)
    server = ArcadeDBServer(
        os.path.abspath(args.root),
        root_password=PASSWORD,
        config={
            "host": "127.0.0.1",
            "http_port": args.http_port,
            "server_plugins": BOLT_PLUGIN,
            "bolt_port": args.bolt_port,
            "bolt_host": "127.0.0.1",
            "bolt_defaultDatabase": DATABASE,
        },
    )
    server.start()
    try:
        server.create_database(DATABASE)
        Path(args.ready).write_text(f"bolt://127.0.0.1:{args.bolt_port}\n")
        sys.stdin.buffer.read()  # until the parent closes our stdin (or dies)
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(serve())
