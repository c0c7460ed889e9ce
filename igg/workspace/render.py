"""What a workspace session shows: its observation (``igg.observe``) and its exports (``igg.export``)."""

from __future__ import annotations

import io
from typing import Any

from igg.export import write_cypher, write_graphml, write_json, write_mermaid, write_node_link
from igg.export.spec import BINARY_WRITERS, write_binary
from igg.observe import open_todos, render_observation
from igg.workspace.live import LiveSession


def observation(
    session: LiveSession, *, focus: list[Any] | None = None, token_budget: int | None = None
) -> tuple[str, int]:
    """The session's budgeted markdown observation and its estimated tokens.

    ``focus`` items are node names or node references (``{"name": ..., "label": ...}``); those nodes are
    shown first when the graph does not fit the budget. The caller is a tool client (MCP, HTTP, OpenAI tool
    calls), so the response format section only points at ``apply_actions``' schema.
    """
    request = session.request
    if token_budget is not None:
        config = request.config.model_copy(
            update={
                "observation": request.config.observation.model_copy(update={"token_budget": token_budget})
            }
        )
        request = request.model_copy(update={"config": config})
    refs = [f if isinstance(f, dict) else {"name": f} for f in focus or []]
    notes = []
    owner = session.session
    if owner.review_note is not None:
        notes.append(f"A reviewer rejected your last plan: {owner.review_note}")
    if owner.pending is not None:
        notes.append(f"Your plan {owner.pending.plan_id} waits for review; nothing of it is applied yet.")
    return render_observation(
        request=request,
        state=session.state,
        iteration=owner.last_iteration + 1,
        last_verdicts=session.last_verdicts,
        last_error=None,
        chunk=None,
        todos=todos(session),
        notes=notes,
        focus=refs or None,
        tool_client=True,
    )


def todos(session: LiveSession) -> list[str]:
    """The completeness rules the graph does not meet yet."""
    return list(open_todos(session.state, session.request.config.schema_))


def _metadata(session: LiveSession) -> dict[str, Any]:
    owner = session.session
    data = {
        "session_id": owner.session_id,
        "goal": session.request.goal_prompt,
        "status": owner.shown_status,
        "iteration": owner.last_iteration,
        "stop_reason": owner.stop_reason,
    }
    return {k: v for k, v in data.items() if v is not None}


def export_text(session: LiveSession, fmt: str) -> str:
    """The graph in an export format (see ``igg.workspace.inputs.ToolExportFormat``), as text."""
    state, schema = session.state, session.request.config.schema_
    if fmt == "html":  # the page igg view --export writes, with the iterations panel
        from igg.export.html import html_text
        from igg.view.data import iteration_summary

        iterations = [iteration_summary(r.to_dict()) for r in session.session.records]
        return html_text(state, metadata=_metadata(session), iterations=iterations)
    if fmt in ("cypher", "mermaid"):
        text = io.StringIO()
        (write_cypher if fmt == "cypher" else write_mermaid)(state, text)
        return text.getvalue()
    data = io.BytesIO()
    if fmt in BINARY_WRITERS:
        write_binary(state, fmt, data, metadata=_metadata(session))
    elif fmt == "graphml":
        write_graphml(state, data, metadata=_metadata(session), schema=schema)
    elif fmt == "nodelink":
        write_node_link(state, data, schema=schema, metadata=_metadata(session), indent=1)
    else:
        write_json(state, data, schema=schema, metadata=_metadata(session), indent=1)
    return data.getvalue().decode("utf-8")


def neo4j_plan(live: LiveSession, session_id: str, path: str | None) -> dict[str, Any]:
    """What exporting the session to the Neo4j at NEO4J_URI (scope: the session id) would change (the
    ``neo4j_plan`` export format, returned inline)."""
    from igg.errors import ExportError, WorkspaceCode, WorkspaceError
    from igg.export.neo4j.bolt import plan_neo4j

    if path is not None:
        raise WorkspaceError(WorkspaceCode.PATH_FORBIDDEN, "format neo4j_plan is returned inline; omit path")
    try:
        with live.lock:
            plan = plan_neo4j(live.state, scope=session_id)
    except ExportError as exc:
        raise WorkspaceError(WorkspaceCode.EXPORT_FAILED, str(exc)) from None
    return {"session_id": session_id, "format": "neo4j_plan", "plan": plan}
