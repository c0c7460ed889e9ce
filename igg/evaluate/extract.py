"""Extracting with an agent through the normal loop (``igg eval text2kg --agent SPEC``).

Each test sentence is a request of its own (the sentence as ``context_data``, the ontology's schema,
``config.grounding: "values"``, ``config.entity_typing: "schema"``: an edge may name entities not added yet,
typed by the relation's domain and range, as the replay's are), run to its stop reason. A ``script:DIR``
agent reads each sentence's transcript from ``DIR/<sentence id>.jsonl`` (a transcript answers iteration N
with its turn N, so each sentence needs its own); any other spec makes one agent per sentence (no state
carried from one sentence to the next). What the agent proposed (every edge and datatype property its actions
wrote) is the raw answer; what the final graph holds, read back in the ontology's names (``graph_triples``),
is what IGG accepted; each refused proposal keeps its verdict.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from igg.agents.registry import make_agent
from igg.errors import RequestInvalid
from igg.evaluate.answers import Triple
from igg.evaluate.replay import Refused, Replayed
from igg.graph.document import term_triples
from igg.graph.state import GraphState
from igg.models.request import Request
from igg.models.schema import Schema
from igg.ontology.model import Ontology
from igg.service import run_request

GOAL = (
    "Extract every fact the text states as a knowledge graph under the ontology's schema: entities as nodes "
    "(named exactly as the text names them), relations as edges, datatype relations as properties of the "
    "subject. Add nothing the text does not state."
)
"""The goal each sentence's request gives the agent."""


def sentence_request(schema: Schema, sentence: str, sentence_id: str, max_iterations: int) -> Request:
    """The request one test sentence is extracted with."""
    return Request.model_validate(
        {
            "session_id": _session_id(sentence_id),
            "goal_prompt": GOAL,
            "context_data": sentence,
            "config": {
                "schema": schema.model_dump(by_alias=True, exclude_defaults=True),
                "grounding": "values",
                "entity_typing": "schema",
                "max_iterations": max_iterations,
                "stuck_after": max_iterations,
            },
        }
    )


def _session_id(sentence_id: str) -> str:
    cleaned = "".join(c if c.isalnum() or c in "._:-" else "-" for c in sentence_id).lstrip("._:-")
    return (cleaned or "sentence")[:120]


def graph_triples(state: GraphState) -> Iterator[Triple]:
    """A graph's facts as the benchmark's triples: the JSON export's ontology triples
    (``igg.graph.document.term_triples``), each part as text, the relation's spaces as ``_``."""
    for s, r, o in term_triples(state, state.schema.terms):
        yield str(s), str(r).replace(" ", "_"), str(o)


def proposed(action: dict[str, Any], schema: Schema) -> list[Triple]:
    """The triples one proposed action states (an edge, or datatype properties of a node it names)."""
    terms = schema.terms
    kind = action.get("type")
    if kind == "ADD_EDGE":
        src, dst = action.get("from") or {}, action.get("to") or {}
        label = str(action.get("label", ""))
        term = terms.get(label)
        return [
            (
                str(src.get("name", "")),
                (term.label if term else label).replace(" ", "_"),
                str(dst.get("name", "")),
            )
        ]
    props = action.get("properties") or {}
    ref = action.get("node") if kind == "UPDATE_NODE" else props
    subject = str((ref or {}).get("name", "")) if isinstance(ref, dict) else ""
    out: list[Triple] = []
    for key, value in props.items() if isinstance(props, dict) else ():
        term = terms.get(key)
        if term is None or term.datatype is None:
            continue
        for item in value if isinstance(value, list) else [value]:
            out.append((subject, term.label.replace(" ", "_"), str(item)))
    return out


def agent_spec(spec: str, sentence_id: str) -> str:
    """The agent spec for one sentence: ``script:DIR`` becomes that sentence's transcript in ``DIR``."""
    if spec.startswith("script:") and Path(spec[len("script:") :]).is_dir():
        return f"script:{Path(spec[len('script:') :]) / (sentence_id + '.jsonl')}"
    return spec


def extract(
    spec: str, ontology: Ontology, sentence_id: str, sentence: str, max_iterations: int
) -> tuple[list[Triple], Replayed, str | None]:
    """Run one sentence through the loop: (the triples the agent proposed, what IGG accepted and refused, why
    no agent could be made for it, or None). ``AgentUnavailable`` (no endpoint, no model) ends the whole
    run."""
    schema = ontology.schema()
    request = sentence_request(schema, sentence, sentence_id, max_iterations)
    try:
        agent = make_agent(agent_spec(spec, sentence_id), request)
    except RequestInvalid as exc:  # a transcript missing or unreadable for this sentence: an invalid turn
        return [], Replayed(), "; ".join(str(p) for p in exc.problems) or str(exc)
    result = run_request(request, agent)
    raw: list[Triple] = []
    refused: list[Refused] = []
    for record in result.records:
        for i, action in enumerate(record.actions):
            if not isinstance(action, dict):
                continue
            stated = proposed(action, schema)
            raw += [t for t in stated if t not in raw]
            verdict = record.verdicts[i] if i < len(record.verdicts) else None
            if verdict is not None and not verdict.accepted:
                refused += [(t, str(verdict.code), verdict.message) for t in stated]
        if record.parse_error is not None:
            refused.append(
                (
                    ("", "", ""),
                    record.parse_error.get("code", "INVALID_RESPONSE"),
                    record.parse_error.get("message", ""),
                )
            )
    accepted = list(dict.fromkeys(graph_triples(result.state)))
    failed = f"the agent failed: {result.error}" if result.stop_reason == "agent_error" else None
    return raw, Replayed(accepted=accepted, refused=refused, state=result.state), failed


__all__ = ["GOAL", "agent_spec", "extract", "graph_triples", "proposed", "sentence_request"]
