"""PostgreSQL for the store tests: one throwaway server per test process, one fresh schema per test.

``postgres_server`` (session scope, so once per pytest process; under xdist each worker starts its own) runs
Debian's PostgreSQL: ``initdb`` into a temporary folder (as the ``postgres`` user when this runs as root,
which initdb refuses), then ``pg_ctl start`` listening on 127.0.0.1 at a free port with its socket in that
folder (durability off: ``fsync``, ``synchronous_commit``; nothing here outlives the run), and ``pg_ctl stop
-m fast`` at the end. ``postgres_url`` gives each test its own schema of that server (``CREATE SCHEMA`` is
instant where ``CREATE DATABASE`` copies a template), named by the URL's ``options=-csearch_path=...``, so
tests never see each other's tables. ``store_location`` is a store of each kind, for tests that run against
both.

Where PostgreSQL is not installed or does not start, the tests that need it skip naming why; when
``IGG_REQUIRE_COMPONENTS`` is set (``scripts/test`` where it could install PostgreSQL) they fail instead.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.bolt import free_port


@dataclass
class PostgresServer:
    """A running PostgreSQL server of this test process."""

    folder: Path
    port: int
    bin: Path
    options: str = ""
    """The server's options (``pg_ctl -o``)."""

    def url(self, database: str = "postgres", schema: str | None = None) -> str:
        """A URL of ``database`` (as the ``postgres`` superuser), tables in ``schema`` when given."""
        options = f"?options=-csearch_path%3D{schema}" if schema else ""
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}{options}"

    def sql(self, statement: str, database: str = "postgres") -> None:
        """Run one statement outside any store (autocommit)."""
        import psycopg

        with psycopg.connect(self.url(database), autocommit=True) as conn:
            conn.execute(statement)  # type: ignore[arg-type]

    def pg_ctl(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """Run ``pg_ctl -D FOLDER ARGS`` as the server's user."""
        return _run([str(self.bin / "pg_ctl"), "-D", str(self.folder / "data"), *args], timeout=timeout)

    def start(self) -> subprocess.CompletedProcess[str]:
        """Start the server (its output to ``server.log``: a server holding pg_ctl's pipe would hang the
        caller)."""
        return self.pg_ctl(
            "-o", self.options, "-l", str(self.folder / "server.log"), "-w", "-t", "60", "start", timeout=90
        )

    def restart(self) -> None:
        """Stop the server (fast: clients are disconnected) and start it again on the same port."""
        stopped = self.pg_ctl("stop", "-m", "fast", "-w")
        assert stopped.returncode == 0, stopped.stderr
        started = self.start()
        assert started.returncode == 0, started.stderr


def postgres_bin() -> Path | None:
    """The folder of ``initdb`` and ``pg_ctl``: on PATH, else Debian's newest /usr/lib/postgresql/N/bin."""
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    return Path(versions[-1]).parent if versions else None


def _as_server_user(cmd: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *cmd] if os.geteuid() == 0 else cmd


def _run(cmd: list[str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(_as_server_user(cmd), capture_output=True, text=True, timeout=timeout, check=False)


def start_postgres(*, durable: bool = False) -> PostgresServer:
    """initdb + pg_ctl start in a fresh folder; ``RuntimeError`` saying why when PostgreSQL cannot start.
    Tests run it without syncing to disk; ``durable`` (benchmarks) keeps PostgreSQL's defaults: every commit
    flushed (fsync, synchronous_commit, full page writes)."""
    bin_dir = postgres_bin()
    if bin_dir is None:
        raise RuntimeError(
            "PostgreSQL is not installed (no initdb on PATH or in /usr/lib/postgresql/*/bin; "
            "apt-get install postgresql)"
        )
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        raise RuntimeError("running as root without runuser: initdb refuses root")
    folder = Path(tempfile.mkdtemp(prefix="igg-pg-"))
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
    made = _run(
        [
            str(bin_dir / "initdb"),
            "-D",
            str(folder / "data"),
            "-A",
            "trust",
            "-U",
            "postgres",
            "-E",
            "UTF8",
            "--no-sync",
            "--no-instructions",
        ]
    )
    if made.returncode != 0:
        raise RuntimeError(f"initdb failed: {(made.stderr or made.stdout).strip()[-500:]}")
    port = free_port(set())
    options = f"-p {port} -k {folder} -c listen_addresses=127.0.0.1 -c max_connections=200"
    if not durable:
        options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    server = PostgresServer(folder=folder, port=port, bin=bin_dir, options=options)
    started = server.start()
    if started.returncode != 0:
        log = (
            (folder / "server.log").read_text(errors="replace")[-800:]
            if (folder / "server.log").exists()
            else ""
        )
        raise RuntimeError(f"pg_ctl start failed: {(started.stderr or started.stdout).strip()[-300:]} {log}")
    return server


def stop_postgres(server: PostgresServer) -> None:
    """Stop the server and remove its folder."""
    server.pg_ctl("stop", "-m", "fast")
    shutil.rmtree(server.folder, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """This test process's PostgreSQL server (started on first use, stopped at the end of the session)."""
    try:
        server = start_postgres()
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
        if os.environ.get("IGG_REQUIRE_COMPONENTS"):
            pytest.fail(f"PostgreSQL is required here (IGG_REQUIRE_COMPONENTS) but cannot start: {exc}")
        pytest.skip(f"no PostgreSQL server for the store tests: {exc}")
    try:
        yield server
    finally:
        stop_postgres(server)


@pytest.fixture
def postgres_url(postgres_server: PostgresServer) -> str:
    """The URL of a fresh, empty schema of the test process's PostgreSQL server."""
    schema = f"t_{uuid.uuid4().hex[:12]}"
    postgres_server.sql(f"CREATE SCHEMA {schema}")
    return postgres_server.url(schema=schema)


STORE_KINDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.integration)]
"""The two kinds of store (``scripts/test --quick`` leaves out the PostgreSQL one: it starts a server)."""


@pytest.fixture(params=STORE_KINDS)
def store_location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new store of each kind: an SQLite file, and a fresh PostgreSQL schema (as its URL)."""
    if request.param == "sqlite":
        return str(tmp_path / "s.sqlite")
    url: str = request.getfixturevalue("postgres_url")
    return url
