"""igg.io.files: every file IGG writes is checked, written beside its target and renamed into place.

Each test plants what an attacker could leave in an output directory (a hard link, a FIFO, a symlink, the
session store itself) or makes the operating system fail the write, and checks that nothing outside the
directory changes and nothing half-written is left.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from igg.errors import WorkspaceError
from igg.interfaces.codes import http_status
from igg.io.files import PathRefused, WriteFailed, check_name, open_for_write, write_file
from igg.store import SessionStore, StoreSessions
from igg.workspace import Workspace
from igg.workspace.ops import ExportInput
from tests.conftest import ROOT
from tests.unit.test_workspace import request_dict


def listing(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


def test_a_file_is_written_whole_and_replaces_the_old_one_with_its_mode(tmp_path):
    target = tmp_path / "graph.json"
    write_file(target, b"old")
    target.chmod(0o600)
    write_file(target, b"new contents")
    assert target.read_bytes() == b"new contents"
    assert target.stat().st_mode & 0o777 == 0o600
    assert listing(tmp_path) == ["graph.json"]


def test_a_hard_link_in_the_output_directory_is_not_written_through(tmp_path):
    outside = tmp_path / "authorized_keys"
    outside.write_text("ssh-ed25519 AAAA owner\n")
    out = tmp_path / "out"
    out.mkdir()
    os.link(outside, out / "graph.json")
    with pytest.raises(PathRefused, match="2 hard links"):
        write_file("graph.json", b"ssh-ed25519 EVIL attacker\n", base=out)
    assert outside.read_text() == "ssh-ed25519 AAAA owner\n"
    with pytest.raises(PathRefused, match="hard links"):  # a trusted path (igg run --export) is refused too
        write_file(out / "graph.json", b"x")
    assert outside.read_text() == "ssh-ed25519 AAAA owner\n"


def test_a_planted_fifo_is_refused_at_once_instead_of_blocking_the_writer(tmp_path):
    os.mkfifo(tmp_path / "graph.json")
    outcome: list[BaseException] = []

    def export() -> None:
        try:
            write_file("graph.json", b"{}", base=tmp_path)
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            outcome.append(exc)

    worker = threading.Thread(target=export, daemon=True)
    worker.start()
    worker.join(10)
    if worker.is_alive():  # unblock the writer so the test run can end, then fail
        os.open(tmp_path / "graph.json", os.O_RDONLY | os.O_NONBLOCK)
        pytest.fail("the export blocked on a FIFO")
    assert len(outcome) == 1 and isinstance(outcome[0], PathRefused)
    assert "FIFO" in str(outcome[0])


def test_symlinks_are_never_followed_at_the_target_or_in_a_directory(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    victim = outside / "victim.txt"
    victim.write_text("keep")
    out = tmp_path / "out"
    out.mkdir()
    os.symlink(victim, out / "graph.json")
    os.symlink(outside, out / "sub")
    with pytest.raises(PathRefused, match="symbolic link"):
        write_file("graph.json", b"x", base=out)
    with pytest.raises(PathRefused, match="symlink"):
        write_file("sub/graph.json", b"x", base=out)
    with pytest.raises(PathRefused, match="symbolic link"):
        write_file(out / "graph.json", b"x")
    assert victim.read_text() == "keep" and listing(outside) == ["victim.txt"]
    write_file("graphs/deep/g.json", b"{}", base=out)
    assert (out / "graphs" / "deep" / "g.json").read_bytes() == b"{}"


@pytest.mark.parametrize(
    "name",
    [
        "a\nb.json",
        "a\x01.json",
        "evil\u202egpj.json",
        "a\u2028b",
        "tab\there",
        "x\ud800.json",
        ".ssh/authorized_keys",
        ".igg/sessions.sqlite",
        "sub/.hidden",
        "../up.json",
        "/etc/passwd",
        "C:\\x.json",
        "~/x",
        "sub/",
        "",
        " a.json",
        "a\x00b",
        "." * 1,
        "a" * 256,
    ],
)
def test_untrusted_names_are_refused_with_the_reason(name):
    with pytest.raises(PathRefused) as refused:
        check_name(name)
    assert repr(name)[:20] in str(refused.value) or "component" in str(refused.value)


@pytest.mark.parametrize(
    "name",
    ["graph.json", "graphs/auth.graphml", "a b/c-d_e.1.json", "Überblick.json", "./x.json", "日本語.mmd"],
)
def test_ordinary_names_are_accepted(name):
    assert check_name(name)


def test_the_session_store_and_its_companions_are_never_overwritten(tmp_path):
    """An output directory that holds the store (``--output-dir .``): the store survives every export."""
    store_path = tmp_path / "sessions.sqlite"
    ws = Workspace(StoreSessions(SessionStore(store_path)), output_dir=tmp_path)
    sid = ws.start(request_dict())["session_id"]
    for name in (
        "sessions.sqlite",
        "sessions.sqlite-wal",
        "sessions.sqlite-shm",
        "sessions.sqlite-journal",
        ".igg/sessions.sqlite",
    ):
        with pytest.raises(WorkspaceError) as refused:
            ws.export(ExportInput(session_id=sid, path=name))
        assert refused.value.code == "PATH_FORBIDDEN" and http_status(refused.value) == 403
    with sqlite3.connect(store_path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert ws.list_sessions()["sessions"][0]["session_id"] == sid
    # an SQLite file no store of this process opened is recognised by its header
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.close()
    with pytest.raises(PathRefused, match="session store"):
        write_file(other, b"{}")


def test_a_failed_write_leaves_the_old_file_and_no_debris(tmp_path):
    target = tmp_path / "graph.json"
    target.write_text("previous")
    with pytest.raises(RuntimeError), open_for_write(target) as fh:
        fh.write(b"half")
        raise RuntimeError("the exporter failed midway")
    assert target.read_text() == "previous" and listing(tmp_path) == ["graph.json"]


FULL_DISK = """
import resource, signal, sys
from pathlib import Path
from igg.io.files import WriteFailed, write_file
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails with EFBIG instead of killing the process
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
try:
    write_file(Path(sys.argv[1]), b"x" * 100_000)
