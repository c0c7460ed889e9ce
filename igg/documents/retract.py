"""Retracting one document (``retract_document``): everything it alone supported goes, at the cost of its
facts.

The facts the document supports or claims a property of are found by their provenance; the documents sharing
them (their other supporters and claimants, and the supporters of the ends of its edges) are folded again from
their kept answers (``igg.documents.cache``), and each of those facts becomes what that fold makes of it:
removed when no other document supports it, its properties falling back to what its remaining supporters say
(the same rule as a build: ``igg.documents.fold``). Nothing else of the graph is read or changed, so the time
depends on the document's facts, not on the corpus. When a node goes that another document refers to (what
that reference matches may change), the retraction is planned as an update that removes the document
(``igg.documents.local``). Either way it equals a fresh build without the document.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from igg.act.difference import Difference
from igg.documents.fold import Answer, NodeKey, SelfLoops, fold
from igg.documents.index import index_of
from igg.graph.state import GraphState


def plan_retraction(
    state: GraphState,
    doc: str,
    manifest: dict[str, str],
    answers_of: Callable[[dict[str, str]], list[Answer] | None],
    *,
    self_loops: SelfLoops = False,
) -> tuple[Difference, dict[str, int]] | None:
    """What retracting ``doc`` changes, and the facts retracted and kept; None when an answer the fold needs
    is not kept (the caller then folds the whole corpus).

    Most facts need no fold: one ``doc`` alone supports goes; one whose values ``doc`` does not decide (it is
    not the smallest id claiming a value, identity keys aside) keeps them and only forgets ``doc``. The others
    (``doc`` decided a value another document may now decide) are folded again from the documents sharing
    them."""
    nodes, edges = index_of(state).mentioning(doc)
    diff = Difference()
    slow_nodes, slow_edges = [], []
    for n in nodes:
        data = state.nodes[n]
        after = _without(data["provenance"], doc, state.schema.identity_keys.get(data["type"], ()))
        if after is _GONE:
            diff.remove_nodes.append(n)
        elif after is None:
            slow_nodes.append(n)
        else:
            diff.set_properties.append((n, {}, []))
            diff.node_provenance[n] = after
    gone = set(diff.remove_nodes)
    for e in edges:
        source, target, data = state.edge_ends(e)
        if source in gone or target in gone:
            continue
        after = _without(data["provenance"], doc, ())
        if after is _GONE:
            diff.remove_edges.append(e)
        elif after is None:
            slow_edges.append(e)
        else:
            diff.set_edge_properties.append((e, dict(data["properties"])))
            diff.edge_provenance[e] = after
    if (slow_nodes or slow_edges) and not _refold(
        state, doc, manifest, answers_of, slow_nodes, slow_edges, diff, self_loops=self_loops
    ):
        return None
    gone = set(diff.remove_nodes)
    dropped = {e for n in gone for e in _edges_of(state, n)}
    retracted = len(gone) + len(diff.remove_edges) + len(dropped & set(edges))
    return diff, {"facts_retracted": retracted, "facts_kept": len(nodes) + len(edges) - retracted}


_GONE: dict[str, Any] = {}
"""``_without``'s answer for a fact no other document supports."""


def _without(provenance: dict[str, Any], doc: str, identity: Sequence[str]) -> dict[str, Any] | None:
    """A fact's sources once ``doc`` is retracted: ``_GONE`` when no other document supports it, None when
    ``doc`` decided one of its values (the smallest id claiming it, identity keys aside: every supporter
    claims those)."""
    supporters = [d for d in provenance.get("documents") or () if d != doc]
    if not supporters:
        return _GONE
    by_value = provenance.get("property_documents") or {}
    if any(docs and docs[0] == doc and key not in identity for key, docs in by_value.items()):
        return None
    return {
        "documents": supporters,
        "property_documents": {k: [d for d in v if d != doc] for k, v in by_value.items()},
        "claimants": [d for d in provenance.get("claimants") or () if d != doc],
        "chunks": {d: c for d, c in (provenance.get("chunks") or {}).items() if d != doc},
    }


def _refold(
    state: GraphState,
    doc: str,
    manifest: dict[str, str],
    answers_of: Callable[[dict[str, str]], list[Answer] | None],
    nodes: list[str],
    edges: list[str],
    diff: Difference,
    *,
    self_loops: SelfLoops,
) -> bool:
    """Fold the documents sharing ``nodes`` and ``edges`` (and the ends of the edges) again, and set those
    facts to what it makes of them; False when an answer it needs is not kept."""
    sharing: set[str] = set()
    for n in nodes:
        sharing.update(_others(state.nodes[n]["provenance"]))
    for e in edges:
        source, target, data = state.edge_ends(e)
        sharing.update(_others(data["provenance"]))
        for end in (source, target):
            sharing.update(state.nodes[end]["provenance"].get("documents") or ())
    sharing.discard(doc)
    answers = answers_of({d: manifest[d] for d in sorted(sharing) if d in manifest})
    if answers is None:
        return False
    desired = fold(state.schema, answers, self_loops=self_loops)
    for n in nodes:
        data = state.nodes[n]
        fact = desired.nodes.get(_key(state, n))
        if fact is None:
            diff.remove_nodes.append(n)
            continue
        props = data["properties"]
        diff.set_properties.append(
            (
                n,
                {k: v for k, v in fact.properties.items() if props.get(k) != v},
                [k for k in props if k not in fact.properties],
            )
        )
        diff.node_provenance[n] = fact.provenance()
    gone = set(diff.remove_nodes)
    for e in edges:
        source, target, data = state.edge_ends(e)
        if source in gone or target in gone:
            continue
        fact = desired.edges.get((data["type"], _key(state, source), _key(state, target)))
        if fact is None:
            diff.remove_edges.append(e)
        else:
            diff.set_edge_properties.append((e, dict(fact.properties)))
            diff.edge_provenance[e] = fact.provenance()
    return True


