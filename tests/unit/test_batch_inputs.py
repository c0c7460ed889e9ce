"""`igg batch` refuses bad input before any cluster starts: every problem named, exit 2; without Dask it says
what to install."""

from __future__ import annotations

import json
import sys

from igg.interfaces.cli import main
from tests.conftest import FIXTURES

AUTH = FIXTURES / "auth"


def request_text(session_id: str | None = None) -> str:
    payload = json.loads((AUTH / "request.json").read_text())
    payload.pop("session_id", None)
    if session_id:
        payload["session_id"] = session_id
    return json.dumps(payload)


def test_every_bad_request_file_and_line_is_listed_before_anything_runs(tmp_path, capsys):
    jsonl = tmp_path / "batch.jsonl"
    jsonl.write_text("\n".join([request_text("ok-1"), "{not json", '{"goal_prompt": "x"}', "[1, 2]"]) + "\n")
    empty = tmp_path / "empty"
    empty.mkdir()
    code = main(
        [
            "batch",
            str(jsonl),
            str(empty),
            str(tmp_path / "missing.json"),
            "--store",
            str(tmp_path / "s.sqlite"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert (
        f"{jsonl}:2: not valid JSON: Expecting property name enclosed in double quotes at line 1 column 2"
        in err
    )
    assert f"{jsonl}:3: config: " in err  # the request lacks its config
    assert f"{jsonl}:4: a request must be a JSON object, got list" in err
    assert f"{empty}: the folder holds no request files (*.json)" in err
    assert "missing.json: no such file or folder" in err
    assert not (tmp_path / "s.sqlite").exists()


def test_duplicate_session_ids_and_missing_transcripts_are_refused(tmp_path, capsys):
    folder = tmp_path / "requests"
    folder.mkdir()
    (folder / "a.json").write_text(request_text("same"))
    (folder / "b.json").write_text(request_text("same"))
    assert main(["batch", str(folder), "--agent", "script:" + str(AUTH / "transcript.jsonl")]) == 2
    err = capsys.readouterr().err
    assert (
        "same: 2 requests have this session_id" in err and "session ids must be unique within a batch" in err
    )

    (folder / "b.json").write_text(request_text("other"))
    transcripts = tmp_path / "transcripts"
    transcripts.mkdir()
    (transcripts / "a.jsonl").write_text((AUTH / "transcript.jsonl").read_text())
    assert main(["batch", str(folder), "--agent", f"script:{transcripts}"]) == 2
    err = capsys.readouterr().err
    assert f"no transcript for session 'other' in {transcripts} (looked for other.jsonl and b.jsonl)" in err


def test_exports_that_sessions_would_overwrite_and_bad_scheduler_addresses_are_refused(tmp_path, capsys):
    folder = tmp_path / "requests"
    folder.mkdir()
    for name in ("a", "b"):
        (folder / f"{name}.json").write_text(request_text(name))
    agent = "script:" + str(AUTH / "transcript.jsonl")
    assert main(["batch", str(folder), "--agent", agent, "--export", "graphml:out/graph.graphml"]) == 2
    assert "put {session_id} in the target" in capsys.readouterr().err
    assert main(["batch", str(folder), "--agent", agent, "--export", "mermaid"]) == 2
    assert "give --out DIR (each session writes DIR/<session_id>/graph.mmd)" in capsys.readouterr().err
    store = tmp_path / "never.sqlite"
    assert (
        main(["batch", str(folder), "--agent", agent, "--scheduler", "not an address", "--store", str(store)])
        == 2
    )
    assert "'not an address' is not a scheduler address; give tcp://HOST:PORT" in capsys.readouterr().err
    assert not store.exists()


def test_without_dask_the_command_says_what_to_install(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # what an installation without igg[dask] has
    (tmp_path / "a.json").write_text(request_text("a"))
    assert main(["batch", str(tmp_path / "a.json")]) == 1
    assert (
        "needs the optional dependency 'distributed': pip install 'distributed>=2024.8' (the dask extra)"
        in capsys.readouterr().err
    )
    assert main(["map-code", str(FIXTURES / "code" / "java"), "--scheduler", "tcp://127.0.0.1:8786"]) == 1
    assert "pip install 'distributed>=2024.8' (the dask extra)" in capsys.readouterr().err
