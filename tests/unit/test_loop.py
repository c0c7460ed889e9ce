"""The loop: stop reasons, malformed output, events, chunks, resume, recorders, async sessions."""

from __future__ import annotations

import asyncio
import json
import threading

import pytest

from igg.agents.base import AgentTurn
from igg.agents.scripted import ScriptedAgent
from igg.engine.loop import Loop, arun, run, stream
from igg.errors import AgentFailed, BudgetExhausted
from igg.record.records import IterationRecord, RunResult, Usage
from tests.conftest import edge, make_request, node


def cls(name: str, package: str = "com.app.auth") -> dict:
    return node("Class", name=name, package=package)


def turn(*actions: dict, finished: bool = False, reasoning: str = "") -> dict:
    return {"reasoning": reasoning, "actions": list(actions), "finished": finished}


def doc(state) -> dict:
    return state.to_document(provenance=True).model_dump(by_alias=True)


GOOD = [
    turn(cls("AuthController", "com.app.web")),
    turn(cls("AuthService"), edge("CALLS", {"name": "AuthController"}, {"name": "AuthService"})),
    turn(node("Interface", name="TokenStore"), finished=True),
]


def test_a_scripted_run_ends_finished_with_counts_and_a_summary():
    result = run(make_request(), ScriptedAgent(GOOD))
    assert result.stop_reason == "finished"
    summary = result.summary()
    assert {k: summary[k] for k in ("session_id", "stop_reason", "iterations", "nodes", "edges")} == {
        "session_id": "uuid-1234",
        "stop_reason": "finished",
        "iterations": 3,
        "nodes": 3,
        "edges": 1,
    }
    assert summary["actions"] == {"proposed": 4, "accepted": 4, "rejected": 0, "rejected_by_code": {}}
    assert summary["exports"] == [] and summary["open_todos"] == [] and summary["pruned"] == []
    assert set(summary["tokens"]) >= {"prompt", "completion", "total", "observations"}
    json.dumps(summary)


def test_max_iterations_is_a_hard_guard():
    agent = ScriptedAgent([turn(cls(f"C{i}")) for i in range(10)])
    result = run(make_request(max_iterations=4), agent)
    assert (result.stop_reason, result.iterations, result.state.node_count) == ("max_iterations", 4, 4)


def test_limits_reached_when_nodes_and_edges_are_used_up():
    agent = ScriptedAgent(
        [
            turn(cls("A"), cls("B")),
            turn(edge("CALLS", {"name": "A"}, {"name": "B"})),
            turn(cls("C")),
        ]
    )
    result = run(make_request(constraints={"max_nodes": 2, "max_edges": 1}), agent)
    assert (result.stop_reason, result.iterations) == ("limits_reached", 2)


def test_stuck_after_n_iterations_in_a_row_without_an_accepted_action():
    agent = ScriptedAgent(
        [turn(cls("A")), turn(cls("A")), {"raw": "nonsense"}, turn(node("Klass", name="B"))]
        + [turn(cls("Z"))]
    )
    result = run(make_request(stuck_after=3), agent)
    assert (result.stop_reason, result.iterations) == ("stuck", 4)
    assert [r.accepted for r in result.records] == [1, 0, 0, 0]


def test_stuck_streak_is_configurable_and_broken_by_an_accepted_action():
    agent = ScriptedAgent([turn(cls("A")), turn(cls("A")), turn(cls("B")), turn(cls("B")), turn(cls("B"))])
    result = run(make_request(stuck_after=2), agent)
    assert (result.stop_reason, result.iterations) == ("stuck", 5)


def test_budget_exhausted_when_the_agent_says_so():
    calls = []

    def agent(obs):
        calls.append(obs.iteration)
        if obs.iteration == 3:
            raise BudgetExhausted("the token budget (1000) does not allow another call: 950 spent")
        return AgentTurn(
            response=turn(cls(f"C{obs.iteration}")), usage=Usage(prompt_tokens=400, completion_tokens=75)
        )

    result = run(make_request(), agent)
    assert result.stop_reason == "budget_exhausted" and calls == [1, 2, 3]
    assert result.iterations == 2 and result.state.node_count == 2
    assert result.summary()["tokens"]["total"] == 950
    assert "950 spent" in result.summary()["error"]


