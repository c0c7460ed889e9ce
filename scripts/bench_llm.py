"""Benchmark: the LLM agent's overhead per call against the bare ``openai`` client, on a local server.

Both make the same chat completion calls to the tests' OpenAI-compatible server on loopback (no network,
no model): the bare client sends the agent's prepared request; the agent builds the prompt, checks the budget,
accounts usage and records the exchange. Prints calls/s of both and their ratio (machines here are
noisy: compare ratios, not absolute times). Target (issue 5): the agent within 1.5x of the bare client.

    python scripts/bench_llm.py [--calls N]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import openai
import structlog

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from support.fake_openai import FakeOpenAI  # noqa: E402

from igg.agents.base import Observation  # noqa: E402
from igg.agents.llm import LLMAgent, LLMSettings  # noqa: E402
from igg.compile import load_request  # noqa: E402

ANSWER = json.dumps({"reasoning": "r", "actions": [
    {"type": "ADD_NODE", "label": "Class", "properties": {"name": f"C{i}", "package": "p"}} for i in range(20)]})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(40))  # errors only, as in a run
    request = load_request(ROOT / "fixtures" / "seed_request.json")
    obs = Observation(session_id="bench", iteration=1, markdown="# Goal\n" + "x " * 3000, tokens=2000,
                      context="class A {}\n" * 200, chunk_index=0, chunk_count=1)
    with FakeOpenAI([ANSWER] * (2 * args.calls + 20)) as server:
        settings = LLMSettings.from_env(request.config.llm, {"OPENAI_BASE_URL": server.base_url})
        agent = LLMAgent(settings, request)
        client = openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0, timeout=10)
        params = agent.params(agent.begin(obs))  # the very request the agent sends, response_format included
        for _ in range(10):  # warm both connection pools
            agent(obs)
            client.chat.completions.create(**params)
        t0 = time.perf_counter()
        for _ in range(args.calls):
            client.chat.completions.create(**params)
        bare = time.perf_counter() - t0
        t0 = time.perf_counter()
        for _ in range(args.calls):
            agent(obs)
        ours = time.perf_counter() - t0
    print(f"bare openai client: {args.calls / bare:8.1f} calls/s")
    print(f"IGG LLM agent:      {args.calls / ours:8.1f} calls/s")
    print(f"ratio agent/bare:   {ours / bare:8.2f}x (target <= 1.5x)")


if __name__ == "__main__":
    main()
