"""Evidence in documents: each answer's quotes located in the chunk it answers, under the request's grounding
policy, as the act step locates an agent's (``igg.act.evidence``).

An action of a document's answer may carry ``evidence`` (quotes of its chunk, or spans in it). When the
document is read, each quote is located in that chunk's text by the act step's own ``Grounder`` (exact,
normalized, then bounded fuzzy; under ``config.grounding: "values"`` every value the action writes must be
stated too). The located items, each naming its ``document`` and ``chunk``, ride on the action (``LOCATED``)
into the fold, which records them in the provenance of the fact the action makes or claims (``evidence``).
An action the policy refuses (``MISSING_EVIDENCE``, ``UNGROUNDED_EVIDENCE``, ``UNGROUNDED_VALUE``) makes
nothing; the build reports it with its code among the claims dropped. The kept answers of a document
(``igg.documents.reader``) are the grounded ones, keyed by the policy too, so a retraction or an update that
folds an unchanged document again sees what its build saw without reading its text.
"""

from __future__ import annotations

from typing import Any

from igg.act.evidence import Grounder
from igg.documents.fold import LOCATED
from igg.models.actions import UnreadableAction, read_action
from igg.models.request import Request


def grounder_for(request: Request, text: str) -> Grounder:
    """The act step's grounder over one chunk's ``text`` (one chunk: its offsets are the chunk's), with the
    request's policy and the schema's terms."""
    template = Grounder.for_request(request)
    return Grounder(text, len(text) + 1, template.policy, template.terms, template.kinds)


def ground_answer(
    request: Request, text: str, doc: str, chunk: int, actions: list[Any]
) -> tuple[list[Any], list[tuple[str, int, str]]]:
    """A chunk's answer with each action's evidence located in ``text`` and the policy applied: the actions
    kept (located evidence under ``LOCATED``), and those refused as (document, chunk, reason)."""
    policy = request.config.grounding
    if policy == "off" and not any(isinstance(a, dict) and a.get("evidence") for a in actions):
        return actions, []
    grounder: Grounder | None = None
    kept: list[Any] = []
    dropped: list[tuple[str, int, str]] = []
    for raw in actions:
        action = read_action(raw) if isinstance(raw, dict) else None
        if action is None or isinstance(action, UnreadableAction):
            kept.append(raw)  # the fold reports it
            continue
        # one grounder per chunk's answer: its search and fuzzy budgets bound the whole answer, as the act
        # step's bound one response
        grounder = grounder or grounder_for(request, text)
        if not grounder.active(action):
            kept.append(raw)
            continue
        found = grounder.ground(action)
        if isinstance(found, tuple):
            dropped.append((doc, chunk, f"{found[0]}: {found[1]}"))
            continue
        items = [{**item, "document": doc, "chunk": chunk} for item in found.items or ()]
        kept.append({**raw, LOCATED: items} if items else raw)
    return kept, dropped


__all__ = ["ground_answer", "grounder_for"]
