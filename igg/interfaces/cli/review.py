"""``igg review SESSION [--approve [I ...] | --reject NOTE] [--note TEXT] [--store PATH] [--json]``: show the
plan a session with ``config.review`` keeps waiting (its actions and their verdicts), approve all of it or the
chosen action indices (applied exactly as shown), or reject it with a note the agent sees next turn."""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from typing import TYPE_CHECKING, Literal

from igg.interfaces.cli.storecli import add_json_option, add_store_option, open_store, print_json
from igg.interfaces.codes import EXIT_INVALID

if TYPE_CHECKING:
    from igg.store.location import StoreLocation
    from igg.workspace.service import Workspace


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "review", help="show, approve or reject a session's plan waiting for review", description=__doc__
    )
    p.add_argument("session", help="the session id")
    group = p.add_mutually_exclusive_group()
    group.add_argument(
        "--approve",
        nargs="*",
        type=int,
        metavar="I",
        help="approve the plan: all its actions, or only these action indices",
    )
    group.add_argument("--reject", metavar="NOTE", help="reject the plan; the note is shown to the agent")
    p.add_argument("--note", default="", help="a note kept with an approval")
    add_store_option(p)
    add_json_option(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    import asyncio

    from igg.store.sessions import StoreSessions
    from igg.workspace.inputs import ReviewInput
    from igg.workspace.service import Workspace

    workspace = Workspace(StoreSessions(open_store(args)))
    shown = asyncio.run(workspace.execute(ReviewInput(session_id=args.session)))
    plan = shown["review"]
    if args.approve is None and args.reject is None:
        if args.json:
            print_json(shown)
        elif plan is None:
            print(f"session {args.session}: {shown['status']}; no plan waits for review")
        else:
            print(
                f"session {args.session}: plan {plan['plan_id']} for iteration {plan['iteration']} waits for"
                f" review ({plan['accepted']} actions would apply, {plan['rejected']} are rejected)"
            )
            if plan["reasoning"]:
                print(f"reasoning: {plan['reasoning']}")
            for action, verdict in zip(plan["actions"], plan["verdicts"], strict=True):
                mark = "ok " if verdict["accepted"] else verdict.get("code", "?")
                print(f"  [{verdict['index']}] {mark} {json.dumps(action, ensure_ascii=False)}")
                if not verdict["accepted"]:
                    print(f"      {verdict['message']}")
            base = shlex.join(["igg", "review", args.session, "--store", str(workspace_store(workspace))])
            if plan.get("update") is not None:  # a planned update (documents) applies whole
                print(f"it applies whole: approve: `{base} --approve`; reject: `{base} --reject 'why'`")
            else:
                print(
                    f"approve all: `{base} --approve`; only some actions: `{base} --approve 0 1`; reject: "
                    f"`{base} --reject 'why'`"
                )
        return 0
    if plan is None:
        print(
            f"igg: session {args.session!r} has no plan waiting for review ({shown['status']})",
            file=sys.stderr,
        )
        return EXIT_INVALID
    decision: Literal["approve", "reject"] = "reject" if args.reject is not None else "approve"
    inp = ReviewInput(
        session_id=args.session,
        plan_id=plan["plan_id"],
        decision=decision,
        actions=args.approve or None,
        note=args.reject if args.reject is not None else args.note,
    )
    result = asyncio.run(workspace.execute(inp))
    if args.json:
        print_json(result)
    elif decision == "reject":
        after = (
            "nothing of it was applied"
            if plan.get("update") is not None
            else "the agent sees the note next turn"
        )
        print(f"session {args.session}: plan {plan['plan_id']} rejected; {after}")
    else:
        print(
            f"session {args.session}: plan {plan['plan_id']} approved: {result['accepted']} actions applied, "
            f"{result['rejected']} rejected; {result['nodes']} nodes, {result['edges']} edges"
        )
    return 0


def workspace_store(workspace: Workspace) -> StoreLocation:
    """The store the workspace reads (for exact commands in hints; a PostgreSQL URL's text hides its
    password)."""
    repo = workspace.repo
    from igg.store.sessions import StoreSessions

    assert isinstance(repo, StoreSessions)
    return repo.store.path
