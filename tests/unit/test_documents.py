"""Documents as sources (issue 42): a corpus read as documents, facts recording the documents that support
them, updates equal to a fresh build, answers never paid for twice, and bad input refused before anything
changes."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from igg.agents.scripted import ScriptedAgent
from igg.documents.build import build_documents, document_facts, stored_corpus
from igg.documents.corpus import read_corpus
from igg.documents.plan import content_form
from igg.errors import RequestInvalid, WorkspaceError
from igg.request.load import load_request
from igg.store import SessionStore
from igg.store.codec import canonical
from igg.store.history import undo

ROOT = Path(__file__).resolve().parents[2]
REQUEST = {
    "session_id": "notes",
    "goal_prompt": "Who knows whom, and where they live.",
    "config": {
        "max_iterations": 50,
        "constraints": {"max_nodes": 10_000, "max_edges": 10_000},
        "schema": {
            "node_types": ["Person", "City"],
            "edge_types": ["KNOWS", "LIVES_IN"],
            "identity_keys": {"Person": ["name"], "City": ["name"]},
        },
    },
}
NAMES = ("Ada", "Bob", "Cy", "Di", "Ed")
CITIES = ("Paris", "Rome", "Cy")  # "Cy" is a person too: a reference by name alone may match both


def answer(doc: str, version: int) -> list[dict[str, Any]]:
    """A document's answer, a function of its id and version: some people (with an age that documents may
    disagree on), who knows whom, where someone lives (a reference to a node another document may add)."""
    rnd = random.Random(f"{doc}:{version}")
    people = rnd.sample(NAMES, rnd.randint(1, 3))
    actions: list[dict[str, Any]] = []
    for name in people:
        props: dict[str, Any] = {"name": name}
        if rnd.random() < 0.6:
            props["age"] = rnd.choice((30, 40, 50))
        actions.append({"type": "ADD_NODE", "label": "Person", "properties": props})
    if rnd.random() < 0.5:
        actions.append({"type": "ADD_NODE", "label": "City", "properties": {"name": rnd.choice(CITIES)}})
    if len(people) > 1:
        actions.append(
            {
                "type": "ADD_EDGE",
                "label": "KNOWS",
                "from": {"name": people[0]},
                "to": {"name": people[1]},
                "properties": {"since": rnd.choice((2001, 2002))},
            }
        )
    actions.append(
        {
            "type": "ADD_EDGE",
            "label": "LIVES_IN",
            "from": {"name": people[0]},
            "to": {"label": "City", "name": rnd.choice(CITIES)},
        }
    )
    if rnd.random() < 0.4:
        actions.append(
            {
                "type": "UPDATE_NODE",
                "node": {"label": "Person", "name": rnd.choice(NAMES)},
                "properties": {"nick": rnd.choice(("A", "B"))},
            }
        )
    return actions


def write_corpus(folder: Path, corpus: dict[str, int]) -> ScriptedAgent:
    """The corpus (document id -> version) as files in ``folder``, and a transcript answering by document."""
    for old in folder.glob("*.txt"):
        if old.name not in corpus:
            old.unlink()
    for doc, version in corpus.items():
        (folder / doc).write_text(f"{doc} as of version {version}.\n", encoding="utf-8")
    return ScriptedAgent([{"document": doc, "actions": answer(doc, v)} for doc, v in corpus.items()])


def request(session_id: str = "notes") -> Any:
    return load_request({**REQUEST, "session_id": session_id})


def graph(store: Path, session_id: str = "notes") -> Any:
    return SessionStore(store).load_state(session_id)[1]


def fresh(folder: Path, agent: ScriptedAgent, store: Path, session_id: str) -> Any:
    build_documents(request(session_id), agent, [folder], store, agent_name="script", force=True)
    return graph(store, session_id)


def test_a_build_records_the_documents_of_each_fact_and_an_update_falls_back_to_the_remaining_supporters(
    tmp_path: Path,
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("Ada is 36 and lives in Paris.", encoding="utf-8")
    (docs / "b.txt").write_text("Ada is 37. Bob lives in Paris.", encoding="utf-8")
    turns = [
        {
            "document": "a.md",
            "actions": [
                {"type": "ADD_NODE", "label": "Person", "properties": {"name": "Ada", "age": 36}},
                {"type": "ADD_NODE", "label": "City", "properties": {"name": "Paris"}},
                {"type": "ADD_EDGE", "label": "LIVES_IN", "from": {"name": "Ada"}, "to": {"name": "Paris"}},
            ],
        },
        {
            "document": "b.txt",
            "actions": [
                {"type": "ADD_NODE", "label": "Person", "properties": {"name": "Ada", "age": 37}},
                {"type": "ADD_NODE", "label": "Person", "properties": {"name": "Bob"}},
                {"type": "ADD_NODE", "label": "City", "properties": {"name": "Paris"}},
                {"type": "ADD_EDGE", "label": "LIVES_IN", "from": {"name": "Bob"}, "to": {"name": "Paris"}},
            ],
        },
    ]
    store = tmp_path / "s.sqlite"
    first = build_documents(request(), ScriptedAgent(turns), [docs], store, agent_name="script")
    assert first.agent_calls == 2 and first.documents["added"] == 2
    state = graph(store)
    ada = next(d for d in state.nodes.values() if d["properties"]["name"] == "Ada")
    # the smallest document id wins a property the documents disagree on; each value names its supporters
    assert ada["properties"]["age"] == 36
    assert ada["provenance"]["documents"] == ["a.md", "b.txt"]
    assert ada["provenance"]["property_documents"]["age"] == ["a.md"]
    rows = {
        r["document"]: r for r in document_facts(state, stored_corpus(SessionStore(store), "notes") or {})
    }
    assert (rows["a.md"]["nodes"], rows["a.md"]["edges"], rows["b.txt"]["nodes"], rows["b.txt"]["edges"]) == (
        2,
        1,
        3,
        1,
    )

    (docs / "a.md").unlink()
    second = build_documents(
        request(), ScriptedAgent(turns), [docs], store, agent_name="script", session_id="notes", update=True
    )
    assert (second.documents["removed"], second.documents["unchanged"], second.agent_calls) == (1, 1, 0)
    state = graph(store)
    ada = next(d for d in state.nodes.values() if d["properties"]["name"] == "Ada")
    assert ada["properties"]["age"] == 37 and ada["provenance"]["documents"] == [
        "b.txt"
    ]  # falls back to b.txt
    assert state.edge_count == 1  # Ada's LIVES_IN was a.md's alone: retracted
    assert second.facts == {"facts_retracted": 1, "facts_kept": 2}
    assert content_form(state) == content_form(fresh(docs, ScriptedAgent(turns), store, "again"))


def test_answers_are_cached_in_the_store_across_sessions_and_a_changed_document_alone_is_asked(
    tmp_path: Path,
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    corpus = {f"d{i}.txt": 0 for i in range(6)}
    agent = write_corpus(docs, corpus)
    store = tmp_path / "s.sqlite"
    assert build_documents(request(), agent, [docs], store, agent_name="script").agent_calls == 6
    other = build_documents(request("other"), agent, [docs], store, agent_name="script")
    assert other.agent_calls == 0  # another session of the store: every answer from the cache
    corpus["d2.txt"] = 1
    corpus["d9.txt"] = 0
    agent = write_corpus(docs, corpus)
    result = build_documents(
        request(), agent, [docs], store, agent_name="script", session_id="notes", update=True
    )
    assert (result.documents["changed"], result.documents["added"], result.agent_calls) == (1, 1, 2)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(st.sampled_from(("add", "change", "remove")), st.integers(0, 7)), min_size=1, max_size=4
    ),
    st.integers(2, 5),
)
def test_every_update_equals_a_fresh_build_and_undo_restores_the_graph_before_it(
    steps: list[tuple[str, int]], size: int
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        docs, store = Path(tmp) / "docs", Path(tmp) / "s.sqlite"
        docs.mkdir()
        corpus = {f"d{i}.txt": 0 for i in range(size)}
        build_documents(request(), write_corpus(docs, corpus), [docs], store, agent_name="script")
        for n, (op, pick) in enumerate(steps):
            ids = sorted(corpus)
            if op == "add" or not ids:
                corpus[f"n{n}.txt"] = 0
            elif op == "change":
                corpus[ids[pick % len(ids)]] += 1
            else:
                del corpus[ids[pick % len(ids)]]
            agent = write_corpus(docs, corpus)
            before = canonical(graph(store))
            result = build_documents(
                request(), agent, [docs], store, agent_name="script", session_id="notes", update=True
            )
            after = graph(store)
            assert content_form(after) == content_form(fresh(docs, agent, store, f"fresh{n}"))
            undo(SessionStore(store), "notes", result.iteration - 1)
            assert canonical(graph(store)) == before
            again = build_documents(
                request(), agent, [docs], store, agent_name="script", session_id="notes", update=True
            )
            assert again.agent_calls == 0  # the undone update's answers are still cached
            assert content_form(graph(store)) == content_form(after)


KILLED_UPDATE = """
import sys
from pathlib import Path
sys.path.insert(0, {root!r})
from tests.unit.test_documents import request, write_corpus, build_documents
corpus = {{f"d{{i}}.txt": (1 if i % 3 == 0 else 0) for i in range(300)}}
agent = write_corpus(Path({docs!r}), corpus)
print("ready", flush=True)
build_documents(request(), agent, [Path({docs!r})], Path({store!r}), agent_name="script", session_id="notes",
                update=True)
