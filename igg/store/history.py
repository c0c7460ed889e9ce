"""What the stored history answers: replay, undo, the diff between two iterations, and provenance (explain).

All of it works from the stored mutations: a node or edge's history is the list of mutations that touched
its id, the diff between two iterations is the net effect of the mutations between them, and an undo is the
inverse of the mutations after the target iteration, committed as a step of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from igg.errors import SessionBusy, SessionRefused
from igg.graph.state import GraphState, Mutation
from igg.models.common import freeze
from igg.store import codec
from igg.store.store import SessionStore, StepInfo, owner_alive


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
                report.problems.append(f"step {s.step}: stored mutation {m.get('op')} {m.get('id')} does not apply: "
                                       f"{problem}")
                return report
            state.apply_mutation(m)
        state.take_journal()
        if (state.node_count, state.edge_count) != (s.nodes, s.edges):
            report.problems.append(f"step {s.step}: {state.node_count} nodes/{state.edge_count} edges after replay, "
                                   f"{s.nodes}/{s.edges} stored")
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
    op, element = m.get("op"), m.get("id")
    nodes = state.nodes
    if op == "add_node":
        return f"node {element} already exists" if element in nodes else None
    if op in ("delete_node", "update_node"):
        return None if element in nodes else f"node {element} does not exist"
    if op == "add_edge":
        missing = [n for n in (m.get("from"), m.get("to")) if n not in nodes]
        return f"its end {missing[0]} does not exist" if missing else None
    if op == "delete_edge":
        return None if state.edge_between(str(m.get("from")), str(m.get("type")), str(m.get("to"))) == element else \
            f"edge {element} does not exist"
    return f"unknown operation {op!r}"


def _fresh(store: SessionStore, session_id: str) -> tuple[GraphState, Any]:
    from igg.compile import build_state

    request = store.request(session_id)
    state, _ = build_state(request.model_copy(update={"seed_data": None}))
    return state, request


def undo(store: SessionStore, session_id: str, to_iteration: int, *, owner: str | None = None) -> tuple[int, int]:
    """Roll the graph back to how it was after ``to_iteration`` (0: the start), committed as an ``undo`` step
    holding the inverse mutations. Returns (step, number of mutations). Refuses a session still running, or
    open in another live process (``owner``: the caller's own owner token, e.g. a workspace's)."""
    info = store.session(session_id)
    if info.status == "running" or (info.status == "open" and owner_alive(info.owner) and info.owner != owner):
        raise SessionBusy(f"session {session_id!r} is being run by a live process ({info.owner}); "
                          "undo it after the run ends", session_id=session_id)
    target = store.step_of_iteration(session_id, to_iteration)
    _, state, last = store.load_state(session_id)
    if target >= last:
        raise SessionRefused(f"nothing to undo: iteration {to_iteration} is the last step of session {session_id!r}")
    later = [m for _, m in store.mutations(session_id, after_step=target)]
    for m in reversed(later):
        state.revert_mutation(m)
    inverse = state.take_journal()
    record = {"kind": "undo", "to_iteration": to_iteration, "to_step": target,
              "reasoning": f"undo to iteration {to_iteration} (reverted steps {target + 1}..{last})"}
    step = store.commit_step(session_id, kind="undo", record=record, mutations=inverse, state=state, snapshot=True)
    return step, len(inverse)


@dataclass(kw_only=True)
class Change:
    """The net change of one node or edge between two points of a session."""

    kind: str
    """``node`` or ``edge``."""
    element: str
    change: str
    """``added``, ``deleted`` or ``changed``."""
    type: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    ends: tuple[str, str] | None = None
    """(from, to) for an edge."""

    def to_dict(self) -> dict[str, Any]:
        out = {"kind": self.kind, "element": self.element, "change": self.change, "type": self.type,
               "before": self.before, "after": self.after}
        if self.ends:
            out["from"], out["to"] = self.ends
        return out


def diff(store: SessionStore, session_id: str, a: int, b: int) -> list[Change]:
    """What changed between the graph after iteration ``a`` and after iteration ``b`` (0: the start)."""
    step_a, step_b = store.step_of_iteration(session_id, a), store.step_of_iteration(session_id, b)
    lo, hi = min(step_a, step_b), max(step_a, step_b)
    first: dict[str, Mutation] = {}
    last: dict[str, Mutation] = {}
    for _, m in store.mutations(session_id, after_step=lo, upto_step=hi):
        first.setdefault(m["id"], m)
        last[m["id"]] = m
    changes = []
    for element, m0 in first.items():
        m1 = last[element]
        before, after = _before(m0), _after(m1)
        if step_a > step_b:
            before, after = after, before
        kind = "edge" if m0["op"].endswith("_edge") else "node"
        if before is None and after is None:
            continue
        if before is None:
            change = "added"
        elif after is None:
            change = "deleted"
        elif before == after and (kind == "node" or (m0["from"], m0["to"]) == (m1["from"], m1["to"])):
            continue  # an edge whose ends moved (MERGE_NODES rewires by delete + add) did change
        else:
            change = "changed"
        ref = m1 if m1["op"] != "update_node" else m0
        typ = ref.get("type") or ""
        ends = (ref["from"], ref["to"]) if kind == "edge" else None
        changes.append(Change(kind=kind, element=element, change=change, type=typ, before=before, after=after,
                              ends=ends))
    untyped = [c.element for c in changes if not c.type]
    if untyped:
        types = {m["id"]: m["type"] for _, m in store.element_history(session_id, untyped) if m.get("type")}
        for c in changes:
            c.type = c.type or types.get(c.element, "")
    order = {"node": 0, "edge": 1}
    return sorted(changes, key=lambda c: (order[c.kind], c.change, _num(c.element)))


def _before(m: Mutation) -> dict[str, Any] | None:
    op = m["op"]
    if op.startswith("add_"):
        return None
    before: dict[str, Any] = m["before"] if op == "update_node" else m["properties"]
    return before


def _after(m: Mutation) -> dict[str, Any] | None:
    op = m["op"]
    if op.startswith("delete_"):
        return None
    after: dict[str, Any] = m["after"] if op == "update_node" else m["properties"]
    return after


def _num(element: str) -> tuple[int, str]:
    digits = element[1:]
    return (int(digits), element) if digits.isdigit() else (1 << 62, element)


@dataclass(kw_only=True)
class Event:
    """One mutation of an element with the step that made it and why (the agent's reasoning, the verdict)."""

    step: int
    kind: str
    iteration: int | None
    op: str
    element: str
    detail: str
    chunk: str | None
    reasoning: str
    verdict: str | None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def resolve(store: SessionStore, session_id: str, ref: str) -> list[str]:
    """Element ids a reference names: a node or edge id, or a node's identity value (e.g. its name)."""
    if store.element_history(session_id, [ref]):
        return [ref]
    request = store.request(session_id)
    keys = request.config.schema_.compile().identity_keys
    found: dict[str, None] = {}
    for element, m in store.added_nodes(session_id):
        props = m["properties"] if m["op"] == "add_node" else m["after"]
        typ = m.get("type")
        wanted = keys.get(typ, ()) if typ else {k for ks in keys.values() for k in ks}
        if any(freeze(props.get(k)) == ref or str(props.get(k)) == ref for k in wanted):
            found[element] = None
    if not found:
        raise SessionRefused(f"nothing in session {session_id!r} matches {ref!r}: give a node id (n3), an edge id "
                           "(e5) or a node's identity value such as its name")
    return list(found)


def explain(store: SessionStore, session_id: str, ref: str, *, edges: bool = True) -> list[Event]:
    """Every step that created, changed or deleted what ``ref`` names (and, with ``edges``, the edges of a
    node), with the agent's reasoning, the action's verdict, and the chunk the context came from."""
    elements = resolve(store, session_id, ref)
    history = store.element_history(session_id, elements)
    if edges:
        nodes = set(elements)
        touching = {m["id"] for _, m in store.mutations(session_id)
                    if m["op"].endswith("_edge") and (m["from"] in nodes or m["to"] in nodes)}
        if touching - nodes:
            history = store.element_history(session_id, sorted(set(elements) | touching, key=_num))
    steps: dict[int, StepInfo] = {s.step: s for s in store.steps(session_id)}
    names = node_names(store, session_id, {n for _, m in history if m["op"].endswith("_edge") for n in (m["from"], m["to"])})
    events = []
    for step, m in history:
        info = steps[step]
        record = info.record
        verdicts = [v for v in record.get("verdicts") or [] if v.get("accepted")]
        verdict = next((v.get("message") for v in verdicts if v.get("element") == m["id"]), None)
        if verdict is None and m["op"] == "delete_edge":  # deleted with one of its nodes
            verdict = next((v.get("message") for v in verdicts if v.get("action") == "DELETE_NODE"
                            and v.get("element") in (m["from"], m["to"])), None)
        events.append(Event(step=step, kind=info.kind, iteration=info.iteration, op=m["op"], element=m["id"],
                            detail=_detail(m, names), chunk=info.chunk, reasoning=str(record.get("reasoning") or ""),
                            verdict=verdict))
    return events


def node_names(store: SessionStore, session_id: str, nodes: set[str]) -> dict[str, str]:
    """``n3 "AuthService"``-style labels for node ids (the first string property they were added with)."""
    out = {}
    for _, m in store.element_history(session_id, sorted(nodes)):
        if m["op"] == "add_node" and m["id"] not in out:
            first = next((v for v in m["properties"].values() if isinstance(v, str)), None)
            out[m["id"]] = f'{m["id"]} "{first}"' if first is not None else m["id"]
    return out


def _detail(m: Mutation, names: dict[str, str] | None = None) -> str:
    names = names or {}
    op = m["op"]
    if op == "update_node":
        before, after = m["before"], m["after"]
        parts = [f"{k}={after[k]!r}" for k in after if before.get(k, _MISSING) != after[k]]
        parts += [f"-{k}" for k in before if k not in after]
        return f"{', '.join(parts) or 'no property change'}"
    props = ", ".join(f"{k}={v!r}" for k, v in m["properties"].items())
    if op.endswith("_edge"):
        ends = f"{names.get(m['from'], m['from'])} -{m['type']}-> {names.get(m['to'], m['to'])}"
        return ends + (f" {{{props}}}" if props else "")
    return f"{m['type']} {{{props}}}"


_MISSING = object()
