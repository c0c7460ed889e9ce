"""The one act step every path takes: the loop's iterations, the workspace's ``apply_actions`` tool call, a
resumed run and a replayed transcript all turn an agent's (parsed) turn into an ``IterationRecord`` here.

``act`` stamps the iteration into the state's provenance, validates and applies the actions (``Actor``),
takes the iteration's mutations from the journal (or reverts them for a dry run) and builds the record;
``iteration_events`` are that record's events (its verdicts and ``iteration_finished``), wherever it
happened; ``prune_isolated`` is the finalization step (removing nodes without edges).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Literal

from igg.act.apply import Actor
from igg.graph.state import GraphState
from igg.models.actions import ParsedResponse, UnreadableAction
from igg.record.records import Event, IterationRecord, StopReason


def act(
    actor: Actor,
    state: GraphState,
    parsed: ParsedResponse | None,
    *,
    iteration: int,
    chunk: str | None = None,
    chunk_cursor: int = 0,
    parse_error: dict[str, str] | None = None,
    raw_output: str | None = None,
    output_kind: Literal["text", "object"] = "text",
    truncated: bool = False,
    observation_chars: int = 0,
    observation_tokens: int = 0,
    usage: dict[str, Any] | None = None,
    exchange: dict[str, Any] | None = None,
    notes: list[str] | None = None,
    actions: list[Any] | None = None,
    dry_run: bool = False,
    clock: Callable[[], float] = time.perf_counter,
) -> IterationRecord:
    """Apply one parsed turn (None: it did not parse, see ``parse_error``) as iteration ``iteration``.

    ``actions`` is the turn's actions as received (default: the parsed items dumped back to JSON);
    ``dry_run`` validates every action as if applied in order and leaves the graph untouched (the record's
    ``mutations`` are then empty). ``timings_ms`` of the record holds ``act``.
    """
    started = clock()
    state.take_journal()  # anything before this step belongs to whoever made it, not to this iteration
    state.iteration, state.chunk = iteration, chunk
    verdicts = actor.apply(state, parsed.items, cursor=chunk_cursor) if parsed is not None else []
    mutations = state.take_journal()
    if dry_run:
        for mutation in reversed(mutations):
            state.revert_mutation(mutation)
        state.take_journal()
        mutations = []
    if actions is None:
        actions = [_as_received(i) for i in parsed.items] if parsed is not None else []
    record = IterationRecord(
        iteration=iteration,
        observation_chars=observation_chars,
        observation_tokens=observation_tokens,
        chunk=chunk,
        chunk_cursor=chunk_cursor,
        raw_output=raw_output,
        output_kind=output_kind,
        truncated=parsed.truncated if parsed is not None else truncated,
        reasoning=parsed.reasoning if parsed is not None else "",
        finished=parsed.finished if parsed is not None else False,
        parse_error=parse_error,
        actions=actions,
        verdicts=verdicts,
        mutations=mutations,
        usage=usage,
        exchange=exchange,
        notes=list(notes or []),
    )
    record.timings_ms["act"] = round((clock() - started) * 1000, 3)
    return record


def iteration_finished(
    record: IterationRecord, *, nodes: int, edges: int, stop_reason: StopReason | None = None
) -> dict[str, Any]:
    """The ``iteration_finished`` event's data for ``record`` (the graph held ``nodes`` and ``edges`` after
    it)."""
    return {
        "proposed": len(record.verdicts),
        "accepted": record.accepted,
        "rejected": record.rejected,
        "rejected_by_code": record.rejected_by_code(),
        "parse_error": record.parse_error,
        "truncated": record.truncated,
        "finished": record.finished,
        "nodes": nodes,
        "edges": edges,
        "tokens": record.usage.get("total_tokens") if record.usage else None,
        "observation_tokens": record.observation_tokens,
        "ms": record.timings_ms.get("total"),
        "timings_ms": record.timings_ms,
        "stop_reason": stop_reason,
    }


def iteration_events(
    session_id: str,
    record: IterationRecord,
    *,
    nodes: int,
    edges: int,
    stop_reason: StopReason | None = None,
    verdicts: bool = True,
) -> list[Event]:
    """The events of one iteration: an ``action_verdict`` per verdict (unless ``verdicts`` is false) and its
    ``iteration_finished``. The one builder of them: a run, a tool call and a step another process stored
    (read back from the store) give a client the same fields."""
    it = record.iteration
    events = (
        [
            Event(kind="action_verdict", session_id=session_id, iteration=it, data=v.to_dict())
            for v in record.verdicts
        ]
        if verdicts
        else []
    )
    events.append(
        Event(
            kind="iteration_finished",
            session_id=session_id,
            iteration=it,
            data=iteration_finished(record, nodes=nodes, edges=edges, stop_reason=stop_reason),
        )
    )
    return events


def prune_isolated(state: GraphState, *, keep_protected: bool) -> list[dict[str, Any]]:
    """Delete the nodes without edges (seed nodes stay when ``keep_protected``); returns each removed node as
    ``{"id", "type", "properties"}``. The deletions go to the state's journal like any mutation."""
    degree = state.graph.degree
    isolated = [
        n for n in list(state.graph.nodes) if degree(n) == 0 and not (keep_protected and n in state.protected)
    ]
    pruned = []
    for n in isolated:
        pruned.append({"id": n, "type": state.node_type(n), "properties": dict(state.node_properties(n))})
        state.delete_node(n)
    return pruned


def _as_received(item: Any) -> Any:
    if isinstance(item, UnreadableAction):
        return item.raw
    return item.model_dump(mode="json", by_alias=True, exclude_unset=True)


__all__ = ["act", "iteration_events", "iteration_finished", "prune_isolated"]