@pytest.mark.parametrize(
    "failure, message",
    [
        (AgentFailed("the server failed 5 times: 503"), "the server failed 5 times: 503"),
        (RuntimeError("boom"), "the agent raised RuntimeError: boom"),
        (None, "the agent raised TypeError: an agent must return an AgentTurn"),
    ],
)
def test_agent_error_keeps_the_graph_so_far(failure, message):
    def agent(obs):
        if obs.iteration == 2:
            if failure is None:
                return 42  # not a turn at all
            raise failure
        return turn(cls("A"))

    result = run(make_request(), agent)
    assert result.stop_reason == "agent_error" and message in result.error
    assert result.iterations == 1 and result.state.node_count == 1


def test_an_exhausted_transcript_is_an_agent_error():
    result = run(make_request(), ScriptedAgent([turn(cls("A"))]))
    assert result.stop_reason == "agent_error"
    assert "transcript exhausted" in result.error


MALFORMED = [
    {"raw": ""},
    {"raw": "I'm sorry, I can't do that."},
    {"raw": '{"reasoning": "x", "actions": [{"type": "ADD_NODE"'},  # cut: no whole action
    {"raw": '```json\n{"reasoning": "x", "actions": [}\n```'},
    {"raw": '[{"type": "ADD_NODE", "label": "Class", "properties": {"name": "X", "package": "p"}}]'},
    {"raw": '{"actions": ' + "[" * 500},
    {"raw": "\x00\ud800 {'a': } \\u"},
    {"actions": "ADD_NODE"},
    {"reasoning": ["not", "a", "string"]},
    {"thoughts": "unknown key", "actions": []},
    {
        "actions": [
            {"type": "ADD_NODE", "label": "Class", "properties": {"name": {"nested": True}, "package": "p"}}
        ]
    },
    {"actions": [None, 3, "ADD_NODE", [], {"type": "MERGE"}, {"type": "ADD_NODE"}]},
    {"actions": [{"type": "ADD_EDGE", "label": "CALLS", "from": {}, "to": {"name": "A"}}]},
    {"actions": [{"type": "DELETE_NODE", "node": {"name": "Nope"}}]},
    {"actions": [{"type": "UPDATE_NODE", "node": {"name": "A"}, "properties": {"igg_x": 1, "label": "y"}}]},
]


@pytest.mark.parametrize("bad", MALFORMED, ids=range(len(MALFORMED)))
def test_malformed_output_never_crashes_and_never_changes_the_graph(bad):
    request = make_request(stuck_after=50)
    good = ScriptedAgent([turn(cls("A"), cls("B"), edge("CALLS", {"name": "A"}, {"name": "B"}))])
    before = run(request, good).state
    events = []
    result = run(
        request,
        ScriptedAgent([GOOD[0], bad, turn(finished=True)]),
        on_event=events.append,
        state=before,
        records=[],
        start_iteration=1,
    )
    assert result.stop_reason == "finished"
    bad_record = result.records[1]
    assert bad_record.mutations == []
    assert all(not v.accepted for v in bad_record.verdicts)
    assert bad_record.parse_error is not None or bad_record.verdicts or bad_record.truncated
    if bad_record.parse_error:
        assert bad_record.parse_error["code"] in ("INVALID_JSON", "INVALID_RESPONSE")
        assert bad_record.parse_error["message"]
    # the graph is what the good turn made of it
    assert result.state.node_count == 3 and result.state.edge_count == 1


def test_python_agents_returning_odd_objects_get_a_verdict_not_a_crash():
    class Weird:
        def __repr__(self):
            return "<weird>"

    agent = ScriptedAgent([])
    agent.turns = [
        {"actions": [{"type": "ADD_NODE", "label": "Class", "properties": {"name": Weird()}}]},
        {"actions": {1, 2}},
        turn(finished=True),
    ]
    result = run(make_request(), agent)
    assert result.stop_reason == "finished" and result.state.node_count == 0
    assert result.records[0].verdicts[0].code == "INVALID_PROPERTY"
    assert result.records[1].parse_error["code"] == "INVALID_RESPONSE"


