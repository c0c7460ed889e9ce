"""Identity rules: normalise identity values, then guard ``ADD_NODE`` against near-duplicates.

``normalize_node_identity`` and ``normalize_update_identity`` rewrite the action's identity values by the
documented rule (``igg.graph.identity``) before any other check sees them, so the node is stored, compared
and reported under its normalised identity.

``near_duplicate`` (``POSSIBLE_DUPLICATE``) runs after ``DUPLICATE_NODE``'s exact check, under the request's
``constraints.duplicates.policy``:

- ``reject`` (default): the action is rejected; the message names the candidates with their references and
  both ways forward (use the existing node, or send the action again with ``"distinct": true``).
- ``warn``: the node is added; its verdict carries ``warning: POSSIBLE_DUPLICATE`` and names the candidates.
- ``off``: no check (and no index is kept).

An action with ``"distinct": true`` is accepted past the guard; the node's provenance records
``distinct_from`` (the candidates' ids), so the override is journaled with the ``add_node`` mutation.
"""

from __future__ import annotations

import json
from typing import Any

from igg.act.context import PLAIN_NODE, CheckContext, NewNode, Rejection
from igg.graph.duplicates import Candidate
from igg.graph.identity import normalize_properties
from igg.models.actions import AddNode, UpdateNode
from igg.models.verdicts import ErrorCode as C


def normalize_node_identity(ctx: CheckContext, a: AddNode) -> Rejection | None:
    """Normalise the identity values of a node to add (never rejects)."""
    keys = ctx.schema.identity_keys.get(a.label)
    if keys and a.properties:
        normalize_properties(a.properties, keys)
    return None


def normalize_update_identity(ctx: CheckContext, a: UpdateNode, node: str) -> Rejection | None:
    """Normalise the identity values an update sets (runs once the node is resolved; never rejects)."""
    if a.properties:
        normalize_properties(a.properties, ctx.schema.identity_keys[ctx.state.node_type(node)])
    return None


def near_duplicate(ctx: CheckContext, a: AddNode) -> NewNode | Rejection:
    """POSSIBLE_DUPLICATE: the identity is close to an existing node's of the same type. Else the ``NewNode``
    the action is accepted as (with the guard's note, warning or override)."""
    guard = ctx.limits.duplicates
    if guard.policy == "off":
        return PLAIN_NODE
    index = ctx.state.near_duplicates(guard.threshold, guard.aliases)
    found = index.candidates(a.label, a.properties)
    if not found:
        return PLAIN_NODE
    shown = "; ".join(_describe(ctx, c) for c in found)
    if a.distinct:
        return NewNode(note=f"added as distinct from {shown}", distinct_from=[c.node for c in found])
    if guard.policy == "warn":
        return NewNode(
            note=f"POSSIBLE_DUPLICATE: probably the same as {shown}. If so, merge or delete one of them",
            warning=C.POSSIBLE_DUPLICATE,
        )
    first = found[0]
    ref = _reference(ctx, first)
    return (
        C.POSSIBLE_DUPLICATE,
        f"{a.label} {json.dumps(_primary(ctx, a))} is probably the same as {shown}. "
        f"Use the existing node (refer to it as {ref}), or, if it is really a different {a.label}, send "
        'this ADD_NODE again with "distinct": true.',
    )


def _primary(ctx: CheckContext, a: AddNode) -> Any:
    return a.properties.get(ctx.schema.identity_keys[a.label][0])


def _describe(ctx: CheckContext, c: Candidate) -> str:
    why = {
        "folded": "same name up to case and separators",
        "alias": "aliases",
        "abbreviation": "one name abbreviates the other",
        "similar": f"similarity {c.score:.2f}",
    }[c.reason]
    return f"{ctx.state.describe(c.node)} ({c.node}; {why})"


def _reference(ctx: CheckContext, c: Candidate) -> str:
    t = ctx.state.node_type(c.node)
    props = ctx.state.node_properties(c.node)
    ref = {k: props[k] for k in ctx.schema.identity_keys[t]}
    if len(ctx.state.find_nodes(ref)) > 1:
        ref["label"] = t
    return json.dumps(ref, ensure_ascii=False)
