"""Retracting one document (``retract_document``): everything it alone supported goes, at the cost of its facts.

The facts the document supports or claims a property of are found by their provenance; the documents sharing
them (their other supporters and claimants, and the supporters of the ends of its edges) are folded again from
their kept answers (``igg.documents.cache``), and each of those facts becomes what that fold makes of it:
removed when no other document supports it, its properties falling back to what its remaining supporters say
(the same rule as a build: ``igg.documents.fold``). Nothing else of the graph is read or changed, so the time
depends on the document's facts, not on the corpus. It equals a fresh build without the document except where
the retraction would let a reference that matched several nodes match one (a fresh build would then add that
edge): ``igg run --documents --update`` folds the whole corpus and covers that case too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from igg.act.difference import Difference
from igg.documents.fold import Answer, NodeKey, fold
from igg.documents.plan import SOURCE_KEYS
from igg.graph.state import GraphState


def _mentions(provenance: dict[str, Any], doc: str) -> bool:
    return doc in (provenance.get("documents") or ()) or doc in (provenance.get("claimants") or ())


def plan_retraction(state: GraphState, doc: str, manifest: dict[str, str],
                    answers_of: Callable[[dict[str, str]], list[Answer] | None], *,
                    self_loops: bool = False) -> tuple[Difference, dict[str, int]] | None:
    """What retracting ``doc`` changes, and the facts retracted and kept; None when an answer the fold needs is
    not kept (the caller then folds the whole corpus)."""
    nodes = [n for n, d in state.nodes.items() if _mentions(d["provenance"], doc)]
    edges = [e for e, (_, _, d) in state.edge_rows() if _mentions(d["provenance"], doc)]
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
        return None
    desired = fold(state.schema, answers, self_loops=self_loops)
    diff = Difference()
    key_of: dict[str, Any] = {}
    for n in nodes:
        data = state.nodes[n]
        key = _key(state, n)
        fact = desired.nodes.get(key)
        if fact is None:
            diff.remove_nodes.append(n)
            continue
        key_of[n] = key
        props = data["properties"]
        if props == fact.properties and all(data["provenance"].get(k) == v for k, v in fact.provenance().items()):
            continue
        diff.set_properties.append((n, {k: v for k, v in fact.properties.items() if props.get(k) != v},
                                    [k for k in props if k not in fact.properties]))
        diff.node_provenance[n] = fact.provenance()
    gone = set(diff.remove_nodes)
    for e in edges:
        source, target, data = state.edge_ends(e)
        if source in gone or target in gone:
            continue
        ends = [key_of.get(end) or _key(state, end) for end in (source, target)]
        fact = desired.edges.get((data["type"], ends[0], ends[1]))
        if fact is None:
            diff.remove_edges.append(e)
        elif data["properties"] != fact.properties or any(data["provenance"].get(k) != v
                                                          for k, v in fact.provenance().items()):
            diff.set_edge_properties.append((e, dict(fact.properties)))
            diff.edge_provenance[e] = fact.provenance()
    dropped = {e for n in gone for e in _edges_of(state, n)}
    retracted = len(gone) + len(diff.remove_edges) + len(dropped & set(edges))
    return diff, {"facts_retracted": retracted, "facts_kept": len(nodes) + len(edges) - retracted}


def _others(provenance: dict[str, Any]) -> set[str]:
    return {d for k in SOURCE_KEYS if k != "property_documents" for d in provenance.get(k) or ()}


def _key(state: GraphState, node: str) -> NodeKey:
    data = state.nodes[node]
    return (data["type"], state.identity(data["type"], data["properties"]) or ())


def _edges_of(state: GraphState, node: str) -> set[str]:
    return {k for keyed in state.succ[node].values() for k in keyed} | {
        k for keyed in state.pred[node].values() for k in keyed}


def retract_document(session: Any, doc: str) -> dict[str, Any]:
    """Retract ``doc`` from a stored session built from documents (``session``: its ``igg.session.Session``, kept
    in a store), as one step through the act step; what it did. Raises ``RequestInvalid`` for a document the
    session does not hold, ``SessionRefused`` for a session not built from documents or whose answers are gone."""
    from igg.documents.build import Reader, last_build
    from igg.documents.cache import AnswerCache
    from igg.documents.plan import fact_counts, plan_documents
    from igg.errors import Problem, RequestInvalid, SessionRefused
    from igg.store.location import sidecar_path

    sid = session.session_id
    store = getattr(session.repo, "store", None)
    found = last_build(store, sid) if store is not None else None
    if store is None or found is None:
        raise SessionRefused(f"session {sid!r} was not built from documents (igg run --documents, add_documents)",
                             session_id=sid)
    manifest, identity = found
    if doc not in manifest:
        raise RequestInvalid([Problem("document_id", f"session {sid!r} holds no document {doc!r}")],
                             source="retract_document")
    remaining = {d: sha for d, sha in manifest.items() if d != doc}
    state, self_loops = session.state, session.config.constraints.allow_self_loops
    cache = AnswerCache(sidecar_path(store.location, ".answers"))
    try:
        reader = Reader(session.request, None, identity, cache, state, sid)
        planned = plan_retraction(state, doc, manifest, reader.answers_of, self_loops=self_loops)
        if planned is None:  # an answer the local fold needs is gone: the whole remaining corpus, if kept
            answers = reader.answers_of(remaining)
            if answers is None:
                raise SessionRefused(f"the answers of session {sid!r}'s documents are no longer kept beside the "
                                     "store; bring it in step with igg run --documents --update", session_id=sid)
            diff = plan_documents(state, fold(state.schema, answers, self_loops=self_loops))
            planned = diff, fact_counts(state, diff, {doc})
    finally:
        cache.close()
    diff, facts = planned
    documents = {"added": 0, "changed": 0, "removed": 1, "unchanged": len(remaining), "removed_ids": [doc]}
    step = session.apply_update(diff, files={"documents": documents, "corpus": remaining, "facts": facts,
                                             "agent_calls": 0, "agent": identity}, git_commit=None,
                                reasoning=f"Retracted document {doc!r}: {facts['facts_retracted']} fact(s) it alone "
                                          f"supported retracted, {facts['facts_kept']} kept.")
    return {"session_id": sid, "iteration": step.iteration, "document": doc, "facts": facts, "changes": step.changes,
            "nodes": state.node_count, "edges": state.edge_count}


__all__ = ["plan_retraction", "retract_document"]
