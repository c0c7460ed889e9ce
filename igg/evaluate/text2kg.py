"""``igg eval text2kg``: a model's triples through IGG's act step, scored the benchmark's way.

Replay (``--responses``): each sentence is a context of its own; each triple of its recorded answer becomes
actions under the ontology's schema and ``config.grounding: "values"`` (``igg.act.evidence``):

- a relation the ontology lacks: ``ADD_EDGE`` of that label (``UNKNOWN_EDGE_TYPE``);
- an entity not seen yet in the sentence: ``ADD_NODE`` typed by the relation's domain (subject) or range
  (object); one typed another way that the ontology does not make compatible (neither a subtype of the other):
  ``TYPE_CONFLICT``, the triple refused rather than the type silently picked;
- an object relation: ``ADD_EDGE`` between the two, the subject and object as its evidence; a datatype relation:
  ``UPDATE_NODE`` of the subject setting the property (a second value makes it a list).

A triple is accepted when all its actions are; its verdict is the first rejection otherwise. Nothing is added or
rewritten: ``accepted.jsonl`` holds the answer's own triples (the relation in the ontology's spelling).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from igg.act.apply import Actor
from igg.act.evidence import Grounder
from igg.evaluate.answers import Answer, Triple, relation_key
from igg.evaluate.metrics import METRICS, Stemmer, average, in_sentence, sentence_metrics, triple_key
from igg.graph.state import GraphState
from igg.models.actions import read_action
from igg.models.request import Constraints
from igg.models.schema import CompiledSchema
from igg.models.verdicts import ErrorCode
from igg.ontology.model import DATATYPE_KINDS, Ontology, Relation

INVALID_TURN = "INVALID_TURN"
"""The drop code of a sentence whose answer could not be read."""
MALFORMED = "MALFORMED_TRIPLE"
"""The drop code of a triple that is not three non-empty strings."""


@dataclass
class OntologyRun:
    """One ontology's replay: accepted triples by sentence, metrics, and what was dropped by code."""

    name: str
    accepted: dict[str, list[Triple]] = field(default_factory=dict)
    raw: dict[str, float] = field(default_factory=dict)
    kept: dict[str, float] = field(default_factory=dict)
    dropped: dict[str, dict[str, int]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    verdicts: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def drop(self, code: str, right: bool, n: int = 1) -> None:
        """Count ``n`` triples dropped with ``code``, right (in the gold set) or wrong."""
        row = self.dropped.setdefault(code, {"right": 0, "wrong": 0})
        row["right" if right else "wrong"] += n


class Replayer:
    """One ontology's schema and relations, replaying answers sentence by sentence."""

    def __init__(self, ontology: Ontology) -> None:
        self.ontology = ontology
        self.schema = ontology.schema()
        self.compiled: CompiledSchema = self.schema.compile()
        self.limits = Constraints(max_nodes=100_000, max_edges=100_000, max_actions_per_response=100_000)
        self.relations = {relation_key(r.label): r for r in ontology.relations.values()}
        self.relations.update({relation_key(r.name): r for r in ontology.relations.values()})
        self.terms = (*self.schema.node_types, *(c.label for c in ontology.classes.values()))
        self.kinds = (*ontology.relations, *(r.label for r in ontology.relations.values()))
        self.fallback = self.schema.node_types[0]

    def replay(self, sentence: str, triples: list[Triple]) -> tuple[list[Triple], list[tuple[Triple, str, str]]]:
        """The accepted triples (in the benchmark's names), and each refused one with its code and message."""
        state = GraphState(self.compiled)
        actor = Actor(self.compiled, self.limits, grounder=Grounder(sentence, 100_000, "values", self.terms, self.kinds))
        types: dict[str, list[str]] = {}
        accepted: list[Triple] = []
        refused: list[tuple[Triple, str, str]] = []
        for triple in triples:
            code, message = self._one(state, actor, types, triple)
            if code is None:
                rel = self.relations[relation_key(triple[1])]
                out = (triple[0], rel.label.replace(" ", "_"), triple[2])
                if out not in accepted:
                    accepted.append(out)
            else:
                refused.append((triple, code, message))
        return accepted, refused

    def _one(self, state: GraphState, actor: Actor, types: dict[str, list[str]], triple: Triple
             ) -> tuple[str | None, str]:
        s, r, o = triple
        rel = self.relations.get(relation_key(r))
        if rel is None:
            return self._apply(state, actor, [{"type": "ADD_EDGE", "label": r, "from": {"name": s}, "to": {"name": o}}])
        actions: list[dict[str, Any]] = []
        refs: list[dict[str, str]] = []
        for end, name in (("subject", s), ("object", o)):
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
                        f"{' or '.join(wanted)}, and the ontology makes {clash[0]} and {clash[1]} disjoint")
                fit = wanted[0]  # an entity may be of several classes the ontology does not keep apart
                actions.append({"type": "ADD_NODE", "label": fit, "properties": {"name": name}})
            refs.append({"label": fit, "name": name})
        if rel.kind == "datatype":
            value = _typed(o, rel)
            current = state.node_properties(self._node(state, refs[0])).get(rel.name) if not actions else None
            if current is not None:
                value = [*(current if isinstance(current, list) else [current]), value]
            actions.append({"type": "UPDATE_NODE", "node": refs[0], "properties": {rel.name: value}})
        else:
            actions.append({"type": "ADD_EDGE", "label": rel.name, "from": refs[0], "to": refs[1],
                            "evidence": [s, o]})
        code, message = self._apply(state, actor, actions)
        if code is None or code == ErrorCode.DUPLICATE_EDGE:
            for a in actions:
                if a["type"] == "ADD_NODE":
                    types.setdefault(a["properties"]["name"], []).append(a["label"])
            return None, ""
        return code, message

    def _node(self, state: GraphState, ref: dict[str, str]) -> str:
        return next(n for n, d in state.nodes.items()
                    if d["type"] == ref["label"] and d["properties"].get("name") == ref["name"])

    def _apply(self, state: GraphState, actor: Actor, actions: list[dict[str, Any]]) -> tuple[str | None, str]:
        mark = len(state.journal)
        verdicts = actor.apply(state, [read_action(a) for a in actions])
        bad = next((v for v in verdicts if not v.accepted), None)
        if bad is None:
            return None, ""
        if bad.code == ErrorCode.DUPLICATE_EDGE:
            return str(bad.code), bad.message
        for m in reversed(state.journal[mark:]):  # the triple is refused whole: its nodes go too
            state.revert_mutation(m)
        del state.journal[mark:]
        return str(bad.code), bad.message


