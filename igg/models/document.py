"""IGG's JSON graph document: what ``--out`` writes, what ``igg export`` reads, what ``seed_data`` accepts.

```json
{"format": "igg-graph", "version": 1,
 "schema": {...},
 "nodes": [{"id": "n1", "type": "Class", "properties": {"name": "AuthService", "package": "com.app.auth"}}],
 "edges": [{"id": "e1", "type": "CALLS", "from": "n2", "to": "n1", "properties": {}}],
 "metadata": {"session_id": "uuid-1234", "stop_reason": "finished"}}
```
Edges name their endpoints by node id. ``schema`` is optional in a seed (the request's schema applies).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from igg.models.common import Properties
from igg.models.schema import Schema


class DocNode(BaseModel):
    """A node of a graph document."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1, max_length=200, description="Stable node id, unique in the document.")
    type: str = Field(description="The node type (one of the schema's node_types).")
    properties: Properties = Field(default_factory=dict, description="The node's properties.")
    provenance: dict[str, Any] | None = Field(
        default=None, description="Optional: which iteration created/updated the node and from which chunk."
    )


class DocEdge(BaseModel):
    """An edge of a graph document."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    id: str = Field(min_length=1, max_length=200, description="Stable edge id, unique in the document.")
    type: str = Field(description="The edge type (one of the schema's edge_types).")
    from_: str = Field(alias="from", description="Id of the source node.")
    to: str = Field(description="Id of the target node.")
    properties: Properties = Field(default_factory=dict, description="The edge's properties.")
    provenance: dict[str, Any] | None = Field(
        default=None, description="Optional: which iteration created the edge and from which chunk."
    )


class GraphDocument(BaseModel):
    """A whole graph in IGG's JSON document format."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    format: Literal["igg-graph"] = Field(default="igg-graph", description="Always 'igg-graph'.")
    version: Literal[1] = Field(default=1, description="Document format version.")
    schema_: Schema | None = Field(default=None, alias="schema", description="The schema the graph obeys.")
    nodes: list[DocNode] = Field(default_factory=list, description="All nodes.")
    edges: list[DocEdge] = Field(default_factory=list, description="All edges.")
    triples: list[list[Any]] | None = Field(
        default=None,
        description=(
            "Written when the schema came from an ontology: the graph's facts as the "
            "ontology's triples, [subject, relation label, object]; derived from the nodes "
            "and edges, ignored when a document is read."
        ),
    )
    metadata: dict[str, Any] = Field(default_factory=dict, description="Session id, goal, stop reason, ...")
