"""``igg run REQUEST.json --documents PATH... [--update --session ID]``: a session built from documents, and
kept in step with them (``igg.documents``); ``igg show SESSION --documents``: its documents with their fact
counts."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path
from typing import Any

from igg.interfaces.cli.storecli import print_json, table


def add_documents_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--documents",
        nargs="+",
        type=Path,
        metavar="PATH",
        help=(
            "build the graph from these files and folders (.txt .md .rst .html, .jsonl with "
            '{"id", "text"} per line), each a document the facts it supports record'
        ),
    )
    parser.add_argument(
        "--update",
        action="store_true",
        help=(
            "with --documents and --session: bring that stored session in step with the documents "
            "(new and changed ones read again, facts of removed text retracted)"
        ),
    )
    parser.add_argument("--session", metavar="ID", help="the session --update changes")
    parser.add_argument(
        "--review",
        action="store_true",
        help=(
            "with --documents: plan and check the whole change and keep it as a plan waiting for review "
            "(igg review SESSION shows, approves or rejects it); nothing is applied until approved"
        ),
    )


def run_documents(args: argparse.Namespace, request: Any, agent: Any) -> int:
    from igg.documents.build import build_documents
    from igg.errors import Problem, RequestInvalid
    from igg.store.location import resolve_store_path

    if args.update and not args.session:
        raise RequestInvalid(
            [Problem("--update", "--update needs --session ID (the session to update)")],
            source="the command line",
        )
    others = [
        flag
        for flag, given in (
            ("--out", args.out),
            ("--export", args.export),
            ("--no-store", args.no_store),
            ("--sync-each-iteration", args.sync_each_iteration),
        )
        if given
    ]
    if others:
        raise RequestInvalid(
            [
                Problem(
                    flag,
                    "--documents keeps its session in a store (--store); export it "
                    "afterwards with igg export SESSION",
                )
                for flag in others
            ],
            source="the command line",
        )
    store = resolve_store_path(args.store)
    result = build_documents(
        request,
        agent,
        args.documents,
        store,
        agent_name=args.agent,
        session_id=args.session,
        update=args.update,
        force=args.force,
        review=args.review,
    )
    if args.json:
        print_json(result.to_dict())
        return 0
    print_result(result, store)
    return 0


def print_result(result: Any, store: Any) -> None:
    """A build's or an update's summary lines (``DocumentsResult``)."""
    docs, facts = result.documents, result.facts
    if not result.applied:
        c = result.changes
        plan_id = result.plan.plan_id if result.plan is not None else "?"
        review = shlex.join(["igg", "review", result.session_id, "--store", str(store)])
        print(
            f"session {result.session_id}: plan {plan_id} waits for review: nodes +{c['nodes_added']} "
            f"-{c['nodes_removed']} ~{c['nodes_changed']}, edges +{c['edges_added']} -{c['edges_removed']} "
            f"~{c['edges_changed']}"
            + (
                f"; refused: {'; '.join(result.problems[:5])}"
                if result.problems
                else "; the act step would take it"
            )
        )
        print(f"show it: `{review}`; apply it: `{review} --approve`; drop it: `{review} --reject 'why'`")
    else:
        print(
            f"session {result.session_id}: iteration {result.iteration}, {result.graph['nodes']} nodes, "
            f"{result.graph['edges']} edges"
        )
    print(
        f"documents: {docs['added']} added, {docs['changed']} changed, {docs['removed']} removed,"
        f" {docs['unchanged']} unchanged; facts: {facts['facts_retracted']} retracted, {facts['facts_kept']}"
        f" kept; agent calls: {result.agent_calls}"
    )
    for skip in docs["skipped"]:
        print(f"skipped {skip['path']}: {skip['reason']}")
    if result.dropped:
        print(
            f"{len(result.dropped)} claim(s) dropped, e.g. {result.dropped[0]['document']}: "
            f"{result.dropped[0]['reason']}"
        )


def show_documents(store: Any, args: argparse.Namespace) -> int:
    from igg.documents.build import document_facts, stored_corpus

    manifest = stored_corpus(store, args.session) or {}
    _, state, _ = store.load_state(args.session)
    rows = document_facts(state, manifest)
    if args.json:
        print_json({"session_id": args.session, "documents": rows})
        return 0
    print(f"session {args.session}: {len(rows)} documents")
    if rows:
        print(
            table(
                ("DOCUMENT", "SHA", "NODES", "EDGES"),
                [(r["document"], (r["sha"] or "")[:12], r["nodes"], r["edges"]) for r in rows],
            )
        )
    return 0