def test_the_parse_error_and_rejections_are_shown_in_the_next_observation():
    seen = []
    transcript = ScriptedAgent([{"raw": "not json"}, turn(node("Klass", name="A")), turn(finished=True)])

    def agent(obs):
        seen.append(obs)
        return transcript(obs)

    run(make_request(), agent)
    assert "INVALID_JSON" in seen[1].markdown and "no JSON object found" in seen[1].markdown
    assert [v.code for v in seen[2].last_verdicts] == ["UNKNOWN_NODE_TYPE"]
    assert "UNKNOWN_NODE_TYPE" in seen[2].markdown


def test_a_truncated_turn_applies_whole_actions_and_says_so_next_time():
    cut = json.dumps(turn(cls("A"), cls("B")))[:-30]
    seen = []
    transcript = ScriptedAgent([{"raw": cut, "truncated": True}, turn(finished=True)])

    def agent(obs):
        seen.append(obs)
        return transcript(obs)

    result = run(make_request(), agent)
    record = result.records[0]
    assert record.truncated and record.accepted == 1 and result.state.node_count == 1
    assert "cut off" in seen[1].markdown
    assert result.summary()["truncated_turns"] == 1


def test_events_arrive_in_order():
    events = []
    agent = ScriptedAgent([turn(cls("A"), node("Klass", name="B")), {"raw": "??"}, turn(finished=True)])
    result = run(make_request(), agent, on_event=events.append)
    kinds = [(e.kind, e.iteration) for e in events]
    assert kinds == [
        ("run_started", 0),
        ("iteration_started", 1),
        ("action_verdict", 1),
        ("action_verdict", 1),
        ("iteration_finished", 1),
        ("iteration_started", 2),
        ("iteration_finished", 2),
        ("iteration_started", 3),
        ("iteration_finished", 3),
        ("run_finished", 0),
    ]
    assert events[2].data["accepted"] and events[3].data["code"] == "UNKNOWN_NODE_TYPE"
    finished = events[4].data
    assert (finished["proposed"], finished["accepted"], finished["rejected_by_code"]) == (
        2,
        1,
        {"UNKNOWN_NODE_TYPE": 1},
    )
    assert finished["ms"] >= 0 and set(finished["timings_ms"]) == {"observe", "reason", "act", "total"}
    assert events[6].data["parse_error"]["code"] == "INVALID_JSON"
    assert events[-1].data == result.summary() | {"elapsed_ms": events[-1].data["elapsed_ms"]}
    assert all(e.session_id == "uuid-1234" for e in events)


def test_stream_yields_events_and_then_the_result():
    runner = stream(make_request(), ScriptedAgent(GOOD))
    with pytest.raises(RuntimeError, match="has not finished"):
        _ = runner.result
    kinds = [e.kind for e in runner]
    assert kinds[0] == "run_started" and kinds[-1] == "run_finished"
    assert isinstance(runner.result, RunResult) and runner.result.stop_reason == "finished"


def test_iteration_records_carry_sizes_output_actions_verdicts_mutations_and_timings():
    result = run(make_request(), ScriptedAgent(GOOD))
    first: IterationRecord = result.records[0]
    assert first.iteration == 1 and first.observation_chars > 0 and first.observation_tokens > 0
    assert json.loads(first.raw_output) == GOOD[0] and first.output_kind == "object"
    assert first.actions == GOOD[0]["actions"]
    assert [v.accepted for v in first.verdicts] == [True]
    assert [m.op for m in first.mutations] == ["add_node"]
    assert first.mutations[0].to_dict()["provenance"]["created"] == 1
    assert set(first.timings_ms) == {"observe", "reason", "act", "total"}
    assert IterationRecord.from_dict(json.loads(json.dumps(first.to_dict()))) == first


def chunk_label(chunk) -> str:
    return chunk.label or f"chunk {chunk.index + 1}/{chunk.count}"


