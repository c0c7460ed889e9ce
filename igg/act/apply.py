"""The act step: check each action against the rules, apply the ones that pass, give every action a verdict.

``per_action`` mode (the default) applies each valid action in order, so an edge may reference a node added
earlier in the same response. ``atomic`` mode applies a response whole or not at all: when any action is
rejected, the ones already applied are undone from the journal and marked ``ROLLED_BACK``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from igg.act.context import CheckContext, EdgeAt, Ends, NewNode
from igg.act.difference import (
    Applied,
    Difference,
    apply_difference,
    apply_passing,
    check_difference,
    try_difference,
)
from igg.act.entities import Role, TypedEnd, type_end, typed_edge
from igg.act.evidence import Grounded, Grounder, warned
from igg.act.fastadds import applies, apply_adds, stands_for
from igg.act.merge import apply_merge, apply_query, apply_update_edge
from igg.act.rules import RULES, Checks, Rule, idle_checks
from igg.act.validtime import (
    edge_properties,
    new_node_properties,
    split_times,
    supersede_edges,
    timed,
    updated_node_properties,
)
from igg.errors import Problem
from igg.graph.collector import collector_paused
from igg.graph.state import GraphState
from igg.models.actions import (
    AddEdge,
    AddNode,
    AnyAction,
    DeleteEdge,
    DeleteNode,
    MergeNodes,
    QueryAction,
    UnreadableAction,
    UpdateEdge,
    UpdateNode,
    constructed,
)
from igg.models.document import GraphDocument
from igg.models.request import Constraints
from igg.models.schema import CompiledSchema
from igg.models.verdicts import ErrorCode, Verdict

ApplyMode = Literal["per_action", "atomic"]

A = TypeVar("A")
R = TypeVar("R")


def add_node(ctx: CheckContext, a: AddNode, new: NewNode, index: int) -> Verdict:
    """ADD_NODE: add it (its provenance names the near-duplicates it was accepted past, if any)."""
    state = ctx.state
    provenance = None
    if new.distinct_from:
        provenance = {**state.stamp(), "distinct_from": new.distinct_from}
    if ctx.evidence is not None:
        provenance = {**(provenance or state.stamp()), "evidence": ctx.evidence}
    if ctx.provenance:
        provenance = {**(provenance or state.stamp()), **ctx.provenance}
    # a planned difference gives a node's stored properties whole (its bounds and history decided)
    properties = a.properties if ctx.planned else new_node_properties(ctx, a)
    nid = state.add_node(a.label, properties, provenance=provenance)
    message = f"added {state.describe(nid)} as {nid}"
    if new.note:
        message += f"; {new.note}"
    return Verdict(index, "ADD_NODE", True, None, message, nid, new.warning)


def add_edge(ctx: CheckContext, a: AddEdge, ends: Ends, index: int) -> Verdict:
    """ADD_EDGE: add it between the resolved ends."""
    state = ctx.state
    provenance = None if ctx.evidence is None else {**state.stamp(), "evidence": ctx.evidence}
    if ctx.provenance:
        provenance = {**(provenance or state.stamp()), **ctx.provenance}
    eid = state.add_edge(ends.source, a.label, ends.target, edge_properties(a), provenance=provenance)
    message = f"added {a.label} edge {eid} ({ends.source} -> {ends.target})"
    if a.label in ctx.schema.one_at_a_time and not ctx.planned:  # a plan bounds its edges itself
        notes = supersede_edges(state, ends.source, a.label, eid)
        if notes:
            return Verdict(
                index, "ADD_EDGE", True, None, f"{message}; {'; '.join(notes)}", eid, ErrorCode.SUPERSEDED
            )
    return Verdict(index, "ADD_EDGE", True, None, message, eid)


def update_node(ctx: CheckContext, a: UpdateNode, node: str, index: int) -> Verdict:
    """UPDATE_NODE: set and remove the properties."""
    state = ctx.state
    if ctx.planned or (not timed(a) and state.node_type(node) not in ctx.schema.timed_properties):
        state.update_node(node, a.properties, a.remove, evidence=ctx.evidence, provenance=ctx.provenance)
        return Verdict(index, "UPDATE_NODE", True, None, f"updated {state.describe(node)} ({node})", node)
    properties, notes = updated_node_properties(ctx, a, node)
    state.update_node(node, properties, a.remove, evidence=ctx.evidence, provenance=ctx.provenance)
    message = f"updated {state.describe(node)} ({node})"
    if notes:
        return Verdict(
            index, "UPDATE_NODE", True, None, f"{message}; {'; '.join(notes)}", node, ErrorCode.SUPERSEDED
        )
    return Verdict(index, "UPDATE_NODE", True, None, message, node)


def delete_node(ctx: CheckContext, a: DeleteNode, node: str, index: int) -> Verdict:
    """DELETE_NODE: delete it and its edges (one deletion)."""
    state = ctx.state
    name = state.describe(node)
    removed = state.delete_node(node)
    ctx.deletions += 1
    return Verdict(
        index, "DELETE_NODE", True, None, f"deleted {name} ({node}) and its {len(removed)} edges", node
    )


def delete_edge(ctx: CheckContext, a: DeleteEdge, at: EdgeAt, index: int) -> Verdict:
    """DELETE_EDGE: delete the edge found."""
    ctx.state.delete_edge(at.edge)
    ctx.deletions += 1
    return Verdict(index, "DELETE_EDGE", True, None, f"deleted {a.label} edge {at.edge}", at.edge)


@dataclass(frozen=True, slots=True)
class Step(Generic[A, R]):
    """How one action model class is checked (``Checks``) and applied once it passes."""

    checks: Checks[A, R]
    apply: Callable[[CheckContext, A, R, int], Verdict]

    def with_rules(self, extra: Sequence[Rule[A, R]]) -> Step[A, R]:
        """This step with ``extra`` rules after the built-in checks."""
        return Step(self.checks.with_rules(extra), self.apply)


STEPS: dict[type, Step[Any, Any]] = {
    AddNode: Step(RULES[AddNode], add_node),
    AddEdge: Step(RULES[AddEdge], add_edge),
    UpdateNode: Step(RULES[UpdateNode], update_node),
    DeleteNode: Step(RULES[DeleteNode], delete_node),
    DeleteEdge: Step(RULES[DeleteEdge], delete_edge),
    UpdateEdge: Step(RULES[UpdateEdge], apply_update_edge),
    MergeNodes: Step(RULES[MergeNodes], apply_merge),
    QueryAction: Step(RULES[QueryAction], apply_query),
}
"""Each action model class's checks and apply function: the act step dispatches on the class."""


