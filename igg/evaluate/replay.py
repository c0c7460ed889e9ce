"""Replaying a recorded answer through IGG's act step (``igg eval text2kg --responses``).

Each sentence is a context of its own, with a graph of its own; each triple of its answer becomes actions
under the ontology's schema and ``config.grounding: "values"`` (``igg.act.evidence``, ``igg.act.values``):

- a relation the ontology lacks: ``ADD_EDGE`` of that label (``UNKNOWN_EDGE_TYPE``);
- entity typing from the ontology: an entity not seen yet in the sentence becomes an ``ADD_NODE`` typed by the
  relation's domain (subject) or range (object); one seen already is reused when its type is the wanted one or
  a subtype of it (a pattern on ``Person`` admits a ``Scientist``); one the ontology makes impossible (its
  type and the wanted one declared disjoint) is refused with ``TYPE_CONFLICT``, never silently retyped; else
  the entity gets the wanted type too (OWL classes overlap unless declared disjoint);
- an object relation: ``ADD_EDGE`` between the two, with the subject and object as its evidence; a datatype
  relation: ``UPDATE_NODE`` of the subject setting the property (a number read from its text for a numeric
  datatype, as ``typed`` reads it; a second value makes the property a list), with the same evidence.

A triple is accepted when all its actions are; otherwise what it added is undone and its verdict is the first
rejection. Nothing is added or rewritten: the accepted triples are the answer's own, the relation spelt as the
ontology spells it.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from typing import Any

from igg.act.apply import Actor
from igg.act.evidence import Grounder
from igg.evaluate.answers import Triple, relation_key
from igg.graph.identity import normalize_identity_value
from igg.graph.state import GraphState
from igg.models.actions import read_action
from igg.models.request import Constraints
from igg.models.schema import CompiledSchema
from igg.models.verdicts import ErrorCode
from igg.ontology.model import DATATYPE_KINDS, Ontology, Relation

Refused = tuple[Triple, str, str]
"""A refused triple with its verdict code and message."""


@dataclass
class Replayed:
    """One answer replayed: the accepted triples (the benchmark's names), the refused ones, and the graph."""

    accepted: list[Triple] = field(default_factory=list)
    refused: list[Refused] = field(default_factory=list)
    state: GraphState | None = None


class Replayer:
    """One ontology's schema and relations, replaying answers sentence by sentence."""

    def __init__(self, ontology: Ontology) -> None:
        self.ontology = ontology
        self.schema = ontology.schema()
        self.compiled: CompiledSchema = self.schema.compile()
        self.limits = Constraints(max_nodes=100_000, max_edges=100_000, max_actions_per_response=100_000)
        self.relations = {relation_key(r.name): r for r in ontology.relations.values()}
        self.relations.update({relation_key(r.label): r for r in ontology.relations.values()})
        self.terms = (*self.schema.node_types, *(c.label for c in ontology.classes.values()))
        self.kinds = (*ontology.relations, *(r.label for r in ontology.relations.values()))
        self.fallback = self.schema.node_types[0]

    def name(self, relation: str) -> str | None:
        """The ontology's spelling (label, spaces as ``_``, as the scorer compares) of a relation an answer
        writes, or None when the ontology has no such relation."""
        rel = self.relations.get(relation_key(relation))
        return rel.label.replace(" ", "_") if rel is not None else None

    def replay(self, sentence: str, triples: list[Triple]) -> Replayed:
        """Replay one answer's triples with ``sentence`` as the context (see the module doc)."""
        state = GraphState(self.compiled)
        grounder = Grounder(sentence, 100_000, "values", self.terms, self.kinds)
        actor = Actor(self.compiled, self.limits, grounder=grounder)
        types: dict[str, list[str]] = {}
        out = Replayed(state=state)
        for triple in triples:
            code, message = self._one(state, actor, types, triple)
            if code is None:
                accepted = (triple[0], self.name(triple[1]) or triple[1], triple[2])
                if accepted not in out.accepted:
                    out.accepted.append(accepted)
            else:
                out.refused.append((triple, code, message))
        return out

    def _one(
        self, state: GraphState, actor: Actor, types: dict[str, list[str]], triple: Triple
    ) -> tuple[str | None, str]:
        s, r, o = triple
        rel = self.relations.get(relation_key(r))
        if rel is None:
            return self._apply(
                state, actor, [{"type": "ADD_EDGE", "label": r, "from": {"name": s}, "to": {"name": o}}]
            )
        actions: list[dict[str, Any]] = []
        refs: list[dict[str, str]] = []
        for end, name in (("subject", normalize_identity_value(s)), ("object", normalize_identity_value(o))):
            if end == "object" and rel.kind == "datatype":
                break
            wanted = (rel.domain if end == "subject" else rel.range) or [self.fallback]
            have = types.get(name, [])
            fit = next((t for t in have for w in wanted if t in self.compiled.subtypes.get(w, ())), None)
            if fit is None:
                clash = next(((t, w) for t in have for w in wanted if (t, w) in self.compiled.disjoint), None)
                if clash is not None:
                    return ErrorCode.TYPE_CONFLICT, (
                        f"{name!r} is a {clash[0]} already; {rel.label} wants its {end} to be a "
                        f"{' or '.join(wanted)}, and the ontology makes {clash[0]} and {clash[1]} disjoint"
                    )
                fit = wanted[0]
                if {
                    "label": fit,
                    "name": name,
                } not in refs:  # "Mars named after Mars": one node, then a self-loop
                    actions.append({"type": "ADD_NODE", "label": fit, "properties": {"name": name}})
            refs.append({"label": fit, "name": name})
        if rel.kind == "datatype":
            value = typed(o, rel)
            current = None if actions else state.node_properties(self._node(state, refs[0])).get(rel.name)
            if current is not None:
                value = [*(current if isinstance(current, list) else [current]), value]
            actions.append(
                {"type": "UPDATE_NODE", "node": refs[0], "properties": {rel.name: value}, "evidence": [s, o]}
            )
        else:
            actions.append(
                {"type": "ADD_EDGE", "label": rel.name, "from": refs[0], "to": refs[1], "evidence": [s, o]}
            )
        code, message = self._apply(state, actor, actions)
        if code is None or code == ErrorCode.DUPLICATE_EDGE:
            for a in actions:
                if a["type"] == "ADD_NODE":
                    types.setdefault(a["properties"]["name"], []).append(a["label"])
            return None, ""
        return code, message

    @staticmethod
    def _node(state: GraphState, ref: dict[str, str]) -> str:
        return next(
            n
            for n, d in state.nodes.items()
            if d["type"] == ref["label"] and d["properties"].get("name") == ref["name"]
        )

    @staticmethod
    def _apply(state: GraphState, actor: Actor, actions: list[dict[str, Any]]) -> tuple[str | None, str]:
        mark = len(state.journal)
        verdicts = actor.apply(state, [read_action(a) for a in actions])
        bad = next((v for v in verdicts if not v.accepted), None)
        if bad is None:
            return None, ""
        if bad.code != ErrorCode.DUPLICATE_EDGE:  # the triple is refused whole: its nodes go too
            for m in reversed(state.journal[mark:]):
                state.revert_mutation(m)
            del state.journal[mark:]
        return str(bad.code), bad.message


_NUMBER = re.compile(
    r"[~≈]?\s*[$€£¥]?\s*([+-]?(?:\d[\d,]*)?\.?\d+(?:[eE][+-]?\d+)?)\s*"
    r"(?:\(\s*[^\W\d_]+(?:[\s/][^\W\d_]+)*\s*\)|[^\W\d_]+(?:[\s/][^\W\d_]+)*|%)?"
)
"""A number as knowledge graphs write one: ``~500``, ``$2000000.0``, ``1,200``, a unit after it, in
parentheses or not (``125800.0 (millimetres)``, ``42 m``, ``535.0 (inhabitants per square kilometre)``)."""


_BOOLEANS = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}


def typed(value: str, rel: Relation) -> Any:
    """A datatype relation's value as its property type holds it: ``true``/``yes`` or ``false``/``no`` for a
    boolean; for a numeric datatype, the number read from
    the text as knowledge graphs write numbers (quoted, ``~500``, ``1,200``, ``&minus;7``, a unit after it in
    parentheses or not: ``125800.0 (millimetres)``, ``42 m``); else, or when the text is no number, the text
    itself, which the type check judges. The triple the answer gave is reported as it gave it."""
    kind = DATATYPE_KINDS.get((rel.datatype or "").rsplit("#", 1)[-1], "string")
    if kind == "boolean":
        return _BOOLEANS.get(value.strip().strip('"').casefold(), value)
    if kind not in ("float", "integer"):
        return value
    text = html.unescape(value).replace("\u2212", "-").replace('"', " ").strip()
    match = _NUMBER.fullmatch(text)
    if match is None:
        return value
    number = float(match.group(1).replace(",", ""))
    return int(number) if kind == "integer" and number.is_integer() else number


__all__ = ["Refused", "Replayed", "Replayer", "typed"]
