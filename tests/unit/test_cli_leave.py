"""The console script ends a static ``map-code``, ``check`` and ``cycles`` at once, without freeing what
they built (``igg.interfaces.cli._leave``): its output whole, its exit code kept, its store written, and no
exit handler run; other commands, and a command that fails, end as Python ends."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from igg.store import SessionStore
from tests.support import shop

_RUN = (
    "import atexit, sys\n"
    "atexit.register(lambda: print('exit handlers ran', file=sys.stderr))\n"
    "sys.argv = ['igg', *sys.argv[1:]]\n"
    "from igg.interfaces.cli import main\n"
    "sys.exit(main())\n"
)


def _igg(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}  # an LLM map is refused
    return subprocess.run(
        [sys.executable, "-c", _RUN, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def test_a_static_map_a_check_and_cycles_end_at_once_with_their_output_and_store_whole(
    tmp_path: Path,
) -> None:
    shop.make(tmp_path / "tree")
    mapped = _igg(tmp_path, "map-code", "tree", "--store", "s.db", "--json", "--quiet")
    assert mapped.returncode == 0, mapped.stderr
    assert "exit handlers ran" not in mapped.stderr
    summary = json.loads(mapped.stdout)
    store = SessionStore(tmp_path / "s.db")
    try:
        _, state, _ = store.load_state(summary["session_id"])
    finally:
        store.close()
    assert (state.node_count, state.edge_count) == (summary["nodes"], summary["edges"]) and state.node_count
    rules = tmp_path / "rules.toml"
    rules.write_text('[[rules]]\nname = "no-cycles"\nkind = "acyclic"\nlevel = "module"\n', encoding="utf-8")
    checked = _igg(tmp_path, "check", "tree", "--rules", str(rules), "--store", "s.db", "--json")
    assert checked.returncode == 1 and "exit handlers ran" not in checked.stderr  # the cycle: a violation
    assert [v["rule"] for v in json.loads(checked.stdout)["violations"]] == ["no-cycles"]
    cycles = _igg(tmp_path, "cycles", "tree", "--json")
    assert cycles.returncode == 0 and "exit handlers ran" not in cycles.stderr
    assert json.loads(cycles.stdout)[0]["kind"] == "acyclic"


def test_other_commands_and_a_failed_command_end_as_python_ends(tmp_path: Path) -> None:
    shop.make(tmp_path / "tree")
    refused = _igg(tmp_path, "map-code", "tree", "--agent", "llm")  # no endpoint: refused before any work
    assert refused.returncode == 2 and "exit handlers ran" in refused.stderr
    missing = _igg(tmp_path, "check", "nowhere")
    assert missing.returncode == 2 and "exit handlers ran" in missing.stderr
