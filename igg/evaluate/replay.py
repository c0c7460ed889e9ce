"""Replaying a recorded answer through IGG's act step (``igg eval text2kg --responses``).

Each sentence is a context of its own, with a graph of its own; each triple of its answer becomes actions
under the ontology's schema and ``config.grounding: "values"`` (``igg.act.evidence``, ``igg.act.values``):

- a relation the ontology lacks: ``ADD_EDGE`` of that label (``UNKNOWN_EDGE_TYPE``);
- entity typing from the ontology is the act step's (``config.entity_typing: "schema"``,
  ``igg.act.entities``): an object relation is one ``ADD_EDGE`` whose ends give no type, so the relation's
  domain (subject) and range (object) type them; an entity seen already is reused when its type is the wanted
  one or a subtype of it (a pattern on ``Person`` admits a ``Scientist``); one the ontology makes impossible
  (its type and the wanted one declared disjoint) is refused with ``TYPE_CONFLICT``, never silently retyped;
  else the entity gets the wanted type too (OWL classes overlap unless declared disjoint). Where the act step
  would ask for a type (several fit), the replay gives one (``Replayer._choose``); a datatype relation's
  subject is typed by the same rule;
- an object relation: that ``ADD_EDGE``, with the subject and object as its evidence; a datatype
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
from igg.act.context import CheckContext
from igg.act.entities import fitting, type_ref
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
        actor = Actor(self.compiled, self.limits, grounder=grounder, entity_typing=True)
        out = Replayed(state=state)
        for triple in triples:
            code, message = self._one(state, actor, triple)
            if code is None:
                accepted = (triple[0], self.name(triple[1]) or triple[1], triple[2])
                if accepted not in out.accepted:
                    out.accepted.append(accepted)
            else:
                out.refused.append((triple, code, message))
        return out

    def _one(self, state: GraphState, actor: Actor, triple: Triple) -> tuple[str | None, str]:
        s, r, o = triple
        rel = self.relations.get(relation_key(r))
        subject: dict[str, Any] = {"name": normalize_identity_value(s)}
        if rel is None or rel.kind != "datatype":  # the act step types both ends (igg.act.entities)
            obj: dict[str, Any] = {"name": normalize_identity_value(o)}
            if rel is not None:
                self._choose(state, subject, rel.domain)
                self._choose(state, obj, rel.range)
            edge = {
                "type": "ADD_EDGE",
                "label": r if rel is None else rel.name,
                "from": subject,
                "to": obj,
                "evidence": [s, o],
            }
            return self._apply(state, actor, [edge])
        ctx = CheckContext(state=state, schema=self.compiled, limits=self.limits)
        wants = f"{rel.label} wants its subject to be"
        end = type_ref(ctx, subject, rel.domain or [self.fallback], "subject: ", wants)
        if isinstance(end, tuple):
            return str(end[0]), end[1]
        actions: list[dict[str, Any]] = []
        ref = subject if end is None else end.ref
        value = typed(o, rel)
        if end is not None and end.new is not None:
            actions.append({"type": "ADD_NODE", "label": end.label, "properties": dict(end.new.properties)})
        else:
            found = state.find_nodes(ref)
            current = state.node_properties(found[0]).get(rel.name) if len(found) == 1 else None
            if current is not None:
                value = [*(current if isinstance(current, list) else [current]), value]
        actions.append(
            {"type": "UPDATE_NODE", "node": ref, "properties": {rel.name: value}, "evidence": [s, o]}
        )
        return self._apply(state, actor, actions)

    def _choose(self, state: GraphState, ref: dict[str, Any], types: list[str]) -> None:
        """Give ``ref`` the type the replay chooses where the ontology leaves the choice open and the act step
        would ask for one: the type of the first node of the name that fits, when several do (the sentence's
        entity as it was first typed); else its first class for an end the relation does not type, and the
        first of several classes for an end it gives several (a relation listed once per domain or range, as
        Text2KGBench's ontologies list some)."""
        fits = fitting(state, state.find_nodes(ref), types or list(self.compiled.node_type_list))
        if len(fits) > 1:
            ref["label"] = state.node_type(fits[0])
        elif not fits and len(types) != 1:
            ref["label"] = types[0] if types else self.fallback

    @staticmethod
    def _apply(state: GraphState, actor: Actor, actions: list[dict[str, Any]]) -> tuple[str | None, str]:
        mark = len(state.journal)
        verdicts = actor.apply(state, [read_action(a) for a in actions])
        bad = next((v for v in verdicts if not v.accepted), None)
        if bad is None or bad.code == ErrorCode.DUPLICATE_EDGE:  # a triple said twice is accepted once
            return None, ""
        for m in reversed(state.journal[mark:]):  # the triple is refused whole: its nodes go too
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
