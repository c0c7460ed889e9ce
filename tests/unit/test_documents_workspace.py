"""The workspace's document tools (issue 42): add_documents and retract_document, typed outputs, undo, and the
same over HTTP."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from igg.errors import WorkspaceError
from igg.store import SessionStore, StoreSessions
from igg.workspace.ops import AddDocumentsInput, RetractDocumentInput, UndoInput
from igg.workspace.outputs import DocumentsOutput
from igg.workspace.service import Workspace
from tests.integration.test_http import serve
from tests.unit.test_documents import REQUEST

ADA = [
    {"type": "ADD_NODE", "label": "Person", "properties": {"name": "Ada", "age": 36}},
    {"type": "ADD_NODE", "label": "City", "properties": {"name": "Paris"}},
    {"type": "ADD_EDGE", "label": "LIVES_IN", "from": {"name": "Ada"}, "to": {"name": "Paris"}},
]
BOB = [
    {"type": "ADD_NODE", "label": "Person", "properties": {"name": "Ada", "age": 37}},
    {"type": "ADD_NODE", "label": "Person", "properties": {"name": "Bob"}},
    {"type": "ADD_EDGE", "label": "KNOWS", "from": {"name": "Bob"}, "to": {"name": "Ada"}},
]


def documents(*docs: tuple[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    return [{"id": doc, "text": f"the text of {doc}", "actions": actions} for doc, actions in docs]


def people(state: Any) -> dict[str, Any]:
    return {
        d["properties"]["name"]: (d["properties"].get("age"), d["provenance"]["documents"])
        for d in state.nodes.values()
    }


def test_add_and_retract_documents_are_steps_with_typed_outputs_and_undo(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "s.sqlite")
    ws = Workspace(StoreSessions(store))
    ws.start({**REQUEST, "session_id": "ws"})
    added = ws.add_documents(
        AddDocumentsInput(session_id="ws", documents=documents(("a.md", ADA), ("b.md", BOB)))
    )
    assert isinstance(added, DocumentsOutput) and added["documents"]["added"] == 2
    assert (added["nodes"], added["edges"], added["iteration_applied"]) == (3, 2, 1)
    assert people(ws.get("ws").state)["Ada"] == (36, ["a.md", "b.md"])

    gone = ws.retract_document(RetractDocumentInput(session_id="ws", document_id="a.md"))
    assert gone["facts"] == {"facts_retracted": 2, "facts_kept": 1} and gone["document"] == "a.md"
    assert people(ws.get("ws").state) == {
        "Ada": (37, ["b.md"]),
        "Bob": (None, ["b.md"]),
    }  # the age falls back

    ws.undo(UndoInput(session_id="ws", to_iteration=1))
    assert people(ws.get("ws").state)["Ada"] == (36, ["a.md", "b.md"])
    again = ws.add_documents(AddDocumentsInput(session_id="ws", documents=documents(("a.md", ADA[:1]))))
    assert again["documents"]["changed"] == 1 and again["facts"]["facts_retracted"] == 2  # Paris and LIVES_IN
    with pytest.raises(WorkspaceError):
        ws.retract_document(RetractDocumentInput(session_id="ws", document_id="nope.md"))


def test_the_document_tools_over_http(tmp_path: Path) -> None:
    with serve(tmp_path) as http:
        assert http.post("/sessions", json={**REQUEST, "session_id": "web"}).status_code == 201
        added = http.post("/sessions/web/documents", json={"documents": documents(("notes/a.md", ADA))})
        assert added.status_code == 200, added.text
        assert added.json()["nodes"] == 2
        gone = http.delete("/sessions/web/documents/notes/a.md")
        assert gone.status_code == 200, gone.text
        assert (gone.json()["nodes"], gone.json()["facts"]["facts_retracted"]) == (0, 3)


def test_with_review_on_document_tools_keep_a_plan_applied_whole_when_approved(tmp_path: Path) -> None:
    from igg.workspace.inputs import ReviewInput

    store = SessionStore(tmp_path / "s.sqlite")
    ws = Workspace(StoreSessions(store))
    ws.start({**REQUEST, "session_id": "rv", "config": {**REQUEST["config"], "review": True}})
    held = ws.add_documents(
        AddDocumentsInput(session_id="rv", documents=documents(("a.md", ADA), ("b.md", BOB)))
    )
    assert held["iteration_applied"] is None and held["status"] == "awaiting_review"
    assert (held["nodes"], held["changes"]["nodes_added"]) == (0, 3)
    plan = held["review"]
    assert [a["type"] for a in plan["actions"]].count("ADD_NODE") == 3
    with pytest.raises(WorkspaceError, match="waiting for review"):
        ws.retract_document(RetractDocumentInput(session_id="rv", document_id="a.md"))
    rejected = ws.review(ReviewInput(session_id="rv", plan_id=plan["plan_id"], decision="reject", note="no"))
    assert rejected["rejected"] == plan["plan_id"] and rejected["nodes"] == 0

    again = ws.add_documents(AddDocumentsInput(session_id="rv", documents=documents(("a.md", ADA))))
    approved = ws.review(ReviewInput(session_id="rv", plan_id=again["review"]["plan_id"], decision="approve"))
    assert approved["status"] == "open" and (approved["nodes"], approved["edges"]) == (2, 1)
    ada = {"Ada": (36, ["a.md"]), "Paris": (None, ["a.md"])}
    assert people(ws.get("rv").state) == ada
    gone = ws.retract_document(RetractDocumentInput(session_id="rv", document_id="a.md"))
    assert gone["iteration_applied"] is None and gone["changes"]["nodes_removed"] == 2
    ws.review(ReviewInput(session_id="rv", plan_id=gone["review"]["plan_id"], decision="approve"))
    assert ws.get("rv").state.node_count == 0
    ws.undo(UndoInput(session_id="rv", to_iteration=approved["iteration"]))
    assert people(ws.get("rv").state) == ada
