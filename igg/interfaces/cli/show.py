"""``igg show SESSION [--store PATH] [--json] [--grounding]``: a session's steps — actions proposed, accepted
and rejected (by code), tokens and time per iteration — and its totals. ``--grounding``: how many of its facts
are grounded, ungrounded and unverified, and each ungrounded one with the quotes that were not found."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from igg.interfaces.cli.common import add_time_options
from igg.interfaces.cli.storecli import add_json_option, add_store_option, open_store, print_json, table, when

if TYPE_CHECKING:
    from igg.persistence import SessionInfo
    from igg.store.store import StepInfo


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("show", help="a session's iteration table", description=__doc__)
    p.add_argument("session", help="the session id")
    p.add_argument(
        "--grounding",
        action="store_true",
        help="count grounded, ungrounded and unverified facts; list the ungrounded ones",
    )
    add_time_options(p)
    p.add_argument(
        "--documents",
        action="store_true",
        help="the documents a session was built from (igg run --documents), with their fact counts",
    )
    add_store_option(p)
    add_json_option(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    store = open_store(args)
    if args.grounding:
        return _grounding(store, args)
    if args.as_of is not None or args.known_at is not None:
        return _facts(store, args)
    if args.documents:
        from igg.interfaces.cli.documents import show_documents

        return show_documents(store, args)
    info = store.session(args.session)
    steps = store.steps(args.session)
    if args.json:
        print_json(_session_json(info, steps))
        return 0
    _print_header(info, store.path)
    rows = [_step_row(s) for s in steps]
    if rows:
        print()
        print(table(_STEP_COLUMNS, rows))
    iters = [s for s in steps if s.kind == "iteration"]
    # tokens: the agent turns held for review were paid for too (their review steps carry the usage)
    tokens = sum(s.tokens for s in steps if s.kind in ("iteration", "review"))
    print(
        f"\ntotal: {sum(s.proposed for s in iters)} proposed, {sum(s.accepted for s in iters)} accepted, "
        f"{sum(s.rejected for s in iters)} rejected, {tokens} tokens, "
        f"{sum(s.ms for s in iters) / 1000:.2f} s"
    )
    return 0


def _session_json(info: SessionInfo, steps: list[StepInfo]) -> dict[str, Any]:
    """A session and its steps as ``show --json`` prints them."""
    from igg.store.fork import lineage_of

    return {
        "session_id": info.session_id,
        "status": info.status,
        "stop_reason": info.stop_reason,
        "goal": info.goal,
        "agent": info.agent,
        "iterations": info.last_iteration,
        "nodes": info.nodes,
        "edges": info.edges,
        **lineage_of(info.options),
        **({"git_commit": info.options["git_commit"]} if info.options.get("git_commit") else {}),
        "steps": [
            {
                "step": s.step,
                "kind": s.kind,
                "iteration": s.iteration,
                "chunk": s.chunk,
                "proposed": s.proposed,
                "accepted": s.accepted,
                "rejected": s.rejected,
                "rejected_by_code": s.rejected_by_code,
                "tokens": s.tokens,
                "ms": round(s.ms, 3),
                "mutations": s.mutation_count,
                "nodes": s.nodes,
                "edges": s.edges,
            }
            for s in steps
        ],
    }


def _print_header(info: SessionInfo, store_path: object) -> None:
    """Print what the session is: its status, goal, agent, start, store, commit and the sessions it forks."""
    from igg.store.fork import lineage_of

    print(
        f"session {info.session_id}: {info.status}"
        + (f" ({info.stop_reason})" if info.stop_reason else "")
        + f", {info.last_iteration} iterations, {info.nodes} nodes, {info.edges} edges"
    )
    print(f"goal: {' '.join(info.goal.split())}")
    print(
        f"agent: {info.agent or '-'}; started {when(info.created_at)} UTC; store {store_path}"
        + (f"; git {info.options['git_commit']}" if info.options.get("git_commit") else "")
    )
    lineage = lineage_of(info.options)
    if lineage:
        print(
            "forked from: "
            + " <- ".join(
                f"{p['session_id']} after iteration {p['at_iteration']}"
                for p in reversed(lineage.get("lineage", []))
            )
        )


_STEP_COLUMNS = (
    "STEP",
    "KIND",
    "ITER",
    "PROPOSED",
    "ACCEPTED",
    "REJECTED",
    "TOKENS",
    "MS",
    "MUTATIONS",
    "NODES",
    "EDGES",
    "CHUNK",
    "REJECTED BY CODE",
)


def _step_row(s: StepInfo) -> tuple[Any, ...]:
    """One step's row of the table: its counts, its chunk, its rejections by code (and a turn's failure)."""
    codes = ", ".join(f"{code} {n}" for code, n in sorted(s.rejected_by_code.items()))
    error = s.record.get("parse_error") or {}
    if error.get("code"):
        codes = f"turn: {error['code']}" + (f", {codes}" if codes else "")
    if s.record.get("truncated"):
        codes = "turn: truncated" + (f", {codes}" if codes else "")
    iteration = s.iteration if s.iteration is not None else "-"
    if s.kind == "undo":
        iteration = f"to {s.record.get('to_iteration')}"
    return (
        s.step,
        s.kind,
        iteration,
        s.proposed,
        s.accepted,
        s.rejected,
        s.tokens,
        f"{s.ms:.1f}",
        s.mutation_count,
        s.nodes,
        s.edges,
        _short(s.chunk or ""),
        codes,
    )


def _facts(store: Any, args: argparse.Namespace) -> int:
    """``--as-of`` / ``--known-at``: the session's facts valid at a time, as the journal held them at a time,
    in the observation's notation (``--json``: the graph document)."""
    from igg.graph.asof import as_of
    from igg.observe.graphview import GraphView
    from igg.store.session_graph import time_arg

    told = time_arg("--known-at", args.known_at)
    at = time_arg("--as-of", args.as_of)
    step = store.step_known_at(args.session, told.timestamp()) if told is not None else None
    request, state, step = store.load_state(args.session, upto_step=step)
    whole = (state.node_count, state.edge_count)
    if at is not None:
        state = as_of(state, at)
    if args.json:
        print_json(
            state.to_document(
                request.config.schema_,
                metadata={
                    "session_id": args.session,
                    "step": step,
                    "as_of": args.as_of,
                    "known_at": args.known_at,
                },
            ).model_dump(mode="json", by_alias=True, exclude_none=True)
        )
        return 0
    said = [f"valid at {args.as_of}"] if at is not None else []
    said += [f"known at {args.known_at} (step {step})"] if told is not None else []
    print(
        f"session {args.session}, facts {' and '.join(said)}: {state.node_count} of {whole[0]} nodes, "
        f"{state.edge_count} of {whole[1]} edges"
    )
    for line in GraphView(state).render_all(10**9) or ():
        print(line)
    return 0


