"""Building and updating a session from documents: ``igg run REQUEST.json --documents PATH... [--update]``.

A build reads the corpus (``igg.documents.corpus``), splits each document into chunks of its own (a chunk
never spans documents; the observation names the document as the chunk's label), and takes each chunk's answer
from the answer cache (``igg.documents.cache``) or else from the agent (``igg.documents.reader``). The answers
make a graph (``fold``), and the difference between the session's graph and that one (``plan_documents``) is
applied by the act step as ONE step (``Session.apply_update``): all of it or, when an element breaks the
schema or limits, nothing. A fresh build is that step on an empty graph; an update is it on the stored one.
Either way the graph is the one the corpus makes, so an update equals a fresh build, whatever came before.

The step's record keeps the corpus (document id -> content hash) under ``files.corpus``: an update compares
the new corpus with the one the session's history holds last (an undone update's corpus goes with it).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from igg.act.difference import Difference
from igg.documents.cache import AnswerCache
from igg.documents.corpus import Corpus, read_corpus
from igg.documents.fold import fold
from igg.documents.local import plan_local
from igg.documents.plan import fact_counts, plan_documents
from igg.documents.reader import Reader, agent_identity, refuse_unfoldable
from igg.errors import Problem, RequestInvalid, SessionRefused
from igg.graph.state import GraphState
from igg.models.request import Request
from igg.record.logs import get_logger
from igg.record.steps import ReviewPlan
from igg.store.location import StoreArg

log = get_logger("igg.documents")

DOCUMENTS_GOAL_NOTE = "documents"
"""The ``files`` key of an update step that marks it as a document build."""


@dataclass(kw_only=True)
class DocumentsResult:
    """What a build or an update did."""

    session_id: str
    iteration: int
    documents: dict[str, Any]
    facts: dict[str, int]
    agent_calls: int
    changes: dict[str, int]
    graph: dict[str, int]
    dropped: list[dict[str, Any]] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    applied: bool = True
    """False for ``review``: the change was planned, checked and kept as the plan waiting for review
    (``changes`` says what it would do; ``igg review`` shows, approves or rejects it)."""
    problems: list[str] = field(default_factory=list)
    """What breaks the session's schema or limits (``review``; approving refuses the whole change then)."""
    plan: ReviewPlan | None = None
    """``review``: the plan kept."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "iteration": self.iteration,
            "applied": self.applied,
            "documents": self.documents,
            "facts": self.facts,
            "agent_calls": self.agent_calls,
            "changes": self.changes,
            "problems": self.problems,
            "plan_id": self.plan.plan_id if self.plan is not None else None,
            "graph": self.graph,
            "dropped": self.dropped,
            "seconds": {k: round(v, 3) for k, v in self.seconds.items()},
        }


_BUILDS: dict[tuple[str, str], tuple[int | None, tuple[dict[str, str], str] | None]] = {}
"""The last ``last_build`` answer per (store, session), with the session's last step then: a session whose
last step is the same has the same corpus (one small read instead of its history)."""


def last_build(store: Any, session_id: str) -> tuple[dict[str, str], str] | None:
    """The corpus (document id -> hash) the session's history holds last, and the agent identity whose answers
    made it; None: it was not built from documents. A build's step keeps the whole corpus (``files.corpus``),
    an update's the documents it set and removed (``files.corpus_changes``); an undone step's go with it."""
    key = (str(store.location), session_id)
    last = store.last_step(session_id)
    cached = _BUILDS.get(key)
    if cached is not None and cached[0] == last:
        return cached[1]
    kept: list[tuple[int, dict[str, str], str]] = []
    for s in store.steps(session_id):
        record = s.record or {}
        files = record.get("files") or {} if s.kind == "update" else {}
        iteration = int(record.get("iteration") or s.iteration or 0)
        if isinstance(files.get("corpus"), dict):
            kept.append((iteration, dict(files["corpus"]), str(files.get("agent") or "")))
        elif isinstance(files.get("corpus_changes"), dict) and kept:
            corpus = dict(kept[-1][1])
            corpus.update(files["corpus_changes"].get("set") or {})
            for doc in files["corpus_changes"].get("removed") or ():
                corpus.pop(doc, None)
            kept.append((iteration, corpus, str(files.get("agent") or "")))
        elif s.kind == "undo":
            to = int(record.get("to_iteration") or 0)
            kept = [k for k in kept if k[0] <= to]
    found = (kept[-1][1], kept[-1][2]) if kept else None
    _BUILDS[key] = (last, found)
    return found


def remember_build(store: Any, session_id: str, corpus: dict[str, str], agent: str) -> None:
    """What ``last_build`` answers now that this process stored the session's last step (no history read)."""
    _BUILDS[(str(store.location), session_id)] = (store.last_step(session_id), (corpus, agent))


