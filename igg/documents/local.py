"""An update at the cost of what changed: the documents removed, changed and added, and those sharing facts
with them, folded again; every other fact left as it is.

The facts touched are those naming a removed or changed document in their provenance (``DocumentIndex``) and
the existing nodes the new answers add again or claim a property of. The documents folded again are the new
ones and every other supporter or claimant of a touched fact, closed over what the fold needs to decide them
the way a fresh build does: the sources of an existing edge a folded answer makes, and the documents whose
answers refer (by a value, the answer cache's ``mentions``) to a node that comes or goes, whose references may
now match it, or match several nodes, or none (their facts are touched too). References resolve against the
folded documents' nodes and the graph's untouched nodes (``fold``'s ``known``), as the whole fold resolves
them. Each touched fact then becomes what that fold makes of it (removed when nothing supports it any more); a
fact the fold makes that the graph lacks is added. The property test of ``tests/unit/test_documents.py``
checks after every update that the result is a fresh build's; the whole fold (``plan_documents``) is used when
a folded document's answers are not kept.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from igg.act.difference import Difference, NodeRef
from igg.documents.fold import Answer, Desired, NodeKey, action_of, fold
from igg.documents.index import index_of
from igg.graph.state import GraphState
from igg.models.actions import AddNode, UpdateNode

MAX_ROUNDS = 8
"""Rounds of closure before the caller falls back to folding the whole corpus."""


def _sources(provenance: dict[str, Any]) -> set[str]:
    return {*(provenance.get("documents") or ()), *(provenance.get("claimants") or ())}


def plan_local(
    state: GraphState,
    manifest: dict[str, str],
    gone: set[str],
    new: list[Answer],
    answers_of: Callable[[dict[str, str]], list[Answer] | None],
    referring: Callable[[dict[str, str], list[str]], set[str]],
    *,
    self_loops: bool = False,
) -> tuple[Difference, Desired] | None:
    """What turns ``state`` into the new corpus's graph: ``manifest`` is the new corpus (id -> hash), ``gone``
    the documents removed or changed, ``new`` the answers of the changed and added ones. None: a document's
    answers are not kept, or the closure did not settle (the caller folds the whole corpus)."""
    index = index_of(state)
    touched_nodes: set[str] = set()
    touched_edges: set[str] = set()
    for doc in gone:
        nodes, edges = index.mentioning(doc)
        touched_nodes.update(nodes)
        touched_edges.update(edges)
    fresh_docs = {doc for doc, _, _ in new}
    _touch_fresh(state, new, touched_nodes)

    def known(ref: dict[str, Any]) -> list[NodeKey]:
        """The nodes left as they are that a reference matches (as the whole fold would see them)."""
        return [_key(state, n) for n in state.find_nodes(ref) if n not in touched_nodes]

    folded = set(fresh_docs)
    interest = _Interest(state.schema.one_at_a_time)
    for _ in range(MAX_ROUNDS):
        need = folded | _sources_of(state, touched_nodes, touched_edges)
        interest.widen(state, touched_nodes, touched_edges, ())
        kept = answers_of({d: manifest[d] for d in sorted(need - fresh_docs) if d in manifest})
        if kept is None:
            return None
        kept = [(doc, chunk, interest.relevant(actions)) for doc, chunk, actions in kept]
        desired = fold(state.schema, [*new, *kept], self_loops=self_loops, known=known)
        extra = _edge_sharers(state, desired, fresh_docs, touched_edges)
        extra = (extra | _time_siblings(state, desired, touched_edges)) - need
        # a node that comes or goes changes what other documents' references match: fold them again too
        values = [
            str(v)
            for key, fact in desired.nodes.items()
            if state.find_identity(*key) is None
            for v in fact.properties.values()
            if isinstance(v, str | int | float)
        ]
        values += [
            str(v)
            for n in touched_nodes
            if _key(state, n) not in desired.nodes
            for v in state.nodes[n]["properties"].values()
            if isinstance(v, str | int | float)
        ]
        grew = False
        for doc in referring(manifest, values) if values else set():
            nodes, edges = index.mentioning(doc)
            if doc not in need or not (touched_nodes.issuperset(nodes) and touched_edges.issuperset(edges)):
                extra.add(doc)
                grew = True
                touched_nodes.update(nodes)
                touched_edges.update(edges)
        # settled when the fold kept every action naming a fact touched now, or a node that comes or goes
        settled = not interest.widen(state, touched_nodes, touched_edges, values)
        folded = need
        if not extra and not grew and settled:
            return _difference(state, desired, touched_nodes, touched_edges, fresh_docs), desired
        folded = need | extra
    return None


class _Interest:
    """What an unchanged document's action must name to bear on the facts an update touches: the values (as
    text) of the touched nodes and of the nodes that come or go (``nodes``), and of the ends of the touched
    edges (``ends``). Any other action makes or claims only facts left as they are, which the fold needs not
    make again (a reference to such a node still resolves to it: ``known``)."""

    def __init__(self, one_at_a_time: frozenset[str]) -> None:
        self.one_at_a_time = one_at_a_time
        """Edge types whose edges of one source bound each other: such an edge naming a touched edge's end as
        its source is kept (it may supersede another, or win or lose a conflict)."""
        self.nodes: set[str] = set()
        self.ends: set[str] = set()
        self.coming: set[str] = set()

    def widen(self, state: GraphState, nodes: set[str], edges: set[str], values: Sequence[str]) -> bool:
        """Add the touched facts' values and those of the nodes that come or go; whether anything was new."""
        found = _texts(state, nodes)
        ends: set[str] = set()
        for edge in edges:
            source, target, _ = state.edge_ends(edge)
            ends.update((source, target))
        end_values = _texts(state, ends)
        new = not (self.nodes.issuperset(found) and self.ends.issuperset(end_values))
        new = new or not self.coming.issuperset(values)
        self.nodes |= found
        self.ends |= end_values
        self.coming.update(values)
        return new

    def relevant(self, actions: list[Any]) -> list[Any]:
        """The actions that may bear on a touched fact: a node added or updated that is touched (or comes or
        goes), an edge whose two references name ends of touched edges, or one naming a node that comes or
        goes."""
        out = []
        nodes, ends, coming = self.nodes | self.coming, self.ends, self.coming
        for raw in actions:
            kind = raw.get("type") if isinstance(raw, dict) else None
            if kind == "ADD_NODE" or kind == "UPDATE_NODE":
                named = (raw.get("properties") if kind == "ADD_NODE" else raw.get("node")) or {}
                keep = any(_text(v) in nodes for v in named.values())
            elif kind == "ADD_EDGE" or kind == "UPDATE_EDGE":
                ref_from = [_text(v) for v in (raw.get("from") or {}).values()]
                ref_to = [_text(v) for v in (raw.get("to") or {}).values()]
                timed = raw.get("label") in self.one_at_a_time
                keep = not ends.isdisjoint(ref_from) and (timed or not ends.isdisjoint(ref_to))
                keep = keep or not coming.isdisjoint(ref_from + ref_to)
            else:
                keep = False  # makes nothing a document supports
            if keep:
                out.append(raw)
        return out


