"""A typed bulk difference, checked and applied by the act step's own rules: how ``igg map-code --update`` and
a document update change a graph.

An update of a code map changes hundreds of elements at once (every node and edge a fresh map would make
differently). It does not go around the act step: it is planned as a ``Difference`` (nothing changed yet), and
``apply_difference`` turns each element into the action it stands for (``DELETE_NODE``, ``UPDATE_NODE``,
``ADD_NODE``, ``DELETE_EDGE``, ``UPDATE_EDGE``, ``ADD_EDGE``) and runs it through that action's checks from
the one rule table (``igg.act.rules.RULES``, as the session's ``Actor`` holds them) and its apply function, in
the order below. The difference applies whole, or not at all: when any element is refused, everything applied
is reverted from the journal (ids included) and every refusal is returned, each named by its element and code.
Its mutations go to the state's journal like any action's, so undo, replay, diff and explain see the update as
any other step.

What differs from an agent's response, on purpose: the elements name nodes by id or by their index in
``add_nodes`` (nothing to resolve, so no near-duplicate guard: the planner's identities are exact), and a
planned difference is one intent of a user, so the per-response budgets (``max_deletions_per_iteration``,
``max_actions_per_response``) do not apply. Every other rule does: types, patterns, required attributes,
property types, keys, lengths and counts, identity uniqueness, self-loops, seed protection,
``allow_deletions``, ``max_nodes`` and ``max_edges``. Under the built-in rules (an ``Actor`` with no extra
rule for them), each added node and edge without provenance of its own is first offered to the act step's
fast checks (``igg.act.fastadds``), which only ever accept; the rule chain decides the rest (a fresh code
map's 290,000 elements: 9.4 s -> 3.3 s). ``tests/unit/test_difference_property.py`` pins this path to the
general one, and its fast checks to its own rule chain.

Order of application (ids follow it, so an update gives the ids a fresh map gives): nodes removed, properties
set, nodes added, then the edges removed, the edges given other properties (``UPDATE_EDGE``: re-added under
their id, provenance stamped ``updated``), and the edges added in sorted order of their resolved ends.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from igg.act.context import PLAIN_NODE, CheckContext, EdgeAt, Ends, Rejection
from igg.act.counts import COUNTS
from igg.act.fastadds import Adds, planned_adds
from igg.act.rules import Checks
from igg.errors import Problem
from igg.models.actions import AddEdge, AddNode, DeleteEdge, DeleteNode, UpdateEdge, UpdateNode, constructed
from igg.models.verdicts import ErrorCode, Verdict

NodeRef = str | int
"""An existing node's id (``str``), or the index of a node in ``Difference.add_nodes`` (``int``)."""


@dataclass(kw_only=True)
class Difference:
    """Changes to a graph, planned against it and applied at once by ``apply_difference``. The properties of
    the nodes and edges it adds are handed over: the graph keeps those dicts themselves (change none of them
    once it is applied)."""

    remove_nodes: list[str] = field(default_factory=list)
    """Node ids to delete (their edges go with them)."""
    set_properties: list[tuple[str, dict[str, Any], list[str]]] = field(default_factory=list)
    """(node id, properties to set, property keys to remove)."""
    add_nodes: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    """(node type, properties), in the order their ids are given."""
    remove_edges: list[str] = field(default_factory=list)
    """Edge ids to delete (of nodes that stay)."""
    add_edges: list[tuple[NodeRef, str, NodeRef]] = field(default_factory=list)
    """(source, edge type, target); added in sorted order of their resolved (source id, type, target id)."""
    edge_properties: dict[tuple[NodeRef, str, NodeRef], dict[str, Any]] = field(default_factory=dict)
    """The properties of the added edges that have any, by their ``add_edges`` entry (a code map's edges carry
    their sites: ``igg.codemap.model.site_properties``)."""
    set_edge_properties: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    """(edge id, its properties whole) for edges that stay with other properties (a call moved to another
    line), applied as ``UPDATE_EDGE`` applies."""
    node_provenance: dict[NodeRef, dict[str, Any]] = field(default_factory=dict)
    """Provenance keys to record on a node (an added one by its index, or one given in ``set_properties``): a
    document update records the documents supporting each fact here (``igg.documents``)."""
    edge_provenance: dict[tuple[NodeRef, str, NodeRef] | str, dict[str, Any]] = field(default_factory=dict)
    """Provenance keys to record on an added edge (by its ``add_edges`` entry) or a changed one (by its
    id)."""
    sources: list[NodeRef] = field(default_factory=list)
    """Informational: the nodes whose outgoing edges the difference sets (not applied)."""

    def counts(self) -> dict[str, int]:
        """What it would change, as ``COUNTS`` name it (each element counted as planned)."""
        return dict(
            zip(
                COUNTS,
                (
                    len(self.add_nodes),
                    len(self.remove_nodes),
                    len(self.set_properties),
                    len(self.add_edges),
                    len(self.remove_edges),
                    len(self.set_edge_properties),
                ),
                strict=True,
            )
        )

    def __bool__(self) -> bool:
        return bool(
            self.remove_nodes
            or self.set_properties
            or self.add_nodes
            or self.remove_edges
            or self.add_edges
            or self.set_edge_properties
        )


