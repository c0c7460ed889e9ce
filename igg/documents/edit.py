"""Adding documents to a session with the facts they state (``add_documents``, the workspace's tool): the
caller (a tool-using agent) read each document and gives its actions; each fact they make records the document
as its source, exactly as ``igg run --documents`` does with an agent's answers. A document id given again
replaces that document (its earlier facts retracted where nothing else supports them). One step through the
act step."""

from __future__ import annotations

from typing import Any

from igg.documents.build import commit_change, corpus_files, last_build
from igg.documents.cache import AnswerCache
from igg.documents.corpus import document
from igg.documents.fold import fold
from igg.documents.grounding import ground_answer
from igg.documents.local import plan_local
from igg.documents.plan import fact_counts, plan_documents
from igg.documents.reader import Reader, referred
from igg.errors import SessionRefused, WorkspaceCode, WorkspaceError

TOOL_IDENTITY = "tool:"
"""The agent identity of answers a tool-using client gave (a session built by ``igg run`` keeps its own)."""


def add_documents(session: Any, documents: list[tuple[str, str, list[Any]]]) -> dict[str, Any]:
    """Add (or replace) ``documents`` (id, text, actions) in a stored session; what it did."""
    sid = session.session_id
    store = getattr(session.repo, "store", None)
    if store is None:
        raise SessionRefused(
            f"session {sid!r} is kept nowhere that holds its history; documents need a store", session_id=sid
        )
    ids = [d[0] for d in documents]
    twice = sorted({d for d in ids if ids.count(d) > 1})
    if twice:
        raise WorkspaceError(
            WorkspaceCode.INVALID_ARGUMENTS,
            f"document id(s) {', '.join(map(repr, twice))} given twice; each document needs an id of its own",
        )
    found = last_build(store, sid)
    manifest, identity = found if found is not None else ({}, TOOL_IDENTITY)
    docs = [document(doc_id, text) for doc_id, text, _ in documents]
    new: list[tuple[str, int, list[Any]]] = []
    refused: list[tuple[str, int, str]] = []
    for doc_id, text, actions in documents:  # evidence located in the document's text, under the policy
        grounded, refusals = ground_answer(session.request, text, doc_id, 1, list(actions))
        new.append((doc_id, 1, grounded))
        refused += refusals
    after = {**manifest, **{d.id: d.sha for d in docs}}
    replaced = {d.id for d in docs if d.id in manifest}
    state, self_loops = session.state, session.config.constraints.self_loop_allowed
    cache = AnswerCache(store.db)
    try:
        reader = Reader(session.request, None, identity, cache, state, sid)
        keys = {d.id: reader.document_key(d.sha) for d in docs}
        cache.put_many(
            [(keys[doc_id], {"chunks": [[1, actions]]}) for doc_id, _, actions in new], table="documents"
        )
        cache.put_mentions((value, keys[doc_id]) for doc_id, _, actions in new for value in referred(actions))
        planned = plan_local(
            state, after, replaced, new, reader.answers_of, reader.referring, self_loops=self_loops
        )
        if planned is not None:
            diff = planned[0]
        else:
            kept = reader.answers_of({d: sha for d, sha in manifest.items() if d not in replaced})
            if kept is None:
                raise SessionRefused(
                    f"the answers of session {sid!r}'s documents are no longer kept in the "
                    "store; add every document again",
                    session_id=sid,
                )
            diff = plan_documents(state, fold(state.schema, [*kept, *new], self_loops=self_loops))
    finally:
        cache.close()
    facts = fact_counts(state, diff, replaced)
    summary = {
        "added": len(docs) - len(replaced),
        "changed": len(replaced),
        "removed": 0,
        "unchanged": len(manifest) - len(replaced),
        "added_ids": sorted(set(ids) - replaced)[:50],
        "changed_ids": sorted(replaced)[:50],
    }
    done = commit_change(
        session,
        diff,
        files={
            "documents": summary,
            **corpus_files(manifest if found else None, after),
            "facts": facts,
            "agent_calls": 0,
            "agent": identity,
        },
        reasoning=f"Added {len(docs)} document(s) with their facts.",
        corpus=after,
    )
    shown = [{"document": d, "chunk": c, "reason": r} for d, c, r in refused]
    return {**done, "documents": summary, "facts": facts, "dropped": shown}


__all__ = ["TOOL_IDENTITY", "add_documents"]
