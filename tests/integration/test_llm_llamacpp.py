"""The LLM path against a real model server: llama.cpp's own OpenAI-compatible server with SmolLM2-135M.

The model is far too small to extract a good graph; these tests pin the wiring: the request IGG sends
(a bounded json_schema response format), the usage the server reports, what each output mode gives back
from a real server, and whole runs through the command line. Answers are kept short (``max_output_tokens``
16-64) because a CPU model is slow.
"""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jsonschema
import pytest
from conftest import make_request
from structlog.testing import capture_logs

from igg.agents.base import Observation
from igg.agents.llm import AsyncLLMAgent, LLMSettings
from igg.agents.local import LocalServer
from igg.interfaces.cli import main
from igg.models.actions import MAX_EVIDENCE_ITEMS, MAX_QUOTE_CHARS

CONTEXT = "class AuthController { AuthService service; void login() { service.check(); } }"
LIMITS = {"max_actions_per_response": 2, "max_property_length": 24, "max_properties": 3}


def write_request(tmp_path: Path, **llm: Any) -> Path:
    payload = json.loads(Path("fixtures/seed_request.json").read_text())
    payload["context_data"] = CONTEXT
    payload["config"]["max_iterations"] = 1
    payload["config"]["constraints"].update(LIMITS)
    payload["config"]["llm"] = {"max_output_tokens": 64, "timeout_seconds": 3600, "max_retries": 0, **llm}
    payload["config"]["grounding"] = "required"  # every fact quotes the context (issue 30)
    path = tmp_path / "request.json"
    path.write_text(json.dumps(payload))
    return path


def records(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]