class Step(Protocol):
    """How an action class is checked and applied (``igg.act.apply.Step``, as an ``Actor`` holds them)."""

    @property
    def checks(self) -> Checks[Any, Any]: ...

    @property
    def apply(self) -> Callable[[CheckContext, Any, Any, int], Verdict]: ...


@dataclass
class Applied:
    """What running a difference did: counts of what changed, and each element's verdict in the order
    applied."""

    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNTS, 0))
    verdicts: list[tuple[str, Verdict]] = field(default_factory=list)
    """(the element, e.g. ``add_edges[3]``, its verdict), in the order given; a verdict's ``index`` is its
    place among all the verdicts given."""
    keep_accepted: bool = True
    """False: an accepted element's verdict is counted, not kept (an apply or a check needs the refused
    ones alone; a fresh map of 50,000 files would otherwise hold 2.9 million verdicts and their messages
    beside its graph)."""
    given: int = 0
    """Verdicts given so far (the next one's ``index``)."""

    @property
    def problems(self) -> list[Problem]:
        """Every element refused, named by its element and code."""
        return [Problem(where, f"{v.code}: {v.message}") for where, v in self.verdicts if not v.accepted]

    def run(
        self, ctx: CheckContext, where: str, count: str, step: Step, action: Any, resolved: Any
    ) -> Verdict:
        """``action`` (standing for the element ``where``) through its checks and, when they pass, applied."""
        index = self.given
        checked = step.checks.run_resolved(ctx, action, resolved)
        if (
            checked.__class__ is tuple
        ):  # a check's rejection, or ``resolved`` itself: what the element names is gone
            verdict = Verdict(index, action.type, False, checked[0], checked[1])
        else:
            verdict = step.apply(ctx, action, checked, index)
            self.counts[count] += 1
        self._given(where, verdict)
        return verdict

    def took(self, where: str, count: str, verdict: Verdict) -> None:
        """An element the fast checks accepted and applied (``igg.act.fastadds``)."""
        self.counts[count] += 1
        self._given(where, verdict)

    def taken(self, count: str) -> None:
        """An element the fast checks accepted and applied, whose verdict is not kept (``keep_accepted``
        False: neither it nor its message is made, two and a half million of them at 50,000 files)."""
        self.counts[count] += 1
        self.given += 1

    def _given(self, where: str, verdict: Verdict) -> None:
        self.given += 1
        if self.keep_accepted or not verdict.accepted:
            self.verdicts.append((where, verdict))


