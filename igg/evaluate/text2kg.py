"""``igg eval text2kg``: a model's triples through IGG, scored the benchmark's way (``igg.evaluate.metrics``).

The triples come from the model's recorded answers, replayed through the act step (``--responses``,
``igg.evaluate.replay``), or from an agent extracting through the normal loop (``--agent``,
``igg.evaluate.extract``). ``evaluate`` writes into the output folder:

- ``accepted.jsonl``: one line per test sentence, ``{"id", "triples": [[s, r, o], ...]}``, the accepted
  triples in the benchmark's own format and names (its scorer reads the file unchanged);
- ``report.json``: per metric the raw answers' and the accepted triples' figures, counts (triples, accepted,
  invalid turns, malformed triples, correct triples kept), what IGG dropped by verdict code split into right
  (in the gold set) and wrong, each refused triple's verdict by sentence, and the ontology's import warnings;
- with ``rdf=True``: ``accepted.ttl`` (the accepted graphs' RDF export, united: one IRI per entity) and
  ``shapes.ttl`` (the ontology's SHACL shapes, ``igg schema shacl``), which the export satisfies.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from igg.errors import Problem, RequestInvalid
from igg.evaluate.answers import Answer, Triple, read_answers, read_gold, read_sentences
from igg.evaluate.extract import extract
from igg.evaluate.metrics import METRICS, Stemmer, average, in_sentence, sentence_metrics, triple_key
from igg.evaluate.replay import Replayed, Replayer
from igg.export.rdf import triples as rdf_triples
from igg.ontology import Ontology, OntologyError, load_ontology
from igg.ontology.shapes import shapes_turtle

INVALID_TURN = "INVALID_TURN"
"""The drop code of a sentence whose answer could not be read."""
MALFORMED = "MALFORMED_TRIPLE"
"""The drop code of a triple that is not three non-empty strings."""
COUNTS = (
    "sentences",
    "unanswered",
    "invalid_turns",
    "triples",
    "accepted",
    "malformed",
    "correct_raw",
    "correct_kept",
    "correct_in_sentence_raw",
    "correct_in_sentence_kept",
)
"""What ``report.json`` counts."""


@dataclass
class OntologyRun:
    """One ontology's run: accepted triples by sentence, metrics, counts, drops by code, verdicts."""

    name: str
    accepted: dict[str, list[Triple]] = field(default_factory=dict)
    raw: dict[str, float] = field(default_factory=dict)
    kept: dict[str, float] = field(default_factory=dict)
    dropped: dict[str, dict[str, int]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNTS, 0))
    verdicts: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    graphs: list[Any] = field(default_factory=list)

    def drop(self, code: str, right: bool, n: int = 1) -> None:
        """Count ``n`` triples dropped with ``code``, right (in the gold set) or wrong."""
        row = self.dropped.setdefault(code, {"right": 0, "wrong": 0})
        row["right" if right else "wrong"] += n


@dataclass
class Scoring:
    """What the metrics need besides the triples: gold triples, the stemmer, the ontology's relations and
    concept labels (as the scorer reads them)."""

    gold: dict[str, list[Triple]]
    stemmer: Stemmer
    relations: set[str]
    concepts: str
    raw_rows: list[dict[str, float]] = field(default_factory=list)
    kept_rows: list[dict[str, float]] = field(default_factory=list)

    def add(
        self, run: OntologyRun, sid: str, sentence: str, raw: list[Triple] | None, kept: list[Triple]
    ) -> None:
        """Score one sentence's raw and accepted triples (``raw`` None: the answers have no line for it, which
        the scorer counts as nothing at all, not as an empty answer)."""
        gold = self.gold.get(sid, [])
        self.raw_rows.append(
            dict.fromkeys(METRICS, 0.0)
            if raw is None
            else sentence_metrics(raw, gold, sentence, self.relations, self.concepts, self.stemmer)
        )
        raw = raw or []
        self.kept_rows.append(
            sentence_metrics(kept, gold, sentence, self.relations, self.concepts, self.stemmer)
        )
        truth = {triple_key(t) for t in gold}
        for which, triples in (("raw", raw), ("kept", kept)):
            right = {triple_key(t): t for t in triples if triple_key(t) in truth}
            run.counts[f"correct_{which}"] += len(right)
            run.counts[f"correct_in_sentence_{which}"] += sum(
                1 for t in right.values() if in_sentence(t, sentence, self.concepts, self.stemmer)
            )