def corpus_files(before: dict[str, str] | None, after: dict[str, str]) -> dict[str, Any]:
    """What a step keeps of the corpus: all of it after a fresh build (``before`` None), else what changed."""
    if before is None:
        return {"corpus": after}
    return {
        "corpus_changes": {
            "set": {d: sha for d, sha in after.items() if before.get(d) != sha},
            "removed": sorted(d for d in before if d not in after),
        }
    }


def stored_corpus(store: Any, session_id: str) -> dict[str, str] | None:
    """The corpus (document id -> hash) the session's history holds last (``last_build``)."""
    found = last_build(store, session_id)
    return found[0] if found is not None else None


def compare(before: dict[str, str], corpus: Corpus) -> dict[str, list[str]]:
    now = corpus.manifest()
    return {
        "added": sorted(d for d in now if d not in before),
        "changed": sorted(d for d in now if d in before and before[d] != now[d]),
        "removed": sorted(d for d in before if d not in now),
        "unchanged": sorted(d for d in now if before.get(d) == now[d]),
    }


def _summary(diffs: dict[str, list[str]], corpus: Corpus) -> dict[str, Any]:
    out: dict[str, Any] = {k: len(v) for k, v in diffs.items()}
    out.update({f"{k}_ids": v[:50] for k, v in diffs.items() if k != "unchanged"})
    out["read"] = len(corpus.documents)
    out["skipped"] = [{"path": p, "reason": r} for p, r in corpus.skipped]
    return out


def build_documents(
    request: Request,
    agent: Any,
    paths: Sequence[Path],
    store_path: StoreArg,
    *,
    agent_name: str | None = None,
    session_id: str | None = None,
    update: bool = False,
    force: bool = False,
    corpus: Corpus | None = None,
    review: bool = False,
    clock: Callable[[], float] = time.perf_counter,
) -> DocumentsResult:
    """A fresh build of ``request``'s session from the documents under ``paths`` (``update``: the stored
    session ``session_id`` brought in step with them); see the module doc. ``review``: plan and check the
    whole change, and apply nothing (the answers asked for are cached: applying it then costs no agent
    call)."""
    from igg.act.apply import collector_paused

    refuse_unfoldable(request)  # before any session is stored
    corpus = corpus if corpus is not None else read_corpus([Path(p) for p in paths])
    with collector_paused():
        return _build(
            request,
            agent,
            corpus,
            store_path,
            agent_name=agent_name,
            session_id=session_id,
            update=update,
            force=force,
            review=review,
            clock=clock,
        )


