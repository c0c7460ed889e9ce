"""Cypher query builders: the only place IGG writes Cypher text.

Labels, relationship types and property keys cannot be query parameters, so each one is checked against
the safe-identifier rule (``igg.models.common.IDENTIFIER_RE``) *and* backtick-escaped before it is put into
a query; a name that fails raises ``ExportError`` before anything reaches a database. Values never appear
in query text here: they travel as parameters (``$rows``, ``$scope``).

Identity: a node is merged on its type (label), its identity keys (per type, from the schema) and the
export scope property ``igg_scope``; an edge is merged on its type between its two merged endpoints (IGG
never holds two edges of one type between the same pair). ``SET n = row`` then makes the stored properties
exactly the graph's (a property removed in IGG is removed from the database), so exporting twice changes
nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from igg.errors import ExportError
from igg.models.common import IDENTIFIER_HINT, is_identifier

SCOPE_KEY = "igg_scope"
"""Property that holds the export scope on every node and relationship IGG writes."""


def name(text: str, what: str = "name") -> str:
    """``text`` as a backtick-quoted Cypher name, after checking it is a safe identifier."""
    if not is_identifier(text):
        raise ExportError(
            f"refusing to export {what} {text!r}: not a safe identifier ({IDENTIFIER_HINT}); "
            "labels, relationship types and keys are written into Cypher text"
        )
    return "`" + text.replace("`", "``") + "`"


def key_map(
    keys: Sequence[str], source: str, scope: str = "$scope", *, offset: int = 0, by_name: bool = False
) -> str:
    """A merge pattern map ``{`k`: <value>, ..., igg_scope: $scope}``.

    Values are ``source.k`` when ``by_name`` (a node row is its property map), else ``source[offset + i]``
    (an edge row is ``[source identity..., target identity..., properties]``; ``$k`` is a list too).
    """
    parts = []
    for i, k in enumerate(keys):
        quoted = name(k, "property key")
        parts.append(f"{quoted}: {source}.{quoted}" if by_name else f"{quoted}: {source}[{offset + i}]")
    parts.append(f"{SCOPE_KEY}: {scope}")
    return "{" + ", ".join(parts) + "}"


def merge_nodes(label: str, keys: Sequence[str]) -> str:
    """Merge a batch of nodes of one type; each row is the node's property map (identity keys included)."""
    return (
        f"UNWIND $rows AS r MERGE (n:{name(label, 'node type')} {key_map(keys, 'r', by_name=True)}) "
        f"SET n = r, n.{SCOPE_KEY} = $scope"
    )


def merge_edges(
    edge_type: str, source: str, source_keys: Sequence[str], target: str, target_keys: Sequence[str]
) -> str:
    """Merge a batch of edges of one (source type, edge type, target type).

    Each row is a list: the source's identity values, the target's, then the edge's property map (a list
    rather than a map keeps the parameters small: FalkorDB's Bolt throughput is bound by their size).
    """
    n = len(source_keys) + len(target_keys)
    return (
        "UNWIND $rows AS r "
        f"MATCH (a:{name(source, 'node type')} {key_map(source_keys, 'r')}) "
        f"MATCH (b:{name(target, 'node type')} {key_map(target_keys, 'r', offset=len(source_keys))}) "
        f"MERGE (a)-[e:{name(edge_type, 'edge type')}]->(b) SET e = r[{n}], e.{SCOPE_KEY} = $scope"
    )


def scan_match(var: str, label: str, keys: Sequence[str], values: Sequence[str]) -> str:
    """``MATCH`` a node comparing its identity as a list: no index is used (FalkorDB's index cannot find
    strings holding U+0001, so such rows are matched by scanning the label)."""
    props = ", ".join(f"{var}.{name(k, 'property key')}" for k in keys)
    return (
        f"MATCH ({var}:{name(label, 'node type')}) "
        f"WHERE {var}.{SCOPE_KEY} = $scope AND [{props}] = [{', '.join(values)}]"
    )