def _typed(value: str, rel: Relation) -> Any:
    """A datatype relation's value as its property type holds it (a number read from its text when the type is
    numeric and the text is one; else the text, which the type check then judges)."""
    kind = DATATYPE_KINDS.get((rel.datatype or "").rsplit("#", 1)[-1], "string")
    if kind in ("float", "integer"):
        text = value.replace(",", "").strip()
        try:
            number = float(text)
        except ValueError:
            return value
        return int(number) if kind == "integer" and number.is_integer() else number
    return value


def run_ontology(name: str, ontology: Ontology, sentences: dict[str, str], answers: dict[str, Answer],
                 gold: dict[str, list[Triple]] | None, stemmer: Stemmer | None) -> OntologyRun:
    """Replay one ontology's answers; score raw and accepted when gold triples are given."""
    started = time.perf_counter()
    replayer = Replayer(ontology)
    run = OntologyRun(name)
    relations = {r.label.replace(" ", "_") for r in ontology.relations.values()}
    concepts = " ".join(c.label for c in ontology.classes.values())
    raw_rows, kept_rows = [], []
    counts = dict.fromkeys(("sentences", "answered", "invalid_turns", "triples", "accepted", "malformed",
                            "correct_raw", "correct_kept", "correct_in_sentence_raw", "correct_in_sentence_kept"), 0)
    for sid, sentence in sentences.items():
        counts["sentences"] += 1
        answer = answers.get(sid)
        truth = {triple_key(t) for t in (gold or {}).get(sid, [])}
        if answer is None or answer.invalid is not None:
            counts["invalid_turns"] += answer is not None
            run.accepted[sid] = []
            if answer is not None:
                run.verdicts[sid] = [{"code": INVALID_TURN, "message": answer.invalid}]
            raw: list[Triple] = []
        else:
            counts["answered"] += 1
            raw = answer.triples
            counts["triples"] += len(raw)
            counts["malformed"] += answer.malformed
            if answer.malformed:
                run.drop(MALFORMED, False, answer.malformed)
            accepted, refused = replayer.replay(sentence, raw)
            run.accepted[sid] = accepted
            counts["accepted"] += len(accepted)
            for triple, code, message in refused:
                run.drop(code, triple_key(triple) in truth)
            run.verdicts[sid] = [{"triple": list(t), "code": c, "message": m} for t, c, m in refused]
        if gold is not None and stemmer is not None:
            g = gold.get(sid, [])
            raw_rows.append(sentence_metrics(raw, g, sentence, relations, concepts, stemmer))
            kept_rows.append(sentence_metrics(run.accepted[sid], g, sentence, relations, concepts, stemmer))
            for which, triples in (("raw", raw), ("kept", run.accepted[sid])):
                right = {triple_key(t): t for t in triples if triple_key(t) in truth}
                counts[f"correct_{which}"] += len(right)
                counts[f"correct_in_sentence_{which}"] += sum(
                    1 for t in right.values() if in_sentence(t, sentence, concepts, stemmer))
    run.counts = counts
    if raw_rows:
        run.raw, run.kept = average(raw_rows), average(kept_rows)
    run.counts["ms"] = round((time.perf_counter() - started) * 1000)
    return run


