"""What the stored history answers: replay, undo, the diff between two iterations, and provenance (explain).

All of it works from the stored mutations: a node or edge's history is the list of mutations that touched
its id, the diff between two iterations is the net effect of the mutations between them, and an undo is the
inverse of the mutations after the target iteration, committed as a step of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from igg.errors import SessionBusy, SessionRefused
from igg.graph.journal import (
    EdgeAdded,
    EdgeDeleted,
    Effect,
    Mutation,
    NodeAdded,
    NodeDeleted,
    NodesMerged,
    NodeUpdated,
)
from igg.graph.state import GraphState
from igg.models.common import freeze
from igg.models.validtime import VALID_FROM, VALID_TO
from igg.persistence import rfc3339
from igg.record.history import Change, Touch
from igg.record.steps import UndoStep, step_data
from igg.store import codec
from igg.store.catalog import owner_alive
from igg.store.store import SessionStore, StepInfo


@dataclass(kw_only=True)
class ReplayReport:
    """The outcome of rebuilding a session's graph from its mutations alone."""

    state: GraphState
    steps: int
    mutations: int
    checked: list[str] = field(default_factory=list)
    """What the rebuilt graph was compared with (snapshots, stored counts)."""
    problems: list[str] = field(default_factory=list)
    """Differences found; empty means the replay equals everything stored."""

    @property
    def ok(self) -> bool:
        return not self.problems


def replay(store: SessionStore, session_id: str) -> ReplayReport:
    """Rebuild the graph from the seed and every stored mutation, checking it against each stored snapshot
    (at its step) and the node/edge counts every step recorded."""
    request, state, _ = store.load_state(session_id, upto_step=0, use_snapshot=False)
    steps = store.steps(session_id, with_records=False)
    snapshots = set(store.snapshot_steps(session_id))
    by_step: dict[int, list[Mutation]] = {}
    count = 0
    for step, m in store.mutations(session_id):
        by_step.setdefault(step, []).append(m)
        count += 1
    report = ReplayReport(state=state, steps=len(steps), mutations=count)
    for s in steps:
        for m in by_step.get(s.step, ()):
            problem = _inapplicable(state, m)
            if problem is not None:
                report.problems.append(
                    f"step {s.step}: stored mutation {m.op} {m.id} does not apply: {problem}"
                )
                return report
            state.apply_mutation(m)
        state.take_journal()
        if (state.node_count, state.edge_count) != (s.nodes, s.edges):
            report.problems.append(
                f"step {s.step}: {state.node_count} nodes/{state.edge_count} edges after replay, "
                f"{s.nodes}/{s.edges} stored"
            )
        if s.step in snapshots:
            snap = store.snapshot(session_id, upto_step=s.step)
            assert snap is not None
            expected, _ = _fresh(store, session_id)
            codec.state_from_snapshot(expected, snap[1])
            diffs = codec.differences(state, expected)
            report.checked.append(f"snapshot at step {s.step}")
            report.problems += [f"step {s.step}: {d}" for d in diffs]
    if steps:
        state.restore_id_counters(steps[-1].next_node, steps[-1].next_edge)
        report.checked.append(f"node/edge counts of {len(steps)} steps")
    return report


def _inapplicable(state: GraphState, m: Mutation) -> str | None:
    """Why a mutation cannot apply to the state (a damaged store), or None."""
    nodes = state.nodes
    match m:
        case NodeAdded():
            return f"node {m.id} already exists" if m.id in nodes else None
        case NodeDeleted() | NodeUpdated():
            return None if m.id in nodes else f"node {m.id} does not exist"
        case EdgeAdded():
            missing = [n for n in (m.source, m.target) if n not in nodes]
            return f"its end {missing[0]} does not exist" if missing else None
        case EdgeDeleted():
            return (
                None
                if state.edge_between(m.source, m.type, m.target) == m.id
                else f"edge {m.id} does not exist"
            )
        case NodesMerged():
            missing = [n for n in (m.id, m.into) if n not in nodes]
            if missing:
                return f"node {missing[0]} does not exist"
            gone = [e.id for e in m.edges if state.edge_between(e.source, e.type, e.target) != e.id]
            return f"edge {gone[0]} does not exist" if gone else None


