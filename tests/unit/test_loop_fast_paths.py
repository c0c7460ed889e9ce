"""The loop's fast paths for agents that send whole response objects give the records and verdicts of the
standard paths: orjson for agents that declare ``plain_responses`` (and the standard writer for what orjson
refuses), one pydantic call for a turn's actions (and one action at a time when one of them is wrong)."""

from __future__ import annotations

import json
from typing import Any

from igg.agents.base import AgentCapabilities, Observation
from igg.engine.loop import run
from igg.models.verdicts import ErrorCode
from tests.conftest import make_request

GOOD = [
    {"type": "ADD_NODE", "label": "Class", "properties": {"name": "AuthService", "package": "auth"}},
    {"type": "ADD_NODE", "label": "Class", "properties": {"name": "UserRepository", "package": "auth"}},
    {"type": "ADD_EDGE", "label": "CALLS", "from": {"name": "AuthService"}, "to": {"name": "UserRepository"}},
]


class Scripted(AgentCapabilities):
    """Sends ``turns`` one per iteration, then finishes."""

    def __init__(self, turns: list[dict[str, Any]], plain: bool) -> None:
        self.turns, self.plain = list(turns), plain

    @property
    def plain_responses(self) -> bool:
        return self.plain

    def __call__(self, obs: Observation) -> dict[str, Any]:
        return self.turns.pop(0) if self.turns else {"reasoning": "done", "actions": [], "finished": True}


def _records(turns: list[dict[str, Any]], plain: bool) -> list[Any]:
    result = run(make_request(max_iterations=5), Scripted(turns, plain))
    return result.records


def test_a_plain_agents_turn_is_recorded_as_the_standard_path_records_it() -> None:
    turn = {"reasoning": "two classes and a call", "actions": GOOD}
    fast, slow = _records([turn], plain=True)[0], _records([turn], plain=False)[0]
    assert json.loads(fast.raw_output) == json.loads(slow.raw_output) == turn
    assert fast.actions == slow.actions == GOOD
    assert [v.to_dict() for v in fast.verdicts] == [v.to_dict() for v in slow.verdicts]
    assert fast.accepted == 3


def test_what_orjson_refuses_takes_the_standard_path_with_its_verdicts() -> None:
    odd = {"type": "ADD_NODE", "label": "Class", "properties": {"name": "Bad\ud800", "package": "p"}}
    big = {"type": "ADD_NODE", "label": "Class", "properties": {"name": "Big", "package": "p", "size": 2**70}}
    turn = {"reasoning": "a lone surrogate and an integer past 64 bits", "actions": [*GOOD[:2], odd, big]}
    fast, slow = _records([turn], plain=True)[0], _records([turn], plain=False)[0]
    assert fast.raw_output == slow.raw_output and "\\ud800" in fast.raw_output
    assert [v.to_dict() for v in fast.verdicts] == [v.to_dict() for v in slow.verdicts]
    assert fast.verdicts[2].code == ErrorCode.INVALID_PROPERTY and "surrogate" in fast.verdicts[2].message


def test_one_wrong_action_among_many_gets_its_own_verdict_and_the_others_apply() -> None:
    wrong = {
        "type": "ADD_NODE",
        "label": "Class",
        "properties": {"name": "X", "package": "p"},
        "colour": "red",
    }
    unknown = {"type": "ADD_THING", "label": "Class"}
    turn = {"reasoning": "mixed", "actions": [GOOD[0], wrong, GOOD[1], unknown, GOOD[2]]}
    record = _records([turn], plain=True)[0]
    codes = [v.code for v in record.verdicts]
    assert codes == [None, ErrorCode.INVALID_ACTION, None, ErrorCode.UNKNOWN_ACTION, None]
    assert "colour" in record.verdicts[1].message
    assert record.accepted == 3
