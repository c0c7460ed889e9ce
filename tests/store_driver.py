"""A minimal iteration driver for store tests: observe nothing, apply scripted responses, record each one.

It does what the loop does around the recorder (stamp the iteration, apply, take the journal, record), so the
store's own behaviour can be pinned without depending on the loop's other features.
"""

from __future__ import annotations

from typing import Any

from igg.act import Actor
from igg.models.actions import read_response
from igg.record.records import IterationRecord, RunResult
from igg.request.load import build_state
from igg.store import SessionRecorder, SessionStore, resume_point


def responses(count: int) -> list[dict[str, Any]]:
    """A script: each turn adds a class and links it to the previous; some turns update, delete or fail."""
    turns: list[dict[str, Any]] = []
    for i in range(1, count + 1):
        actions: list[dict[str, Any]] = [
            {"type": "ADD_NODE", "label": "Class", "properties": {"name": f"C{i}", "package": "p"}}
        ]
        if i > 1:
            actions.append(
                {"type": "ADD_EDGE", "label": "CALLS", "from": {"name": f"C{i}"}, "to": {"name": f"C{i - 1}"}}
            )
        if i % 3 == 0:
            actions.append(
                {"type": "UPDATE_NODE", "node": {"name": f"C{i - 1}"}, "properties": {"doc": f"d{i}"}}
            )
        if i % 4 == 0:
            actions.append({"type": "DELETE_NODE", "node": {"name": f"C{i - 2}"}})
        if i % 5 == 0:
            actions.append({"type": "ADD_NODE", "label": "Nope", "properties": {"name": "x"}})
        if i % 7 == 0:
            actions.append({"type": "UPDATE_NODE", "node": {"name": "Ghost"}, "properties": {"doc": "?"}})
        turns.append({"reasoning": f"turn {i}: add C{i}", "actions": actions})
    return turns


def run_iterations(
    recorder: SessionRecorder | None,
    request: Any,
    turns: list[dict[str, Any]],
    *,
    state: Any = None,
    start: int = 1,
    stop_before: int | None = None,
) -> Any:
    """Apply ``turns[start-1:]`` as iterations start, start+1, ...; record each; returns the state."""
    if state is None:
        state, _ = build_state(request)
    actor = Actor(state.schema, request.config.constraints, request.config.apply_mode)
    if recorder is not None and start == 1:
        recorder.begin(request, state, [])
    for i in range(start, len(turns) + 1):
        if stop_before is not None and i >= stop_before:
            return state
        state.iteration = i
        state.chunk = f"file{i % 2}.java"
        parsed = read_response(turns[i - 1])
        verdicts = actor.apply(state, parsed.items)
        record = IterationRecord(
            iteration=i,
            observation_chars=100,
            observation_tokens=25,
            chunk=state.chunk,
            raw_output=None,
            reasoning=turns[i - 1]["reasoning"],
            actions=turns[i - 1]["actions"],
            verdicts=verdicts,
            mutations=state.take_journal(),
            usage={"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25},
            timings_ms={"total": 1.5},
        )
        if recorder is not None:
            recorder.record(record)
    if recorder is not None:
        recorder.finish(
            RunResult(
                session_id=request.session_id,
                stop_reason="max_iterations",
                state=state,
                final_mutations=state.take_journal(),
            )
        )
    return state


def resume(store: SessionStore, session_id: str, turns: list[dict[str, Any]]) -> Any:
    """Continue an interrupted session with the same script."""
    point = resume_point(store, session_id)
    recorder = SessionRecorder(store, resume=True)
    recorder.begin(point.request, point.state, point.records)
    return run_iterations(recorder, point.request, turns, state=point.state, start=point.next_iteration)