def _text(value: Any) -> str | None:
    return str(value) if isinstance(value, str | int | float) else None


def _texts(state: GraphState, nodes: set[str]) -> set[str]:
    return {
        str(v)
        for n in nodes
        for v in state.nodes[n]["properties"].values()
        if isinstance(v, str | int | float)
    }


def _touch_fresh(state: GraphState, new: list[Answer], nodes: set[str]) -> None:
    """The existing nodes the new answers add again (by identity) or claim a property of (``UPDATE_NODE``)."""
    for _doc, _, actions in new:
        for raw in actions:
            action = action_of(raw)[0]
            if isinstance(action, UpdateNode):
                nodes.update(state.find_nodes(action.node))
            elif isinstance(action, AddNode):
                identity = state.identity(action.label, action.properties)
                found = state.find_identity(action.label, identity) if identity is not None else None
                if found is not None:
                    nodes.add(found)


def _sources_of(state: GraphState, nodes: set[str], edges: set[str]) -> set[str]:
    """The documents supporting or claiming the touched facts."""
    need: set[str] = set()
    for n in nodes:
        need |= _sources(state.nodes[n]["provenance"])
    for e in edges:
        need |= _sources(state.edge_ends(e)[2]["provenance"])
    return need


def _key(state: GraphState, node: str) -> NodeKey:
    data = state.nodes[node]
    return (data["type"], state.identity(data["type"], data["properties"]) or ())