def test_igg_run_llm_against_llamacpp(
    tmp_path: Path,
    llama_server: LocalServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`igg run --agent llm`: json_schema mode with a schema bounded by the request's limits and types,
    usage as the server reported it, the answer valid against that schema (or flagged as cut off)."""
    monkeypatch.setenv("OPENAI_BASE_URL", llama_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", llama_server.api_key)  # the server refuses calls without it
    out = tmp_path / "out"
    assert main(["run", str(write_request(tmp_path)), "--agent", "llm", "--out", str(out), "--json"]) == 0
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    assert summary["stop_reason"] in ("max_iterations", "finished") and summary["iterations"] == 1
    (record,) = records(out)
    exchange = record["exchange"]
    assert exchange["mode"] == "json_schema" and exchange["attempts"] == []
    fmt = exchange["request"]["response_format"]
    assert fmt["type"] == "json_schema"
    schema = fmt["json_schema"]["schema"]
    actions = schema["properties"]["actions"]
    assert actions["maxItems"] == LIMITS["max_actions_per_response"]
    add_node, add_edge = actions["items"]["anyOf"][:2]
    assert add_node["properties"]["label"]["enum"] == ["Class", "Interface", "Method", "DatabaseTable"]
    assert add_edge["properties"]["label"]["enum"] == ["CALLS", "IMPLEMENTS", "READS_FROM", "WRITES_TO"]
    props = add_node["properties"]["properties"]
    assert props["maxProperties"] == LIMITS["max_properties"]
    assert props["additionalProperties"]["anyOf"][0] == {
        "type": "string",
        "maxLength": LIMITS["max_property_length"],
    }
    assert schema["properties"]["reasoning"]["maxLength"] > 0
    # grounding "required": ADD_NODE and ADD_EDGE must carry evidence, bounded like everything else
    for add in (add_node, add_edge):
        assert "evidence" in add["required"]
        evidence = add["properties"]["evidence"]
        assert evidence["maxItems"] == MAX_EVIDENCE_ITEMS and evidence["minItems"] == 1
        assert evidence["items"]["anyOf"][0] == {
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_QUOTE_CHARS,
        }
    assert unbounded(schema) == []
    # usage: the server's own figures (llama.cpp also reports its timings), not an estimate
    reported = exchange["response"]["usage"]
    assert "timings" in exchange["response"]
    assert record["usage"]["estimated"] is False
    assert record["usage"]["prompt_tokens"] == reported["prompt_tokens"] > 100
    assert record["usage"]["completion_tokens"] == reported["completion_tokens"] <= 64
    assert summary["tokens"]["total"] == reported["prompt_tokens"] + reported["completion_tokens"]
    finish_reason = exchange["response"]["choices"][0]["finish_reason"]
    if finish_reason == "stop":  # constrained decoding: a complete answer is valid against the schema
        jsonschema.validate(json.loads(record["raw_output"]), schema)
        assert record["parse_error"] is None
    else:
        assert finish_reason == "length" and record["truncated"]
    assert llama_server.api_key not in captured.out + captured.err + (out / "records.jsonl").read_text()


def unbounded(schema: Any, path: str = "") -> list[str]:
    """Every array without ``maxItems`` and string without ``maxLength`` (or an enum) in a JSON Schema."""
    found = []
    if isinstance(schema, dict):
        if schema.get("type") == "array" and "maxItems" not in schema:
            found.append(path)
        if schema.get("type") == "string" and "maxLength" not in schema and "enum" not in schema:
            found.append(path)
        for key, value in schema.items():
            found += unbounded(value, f"{path}/{key}")
    elif isinstance(schema, list):
        for i, value in enumerate(schema):
            found += unbounded(value, f"{path}/{i}")
    return found


def observation(request: Any) -> Observation:
    return Observation(
        session_id="s",
        iteration=1,
        markdown=f"# Goal\n{request.goal_prompt}",
        tokens=20,
        context=CONTEXT,
        chunk_index=0,
        chunk_count=1,
        request=request,
    )


class SchemaTheServerCannotCompile(AsyncLLMAgent):
    """Sends a response schema with a remote ``$ref``: llama.cpp refuses it (HTTP 400), as a server refuses a
    schema feature it lacks."""

    def params(self, call: Any) -> dict[str, Any]:
        params = super().params(call)
        if self.mode == "json_schema":
            schema = params["response_format"]["json_schema"]["schema"]
            schema["properties"]["reasoning"] = {"$ref": "https://example.com/reasoning.json"}
        return params


def test_the_output_modes_against_what_llamacpp_supports(llama_server: LocalServer) -> None:
    """A schema the real server refuses steps down to json_object, which it accepts; text mode (no
    response_format) works too. Each answer comes back as a turn (parsed or flagged), nothing crashes."""
    request = make_request(
        context_data=CONTEXT,
        constraints=LIMITS,
        llm={"max_output_tokens": 16, "timeout_seconds": 3600, "max_retries": 0},
    )
    settings = LLMSettings(
        base_url=llama_server.base_url,
        api_key=llama_server.api_key,
        model="smollm2",
        config=request.config.llm,
    )

    async def go() -> list[Any]:
        agent = SchemaTheServerCannotCompile(settings, request)
        try:
            first = await agent(observation(request))
            agent.mode = "text"  # what a server refusing both structured modes leaves
            second = await agent(observation(request))
            return [agent, first, second]
        finally:
            await agent.aclose()

    with capture_logs() as logs:
        agent, first, second = asyncio.run(go())
    refused = first.exchange["attempts"][0]
    assert refused["status"] == 400 and refused["mode"] == "json_schema" and refused.get("adapted")
    assert "unsupported $ref" in refused["error"]
    assert first.exchange["mode"] == "json_object"
    assert first.exchange["request"]["response_format"] == {"type": "json_object"}
    assert first.usage is not None and not first.usage.estimated and first.raw is not None
    assert [e["mode"] for e in logs if e["event"] == "llm_output_mode"] == ["json_object"]
    assert "response_format" not in second.exchange["request"] and second.exchange["mode"] == "text"
    assert second.raw is not None and second.usage is not None and second.usage.completion_tokens <= 16


def test_map_code_hybrid_against_llamacpp(
    tmp_path: Path,
    llama_server: LocalServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`igg map-code --agent hybrid`: the static pass maps the file, then the real model gets its turn (the
    grounding rule guards what it proposes); the run ends gracefully with the static graph intact."""
    src = tmp_path / "app"
    src.mkdir()
    (src / "auth.py").write_text("class AuthService:\n    def check(self):\n        return True\n")
    monkeypatch.setenv("OPENAI_BASE_URL", llama_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", llama_server.api_key)
    monkeypatch.setenv("IGG_MAX_OUTPUT_TOKENS", "32")
    monkeypatch.setenv("IGG_LLM_TIMEOUT", "3600")  # CPU time is shared with the rest of the suite
    out = tmp_path / "out"
    assert (
        main(
            ["map-code", str(src), "--agent", "hybrid", "--max-iterations", "3", "--out", str(out), "--json"]
        )
        == 0
    )
    summary = json.loads(capsys.readouterr().out)
    assert summary["stop_reason"] in ("max_iterations", "finished", "stuck"), summary.get("error")
    turns = records(out)
    llm_turns = [r for r in turns if r["exchange"]]
    static_turns = [r for r in turns if not r["exchange"]]
    assert static_turns and llm_turns, [r["iteration"] for r in turns]
    assert all(r["iteration"] > s["iteration"] for r in llm_turns for s in static_turns)
    for record in llm_turns:
        assert record["exchange"]["mode"] == "json_schema"
        assert record["exchange"]["request"]["max_tokens"] == 32
        assert not record["usage"]["estimated"]
        assert (
            record["usage"]["completion_tokens"]
            == record["exchange"]["response"]["usage"]["completion_tokens"]
        )
    graph = json.loads((out / "graph.json").read_text())
    names = {n["properties"].get("name") for n in graph["nodes"]}
    assert {"AuthService", "check"} <= names


def test_agent_local_runs_llamacpp_in_process_without_key_or_endpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`igg run --agent local`: no OPENAI_* at all; the packaged SmolLM2 is served on a private port and
    stopped when the run ends."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "IGG_MODEL_FILE"):
        monkeypatch.delenv(name, raising=False)
    out = tmp_path / "out"
    code = main(
        [
            "run",
            str(write_request(tmp_path, max_output_tokens=24)),
            "--agent",
            "local",
            "--out",
            str(out),
            "--json",
        ]
    )
    assert code == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["iterations"] == 1 and summary["tokens"]["total"] > 100
    (record,) = records(out)
    assert record["exchange"]["endpoint"].startswith("http://127.0.0.1:")
    assert record["exchange"]["mode"] == "json_schema" and not record["usage"]["estimated"]
    port = urlsplit(record["exchange"]["endpoint"]).port
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=5):
        pass  # the run stopped its server: nothing listens there any more


@pytest.mark.parametrize("content, words", [(None, "no such file"), (b"not a model", "not a GGUF file")])
def test_agent_local_with_a_bad_model_file_is_one_line_exit_2(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    content: bytes | None,
    words: str,
) -> None:
    model = tmp_path / "model.gguf"
    if content is not None:
        model.write_bytes(content)
    monkeypatch.setenv("IGG_MODEL_FILE", str(model))
    assert main(["run", str(write_request(tmp_path)), "--agent", "local"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and words in err and "IGG_MODEL_FILE" in err


def server_counts(server: LocalServer) -> tuple[float, float]:
    """(prompt tokens processed, completion tokens generated) by llama.cpp so far, from its /metrics, once it
    is idle (no request processing or waiting)."""
    import time

    import httpx

    deadline = time.monotonic() + 120
    while True:
        text = httpx.get(
            server.base_url.removesuffix("/v1") + "/metrics",
            headers={"Authorization": f"Bearer {server.api_key}"},
            timeout=30,
        ).text
        values = {
            line.split()[0]: float(line.split()[1])
            for line in text.splitlines()
            if line.startswith("llamacpp:")
        }
        busy = values.get("llamacpp:requests_processing", 0) + values.get("llamacpp:requests_deferred", 0)
        if not busy or time.monotonic() > deadline:
            return (
                values["llamacpp:prompt_tokens_total"] + values.get("llamacpp:prompt_tokens_cached_total", 0),
                values["llamacpp:tokens_predicted_total"],
            )
        time.sleep(0.2)


def test_the_tokens_of_failed_calls_count_as_the_server_counted_them_or_more(
    tmp_path: Path,
    llama_server: LocalServer,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Issue 47: a call that failed (here: past its whole-call deadline, while the server processed the
    prompt) and its retry spent tokens the server counted, and IGG reported none of them, so a token budget
    could be overrun. Every attempt's usage now counts (estimated, never below what the server reports)."""
    monkeypatch.setenv("OPENAI_BASE_URL", llama_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", llama_server.api_key)
    before = server_counts(llama_server)
    payload = {
        "goal_prompt": "Map the classes.",
        "context_data": CONTEXT,
        "config": {
            "max_iterations": 1,
            "schema": {"node_types": ["Class"], "edge_types": ["CALLS"]},
            "llm": {"max_output_tokens": 16, "timeout_seconds": 0.2, "max_retries": 0},
        },
    }
    request = tmp_path / "small.json"
    request.write_text(
        json.dumps(payload)
    )  # a short prompt: the server processes it whole, client gone or not
    code = main(["run", str(request), "--agent", "llm", "--no-store", "--json"])
    summary = json.loads(capsys.readouterr().out)
    after = server_counts(llama_server)
    prompt, completion = after[0] - before[0], after[1] - before[1]
    tokens = summary["tokens"]
    assert prompt > 0, (summary, prompt)
    if (
        summary["stop_reason"] != "agent_error"
    ):  # a machine fast enough to answer within 0.2 s: counted exactly
        assert code == 0 and (tokens["prompt"], tokens["completion"]) == (prompt, completion)
        return
    assert code == 1 and tokens["estimated"] is True
    assert tokens["prompt"] >= prompt and tokens["completion"] >= completion, (tokens, prompt, completion)
