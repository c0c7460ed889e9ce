"""The scripted agent (JSON Lines transcripts) and the agent registry (--agent specs)."""

from __future__ import annotations

import json

import pytest

from igg.agents.base import AgentTurn, Observation
from igg.agents.registry import looks_like_source, make_agent
from igg.agents.scripted import ScriptedAgent
from igg.errors import AgentFailed, AgentUnavailable, RequestInvalid
from igg.record.records import IterationRecord, transcript_line
from tests.conftest import make_request

RESPONSE = {
    "reasoning": "r",
    "actions": [{"type": "ADD_NODE", "label": "Class", "properties": {"name": "A", "package": "p"}}],
}


def obs(n: int) -> Observation:
    return Observation(session_id="s", iteration=n, markdown="", tokens=0)


def write(tmp_path, *lines: str):
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_turn_n_answers_iteration_n(tmp_path):
    path = write(
        tmp_path,
        json.dumps(RESPONSE),
        "",
        json.dumps({"raw": "hello"}),
        json.dumps({"raw": "{", "truncated": True, "usage": {"prompt_tokens": 7, "completion_tokens": 3}}),
    )
    agent = ScriptedAgent.from_path(path)
    assert len(agent) == 3  # the blank line is not a turn
    assert agent(obs(1)) == AgentTurn(response=RESPONSE)
    assert agent(obs(2)).raw == "hello"
    third = agent(obs(3))
    assert third.raw == "{" and third.truncated and third.usage.total_tokens == 10
    assert agent(obs(1)).response == RESPONSE  # a resumed run may ask again


def test_an_exhausted_transcript_raises_agent_failed(tmp_path):
    agent = ScriptedAgent.from_path(write(tmp_path, json.dumps(RESPONSE)))
    with pytest.raises(
        AgentFailed, match=r"has 1 turn; iteration 2 has no turn to replay \(transcript exhausted\)"
    ):
        agent(obs(2))


def test_a_bad_transcript_names_every_bad_line(tmp_path):
    path = write(
        tmp_path,
        json.dumps(RESPONSE),
        "{not json",
        "[1, 2]",
        json.dumps({"raw": 3}),
        json.dumps({"raw": "x", "usage": {"prompt_tokens": -1}}),
        json.dumps({"raw": "x", "extra": 1}),
    )
    with pytest.raises(RequestInvalid) as info:
        ScriptedAgent.from_path(path)
    text = str(info.value)
    assert f"transcript {path} is invalid (5 problems)" in text
    assert "line 2: not valid JSON" in text
    assert "line 3: a turn must be a JSON object" in text
    assert "line 4: 'raw' must be a string" in text
    assert "line 5: usage.prompt_tokens must be a whole number >= 0" in text
    assert "line 6: a raw turn allows only chunk, document, raw, truncated, usage; unexpected: extra" in text


def test_a_transcript_answers_by_document_whatever_the_order(tmp_path):
    first, second = {"reasoning": "a", "actions": []}, {"reasoning": "b2", "actions": []}
    agent = ScriptedAgent.from_path(
        write(
            tmp_path,
            json.dumps({"document": "a.md", **first}),
            json.dumps({"document": "b.md", "chunk": 2, **second}),
        )
    )
    b2 = Observation(session_id="s", iteration=1, markdown="", tokens=0, chunk_label="b.md", chunk_index=1)
    a1 = Observation(session_id="s", iteration=2, markdown="", tokens=0, chunk_label="a.md", chunk_index=0)
    assert agent(b2).response == second and agent(a1).response == first
    none = Observation(session_id="s", iteration=3, markdown="", tokens=0, chunk_label="c.md", chunk_index=0)
    assert agent(none).response == {"actions": []}  # a chunk no turn names: an empty answer
    with pytest.raises(RequestInvalid, match="'chunk' must be a whole number >= 1, beside 'document'"):
        ScriptedAgent.from_path(write(tmp_path, json.dumps({"chunk": 1, **first})))


def test_missing_empty_and_non_utf8_transcripts_are_clear_errors(tmp_path):
    with pytest.raises(RequestInvalid, match="cannot read"):
        ScriptedAgent.from_path(tmp_path / "missing.jsonl")
    with pytest.raises(RequestInvalid, match="holds no turns"):
        ScriptedAgent.from_path(write(tmp_path, "", "  "))
    bad = tmp_path / "latin1.jsonl"
    bad.write_bytes(b'{"raw": "\xe9"}\n')
    with pytest.raises(RequestInvalid, match="is not UTF-8 text"):
        ScriptedAgent.from_path(bad)