def run_difference(
    ctx: CheckContext,
    diff: Difference,
    steps: Mapping[type, Step],
    *,
    fast: bool = False,
    keep_accepted: bool = True,
    consume: bool = False,
) -> Applied:
    """Each element of ``diff`` through its action's checks and apply function, in order (a refused element
    changes nothing; the others go on). Nothing is reverted here: see ``apply_difference``. ``fast``: the
    ``steps`` for ADD_NODE and ADD_EDGE are the built-in ones (``igg.act.fastadds.stands_for``), so an added
    node or edge without provenance of its own is checked by the fast checks first, which only ever accept
    (the rule chain decides the rest). ``keep_accepted``: see ``Applied``. ``consume``: the added edges are
    taken out of ``diff`` as they are run (its ``add_edges`` and ``edge_properties`` end empty), so the graph
    grows into their memory; ``diff`` cannot be run again."""
    ctx.planned = True
    try:
        out = Applied(keep_accepted=keep_accepted)
        state = ctx.state
        named = [*diff.remove_edges, *(edge for edge, _ in diff.set_edge_properties)]
        types = {edge: state.edge_ends(edge)[2]["type"] for edge in named if state.has_edge(edge)}
        adds = planned_adds(state, ctx.schema, ctx.limits) if fast else None
        _nodes(ctx, diff, steps, out)
        new_ids = _added(ctx, diff, steps, out, adds)
        _edges(ctx, diff, steps, out, types)
        _new_edges(ctx, diff, steps, out, new_ids, adds, consume)
        return out
    finally:
        ctx.provenance, ctx.planned = None, False


def _nodes(ctx: CheckContext, diff: Difference, steps: Mapping[type, Step], out: Applied) -> None:
    state = ctx.state
    for i, node in enumerate(diff.remove_nodes):
        out.run(
            ctx,
            f"remove_nodes[{i}]",
            "nodes_removed",
            steps[DeleteNode],
            constructed(DeleteNode, type="DELETE_NODE", node={}),
            _node(state, node),
        )
    for i, (node, changed, removed) in enumerate(diff.set_properties):
        ctx.provenance = diff.node_provenance.get(node)
        action = constructed(
            UpdateNode, type="UPDATE_NODE", node={}, properties=dict(changed), remove=list(removed)
        )
        out.run(ctx, f"set_properties[{i}]", "nodes_changed", steps[UpdateNode], action, _node(state, node))
    ctx.provenance = None


def _added(
    ctx: CheckContext, diff: Difference, steps: Mapping[type, Step], out: Applied, adds: Adds | None
) -> list[str | None]:
    """The nodes added: each one's id (None: refused)."""
    new_ids: list[str | None] = []
    step, provenance = steps[AddNode], diff.node_provenance
    for i, (label, props) in enumerate(diff.add_nodes):
        where, mine = f"add_nodes[{i}]", provenance.get(i)
        if adds is not None and not mine:
            verdict = adds.planned_node(label, props, out.given if out.keep_accepted else None)
            if isinstance(verdict, str):
                out.taken("nodes_added")
                new_ids.append(verdict)
                continue
            if verdict is not None:
                out.took(where, "nodes_added", verdict)
                new_ids.append(verdict.element)
                continue
        ctx.provenance = mine
        action = constructed(AddNode, type="ADD_NODE", label=label, properties=dict(props))
        verdict = out.run(ctx, where, "nodes_added", step, action, PLAIN_NODE)
        new_ids.append(verdict.element if verdict.accepted else None)
    ctx.provenance = None
    return new_ids


def _edges(
    ctx: CheckContext, diff: Difference, steps: Mapping[type, Step], out: Applied, types: dict[str, str]
) -> None:
    state = ctx.state
    for i, edge in enumerate(diff.remove_edges):
        label, at = _edge(state, edge, types)
        action = constructed(DeleteEdge, type="DELETE_EDGE", label=label, from_={}, to={})
        out.run(ctx, f"remove_edges[{i}]", "edges_removed", steps[DeleteEdge], action, at)
    for i, (edge, props) in enumerate(diff.set_edge_properties):
        label, at = _edge(state, edge, types)
        before = state.edge_ends(edge)[2]["properties"] if isinstance(at, EdgeAt) else {}
        ctx.provenance = diff.edge_provenance.get(edge)
        update = constructed(
            UpdateEdge,
            type="UPDATE_EDGE",
            label=label,
            from_={},
            to={},
            properties=dict(props),
            remove=[k for k in before if k not in props],
        )
        out.run(ctx, f"set_edge_properties[{i}]", "edges_changed", steps[UpdateEdge], update, at)
    ctx.provenance = None


