"""`igg map-code` end to end, as a user runs it (a real subprocess), and `igg run --agent auto` on code."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from support.fake_openai import FakeOpenAI

from tests.codegraph import CODE_FIXTURES, sources
from tests.conftest import FIXTURES, ROOT
from tests.unit.test_code_graphs import JAVA_EDGES, JAVA_NODES

JAVA = str(CODE_FIXTURES / "java")


def igg(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "IGG_")) or k == "IGG_HOME"}
    return subprocess.run(
        [sys.executable, "-m", "igg", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        env={**base, **(env or {})},
    )


def test_map_code_builds_the_expected_graph_offline_and_reports_it(tmp_path):
    out = tmp_path / "out"
    mmd = tmp_path / "graph.mmd"
    result = igg("map-code", JAVA, "--json", "--out", str(out), "--export", f"mermaid:{mmd}")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["stop_reason"] == "finished"
    assert (summary["nodes"], summary["edges"]) == (len(JAVA_NODES), len(JAVA_EDGES))
    assert summary["actions"]["rejected"] == 0
    files = summary["map_code"]["files"]
    assert (files["read"], files["skipped"], files["lines"]) == (10, 0, 179)
    assert summary["map_code"]["graph"]["nodes_by_type"] == {
        "Package": 6,
        "Module": 10,
        "Class": 7,
        "Interface": 3,
        "Enum": 2,
        "Method": 27,
        "DatabaseTable": 5,
    }
    assert summary["map_code"]["graph"]["edges_by_type"] == {
        "CONTAINS": 53,
        "IMPORTS": 6,
        "IMPORTS_SYMBOL": 5,
        "EXTENDS": 3,
        "IMPLEMENTS": 2,
        "CALLS": 18,
        "INSTANTIATES": 2,
        "READS_FROM": 4,
        "WRITES_TO": 5,
    }
    assert set(summary["map_code"]["seconds"]) == {"walk", "parse", "link", "run", "total"}
    doc = json.loads((out / "graph.json").read_text())
    assert len(doc["nodes"]) == len(JAVA_NODES) and len(doc["edges"]) == len(JAVA_EDGES)
    assert mmd.read_text().startswith("flowchart")


def test_human_output_has_the_map_code_summary():
    result = igg("map-code", str(CODE_FIXTURES / "python"))
    assert result.returncode == 0, result.stderr
    assert "igg map-code" in result.stdout
    assert "6 read (" in result.stdout and "Function 3" in result.stdout and "READS_FROM 1" in result.stdout


def test_skipped_files_are_listed_with_their_reason(tmp_path):
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "main.py").write_text(
        "def main():\n    return helper()\n\n\ndef helper():\n    return 1\n"
    )
    (tmp_path / "node_modules" / "x").mkdir(parents=True)
    (tmp_path / "node_modules" / "x" / "y.py").write_text("x = 1\n")
    (tmp_path / "blob.py").write_bytes(b"\x00\x01")
    (tmp_path / "gen_pb2.py").write_text("x = 1\n")
    (tmp_path / ".gitignore").write_text("secret.py\n")
    (tmp_path / "secret.py").write_text("x = 1\n")
    result = igg("map-code", str(tmp_path), "--json")
    assert result.returncode == 0, result.stderr
    assert "skipped 3:" in result.stderr
    assert "node_modules/: vendored or build directory (node_modules)" in result.stderr
    assert "blob.py: binary (NUL bytes)" in result.stderr
    assert "1 generated Python files read as their module and imports only:" in result.stderr
    assert "  gen_pb2.py: generated (by its name)" in result.stderr
    files = json.loads(result.stdout)["map_code"]["files"]
    assert files["read"] == 2
    assert files["skipped_by_reason"] == {"gitignored": 1, "vendored or build directory": 1, "binary": 1}
    assert files["generated_paths"] == [{"path": "gen_pb2.py", "reason": "generated (by its name)"}]
    edges = json.loads(result.stdout)["map_code"]["graph"]["edges_by_type"]
    assert edges["CALLS"] == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["/nonexistent/src"], "/nonexistent/src: no such file or directory"),
        ([str(FIXTURES / "auth")], "no Python, Java, TypeScript or Go source files under"),
        (
            [JAVA, "--agent", "script:x.jsonl"],
            "invalid choice: 'script:x.jsonl' (choose from 'code', 'llm', 'hybrid')",
        ),
        ([JAVA, "--schema", str(FIXTURES / "seed_response.json")], "seed_response.json is invalid"),
        ([JAVA, "--resume"], "--resume: needs the store"),
    ],
)
def test_bad_input_is_a_clear_error_with_exit_2(args, message):
    result = igg("map-code", *args)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and "Traceback" not in result.stderr


def test_a_copied_schema_shapes_the_graph(tmp_path):
    seed = json.loads((FIXTURES / "seed_request.json").read_text())
    (tmp_path / "mine.json").write_text(json.dumps(seed["config"]["schema"]))
    result = igg("map-code", JAVA, "--schema", str(tmp_path / "mine.json"), "--json")
    assert result.returncode == 0, result.stderr
    graph = json.loads(result.stdout)["map_code"]["graph"]
    assert set(graph["nodes_by_type"]) == {"Class", "Interface", "Method", "DatabaseTable"}
    assert set(graph["edges_by_type"]) == {"CALLS", "IMPLEMENTS", "READS_FROM", "WRITES_TO"}


def _interrupted(store) -> None:
    script = f"""
