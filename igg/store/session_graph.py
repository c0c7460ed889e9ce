"""Loading a stored session's graph for the exporters: the state, the request's schema and the metadata."""

from __future__ import annotations

from typing import Any

from igg.graph.state import GraphState
from igg.models.schema import Schema
from igg.store.fork import lineage_of
from igg.store.location import StoreArg
from igg.store.store import SessionStore


def session_graph(store_path: StoreArg | None, session_id: str, *, iteration: int | None = None
                  ) -> tuple[GraphState, Schema, dict[str, Any]]:
    """(state, schema, metadata) of a session as it stands, or as it was after ``iteration``."""
    store = SessionStore(store_path)
    try:
        info = store.session(session_id)
        step = store.step_of_iteration(session_id, iteration) if iteration is not None else None
        request, state, at = store.load_state(session_id, upto_step=step)
    finally:
        store.close()
    metadata: dict[str, Any] = {"session_id": session_id, "goal": request.goal_prompt,
                                "stop_reason": info.stop_reason, "status": info.status,
                                "iterations": iteration if iteration is not None else info.last_iteration,
                                "step": at, **lineage_of(info.options)}
    return state, request.config.schema_, metadata