def _grounding(store: Any, args: argparse.Namespace) -> int:
    """The session's grounding report (``--grounding``)."""
    from igg.graph.grounding import elements, grounding_counts, grounding_of
    from igg.record.history import describe_evidence

    _, state, _ = store.load_state(args.session)
    counts = grounding_counts(state)
    ungrounded = [
        {
            "kind": kind,
            "id": eid,
            "type": data["type"],
            "properties": data["properties"],
            "evidence": data["provenance"].get("evidence", []),
        }
        for kind, eid, data in elements(state)
        if grounding_of(data["provenance"], data["properties"]) == "ungrounded"
    ]
    if args.json:
        print_json({"session_id": args.session, **counts, "ungrounded_facts": ungrounded})
        return 0
    print(
        f"session {args.session}: {counts['grounded']} grounded, {counts['ungrounded']} ungrounded, "
        f"{counts['unverified']} unverified facts"
    )
    for fact in ungrounded:
        name = next((v for v in fact["properties"].values() if isinstance(v, str)), "")
        print(f"\n{fact['kind']} {fact['id']} {fact['type']}" + (f" {name!r}" if name else ""))
        for item in fact["evidence"]:
            print(f"  evidence: {describe_evidence(item)}")
    return 0


def _short(label: str, width: int = 40) -> str:
    """A chunk label cut to its end (file names end paths)."""
    return label if len(label) <= width else "…" + label[-(width - 1) :]