except WriteFailed as exc:
    print(exc.out_of_space, exc)
"""


def test_running_out_of_space_midway_leaves_the_old_file_and_no_debris(tmp_path):
    """A real write failure from the kernel (a file-size limit: EFBIG, handled like ENOSPC)."""
    target = tmp_path / "graph.json"
    target.write_text("previous")
    done = subprocess.run(
        [sys.executable, "-c", FULL_DISK, str(target)], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("True cannot write"), done.stdout
    assert target.read_text() == "previous" and listing(tmp_path) == ["graph.json"]


def test_run_directory_files_go_through_the_same_checks(tmp_path):
    from igg.persistence.rundir import RunDirectory

    outside = tmp_path / "precious.jsonl"
    outside.write_text("mine\n")
    out = tmp_path / "run"
    out.mkdir()
    os.link(outside, out / "records.jsonl")
    from igg.errors import IGGError
    from igg.request.load import build_state, load_request

    request = load_request(json.loads((ROOT / "fixtures" / "seed_request.json").read_text()))
    state, _ = build_state(request)
    with pytest.raises(IGGError, match="hard links"):
        RunDirectory(out).begin(request, state, [])
    assert outside.read_text() == "mine\n"


def test_write_failures_are_export_errors_naming_the_file(tmp_path):
    (tmp_path / "plain").write_text("a file, not a directory")
    with pytest.raises(WriteFailed, match="graph.json") as failed:
        write_file(tmp_path / "plain" / "graph.json", b"{}")
    assert not failed.value.out_of_space
    assert listing(tmp_path) == ["plain"]


AUTH_REQUEST = ROOT / "fixtures" / "auth" / "request.json"
AUTH_TRANSCRIPT = ROOT / "fixtures" / "auth" / "transcript.jsonl"


def test_igg_run_export_onto_its_own_store_fails_and_the_store_survives(tmp_path, capsys):
    from igg.interfaces.cli import main

    store = tmp_path / "s.sqlite"
    code = main(
        [
            "run",
            str(AUTH_REQUEST),
            "--agent",
            f"script:{AUTH_TRANSCRIPT}",
            "--store",
            str(store),
            "--json",
            "--export",
            f"json:{store}",
            "--export",
            f"graphml:{store}-wal",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 1 and "session store" in err
    summary = json.loads(out)
    assert [e["ok"] for e in summary["exports"]] == [False, False]
    with sqlite3.connect(store) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert conn.execute("SELECT count(*) FROM sessions").fetchone() == (1,)


@pytest.mark.parametrize(
    "command",
    [["schema", "request"], ["show", "SID"], ["export", "SID", "--format", "json", "--output", "-"]],
)
def test_a_reader_that_stops_early_gets_no_traceback(tmp_path, command):
    """``igg show ... | head``: the command ends quietly (141, as a pipe does) when its reader goes away."""
    from igg.interfaces.cli import main

    store = tmp_path / "s.sqlite"
    assert (
        main(
            [
                "run",
                str(AUTH_REQUEST),
                "--agent",
                f"script:{AUTH_TRANSCRIPT}",
                "--store",
                str(store),
                "--out",
                str(tmp_path / "run"),
            ]
        )
        == 0
    )
    sid = json.loads((tmp_path / "run" / "summary.json").read_text())["session_id"]
    argv = [a.replace("SID", sid) for a in command] + (["--store", str(store)] if "SID" in command else [])
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "IGG_")) or k == "IGG_HOME"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "igg", *argv],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before the first line is written
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141, err
    assert "Traceback" not in err and "BrokenPipe" not in err, err


def test_a_servers_run_exports_stay_inside_the_output_directory(tmp_path):
    """Exports a client asks a run for (``RunInput.exports``) are written strictly under the output
    directory."""
    import asyncio

    from igg.persistence.memory import MemorySessions
    from igg.workspace.ops import RunInput

    out, outside = tmp_path / "out", tmp_path / "outside"
    out.mkdir()
    outside.mkdir()
    os.symlink(outside, out / "link")
    ws = Workspace(MemorySessions(), output_dir=out)
    summary = asyncio.run(
        ws.run(
            RunInput.model_validate(
                {
                    **request_dict(session_id="r1", context_data="# File: app/main.py\nclass A:\n    pass\n"),
                    "agent": "code",
                    "exports": [
                        "json:link/run.json",
                        "cypher:docs/g.cypher",
                        "mermaid:docs/g.mmd",
                        "nodelink:docs/g.json",
                        "graphml:docs/g.graphml",
                    ],
                }
            )
        )
    )
    oks = {e["format"]: e["ok"] for e in summary["exports"]}
    assert oks == {"json": False, "cypher": True, "mermaid": True, "nodelink": True, "graphml": True}
    assert "symlink" in summary["export_error"]
    assert list(outside.iterdir()) == []
    assert sorted(p.name for p in (out / "docs").iterdir()) == ["g.cypher", "g.graphml", "g.json", "g.mmd"]
    assert (out / "docs" / "g.cypher").read_text().startswith("// IGG graph export")