def _open(
    request: Request, store: Any, *, agent_name: str | None, session_id: str | None, update: bool, force: bool
) -> tuple[Any, dict[str, str]]:
    """The session to change, and the corpus it was built from (empty for a fresh build)."""
    from igg.session import Session
    from igg.store import StoreSessions

    repo = StoreSessions(store)
    if not update:
        if session_id:
            request = request.model_copy(update={"session_id": session_id})
        recorder = repo.recorder(agent=agent_name, force=force)
        return Session.open(request, repo=repo, recorders=[recorder]), {}
    if not session_id:
        raise RequestInvalid(
            [Problem("--session", "--update needs the session to update: --session ID")],
            source="the command line",
        )
    before = stored_corpus(store, session_id)
    if before is None:
        raise SessionRefused(
            f"session {session_id!r} was not built from documents; build one with igg run "
            "REQUEST.json --documents PATH...",
            session_id=session_id,
        )
    session = load_session(store, session_id)
    return session, before


def load_session(store: Any, session_id: str) -> Any:
    """A stored session as a ``Session`` a document step can be applied to (finished: a build finishes it)."""
    from igg.session import Session
    from igg.store import StoreSessions

    repo = StoreSessions(store)
    return Session.load(
        repo,
        session_id,
        lambda info: repo.recorder(agent=info.agent).for_session(session_id),
        status=lambda info: "finished",
        begun=True,
    )


def _build(
    request: Request,
    agent: Any,
    corpus: Corpus,
    store_path: StoreArg,
    *,
    agent_name: str | None,
    session_id: str | None,
    update: bool,
    force: bool,
    review: bool,
    clock: Callable[[], float],
) -> DocumentsResult:
    from igg.store import SessionStore

    started = clock()
    store = SessionStore(store_path)
    session, before = _open(
        request, store, agent_name=agent_name, session_id=session_id, update=update, force=force
    )
    seconds = {"load": clock() - started}
    cache = AnswerCache(store.db)
    try:
        mark = clock()
        reader = Reader(
            session.request,
            agent,
            agent_identity(agent, agent_name),
            cache,
            session.state,
            session.session_id,
        )
        diff, dropped = _plan(session, corpus, before if update else None, reader)
        seconds["answers_and_plan"] = clock() - mark
    finally:
        cache.close()
    return _apply(
        session,
        corpus,
        before if update else None,
        diff,
        dropped,
        reader.calls,
        reader.identity,
        seconds,
        started,
        clock,
        review=review,
    )


def _plan(
    session: Any, corpus: Corpus, before: dict[str, str] | None, reader: Reader
) -> tuple[Difference, list[tuple[str, int, str]]]:
    """The difference an update or a build makes, and the claims dropped: an update folds what changed and the
    documents sharing facts with it (``igg.documents.local``), else the whole corpus."""
    state, self_loops = session.state, session.config.constraints.self_loop_allowed
    if before:
        diffs = compare(before, corpus)
        by_id = {d.id: d for d in corpus.documents}
        new = reader.answers([by_id[d] for d in diffs["changed"] + diffs["added"]])
        planned = plan_local(
            state,
            corpus.manifest(),
            set(diffs["changed"]) | set(diffs["removed"]),
            new,
            reader.answers_of,
            reader.referring,
            self_loops=self_loops,
        )
        if planned is not None:
            fresh = set(diffs["changed"]) | set(diffs["added"])
            return planned[0], [*reader.dropped, *(d for d in planned[1].dropped if d[0] in fresh)]
    desired = fold(state.schema, reader.answers(corpus.documents), self_loops=self_loops)
    return plan_documents(state, desired), [*reader.dropped, *desired.dropped]


