"""``igg eval text2kg`` over Text2KGBench's 19 DBpedia-WebNLG ontologies with the Vicuna-13B answers: the
benchmark's metrics for the raw answers and for what IGG accepted, per ontology and averaged the benchmark's way,
what IGG dropped, how many correct triples it kept, the ontologies whose F1 fell, and the time for all 19.

    python scripts/bench_text2kg.py [DATA]   # DATA: the benchmark's folder (default ../shared/data/text2kgbench)
    python scripts/bench_text2kg.py --owl    # the ontologies read from the benchmark's OWL (Turtle) files
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from igg.evaluate.text2kg import evaluate, table

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    owl = "--owl" in sys.argv
    data = Path(args[0]) if args else ROOT.parent / "shared" / "data" / "text2kgbench"
    base = data / "dbpedia_webnlg"
    if not base.is_dir():
        print(f"no Text2KGBench at {data}: give its folder", file=sys.stderr)
        return 2
    names = sorted((p.name.removesuffix("_ontology.json") for p in (base / "ontologies").glob("*_ontology.json")),
                   key=lambda n: int(n.split("_")[0]))
    started = time.perf_counter()
    reports = []
    with tempfile.TemporaryDirectory() as out:
        for name in names:
            onto = base / "ontologies" / ("owl/ont_" + name + ".ttl" if owl else name + "_ontology.json")
            answers = base / "baselines" / "Vicuna-13B" / "llm_responses" / f"{name}_Vicuna13B_responses.jsonl"
            reports.append(evaluate(onto, base / "test" / f"ont_{name}_test.jsonl", Path(out) / name,
                                    responses_path=answers,
                                    gold_path=base / "ground_truth" / f"ont_{name}_ground_truth.jsonl"))
    elapsed = time.perf_counter() - started
    print(table(reports))
    counts = {k: sum(r["counts"][k] for r in reports) for k in ("correct_raw", "correct_kept", "correct_in_sentence_raw",
                                                               "correct_in_sentence_kept")}
    print(f"correct triples kept: {counts['correct_kept'] / counts['correct_raw']:.1%} of all, "
          f"{counts['correct_in_sentence_kept'] / counts['correct_in_sentence_raw']:.1%} of those whose subject and "
          "object the scorer finds in the sentence")
    lower = [(r["ontology"], r["raw"]["f1"], r["accepted"]["f1"]) for r in reports if r["accepted"]["f1"] < r["raw"]["f1"]]
    print(f"ontologies whose F1 is lower than the raw answers': {len(lower)} "
          + ", ".join(f"{n} ({a:.4f} -> {b:.4f})" for n, a, b in lower))
    print(f"{len(reports)} ontologies in {elapsed:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
