"""The workspace's ``check`` operation: "does this graph break our rules?", asked by an agent over MCP or
HTTP.

The rules come with the call (the ``[[rules]]`` tables of ``igg.toml`` as JSON) and are judged on the live
session's graph as it stands. Its edges are located at their statements when the session's request keeps the
files it mapped (a map-code session); otherwise each edge names its source node's file only. A malformed rule
is refused with ``INVALID_RULES`` and every problem, each naming the rule and field; so is a rule whose
selector picks no node of the graph (it could never fail). The work is bounded
(``igg.rules.bounds.CheckBounds``, a server's bounds): past them the report says ``truncated``.
"""

from __future__ import annotations

from typing import Any

from igg.errors import RequestInvalid, WorkspaceError
from igg.mapping.depgraph import SitesMemo, located_graph
from igg.rules.bounds import CheckBounds
from igg.rules.check import check as judge
from igg.rules.load import parse_rules
from igg.rules.report import CheckReport, RuleSummary
from igg.rules.select import refuse_unmatched
from igg.workspace.inputs import CheckInput
from igg.workspace.live import LiveSession


def check(session: LiveSession, inp: CheckInput) -> dict[str, Any]:
    """The rules' report on the session's current graph."""
    with session.lock:
        try:
            rules = parse_rules(
                {"rules": inp.rules}, source="rules", edge_types=sorted(session.state.schema.edge_types)
            )
        except RequestInvalid as exc:
            raise WorkspaceError("INVALID_RULES", str(exc)) from None
        if session.sites is None:
            session.sites = SitesMemo()
        graph = located_graph(session.state, session.request.context_data or "", memo=session.sites)
    bounds = CheckBounds()
    try:
        refuse_unmatched(graph, rules, bounds=bounds)
    except RequestInvalid as exc:
        raise WorkspaceError("INVALID_RULES", str(exc)) from None
    violations = judge(graph, rules, bounds)
    counts = {r.name: sum(v.rule == r.name for v in violations) for r in rules}
    report = CheckReport(
        target=f"session {inp.session_id}",
        violations=violations,
        nodes=len(graph.nodes),
        edges=len(graph.edges),
        failed=any(v.severity == "error" for v in violations),
        truncated=bounds.truncated,
        rules=[
            RuleSummary(
                name=r.name,
                kind=r.kind,
                severity=r.severity,
                description=r.description,
                violations=counts[r.name],
            )
            for r in rules
        ],
    )
    return {"session_id": inp.session_id, **report.model_dump()}