def merge_nodes_scan(label: str, keys: Sequence[str]) -> str:
    """``merge_nodes`` without index lookups (see ``scan_match``): update the match, else create."""
    values = [f"r.{name(k, 'property key')}" for k in keys]
    return (
        f"UNWIND $rows AS r OPTIONAL {scan_match('m', label, keys, values)} WITH r, collect(m) AS found "
        "FOREACH (x IN CASE WHEN size(found) = 0 THEN [1] ELSE [] END | "
        f"CREATE (n:{name(label, 'node type')}) SET n = r, n.{SCOPE_KEY} = $scope) "
        f"FOREACH (m IN found | SET m = r, m.{SCOPE_KEY} = $scope)"
    )


def merge_edges_scan(
    edge_type: str, source: str, source_keys: Sequence[str], target: str, target_keys: Sequence[str]
) -> str:
    """``merge_edges`` without index lookups (see ``scan_match``)."""
    ns, nt = len(source_keys), len(target_keys)
    return (
        f"UNWIND $rows AS r {scan_match('a', source, source_keys, [f'r[{i}]' for i in range(ns)])} "
        f"{scan_match('b', target, target_keys, [f'r[{ns + i}]' for i in range(nt)])} "
        f"MERGE (a)-[e:{name(edge_type, 'edge type')}]->(b) SET e = r[{ns + nt}], e.{SCOPE_KEY} = $scope"
    )


def append_node_value(label: str, keys: Sequence[str], key: str, first: bool, scan: bool = False) -> str:
    """Set (``first``) or extend a node property piece by piece (``$k`` identity, ``$v`` the piece); ``scan``
    matches without index lookups (see ``scan_match``)."""
    prop = f"n.{name(key, 'property key')}"
    value = "$v" if first else f"{prop} + $v"
    if scan:
        return f"{scan_match('n', label, keys, [f'$k[{i}]' for i in range(len(keys))])} SET {prop} = {value}"
    return f"MATCH (n:{name(label, 'node type')} {key_map(keys, '$k')}) SET {prop} = {value}"


def append_edge_value(
    edge_type: str,
    source: str,
    source_keys: Sequence[str],
    target: str,
    target_keys: Sequence[str],
    key: str,
    first: bool,
    scan: bool = False,
) -> str:
    """Set or extend an edge property piece by piece (``$s``/``$t`` endpoint identities, ``$v`` the piece)."""
    prop = f"e.{name(key, 'property key')}"
    value = "$v" if first else f"{prop} + $v"
    if scan:
        return (
            f"{scan_match('a', source, source_keys, [f'$s[{i}]' for i in range(len(source_keys))])} "
            f"{scan_match('b', target, target_keys, [f'$t[{i}]' for i in range(len(target_keys))])} "
            f"MATCH (a)-[e:{name(edge_type, 'edge type')}]->(b) SET {prop} = {value}"
        )
    return (
        f"MATCH (a:{name(source, 'node type')} {key_map(source_keys, '$s')})"
        f"-[e:{name(edge_type, 'edge type')}]->(b:{name(target, 'node type')} {key_map(target_keys, '$t')}) "
        f"SET {prop} = {value}"
    )


def identity_index(label: str, keys: Sequence[str]) -> str:
    """Neo4j 5: a named composite index on (igg_scope, identity keys), ``IF NOT EXISTS`` (where no uniqueness
    constraint can be created: it keeps MERGE fast, not unique)."""
    props = ", ".join(f"n.{name(k, 'property key')}" for k in (SCOPE_KEY, *keys))
    return (
        f"CREATE INDEX {name(index_name(label))} IF NOT EXISTS FOR (n:{name(label, 'node type')}) ON"
        f" ({props})"
    )


