"""Reading documents: each chunk's answer from the answer cache, else from the agent.

A ``Reader`` splits each document into chunks of its own (a chunk never spans documents; the observation
names the document as the chunk's label) and asks the agent only for the chunks the answer cache
(``igg.documents.cache``) has no answer for; an answer depends on its chunk, the schema, the goal and the
agent (``agent_identity``) alone, which is its cache key. It also keeps each document's answers under the
document's content hash, and the values they refer to nodes by (``referred``), for retractions
(``igg.documents.retract``) and edits (``igg.documents.edit``).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

from igg.agents.base import AgentTurn, Observation, as_turn
from igg.agents.parsing import parse_turn
from igg.documents.cache import AnswerCache, answer_key, document_key, key_base
from igg.documents.corpus import Document
from igg.documents.fold import Answer
from igg.documents.grounding import ground_answer
from igg.errors import AgentFailed, Problem, RequestInvalid
from igg.graph.state import GraphState
from igg.models.request import Request
from igg.observe.chunks import Chunk, split_context
from igg.observe.render import render_observation


def agent_identity(agent: Any, name: str | None) -> str:
    """What an answer depends on of the agent: its kind and model (a transcript's path is not part of it: a
    script stands for the model whose answers it recorded)."""
    model = getattr(agent, "model", None) or getattr(getattr(agent, "config", None), "model", None) or ""
    kind = (name or type(agent).__name__).split(":", 1)[0]
    return f"{kind}:{model}"


_DOCUMENT_KEYS: dict[str, dict[str, str]] = {}
"""Per key base, each document hash's ``document_key`` (computed once per process: a retraction asks which of
the corpus's documents refer to a value, and hashing the whole corpus each time would cost what the corpus
costs)."""


_SHA_OF_KEY: dict[str, str] = {}
"""Each ``document_key`` this process made, to the content hash it was made of (``Reader.referring`` finds the
documents a mention names without hashing the corpus again)."""


def refuse_unfoldable(request: Request) -> None:
    """``RequestInvalid`` for a request whose settings a document build could not honour: entity typing
    (``config.entity_typing``) belongs to the act step, and a build folds whole answers instead."""
    if request.config.entity_typing != "off":
        raise RequestInvalid(
            [
                Problem(
                    "config.entity_typing",
                    "document builds fold whole answers, where every node an edge names is added by an "
                    'ADD_NODE: entity typing ("schema") applies to the act step (runs, workspaces, tool '
                    'calls); set it to "off" for documents',
                )
            ]
        )


class Reader:
    """Answers for documents' chunks: from the cache, else from the agent (each call counted)."""

    def __init__(
        self,
        request: Request,
        agent: Any,
        identity: str,
        cache: AnswerCache,
        state: GraphState,
        session_id: str,
    ) -> None:
        refuse_unfoldable(request)
        self.request, self.agent, self.identity, self.cache = request, agent, identity, cache
        self.state, self.session_id = GraphState(state.schema), session_id
        """What the agent is shown of the graph: nothing (an answer depends on its chunk, the schema and the
        goal alone, as its cache key says; a fresh build and an update show the same)."""
        self.calls = 0
        config = request.config
        self._base = key_base(
            schema=config.schema_.model_dump(mode="json"), goal=request.goal_prompt, agent=identity
        )
        # a document's kept answers are grounded under the policy (igg.documents.grounding): keyed by it too
        self._document_base = f"{self._base}\x02{config.grounding}"
        self._keys = _DOCUMENT_KEYS.setdefault(self._document_base, {})
        self.dropped: list[tuple[str, int, str]] = []
        """The actions of the answers read that the grounding policy refused (document, chunk, reason)."""
        self._tokens = config.context.chunk_tokens

    def chunks(self, doc: Document) -> list[Chunk]:
        found = list(split_context(doc.text, self._tokens)) if doc.text else []
        return [Chunk(index=c.index, count=len(found), label=doc.id, text=c.text) for c in found]

    def answers(self, docs: Sequence[Document]) -> list[Answer]:
        """Every chunk's actions, in document and chunk order."""
        todo = [
            (doc, chunk, answer_key(self._base, chunk.text)) for doc in docs for chunk in self.chunks(doc)
        ]
        found = self.cache.get_many([key for _, _, key in todo])
        fresh: list[tuple[str, dict[str, Any]]] = []
        out: list[Answer] = []
        for doc, chunk, key in todo:
            answer = found.get(key)
            if answer is None:
                answer = {"actions": self._ask(doc, chunk)}
                found[key] = answer
                fresh.append((key, answer))
            actions, refused = ground_answer(
                self.request, chunk.text, doc.id, chunk.index + 1, list(answer.get("actions") or [])
            )
            self.dropped += refused
            out.append((doc.id, chunk.index + 1, actions))
        if fresh:
            self.cache.put_many(fresh)
        self._keep_documents(docs, out)
        return out

    def _keep_documents(self, docs: Sequence[Document], answers: list[Answer]) -> None:
        """Each document's answers under its content hash (what a retraction reads,
        ``igg.documents.retract``)."""
        by_doc: dict[str, list[Any]] = {}
        for doc_id, chunk, actions in answers:
            by_doc.setdefault(doc_id, []).append([chunk, actions])
        keys = {self.document_key(d.sha): d.id for d in docs}
        have = self.cache.get_many(list(keys), table="documents")
        missing = {k: d for k, d in keys.items() if k not in have}
        self.cache.put_many(
            [(k, {"chunks": by_doc.get(d, [])}) for k, d in missing.items()], table="documents"
        )
        self.cache.put_mentions(
            (value, k)
            for k, d in missing.items()
            for _, actions in by_doc.get(d, [])
            for value in referred(actions)
        )

    def referring(
        self, manifest: dict[str, str], values: Sequence[str], *, besides: str | None = None
    ) -> set[str]:
        """The documents of ``manifest`` whose answers refer to a node by one of ``values`` (``besides``: a
        content hash no document of ``manifest`` has, whose mentions are left out without reading the
        corpus)."""
        keys = self.cache.mentioning(values)
        if besides is not None:
            keys.discard(self.document_key(besides))
        if not keys:
            return set()
        shas = {_SHA_OF_KEY.get(key) for key in keys}
        if None in shas:  # a key this process has not made: make the corpus's (once per process)
            return {d for d, sha in manifest.items() if self.document_key(sha) in keys}
        return {d for d, sha in manifest.items() if sha in shas}

    def document_key(self, sha: str) -> str:
        found = self._keys.get(sha)
        if found is None:
            found = self._keys[sha] = document_key(self._document_base, sha)
            _SHA_OF_KEY[found] = sha
        return found

    def answers_of(self, manifest: dict[str, str]) -> list[Answer] | None:
        """The kept answers of the documents of ``manifest`` (id -> hash); None when one is not kept."""
        keys = {d: self.document_key(sha) for d, sha in manifest.items()}
        found = self.cache.get_many(list(keys.values()), table="documents")
        if any(k not in found for k in keys.values()):
            return None
        return [
            (d, int(chunk), list(actions)) for d, k in keys.items() for chunk, actions in found[k]["chunks"]
        ]

    def _ask(self, doc: Document, chunk: Chunk) -> list[Any]:
        self.calls += 1
        markdown, tokens = render_observation(
            request=self.request,
            state=self.state,
            iteration=self.calls,
            last_verdicts=[],
            last_error=None,
            chunk=chunk,
            todos=[],
        )
        obs = Observation(
            session_id=self.session_id,
            iteration=self.calls,
            markdown=markdown,
            tokens=tokens,
            context=chunk.text,
            chunk_index=chunk.index,
            chunk_count=chunk.count or 0,
            chunk_label=doc.id,
            request=self.request,
            state=self.state,
        )
        value = self.agent(obs)
        if inspect.isawaitable(value):
            import asyncio

            value = asyncio.run(_awaited(value))
        turn: AgentTurn = as_turn(value)
        if turn.response is not None:
            actions = turn.response.get("actions") or []
            return list(actions) if isinstance(actions, list) else []
        if turn.raw is None:
            raise AgentFailed(f"the agent gave no answer for document {doc.id!r}, chunk {chunk.index + 1}")
        parsed = parse_turn(turn.raw, truncated=turn.truncated)
        return [
            a.model_dump(mode="json", by_alias=True, exclude_defaults=True) | {"type": a.type}
            for a in parsed.actions
        ]


def referred(actions: list[Any]) -> set[str]:
    """The string values an answer's references name nodes by (what may match a node added later)."""
    out: set[str] = set()
    for raw in actions:
        if isinstance(raw, dict):
            for field_name in ("node", "from", "to"):
                ref = raw.get(field_name)
                if isinstance(ref, dict):
                    out.update(
                        str(v) for k, v in ref.items() if k != "label" and isinstance(v, str | int | float)
                    )
    return out


async def _awaited(value: Any) -> Any:
    return await value
