"""Shared fixtures: paths and the seed request/response of the specification."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

# bolt_server: a real ArcadeDB over Bolt (or the Neo4j at NEO4J_URI); falkordb_server: FalkorDB's own tests;
# dask_cluster: a real Dask scheduler and two workers; llama_server: llama.cpp's own server with SmolLM2-135M
# postgres_server / postgres_url / store_location: a PostgreSQL server per test process, a schema per test
pytest_plugins = [
    "tests.support.arcadedb",
    "tests.support.falkordb",
    "tests.support.dask_cluster",
    "tests.support.llamacpp",
    "tests.support.postgres",
]

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


@pytest.fixture(autouse=True)
def _reset_logging():
    """Entry points (``main``) configure structlog globally; every test starts from structlog's defaults."""
    yield
    import structlog

    structlog.reset_defaults()


@pytest.fixture(autouse=True)
def _igg_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Runs kept in the default store (no --out/--store/--export) go to a fresh directory per test, never to
    the user's data directory; ``IGG_STORE`` from the caller's shell does not leak into tests."""
    home = tmp_path_factory.mktemp("igg-home")
    monkeypatch.setenv("IGG_HOME", str(home))
    monkeypatch.delenv("IGG_STORE", raising=False)
    return home


@pytest.fixture
def seed_request_dict() -> dict[str, Any]:
    """The specification's input payload, verbatim."""
    return json.loads((FIXTURES / "seed_request.json").read_text())


@pytest.fixture
def seed_response_dict() -> dict[str, Any]:
    """The specification's agent response, verbatim."""
    return json.loads((FIXTURES / "seed_response.json").read_text())


def make_request(**config_overrides: Any) -> Any:
    """A checked request over the seed schema, with config keys overridden (e.g. constraints={...})."""
    from igg.request.load import load_request

    payload = json.loads((FIXTURES / "seed_request.json").read_text())
    for key, value in config_overrides.items():
        if key in ("seed_data", "context_data", "goal_prompt", "session_id"):
            payload[key] = value
        elif isinstance(value, dict) and isinstance(payload["config"].get(key), dict):
            payload["config"][key] = {**payload["config"][key], **value}
        else:
            payload["config"][key] = value
    return load_request(payload)


class Workspace:
    """A request, its graph state and an actor: apply JSON actions and read verdicts."""

    def __init__(self, **config_overrides: Any) -> None:
        from igg.act import Actor
        from igg.request.load import build_state

        self.request = make_request(**config_overrides)
        self.state, problems = build_state(self.request)
        assert not problems
        config = self.request.config
        self.actor = Actor(self.state.schema, config.constraints, config.apply_mode)

    def apply(self, *actions: dict[str, Any]) -> list[Any]:
        from igg.models.actions import read_response

        parsed = read_response({"reasoning": "", "actions": list(actions)})
        return self.actor.apply(self.state, parsed.items)

    def one(self, action: dict[str, Any]) -> Any:
        (verdict,) = self.apply(action)
        return verdict


def node(label: str, **props: Any) -> dict[str, Any]:
    return {"type": "ADD_NODE", "label": label, "properties": props}


def edge(label: str, src: dict[str, Any], dst: dict[str, Any], **props: Any) -> dict[str, Any]:
    return {"type": "ADD_EDGE", "label": label, "from": src, "to": dst, "properties": props}


INTEGRATION_FIXTURES = frozenset(
    {
        "bolt_server",
        "falkordb_server",
        "dask_cluster",
        "llama_server",
        "browser",
        "page",
        "sandboxes",
        "docs_bolt",
        "postgres_server",
        "postgres_url",
    }
)
"""Fixtures that start a server, a browser or a copy of the repository: only tests under tests/integration/
use them."""
INTEGRATION = Path(__file__).resolve().parent / "integration"


SHARED_SERVERS = {
    "bolt_server": "arcadedb",
    "llama_server": "llamacpp",
    "dask_cluster": "dask",
    "falkordb_server": "falkordb",
}
"""Session fixtures whose tests run on one xdist worker together (``xdist_group``), so that each server
starts once per run, not once per worker: a JVM, a model or a cluster costs seconds of both cores. Any other
integration test runs on one worker with the rest of its module, so that a module's browser, compiled oracle
or generated tree (module fixtures) is made once, not once per worker."""


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The folder says what a test is: ``tests/integration/`` (it runs IGG, a server, a browser, a compiler or
    an oracle as processes of its own) is marked ``integration`` and left out by ``scripts/test --quick``;
    ``tests/unit/`` is not. A unit test asking for a fixture that starts a server is refused: it belongs in
    ``tests/integration/``. Integration tests are grouped on the workers (``SHARED_SERVERS``)."""
    for item in items:
        if item.path.is_relative_to(INTEGRATION):
            item.add_marker(pytest.mark.integration)
            if item.get_closest_marker("xdist_group") is None:
                used = [SHARED_SERVERS[f] for f in getattr(item, "fixturenames", ()) if f in SHARED_SERVERS]
                item.add_marker(pytest.mark.xdist_group(used[0] if used else item.nodeid.partition("::")[0]))
            continue
        started = INTEGRATION_FIXTURES & set(getattr(item, "fixturenames", ()))
        if started:
            raise pytest.UsageError(
                f"{item.nodeid} uses {', '.join(sorted(started))}, which start(s) a process "
                "of its own: move its module to tests/integration/"
            )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    """Close the PostgreSQL stores a test opened and left open (``SessionStore(url)`` inline, servers'
    workspaces): a pool the collector frees later is closed from one of its own threads, which psycopg_pool
    reports as an unraisable ``cannot join current thread`` blamed on whichever test runs then. Those of
    fixtures stay open for the tests that share them."""
    from igg.store import postgres

    opened: list[Any] = []
    init = postgres.PostgresDatabase.__init__

    def noted(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        opened.append(self)

    postgres.PostgresDatabase.__init__ = noted  # type: ignore[method-assign]
    try:
        yield
    finally:
        postgres.PostgresDatabase.__init__ = init  # type: ignore[method-assign]
        for db in opened:
            if not db.pool.closed:
                db.close()
