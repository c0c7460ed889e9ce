"""``igg eval text2kg``: a model's Text2KGBench answers replayed through IGG's act step under the ontology's
schema and the ``values`` grounding policy; writes ``DIR/accepted.jsonl`` (the accepted triples in the
benchmark's own format, for its scorer) and ``DIR/report.json``, and prints the benchmark's metrics for the raw
answers and for what IGG accepted, with what IGG dropped by verdict code (right: in the gold set)."""

from __future__ import annotations

import argparse
import json
import sys


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("eval", help="measure extraction on a benchmark (text2kg)", description=__doc__)
    p.add_argument("benchmark", choices=("text2kg",), help="the benchmark")
    p.add_argument("--ontology", required=True, help="the ontology (Text2KGBench JSON, OWL/RDFS or SHACL)")
    p.add_argument("--sentences", required=True, help="the test sentences (JSON Lines: id, sent)")
    p.add_argument("--ground-truth", help="the gold triples (JSON Lines: id, triples): the metrics need them")
    p.add_argument("--responses", required=True,
                   help="the model's recorded answers (JSON Lines: id, triples or a response text)")
    p.add_argument("--out", required=True, help="folder for accepted.jsonl and report.json")
    p.add_argument("--json", action="store_true", help="print the report (without per-triple verdicts) as JSON")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from igg.evaluate.text2kg import evaluate, table

    report = evaluate(args.ontology, args.sentences, args.responses, args.out, args.ground_truth)
    if args.json:
        sys.stdout.write(json.dumps({k: v for k, v in report.items() if k != "verdicts"}) + "\n")
    else:
        print(table([report]))
    return 0
