"""A Cypher script that loads the graph with ``cypher-shell -f graph.cypher`` (Neo4j 5).

The script is the Neo4j export written down: a uniqueness constraint per node type on (``igg_scope``,
identity keys), then ``UNWIND [...] AS r MERGE ...`` statements with the same identity rules as
``export_neo4j``, so running it twice changes nothing. A script cannot use parameters, so values are
written as Cypher literals by ``literal`` (strings escaped, every other value typed); names go through
``igg.export.cypher.name`` like every query IGG builds. Statements stay under about 3 kB each.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import IO, Any

from igg.errors import ExportError
from igg.export import cypher
from igg.export.plan import plan_export
from igg.graph.state import GraphState
from igg.io.files import write_file

STATEMENT_BYTES = 3000

_ESCAPES = {
    "\\": "\\\\",
    "'": "\\'",
    '"': '\\"',
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\b": "\\b",
    "\f": "\\f",
}


def string_literal(text: str) -> str:
    """A single-quoted Cypher string literal for any Python string (control characters as ``\\uXXXX``)."""
    out = []
    for ch in text:
        esc = _ESCAPES.get(ch)
        if esc is not None:
            out.append(esc)
        elif ch < " " or ch == "\x7f" or "\ud800" <= ch <= "\udfff" or ch in "\u2028\u2029\ufffe\uffff":
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "'" + "".join(out) + "'"


def literal(value: Any) -> str:
    """A Cypher literal for a property value, a list, or a map with safe-identifier keys."""
    cls = value.__class__
    if cls is str:
        return string_literal(value)
    if cls is bool:
        return "true" if value else "false"
    if cls is int:
        return str(value)
    if cls is float:
        if not math.isfinite(value):
            raise ExportError(f"cannot write {value} as a Cypher literal")
        return repr(value)
    if cls is list:
        return "[" + ", ".join(literal(v) for v in value) + "]"
    if cls is dict:
        return (
            "{" + ", ".join(f"{cypher.name(k, 'property key')}: {literal(v)}" for k, v in value.items()) + "}"
        )
    raise ExportError(f"cannot write a {cls.__name__} as a Cypher literal")


def script_statements(state: GraphState, *, scope: str = "igg", constraints: bool = True) -> list[str]:
    """The script's statements, each without its terminating semicolon."""
    out: list[str] = []
    if constraints:
        for label in state.schema.node_type_list:
            if next(iter(state.nodes_of_type(label)), None) is not None:
                out.append(cypher.identity_constraint(label, state.schema.identity_keys[label]))
    scope_literal = string_literal(scope)
    for plan in plan_export(state):
        head, tail = plan.query.split("$rows", 1)
        tail = tail.replace("$scope", scope_literal)
        chunk: list[str] = []
        size = 0
        for row in plan.rows:
            text = literal(row)
            if chunk and size + len(text) > STATEMENT_BYTES:
                out.append(f"{head}[{', '.join(chunk)}]{tail}")
                chunk, size = [], 0
            chunk.append(text)
            size += len(text) + 2
        if chunk:
            out.append(f"{head}[{', '.join(chunk)}]{tail}")
    return out


def write_cypher(
    state: GraphState, path_or_file: str | Path | IO[str], *, scope: str = "igg", constraints: bool = True
) -> dict[str, Any]:
    """Write the Cypher script; returns ``{"nodes", "edges", "statements", "bytes"}``."""
    statements = script_statements(state, scope=scope, constraints=constraints)
    header = f"// IGG graph export: {state.node_count} nodes, {state.edge_count} edges, scope {scope!r}.\n"
    header += "// Load with: cypher-shell -a bolt://HOST:7687 -u USER -f THIS_FILE (idempotent)\n"
    text = header + "".join(s + ";\n" for s in statements)
    data = text.encode("utf-8", "surrogatepass")
    if isinstance(path_or_file, str | Path):
        write_file(path_or_file, data)
    else:
        path_or_file.write(text)
    return {
        "nodes": state.node_count,
        "edges": state.edge_count,
        "statements": len(statements),
        "bytes": len(data),
    }