from pathlib import Path
from igg.agents.code import CodeAgent
from igg.engine.loop import run
from igg.mapping.prepare import prepare
from igg.store import SessionRecorder, SessionStore

codemap = prepare([Path({JAVA!r})], session_id="m1", jobs=1)
inner = CodeAgent(model=codemap.model)

def killed_at_4(obs):
    if obs.iteration == 4:
        raise KeyboardInterrupt  # as if the user pressed Ctrl-C during the fourth iteration
    return inner(obs)

run(codemap.request, killed_at_4, recorder=[SessionRecorder(SessionStore({str(store)!r}), agent="code")])
"""
    killed = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert killed.returncode != 0 and "KeyboardInterrupt" in killed.stderr


def test_interrupted_session_resumes_from_the_store(tmp_path):
    """A run killed after 3 committed iterations continues with --resume and ends with the whole graph."""
    store = tmp_path / "s.sqlite"
    _interrupted(store)
    result = igg("map-code", JAVA, "--store", str(store), "--session", "m1", "--resume", "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["stop_reason"] == "finished" and summary["actions"]["rejected"] == 0
    assert (summary["nodes"], summary["edges"]) == (len(JAVA_NODES), len(JAVA_EDGES))
    # 3 committed iterations of one file each, then the resumed agent fills whole turns: nothing proposed
    # twice
    assert summary["iterations"] == 6
    assert "resumed=True" in result.stderr and "start_iteration=4" in result.stderr
    listed = igg("sessions", "--store", str(store))
    assert "m1" in listed.stdout


def test_igg_resume_continues_a_map_code_session_too(tmp_path):
    """The stored request holds the sources, so `igg resume` rebuilds the code agent from it."""
    store = tmp_path / "s.sqlite"
    _interrupted(store)
    result = igg("resume", "m1", "--store", str(store), "--json")
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["stop_reason"] == "finished" and summary["actions"]["rejected"] == 0
    assert (summary["nodes"], summary["edges"], summary["iterations"]) == (
        len(JAVA_NODES),
        len(JAVA_EDGES),
        12,
    )


def test_run_auto_maps_the_auth_module_offline(tmp_path):
    result = igg(
        "run", str(FIXTURES / "auth" / "request.json"), "--agent", "auto", "--json", "--out", str(tmp_path)
    )
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["stop_reason"] == "finished" and summary["actions"]["rejected"] == 0
    doc = json.loads((tmp_path / "graph.json").read_text())
    names = {(n["type"], n["properties"]["name"]) for n in doc["nodes"]}
    assert ("Interface", "AuthService") in names and ("Class", "AuthServiceImpl") in names
    ids = {n["id"]: n["properties"]["name"] for n in doc["nodes"]}
    edges = {(e["type"], ids[e["from"]], ids[e["to"]]) for e in doc["edges"]}
    assert (
        "CALLS",
        "AuthController",
        "AuthService",
    ) in edges  # the specification's own example, found statically
    assert ("IMPLEMENTS", "AuthServiceImpl", "AuthService") in edges
    assert ("READS_FROM", "UserRepository.findByUsername", "users") in edges


def _llm_answer(*actions):
    return json.dumps(
        {"reasoning": "what static analysis cannot see", "actions": list(actions), "finished": True}
    )


def test_hybrid_seeds_statically_then_grounds_the_llm(tmp_path):
    """The static pass maps everything; the LLM's invented class is rejected, its real insight accepted."""
    invented = {
        "type": "ADD_NODE",
        "label": "Class",
        "properties": {
            "name": "TokenCache",
            "package": "com.acme.service",
            "qualified_name": "com.acme.service.TokenCache",
        },
    }
    table = {"type": "ADD_NODE", "label": "DatabaseTable", "properties": {"name": "user_roles_archive"}}
    doc = {
        "type": "UPDATE_NODE",
        "node": {"label": "Class", "package": "com.acme.service", "name": "AuthService"},
        "properties": {"doc": "Logs users in; promotes admins."},
    }
    with FakeOpenAI([_llm_answer(invented, table, doc)]) as server:
        result = igg(
            "map-code",
            JAVA,
            "--agent",
            "hybrid",
            "--json",
            env={"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "test-key", "IGG_MODEL": "m"},
        )
        assert result.returncode == 0, result.stderr
        summary = json.loads(result.stdout)
        assert summary["stop_reason"] == "finished"
        assert summary["actions"]["rejected_by_code"] == {"UNGROUNDED_SYMBOL": 2}
        assert summary["nodes"] == len(JAVA_NODES) and summary["edges"] == len(JAVA_EDGES)
        assert len(server.requests) == 1  # the LLM was asked once, after the static pass


def test_llm_mode_reads_the_files_as_context_chunks():
    answer = _llm_answer(
        {
            "type": "ADD_NODE",
            "label": "Interface",
            "properties": {
                "name": "Labeled",
                "package": "com.acme.model",
                "qualified_name": "com.acme.model.Labeled",
            },
        }
    )
    with FakeOpenAI([answer]) as server:
        result = igg(
            "map-code",
            JAVA,
            "--agent",
            "llm",
            "--json",
            env={"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "test-key", "IGG_MODEL": "m"},
        )
        assert result.returncode == 0, result.stderr
        summary = json.loads(result.stdout)
        assert summary["nodes"] == 1 and summary["actions"]["accepted"] == 1
        sent = json.dumps(server.requests[0].body)
        first = sources(CODE_FIXTURES / "java")[0].path
        assert f"File: {first}" in sent


@pytest.mark.parametrize("agent", ["llm", "hybrid"])
def test_llm_and_hybrid_without_an_endpoint_stop_before_any_work_with_the_same_line(agent):
    result = igg("map-code", JAVA, "--agent", agent, "--json")
    assert result.returncode == 2
    assert result.stdout == ""  # no run, no summary
    assert (
        result.stderr
        == "igg: the LLM agent needs an endpoint: set OPENAI_API_KEY (OpenAI) or OPENAI_BASE_URL "
        "(any OpenAI-compatible server, e.g. http://localhost:11434/v1 for Ollama)\n"
    )


def test_help_lists_exactly_the_agents_map_code_accepts():
    result = igg("map-code", "--help")
    assert result.returncode == 0
    text = " ".join(result.stdout.split())
    assert "--agent AGENT code (static analysis, offline; the default), llm or hybrid" in text
    assert "auto" not in text.split("--agent AGENT")[1].split("--out")[0]
    assert "script:" not in text


def test_a_coding_declaration_is_honoured_and_syntax_errors_are_in_the_report_a_person_reads(tmp_path):
    root = tmp_path / "src"
    pkg = root / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    # PEP 263: Python reads this file as Latin-1, so must map-code (it is not binary, and not UTF-8)
    (pkg / "latin.py").write_bytes(
        b'# -*- coding: latin-1 -*-\n"""Caf\xe9."""\n\n\ndef caf\xe9():\n'
        b'    return "cr\xe8me"\n\n\ndef main():\n    return caf\xe9()\n'
    )
    (pkg / "undeclared.py").write_bytes(b"caf\xe9 = 1\n")
    (pkg / "bad.py").write_text("def ok():\n    return 1\n\n\ndef broken(:\n    pass\n")
    (root / "A.java").write_text("class A {\n  void f() {\n    int x = ;\n  }\n}\n")
    out = tmp_path / "out"
    result = igg("map-code", str(root), "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert "undeclared.py: binary or not UTF-8 (and no coding declaration)" in result.stderr
    for where in (
        "pkg/bad.py:5: syntax error: invalid syntax",
        "A.java:3: syntax error (tree-sitter recovered; facts may be partial)",
    ):
        assert where in result.stderr  # listed as the files are parsed, like the skipped ones
    table = " ".join(result.stdout.split())  # the summary table (rich wraps long cells)
    assert (
        "partial (2) │ A.java:3: syntax error" in table
        and "pkg/bad.py:5: syntax error: invalid syntax" in table
    )
    doc = json.loads((out / "graph.json").read_text())
    calls = {(e["from"], e["to"]) for e in doc["edges"] if e["type"] == "CALLS"}
    names = {n["id"]: n["properties"]["name"] for n in doc["nodes"] if n["type"] == "Function"}
    assert set(names.values()) == {"café", "main"}
    assert {(names.get(a), names.get(b)) for a, b in calls} == {("main", "café")}
    summary = json.loads(igg("map-code", str(root), "--json").stdout)["map_code"]["files"]
    assert {(p["path"], p["line"]) for p in summary["partial"]} == {("pkg/bad.py", 5), ("A.java", 3)}
    assert summary["read"] == 4 and summary["skipped"] == 1


def test_quiet_prints_no_summary_table():
    result = igg("map-code", JAVA, "--quiet")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "" and result.stderr == ""
