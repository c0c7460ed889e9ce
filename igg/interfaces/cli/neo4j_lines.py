"""How Neo4j exports and plans read on the terminal (``igg export``, ``igg export SESSION --follow``)."""

from __future__ import annotations

import sys
from typing import Any


def print_neo4j_details(summary: dict[str, Any]) -> None:
    """The identity constraints and the changes of a Neo4j export, one line each."""
    c = summary.get("constraints") or {}
    if c:
        made = "".join(f"\n    created {x}" for x in c.get("created", []))
        had = "".join(f"\n    existing {x}" for x in c.get("existing", []))
        print(f"  identity: {c.get('capability')}{made}{had}")
    for kind, n in (summary.get("changes") or {}).items():
        print(
            f"  {kind}: {n['create']} created, {n['update']} updated, {n['delete']} deleted, "
            f"{n['unchanged']} unchanged"
        )


def print_plan_lines(plan: dict[str, Any]) -> None:
    """The counts and listed changes of a Neo4j plan (read-and-diff or delta), one line each."""
    from igg.export.neo4j.diff import short  # the graph's models load when a line is printed

    for kind, c in plan["counts"].items():
        print(
            f"  {kind}: {c['create']} to create, {c['update']} to update, {c['delete']} to delete, "
            f"{c['unchanged']} unchanged"
        )
    for change in plan["changes"]:
        props = change.get("properties")
        detail = (
            "; "
            + ", ".join(
                f"{k} = {short(b)}"
                if a is None
                else f"{k} removed"
                if b is None
                else f"{k} {short(a)} -> {short(b)}"
                for k, (a, b) in props.items()
            )
            if props
            else ""
        )
        print(f"  {change['action']} {change['element']} {change['what']}{detail}")
    listed = sum(c[a] for c in plan["counts"].values() for a in ("create", "update", "delete"))
    if listed > len(plan["changes"]):
        print(f"  ... {listed - len(plan['changes'])} more change(s) not listed (--json lists the same)")
    for conflict in plan.get("conflicts", []):
        print(f"  conflict: {conflict}")
    for warning in plan.get("warnings", []):
        print(f"  warning: {warning}", file=sys.stderr)