def _new_edges(
    ctx: CheckContext,
    diff: Difference,
    steps: Mapping[type, Step],
    out: Applied,
    new_ids: list[str | None],
    adds: Adds | None,
    consume: bool,
) -> None:
    """The edges added, in sorted order of their resolved ends (an end refused or missing refuses its
    edge); taken out of ``diff`` when ``consume``."""
    state, resolved, step = ctx.state, [], steps[AddEdge]
    properties, provenance = diff.edge_properties, diff.edge_provenance
    for i, entry in enumerate(diff.add_edges):
        source, label, target = entry
        ends, missing = [], []
        for end in (source, target):
            if isinstance(end, int):
                new = new_ids[end] if 0 <= end < len(new_ids) else None
                ends.append(new or "")
                if new is None:
                    missing.append(
                        f"add_nodes[{end}] was not added"
                        if 0 <= end < len(new_ids)
                        else f"new node {end} is not in add_nodes"
                    )
            else:
                ends.append(end)
                if end not in state.nodes:
                    missing.append(f"node {end!r} is not in the graph")
        if missing:
            out.run(
                ctx,
                f"add_edges[{i}]",
                "edges_added",
                step,
                _added_edge(label, properties.get(entry) or {}),
                (ErrorCode.NODE_NOT_FOUND, "; ".join(missing)),
            )
        else:
            resolved.append((ends[0], label, ends[1], i, entry))
    if consume:
        diff.add_edges.clear()
    # sorted backwards (by ends, then place in the difference: the stable ascending order, reversed) and taken
    # from the end: each entry is freed as its edge is added, so the graph grows into their memory
    resolved.sort(key=lambda e: e[:4], reverse=True)
    last: tuple[Any, dict[str, Any]] = (None, {})  # the entry last taken out, and its properties
    keep = out.keep_accepted
    while resolved:
        source_id, label, target_id, i, entry = resolved.pop()
        mine = provenance.get(entry)
        if not consume:
            props = properties.get(entry) or {}
        elif entry == last[0]:  # an entry given twice: next to itself in this order
            props = last[1]
        else:
            props = properties.pop(entry, {})
            last = (entry, props)
        if adds is not None and not mine:
            verdict = adds.planned_edge(label, props, source_id, target_id, out.given if keep else None)
            if isinstance(verdict, str):
                out.taken("edges_added")
                continue
            if verdict is not None:
                out.took(f"add_edges[{i}]", "edges_added", verdict)
                continue
        ctx.provenance = mine
        out.run(
            ctx, f"add_edges[{i}]", "edges_added", step, _added_edge(label, props), Ends(source_id, target_id)
        )
    if consume:
        properties.clear()
    ctx.provenance = None


def _added_edge(label: str, properties: dict[str, Any]) -> AddEdge:
    return constructed(AddEdge, type="ADD_EDGE", label=label, from_={}, to={}, properties=dict(properties))


def _node(state: Any, node: str) -> str | Rejection:
    """A node named by id, or NODE_NOT_FOUND."""
    return node if node in state.nodes else (ErrorCode.NODE_NOT_FOUND, f"node {node!r} is not in the graph")


def _edge(state: Any, edge: str, types: dict[str, str]) -> tuple[str, EdgeAt | Rejection]:
    """An edge named by id: its type and where it is, or EDGE_NOT_FOUND (with the type it had when the
    difference began to apply, so the action's own checks run first, as an agent's would)."""
    if not state.has_edge(edge):
        return types.get(edge, ""), (ErrorCode.EDGE_NOT_FOUND, f"edge {edge!r} is not in the graph")
    source, target, data = state.edge_ends(edge)
    return data["type"], EdgeAt(edge, source, target)


def apply_difference(
    ctx: CheckContext, diff: Difference, steps: Mapping[type, Step], *, fast: bool = False
) -> tuple[dict[str, int], list[Problem]]:
    """Apply ``diff`` whole (counts of what changed), or change nothing (ids included) and return every
    problem (``fast``: see ``run_difference``)."""
    applied = _reverted(ctx, diff, steps, always=False, fast=fast, keep_accepted=False)
    problems = applied.problems
    return (dict.fromkeys(COUNTS, 0) if problems else applied.counts), problems


