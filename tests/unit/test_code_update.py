"""``igg map-code PATH --store S --update``: only changed files are parsed, and the graph equals a fresh map.

Between two runs files are changed, added, renamed and deleted (Python and Java); the update must parse
exactly the files with new content, commit one step (a new iteration, so ``igg diff`` shows the change,
with the git commit of the work tree), and leave the same nodes (with the same properties) and edges as
mapping the new tree from scratch.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import structlog

from igg.store import SessionStore
from tests.codegraph import CODE_FIXTURES


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    from igg.interfaces.cli import main

    try:
        code = main(list(args))
    finally:
        structlog.reset_defaults()
    out, err = capsys.readouterr()
    return code, out, err


def graph_of(
    store: Path | str, session_id: str
) -> tuple[dict[tuple[str, Any], dict[str, Any]], set[tuple[Any, ...]]]:
    """Nodes by (type, identity) with their properties, and edges by their endpoints' identities with their
    properties (their sites)."""
    db = SessionStore(store)
    try:
        _, state, _ = db.load_state(session_id)
    finally:
        db.close()
    key = {
        n: (state.node_type(n), state.identity(state.node_type(n), state.node_properties(n)))
        for n in state.graph.nodes
    }
    nodes = {key[n]: state.node_properties(n) for n in state.graph.nodes}
    edges = {
        (d["type"], key[u], key[v], json.dumps(d["properties"], sort_keys=True))
        for _, u, v, d in state.edges()
    }
    return nodes, edges


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    shutil.copytree(CODE_FIXTURES / "python", root / "py")
    shutil.copytree(CODE_FIXTURES / "java", root / "java")
    return root


def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


def test_update_parses_only_changed_files_and_equals_a_fresh_map(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import igg.mapping.prepare

    git = shutil.which("git") is not None
    if git:
        _git(tree, "init", "-q")
        _git(tree, "-c", "user.email=t@example.com", "-c", "user.name=t", "add", ".")
        _git(tree, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "first")
    store = tmp_path / "s.db"
    code, out, err = cli(
        capsys, "map-code", str(tree), "--store", str(store), "--session", "m", "--jobs", "1", "--json"
    )
    assert code == 0, err
    first = json.loads(out)
    assert first["stop_reason"] == "finished"
    if git:  # the initial map records the commit it maps too (the summary, and the stored session)
        head = _git(tree, "rev-parse", "HEAD")
        assert first["map_code"]["git_commit"] == head
        code, out, err = cli(capsys, "show", "m", "--store", str(store), "--json")
        assert json.loads(out)["git_commit"] == head
        code, out, err = cli(capsys, "show", "m", "--store", str(store))
        assert f"; git {head}" in out

    java = tree / "java/src/main/java/com/acme"
    models = tree / "py/shop/models.py"
    models.write_text(
        models.read_text().replace(
            "class Order", "def audit_order(order):\n    return order\n\n\nclass Order", 1
        )
    )  # changed
    (tree / "py/shop/reports.py").write_text(
        "from .models import Order\nfrom .service import *\n\n\n"
        "def report(o: Order) -> str:\n    return o.describe()\n"
    )  # added
    (java / "service/PasswordHasher.java").rename(java / "service/Hasher.java")  # renamed (same content)
    (tree / "py/shop/util/money.py").unlink()  # deleted
    if git:
        _git(tree, "-c", "user.email=t@example.com", "-c", "user.name=t", "add", "-A")
        _git(tree, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "second")

    parsed: list[str] = []
    real = igg.mapping.prepare.analyze

    def counting(source: Any, **options: Any) -> Any:
        parsed.append(source.path)
        return real(source, **options)

    monkeypatch.setattr(igg.mapping.prepare, "analyze", counting)
    code, out, err = cli(
        capsys, "map-code", str(tree), "--store", str(store), "--update", "--jobs", "1", "--json"
    )
    assert code == 0, err
    update = json.loads(out)
    assert sorted(parsed) == [
        "java/src/main/java/com/acme/service/Hasher.java",
        "py/shop/models.py",
        "py/shop/reports.py",
    ]
    files = update["files"]
    assert (files["reparsed"], files["unchanged"]) == (3, files["read"] - 3)
    assert files["added"] == ["java/src/main/java/com/acme/service/Hasher.java", "py/shop/reports.py"]
    assert files["changed"] == ["py/shop/models.py"]
    assert files["removed"] == [
        "java/src/main/java/com/acme/service/PasswordHasher.java",
        "py/shop/util/money.py",
    ]
    assert files["renamed"] == [
        {
            "from": "java/src/main/java/com/acme/service/PasswordHasher.java",
            "to": "java/src/main/java/com/acme/service/Hasher.java",
        }
    ]
    assert update["iteration"] == first["iterations"] + 1
    if git:
        assert update["git_commit"] == _git(tree, "rev-parse", "HEAD")

    monkeypatch.setattr(igg.mapping.prepare, "analyze", real)
    fresh = tmp_path / "fresh.db"
    code, out, err = cli(
        capsys, "map-code", str(tree), "--store", str(fresh), "--session", "f", "--jobs", "1", "--json"
    )
    assert code == 0, err
    updated_nodes, updated_edges = graph_of(store, "m")
    fresh_nodes, fresh_edges = graph_of(fresh, "f")
    assert updated_nodes == fresh_nodes
    assert updated_edges == fresh_edges

    # the update is one step; igg diff between the map and the update is the architecture change
    code, out, err = cli(
        capsys,
        "diff",
        "m",
        str(first["iterations"]),
        str(update["iteration"]),
        "--store",
        str(store),
        "--json",
    )
    assert code == 0, err
    changes = json.loads(out)
    shown = {(c["change"], c["type"], (c["after"] or c["before"] or {}).get("name")) for c in changes}
    assert ("added", "Function", "audit_order") in shown, shown
    assert ("deleted", "Module", "shop.util.money") in shown, shown
    assert ("added", "Module", "shop.reports") in shown, shown


def test_update_needs_a_map_code_session(
    tmp_path: Path, tree: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(capsys, "map-code", str(tree), "--store", str(tmp_path / "empty.db"), "--update")
    assert code == 2
    assert "no map-code session" in err and "igg map-code PATH --store STORE" in err
    code, out, err = cli(capsys, "map-code", str(tree), "--update")
    assert code == 2 and "needs the store" in err


def test_update_of_an_llm_or_hybrid_session_is_refused_before_any_work(
    tree: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from igg.mapping.prepare import prepare

    store = tmp_path / "s.db"
    request = prepare([tree], session_id="h", jobs=1).request
    SessionStore(store).create_session(request, agent="hybrid")
    code, out, err = cli(capsys, "map-code", str(tree), "--store", str(store), "--session", "h", "--update")
    assert code == 2 and out == ""
    assert "session 'h' was mapped with agent 'hybrid'; --update re-maps sessions of the static agent" in err