def test_provenance_carries_the_iteration_and_the_chunk():
    from igg.observe import split_context

    filler = "// a comment line that makes the file larger than one chunk budget\n" * 4
    context = f"// File: src/A.java\nclass A {{}}\n{filler}// File: src/B.java\nclass B {{}}\n{filler}"
    chunks = split_context(context, 80)
    assert len(chunks) >= 2
    result = run(
        make_request(context_data=context, context={"chunk_tokens": 80}),
        ScriptedAgent([turn(cls("A")), turn(cls("B"), finished=True)]),
    )
    provs = [d["provenance"] for _, d in result.state.graph.nodes(data=True)]
    assert provs == [
        {"created": 1, "chunk": chunk_label(chunks[0])},
        {"created": 2, "chunk": chunk_label(chunks[1])},
    ]
    assert [r.chunk for r in result.records] == [chunk_label(chunks[0]), chunk_label(chunks[1])]


def test_chunks_are_walked_in_order_and_a_failed_turn_stays_on_its_chunk():
    from igg.observe import split_context

    files = "".join(
        f"// File: src/C{i}.java\npublic class C{i} {{ }}\n" + "// filler line\n" * 30 for i in range(3)
    )
    chunks = split_context(files, 100)
    assert len(chunks) >= 3
    seen = []
    transcript = ScriptedAgent(
        [turn(cls("C0")), {"raw": "oops"}, turn(cls("C1")), turn(cls("C2")), turn(finished=True)]
    )

    def agent(obs):
        seen.append(obs)
        return transcript(obs)

    result = run(make_request(context_data=files, context={"chunk_tokens": 100}), agent)
    assert result.stop_reason == "finished"
    assert [o.chunk_index for o in seen] == [
        0,
        1,
        1,
        2,
        3 % len(chunks),
    ]  # the unreadable turn repeats chunk 2
    assert [o.context for o in seen[:4]] == [chunks[0].text, chunks[1].text, chunks[1].text, chunks[2].text]
    assert all(o.chunk_count == len(chunks) for o in seen)
    assert seen[0].chunk_label == chunks[0].label
    assert [r.chunk_cursor for r in result.records] == [0, 1, 1, 2, 3]


def test_after_the_last_chunk_the_walk_starts_a_second_pass_and_says_so():
    files = "// File: a.txt\n" + "alpha " * 200 + "\n// File: b.txt\n" + "beta " * 200 + "\n"
    seen = []
    transcript = ScriptedAgent([turn(cls(f"C{i}")) for i in range(5)])

    def agent(obs):
        seen.append(obs)
        return transcript(obs)

    run(make_request(context_data=files, context={"chunk_tokens": 300}, max_iterations=5), agent)
    count = seen[0].chunk_count
    assert [o.chunk_index for o in seen] == [i % count for i in range(5)]
    assert "pass 2" in seen[count].markdown and "pass 2" not in seen[count - 1].markdown


def test_a_resumed_run_continues_where_it_stopped_and_equals_an_uninterrupted_run():
    transcript = [
        turn(cls("A")),
        {"raw": "bad"},
        turn(cls("B"), edge("CALLS", {"name": "A"}, {"name": "B"})),
        turn(node("Interface", name="I")),
        turn(finished=True),
    ]
    whole = run(make_request(), ScriptedAgent(transcript))

    def crashing(obs):
        if obs.iteration == 3:
            raise AgentFailed("connection lost")
        return ScriptedAgent(transcript)(obs)

    first = run(make_request(), crashing)
    assert first.stop_reason == "agent_error" and first.iterations == 2
    second = run(make_request(), ScriptedAgent(transcript), state=first.state, records=first.records)
    assert second.stop_reason == "finished" and second.iterations == whole.iterations == 5
    assert doc(second.state) == doc(whole.state)
    assert second.summary()["actions"] == whole.summary()["actions"]
    assert [r.iteration for r in second.records] == [1, 2, 3, 4, 5]


def test_a_resumed_run_keeps_the_stuck_streak_and_the_last_verdicts():
    first = run(make_request(max_iterations=2), ScriptedAgent([turn(cls("A")), turn(cls("A"))]))
    seen = []

    def agent(obs):
        seen.append(obs)
        return turn(cls("A"))

    second = run(
        make_request(max_iterations=10, stuck_after=2), agent, state=first.state, records=first.records
    )
    assert second.stop_reason == "stuck" and second.iterations == 3
    assert [v.code for v in seen[0].last_verdicts] == ["DUPLICATE_NODE"]