def _fresh(store: SessionStore, session_id: str) -> tuple[GraphState, Any]:
    from igg.request.load import build_state

    request = store.request(session_id)
    state, _ = build_state(request.model_copy(update={"seed_data": None}))
    return state, request


def undo(store: SessionStore, session_id: str, to_iteration: int, *, owner: str | None = None) -> UndoStep:
    """Roll the graph back to how it was after ``to_iteration`` (0: the start), committed as an ``undo`` step
    holding the inverse mutations; returns the step (``step`` and ``mutations`` say where and how much).
    Refuses a session still running, open in another live process (``owner``: the caller's own owner token,
    e.g. a workspace's), or with a plan waiting for review."""
    info = store.session(session_id)
    if info.status == "running" or (
        info.status == "open" and owner_alive(info.owner) and info.owner != owner
    ):
        raise SessionBusy(
            f"session {session_id!r} is being run by a live process; undo it after the run ends",
            session_id=session_id,
        )
    pending, _ = store.review_state(session_id)
    if info.status == "awaiting_review" or (pending is not None and pending.get("state") == "pending"):
        # the plan was checked against this graph: approving it must still hold
        raise SessionRefused(
            f"session {session_id!r} has a plan waiting for review; decide it first (approve or "
            "reject it), then undo",
            session_id=session_id,
        )
    target = store.step_of_iteration(session_id, to_iteration)
    _, state, last = store.load_state(session_id)
    if target >= last:
        raise SessionRefused(
            f"nothing to undo: iteration {to_iteration} is the last step of session {session_id!r}",
            session_id=session_id,
        )
    later = [m for _, m in store.mutations(session_id, after_step=target)]
    for m in reversed(later):
        state.revert_mutation(m)
    inverse = state.take_journal()
    step = UndoStep(
        to_iteration=to_iteration,
        to_step=target,
        reasoning=f"undo to iteration {to_iteration} (reverted steps {target + 1}..{last})",
    )
    data = step_data(step)
    number = store.commit_step(
        session_id,
        kind="undo",
        record=data,
        mutations=inverse,
        state=state,
        snapshot=True,
        after=last,
        owner=owner,
    )
    step.step, step.mutations = number, len(inverse)
    return step


def diff(store: SessionStore, session_id: str, a: int, b: int) -> list[Change]:
    """What changed between the graph after iteration ``a`` and after iteration ``b`` (0: the start)."""
    step_a, step_b = store.step_of_iteration(session_id, a), store.step_of_iteration(session_id, b)
    lo, hi = min(step_a, step_b), max(step_a, step_b)
    first: dict[str, Effect] = {}
    last: dict[str, Effect] = {}
    for _, m in store.mutations(session_id, after_step=lo, upto_step=hi):
        for effect in m.effects():
            first.setdefault(effect.element, effect)
            last[effect.element] = effect
    changes = []
    for element, e0 in first.items():
        e1 = last[element]
        before, after = e0.before, e1.after
        ends_before, ends_after = e0.ends_before, e1.ends_after
        if step_a > step_b:
            before, after, ends_before, ends_after = after, before, ends_after, ends_before
        if before is None and after is None:
            continue
        if before is None:
            change = "added"
        elif after is None:
            change = "deleted"
        elif before == after and ends_before == ends_after:
            continue  # an edge whose ends moved (a merge) did change
        else:
            change = "changed"
        ends = ends_after or ends_before if e0.kind == "edge" else None
        changes.append(
            Change(
                kind=e0.kind,
                element=element,
                change=change,
                type=e1.type or e0.type or "",
                before=before,
                after=after,
                ends=ends,
            )
        )
    untyped = [c.element for c in changes if not c.type]
    if untyped:
        types = {
            e.element: e.type
            for _, m in store.element_history(session_id, untyped)
            for e in m.effects()
            if e.type
        }
        for c in changes:
            c.type = c.type or types.get(c.element, "")
    order = {"node": 0, "edge": 1}
    return sorted(changes, key=lambda c: (order[c.kind], c.change, _num(c.element)))


