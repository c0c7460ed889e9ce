"""What every Bolt server of the tests shares: ``BoltServer`` (its URI, credentials, process) and free ports.

Servers: ArcadeDB (``tests.support.arcadedb``, the suite's Bolt server), FalkorDB (``tests.support.falkordb``,
its own tests only), or a Neo4j given by NEO4J_URI (``external``: neither started nor stopped by the tests).
"""

from __future__ import annotations

import random
import socket
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class BoltServer:
    """A running Bolt server the tests may write to."""

    uri: str
    external: bool = False
    """True for a Neo4j given by NEO4J_URI (not started, not stopped by the tests)."""
    process: subprocess.Popen[bytes] | None = None
    log_path: Path | None = None
    env: dict[str, str] = field(default_factory=dict)
    """NEO4J_USERNAME / NEO4J_PASSWORD (/ NEO4J_DATABASE) for this server."""
    kind: str = "neo4j"
    """"arcadedb", "falkordb" or "neo4j" (external)."""

    def settings(self, **overrides: Any) -> Any:
        """``Neo4jSettings`` for this server with short timeouts."""
        from igg.export.neo4j.bolt import Neo4jSettings

        base = Neo4jSettings.from_env(self.env, uri=self.uri)
        values = {
            **base.__dict__,
            "connection_timeout": 3.0,
            "acquisition_timeout": 6.0,
            "max_retry_time": 15.0,
            "connect_attempts": 3,
            **overrides,
        }
        return Neo4jSettings(**values)

    def after_close(self) -> None:
        """Spend FalkorDB's hung post-disconnect handshake (a no-op for every other server)."""
        if self.kind == "falkordb":
            from tests.support.falkordb import spend_handshake

            spend_handshake(self.uri)

    def alive(self) -> bool:
        """Whether the server process still runs (always True for an external server)."""
        return self.external or (self.process is not None and self.process.poll() is None)


def free_port(avoid: set[int]) -> int:
    """A free loopback TCP port in 20000-32000 (FalkorDB ignores a Bolt port above 32767)."""
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
