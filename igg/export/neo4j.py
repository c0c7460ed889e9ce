"""Export a graph into Neo4j (or any Bolt server speaking Cypher) through the official ``neo4j`` driver.

Nodes are merged per node type on (label, identity keys, ``igg_scope``) and edges per (source type, edge
type, target type) between their merged endpoints, in batches: ``UNWIND $rows ... MERGE``, one managed
transaction per batch (the driver retries transient errors). Every label, type and key is validated and
escaped by ``igg.export.cypher`` before the first connection; values are always parameters. Re-exporting
the same graph to the same scope changes nothing; graphs exported under different scopes never touch each
other's nodes.

The server is probed once: Neo4j answers ``dbms.components()`` and gets named uniqueness constraints (or
indexes where a constraint cannot be created); a server that fails the probe is FalkorDB's Bolt listener,
whose quirks ``igg.export.falkordb`` handles (small messages, escaped strings, a plain index on the most
selective identity key).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import structlog

from igg.errors import ExportError
from igg.export import cypher, falkordb
from igg.export.plan import Plan, plan_export
from igg.graph.state import GraphState

log = structlog.get_logger("igg.export.neo4j")

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
    max_retry_time: float = 15.0
    """Seconds the driver keeps retrying a batch that failed with a transient error."""
    connect_attempts: int = 3
    """Attempts to reach the server before giving up (a hung handshake is retried)."""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **given: Any) -> Neo4jSettings:
        """Settings from explicit values (None = not given), then NEO4J_URI/USERNAME/PASSWORD/DATABASE."""
        env = os.environ if env is None else env
        fallback = {"uri": env.get("NEO4J_URI") or DEFAULT_URI, "username": env.get("NEO4J_USERNAME"),
                    "password": env.get("NEO4J_PASSWORD"), "database": env.get("NEO4J_DATABASE") or None}
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
        return parts.port
    except ValueError:
        return None


def check_uri(uri: str) -> None:
    """Raise ``ExportError`` unless ``uri`` is a usable Bolt/Neo4j URI."""
    parts = urlsplit(uri)
    hint = "use bolt://HOST:PORT or neo4j://HOST:PORT (optionally +s or +ssc for TLS)"
    if parts.scheme not in URI_SCHEMES:
        raise ExportError(f"bad Neo4j URI {_safe(uri)!r}: unknown scheme {parts.scheme or '(none)'!r}; {hint}")
    if not parts.hostname:
        raise ExportError(f"bad Neo4j URI {_safe(uri)!r}: no host; {hint}")
    if parts.netloc.rsplit(":", 1)[-1] != parts.netloc and _port(parts) is None:
        raise ExportError(f"bad Neo4j URI {_safe(uri)!r}: the port is not a number from 0 to 65535; {hint}")


def _safe(uri: str) -> str:
    parts = urlsplit(uri)
    if "@" in parts.netloc:
        return uri.replace(parts.netloc, parts.netloc.rsplit("@", 1)[1])
    return uri


def export_neo4j(state: GraphState, *, uri: str | None = None, auth: tuple[str, str] | None = None,
                 database: str | None = None, batch_size: int = 5000, scope: str = "igg",
                 env: Mapping[str, str] | None = None, settings: Neo4jSettings | None = None,
                 create_indexes: bool = True) -> dict[str, Any]:
    """Merge the graph into a Bolt server; returns a summary (server, counts, batches, seconds, warnings).

    Missing ``uri``/``auth``/``database`` come from ``NEO4J_URI``, ``NEO4J_USERNAME``/``NEO4J_PASSWORD``
    and ``NEO4J_DATABASE`` (``env`` defaults to ``os.environ``). ``scope`` is stored as ``igg_scope`` on
    everything written and is part of every node's identity. Raises ``ExportError`` with a one-line message
    for a bad URI, refused credentials, an unreachable server, or an unsafe name.
    """
    if batch_size < 1:
        raise ExportError(f"batch_size must be at least 1, got {batch_size}")
    if not isinstance(scope, str) or not scope:
        raise ExportError("the export scope must be a non-empty string")
    if settings is None:
        user, password = auth if auth is not None else (None, None)
        settings = Neo4jSettings.from_env(env, uri=uri, username=user, password=password, database=database)
    check_uri(settings.uri)
    started = time.perf_counter()
    plans = plan_export(state)  # validates every name before any connection
    with BoltSession(settings) as bolt:
        warnings: list[str] = []
        if create_indexes:
            warnings += bolt.ensure_indexes(state)
        batches = statements = 0
        for plan in plans:
            rows, notes = bolt.prepare_rows(plan)
            warnings += notes
            for start in range(0, len(rows), batch_size):
                statements += bolt.write_batch(plan, rows[start:start + batch_size], scope)
                batches += 1
        summary = {"format": "neo4j", "target": settings.display_uri(), "database": settings.database,
                   "server": bolt.dialect, "agent": bolt.agent, "scope": scope, "nodes": state.node_count,
                   "edges": state.edge_count, "batches": batches, "statements": statements,
                   "seconds": round(time.perf_counter() - started, 3), "warnings": warnings}
    log.info("neo4j_exported", **{k: v for k, v in summary.items() if k != "warnings"}, warnings=len(warnings))
    return summary


class BoltSession:
    """One driver and one session, with the server's dialect detected once; a context manager."""

    def __init__(self, settings: Neo4jSettings) -> None:
        self.settings = settings
        self.dialect = "neo4j"
        self.agent = ""
        self._driver: Any = None
        self._session: Any = None

    def __enter__(self) -> BoltSession:
        import neo4j
        from neo4j import exceptions as nx

        s = self.settings
        auth = (s.username or "", s.password or "") if (s.username or s.password) else None
        try:
            self._driver = neo4j.GraphDatabase.driver(
                s.uri, auth=auth, connection_timeout=s.connection_timeout,
                connection_acquisition_timeout=s.acquisition_timeout, max_transaction_retry_time=s.max_retry_time)
        except (nx.ConfigurationError, ValueError) as exc:
            raise ExportError(f"bad Neo4j URI {s.display_uri()!r}: {_first_line(exc)}") from None
        try:
            self._connect(nx)
            self._session = self._driver.session(database=s.database) if s.database else self._driver.session()
            self.dialect = self._probe(nx)
        except BaseException:
            self.close()
            raise
        log.info("neo4j_connected", uri=s.display_uri(), server=self.dialect, agent=self.agent)
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the session and the driver."""
        if self._session is not None:
            self._session.close()
            self._session = None
        if self._driver is not None:
            self._driver.close()
            self._driver = None

    def _connect(self, nx: Any) -> None:
        s = self.settings
        where = s.display_uri()
        for attempt in range(1, max(1, s.connect_attempts) + 1):
            try:
                info = self._driver.get_server_info()
                self.agent = info.agent or ""
                return
            except nx.AuthError:
                raise ExportError(f"the Bolt server at {where} refused the credentials of user "
                                  f"{s.username or '(none)'!r}; check NEO4J_USERNAME and NEO4J_PASSWORD") from None
            except (nx.ServiceUnavailable, nx.SessionExpired, nx.ConnectionAcquisitionTimeoutError, OSError) as exc:
                log.warning("neo4j_connect_retry", uri=where, attempt=attempt, error=_first_line(exc))
                last = exc
            except nx.Neo4jError as exc:
                raise ExportError(f"the Bolt server at {where} rejected the connection "
                                  f"(wrong credentials?): {_first_line(exc)}") from None
        raise ExportError(f"cannot reach a Bolt server at {where} after {s.connect_attempts} attempt(s): "
                          f"{_first_line(last)}; is it running?")

    def _probe(self, nx: Any) -> str:
        try:
            self._session.run(cypher.SERVER_PROBE).consume()
            return "neo4j"
        except nx.Neo4jError:
            return "falkordb"

    def run(self, query: str, **params: Any) -> list[dict[str, Any]]:
        """Run one auto-commit query and return its records as dicts."""
        return [r.data() for r in self._session.run(query, params)]

    def ensure_indexes(self, state: GraphState) -> list[str]:
        """Create the identity constraint (Neo4j) or index of every node type that has nodes."""
        from neo4j.exceptions import Neo4jError

        warnings = []
        labels = [t for t in state.schema.node_type_list if next(iter(state.nodes_of_type(t)), None)]
        if self.dialect == "neo4j":
            for label in labels:
                keys = state.schema.identity_keys[label]
                try:
                    self._session.run(cypher.identity_constraint(label, keys)).consume()
                except Neo4jError as exc:
                    self._session.run(cypher.identity_index(label, keys, "neo4j")).consume()
                    warnings.append(f"no uniqueness constraint on {label} ({_first_line(exc)}); created an index")
            return warnings
        have = {(r["label"], p) for r in self.run(cypher.LIST_INDEXES_FALKORDB) for p in r["properties"]}
        for label in labels:
            if falkordb.identity_has_soh(state, label):
                warnings.append(f"{label}: an identity value holds U+0001, which FalkorDB's index cannot find; "
                                "those nodes are matched by scanning the label")
            key = falkordb.most_selective_key(state, label)
            if (label, key) in have:
                continue
            try:
                self._session.run(cypher.identity_index(label, [key], "falkordb")).consume()
            except Neo4jError as exc:
                warnings.append(f"could not index {label}.{key}: {_first_line(exc)}")
        return warnings

    def prepare_rows(self, plan: Plan) -> tuple[list[Any], list[str]]:
        """Adapt values the server cannot store as given; returns the rows and a warning per change."""
        warnings: list[str] = []
        rows = plan.rows
        if self.dialect == "neo4j":
            out = []
            for row in rows:
                props = plan.props(row)
                if any(v.__class__ is list and len({type(x) for x in v}) > 1 for v in props.values()):
                    props = {k: (json.dumps(v) if v.__class__ is list and len({type(x) for x in v}) > 1 else v)
                             for k, v in props.items()}
                    warnings.append("mixed-type list stored as a JSON string (Neo4j lists are homogeneous): "
                                    f"{plan.identity(row)}")
                    row = plan.with_props(row, props)
                out.append(row)
            return out, warnings
        nul = sum(1 for row in rows for v in plan.props(row).values() if falkordb.has_char(v, "\x00"))
        if nul:
            warnings.append(f"{nul} element(s) hold U+0000 in a string: FalkorDB cuts the string there")
        return rows, warnings

    def write_batch(self, plan: Plan, rows: list[dict[str, Any]], scope: str) -> int:
        """Write one batch in one managed transaction; returns the number of statements it took."""
        from neo4j.exceptions import Neo4jError

        if self.dialect == "neo4j":
            statements = [(plan.query, {"rows": rows, "scope": scope})]
        else:
            statements = falkordb.statements(plan, rows, scope)

        def work(tx: Any) -> None:
            for query, params in statements:
                tx.run(query, params).consume()

        try:
            self._session.execute_write(work)
        except Neo4jError as exc:
            raise ExportError(f"the Bolt server at {self.settings.display_uri()} failed a batch: "
                              f"{_first_line(exc)}") from None
        return len(statements)


def _first_line(exc: BaseException) -> str:
    """The most telling line of a driver error (its last line names the cause: refused, timed out...)."""
    text = str(getattr(exc, "message", None) or exc) or type(exc).__name__
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return (lines[-1] if lines else type(exc).__name__)[:300]
