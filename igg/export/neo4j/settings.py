"""Where and how to connect to a Bolt server: ``Neo4jSettings`` (explicit values, then ``NEO4J_*``
variables) and ``check_uri``, which refuses an unusable URI before any connection.

No secret leaves here: ``Neo4jSettings.display_uri`` drops the user information, and a refused URI is named
with every secret it carries masked (``igg.io.urls``). Nothing here loads the ``neo4j`` driver
(``igg.export.neo4j.bolt`` connects).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from igg.errors import ExportError
from igg.io.urls import mask_url

URI_SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")
DEFAULT_URI = "bolt://localhost:7687"


@dataclass(kw_only=True)
class Neo4jSettings:
    """Where and how to connect. ``from_env`` fills what is not given from ``NEO4J_*`` variables."""

    uri: str = DEFAULT_URI
    """Bolt URI: bolt://HOST:PORT or neo4j://HOST:PORT (+s / +ssc for TLS)."""
    username: str | None = None
    """User name; None (and no password) connects without authentication."""
    password: str | None = field(default=None, repr=False)
    """Password; never logged or printed."""
    database: str | None = None
    """Database name; None uses the server's default."""
    connection_timeout: float = 5.0
    """Seconds to open a TCP connection."""
    acquisition_timeout: float = 10.0
    """Seconds to get a connection from the pool, Bolt handshake included (the driver's own default is 60 s;
    a FalkorDB handshake that hangs after another client disconnected is retried after this long)."""
    max_retry_time: float = 30.0
    """Seconds a batch is retried after transient errors (by the driver) or constraint conflicts with a
    concurrent exporter (by IGG)."""
    connect_attempts: int = 3
    """Attempts to reach the server before giving up (a hung handshake is retried)."""
    connect_backoff: float = 0.2
    """Seconds before the second attempt to reach the server; doubles with every further attempt."""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **given: Any) -> Neo4jSettings:
        """Settings from explicit values (None = not given), then NEO4J_URI/USERNAME/PASSWORD/DATABASE."""
        env = os.environ if env is None else env
        fallback = {
            "uri": env.get("NEO4J_URI") or DEFAULT_URI,
            "username": env.get("NEO4J_USERNAME"),
            "password": env.get("NEO4J_PASSWORD"),
            "database": env.get("NEO4J_DATABASE") or None,
        }
        values = {k: v for k, v in given.items() if v is not None}
        return cls(**{**fallback, **values})

    def display_uri(self) -> str:
        """The URI without any user information (safe to print and log)."""
        parts = urlsplit(self.uri)
        host = parts.hostname or ""
        port = f":{parts.port}" if _port(parts) else ""
        return f"{parts.scheme}://{host}{port}"


def _port(parts: Any) -> int | None:
    try:
        port: int | None = parts.port
        return port
    except ValueError:
        return None


def check_uri(uri: str) -> None:
    """Raise ``ExportError`` unless ``uri`` is a usable Bolt/Neo4j URI."""
    hint = "use bolt://HOST:PORT or neo4j://HOST:PORT (optionally +s or +ssc for TLS)"
    try:
        parts = urlsplit(uri)
        parts.port  # noqa: B018 - a malformed host or port raises here, not later in the driver
    except ValueError as exc:
        raise ExportError(f"bad Neo4j URI {_safe(uri)!r}: {exc}; {hint}") from None
    if parts.scheme not in URI_SCHEMES:
        raise ExportError(
            f"bad Neo4j URI {_safe(uri)!r}: unknown scheme {parts.scheme or '(none)'!r}; {hint}"
        )
    if not parts.hostname:
        raise ExportError(f"bad Neo4j URI {_safe(uri)!r}: no host; {hint}")
    if parts.netloc.rsplit(":", 1)[-1] != parts.netloc and _port(parts) is None:
        raise ExportError(f"bad Neo4j URI {_safe(uri)!r}: the port is not a number from 0 to 65535; {hint}")


def _safe(uri: str) -> str:
    """``uri`` with every secret it carries masked (``igg.io.urls``): user information and query alike."""
    return mask_url(uri)
