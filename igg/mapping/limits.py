"""One limit rule for a code map, fresh or updated: its graph never exceeds the session's ``max_nodes`` and
``max_edges``, and a graph that does not fit is refused whole, with the count it needs, never cut short.

The static agent's graph is known before the run: what ``SchemaFit`` places of the linked model, planned
as the difference from the empty graph (``igg.mapping.difference.plan_difference``), which the static pass
then applies (``igg.mapping.static``: planned once). A fresh ``igg map-code`` whose graph would exceed the
limits is refused before any session is stored (``RequestInvalid``, exit 2), naming
``--max-nodes``/``--max-edges`` and the count that would pass; an update is judged by the limits its session
was mapped with, the same ones, so a map that was allowed can be updated, and an update whose graph outgrows
them is refused whole (``SessionRefused``, exit 2) before anything is applied. Before this rule a fresh map
stopped adding nodes at ``max_nodes`` and still said ``finished``; every update of it was then refused.
"""

from __future__ import annotations

from typing import Any

from igg.act.difference import Difference
from igg.agents.code.mapping import SchemaFit
from igg.errors import Problem, RequestInvalid, SessionRefused
from igg.graph.state import GraphState
from igg.mapping.difference import plan_difference
from igg.record.logs import get_logger

log = get_logger("igg.code")


def _over(nodes: int, edges: int, limits: Any) -> list[tuple[str, str, int, int]]:
    """(option, limit name, count, limit) of each limit the counts exceed."""
    found = []
    if nodes > limits.max_nodes:
        found.append(("--max-nodes", "max_nodes", nodes, limits.max_nodes))
    if edges > limits.max_edges:
        found.append(("--max-edges", "max_edges", edges, limits.max_edges))
    return found


def check_map_size(fit: SchemaFit, limits: Any) -> Difference:
    """The fresh static map of ``fit``, planned: the difference from the empty graph (what the static pass
    applies); ``RequestInvalid`` (naming the option to raise and the value that would pass) when its node or
    edge count exceeds ``limits`` (the request's constraints)."""
    diff = plan_difference(GraphState(fit.schema), fit)
    nodes, edges = len(diff.add_nodes), len(diff.add_edges)
    over = _over(nodes, edges, limits)
    if over:
        log.info("map_code_over_limits", nodes=nodes, edges=edges)
        raise RequestInvalid(
            [
                Problem(
                    option,
                    f"the map of these files holds {count} {name.removeprefix('max_')}, more than "
                    f"{name}={limit}: give {option} {count} or more (or map fewer files); nothing was "
                    "mapped, as a map cut short could never be updated",
                )
                for option, name, count, limit in over
            ],
            source="the command line",
        )
    return diff


def updated_size(state: GraphState, diff: Difference) -> tuple[int, int]:
    """The node and edge counts of ``state`` once ``diff`` is applied (nothing is changed)."""
    gone = set(diff.remove_nodes)
    lost_edges = len(diff.remove_edges)
    if gone:
        lost_edges += sum(1 for _, (u, v, _d) in state.edge_rows() if u in gone or v in gone)
    return (
        state.node_count - len(gone) + len(diff.add_nodes),
        state.edge_count - lost_edges + len(diff.add_edges),
    )


def check_update_size(state: GraphState, diff: Difference, limits: Any, session_id: str) -> None:
    """``SessionRefused`` (nothing changed) when ``diff`` would take the graph of session ``session_id`` past
    the limits it was mapped with (``limits``: its request's constraints)."""
    nodes, edges = updated_size(state, diff)
    over = _over(nodes, edges, limits)
    if over:
        shown = "; ".join(
            f"the graph would hold {count} {what}, more than the session's {name}={limit}"
            for _, name, count, limit in over
            for what in [name.removeprefix("max_")]
        )
        options = " ".join(f"{option} {count}" for option, _, count, _ in over)
        raise SessionRefused(
            f"the update of session {session_id!r} is refused, nothing was changed: {shown} (the limits it "
            f"was mapped with); map the tree again into a new session with {options} or more",
            session_id=session_id,
        )


__all__ = ["check_map_size", "check_update_size", "updated_size"]