def _edge_sharers(state: GraphState, desired: Desired, fresh_docs: set[str], touched: set[str]) -> set[str]:
    """The sources of existing edges the fold makes from the new answers (and marks them touched)."""
    out: set[str] = set()
    for (label, a, b), fact in desired.edges.items():
        if fresh_docs.isdisjoint(fact.documents) and fresh_docs.isdisjoint(fact.claimants):
            continue
        source, target = state.find_identity(*a), state.find_identity(*b)
        edge = (
            state.edge_between(source, label, target) if source is not None and target is not None else None
        )
        if edge is not None:
            touched.add(edge)
            out |= _sources(state.edge_ends(edge)[2]["provenance"])
    return out


def _time_siblings(state: GraphState, desired: Desired, touched: set[str]) -> set[str]:
    """One-at-a-time edges bound each other (``igg.documents.times``): the existing edges of each source and
    type a folded or touched edge has are marked touched; returns their sources (to fold with them)."""
    one = state.schema.one_at_a_time
    if not one:
        return set()
    groups: set[tuple[str, str]] = set()
    for label, a, _ in [*desired.edges, *desired.displaced]:
        source = state.find_identity(*a) if label in one else None
        if source is not None:
            groups.add((source, label))
    for edge in touched:
        source, _, data = state.edge_ends(edge)
        if data["type"] in one:
            groups.add((source, data["type"]))
    out: set[str] = set()
    for source, label in groups:
        for keyed in state.succ[source].values():
            for edge, data in keyed.items():
                if data["type"] == label and edge not in touched:
                    touched.add(edge)
                    out |= _sources(data["provenance"])
    return out


def _difference(
    state: GraphState, desired: Desired, nodes: set[str], edges: set[str], fresh_docs: set[str]
) -> Difference:
    diff = Difference()
    refs: dict[NodeKey, NodeRef] = {}
    for n in sorted(nodes):
        key = _key(state, n)
        fact = desired.nodes.get(key)
        if fact is None:
            diff.remove_nodes.append(n)
            continue
        refs[key] = n
        data = state.nodes[n]
        props = data["properties"]
        if props != fact.properties or any(
            data["provenance"].get(k) != v for k, v in fact.provenance().items()
        ):
            diff.set_properties.append(
                (
                    n,
                    {k: v for k, v in fact.properties.items() if props.get(k) != v},
                    [k for k in props if k not in fact.properties],
                )
            )
            diff.node_provenance[n] = fact.provenance()
    for key, fact in desired.nodes.items():
        if key in refs:
            continue
        found = state.find_identity(*key)
        if found is None:
            refs[key] = len(diff.add_nodes)
            diff.node_provenance[len(diff.add_nodes)] = fact.provenance()
            diff.add_nodes.append((key[0], dict(fact.properties)))
    removed = set(diff.remove_nodes)
    for e in sorted(edges):
        source, target, data = state.edge_ends(e)
        if source in removed or target in removed:
            continue
        fact = desired.edges.get((data["type"], _key(state, source), _key(state, target)))
        if fact is None:
            diff.remove_edges.append(e)
        elif data["properties"] != fact.properties or any(
            data["provenance"].get(k) != v for k, v in fact.provenance().items()
        ):
            diff.set_edge_properties.append((e, dict(fact.properties)))
            diff.edge_provenance[e] = fact.provenance()
    for (label, a, b), fact in desired.edges.items():
        ends = [refs.get(k) if k in refs else state.find_identity(*k) for k in (a, b)]
        if ends[0] is None or ends[1] is None or ends[0] in removed or ends[1] in removed:
            continue
        if (
            isinstance(ends[0], str)
            and isinstance(ends[1], str)
            and state.edge_between(ends[0], label, ends[1])
        ):
            continue  # an existing edge: touched above
        place = (ends[0], label, ends[1])
        diff.add_edges.append(place)
        if fact.properties:
            diff.edge_properties[place] = dict(fact.properties)
        diff.edge_provenance[place] = fact.provenance()
    return diff


__all__ = ["plan_local"]