print("done", flush=True)
"""


@pytest.mark.parametrize("delay", [0.0, 0.03, 0.06, 0.1, 0.4])  # the update takes ~0.15 s after "ready"
def test_kill_9_during_an_update_leaves_the_previous_graph_or_the_new_one(
    tmp_path: Path, delay: float
) -> None:
    docs, store = tmp_path / "docs", tmp_path / "s.sqlite"
    docs.mkdir()
    old = {f"d{i}.txt": 0 for i in range(300)}
    build_documents(request(), write_corpus(docs, old), [docs], store, agent_name="script")
    previous = content_form(graph(store))
    child = subprocess.Popen(
        [sys.executable, "-c", KILLED_UPDATE.format(root=str(ROOT), docs=str(docs), store=str(store))],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "ready"
    time.sleep(delay)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    new_docs, new_store = tmp_path / "new", tmp_path / "new.sqlite"
    new_docs.mkdir()
    new = {f"d{i}.txt": (1 if i % 3 == 0 else 0) for i in range(300)}
    expected = content_form(fresh(new_docs, write_corpus(new_docs, new), new_store, "notes"))
    now = content_form(graph(store))
    assert now in (previous, expected)
    # whichever it is, the next update brings the session to the new corpus
    build_documents(
        request(),
        write_corpus(docs, new),
        [docs],
        store,
        agent_name="script",
        session_id="notes",
        update=True,
    )
    assert content_form(graph(store)) == expected


def test_bad_input_is_named_and_refused_before_anything_changes(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "sub").mkdir(parents=True)
    (docs / "a.md").write_text("text", encoding="utf-8")
    (docs / "blob.txt").write_bytes(b"\x00\x01binary")
    (docs / "latin.txt").write_bytes("caf\xe9".encode("latin-1"))
    (docs / "sub" / "a.md").write_text("same name, other folder", encoding="utf-8")
    (docs / "ignored").mkdir()
    (docs / "ignored" / "x.md").write_text("never read", encoding="utf-8")
    (docs / ".gitignore").write_text("ignored/\n", encoding="utf-8")
    (docs / "image.png").write_bytes(b"\x89PNG")
    os.mkfifo(docs / "pipe.txt")  # opening it would block: listed, never read
    corpus = read_corpus([docs])
    assert [d.id for d in corpus.documents] == ["a.md", "sub/a.md"]
    reasons = dict(corpus.skipped)
    assert reasons["blob.txt"] == "binary (NUL bytes)" and reasons["latin.txt"].startswith("not UTF-8")
    assert reasons["ignored/"].startswith("gitignored") and corpus.other[".png"] == 1
    assert reasons["pipe.txt"] == "not a regular file (a FIFO, socket or device)"

    (docs / "rows.jsonl").write_text(
        '{"id": "a.md", "text": "clash"}\n\n{"text": "no id"}\n{"id": "z"}\n', encoding="utf-8"
    )
    with pytest.raises(RequestInvalid) as caught:
        read_corpus([docs])
    text = str(caught.value)
    assert "rows.jsonl line 1" in text and "given twice" in text
    assert "rows.jsonl line 3" in text and "'id'" in text and "rows.jsonl line 4" in text and "'text'" in text

    store = tmp_path / "s.sqlite"
    build_documents(
        request(),
        ScriptedAgent([{"document": "a.md", "actions": []}]),
        [docs / "a.md"],
        store,
        agent_name="script",
    )
    before = canonical(graph(store))
    steps = len(SessionStore(store).steps("notes"))
    with pytest.raises(RequestInvalid):
        build_documents(
            request(),
            ScriptedAgent([{"actions": []}]),
            [docs],
            store,
            agent_name="script",
            session_id="notes",
            update=True,
        )
    assert canonical(graph(store)) == before and len(SessionStore(store).steps("notes")) == steps


def test_the_command_line_builds_updates_and_lists_documents(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    corpus = {"a.txt": 0, "b.txt": 0}
    agent = write_corpus(docs, corpus)
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("\n".join(json.dumps(t) for t in agent.turns), encoding="utf-8")
    (tmp_path / "request.json").write_text(json.dumps(REQUEST), encoding="utf-8")
    store = tmp_path / "s.sqlite"

    def igg(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "igg", *args],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    base = [
        "run",
        "request.json",
        "--documents",
        "docs",
        "--agent",
        f"script:{transcript}",
        "--store",
        str(store),
    ]
    out = json.loads(igg(*base, "--json"))
    assert out["documents"]["added"] == 2 and out["agent_calls"] == 2
    (docs / "b.txt").unlink()
    out = json.loads(igg(*base, "--update", "--session", "notes", "--json"))
    assert (out["documents"]["removed"], out["agent_calls"]) == (1, 0)
    listed = json.loads(igg("show", "notes", "--documents", "--store", str(store), "--json"))
    assert [r["document"] for r in listed["documents"]] == ["a.txt"]
    refused = subprocess.run(
        [sys.executable, "-m", "igg", *base, "--export", "json:g.json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )
    assert refused.returncode == 2 and "--export: --documents keeps its session in a store" in refused.stderr


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(2, 6), st.integers(0, 5), st.integers(0, 3))
def test_retracting_a_document_equals_a_fresh_build_without_it_and_touches_only_its_facts(
    size: int, pick: int, version: int
) -> None:
    from igg.documents.build import load_session
    from igg.documents.retract import retract_document

    with tempfile.TemporaryDirectory() as tmp:
        docs, store = Path(tmp) / "docs", Path(tmp) / "s.sqlite"
        docs.mkdir()
        corpus = {f"d{i}.txt": version + i % 2 for i in range(size)}
        build_documents(request(), write_corpus(docs, corpus), [docs], store, agent_name="script")
        before = canonical(graph(store))
        doc = sorted(corpus)[pick % size]
        session = load_session(SessionStore(store), "notes")
        mentioned = {
            n
            for n, d in session.state.nodes.items()
            if doc in d["provenance"]["documents"] + d["provenance"]["claimants"]
        }
        done = retract_document(session, doc)
        del corpus[doc]
        after = graph(store)
        assert content_form(after) == content_form(fresh(docs, write_corpus(docs, corpus), store, "without"))
        changed = {
            m.id
            for _, m in SessionStore(store).mutations("notes", after_step=1)
            if hasattr(m, "id") and m.id.startswith("n")
        }
        assert changed <= mentioned  # only the nodes the document supported or claimed a property of
        assert stored_corpus(SessionStore(store), "notes") == {
            d: s for d, s in read_corpus([docs]).manifest().items()
        }
        undo(SessionStore(store), "notes", done["iteration_applied"] - 1)
        assert canonical(graph(store)) == before
        assert doc in (stored_corpus(SessionStore(store), "notes") or {})


def test_review_keeps_the_whole_change_as_a_plan_that_igg_review_shows_and_applies_whole(
    tmp_path: Path,
) -> None:
    from igg.store import StoreSessions
    from igg.workspace.inputs import ReviewInput
    from igg.workspace.service import Workspace

    docs, store = tmp_path / "docs", tmp_path / "s.sqlite"
    docs.mkdir()
    corpus = {f"d{i}.txt": 0 for i in range(4)}
    build_documents(request(), write_corpus(docs, corpus), [docs], store, agent_name="script")
    before = canonical(graph(store))
    corpus["d1.txt"] = 1
    del corpus["d2.txt"]
    agent = write_corpus(docs, corpus)
    planned = build_documents(
        request(), agent, [docs], store, agent_name="script", session_id="notes", update=True, review=True
    )
    assert not planned.applied and planned.problems == [] and planned.agent_calls == 1
    assert planned.plan is not None and planned.plan.update is not None
    assert canonical(graph(store)) == before  # nothing applied while the plan waits
    with pytest.raises(WorkspaceError, match="waiting for review"):  # no other change meanwhile
        build_documents(request(), agent, [docs], store, agent_name="script", session_id="notes", update=True)
    ws = Workspace(StoreSessions(SessionStore(store)))
    shown = ws.review(ReviewInput(session_id="notes"))["review"]
    assert shown["plan_id"] == planned.plan.plan_id and "difference" not in shown["update"]
    assert len(shown["actions"]) == sum(planned.changes.values()) == shown["accepted"]
    with pytest.raises(WorkspaceError, match="applies whole"):
        ws.review(ReviewInput(session_id="notes", plan_id=shown["plan_id"], decision="approve", actions=[0]))
    done = ws.review(ReviewInput(session_id="notes", plan_id=shown["plan_id"], decision="approve"))
    assert done["approved"] == list(range(len(shown["actions"])))
    assert content_form(graph(store)) == content_form(fresh(docs, agent, store, "again"))  # a fresh build's
    assert SessionStore(store).session("notes").status == "finished"
    again = build_documents(
        request(), agent, [docs], store, agent_name="script", session_id="notes", update=True
    )
    assert again.agent_calls == 0 and sum(again.changes.values()) == 0  # the plan's corpus is kept
    tight = load_request({**REQUEST, "config": {**REQUEST["config"], "constraints": {"max_nodes": 1}}})
    refused = build_documents(
        tight, agent, [docs], tmp_path / "other.sqlite", agent_name="script", review=True
    )
    assert refused.problems and "max_nodes" in refused.problems[0]
