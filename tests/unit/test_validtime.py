"""Facts in time (issue 43): valid time on actions, supersession decided by the schema, and the graph as of an
instant (``--as-of``) and as the journal held it (``--known-at``), judged against a generated stream whose
truth the generator decided (``scripts/gen_temporal.py``), not against IGG's own output."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from igg.act.apply import Actor
from igg.agents.scripted import ScriptedAgent
from igg.graph.asof import as_of
from igg.graph.state import GraphState
from igg.models.actions import read_response
from igg.models.request import Constraints
from igg.models.schema import Schema
from igg.models.validtime import VALID_FROM, VALID_TO, TimeError, instant, parse_time
from igg.observe.query import run_query
from igg.request.load import load_request
from igg.service import run_request
from igg.store import SessionStore
from igg.store.session_graph import session_graph
from tests.conftest import FIXTURES, ROOT

sys.path.insert(0, str(ROOT / "scripts"))
from gen_temporal import SCHEMA, Stream, generate  # noqa: E402

CAREERS = FIXTURES / "time"


# ---- the time rule -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "stored", "moment"),
    [
        ("2024", "2024", datetime(2024, 1, 1, tzinfo=UTC)),
        ("2024-03", "2024-03", datetime(2024, 3, 1, tzinfo=UTC)),
        ("2024-03-05", "2024-03-05", datetime(2024, 3, 5, tzinfo=UTC)),
        ("2024-03-05T10:30", "2024-03-05T10:30:00Z", datetime(2024, 3, 5, 10, 30, tzinfo=UTC)),
        ("2024-03-05T01:30:00+02:00", "2024-03-04T23:30:00Z", datetime(2024, 3, 4, 23, 30, tzinfo=UTC)),
        (
            "2024-03-05T10:30:00.25-05:00",
            "2024-03-05T15:30:00.250000Z",
            datetime(2024, 3, 5, 15, 30, 0, 250000, tzinfo=UTC),
        ),
    ],
)
def test_times_read_as_the_documented_rule_says(text: str, stored: str, moment: datetime) -> None:
    assert parse_time(text) == (stored, moment)


@pytest.mark.parametrize(
    "text", ["in 2023", "2024-13", "2024-02-30", "24", "2024/03/05", "", "2024-03-05T25:00"]
)
def test_an_unreadable_time_says_the_rule(text: str) -> None:
    with pytest.raises(TimeError, match="ISO 8601"):
        parse_time(text)


# ---- verdicts ----------------------------------------------------------------------------------------------
def actor_and_state() -> tuple[Actor, GraphState]:
    schema = Schema.model_validate(SCHEMA).compile()
    return Actor(schema, Constraints()), GraphState(schema)


def apply(actor: Actor, state: GraphState, *actions: dict[str, Any]) -> list[dict[str, Any]]:
    return [v.to_dict() for v in actor.apply(state, read_response({"actions": list(actions)}).items)]


def person(name: str, **extra: Any) -> dict[str, Any]:
    return {"type": "ADD_NODE", "label": "Person", "properties": {"name": name}, **extra}


def company(name: str) -> dict[str, Any]:
    return {"type": "ADD_NODE", "label": "Company", "properties": {"name": name}}


def works(who: str, where: str, **times: Any) -> dict[str, Any]:
    return {"type": "ADD_EDGE", "label": "WORKS_AT", "from": {"name": who}, "to": {"name": where}, **times}


def test_bad_times_get_coded_verdicts_with_the_rule_never_a_crash() -> None:
    actor, state = actor_and_state()
    apply(actor, state, person("Ann"), company("Acme"), company("Initech"))
    verdicts = apply(
        actor,
        state,
        company("Later") | {"valid_from": "2020"},  # Company is not scoped in time
        works("Ann", "Acme", valid_from="soon"),
        works("Ann", "Acme", valid_from="2020", valid_to="2019-12"),
        works("Ann", "Acme", valid_from=2020),  # a year as a number reads as its text
        works("Ann", "Initech", valid_from="2020-01-01"),  # the same instant as "2020"
        {
            "type": "UPDATE_EDGE",
            "label": "WORKS_AT",
            "from": {"name": "Ann"},
            "to": {"name": "Acme"},
            "valid_to": "2019",
        },  # before the stored valid_from
        {
            "type": "ADD_EDGE",
            "label": "KNOWS",
            "from": {"name": "Ann"},
            "to": {"name": "Ann"},
            "valid_from": ["2020"],
        },
    )
    codes = [v.get("code") for v in verdicts]
    assert codes == [
        "TIME_NOT_SCOPED",
        "INVALID_TIME",
        "INVALID_TIME",
        None,
        "TIME_CONFLICT",
        "INVALID_TIME",
        "INVALID_ACTION",
    ]
    assert "valid_time does not name Company" in verdicts[0]["message"]
    assert "'soon' is not a time" in verdicts[1]["message"] and "partial date" in verdicts[1]["message"]
    assert "not after valid_from" in verdicts[2]["message"]
    assert "WORKS_AT holds one target at a time" in verdicts[4]["message"]


def test_supersession_touches_only_the_same_source_and_type_and_late_facts_slot_in() -> None:
    actor, state = actor_and_state()
    apply(actor, state, person("Ann"), person("Bob"), company("Acme"), company("Initech"), company("Globex"))
    apply(
        actor,
        state,
        works("Ann", "Initech"),
        works("Bob", "Initech", valid_from="2018"),
        {
            "type": "ADD_EDGE",
            "label": "KNOWS",
            "from": {"name": "Ann"},
            "to": {"name": "Bob"},
            "valid_from": "2019",
        },
    )
    before = {eid: dict(data["properties"]) for eid, (_, _, data) in state.edge_rows()}
    verdicts = apply(actor, state, works("Ann", "Acme", valid_from="2024"))
    assert verdicts[0]["warning"] == "SUPERSEDED"
    assert 'supersedes Person "Ann" -WORKS_AT-> Company "Initech"' in verdicts[0]["message"]
    late = apply(actor, state, works("Ann", "Globex", valid_from="2021-06"))[0]
    assert late["warning"] == "SUPERSEDED" and "which starts at 2024: it holds until then" in late["message"]
    after = {eid: data["properties"] for eid, (_, _, data) in state.edge_rows()}
    changed = {eid for eid in before if before[eid] != after[eid]}
    ann_initech = state.edge_between("n1", "WORKS_AT", "n4")
    assert changed == {ann_initech}  # Bob's job and Ann's acquaintance: untouched
    assert after[ann_initech] == {VALID_TO: "2021-06"}
    assert after[state.edge_between("n1", "WORKS_AT", "n5")] == {VALID_FROM: "2021-06", VALID_TO: "2024"}


def test_a_one_value_property_keeps_its_history_and_a_late_value_does_not_replace_the_current() -> None:
    actor, state = actor_and_state()
    apply(
        actor, state, person("Ann", valid_from="2010") | {"properties": {"name": "Ann", "title": "engineer"}}
    )
    update = {"type": "UPDATE_NODE", "node": {"name": "Ann"}}
    assert (
        apply(actor, state, update | {"properties": {"title": "CTO"}, "valid_from": "2022"})[0]["warning"]
        == "SUPERSEDED"
    )
    apply(actor, state, update | {"properties": {"title": "lead"}, "valid_from": "2016"})
    assert state.node_properties("n1")["title"] == "CTO"
    conflict = apply(actor, state, update | {"properties": {"title": "VP"}, "valid_from": "2016-01-01"})[0]
    assert conflict["code"] == "TIME_CONFLICT"
    titles = {
        year: as_of(state, instant(year)).node_properties("n1").get("title")
        for year in ("2012", "2016", "2021-12-31T23:59:59Z", "2022", "2030")
    }
    assert titles == {
        "2012": "engineer",
        "2016": "lead",
        "2021-12-31T23:59:59Z": "lead",
        "2022": "CTO",
        "2030": "CTO",
    }
    assert "n1" not in as_of(state, instant("2009")).nodes  # the node itself holds from 2010


# ---- the generated stream, judged by its truth -------------------------------------------------------------
def canonical(state: GraphState) -> tuple[set[tuple[str, str, str]], dict[str, str]]:
    names = {n: d["properties"]["name"] for n, d in state.nodes.items()}
    edges = {(data["type"], names[u], names[v]) for _, (u, v, data) in state.edge_rows()}
    titles = {
        d["properties"]["name"]: d["properties"]["title"]
        for d in state.nodes.values()
        if "title" in d["properties"]
    }
    return edges, titles


@pytest.fixture(scope="module")
def stream_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Stream, Path, GraphState]:
    """10,000 facts over 1,000 entities, shuffled, some stated twice, run through ``igg run``'s loop into a
    store."""
    stream = generate(entities=1000, facts=10_000, seed=7)
    store = tmp_path_factory.mktemp("temporal") / "s.sqlite"
    result = run_request(load_request(stream.request), ScriptedAgent(stream.turns(1000)), store=store)
    assert result.stop_reason == "finished"
    state = session_graph(store, stream.request["session_id"])[0]
    return stream, store, state


def test_supersession_has_precision_and_recall_one_and_no_collateral(stream_run: Any) -> None:
    stream, store, state = stream_run
    assert len(stream.facts) >= 10_000 and len(stream.nodes) == 1000
    names = {n: d["properties"]["name"] for n, d in state.nodes.items()}
    jobs = {
        (names[u], names[v]): data["properties"]
        for _, (u, v, data) in state.edge_rows()
        if data["type"] == "WORKS_AT"
    }
    truth = {(p, c): (s, e) for p, c, s, e in stream.jobs}
    assert set(jobs) == set(truth)
    closed = {k for k, props in jobs.items() if VALID_TO in props}
    right = {k for k in closed if truth[k][1] is not None and instant(jobs[k][VALID_TO]) == truth[k][1]}
    should = {k for k, (_, end) in truth.items() if end is not None}
    precision, recall = len(right) / len(closed), len(right) / len(should)
    assert (precision, recall) == (1.0, 1.0), (precision, recall)
    assert all(instant(props[VALID_FROM]) == truth[k][0] for k, props in jobs.items())
    # no fact outside a superseded source/type changed: every acquaintance holds exactly what was sent
    knows = {
        (names[u], names[v]): data["properties"]
        for _, (u, v, data) in state.edge_rows()
        if data["type"] == "KNOWS"
    }
    assert {
        k: (instant(p[VALID_FROM]), p.get(VALID_TO) and instant(p[VALID_TO])) for k, p in knows.items()
    } == {(a, b): (s, e) for a, b, s, e in stream.knows}
    sessions = SessionStore(store)
    try:  # and the journal agrees: an edge is only ever re-written (its bound set) if it is a WORKS_AT
        rewritten = {
            m.type for _, m in sessions.mutations(stream.request["session_id"]) if m.op == "delete_edge"
        }
    finally:
        sessions.close()
    assert rewritten == {"WORKS_AT"}


def test_as_of_equals_the_truth_at_fifty_random_instants(stream_run: Any) -> None:
    stream, _, state = stream_run
    rng = random.Random(43)
    instants = [
        datetime(2000, 1, 1, tzinfo=UTC)
        + (datetime(2031, 1, 1, tzinfo=UTC) - datetime(2000, 1, 1, tzinfo=UTC)) * rng.random()
        for _ in range(48)
    ]
    instants += [
        instant(stream.jobs[0][2].strftime("%Y-%m-%dT%H:%M:%SZ")),
        stream.titles[0][2],
    ]  # on a boundary
    for at in instants:
        assert canonical(as_of(state, at)) == stream.truth_at(at), at


def test_a_query_as_of_an_instant_sees_the_same_neighbourhood(stream_run: Any) -> None:
    stream, _, state = stream_run
    at = datetime(2015, 6, 1, tzinfo=UTC)
    edges, _ = stream.truth_at(at)
    who = stream.jobs[0][0]
    answer = run_query(
        state, {"query": "neighbours", "node": {"name": who}, "as_of": "2015-06", "token_budget": 50_000}
    )
    names = {n["id"]: n["properties"]["name"] for n in answer.nodes}
    seen = {
        (
            e["type"],
            who if e["from"] not in names else names[e["from"]],
            who if e["to"] not in names else names[e["to"]],
        )
        for e in answer.edges
    }
    assert seen == {e for e in edges if who in (e[1], e[2])}


def test_known_at_equals_replaying_the_journal_to_that_instant(stream_run: Any) -> None:
    stream, store, _ = stream_run
    sid = stream.request["session_id"]
    sessions = SessionStore(store)
    try:
        steps = sessions.steps(sid, with_records=False)
        for before, after in zip(steps, steps[1:], strict=False):
            if int(after.created_at * 1000) == int(before.created_at * 1000):
                continue  # one millisecond: --known-at tells them apart no finer
            middle = datetime.fromtimestamp(int(before.created_at * 1000) / 1000, UTC)  # as explain prints it
            known = session_graph(store, sid, known_at=middle.isoformat().replace("+00:00", "Z"))[0]
            _, replayed, _ = sessions.load_state(sid, upto_step=before.step, use_snapshot=False)
            assert canonical(known) == canonical(replayed) and known.edge_count == replayed.edge_count
    finally:
        sessions.close()


# ---- through the command line: export, show, explain, review, undo, kill -9 --------------------------------
def igg(*args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "igg", *args], cwd=ROOT, capture_output=True, text=True, timeout=120, **kwargs
    )


@pytest.fixture(scope="module")
def careers(tmp_path_factory: pytest.TempPathFactory) -> str:
    store = str(tmp_path_factory.mktemp("careers") / "s.sqlite")
    ran = igg(
        "run",
        str(CAREERS / "request.json"),
        "--agent",
        f"script:{CAREERS / 'transcript.jsonl'}",
        "--store",
        store,
        "-q",
    )
    assert ran.returncode == 0, ran.stderr
    return store


def test_export_show_and_explain_answer_as_of_an_instant(careers: str, tmp_path: Path) -> None:
    out = tmp_path / "2021.json"
    ran = igg("export", "careers", "--store", careers, "-f", "json", "-o", str(out), "--as-of", "2021-03")
    assert ran.returncode == 0, ran.stderr
    doc = json.loads(out.read_text())
    names = {n["id"]: n["properties"]["name"] for n in doc["nodes"]}
    assert {(names[e["from"]], names[e["to"]]) for e in doc["edges"]} == {
        ("Alice Chen", "Globex"),
        ("Bob Diaz", "Acme"),
        ("Carol Evans", "Umbrella"),
    }
    assert doc["metadata"]["as_of"] == "2021-03"
    alice = next(n for n in doc["nodes"] if n["properties"]["name"] == "Alice Chen")
    assert alice["properties"]["title"] == "team lead" and "igg_history" not in alice["properties"]
    # the export reads back, and slices again the same way
    again = igg("export", str(out), "-f", "graphml", "-o", str(tmp_path / "2021.graphml"), "--as-of", "2020")
    assert again.returncode == 0, again.stderr
    shown = igg("show", "careers", "--store", careers, "--as-of", "2023")
    assert (
        shown.returncode == 0
        and '"Alice Chen" -WORKS_AT-> "Hooli" {valid 2022..2024-01 (ended)}' in shown.stdout
    )
    explained = igg(
        "explain", "careers", "Alice Chen", "--store", careers, "--no-edges", "--as-of", "2019-05"
    )
    assert explained.returncode == 0, explained.stderr
    assert "as of 2019-05: n1 held:" in explained.stdout and "'title': 'team lead'" in explained.stdout
    assert "told: 20" in explained.stdout and "valid: 2015-03 .. -" in explained.stdout
    bad = igg("export", "careers", "--store", careers, "-f", "json", "-o", str(out), "--as-of", "yesterday")
    assert bad.returncode != 0 and "--as-of" in bad.stderr and "Traceback" not in bad.stderr
    ttl = igg("export", "careers", "--store", careers, "-f", "ttl", "-o", str(tmp_path / "c.ttl"))
    assert ttl.returncode == 0 and '"2020-06"^^xsd:gYearMonth' in (tmp_path / "c.ttl").read_text()


def test_a_supersession_waits_for_review_and_undo_reverses_it(tmp_path: Path) -> None:
    payload = json.loads((CAREERS / "request.json").read_text())
    payload["config"]["review"] = True
    request = tmp_path / "request.json"
    request.write_text(json.dumps(payload))
    store = str(tmp_path / "s.sqlite")
    agent = f"script:{CAREERS / 'transcript.jsonl'}"
    for _ in range(2):  # iteration 1 (no supersession), then iteration 2's moves
        ran = igg(
            "run" if _ == 0 else "resume",
            *([str(request)] if _ == 0 else ["careers"]),
            "--agent",
            agent,
            "--store",
            store,
            "--json",
        )
        assert ran.returncode == 0, ran.stderr
        plan = json.loads(ran.stdout)["review"]
        if _ == 1:  # the moves are proposed, each naming the fact it closes, and nothing has changed yet
            superseded = [v for v in plan["verdicts"] if v.get("warning") == "SUPERSEDED"]
            assert len(superseded) == 5 and all("supersedes" in v["message"] for v in superseded)
            assert alice_at_initech(store) == {VALID_FROM: "2015-03"}
        assert igg("review", "careers", "--approve", "--store", store).returncode == 0
    assert alice_at_initech(store) == {VALID_FROM: "2015-03", VALID_TO: "2020-06"}
    assert igg("undo", "careers", "--to", "1", "--store", store).returncode == 0
    assert alice_at_initech(store) == {VALID_FROM: "2015-03"}  # open again: the supersession is undone


def alice_at_initech(store: str) -> dict[str, Any]:
    graph = session_graph(store, "careers")[0]
    return next(
        d["properties"]
        for _, (u, v, d) in graph.edge_rows()
        if graph.node_properties(v)["name"] == "Initech" and graph.node_properties(u)["name"] == "Alice Chen"
    )


def test_kill_9_during_supersession_leaves_a_whole_step(tmp_path: Path) -> None:
    """A run of 4,000 shuffled facts (supersession in every turn) killed mid-way: the store holds the graph
    after some whole iteration, equal to a fresh run of exactly those turns."""
    stream = generate(entities=300, facts=4000, seed=11)
    folder = tmp_path / "gen"
    folder.mkdir()
    (folder / "request.json").write_text(json.dumps(stream.request))
    turns = stream.turns(100)
    (folder / "transcript.jsonl").write_text("".join(json.dumps(t) + "\n" for t in turns))
    store = str(tmp_path / "s.sqlite")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "igg",
            "run",
            str(folder / "request.json"),
            "--agent",
            f"script:{folder / 'transcript.jsonl'}",
            "--store",
            store,
            "-q",
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        time.sleep(0.05)
        try:
            sessions = SessionStore(store)
            try:
                done = sessions.session(stream.request["session_id"]).last_iteration
            finally:
                sessions.close()
        except Exception:  # the store or the session is not there yet
            continue
        if done >= 5:
            break
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    state = session_graph(store, stream.request["session_id"])[0]
    sessions = SessionStore(store)
    try:
        kept = sessions.session(stream.request["session_id"]).last_iteration
    finally:
        sessions.close()
    assert 5 <= kept < len(turns), kept
    fresh_request = load_request(stream.request)
    fresh = run_request(
        fresh_request, ScriptedAgent([*turns[: kept - 1], {**turns[kept - 1], "finished": True}])
    )
    assert canonical(state) == canonical(fresh.state)
    assert {e: d["properties"] for e, (_, _, d) in state.edge_rows()} == {
        e: d["properties"] for e, (_, _, d) in fresh.state.edge_rows()
    }


def test_the_viewer_api_serves_a_stored_graph_as_of_an_instant(careers: str) -> None:
    from fastapi.testclient import TestClient

    from igg.interfaces.http.app import build_app
    from igg.store.sessions import StoreSessions
    from igg.workspace import Workspace

    with TestClient(build_app(Workspace(StoreSessions(SessionStore(careers))))) as http:
        now = http.get("/ui/api/sessions/careers/graph").json()
        then = http.get("/ui/api/sessions/careers/graph", params={"as_of": "2021-03"}).json()
        bad = http.get("/ui/api/sessions/careers/graph", params={"as_of": "last spring"})
    assert len(now["edges"]) == 7 and len(then["edges"]) == 3
    assert bad.status_code == 422 and "ISO 8601" in bad.text and "Traceback" not in bad.text


def test_the_observation_marks_ended_facts_and_states_the_rule_in_one_line() -> None:
    from igg.observe.graphview import GraphView
    from igg.observe.render import _schema

    actor, state = actor_and_state()
    apply(
        actor,
        state,
        person("Ann"),
        company("Acme"),
        company("Initech"),
        person("Bob") | {"properties": {"name": "Bob", "title": "engineer"}},
    )
    apply(
        actor,
        state,
        works("Ann", "Initech", valid_from="2015"),
        works("Ann", "Acme", valid_from="2020-06"),
        {
            "type": "UPDATE_NODE",
            "node": {"name": "Bob"},
            "properties": {"title": "lead"},
            "valid_from": "2019",
        },
    )
    lines = GraphView(state).render_all(10_000) or []
    assert '"Ann" -WORKS_AT-> "Acme" {valid 2020-06..}, "Initech" {valid 2015..2020-06 (ended)}' in lines
    assert '"Bob" (earlier values: title 1) title="lead"' in lines
    assert not any("igg_" in line for line in lines)
    rule = [line for line in _schema(load_request(stream_request())) if line.startswith("Time:")]
    assert rule == [
        "Time: KNOWS, Person, WORKS_AT take valid_from/valid_to (ISO 8601, e.g. 2024-03; valid_to "
        "exclusive); WORKS_AT, Person.title hold one at a time: a later valid_from closes the current "
        "one; (ended) marks facts no longer current."
    ]


def stream_request() -> dict[str, Any]:
    return generate(entities=10, facts=20).request