def identity_constraint(label: str, keys: Sequence[str], called: str | None = None) -> str:
    """Neo4j 5: a named uniqueness constraint on (igg_scope, identity keys) of a node type, ``IF NOT EXISTS``
    (named ``called``, default ``constraint_name(label)``)."""
    props = ", ".join(f"n.{name(k, 'property key')}" for k in (SCOPE_KEY, *keys))
    return (
        f"CREATE CONSTRAINT {name(called or constraint_name(label))} IF NOT EXISTS "
        f"FOR (n:{name(label, 'node type')}) REQUIRE ({props}) IS UNIQUE"
    )


def memgraph_constraint(label: str, keys: Sequence[str]) -> str:
    """Memgraph: a uniqueness constraint on (igg_scope, identity keys) (its own syntax, no names)."""
    props = ", ".join(f"n.{name(k, 'property key')}" for k in (SCOPE_KEY, *keys))
    return f"CREATE CONSTRAINT ON (n:{name(label, 'node type')}) ASSERT {props} IS UNIQUE"


def memgraph_index(label: str, key: str) -> str:
    """Memgraph: a label-property index (its uniqueness constraints do not create one)."""
    return f"CREATE INDEX ON :{name(label, 'node type')}({name(key, 'property key')})"


def falkordb_index(label: str, key: str) -> str:
    """FalkorDB: an index on the most selective identity key. Its composite form is one index per property,
    and its planner may pick the low-selectivity ``igg_scope`` and scan thousands of nodes per row."""
    return f"CREATE INDEX FOR (n:{name(label, 'node type')}) ON (n.{name(key, 'property key')})"


def index_name(label: str) -> str:
    """The name IGG gives the identity index of a node type."""
    return f"igg_{label}_identity"[:64]


def constraint_name(label: str, keys: Sequence[str] = ()) -> str:
    """The name IGG gives the identity constraint of a node type (with ``keys``: the name it takes when the
    plain one is held by a constraint of other properties, ``igg_Class_package_name_unique``)."""
    return f"igg_{label}{''.join(f'_{k}' for k in keys)}_unique"[:64]


LIST_CONSTRAINTS = "SHOW CONSTRAINTS"
"""Neo4j 5 and ArcadeDB: the database's constraints with every column (name, type, entityType, labelsOrTypes,
properties): ``igg.export.neo4j.schema.existing_constraints`` reads the uniqueness ones."""

SERVER_PROBE = (
    "CALL dbms.components() YIELD name, versions, edition RETURN name, versions[0] AS version, edition"
)
"""Answered by Neo4j and ArcadeDB; FalkorDB's Bolt listener fails it (that is how it is told apart)."""

LIST_INDEXES_FALKORDB = "CALL db.indexes() YIELD label, properties RETURN label, properties"
"""FalkorDB's index listing (it has no ``IF NOT EXISTS``: existing indexes are skipped by looking here)."""

SHOW_CONSTRAINTS = (
    "SHOW CONSTRAINTS YIELD name, labelsOrTypes, properties RETURN name, labelsOrTypes, properties"
)
"""Neo4j 5's constraint listing (tests and the README show what the export created)."""


def scope_nodes(id_function: str = "elementId") -> str:
    """Every node of one scope: its id, labels and properties (the export plan reads the scope with it)."""
    return (
        f"MATCH (n) WHERE n.{SCOPE_KEY} = $scope "
        f"RETURN {id_function}(n) AS id, labels(n) AS labels, properties(n) AS props"
    )


def scope_edges(id_function: str = "elementId") -> str:
    """Every relationship of one scope: its id, its endpoints' ids, its type and properties."""
    return (
        f"MATCH (a)-[e]->(b) WHERE e.{SCOPE_KEY} = $scope RETURN {id_function}(e) AS id, "
        f"{id_function}(a) AS a, type(e) AS type, {id_function}(b) AS b, properties(e) AS props"
    )


def delete_nodes(label: str, keys: Sequence[str]) -> str:
    """Delete nodes of one type (and their relationships) by identity; each row is the identity values."""
    return f"UNWIND $rows AS r MATCH (n:{name(label, 'node type')} {key_map(keys, 'r')}) DETACH DELETE n"


