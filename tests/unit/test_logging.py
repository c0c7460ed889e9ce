"""Logging: one structured event per iteration, JSON or console on stderr, secrets redacted."""

from __future__ import annotations

import json

import structlog
from structlog.testing import capture_logs

from igg.agents.scripted import ScriptedAgent
from igg.engine.loop import run
from igg.record.logs import EventLogger, configure_logging, redact_secrets
from tests.conftest import make_request

TURNS = [
    {
        "reasoning": "",
        "actions": [
            {"type": "ADD_NODE", "label": "Class", "properties": {"name": "A", "package": "p"}},
            {"type": "ADD_NODE", "label": "Klass", "properties": {"name": "B"}},
        ],
    },
    {"raw": "not json"},
    {"reasoning": "", "actions": [], "finished": True},
]


def test_one_iteration_finished_event_per_iteration_with_the_counts():
    with capture_logs() as logs:
        run(make_request(), ScriptedAgent(TURNS), on_event=EventLogger())
    iterations = [e for e in logs if e["event"] == "iteration_finished"]
    assert [e["iteration"] for e in iterations] == [1, 2, 3]
    first = iterations[0]
    assert first["session_id"] == "uuid-1234" and first["log_level"] == "info"
    assert (first["proposed"], first["accepted"], first["rejected"]) == (2, 1, 1)
    assert first["rejected_by_code"] == {"UNKNOWN_NODE_TYPE": 1}
    assert first["ms"] >= 0 and "tokens" in first
    assert iterations[1]["invalid_turn"] == "INVALID_JSON"
    assert [e["event"] for e in logs if e["log_level"] == "info"] == [
        "run_started",
        "iteration_finished",
        "iteration_finished",
        "iteration_finished",
        "run_finished",
    ]
    assert logs[-1]["stop_reason"] == "finished"
    rejected = [e for e in logs if e["event"] == "action_rejected"]
    assert rejected and rejected[0]["log_level"] == "debug" and rejected[0]["code"] == "UNKNOWN_NODE_TYPE"


def test_secret_keys_and_key_shaped_values_are_redacted():
    event = redact_secrets(
        None,
        "info",
        {
            "event": "x",
            "api_key": "abc",
            "NEO4J_PASSWORD": "hunter2",
            "authorization": "Bearer abcdefghijkl",
            "note": "used key sk-abcdefghijklmnopqrstuvwxyz for the call",
            "tokens": 120,
            "token_budget": 500,
        },
    )
    assert event["api_key"] == event["NEO4J_PASSWORD"] == event["authorization"] == "[redacted]"
    assert event["note"] == "used key [redacted] for the call"
    assert event["tokens"] == 120 and event["token_budget"] == 500


def test_json_format_writes_one_object_per_line_to_stderr(capsys):
    try:
        configure_logging("json")
        structlog.get_logger("igg").info("iteration_finished", iteration=3, api_key="sk-zzzzzzzzzzzzzzzz")
        configure_logging("console", colors=False)
        structlog.get_logger("igg").info("run_finished", stop_reason="stuck")
        structlog.get_logger("igg").debug("hidden")
    finally:
        structlog.reset_defaults()
    captured = capsys.readouterr()
    assert captured.out == ""
    first, second = captured.err.splitlines()
    data = json.loads(first)
    assert data["event"] == "iteration_finished" and data["iteration"] == 3 and data["level"] == "info"
    assert data["api_key"] == "[redacted]" and "timestamp" in data
    assert "run_finished" in second and "stop_reason=stuck" in second and "hidden" not in captured.err


def test_configure_logging_rejects_unknown_formats():
    import pytest

    with pytest.raises(ValueError, match="unknown log format 'xml'; use one of console, json"):
        configure_logging("xml")


DEFERRED = """
import json, sys
from igg.record.logs import configure_logging, get_logger
configure_logging("json", level="info", when_needed=True)
log = get_logger("igg.code")
log.debug("below_the_level", path="a.py")
assert "structlog" not in sys.modules, "an event below the level loaded structlog"
log.info("map_code_updated", files=3, api_key="sk-abcdefghijklmnopq")
assert "structlog" in sys.modules
"""


def _logged_by(code: str) -> dict:
    """The one line a fresh interpreter running ``code`` logs on standard error, read as JSON (standard output
    stays empty)."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == ""
    (line,) = out.stderr.splitlines()
    return json.loads(line)


def test_an_entry_points_logging_waits_for_its_first_event_at_the_level_asked():
    """``configure_logging(when_needed=True)`` before structlog is imported (a command's start) configures it
    when the first event at the level asked is logged: rendered as asked, on standard error; nothing below the
    level is written, and nothing loads structlog before."""
    data = _logged_by(DEFERRED)
    assert data["event"] == "map_code_updated" and data["files"] == 3 and data["level"] == "info"
    assert data["api_key"] == "[redacted]" and "timestamp" in data


def test_what_logs_through_structlog_itself_gets_the_configuration_asked_for():
    """``configured_structlog`` applies a waiting configuration: an event logged through structlog's own
    logger (an entry point's ``session_kept``) is rendered as asked, never on standard output."""
    code = (
        "from igg.record.logs import configure_logging, configured_structlog\n"
        "configure_logging('json', level='warning', when_needed=True)\n"
        "configured_structlog().get_logger('igg').warning('session_kept', session_id='s1')\n"
        "configured_structlog().get_logger('igg').info('hidden')\n"
    )
    assert _logged_by(code)["event"] == "session_kept"


def test_an_application_that_configures_logging_logs_through_structlog_at_once():
    """Without ``when_needed`` (an application's own start), structlog is configured by the call: the
    application's own ``structlog.get_logger()`` lines are rendered as asked, never on standard output."""
    code = (
        "from igg.record.logs import configure_logging\n"
        "configure_logging('json', level='info')\n"
        "import structlog\n"
        "structlog.get_logger('app').info('app_started', port=8080)\n"
    )
    assert _logged_by(code)["event"] == "app_started"
