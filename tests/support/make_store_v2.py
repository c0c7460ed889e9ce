"""Writes ``tests/support/store-v2.sqlite``: a session store as IGG 0.2 wrote it (commit 8ad95e9) before one
``Session`` owned every change (issue 27): review steps, undo, forks and map-code updates written around the
recorder.

Kept so the fixture can be understood; it only runs against that code (``git worktree add /tmp/old 8ad95e9 &&
cd /tmp/old && python /path/to/make_store_v2.py OUT TREE``, TREE a scratch folder for the mapped code).
``tests/unit/test_store_compat_v2.py`` reads the file with today's code.

Sessions in it:
  review-pending   a tool session with config.review: plan 2 (step 2) waits, one iteration applied before it
  review-rejected  a tool session with config.review: a plan rejected with a note, still open
  undone           a tool session with three applies, undone to iteration 1 (an ``undo`` step)
  undone-fork-2    ``undone`` forked after iteration 2 (before the undo)
  codemap          ``igg map-code`` of a three-module Python tree, then ``--update`` after one file changed
"""

from __future__ import annotations

import sys
from pathlib import Path

from igg.service import map_code, update_code_map
from igg.store import SessionStore, StoreSessions, history
from igg.store.fork import fork
from igg.workspace import Workspace
from igg.workspace.ops import ApplyInput, ReviewInput


def payload(sid: str, *, review: bool = False) -> dict:
    return {
        "session_id": sid,
        "goal_prompt": f"map {sid}",
        "context_data": "class A {}\n\nclass B {}",
        "config": {
            "max_iterations": 10,
            "review": review,
            "constraints": {"max_nodes": 50, "max_edges": 100},
            "schema": {
                "node_types": ["Class", "Method"],
                "edge_types": ["CALLS"],
                "required_attributes": {"Class": ["name", "package"]},
            },
        },
    }


def add(name: str, calls: str | None = None) -> list[dict]:
    actions: list[dict] = [
        {"type": "ADD_NODE", "label": "Class", "properties": {"name": name, "package": "p"}}
    ]
    if calls:
        actions.append({"type": "ADD_EDGE", "label": "CALLS", "from": {"name": name}, "to": {"name": calls}})
    return actions


def main(out: Path, tree: Path) -> None:
    out.unlink(missing_ok=True)
    store = SessionStore(out)
    ws = Workspace(StoreSessions(store))
    ws.start(payload("review-pending", review=True))
    plan = ws.apply(ApplyInput(session_id="review-pending", reasoning="first", actions=add("A")))["review"]
    from igg.workspace.review import decide

    decide(ws, ReviewInput(session_id="review-pending", decision="approve", plan_id=plan["plan_id"]))
    ws.apply(ApplyInput(session_id="review-pending", reasoning="second", actions=add("B", "A")))
    ws.start(payload("review-rejected", review=True))
    plan = ws.apply(ApplyInput(session_id="review-rejected", reasoning="bad", actions=add("X")))["review"]
    decide(
        ws,
        ReviewInput(
            session_id="review-rejected",
            decision="reject",
            plan_id=plan["plan_id"],
            note="name it after the file",
        ),
    )
    ws.start(payload("undone"))
    for i, (name, calls) in enumerate([("A", None), ("B", "A"), ("C", "B")]):
        ws.apply(ApplyInput(session_id="undone", reasoning=f"apply {i + 1}", actions=add(name, calls)))
    fork(store, "undone", 2)
    history.undo(store, "undone", 1, owner=ws.repo.owner)  # type: ignore[attr-defined]
    tree.mkdir(parents=True, exist_ok=True)
    (tree / "pkg").mkdir(exist_ok=True)
    (tree / "pkg" / "__init__.py").write_text("")
    (tree / "pkg" / "a.py").write_text(
        "from pkg import b\n\n\nclass A:\n    def run(self):\n        return b.helper()\n"
    )
    (tree / "pkg" / "b.py").write_text("def helper():\n    return 1\n")
    map_code([tree], store=out, session_id="codemap")
    (tree / "pkg" / "c.py").write_text("from pkg.a import A\n\n\nclass C(A):\n    pass\n")
    update_code_map([tree], out, session_id="codemap")
    store.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
