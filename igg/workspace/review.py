"""Review before apply: with ``config.review`` a session's actions wait as a pending plan for a reviewer.

``apply_actions`` on such a session validates the actions as if applied (a dry run) and keeps them, with
their verdicts, as the session's *pending plan*; the session reports ``awaiting_review`` and refuses other
applies (``REVIEW_PENDING``) until the plan is decided. ``review`` shows the plan, or decides it:

- ``approve`` (all actions, or the chosen ``actions`` indices) applies exactly the stored actions as the
  plan's iteration: nothing can change the graph while a plan waits, so they meet the verdicts shown;
- ``reject`` with a ``note`` discards the plan; the note is shown to the agent in its next observation.

The plan names its ``plan_id``; a decision for another plan is refused (``REVIEW_STALE``), so a reviewer
never approves something they were not shown. In a session store the plan and every decision are steps of
their own (kind ``review``), so a plan waiting for review survives a server restart; ``igg review SESSION``
decides it from the command line.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from igg.act.step import act
from igg.errors import SessionError, WorkspaceError
from igg.models.actions import read_response
from igg.persistence import TOOL_AGENT
from igg.store.sessions import StoreSessions
from igg.workspace.ops import ApplyInput, ReviewInput

if TYPE_CHECKING:
    from igg.workspace.service import LiveSession, Workspace

AWAITING = "awaiting_review"


def propose(workspace: Workspace, session: LiveSession, inp: ApplyInput) -> dict[str, Any]:
    """Keep the actions as the pending plan (validated by a dry run); called by ``apply`` under the lock."""
    sid = session.info.session_id
    if session.pending is not None:
        raise WorkspaceError("REVIEW_PENDING", f"session {sid!r} has plan {session.pending['plan_id']} waiting for "
                             "review; approve or reject it first (review)", status=409)
    parsed = read_response({"reasoning": inp.reasoning, "actions": inp.actions})
    counters = session.state.id_counters  # the dry run must not use up the ids the approval will give
    record = act(session.actor, session.state, parsed, iteration=session.info.iteration + 1,
                 actions=list(inp.actions), dry_run=True)
    session.state.restore_id_counters(*counters)
    plan = {"plan_id": session.info.last_step + 1, "iteration": record.iteration, "reasoning": inp.reasoning,
            "actions": list(inp.actions), "verdicts": [v.to_dict() for v in record.verdicts],
            "accepted": record.accepted, "rejected": record.rejected}
    _keep(workspace, session, {"kind": "review", "state": "pending", "plan": plan})
    session.pending = plan
    session.review_note = None
    return {**workspace.summary(session), "review": plan}


def show(workspace: Workspace, session: LiveSession) -> dict[str, Any]:
    """The pending plan, if any."""
    return {**workspace.summary(session), "review": session.pending}


def decide(workspace: Workspace, inp: ReviewInput) -> dict[str, Any]:
    """Show the plan (no decision), approve (all or chosen actions) or reject it with a note."""
    session = workspace.get(inp.session_id)
    with session.lock:
        if inp.decision is None:
            return show(workspace, session)
        plan = session.pending
        sid = inp.session_id
        if plan is None:
            raise WorkspaceError("NO_PENDING_REVIEW", f"session {sid!r} has no plan waiting for review", status=409)
        if inp.plan_id != plan["plan_id"]:
            raise WorkspaceError("REVIEW_STALE", f"plan {inp.plan_id} is not the plan waiting in session {sid!r} "
                                 f"(plan {plan['plan_id']}); show it again and decide on what you see", status=409)
        if inp.decision == "reject":
            _keep(workspace, session, {"kind": "review", "state": "rejected", "plan_id": plan["plan_id"],
                                       "note": inp.note})
            session.pending, session.review_note = None, inp.note or "(no note)"
            return {**workspace.summary(session), "rejected": plan["plan_id"], "note": inp.note}
        chosen = list(range(len(plan["actions"]))) if inp.actions is None else inp.actions
        bad = [i for i in chosen if not 0 <= i < len(plan["actions"])]
        if bad:
            raise WorkspaceError("INVALID_ARGUMENTS", f"actions {bad} are not in plan {plan['plan_id']} (it has "
                                 f"{len(plan['actions'])} actions, 0..{len(plan['actions']) - 1})", status=422)
        actions = [plan["actions"][i] for i in chosen]
        reasoning = plan["reasoning"] + (f" [approved {len(actions)} of {len(plan['actions'])}"
                                         + (f": {inp.note}]" if inp.note else "]"))
        # a run's plan keeps the agent's "finished" (igg run with review): approving it ends the run on resume
        parsed = read_response({"reasoning": reasoning, "actions": actions, "finished": bool(plan.get("finished"))})
        # a run's plan names the context chunk its turn read: the approved iteration keeps it, so the walk
        # over the chunks goes on after it (igg resume, a workspace run continuing)
        record = act(session.actor, session.state, parsed, iteration=plan["iteration"], actions=actions,
                     chunk=plan.get("chunk"), chunk_cursor=int(plan.get("chunk_cursor") or 0))
        record.timings_ms["total"] = record.timings_ms["act"]
        workspace._commit(session, record)
        workspace._publish(session, record)
        session.pending, session.review_note = None, None
        return {**workspace.summary(session), "approved": chosen, "verdicts": [v.to_dict() for v in record.verdicts],
                "accepted": record.accepted, "rejected": record.rejected}


def restore(workspace: Workspace, session: LiveSession) -> None:
    """After loading a session from the store: the plan still waiting, or the last rejection's note."""
    repo = workspace.repo
    if session.info.status == AWAITING:  # a live session keeps its plan in ``pending``; its status is its own
        session.info = replace(session.info, status="open" if session.info.agent == TOOL_AGENT else "interrupted")
    if not isinstance(repo, StoreSessions) or not session.request.config.review:
        return
    steps = repo.store.steps(session.info.session_id)
    if not steps or steps[-1].kind != "review":
        return
    record = steps[-1].record
    if record.get("state") == "pending":
        session.pending = record["plan"]
    elif record.get("state") == "rejected":
        session.review_note = record.get("note") or "(no note)"


def _keep(workspace: Workspace, session: LiveSession, record: dict[str, Any]) -> None:
    """A review step in the session store (memory sessions keep the plan in memory only)."""
    repo = workspace.repo
    if not isinstance(repo, StoreSessions):
        session.info = workspace.refresh_info(session, last_step=session.info.last_step + 1)  # numbers the plans
        return
    workspace._writer(session)  # claims the stored session for this process
    try:
        repo.store.commit_step(session.info.session_id, kind="review", record=record, mutations=[],
                               state=session.state, owner=repo.owner)
    except SessionError as exc:
        from igg.workspace.service import workspace_error

        raise workspace_error(exc) from None
    session.info = workspace.refresh_info(session, last_step=session.info.last_step + 1)
