"""Loading a stored session's graph for the exporters: the state, the request's schema and the metadata."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from igg.errors import Problem, RequestInvalid
from igg.graph.asof import as_of as as_of_state
from igg.graph.state import GraphState
from igg.models.schema import Schema
from igg.models.validtime import TimeError, parse_time
from igg.persistence import rfc3339
from igg.store.fork import lineage_of
from igg.store.location import StoreArg
from igg.store.store import SessionStore


def session_graph(
    store_path: StoreArg | None,
    session_id: str,
    *,
    iteration: int | None = None,
    as_of: str | None = None,
    known_at: str | None = None,
) -> tuple[GraphState, Schema, dict[str, Any]]:
    """(state, schema, metadata) of a session as it stands, or as it was after ``iteration``; ``known_at``: as
    the journal held it at that time (what IGG had been told by then); ``as_of``: only the facts valid at that
    time (``igg.graph.asof``). Both are ISO 8601 times (``igg.models.validtime``). The metadata's ``told``
    maps each iteration to when it was committed (the journal's time; an element's provenance names its
    iteration)."""
    valid_at = time_arg("--as-of", as_of)
    told_at = time_arg("--known-at", known_at)
    store = SessionStore(store_path)
    try:
        info = store.session(session_id)
        step = store.step_of_iteration(session_id, iteration) if iteration is not None else None
        if told_at is not None:
            known = store.step_known_at(session_id, told_at.timestamp())
            step = known if step is None else min(step, known)
        request, state, at = store.load_state(session_id, upto_step=step)
        told = {
            str(s.iteration): rfc3339(s.created_at)
            for s in store.steps(session_id, with_records=False)
            if s.step <= at and s.iteration is not None and s.kind in ("iteration", "update")
        }
    finally:
        store.close()
    if valid_at is not None:
        state = as_of_state(state, valid_at)
    metadata: dict[str, Any] = {
        "session_id": session_id,
        "goal": request.goal_prompt,
        "stop_reason": info.stop_reason,
        "status": info.status,
        "iterations": store_iteration(info.last_iteration, iteration, told_at, at),
        "step": at,
        **lineage_of(info.options),
        "told": told,
    }
    if as_of is not None:
        metadata["as_of"] = parse_time(as_of)[0]
    if known_at is not None:
        metadata["known_at"] = parse_time(known_at)[0]
    return state, request.config.schema_, metadata


def store_iteration(last: int, iteration: int | None, told_at: datetime | None, step: int) -> int | None:
    """The iteration the metadata names: the one asked for, the last, or (``--known-at``) None with the
    step."""
    if iteration is not None:
        return iteration
    return None if told_at is not None else last


def time_arg(option: str, text: str | None) -> datetime | None:
    """An option's ISO 8601 time (None when not given); a bad one is refused naming the option and the
    rule."""
    if text is None:
        return None
    try:
        return parse_time(text)[1]
    except TimeError as exc:
        raise RequestInvalid([Problem(option, str(exc))], source="the command line") from None