class Actor:
    """Validates and applies actions to a ``GraphState`` under one schema and one set of limits."""

    def __init__(
        self,
        schema: CompiledSchema,
        limits: Constraints,
        mode: ApplyMode = "per_action",
        extra_rules: Mapping[type, Sequence[Rule[Any, Any]]] | None = None,
        grounder: Grounder | None = None,
        entity_typing: bool = False,
    ) -> None:
        """``extra_rules`` run after the built-in rules of their action model class (e.g. the code agent's
        grounding rule, UNGROUNDED_SYMBOL); each is a ``Rule``, ``(ctx, action, resolved)``, returning None or
        a ``(code, message)`` rejection (``resolved``: see ``igg.act.context``). ``grounder`` locates actions'
        evidence in the request's context under its grounding policy (``igg.act.evidence``), once an action
        has passed its rules; without one, evidence is not located or kept. ``entity_typing``: an ADD_EDGE end
        given without a label is typed by the edge type's patterns, and added when it names no node of such a
        type (``igg.act.entities``; ``config.entity_typing: "schema"``)."""
        self.schema = schema
        self.entity_typing = entity_typing
        self.limits = limits
        self.mode = mode
        self.grounder = grounder
        extra = extra_rules or {}
        unknown = [t for t in extra if t not in STEPS]
        if unknown:
            raise TypeError(
                f"extra_rules for {', '.join(map(repr, unknown))}: not action model classes; "
                f"allowed: {', '.join(t.__name__ for t in STEPS)}"
            )
        idle = idle_checks(schema, limits)
        self.steps: dict[type, Step[Any, Any]] = {
            t: Step(step.checks.without(idle).with_rules(extra.get(t, ())), step.apply)
            for t, step in STEPS.items()
        }
        """Each action model class's checks (extra rules included) and apply function."""
        self._dispatch = {t: (step.checks.run, step.apply) for t, step in self.steps.items()}
        self._fast = not entity_typing and stands_for(
            {t: step.checks for t, step in self.steps.items()}, schema, limits
        )

    def fast(self, items: Sequence[AnyItem]) -> bool:
        """Whether ``apply`` takes the fast path (``igg.act.fastadds``) for ``items``: all ADD_NODE / ADD_EDGE
        read whole, under the built-in checks only (no extra rules for them)."""
        return self._fast and applies(items, self.limits)

    def apply(
        self, state: GraphState, items: Sequence[AnyItem], *, cursor: int | None = None
    ) -> list[Verdict]:
        """Apply one response's actions (models or ``UnreadableAction``s) in order; one verdict per item.
        ``cursor``: the loop's position in the context walk (its chunk is searched first for evidence)."""
        if self.grounder is not None:
            self.grounder.begin_response()
        with bulk(len(items)):
            mark, counters = len(state.journal), state.id_counters
            if self.fast(items):  # all ADD_NODE / ADD_EDGE: the same checks, shared across the response
                verdicts = apply_adds(
                    state,
                    items,
                    self.schema,
                    self.limits,
                    lambda s, i: self._apply(s, i, cursor),
                    self.grounder,
                    cursor,
                )
            else:
                verdicts = self._apply(state, items, cursor)
            if self.mode == "atomic" and any(not v.accepted for v in verdicts):
                _roll_back(state, mark, verdicts)
                state.restore_id_counters(*counters)  # a response rolled back changes nothing, ids included
            return verdicts

    def _apply(self, state: GraphState, items: Sequence[AnyItem], cursor: int | None = None) -> list[Verdict]:
        """The general path: each item through its class's rule chain, in order (no atomic roll-back)."""
        ctx = CheckContext(state=state, schema=self.schema, limits=self.limits)
        grounder = self.grounder
        cap = self.limits.max_actions_per_response
        verdicts: list[Verdict] = []
        append = verdicts.append
        dispatch = self._dispatch
        typing = self.entity_typing
        for index, item in enumerate(items):
            if isinstance(item, UnreadableAction):
                append(Verdict(index, item.action_type, False, item.code, item.message))
                continue
            check, act = dispatch[item.__class__]
            if index >= cap:
                append(
                    Verdict(
                        index,
                        item.type,
                        False,
                        ErrorCode.TOO_MANY_ACTIONS,
                        f"only the first {cap} actions of a response are processed "
                        f"(max_actions_per_response={cap}); send this one again in the next response.",
                    )
                )
                continue
            if typing and item.__class__ is AddEdge:
                append(self._typed(ctx, item, index, cursor))
                continue
            resolved = check(ctx, item)
            if resolved.__class__ is tuple:
                append(Verdict(index, item.type, False, resolved[0], resolved[1]))
            elif grounder is not None and grounder.active(item):
                append(_grounded(ctx, act, item, resolved, index, grounder.ground(item, cursor)))
            else:
                append(act(ctx, item, resolved, index))
        return verdicts

    def _one(self, ctx: CheckContext, item: Any, index: int, cursor: int | None) -> Verdict:
        """One action through its class's rule chain, grounded when the policy asks, and applied."""
        check, act = self._dispatch[item.__class__]
        resolved = check(ctx, item)
        if resolved.__class__ is tuple:
            return Verdict(index, item.type, False, resolved[0], resolved[1])
        grounder = self.grounder
        if grounder is not None and grounder.active(item):
            return _grounded(ctx, act, item, resolved, index, grounder.ground(item, cursor))
        return act(ctx, item, resolved, index)

    def _typed(self, ctx: CheckContext, a: AddEdge, index: int, cursor: int | None) -> Verdict:
        """An ADD_EDGE with its ends typed by the edge type's patterns (``igg.act.entities``): the nodes it
        names that are missing added first, as ADD_NODEs; one verdict, and nothing kept when any part is
        refused."""
        state = ctx.state
        mark = (len(state.journal), state.id_counters)
        ends: dict[Role, TypedEnd] = {}
        added: list[str] = []
        roles: tuple[Role, Role] = ("from", "to")
        for role in roles:
            other = ends["from"].label if role == "to" and "from" in ends else None
            given = (a.to if role == "from" else a.from_).get("label")
            end = type_end(ctx, a, role, other or (None if given is None else str(given)))
            if isinstance(end, tuple):
                return _taken_back(state, mark, Verdict(index, a.type, False, end[0], end[1]))
            if end is None:
                continue
            ends[role] = end
            if end.new is not None:
                made = self._one(ctx, end.new, index, cursor)
                if not made.accepted:
                    refused = Verdict(
                        index, a.type, False, made.code, f"{role}: the node to add: {made.message}"
                    )
                    return _taken_back(state, mark, refused)
                by = f"{a.label}'s patterns" if end.by == "patterns" else "its reference's label"
                added.append(f"{role}: {made.message}, typed by {by}")
        verdict = self._one(ctx, typed_edge(a, ends) if ends else a, index, cursor)
        if not verdict.accepted:
            return _taken_back(state, mark, verdict)
        if not added:
            return verdict
        return Verdict(
            index,
            a.type,
            True,
            None,
            f"{verdict.message}; {'; '.join(added)}",
            verdict.element,
            verdict.warning,
        )

    def apply_difference(
        self, state: GraphState, difference: Difference
    ) -> tuple[dict[str, int], list[Problem]]:
        """A bulk difference (``igg.act.difference``) through the same schema and limits as actions: applied
        whole (the counts), or not at all (every problem)."""
        ctx = CheckContext(state=state, schema=self.schema, limits=self.limits)
        return apply_difference(ctx, difference, self.steps, fast=self._fast)

    def apply_passing(self, state: GraphState, difference: Difference) -> Applied:
        """What of a bulk difference passes applied, the rest left out (``igg.act.difference.apply_passing``:
        ``difference`` is taken apart); the counts and the refused verdicts."""
        ctx = CheckContext(state=state, schema=self.schema, limits=self.limits)
        return apply_passing(ctx, difference, self.steps, fast=self._fast)

    def check_difference(self, state: GraphState, difference: Difference) -> list[Problem]:
        """Every problem ``apply_difference`` would find in ``difference``; the graph is left as it was."""
        ctx = CheckContext(state=state, schema=self.schema, limits=self.limits)
        return check_difference(ctx, difference, self.steps, fast=self._fast)

    def try_difference(self, state: GraphState, difference: Difference) -> Applied:
        """Each element's verdict as if ``difference`` were applied; the graph is left as it was."""
        ctx = CheckContext(state=state, schema=self.schema, limits=self.limits)
        return try_difference(ctx, difference, self.steps, fast=self._fast)

    def load_seed(self, state: GraphState, document: GraphDocument, path: str = "seed_data") -> list[Problem]:
        """Load a seed graph through the same rules as agent actions; returns every problem found.

        Nodes keep their document ids and become protected (see ``protect_seed_nodes``).
        """
        ctx = CheckContext(state=state, schema=self.schema, limits=self.limits)
        problems: list[Problem] = []
        node_checks: Checks[AddNode, NewNode] = RULES[AddNode]
        for i, node in enumerate(document.nodes):
            plain, times = split_times(node.properties)
            action = constructed(AddNode, type="ADD_NODE", label=node.type, properties=plain, **times)
            if node.id in state.nodes:
                problems.append(Problem(f"{path}.nodes[{i}].id", f"duplicate node id {node.id!r}"))
                continue
            outcome = node_checks.run(ctx, action)
            if isinstance(outcome, tuple):
                problems.append(Problem(f"{path}.nodes[{i}]", f"{outcome[0]}: {outcome[1]}"))
                continue
            state.add_node(
                node.type, node.properties, node.id, node.provenance or {"created": 0, "seed": True}
            )
            state.protected.add(node.id)
        edge_checks: Checks[AddEdge, Ends] = RULES[AddEdge]
        for i, edge in enumerate(document.edges):
            missing = [
                f"{end} {nid!r}"
                for end, nid in (("from", edge.from_), ("to", edge.to))
                if nid not in state.nodes
            ]
            if missing:
                problems.append(
                    Problem(
                        f"{path}.edges[{i}]",
                        f"{ErrorCode.NODE_NOT_FOUND}: no node with id "
                        f"{' and '.join(missing)} in the document",
                    )
                )
                continue
            if state.has_edge(edge.id):
                problems.append(Problem(f"{path}.edges[{i}].id", f"duplicate edge id {edge.id!r}"))
                continue
            plain, times = split_times(edge.properties)
            edge_action = constructed(
                AddEdge, type="ADD_EDGE", label=edge.type, from_={}, to={}, properties=plain, **times
            )
            # the ends are the document's ids, not references: only the checks before and after resolving run
            checked = edge_checks.run_resolved(ctx, edge_action, Ends(edge.from_, edge.to))
            if isinstance(checked, tuple):
                problems.append(Problem(f"{path}.edges[{i}]", f"{checked[0]}: {checked[1]}"))
                continue
            state.add_edge(
                edge.from_,
                edge.type,
                edge.to,
                edge.properties,
                edge.id,
                edge.provenance or {"created": 0, "seed": True},
            )
        state.take_journal()
        return problems