def _num(element: str) -> tuple[int, str]:
    digits = element[1:]
    return (int(digits), element) if digits.isdigit() else (1 << 62, element)


def resolve(store: SessionStore, session_id: str, ref: str) -> list[str]:
    """Element ids a reference names: a node or edge id, or a node's identity value (e.g. its name)."""
    if store.element_history(session_id, [ref]):
        return [ref]
    request = store.request(session_id)
    keys = request.config.schema_.compile().identity_keys
    found: dict[str, None] = {}
    for element, m in store.added_nodes(session_id):
        typ: str | None = None
        match m:
            case NodeAdded(properties=props, type=typ) | NodesMerged(after=props, type=typ):
                pass
            case NodeUpdated(after=props):
                pass
            case _:
                continue
        wanted = keys.get(typ, ()) if typ else {k for ks in keys.values() for k in ks}
        if any(freeze(props.get(k)) == ref or str(props.get(k)) == ref for k in wanted):
            found[element] = None
    if not found:
        raise SessionRefused(
            f"nothing in session {session_id!r} matches {ref!r}: give a node id (n3), an edge id "
            "(e5) or a node's identity value such as its name"
        )
    return list(found)


def _edge_ends(m: Mutation) -> set[str]:
    """The nodes at the ends of the edges a mutation changed (before and after)."""
    return {
        n
        for e in m.effects()
        if e.kind == "edge"
        for ends in (e.ends_before, e.ends_after)
        if ends
        for n in ends
    }


def explain(
    store: SessionStore, session_id: str, ref: str, *, edges: bool = True, known_at: float | None = None
) -> list[Touch]:
    """Every step that created, changed or deleted what ``ref`` names (and, with ``edges``, the edges of a
    node), with the agent's reasoning, the action's verdict, the chunk the context came from, when IGG was
    told and the element's valid time; ``known_at`` (seconds since the epoch): only the steps committed by
    then."""
    elements = resolve(store, session_id, ref)
    history = store.element_history(session_id, elements)
    if edges:
        nodes = set(elements)
        touching = {
            e.element
            for _, m in store.mutations(session_id)
            for e in m.effects()
            if e.kind == "edge"
            and any(ends and not nodes.isdisjoint(ends) for ends in (e.ends_before, e.ends_after))
        }
        if touching - nodes:
            history = store.element_history(session_id, sorted(set(elements) | touching, key=_num))
    steps: dict[int, StepInfo] = {s.step: s for s in store.steps(session_id)}
    named = {n for _, m in history for n in _edge_ends(m)}
    named |= {n for _, m in history if isinstance(m, NodesMerged) for n in (m.id, m.into)}
    names = node_names(store, session_id, named)
    events = []
    for step, m in history:
        info = steps[step]
        if known_at is not None and info.created_at > known_at:
            continue
        record = info.record
        events.append(
            Touch(
                step=step,
                kind=info.kind,
                iteration=info.iteration,
                op=m.op,
                element=m.id,
                detail=_detail(m, names),
                chunk=info.chunk,
                reasoning=str(record.get("reasoning") or ""),
                verdict=_verdict(m, record),
                evidence=_evidence(m),
                known_at=rfc3339(info.created_at),
                valid=_valid(m),
            )
        )
    return _rewrites(events, steps)


def _rewrites(events: list[Touch], steps: dict[int, StepInfo]) -> list[Touch]:
    """An edge deleted and added again under its id in one step (how UPDATE_EDGE and a supersession change an
    edge) as one ``update_edge`` change, showing the edge after it, with the verdict of the action that
    changed it (an UPDATE_EDGE's, or the one whose fact superseded it, naming the edge)."""
    out: list[Touch] = []
    for e in events:
        last = out[-1] if out else None
        if (
            e.op == "add_edge"
            and last is not None
            and last.op == "delete_edge"
            and last.element == e.element
            and last.step == e.step
        ):
            verdicts = [v for v in steps[e.step].record.get("verdicts") or [] if v.get("accepted")]
            e.op = "update_edge"
            e.verdict = next(
                (
                    v.get("message")
                    for v in verdicts
                    if f"({e.element})" in str(v.get("message")) and v.get("element") != e.element
                ),
                None,
            ) or next(
                (
                    v.get("message")
                    for v in verdicts
                    if v.get("action") == "UPDATE_EDGE" and v.get("element") == e.element
                ),
                None,
            )
            out[-1] = e
        else:
            out.append(e)
    return out