def _values(state: GraphState, nodes: list[str]) -> list[str]:
    return [
        str(v)
        for n in nodes
        for v in state.nodes[n]["properties"].values()
        if isinstance(v, str | int | float)
    ]


def _others(provenance: dict[str, Any]) -> set[str]:
    return {*(provenance.get("documents") or ()), *(provenance.get("claimants") or ())}


def _key(state: GraphState, node: str) -> NodeKey:
    data = state.nodes[node]
    return (data["type"], state.identity(data["type"], data["properties"]) or ())


def _edges_of(state: GraphState, node: str) -> set[str]:
    return {k for keyed in state.succ[node].values() for k in keyed} | {
        k for keyed in state.pred[node].values() for k in keyed
    }


def retract_document(session: Any, doc: str) -> dict[str, Any]:
    """Retract ``doc`` from a stored session built from documents (``session``: its ``igg.session.Session``,
    kept in a store), as one step through the act step; what it did. Raises ``WorkspaceError`` (NOT_FOUND) for
    a document the session does not hold, ``SessionRefused`` for a session not built from documents or whose
    answers are gone."""
    from igg.documents.build import commit_change, last_build
    from igg.errors import SessionRefused, WorkspaceCode, WorkspaceError

    sid = session.session_id
    store = getattr(session.repo, "store", None)
    found = last_build(store, sid) if store is not None else None
    if store is None or found is None:
        raise SessionRefused(
            f"session {sid!r} was not built from documents (igg run --documents, add_documents)",
            session_id=sid,
        )
    manifest, identity = found
    if doc not in manifest:
        raise WorkspaceError(
            WorkspaceCode.NOT_FOUND,
            f"session {sid!r} holds no document {doc!r}; igg show {sid} --documents lists the ones it holds",
        )
    remaining = dict(manifest)  # a copy (C speed), not a walk
    del remaining[doc]
    planned = _plan(session, store, doc, manifest, remaining, identity)
    diff, facts = planned
    documents = {"added": 0, "changed": 0, "removed": 1, "unchanged": len(remaining), "removed_ids": [doc]}
    done = commit_change(
        session,
        diff,
        files={
            "documents": documents,
            "corpus_changes": {"set": {}, "removed": [doc]},  # corpus_files' answer, without comparing all
            "facts": facts,
            "agent_calls": 0,
            "agent": identity,
        },
        reasoning=f"Retracted document {doc!r}: {facts['facts_retracted']} fact(s) it alone "
        f"supported retracted, {facts['facts_kept']} kept.",
        corpus=remaining,
    )
    return {**done, "document": doc, "facts": facts}


def _plan(
    session: Any, store: Any, doc: str, manifest: dict[str, str], remaining: dict[str, str], identity: str
) -> tuple[Difference, dict[str, int]]:
    """What retracting ``doc`` changes, and its fact counts: the quick plan, the closure fold where another
    document's references or valid time may change, else the whole remaining corpus."""
    from igg.documents.cache import AnswerCache
    from igg.documents.local import plan_local
    from igg.documents.plan import fact_counts, plan_documents
    from igg.documents.reader import Reader
    from igg.errors import SessionRefused

    sid = session.session_id
    state, self_loops = session.state, session.config.constraints.self_loop_allowed
    cache = AnswerCache(store.db)
    try:
        reader = Reader(session.request, None, identity, cache, state, sid)
        # valid time binds facts across documents (a successor's start ends an edge; a history holds every
        # document's values): the closure fold decides them
        timed = bool(state.schema.time_scoped)
        planned = (
            None if timed else plan_retraction(state, doc, manifest, reader.answers_of, self_loops=self_loops)
        )
        if (
            timed
            or planned is not None
            and planned[0].remove_nodes
            and reader.referring(manifest, _values(state, planned[0].remove_nodes)) - {doc}
        ):
            # another document refers to a node that goes: what its references match may change; fold them
            local = plan_local(
                state, remaining, {doc}, [], reader.answers_of, reader.referring, self_loops=self_loops
            )
            planned = (local[0], fact_counts(state, local[0], {doc})) if local is not None else None
        if planned is None:  # an answer the local fold needs is gone: the whole remaining corpus, if kept
            answers = reader.answers_of(remaining)
            if answers is None:
                raise SessionRefused(
                    f"the answers of session {sid!r}'s documents are no longer kept in the "
                    "store; bring it in step with igg run --documents --update",
                    session_id=sid,
                )
            diff = plan_documents(state, fold(state.schema, answers, self_loops=self_loops))
            planned = diff, fact_counts(state, diff, {doc})
    finally:
        cache.close()
    return planned


__all__ = ["plan_retraction", "retract_document"]
