"""Unencodable text in a model's answer (lone surrogates such as the JSON escape ``\\ud800``): rejected in
actions with the property and position named, replaced and counted in free text; every record stores,
and a session holding such a turn resumes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import make_request
from support.fake_openai import FakeOpenAI, Reply

from igg.agents.parsing import parse_turn, read_value
from igg.engine.loop import run
from igg.interfaces.cli import main
from igg.io.encodable import find_unencodable, first_unencodable
from igg.models.actions import UnreadableAction
from igg.store import SessionRecorder, SessionStore

GOOD = {"type": "ADD_NODE", "label": "Class", "properties": {"name": "AuthService", "package": "p"}}
# the model's text holds JSON escapes of lone surrogates: in a node name, and in the reasoning
BAD_TEXT = (
    '{"reasoning": "see \\udc80 here and \\ud800", "actions": ['
    '{"type": "ADD_NODE", "label": "Class", "properties": {"name": "Au\\ud800th", "package": "p"}}, '
    + json.dumps(GOOD)
    + '], "finished": false}'
)
DONE = json.dumps({"reasoning": "done", "actions": [], "finished": True})


def test_an_action_with_a_lone_surrogate_is_rejected_naming_property_and_position() -> None:
    parsed = parse_turn(BAD_TEXT)
    bad, good = parsed.items
    assert isinstance(bad, UnreadableAction) and bad.code == "INVALID_PROPERTY"
    assert bad.message.startswith(
        "ADD_NODE: properties.name: lone surrogate \\ud800 at character 2 cannot be stored"
    )
    assert bad.raw["properties"]["name"] == "Au\\ud800th"  # kept, storable, as its escape
    assert json.dumps(bad.raw, ensure_ascii=False).encode("utf-8")
    assert not isinstance(good, UnreadableAction) and good.properties["name"] == "AuthService"
    assert parsed.reasoning == "see \ufffd here and \ufffd" and parsed.repaired == 2


def test_surrogates_in_keys_and_decoded_objects_are_caught_too() -> None:
    """A key holding a surrogate, and a response that arrives already decoded (a Python agent's dict)."""
    action = {"type": "UPDATE_NODE", "node": {"name": "A"}, "properties": {"no\ud801te": "x"}}
    parsed = read_value({"reasoning": "ok", "actions": [action]})
    (item,) = parsed.items
    assert isinstance(item, UnreadableAction) and item.code == "INVALID_PROPERTY"
    assert (
        "the key 'properties.no\\ud801te'" in item.message.encode("unicode_escape").decode()
        or "at character 2" in item.message
    )
    assert find_unencodable(action) is not None and first_unencodable("ok \U0001f600") is None


def test_an_answer_with_raw_surrogates_from_the_server_is_stored_and_the_run_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Surrogates escaped in the HTTP body itself (the message content holds real lone surrogates) and in
    the model's JSON text: the run finishes, the verdict says why, summary/records/store are written."""
    payload = json.loads(Path("fixtures/seed_request.json").read_text())
    payload["config"]["llm"] = {"timeout_seconds": 5, "max_retries": 0}
    request = tmp_path / "request.json"
    request.write_text(json.dumps(payload))
    raw_surrogate = BAD_TEXT.replace("see \\udc80", "see \udc80")  # a real lone surrogate in the content
    with FakeOpenAI([Reply(content=raw_surrogate), DONE]) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        code = main(
            [
                "run",
                str(request),
                "--agent",
                "llm",
                "--out",
                str(tmp_path / "out"),
                "--store",
                str(tmp_path / "s.sqlite"),
                "--json",
            ]
        )
    captured = capsys.readouterr()
    assert code == 0 and "Traceback" not in captured.err
    summary = json.loads(captured.out)
    assert summary["stop_reason"] == "finished" and summary["nodes"] == 1
    assert summary["actions"]["rejected_by_code"] == {"INVALID_PROPERTY": 1}
    first = json.loads((tmp_path / "out" / "records.jsonl").read_text().splitlines()[0])
    assert "\\udc80" in first["raw_output"]  # the raw text as received, escaped to be storable
    assert any("2 unencodable character(s)" in n for n in first["notes"])
    assert "lone surrogate \\ud800 at character 2" in first["verdicts"][0]["message"]


class Interrupted:
    """An agent that answers with surrogates once, then the process 'dies' (KeyboardInterrupt)."""

    def __init__(self) -> None:
        self.turns = 0

    def __call__(self, observation: Any) -> Any:
        self.turns += 1
        if self.turns > 1:
            raise KeyboardInterrupt
        return BAD_TEXT


def test_a_session_holding_such_a_turn_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    store_path = tmp_path / "s.sqlite"
    request = make_request(session_id="surrogates", llm={"timeout_seconds": 5, "max_retries": 0})
    store = SessionStore(store_path)
    with pytest.raises(KeyboardInterrupt):
        run(request, Interrupted(), recorder=SessionRecorder(store, agent="llm"))
    store.close()
    with FakeOpenAI([DONE]) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        code = main(
            ["resume", "surrogates", "--store", str(store_path), "--agent", "llm", "--force", "--json"]
        )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    summary = json.loads(captured.out)
    assert summary["stop_reason"] == "finished" and summary["iterations"] == 2 and summary["nodes"] == 1