def test_malformed_response_objects_are_kept_for_the_loop_to_reject(tmp_path):
    """A transcript may hold bad responses on purpose; only the line format is checked on load."""
    agent = ScriptedAgent.from_path(write(tmp_path, json.dumps({"actions": "nope", "bogus": 1})))
    assert agent(obs(1)).response == {"actions": "nope", "bogus": 1}


@pytest.mark.parametrize(
    "kind, raw, truncated, usage, expected",
    [
        ("object", json.dumps(RESPONSE), False, None, RESPONSE),
        ("text", "free text", False, None, {"raw": "free text"}),
        (
            "text",
            "{",
            True,
            {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6, "estimated": False, "cost": None},
            {
                "raw": "{",
                "truncated": True,
                "usage": {"prompt_tokens": 5, "completion_tokens": 1, "estimated": False},
            },
        ),
        (
            "object",
            json.dumps({"raw": "looks like a raw turn"}),
            False,
            None,
            {"raw": json.dumps({"raw": "looks like a raw turn"})},
        ),
    ],
)
def test_transcript_line_replays_a_record(kind, raw, truncated, usage, expected):
    record = IterationRecord(
        iteration=1,
        observation_chars=0,
        observation_tokens=0,
        raw_output=raw,
        output_kind=kind,
        truncated=truncated,
        usage=usage,
    )
    assert transcript_line(record) == expected


# ---- registry ---------------------------------------------------------------------------------------
def test_script_spec_builds_a_scripted_agent(tmp_path):
    path = write(tmp_path, json.dumps(RESPONSE))
    assert isinstance(make_agent(f"script:{path}", make_request()), ScriptedAgent)


@pytest.mark.parametrize(
    "spec, message",
    [
        ("gpt", "'gpt': unknown agent; use one of auto, llm, local, code, hybrid, script:PATH"),
        ("script:", "script: needs a transcript path"),
    ],
)
def test_bad_agent_specs_are_invalid_input(spec, message):
    with pytest.raises(RequestInvalid) as info:
        make_agent(spec, make_request())
    assert message in str(info.value)


def test_auto_without_endpoint_or_source_code_says_what_to_do():
    """The same line as --agent llm without an endpoint (and so the same exit code, 2), then auto's other
    ways."""
    from igg.agents.llm_settings import EndpointNotConfigured
    from igg.interfaces.codes import EXIT_INVALID, exit_code

    with pytest.raises(EndpointNotConfigured) as llm:
        make_agent("llm", make_request(context_data="Alice met Bob in Paris."), env={})
    with pytest.raises(EndpointNotConfigured) as auto:
        make_agent("auto", make_request(context_data="Alice met Bob in Paris."), env={})
    assert str(auto.value).startswith(str(llm.value))
    assert "--agent local" in str(auto.value) and "--agent script:PATH" in str(auto.value)
    assert exit_code(auto.value) == exit_code(llm.value) == EXIT_INVALID


def test_looks_like_source_recognises_code_and_file_markers():
    java = (
        "package com.app;\nimport java.util.List;\npublic class A {\n  public void f() {\n    return;\n "
        " }\n}\n"
    )
    assert looks_like_source(java)
    assert looks_like_source("// File: src/A.java\nclass A {}\n")
    assert looks_like_source("import os\n\ndef main():\n    pass\n\nclass B:\n    pass\n")
    assert not looks_like_source(
        "The authentication module handles logins. It has a controller and a service."
    )
    assert not looks_like_source("")


@pytest.mark.parametrize(
    "spec, module", [("llm", "igg.agents.llm"), ("code", "igg.agents.code"), ("hybrid", "igg.agents.code")]
)
def test_extension_agents_are_built_by_their_module_or_clearly_unavailable(spec, module):
    import importlib.util

    request = make_request(context_data="class A {}")
    env = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    if importlib.util.find_spec(module) is None:
        with pytest.raises(AgentUnavailable, match=f"the {spec} agent is not available in this installation"):
            make_agent(spec, request, env=env)
    else:
        assert callable(make_agent(spec, request, env=env))


def test_auto_prefers_the_llm_when_an_endpoint_is_configured():
    import importlib.util

    request = make_request(context_data="// File: A.java\nclass A {}\n")
    env = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    if importlib.util.find_spec("igg.agents.llm") is None:
        with pytest.raises(AgentUnavailable, match="the llm agent"):
            make_agent("auto", request, env=env)
    else:
        assert callable(make_agent("auto", request, env=env))


def test_a_path_given_as_turns_points_to_from_path():
    """ScriptedAgent("file.jsonl") would read the path's characters as turns: it says to use from_path."""
    with pytest.raises(TypeError, match=r"ScriptedAgent.from_path\(path\)"):
        ScriptedAgent("fixtures/auth/transcript.jsonl")
