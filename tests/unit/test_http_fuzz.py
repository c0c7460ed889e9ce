"""The HTTP API fuzzed from its own OpenAPI description (schemathesis): every route, with generated valid and
invalid bodies, query strings and path parameters, through the same guard ``igg serve`` runs (JSON required,
origin and host checks, body limit), over a real session store. No request may make the server fail (5xx),
and the store stays whole (``PRAGMA integrity_check``)."""

from __future__ import annotations

import os
import sqlite3
import tempfile
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error

from igg.interfaces.http.app import build_app
from igg.interfaces.http.security import DEFAULT_MAX_BODY, HostPolicy, bearer_guard
from igg.store import SessionStore, StoreSessions
from igg.workspace import Workspace
from tests.unit.test_workspace import request_dict

STORE = Path(tempfile.gettempdir()) / "igg-fuzz" / f"sessions-{os.getpid()}.sqlite"


def _app():  # one store per test process: its sessions accumulate while hypothesis generates
    STORE.parent.mkdir(parents=True, exist_ok=True)
    STORE.unlink(missing_ok=True)
    workspace = Workspace(StoreSessions(SessionStore(STORE)), max_actions=200)
    workspace.start(request_dict(session_id="uuid-1234"))  # the id the examples use finds a session
    # the test client's host name is 'testserver': allowed as --allowed-host would
    return bearer_guard(
        build_app(workspace), None, DEFAULT_MAX_BODY, hosts=HostPolicy.build(["testserver"], token=None)
    )


schema = schemathesis.openapi.from_asgi("/openapi.json", _app())


@schema.parametrize()
@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_generated_request_makes_the_server_fail(case):
    case.call_and_validate(checks=[not_a_server_error])


@pytest.fixture(scope="module", autouse=True)
def _store_stays_whole():
    yield
    with sqlite3.connect(STORE) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
