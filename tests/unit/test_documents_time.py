"""Valid time in documents (issues 42 and 43): what documents say of time folds to the history the act step
keeps, the same whatever order documents come in, after any update, and after a retraction."""

from __future__ import annotations

import itertools
import random
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from igg.agents.scripted import ScriptedAgent
from igg.documents.build import build_documents, load_session
from igg.documents.plan import content_form
from igg.documents.retract import retract_document
from igg.models.validtime import HISTORY, VALID_FROM, VALID_TO, history
from igg.request.load import load_request
from igg.session import Session
from igg.store import SessionStore

REQUEST = {
    "session_id": "jobs",
    "goal_prompt": "Who worked where, and when.",
    "config": {
        "max_iterations": 50,
        "constraints": {"max_nodes": 10_000, "max_edges": 10_000},
        "schema": {
            "node_types": ["Person", "Company"],
            "edge_types": ["WORKS_AT", "KNOWS"],
            "identity_keys": {"Person": ["name"], "Company": ["name"]},
            "valid_time": {"WORKS_AT": {"one_at_a_time": True}, "Person": {"properties": ["title"]}},
        },
    },
}
PEOPLE = ("Ada", "Bob")
FIRMS = ("Acme", "Initech", "Globex")
YEARS = (None, "2010", "2015", "2020")


def request(session_id: str = "jobs") -> Any:
    return load_request({**REQUEST, "session_id": session_id})


def person(name: str) -> dict[str, Any]:
    return {"type": "ADD_NODE", "label": "Person", "properties": {"name": name}}


def job(name: str, firm: str, start: str | None, end: str | None = None) -> list[dict[str, Any]]:
    edge: dict[str, Any] = {
        "type": "ADD_EDGE",
        "label": "WORKS_AT",
        "from": {"name": name},
        "to": {"name": firm},
    }
    if start is not None:
        edge["valid_from"] = start
    if end is not None:
        edge["valid_to"] = end
    return [person(name), {"type": "ADD_NODE", "label": "Company", "properties": {"name": firm}}, edge]


def title(name: str, value: str, start: str | None) -> dict[str, Any]:
    update: dict[str, Any] = {"type": "UPDATE_NODE", "node": {"name": name}, "properties": {"title": value}}
    return update | ({"valid_from": start} if start is not None else {})


def write(folder: Path, answers: dict[str, list[dict[str, Any]]]) -> ScriptedAgent:
    for old in folder.glob("*.txt"):
        if old.name not in answers:
            old.unlink()
    for doc, actions in answers.items():
        (folder / doc).write_text(f"{doc}: {actions!r}\n", encoding="utf-8")
    return ScriptedAgent([{"document": doc, "actions": actions} for doc, actions in answers.items()])


def build(folder: Path, answers: dict[str, list[dict[str, Any]]], store: Path, sid: str, **kw: Any) -> Any:
    agent = write(folder, answers)
    kw.setdefault("force", True)
    build_documents(request(sid), agent, [folder], store, agent_name="script", session_id=sid, **kw)
    return SessionStore(store).load_state(sid)[1]


def works_at(state: Any) -> dict[tuple[str, str], tuple[str | None, str | None]]:
    names = {n: d["properties"]["name"] for n, d in state.nodes.items()}
    return {
        (names[u], names[v]): (d["properties"].get(VALID_FROM), d["properties"].get(VALID_TO))
        for _, (u, v, d) in state.edge_rows()
        if d["type"] == "WORKS_AT"
    }