def summary(runs: list[OntologyRun]) -> dict[str, Any]:
    """Overall: metrics averaged over the ontologies (the benchmark's way), counts and drops summed."""
    out: dict[str, Any] = {"ontologies": len(runs)}
    if runs and runs[0].raw:
        out["raw"] = {m: sum(r.raw[m] for r in runs) / len(runs) for m in METRICS}
        out["accepted"] = {m: sum(r.kept[m] for r in runs) / len(runs) for m in METRICS}
    counts: dict[str, int] = {}
    dropped: dict[str, dict[str, int]] = {}
    for r in runs:
        for k, v in r.counts.items():
            counts[k] = counts.get(k, 0) + v
        for code, row in r.dropped.items():
            d = dropped.setdefault(code, {"right": 0, "wrong": 0})
            d["right"] += row["right"]
            d["wrong"] += row["wrong"]
    out["counts"], out["dropped"] = counts, dict(sorted(dropped.items()))
    return out


def ontology_name(path: str | Path) -> str:
    """A short name of an ontology file: ``19_film_ontology.json`` -> ``19_film``."""
    stem = Path(path).stem
    for cut in ("_ontology", "ont_"):
        stem = stem.replace(cut, "")
    return stem


__all__ = ["INVALID_TURN", "MALFORMED", "OntologyRun", "Replayer", "ontology_name", "run_ontology", "summary"]


def evaluate(ontology_path: str | Path, sentences_path: str | Path, responses_path: str | Path, out: str | Path,
             gold_path: str | Path | None = None) -> dict[str, Any]:
    """``igg eval text2kg`` with ``--responses``: replay, write ``accepted.jsonl`` and ``report.json`` into
    ``out``, and return the report (``RequestInvalid``, exit 2, for files that cannot be read)."""
    import json

    from igg.errors import Problem, RequestInvalid
    from igg.evaluate.answers import read_answers, read_gold, read_sentences
    from igg.ontology import OntologyError, load_ontology

    started = time.perf_counter()
    try:
        ontology = load_ontology(ontology_path)
    except OntologyError as exc:
        raise RequestInvalid([Problem("--ontology", str(exc))], source="igg eval") from None
    sentences = read_sentences(sentences_path)
    answers, lost = read_answers(responses_path)
    gold = read_gold(gold_path) if gold_path is not None else None
    stemmer = Stemmer.load() if gold is not None else None
    run = run_ontology(ontology_name(ontology_path), ontology, sentences, answers, gold, stemmer)
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "accepted.jsonl", "w", encoding="utf-8") as fh:
        for sid, triples in run.accepted.items():
            fh.write(json.dumps({"id": sid, "triples": [list(t) for t in triples]}, ensure_ascii=False) + "\n")
    report: dict[str, Any] = {
        "ontology": run.name, "ontology_warnings": ontology.warnings, "unreadable_lines": lost,
        "raw": run.raw, "accepted": run.kept, "counts": run.counts, "dropped": dict(sorted(run.dropped.items())),
        "elapsed_ms": round((time.perf_counter() - started) * 1000), "verdicts": run.verdicts}
    with open(folder / "report.json", "w", encoding="utf-8") as fh:
        json.dump(report, fh, ensure_ascii=False, indent=1)
    return report


def table(reports: list[dict[str, Any]]) -> str:
    """The metrics (raw -> accepted) per ontology and averaged over them, then the drops by code."""
    lines = [f"{'ontology':<24} " + " ".join(f"{m:>15}" for m in METRICS)]
    scored = [r for r in reports if r["raw"]]
    for r in scored:
        lines.append(f"{r['ontology']:<24} " + " ".join(f"{r['raw'][m]:>6.3f} -> {r['accepted'][m]:.3f}"
                                                        for m in METRICS))
    if len(scored) > 1:
        lines.append(f"{'average':<24} " + " ".join(
            f"{sum(r['raw'][m] for r in scored) / len(scored):>6.3f} -> "
            f"{sum(r['accepted'][m] for r in scored) / len(scored):.3f}" for m in METRICS))
    dropped: dict[str, dict[str, int]] = {}
    for r in reports:
        for code, row in r["dropped"].items():
            d = dropped.setdefault(code, {"right": 0, "wrong": 0})
            d["right"] += row["right"]
            d["wrong"] += row["wrong"]
    counts = {k: sum(r["counts"].get(k, 0) for r in reports) for k in ("triples", "accepted", "invalid_turns")}
    lines.append(f"triples {counts['triples']}, accepted {counts['accepted']}, invalid turns "
                 f"{counts['invalid_turns']}; dropped by code (right = in the gold set):")
    lines += [f"  {code:<22} right {row['right']:>5}  wrong {row['wrong']:>5}" for code, row in sorted(dropped.items())]
    return "\n".join(lines)


__all__ += ["evaluate", "table"]