def delete_edges(
    edge_type: str, source: str, source_keys: Sequence[str], target: str, target_keys: Sequence[str]
) -> str:
    """Delete relationships of one (source type, edge type, target type); rows as for ``merge_edges``."""
    return (
        "UNWIND $rows AS r "
        f"MATCH (a:{name(source, 'node type')} {key_map(source_keys, 'r')})"
        f"-[e:{name(edge_type, 'edge type')}]->"
        f"(b:{name(target, 'node type')} {key_map(target_keys, 'r', offset=len(source_keys))}) "
        f"WHERE e.{SCOPE_KEY} = $scope DELETE e"
    )


def delete_by_id(what: str, id_function: str = "elementId") -> str:
    """Delete nodes (``what="nodes"``, with their relationships) or relationships of the scope by id (elements
    IGG cannot address by identity: a label unknown to the graph's schema, a missing identity key)."""
    if what == "nodes":
        return (
            f"UNWIND $ids AS i MATCH (n) WHERE {id_function}(n) = i AND n.{SCOPE_KEY} = $scope DETACH"
            " DELETE n"
        )
    return f"UNWIND $ids AS i MATCH ()-[e]->() WHERE {id_function}(e) = i AND e.{SCOPE_KEY} = $scope DELETE e"


COUNT_SCOPE = (
    f"MATCH (n) WHERE n.{SCOPE_KEY} = $scope "
    "OPTIONAL MATCH (n)-[e]->() RETURN count(DISTINCT n) AS nodes, count(e) AS edges"
)
"""Counts of what one scope holds (tests and ``--verify``)."""

DELETE_SCOPE = f"MATCH (n) WHERE n.{SCOPE_KEY} = $scope DETACH DELETE n"
"""Remove every node (and its relationships) of one scope."""


MARKER_LABEL = "IggScopeMarker"
"""The label of the one node per scope that says what IGG last wrote there (``igg.export.neo4j.sync``). It has
no ``igg_scope`` property (its scope is ``igg_marker_scope``), so reading a scope never sees it."""

MARKER_READ = (
    f"MATCH (m:{MARKER_LABEL}) WHERE m.igg_marker_scope = $scope RETURN m.digest AS digest, "
    "m.session AS session, m.step AS step, m.iteration AS iteration, m.nodes AS nodes, m.edges AS edges"
)
"""The marker of one scope (none when no complete export of a session wrote it last)."""

MARKER_LOCK = f"MATCH (m:{MARKER_LABEL}) WHERE m.igg_marker_scope = $scope SET m.igg_lock = $token"
"""Take the marker's write lock first thing in a delta's transaction: a second exporter waits (Neo4j) or fails
to commit (ArcadeDB's optimistic transactions), then reads the digest the first one wrote."""

MARKER_SET = (
    f"MERGE (m:{MARKER_LABEL} {{igg_marker_scope: $scope}}) SET m.digest = $digest, m.session = $session, "
    "m.step = $step, m.iteration = $iteration, m.nodes = $nodes, m.edges = $edges, m.written_at = $at"
)
"""Write (or overwrite) the marker of one scope."""

MARKER_DELETE = f"MATCH (m:{MARKER_LABEL}) WHERE m.igg_marker_scope = $scope DELETE m"
"""Remove the marker: done first by every full export, so an export that fails half-way leaves none."""

MARKER_CONSTRAINT = (
    f"CREATE CONSTRAINT igg_marker_unique IF NOT EXISTS FOR (m:{MARKER_LABEL}) "
    "REQUIRE m.igg_marker_scope IS UNIQUE"
)
"""At most one marker per scope (two first exports racing to create it)."""

COUNT_NODES = f"MATCH (n) WHERE n.{SCOPE_KEY} = $scope RETURN count(n) AS n"
COUNT_EDGES = f"MATCH ()-[e]->() WHERE e.{SCOPE_KEY} = $scope RETURN count(e) AS n"
