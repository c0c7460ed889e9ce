"""Evidence in documents (issue 42): the quotes of a document's answer are located in its chunk by the act
step's own grounder, recorded on the facts they support with their document, refused under a strict policy
when not found, and kept in step by updates."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from igg.agents.scripted import ScriptedAgent
from igg.documents.build import build_documents
from igg.documents.plan import content_form
from igg.request.load import load_request
from igg.store import SessionStore, StoreSessions
from igg.workspace.ops import AddDocumentsInput
from igg.workspace.service import Workspace

TEXTS = {
    "a.txt": "Ada Lovelace lives in London.\n",
    "b.txt": "They say Ada Lovelace lives in London, near the river.\n",
}


def request(session_id: str, grounding: str = "required_edges") -> Any:
    return load_request(
        documents=True,
        source={
            "session_id": session_id,
            "goal_prompt": "Who lives where.",
            "config": {
                "grounding": grounding,
                "schema": {"node_types": ["Person", "City"], "edge_types": ["LIVES_IN"]},
            },
        },
    )


def answer(quote: str) -> list[dict[str, Any]]:
    return [
        {"type": "ADD_NODE", "label": "Person", "properties": {"name": "Ada Lovelace"}},
        {"type": "ADD_NODE", "label": "City", "properties": {"name": "London"}},
        {
            "type": "ADD_EDGE",
            "label": "LIVES_IN",
            "from": {"name": "Ada Lovelace"},
            "to": {"name": "London"},
            "evidence": [quote],
        },
    ]


def write(folder: Path, answers: dict[str, list[dict[str, Any]]]) -> ScriptedAgent:
    for old in folder.glob("*.txt"):
        if old.name not in answers:
            old.unlink()
    for doc in answers:
        (folder / doc).write_text(TEXTS[doc], encoding="utf-8")
    return ScriptedAgent([{"document": d, "actions": a} for d, a in answers.items()])


def lives_in(store: Path, sid: str) -> dict[str, Any]:
    state = SessionStore(store).load_state(sid)[1]
    return next(d for _, (_, _, d) in state.edge_rows())


def test_quotes_are_located_in_their_document_and_refused_when_the_policy_demands(tmp_path: Path) -> None:
    docs, store = tmp_path / "docs", tmp_path / "s.sqlite"
    docs.mkdir()
    answers = {"a.txt": answer("lives in London"), "b.txt": answer("lives in Paris")}
    built = build_documents(request("ev"), write(docs, answers), [docs], store, agent_name="script")
    assert [(d["document"], d["reason"].split(":")[0]) for d in built.dropped] == [
        ("b.txt", "UNGROUNDED_EVIDENCE")
    ]
    edge = lives_in(store, "ev")
    assert edge["provenance"]["documents"] == ["a.txt"]  # b.txt's edge was refused: it supports nothing
    (item,) = edge["provenance"]["evidence"]
    assert (item["document"], item["chunk"], item["quote"], item["match"]) == (
        "a.txt",
        1,
        "lives in London",
        "exact",
    )
    assert TEXTS["a.txt"][item["start"] : item["end"]] == "lives in London"

    answers["b.txt"] = answer("Ada Lovelace lives in London")
    agent = write(docs, answers)
    (docs / "b.txt").write_text(
        TEXTS["b.txt"] + "\n", encoding="utf-8"
    )  # b.txt edited: its new answer is read
    build_documents(request("ev"), agent, [docs], store, agent_name="script", session_id="ev", update=True)
    edge = lives_in(store, "ev")
    assert edge["provenance"]["documents"] == ["a.txt", "b.txt"]
    assert [(i["document"], i["quote"]) for i in edge["provenance"]["evidence"]] == [
        ("a.txt", "lives in London"),
        ("b.txt", "Ada Lovelace lives in London"),
    ]
    fresh = build_documents(request("fresh"), agent, [docs], store, agent_name="script")
    assert fresh.agent_calls == 0
    assert content_form(SessionStore(store).load_state("ev")[1]) == content_form(
        SessionStore(store).load_state("fresh")[1]
    )

    (docs / "a.txt").unlink()
    build_documents(request("ev"), agent, [docs], store, agent_name="script", session_id="ev", update=True)
    assert [i["document"] for i in lives_in(store, "ev")["provenance"]["evidence"]] == ["b.txt"]


def test_add_documents_locates_evidence_in_the_text_given_and_names_what_it_refused(tmp_path: Path) -> None:
    ws = Workspace(StoreSessions(SessionStore(tmp_path / "s.sqlite")))
    ws.start(
        {
            "session_id": "tool",
            "goal_prompt": "Who lives where.",
            "context_data": "A tool session's own context (the documents bring theirs).",
            "config": {
                "grounding": "required_edges",
                "schema": {"node_types": ["Person", "City"], "edge_types": ["LIVES_IN"]},
            },
        }
    )
    out = ws.add_documents(
        AddDocumentsInput(
            session_id="tool",
            documents=[
                {"id": "a", "text": TEXTS["a.txt"], "actions": answer("lives in London")},
                {"id": "b", "text": TEXTS["b.txt"], "actions": answer("lives in Rome")},
            ],
        )
    )
    assert [(d["document"], d["reason"][:19]) for d in out["dropped"]] == [("b", "UNGROUNDED_EVIDENCE")]
    state = ws.get("tool").state
    edge = next(d for _, (_, _, d) in state.edge_rows())
    assert [(i["document"], i["quote"]) for i in edge["provenance"]["evidence"]] == [("a", "lives in London")]


def test_one_answer_shares_one_search_budget_however_many_quotes_it_holds() -> None:
    """The work a document's answer causes is bounded as an agent's response is: its quotes share one fuzzy
    budget, and once it is spent a quote not found verbatim is refused without the approximate search."""
    from igg.act.evidence import FUZZY_MAX_CHARS, FUZZY_RESPONSE_WORK
    from igg.documents.grounding import ground_answer

    words = [f"w{i:05d}" for i in range(4000)]
    text = " ".join(words)[:FUZZY_MAX_CHARS]
    quote_chars = 120
    affordable = FUZZY_RESPONSE_WORK // (len(text) * quote_chars)
    actions = [
        {
            "type": "ADD_NODE",
            "label": "Person",
            "properties": {"name": f"P{i}"},
            "evidence": [(f"{i:03d} not said anywhere " * 6)[:quote_chars]],
        }
        for i in range(affordable + 5)
    ]
    kept, refused = ground_answer(request("budget", "required"), text, "long.txt", 1, actions)
    assert kept == [] and len(refused) == len(actions)
    spent = [r for _, _, r in refused if "budget for approximate matching is spent" in r]
    assert (
        1 <= len(spent) <= 6 and "spent" not in refused[0][2]
    )  # the first quotes had the approximate search