def run_ontology(
    name: str,
    ontology: Ontology,
    sentences: dict[str, str],
    answers: dict[str, Answer] | None,
    gold: dict[str, list[Triple]] | None,
    stemmer: Stemmer | None,
    *,
    agent: str | None = None,
    max_iterations: int = 3,
    keep_graphs: bool = False,
) -> OntologyRun:
    """Replay one ontology's answers (or extract with the ``agent`` spec); score raw and accepted when gold is
    given."""
    started = time.perf_counter()
    replayer = Replayer(ontology)
    run = OntologyRun(name)
    scoring = None
    if gold is not None and stemmer is not None:
        scoring = Scoring(
            gold,
            stemmer,
            {r.label.replace(" ", "_") for r in ontology.relations.values()},
            " ".join(c.label for c in ontology.classes.values()),
        )
    for sid, sentence in sentences.items():
        run.counts["sentences"] += 1
        truth = {triple_key(t) for t in (gold or {}).get(sid, [])}
        raw: list[Triple] = []
        done = Replayed()
        if agent is not None:
            raw, done, failed = extract(agent, ontology, sid, sentence, max_iterations)
            if failed is not None:
                run.counts["invalid_turns"] += 1
                run.verdicts[sid] = [{"code": INVALID_TURN, "message": failed}]
        elif answers is not None:
            answer = answers.get(sid)
            if answer is None:
                run.counts["unanswered"] += 1
            elif answer.invalid is not None:
                run.counts["invalid_turns"] += 1
                run.verdicts[sid] = [{"code": INVALID_TURN, "message": answer.invalid}]
            else:
                raw = answer.triples
                run.counts["malformed"] += answer.malformed
                if answer.malformed:
                    run.drop(MALFORMED, False, answer.malformed)
                done = replayer.replay(sentence, raw)
        run.counts["triples"] += len(raw)
        run.accepted[sid] = done.accepted
        run.counts["accepted"] += len(done.accepted)
        for triple, code, _ in done.refused:
            run.drop(code, triple_key(triple) in truth)
        if done.refused:
            run.verdicts[sid] = [{"triple": list(t), "code": c, "message": m} for t, c, m in done.refused]
        if keep_graphs and done.state is not None:
            run.graphs.append(done.state)
        if scoring is not None:
            unanswered = agent is None and answers is not None and sid not in answers
            scoring.add(run, sid, sentence, None if unanswered else raw, done.accepted)
    if scoring is not None:
        run.raw, run.kept = average(scoring.raw_rows), average(scoring.kept_rows)
    run.counts["ms"] = round((time.perf_counter() - started) * 1000)
    return run


def evaluate(
    ontology_path: str | Path,
    sentences_path: str | Path,
    out: str | Path,
    *,
    responses_path: str | Path | None = None,
    gold_path: str | Path | None = None,
    agent: str | None = None,
    max_iterations: int = 3,
    rdf: bool = False,
) -> dict[str, Any]:
    """``igg eval text2kg``: run, write ``accepted.jsonl``, ``report.json`` (and the RDF files with ``rdf``)
    into ``out``; returns the report. Inputs that cannot be read are ``RequestInvalid`` (exit 2)."""
    started = time.perf_counter()
    try:
        ontology = load_ontology(ontology_path)
    except OntologyError as exc:
        raise RequestInvalid([Problem("--ontology", str(exc))], source="igg eval") from None
    if (responses_path is None) == (agent is None):
        raise RequestInvalid(
            [Problem("", "give --responses FILE or --agent SPEC (one of them)")], source="igg eval"
        )
    sentences = read_sentences(sentences_path)
    answers, lost = read_answers(responses_path) if responses_path is not None else (None, 0)
    gold = read_gold(gold_path) if gold_path is not None else None
    stemmer = Stemmer.load() if gold is not None else None
    run = run_ontology(
        ontology_name(ontology_path),
        ontology,
        sentences,
        answers,
        gold,
        stemmer,
        agent=agent,
        max_iterations=max_iterations,
        keep_graphs=rdf,
    )
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "accepted.jsonl", "w", encoding="utf-8") as fh:
        for sid, triples in run.accepted.items():
            fh.write(
                json.dumps({"id": sid, "triples": [list(t) for t in triples]}, ensure_ascii=False) + "\n"
            )
    report: dict[str, Any] = {
        "ontology": run.name,
        "mode": "agent" if agent else "replay",
        "ontology_warnings": ontology.warnings,
        "unreadable_lines": lost,
        "raw": run.raw,
        "accepted": run.kept,
        "counts": run.counts,
        "dropped": dict(sorted(run.dropped.items())),
    }
    if rdf:
        report["rdf"] = write_rdf(run, Replayer(ontology).schema, folder)
    report["elapsed_ms"] = round((time.perf_counter() - started) * 1000)
    report["verdicts"] = run.verdicts
    with open(folder / "report.json", "w", encoding="utf-8") as fh:
        json.dump(report, fh, ensure_ascii=False, indent=1)
    return report