def test_a_run_past_its_max_iterations_stops_without_calling_the_agent():
    first = run(make_request(max_iterations=2), ScriptedAgent([turn(cls("A")), turn(cls("B"))]))

    def agent(obs):
        raise AssertionError("must not be called")

    again = run(make_request(max_iterations=2), agent, state=first.state, records=first.records)
    assert again.stop_reason == "max_iterations" and again.iterations == 2


class ListRecorder:
    def __init__(self):
        self.calls = []

    def begin(self, request, state, records):
        self.calls.append(("begin", state.node_count, len(records)))

    def record(self, record):
        self.calls.append(("record", record.iteration, len(record.mutations)))

    def finish(self, result):
        self.calls.append(("finish", result.stop_reason, len(result.final_mutations)))


def test_recorders_see_begin_each_iteration_and_finish():
    rec = ListRecorder()
    run(make_request(finalize={"prune_isolated": True}), ScriptedAgent(GOOD), recorder=rec)
    assert rec.calls == [
        ("begin", 0, 0),
        ("record", 1, 1),
        ("record", 2, 2),
        ("record", 3, 1),
        ("finish", "finished", 1),
    ]


def test_finalization_prunes_isolated_nodes_and_reports_them_but_keeps_seed_nodes():
    seed = {"nodes": [{"id": "t1", "type": "DatabaseTable", "properties": {"name": "users"}}], "edges": []}
    result = run(make_request(finalize={"prune_isolated": True}, seed_data=seed), ScriptedAgent(GOOD))
    assert [p["properties"]["name"] for p in result.pruned] == ["TokenStore"]
    assert result.summary()["pruned"][0] == {
        "id": result.pruned[0]["id"],
        "type": "Interface",
        "properties": {"name": "TokenStore"},
    }
    assert result.state.node_count == 3 and "t1" in result.state.graph
    assert [m.op for m in result.final_mutations] == ["delete_node"]


def test_a_plain_function_is_an_agent_and_may_return_text():
    def agent(obs):
        if obs.iteration == 1:
            return '```json\n{"reasoning": "r", "actions": [' + json.dumps(cls("A")) + "]}\n```"
        return {"reasoning": "done", "actions": [], "finished": True}

    result = run(make_request(), agent)
    assert result.stop_reason == "finished" and result.state.node_count == 1
    assert result.records[0].output_kind == "text"


def test_a_sync_run_drives_an_async_agent():
    async def agent(obs):
        await asyncio.sleep(0)
        return GOOD[obs.iteration - 1]

    assert run(make_request(), agent).stop_reason == "finished"

    class AsyncCallable:
        async def __call__(self, obs):
            return GOOD[obs.iteration - 1]

    assert run(make_request(), AsyncCallable()).stop_reason == "finished"


def test_many_sessions_run_concurrently_on_one_event_loop_without_threads():
    log: list[tuple[str, int]] = []
    threads = set()

    def make_agent(name):
        async def agent(obs):
            threads.add(threading.get_ident())
            log.append((name, obs.iteration))
            await asyncio.sleep(0.01)
            return turn(cls(f"{name}{obs.iteration}"), finished=obs.iteration == 3)

        return agent

    async def main():
        requests = [make_request(session_id=f"s{i}") for i in range(5)]
        return await asyncio.gather(*(arun(r, make_agent(f"S{i}")) for i, r in enumerate(requests)))

    before = {t.ident for t in threading.enumerate()}
    results = asyncio.run(main())
    assert [r.stop_reason for r in results] == ["finished"] * 5
    assert [r.session_id for r in results] == [f"s{i}" for i in range(5)]
    assert all(r.state.node_count == 3 for r in results)
    assert len(threads) == 1
    assert not {t.ident for t in threading.enumerate()} - before  # no thread was started for the sessions
    # interleaved: every session asked its agent once before any session asked twice
    assert sorted(log[:5]) == [(f"S{i}", 1) for i in range(5)]