def _grounded(
    ctx: CheckContext,
    act: Callable[[CheckContext, Any, Any, int], Verdict],
    item: Any,
    resolved: Any,
    index: int,
    grounded: Grounded | tuple[ErrorCode, str],
) -> Verdict:
    """Apply an action that passed its rules with its located evidence (kept in its provenance), or reject it
    under the grounding policy; a ``warn`` verdict carries UNGROUNDED_EVIDENCE."""
    if not isinstance(grounded, Grounded):
        return Verdict(index, item.type, False, grounded[0], grounded[1])
    ctx.evidence = grounded.items
    try:
        verdict = act(ctx, item, resolved, index)
    finally:
        ctx.evidence = None
    return warned(verdict, grounded)


def _taken_back(state: GraphState, mark: tuple[int, tuple[int, int]], verdict: Verdict) -> Verdict:
    """``verdict`` (a refusal), once what its action changed since ``mark`` (a journal position and the id
    counters then) is undone, ids included."""
    applied = state.journal[mark[0] :]
    del state.journal[mark[0] :]
    for m in reversed(applied):
        state.revert_mutation(m)
    del state.journal[mark[0] :]
    state.restore_id_counters(*mark[1])
    return verdict


AnyItem = AnyAction | UnreadableAction
"""What ``Actor.apply`` takes: an action model, or the ``UnreadableAction`` an unreadable action became."""


@contextmanager
def bulk(size: int) -> Iterator[None]:
    """The collector paused (``collector_paused``) while a large batch (1,000 actions or more) is read or
    applied; a no-op for smaller ones."""
    if size < 1000:
        yield
        return
    with collector_paused():
        yield


def _roll_back(state: GraphState, mark: int, verdicts: list[Verdict]) -> None:
    applied = state.journal[mark:]
    del state.journal[mark:]
    for m in reversed(applied):
        state.revert_mutation(m)
    del state.journal[mark:]
    failed = ", ".join(f"#{v.index} ({v.code})" for v in verdicts if not v.accepted)
    for i, v in enumerate(verdicts):
        if v.accepted:
            verdicts[i] = Verdict(
                v.index,
                v.action,
                False,
                ErrorCode.ROLLED_BACK,
                f"valid, but not applied: the response is applied atomically and action "
                f"{failed} was rejected. Fix it and send the whole response again.",
            )


__all__ = ["STEPS", "Actor", "AnyItem", "ApplyMode", "Step", "bulk", "collector_paused"]