def test_a_later_start_in_another_document_supersedes_and_goes_when_that_document_goes(
    tmp_path: Path,
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    store = tmp_path / "s.sqlite"
    answers = {
        "a.txt": job("Ada", "Acme", "2015") + [title("Ada", "Engineer", "2015")],
        "b.txt": job("Ada", "Initech", "2020-03") + [title("Ada", "CTO", "2020-03")],
    }
    state = build(docs, answers, store, "jobs")
    assert works_at(state) == {("Ada", "Acme"): ("2015", "2020-03"), ("Ada", "Initech"): ("2020-03", None)}
    ada = next(d for d in state.nodes.values() if d["properties"]["name"] == "Ada")
    assert ada["properties"]["title"] == "CTO"
    assert [(h["value"], h["from"], h["to"]) for h in history(ada["properties"])] == [
        ("Engineer", "2015", "2020-03"),
        ("CTO", "2020-03", None),
    ]
    del answers["b.txt"]
    agent = write(docs, answers)
    build_documents(request(), agent, [docs], store, agent_name="script", session_id="jobs", update=True)
    after = SessionStore(store).load_state("jobs")[1]
    assert works_at(after) == {("Ada", "Acme"): ("2015", None)}  # Acme holds again: Initech is gone
    assert content_form(after) == content_form(build(docs, answers, store, "fresh"))


def test_the_fold_keeps_the_history_the_act_step_keeps_in_every_order(tmp_path: Path) -> None:
    """Time rule agreement: the same facts applied one document at a time by the act step, in every order,
    end with the bounds and histories the fold gives."""
    answers = {
        "a.txt": job("Ada", "Acme", "2010", "2016") + [title("Ada", "Intern", "2010")],
        "b.txt": job("Ada", "Initech", "2015") + [title("Ada", "Lead", "2015")],
        "c.txt": job("Ada", "Globex", "2020") + job("Bob", "Acme", None) + [title("Ada", "CTO", "2020")],
    }
    docs = tmp_path / "docs"
    docs.mkdir()
    folded = build(docs, answers, tmp_path / "s.sqlite", "jobs")
    expected = (works_at(folded), _titles(folded))
    for order in itertools.permutations(answers):
        session = Session.open(request("order"))
        for doc in order:
            record = session.apply(answers[doc], reasoning=doc)
            refused = [v for v in record.verdicts if not v.accepted and v.code != "DUPLICATE_NODE"]
            assert refused == [], [v.message for v in refused]  # a node another document added: not again
        assert (works_at(session.state), _titles(session.state)) == expected, order


def _titles(state: Any) -> dict[str, list[tuple[Any, Any, Any]]]:
    return {
        d["properties"]["name"]: [(h["value"], h["from"], h["to"]) for h in history(d["properties"])]
        for d in state.nodes.values()
        if HISTORY in d["properties"]
    }


def timed_answer(doc: str, version: int) -> list[dict[str, Any]]:
    rnd = random.Random(f"{doc}:{version}")
    actions: list[dict[str, Any]] = []
    for _ in range(rnd.randint(1, 2)):
        start = rnd.choice(YEARS)
        end = rnd.choice((None, "2030")) if start else None
        actions += job(rnd.choice(PEOPLE), rnd.choice(FIRMS), start, end)
    if rnd.random() < 0.5:
        name = rnd.choice(PEOPLE)
        actions += [person(name), title(name, rnd.choice(("Dr", "Prof")), rnd.choice(YEARS))]
    return actions


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(st.sampled_from(("add", "change", "remove", "retract")), st.integers(0, 7)),
        min_size=1,
        max_size=4,
    ),
    st.integers(2, 4),
)
def test_with_time_every_update_and_retraction_equals_a_fresh_build(
    steps: list[tuple[str, int]], size: int
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        docs, store = Path(tmp) / "docs", Path(tmp) / "s.sqlite"
        docs.mkdir()
        corpus = {f"d{i}.txt": 0 for i in range(size)}

        def answers() -> dict[str, list[dict[str, Any]]]:
            return {doc: timed_answer(doc, v) for doc, v in corpus.items()}

        build(docs, answers(), store, "jobs", force=False)
        for n, (op, pick) in enumerate(steps):
            ids = sorted(corpus)
            if op == "retract" and ids:
                gone = ids[pick % len(ids)]
                retract_document(load_session(SessionStore(store), "jobs"), gone)
                del corpus[gone]
                (docs / gone).unlink()
            else:
                if op == "add" or not ids:
                    corpus[f"n{n}.txt"] = 0
                elif op == "change":
                    corpus[ids[pick % len(ids)]] += 1
                else:
                    del corpus[ids[pick % len(ids)]]
                agent = write(docs, answers())
                build_documents(
                    request(), agent, [docs], store, agent_name="script", session_id="jobs", update=True
                )
            after = SessionStore(store).load_state("jobs")[1]
            assert content_form(after) == content_form(build(docs, answers(), store, f"fresh{n}"))