def apply_passing(
    ctx: CheckContext, diff: Difference, steps: Mapping[type, Step], *, fast: bool = False
) -> Applied:
    """Apply what of ``diff`` passes, and leave out what is refused (an added edge with a refused end too):
    the counts of what changed, and the verdicts of the refused alone. Nothing is reverted; ``diff`` is taken
    apart as it is applied (``run_difference``'s ``consume``), so it cannot be applied again. What
    ``apply_difference`` applies when nothing is refused, in one pass (a fresh static map leaves out what a
    copied schema refuses: ``igg.mapping.static``)."""
    return run_difference(ctx, diff, steps, fast=fast, keep_accepted=False, consume=True)


def check_difference(
    ctx: CheckContext, diff: Difference, steps: Mapping[type, Step], *, fast: bool = False
) -> list[Problem]:
    """Every rule an element of ``diff`` breaks (empty: it may be applied); the graph is left as it was."""
    return _reverted(ctx, diff, steps, always=True, fast=fast, keep_accepted=False).problems


def try_difference(
    ctx: CheckContext, diff: Difference, steps: Mapping[type, Step], *, fast: bool = False
) -> Applied:
    """Each element's verdict as if ``diff`` were applied (a review shows them); the graph is left as it
    was."""
    return _reverted(ctx, diff, steps, always=True, fast=fast, keep_accepted=True)


def _reverted(
    ctx: CheckContext,
    diff: Difference,
    steps: Mapping[type, Step],
    *,
    always: bool,
    fast: bool,
    keep_accepted: bool,
) -> Applied:
    """``run_difference``, its mutations reverted (and the id counters restored) when ``always`` or when any
    element was refused."""
    state = ctx.state
    mark, counters, deletions = len(state.journal), state.id_counters, ctx.deletions
    applied = run_difference(ctx, diff, steps, fast=fast, keep_accepted=keep_accepted)
    if always or any(not v.accepted for _, v in applied.verdicts):
        done = state.journal[mark:]
        for m in reversed(done):
            state.revert_mutation(m)
        del state.journal[mark:]
        state.restore_id_counters(*counters)
        ctx.deletions = deletions
    return applied


def difference_to_json(diff: Difference) -> dict[str, Any]:
    """``diff`` as JSON values (a review plan keeps a planned difference whole: ``difference_from_json``)."""
    return {
        "remove_nodes": list(diff.remove_nodes),
        "set_properties": [[n, props, list(gone)] for n, props, gone in diff.set_properties],
        "add_nodes": [[label, props] for label, props in diff.add_nodes],
        "remove_edges": list(diff.remove_edges),
        "add_edges": [list(entry) for entry in diff.add_edges],
        "edge_properties": [[list(entry), props] for entry, props in diff.edge_properties.items()],
        "set_edge_properties": [[e, props] for e, props in diff.set_edge_properties],
        "node_provenance": [[ref, prov] for ref, prov in diff.node_provenance.items()],
        "edge_provenance": [
            [list(key) if isinstance(key, tuple) else key, prov] for key, prov in diff.edge_provenance.items()
        ],
    }


def difference_from_json(data: Mapping[str, Any]) -> Difference:
    """The difference ``difference_to_json`` gave."""

    def entry(value: list[Any]) -> tuple[NodeRef, str, NodeRef]:
        return (value[0], str(value[1]), value[2])

    return Difference(
        remove_nodes=[str(n) for n in data.get("remove_nodes", ())],
        set_properties=[(str(n), dict(p), list(g)) for n, p, g in data.get("set_properties", ())],
        add_nodes=[(str(label), dict(p)) for label, p in data.get("add_nodes", ())],
        remove_edges=[str(e) for e in data.get("remove_edges", ())],
        add_edges=[entry(e) for e in data.get("add_edges", ())],
        edge_properties={entry(e): dict(p) for e, p in data.get("edge_properties", ())},
        set_edge_properties=[(str(e), dict(p)) for e, p in data.get("set_edge_properties", ())],
        node_provenance={ref: dict(p) for ref, p in data.get("node_provenance", ())},
        edge_provenance={
            (entry(key) if isinstance(key, list) else str(key)): dict(p)
            for key, p in data.get("edge_provenance", ())
        },
    )


__all__ = [
    "COUNTS",
    "Applied",
    "Difference",
    "NodeRef",
    "Step",
    "apply_difference",
    "apply_passing",
    "check_difference",
    "difference_from_json",
    "difference_to_json",
    "run_difference",
    "try_difference",
]