def write_rdf(run: OntologyRun, schema: Any, folder: Path) -> dict[str, Any]:
    """``accepted.ttl`` (every sentence's accepted graph, RDF-exported and united) and ``shapes.ttl``;
    ``RequestInvalid`` (exit 2) without rdflib."""
    try:
        from rdflib import Graph
    except ImportError:
        raise RequestInvalid(
            [Problem("--rdf", "needs rdflib: pip install 'igg[rdf]'")], source="igg eval"
        ) from None

    union = Graph()
    for state in run.graphs:
        union += rdf_triples(state)
    union.serialize(folder / "accepted.ttl", format="turtle")
    (folder / "shapes.ttl").write_text(shapes_turtle(schema), encoding="utf-8")
    return {"graph": "accepted.ttl", "shapes": "shapes.ttl", "triples": len(union)}


def table(reports: list[dict[str, Any]]) -> str:
    """The metrics (raw -> accepted) per ontology and averaged over them, then the drops by code."""
    head = {
        "precision": "precision",
        "recall": "recall",
        "f1": "F1",
        "onto_conf": "onto conf",
        "rel_halluc": "rel halluc",
        "sub_halluc": "subj halluc",
        "obj_halluc": "obj halluc",
    }
    lines = [f"{'ontology':<24}" + "".join(f"{head[m]:>16}" for m in METRICS)]
    scored = [r for r in reports if r["raw"]]
    for r in scored:
        lines.append(
            f"{r['ontology']:<24}" + "".join(f"{r['raw'][m]:>8.3f}>{r['accepted'][m]:.3f}" for m in METRICS)
        )
    if len(scored) > 1:
        lines.append(
            f"{'average':<24}"
            + "".join(
                f"{sum(r['raw'][m] for r in scored) / len(scored):>8.3f}>"
                f"{sum(r['accepted'][m] for r in scored) / len(scored):.3f}"
                for m in METRICS
            )
        )
    dropped: dict[str, dict[str, int]] = {}
    for r in reports:
        for code, row in r["dropped"].items():
            d = dropped.setdefault(code, {"right": 0, "wrong": 0})
            d["right"] += row["right"]
            d["wrong"] += row["wrong"]
    counts = {k: sum(r["counts"].get(k, 0) for r in reports) for k in COUNTS}
    lines.append(
        f"triples {counts['triples']}, accepted {counts['accepted']}, malformed {counts['malformed']}, "
        f"invalid turns {counts['invalid_turns']}; dropped by code (right: in the gold set):"
    )
    lines += [
        f"  {code:<22} right {row['right']:>5}  wrong {row['wrong']:>5}"
        for code, row in sorted(dropped.items())
    ]
    if scored:
        lines.append(
            f"correct triples kept: {counts['correct_kept']} of {counts['correct_raw']}; of those whose "
            f"subject and object the scorer finds in the sentence: {counts['correct_in_sentence_kept']} "
            f"of {counts['correct_in_sentence_raw']}"
        )
    return "\n".join(lines)


def ontology_name(path: str | Path) -> str:
    """A short name of an ontology file: ``19_film_ontology.json`` -> ``19_film``."""
    stem = Path(path).stem
    for cut in ("_ontology", "ont_"):
        stem = stem.replace(cut, "")
    return stem


__all__ = [
    "COUNTS",
    "INVALID_TURN",
    "MALFORMED",
    "OntologyRun",
    "evaluate",
    "ontology_name",
    "run_ontology",
    "table",
    "write_rdf",
]
