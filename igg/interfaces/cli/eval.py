"""``igg eval text2kg``: a model's Text2KGBench triples through IGG, scored the benchmark's way.

With ``--responses`` the model's recorded answers are replayed through the act step under the ontology's
schema and the ``values`` grounding policy (each sentence its own context); with ``--agent`` an agent extracts
each sentence through the normal loop. Writes ``DIR/accepted.jsonl`` (the accepted triples in the benchmark's
own format, for its scorer), ``DIR/report.json`` (and with ``--rdf`` ``DIR/accepted.ttl`` and
``DIR/shapes.ttl``), and prints the benchmark's metrics for the raw answers and for what IGG accepted, with
what IGG dropped by verdict code, right (in the gold set) and wrong."""

from __future__ import annotations

import argparse
import json
import sys


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("eval", help="measure extraction on a benchmark (text2kg)", description=__doc__)
    p.add_argument("benchmark", choices=("text2kg",), help="the benchmark")
    p.add_argument("--ontology", required=True, help="the ontology (Text2KGBench JSON, OWL/RDFS or SHACL)")
    p.add_argument("--sentences", required=True, help="the test sentences (JSON Lines: id, sent)")
    p.add_argument(
        "--ground-truth",
        metavar="GT",
        help="the gold triples (JSON Lines: id, triples); the metrics need them",
    )
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--responses", help="the model's recorded answers (JSON Lines: id, triples or response)"
    )
    source.add_argument(
        "--agent", help="an agent that extracts through the loop: auto, llm, local, script:PATH"
    )
    p.add_argument(
        "--max-iterations", type=int, default=3, help="iterations per sentence with --agent (default 3)"
    )
    p.add_argument("--out", required=True, help="folder for accepted.jsonl and report.json")
    p.add_argument("--rdf", action="store_true", help="also write accepted.ttl and shapes.ttl (needs rdflib)")
    p.add_argument(
        "--json", action="store_true", help="print the report (without per-triple verdicts) as JSON"
    )
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from igg.evaluate.text2kg import evaluate, table

    report = evaluate(
        args.ontology,
        args.sentences,
        args.out,
        responses_path=args.responses,
        gold_path=args.ground_truth,
        agent=args.agent,
        max_iterations=args.max_iterations,
        rdf=args.rdf,
    )
    if args.json:
        sys.stdout.write(json.dumps({k: v for k, v in report.items() if k != "verdicts"}) + "\n")
    else:
        print(table([report]))
    return 0