def _valid(m: Mutation) -> dict[str, str | None] | None:
    """The valid time an element has after the mutation (None: it has none, or is gone)."""
    match m:
        case NodeAdded() | EdgeAdded():
            after = m.properties
        case NodeUpdated():
            after = m.after
        case _:
            return None
    if VALID_FROM not in after and VALID_TO not in after:
        return None
    return {"from": after.get(VALID_FROM), "to": after.get(VALID_TO)}


def _evidence(m: Mutation) -> list[dict[str, Any]] | None:
    """The evidence a mutation brought: an added element's, or what an update added to a node's."""
    match m:
        case NodeAdded() | EdgeAdded():
            return m.provenance.get("evidence") if m.provenance else None
        case NodeUpdated():
            before = (m.before_prov or {}).get("evidence") or []
            after = (m.after_prov or {}).get("evidence") or []
            added = [e for e in after if e not in before]
            return added or None
    return None


def _verdict(m: Mutation, record: dict[str, Any]) -> str | None:
    """The message of the accepted verdict of the action that made this mutation, if the record has it."""
    verdicts = [v for v in record.get("verdicts") or [] if v.get("accepted")]
    match m:
        case NodesMerged():
            return next(
                (
                    v.get("message")
                    for v in verdicts
                    if v.get("action") == "MERGE_NODES" and v.get("element") == m.into
                ),
                None,
            )
        case EdgeDeleted():
            found = next((v.get("message") for v in verdicts if v.get("element") == m.id), None)
            # deleted with one of its nodes
            return found or next(
                (
                    v.get("message")
                    for v in verdicts
                    if v.get("action") == "DELETE_NODE" and v.get("element") in (m.source, m.target)
                ),
                None,
            )
        case _:
            return next((v.get("message") for v in verdicts if v.get("element") == m.id), None)


def node_names(store: SessionStore, session_id: str, nodes: set[str]) -> dict[str, str]:
    """``n3 "AuthService"``-style labels for node ids (the first string property they were added with)."""
    out = {}
    for _, m in store.element_history(session_id, sorted(nodes)):
        if isinstance(m, NodeAdded) and m.id not in out:
            first = next((v for v in m.properties.values() if isinstance(v, str)), None)
            out[m.id] = f'{m.id} "{first}"' if first is not None else m.id
    return out


def _detail(m: Mutation, names: dict[str, str] | None = None) -> str:
    names = names or {}
    match m:
        case NodeUpdated():
            return _changed(m.before, m.after)
        case NodesMerged():
            moved = m.moved
            return (
                f"merged {names.get(m.id, m.id)} into {names.get(m.into, m.into)}: {moved}"
                f" edge{'s' * (moved != 1)} moved, {len(m.edges) - moved} collapsed;"
                f" {_changed(m.before, m.after)}"
            )
        case EdgeAdded() | EdgeDeleted():
            props = _props(m.properties)
            ends = f"{names.get(m.source, m.source)} -{m.type}-> {names.get(m.target, m.target)}"
            return ends + (f" {{{props}}}" if props else "")
        case NodeAdded() | NodeDeleted():
            return f"{m.type} {{{_props(m.properties)}}}"


def _props(properties: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in properties.items())


def _changed(before: dict[str, Any], after: dict[str, Any]) -> str:
    parts = [f"{k}={after[k]!r}" for k in after if before.get(k, _MISSING) != after[k]]
    parts += [f"-{k}" for k in before if k not in after]
    return f"{', '.join(parts) or 'no property change'}"


_MISSING = object()
