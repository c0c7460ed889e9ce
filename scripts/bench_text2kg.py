"""``igg eval text2kg`` over Text2KGBench's 19 DBpedia-WebNLG ontologies with the Vicuna-13B answers: the
benchmark's metrics for the raw answers and for what IGG accepted, per ontology and averaged the benchmark's
way, what IGG dropped, how many correct triples it kept, the ontologies whose F1 fell, and the time for all
19.

    python scripts/bench_text2kg.py [DATA]   # DATA: the benchmark's folder (../shared/data/text2kgbench)
    python scripts/bench_text2kg.py --owl    # the ontologies read from the benchmark's OWL (Turtle) files
    python scripts/bench_text2kg.py --scorer # then the benchmark's own scorer (evaluation/run_eval.py) on the
                                             # raw answers and on IGG's accepted.jsonl: its global lines
    python scripts/bench_text2kg.py DATA --tekgen [--alpaca]
        # the other family: the 10 Wikidata-TekGen ontologies read from their OWL (Turtle) files, with the
        # Vicuna-13B (or Alpaca-LoRA-13B) answers; DATA: a checkout of the benchmark (/work/shared holds only
        # DBpedia-WebNLG)

The scorer runs with NLTK's Treebank word tokenizer in place of ``word_tokenize`` (whose punkt model cannot be
downloaded here), as the tests run it.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from igg.evaluate.text2kg import evaluate, table

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    owl, tekgen = "--owl" in sys.argv, "--tekgen" in sys.argv
    data = Path(args[0]) if args else ROOT.parent / "shared" / "data" / "text2kgbench"
    base = data / ("wikidata_tekgen" if tekgen else "dbpedia_webnlg")
    if not base.is_dir():
        print(f"no {base.name} in {data}: give the benchmark's folder", file=sys.stderr)
        return 2
    names = sorted(
        (p.name.removesuffix("_ontology.json") for p in (base / "ontologies").glob("*_ontology.json")),
        key=lambda n: int(n.split("_")[0]),
    )
    answers = answer_files(base, tekgen, "--alpaca" in sys.argv)
    started = time.perf_counter()
    reports = []
    with tempfile.TemporaryDirectory() as out:
        for name in names:
            onto = (
                base
                / "ontologies"
                / ("owl/ont_" + name + ".ttl" if owl or tekgen else name + "_ontology.json")
            )
            reports.append(
                evaluate(
                    onto,
                    base / "test" / f"ont_{name}_test.jsonl",
                    Path(out) / name,
                    responses_path=answers.replace("$$onto$$", name),
                    gold_path=base / "ground_truth" / f"ont_{name}_ground_truth.jsonl",
                )
            )
        elapsed = time.perf_counter() - started
        if "--scorer" in sys.argv:
            scored = {
                which: scorer(data, base, names, pattern, Path(out))
                for which, pattern in (
                    ("raw", answers),
                    ("accepted", str(Path(out) / "$$onto$$" / "accepted.jsonl")),
                )
            }
    print(table(reports))
    counts = {
        k: sum(r["counts"][k] for r in reports)
        for k in ("correct_raw", "correct_kept", "correct_in_sentence_raw", "correct_in_sentence_kept")
    }
    print(
        f"correct triples kept: {counts['correct_kept'] / counts['correct_raw']:.1%} of all,"
        f" {counts['correct_in_sentence_kept'] / counts['correct_in_sentence_raw']:.1%} of those whose"
        " subject and object the scorer finds in the sentence"
    )
    lower = [
        (r["ontology"], r["raw"]["f1"], r["accepted"]["f1"])
        for r in reports
        if r["accepted"]["f1"] < r["raw"]["f1"]
    ]
    print(
        f"ontologies whose F1 is lower than the raw answers': {len(lower)} "
        + ", ".join(f"{n} ({a:.4f} -> {b:.4f})" for n, a, b in lower)
    )
    print(f"{len(reports)} ontologies in {elapsed:.1f} s")
    if "--scorer" in sys.argv:
        for which, rows in scored.items():
            overall = rows["global"]
            lower = [
                n for n in names if which == "accepted" and rows[n]["avg_f1"] < scored["raw"][n]["avg_f1"]
            ]
            print(
                f"the benchmark's scorer, {which}: "
                + ", ".join(f"{k.removeprefix('avg_')} {overall[k]}" for k in overall if k.startswith("avg_"))
                + (f"; F1 lower than raw on {len(lower)}: {', '.join(lower)}" if which == "accepted" else "")
            )
    return 0


def answer_files(base: Path, tekgen: bool, alpaca: bool) -> str:
    """The path pattern (``$$onto$$`` for the ontology) of the recorded answers."""
    if not tekgen:
        return str(base / "baselines" / "Vicuna-13B" / "llm_responses" / "$$onto$$_Vicuna13B_responses.jsonl")
    if alpaca:
        return str(
            base
            / "baselines"
            / "Alpaca-LoRA-13B"
            / "llm_responses"
            / "ont_$$onto$$_lora-13b_responses_v2.jsonl"
        )
    return str(base / "baselines" / "Vicuna-13B" / "llm_responses" / "ont_$$onto$$_llm_responses.jsonl")


def scorer(data: Path, base: Path, names: list[str], system: str, out: Path) -> dict[str, dict[str, Any]]:
    """The benchmark's own ``run_eval.py`` on ``system`` (a path pattern with ``$$onto$$``): its rows by
    ontology."""
    from nltk.tokenize import NLTKWordTokenizer

    spec = importlib.util.spec_from_file_location("run_eval", data / "evaluation" / "run_eval.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.word_tokenize = NLTKWordTokenizer().tokenize
    avg = out / f"avg_{abs(hash(system))}.jsonl"
    config = {
        "onto_list": names,
        "avg_out_file": str(avg),
        "path_patterns": {
            "sys": system,
            "gt": str(base / "ground_truth" / "ont_$$onto$$_ground_truth.jsonl"),
            "onto": str(base / "ontologies" / "$$onto$$_ontology.json"),
            "output": str(out / "ont_$$onto$$_eval.jsonl"),
        },
    }
    path = out / "eval_config.json"
    path.write_text(json.dumps(config))
    argv, sys.argv = sys.argv, ["run_eval.py", "--eval_config_path", str(path)]
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # it prints every imperfect sentence
            module.main()
    finally:
        sys.argv = argv
    rows = [json.loads(line) for line in avg.read_text().splitlines()]
    return {row.get("onto", "global"): row for row in rows}


if __name__ == "__main__":
    sys.exit(main())