def _apply(
    session: Any,
    corpus: Corpus,
    before: dict[str, str] | None,
    diff: Difference,
    dropped_claims: list[tuple[str, int, str]],
    calls: int,
    identity: str,
    seconds: dict[str, float],
    started: float,
    clock: Callable[[], float],
    *,
    review: bool,
) -> DocumentsResult:
    mark = clock()
    diffs = compare(before or {}, corpus)
    state = session.state
    facts = fact_counts(state, diff, set(diffs["changed"]) | set(diffs["removed"]))
    seconds["count"] = clock() - mark
    documents = _summary(diffs, corpus)
    files = {
        DOCUMENTS_GOAL_NOTE: documents,
        **corpus_files(before, corpus.manifest()),
        "facts": facts,
        "agent_calls": calls,
        "agent": identity,
    }
    reasoning = (
        f"Read {len(corpus.documents)} documents: {len(diffs['added'])} added, {len(diffs['changed'])} "
        f"changed, {len(diffs['removed'])} removed, {len(diffs['unchanged'])} unchanged; {calls} agent "
        f"call(s)."
    )
    dropped = [{"document": d, "chunk": c, "reason": r} for d, c, r in dropped_claims]
    result = DocumentsResult(
        session_id=session.session_id,
        iteration=session.last_iteration + 1,
        documents=documents,
        facts=facts,
        agent_calls=calls,
        changes={},
        graph={},
        dropped=dropped,
        seconds=seconds,
    )
    mark = clock()
    if review:
        plan = session.keep_update_plan(diff, files=files, reasoning=reasoning, finish=True).plan
        result.applied, result.plan = False, plan
        result.changes = diff.counts()
        result.problems = [f"{v['code']}: {v['message']}" for v in plan.verdicts if not v["accepted"]]
    else:
        step = session.apply_update(
            diff,
            files=files,
            git_commit=None,
            reasoning=reasoning,
            timings_ms={"total": round((clock() - started) * 1000, 3)},
        )
        if session.status != "finished":
            session.finish("finished", prune=False)
        store = getattr(session.repo, "store", None)
        if store is not None:
            remember_build(store, session.session_id, corpus.manifest(), identity)
        result.changes = step.changes
    seconds["commit"] = clock() - mark
    seconds["total"] = clock() - started
    log.info(
        "documents_planned" if review else "documents_applied",
        session_id=session.session_id,
        iteration=result.iteration,
        agent_calls=calls,
        **{k: len(v) for k, v in diffs.items()},
    )
    result.graph = {"nodes": state.node_count, "edges": state.edge_count}
    return result


def commit_change(
    session: Any, diff: Difference, *, files: dict[str, Any], reasoning: str, corpus: dict[str, str]
) -> dict[str, Any]:
    """A workspace's document change (``add_documents``, ``retract_document``) applied as one step, or, with
    ``config.review``, kept as the plan waiting for review (applied whole when approved); ``corpus``: the
    session's corpus after it. What it did: ``iteration_applied`` (None for a plan), ``changes``, and the
    plan as shown (``review``)."""
    if session.config.review:
        pending = session.keep_update_plan(diff, files=files, reasoning=reasoning, finish=False)
        return {"iteration_applied": None, "changes": diff.counts(), "review": pending.plan.shown()}
    step = session.apply_update(diff, files=files, git_commit=None, reasoning=reasoning)
    remember_build(session.repo.store, session.session_id, corpus, str(files.get("agent") or ""))
    return {"iteration_applied": step.iteration, "changes": step.changes}


def document_facts(state: GraphState, manifest: dict[str, str]) -> list[dict[str, Any]]:
    """Each document of ``manifest`` with how many nodes and edges it supports (``igg show --documents``)."""
    nodes = dict.fromkeys(manifest, 0)
    edges = dict.fromkeys(manifest, 0)
    for data in state.nodes.values():
        for doc in data["provenance"].get("documents") or ():
            nodes[doc] = nodes.get(doc, 0) + 1
    for _, (_, _, data) in state.edge_rows():
        for doc in data["provenance"].get("documents") or ():
            edges[doc] = edges.get(doc, 0) + 1
    return [
        {"document": d, "sha": manifest.get(d), "nodes": nodes.get(d, 0), "edges": edges.get(d, 0)}
        for d in sorted(manifest)
    ]


__all__ = [
    "DocumentsResult",
    "build_documents",
    "commit_change",
    "compare",
    "document_facts",
    "last_build",
    "load_session",
    "remember_build",
    "stored_corpus",
]
