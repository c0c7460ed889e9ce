"""The shared response parser: plain, fenced and prose-wrapped JSON, trivial repairs, cut-off output."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from igg.agents.parsing import parse_turn
from igg.errors import ResponseInvalid
from igg.models.actions import AddEdge, AddNode, UnreadableAction

NODE_A = {
    "type": "ADD_NODE",
    "label": "Class",
    "properties": {"name": "AuthService", "package": "com.app.auth"},
}
NODE_B = {
    "type": "ADD_NODE",
    "label": "Class",
    "properties": {"name": "AuthController", "package": "com.app.web"},
}
EDGE = {
    "type": "ADD_EDGE",
    "label": "CALLS",
    "from": {"name": "AuthController"},
    "to": {"name": "AuthService"},
}
RESPONSE = {"reasoning": "two classes and a call", "actions": [NODE_A, NODE_B, EDGE], "finished": False}
TEXT = json.dumps(RESPONSE)


def dumped(parsed) -> list[dict]:
    return [a.model_dump(mode="json", by_alias=True, exclude_unset=True) for a in parsed.actions]


def invalid(text: str, **kw) -> ResponseInvalid:
    with pytest.raises(ResponseInvalid) as info:
        parse_turn(text, **kw)
    return info.value


def test_plain_json_is_read_action_by_action():
    parsed = parse_turn(TEXT)
    assert parsed.reasoning == "two classes and a call" and not parsed.finished and not parsed.truncated
    assert [type(a) for a in parsed.items] == [AddNode, AddNode, AddEdge]
    assert dumped(parsed) == [NODE_A, NODE_B, EDGE]


@pytest.mark.parametrize(
    "text",
    [
        f"```json\n{TEXT}\n```",
        f"```\n{TEXT}\n```",
        f"Sure, here are the actions:\n\n```JSON\n{json.dumps(RESPONSE, indent=2)}\n```\nLet me know if ...",
        f"I will add two classes. {TEXT}",
        f"{TEXT}\n\nThese actions add the controller and the service.",
        f'An example object looks like {{"a": 1}}; the answer is {TEXT}',
    ],
)
def test_json_in_fences_or_around_prose_is_found(text):
    assert dumped(parse_turn(text)) == [NODE_A, NODE_B, EDGE]


def test_trailing_commas_single_quotes_and_python_literals_are_repaired():
    text = (
        "{'reasoning': 'it\\'s done', 'actions': [{'type': 'ADD_NODE', 'label': 'Class', "
        "'properties': {'name': 'AuthService', 'package': 'com.app.auth',},},], 'finished': True,}"
    )
    parsed = parse_turn(text)
    assert parsed.reasoning == "it's done" and parsed.finished is True
    assert dumped(parsed) == [NODE_A]


def test_raw_newlines_and_unicode_escapes_in_strings_are_read():
    text = '{"reasoning": "line one\nline two \\u00e9 \\ud83d\\ude00", "actions": [],}'
    assert parse_turn(text).reasoning == "line one\nline two \u00e9 \U0001f600"


def test_a_cut_in_the_middle_of_an_action_keeps_only_whole_actions_never_a_guess():
    cut = TEXT[: TEXT.index('"AuthController"') + 5]  # ... "name": "Auth
    parsed = parse_turn(cut)
    assert parsed.truncated
    assert dumped(parsed) == [NODE_A]
    assert "Auth" not in json.dumps([a.model_dump() for a in parsed.items]).replace("AuthService", "")


def test_the_json_repair_trap_is_not_completed():
    """json-repair turns '"name": "par' into "par"; IGG drops the unfinished action instead."""
    text = '{"reasoning": "x", "actions": [{"type": "ADD_NODE", "label": "Class", "properties": {"name": "par'
    parsed = parse_turn(text)
    assert parsed.truncated and parsed.items == []


@pytest.mark.parametrize(
    "cut_after, expected",
    [
        ('"reasoning": "two cla', 0),
        ('"actions": [', 0),
        ('"package": "com.app.auth"}}', 1),  # the action's object closed: it is whole
        ('"package": "com.app.auth"}}, ', 1),
        ('"to": {"name": "AuthService"}}', 3),
        ('"finished": fal', 3),
    ],
)
def test_whole_actions_survive_any_cut(cut_after, expected):
    text = TEXT[: TEXT.index(cut_after) + len(cut_after)]
    parsed = parse_turn(text)
    assert parsed.truncated and len(parsed.items) == expected
    assert not parsed.finished


def test_a_cut_inside_a_fence_keeps_whole_actions():
    text = "```json\n" + TEXT[: TEXT.index('"label": "CALLS"')]
    parsed = parse_turn(text, truncated=True)
    assert parsed.truncated and dumped(parsed) == [NODE_A, NODE_B]


def test_a_number_or_literal_at_the_cut_is_not_trusted():
    base = (
        '{"reasoning": "", "actions": [{"type": "UPDATE_NODE", "node": {"name": "A"}, "properties": {"n": 1'
    )
    assert parse_turn(base).items == []
    assert parse_turn(base + ".5e").items == []
    assert parse_turn('{"reasoning": "", "actions": [], "finished": tr').finished is False


def test_the_truncated_flag_marks_even_a_complete_response():
    parsed = parse_turn(TEXT, truncated=True)
    assert parsed.truncated and len(parsed.items) == 3


def test_a_closed_fence_with_unfinished_json_is_invalid_not_partial():
    err = invalid("```json\n" + TEXT[:-40] + "\n```")
    assert err.code == "INVALID_JSON"
    assert "ends before its closing brackets" in err.message


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("", "the output was empty"),
        ("   \n ", "the output was empty"),
        (
            "I cannot help with that.",
            'no JSON object found in the output (24 characters, starting "I cannot help',
        ),
        (
            '{"reasoning": "x" "actions": []}',
            "line 1 column 19: expected ',' or '}' after the value of \"reasoning\"",
        ),
        ('{"reasoning": "x",\n "actions": [}', "line 2 column 14: expected a value"),
        ('{"reasoning": "x", "actions": [], "n": NaN}', "expected a value"),
        ('{"reasoning": "\\x"}', "unknown escape '\\x'"),
        ('{"actions": ' + "[" * 200, "nesting deeper than 64 levels"),
    ],
)
def test_unreadable_output_is_invalid_json_with_a_precise_message(text, fragment):
    err = invalid(text)
    assert err.code == "INVALID_JSON"
    assert fragment in err.message
    assert '{"reasoning": "...", "actions": [...], "finished": false}' in err.message


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("[1, 2]", "must be a JSON object"),
        ('{"thoughts": "x", "actions": []}', "unknown key 'thoughts'"),
        ('{"reasoning": "x", "actions": {"type": "ADD_NODE"}}', "'actions' must be a list"),
        ('{"reasoning": 5, "actions": []}', "'reasoning' must be a string"),
        ('Here: {"foo": 1}', "unknown key 'foo'"),
        ('{"reasoning": "", "actions": [], "finished": "yes"}', "'finished' must be true or false"),
    ],
)
def test_json_that_is_not_a_response_is_invalid_response(text, fragment):
    err = invalid(text)
    assert err.code == "INVALID_RESPONSE"
    assert fragment in err.message


def test_malformed_actions_become_action_errors_in_their_slots():
    text = json.dumps({"reasoning": "", "actions": [NODE_A, {"type": "MERGE"}, 7, {"type": "ADD_NODE"}]})
    items = parse_turn(text).items
    assert isinstance(items[0], AddNode)
    assert [i.code for i in items[1:]] == ["UNKNOWN_ACTION", "INVALID_ACTION", "INVALID_ACTION"]
    assert all(isinstance(i, UnreadableAction) for i in items[1:])


def test_non_text_is_invalid_json():
    assert invalid(b"{}").code == "INVALID_JSON"  # type: ignore[arg-type]


_names = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=12)
_actions = st.lists(
    st.builds(
        lambda n, p: {
            "type": "ADD_NODE",
            "label": "Class",
            "properties": {"name": n, "package": p, "n": 1.25},
        },
        _names,
        _names,
    ),
    max_size=5,
)


@settings(max_examples=150, deadline=None)
@given(actions=_actions, data=st.data(), fenced=st.booleans(), indent=st.sampled_from([None, 2]))
def test_any_cut_yields_a_prefix_of_the_whole_actions_or_an_error(actions, data, fenced, indent):
    """Property: cutting a valid response anywhere never yields an action that was not sent whole."""
    text = json.dumps(
        {"reasoning": "r", "actions": actions, "finished": True},
        indent=indent,
        ensure_ascii=data.draw(st.booleans()),
    )
    if fenced:
        text = "Here:\n```json\n" + text + "\n```"
    cut = data.draw(st.integers(min_value=0, max_value=len(text)))
    try:
        parsed = parse_turn(text[:cut])
    except ResponseInvalid as exc:
        assert exc.code in ("INVALID_JSON", "INVALID_RESPONSE")
        return
    got = dumped(parsed)
    assert got == actions[: len(got)]
    if parsed.finished:
        assert got == actions


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_arbitrary_text_never_raises_anything_but_response_invalid(text):
    try:
        parse_turn(text)
    except ResponseInvalid:
        pass