def test_arun_takes_sync_agents_and_async_event_handlers():
    events = []

    async def on_event(event):
        events.append(event.kind)

    result = asyncio.run(arun(make_request(), ScriptedAgent(GOOD), on_event=on_event))
    assert result.stop_reason == "finished" and events[-1] == "run_finished"


def test_astream_yields_events_asynchronously():
    async def main():
        runner = stream(make_request(), ScriptedAgent(GOOD))
        kinds = [e.kind async for e in runner]
        return kinds, runner.result

    kinds, result = asyncio.run(main())
    assert kinds.count("iteration_finished") == 3 and result.stop_reason == "finished"


def test_loop_steps_can_be_driven_by_hand():
    loop = Loop(make_request(), clock=iter(range(0, 10_000, 1)).__next__)
    assert loop.start().kind == "run_started"
    obs, started = loop.observe()
    assert started.kind == "iteration_started" and obs.iteration == 1 and obs.state is loop.state
    events = loop.act(AgentTurn(response=GOOD[2]), reason_ms=5.0)
    assert events[-1].data["stop_reason"] == "finished"
    assert loop.observe() is None
    assert loop.finish().data["stop_reason"] == "finished"


def test_the_public_api_exports_the_loop():
    import igg

    for name in (
        "run",
        "arun",
        "stream",
        "astream",
        "Loop",
        "RunResult",
        "RunStream",
        "Event",
        "IterationRecord",
        "Recorder",
        "ScriptedAgent",
        "parse_turn",
        "make_agent",
        "Observation",
        "AgentTurn",
        "BudgetExhausted",
        "STOP_REASONS",
    ):
        assert name in igg.__all__ and getattr(igg, name) is not None
    assert igg.run(make_request(), igg.ScriptedAgent(GOOD)).stop_reason == "finished"


def test_an_agent_s_validation_rules_join_the_act_step():
    """Declared capabilities (AgentCapabilities), not probed by name: the rules run after the built-in
    ones."""
    from igg.agents import AgentCapabilities
    from igg.models.actions import AddNode
    from igg.models.verdicts import ErrorCode

    def no_test_classes(ctx, action, plan):
        if action.properties.get("name", "").endswith("Test"):
            return ErrorCode.INVALID_PROPERTY, "test classes are out of scope"
        return None

    class Agent(AgentCapabilities):
        def validation_rules(self):
            return {AddNode: (no_test_classes,)}

        def __call__(self, obs):
            return turn(cls("AuthTest"), cls("Auth"), finished=True)

    result = run(make_request(), Agent())
    assert [v.accepted for v in result.records[0].verdicts] == [False, True]
    assert result.records[0].verdicts[0].message == "test classes are out of scope"


def test_a_sync_run_releases_an_async_agent_before_its_event_loop_ends():
    from igg.agents import AgentCapabilities

    class Agent(AgentCapabilities):
        def __init__(self):
            self.loop = None
            self.closed_on = None

        async def __call__(self, obs):
            self.loop = asyncio.get_running_loop()
            return GOOD[obs.iteration - 1]

        async def aclose(self):
            self.closed_on = asyncio.get_running_loop()

    agent = Agent()
    assert run(make_request(), agent).stop_reason == "finished"
    assert agent.closed_on is agent.loop and agent.loop.is_closed()


def test_an_agent_that_declares_it_reads_the_state_is_not_sent_the_markdown():
    from igg.agents import AgentCapabilities, capabilities

    seen = []

    class StateReader(AgentCapabilities):
        @property
        def reads_markdown(self):
            return False

        def __call__(self, obs):
            seen.append((obs.markdown, obs.state.node_count))
            return GOOD[obs.iteration - 1]

    def plain(obs):
        seen.append((obs.markdown[:2], obs.state.node_count))
        return GOOD[obs.iteration - 1]

    assert run(make_request(), StateReader()).stop_reason == "finished"
    assert seen[0] == ("", 0)
    seen.clear()
    assert run(make_request(), plain).stop_reason == "finished"
    assert seen[0] == ("# ", 0)  # a plain function is an agent with the defaults: it reads the markdown
    assert capabilities(plain).reads_markdown and capabilities(plain).validation_rules() == {}
